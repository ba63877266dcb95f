/* SPDX-License-Identifier: MIT */
/* Mitigations, largest-that-fits, GPU recommendation and the layout planner. */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <string.h>

static void make(const char *spec, gpufit_model **m, gpufit_job **j)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(*m, *j, spec, &err), GPUFIT_OK, "%s: %s", spec, err.message);
}

static int32_t fits(const gpufit_model *m, const gpufit_job *j, uint64_t *peak)
{
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s", err.message);
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_result_summary(r, &s);
    if (peak != NULL)
        *peak = s.peak_bytes;
    gpufit_result_free(r);
    /* sure to fit: the band's high end fits (what --max and the mitigations aim at) */
    return s.verdict == GPUFIT_VERDICT_FITS ? 1 : s.fits < 0 ? -1 : 0;
}

/* The point estimate fits (what plan and recommend keep; docs/band.md). */
static int32_t point_fits(const gpufit_model *m, const gpufit_job *j, uint64_t *peak)
{
    gpufit_summary s = {.struct_size = sizeof s};
    cr_assert_eq(gpufit_evaluate_summary(m, j, &s, NULL), GPUFIT_OK);
    *peak = s.peak_bytes;
    return s.fits;
}

Test(mitigations, every_oom_gets_a_first_mitigation_that_fits)
{
    static const char *const specs[] = {
        "model=llama-3-8b task=finetune gpu=rtx-4090 micro_batch=4 seq_len=4096",
        "model=llama-3-70b task=inference gpu=a100-80gb context_len=32768 batch=4",
        "model=llama-2-7b task=finetune gpu=a100-80gb precision=fp32 micro_batch=4 seq_len=4096",
        "model=mixtral-8x7b task=inference gpu=rtx-4090 framework=llamacpp weight_dtype=q8_0",
        ("model=llama-3-70b task=pretrain gpu=h100 tp=8 dp=8 precision=bf16 framework=megatron "
         "seq_len=8192"),
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gpufit_model *m;
        gpufit_job *j;
        make(specs[i], &m, &j);
        gpufit_result *r = NULL;
        cr_assert_eq(gpufit_evaluate(&r, m, j, NULL), GPUFIT_OK);
        gpufit_summary s = {.struct_size = sizeof s};
        gpufit_result_summary(r, &s);
        cr_assert_eq(s.fits, 0, "%s should not fit", specs[i]);
        cr_assert(s.n_mitigations > 0, "%s: no mitigation", specs[i]);
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        cr_assert_eq(gpufit_result_mitigation(r, 0, &mi), GPUFIT_OK);
        cr_assert_eq(mi.fits_after, 1, "%s: first mitigation '%s' does not fit", specs[i],
                     mi.text);
        cr_assert(mi.saved_bytes > 0);
        cr_assert(strlen(mi.changes) > 0);
        /* applied for real and re-estimated, it fits with the predicted peak */
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_job_apply_mitigation(j, r, 0, &err), GPUFIT_OK, "%s", err.message);
        uint64_t peak = 0;
        cr_assert_eq(fits(m, j, &peak), 1, "%s after '%s'", specs[i], mi.changes);
        cr_assert_eq(peak, mi.peak_bytes_after);
        /* ranked: a mitigation that fits never follows one that does not */
        for (uint32_t k = 1; k < s.n_mitigations; k++) {
            gpufit_mitigation_info a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
            gpufit_result_mitigation(r, k - 1, &a);
            gpufit_result_mitigation(r, k, &b);
            cr_assert(a.fits_after >= b.fits_after);
            if (a.fits_after == b.fits_after)
                cr_assert(a.cost <= b.cost);
        }
        cr_assert_eq(gpufit_job_apply_mitigation(j, r, 99, NULL), GPUFIT_E_NOT_FOUND);
        /* every suggestion, not only the first, is a valid job with the predicted peak (a
         * change of dp keeps global_batch a multiple of micro_batch x dp, gpus follows) */
        for (uint32_t k = 0; k < s.n_mitigations; k++) {
            gpufit_mitigation_info b = {.struct_size = sizeof b};
            gpufit_result_mitigation(r, k, &b);
            gpufit_job *jk = NULL;
            gpufit_model *mk = NULL;
            make(specs[i], &mk, &jk);
            cr_assert_eq(gpufit_job_apply_mitigation(jk, r, k, &err), GPUFIT_OK, "%s: %s: %s",
                         specs[i], b.changes, err.message);
            cr_assert_eq(fits(mk, jk, &peak), b.fits_after, "%s after '%s'", specs[i],
                         b.changes);
            cr_assert_eq(peak, b.peak_bytes_after, "%s after '%s'", specs[i], b.changes);
            gpufit_model_free(mk);
            gpufit_job_free(jk);
        }
        gpufit_result_free(r);
        gpufit_model_free(m);
        gpufit_job_free(j);
    }
}

Test(mitigations, none_when_disabled_or_when_it_fits)
{
    gpufit_model *m;
    gpufit_job *j;
    make("model=llama-3-70b task=inference gpu=rtx-4090 mitigations=0", &m, &j);
    gpufit_result *r = NULL;
    cr_assert_eq(gpufit_evaluate(&r, m, j, NULL), GPUFIT_OK);
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_result_summary(r, &s);
    cr_assert_eq(s.fits, 0);
    cr_assert_eq(s.n_mitigations, 0);
    gpufit_result_free(r);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(largest, micro_batch_and_context_are_exact_boundaries)
{
    static const struct {
        const char *spec;
        int32_t param;
    } cases[] = {
        {"model=llama-3-8b task=lora gpu=a100-80gb seq_len=2048 precision=bf16",
         GPUFIT_JOB_MICRO_BATCH},
        {"model=llama-3-8b task=inference gpu=rtx-4090", GPUFIT_JOB_CONTEXT_LEN},
        {"model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192", GPUFIT_JOB_BATCH},
        {"model=llama-3-70b task=inference gpu=rtx-4090 framework=llamacpp "
         "weight_dtype=q4_k_m context_len=4096",
         GPUFIT_JOB_N_GPU_LAYERS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpufit_model *m;
        gpufit_job *j;
        make(cases[i].spec, &m, &j);
        int64_t v = 0;
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_max_fitting(m, j, cases[i].param, &v, &err), GPUFIT_OK, "%s",
                     err.message);
        cr_assert(v > 0, "%s", cases[i].spec);
        cr_assert_eq(gpufit_job_set_int(j, cases[i].param, v, NULL), GPUFIT_OK);
        cr_assert_eq(fits(m, j, NULL), 1, "%s at %lld", cases[i].spec, (long long)v);
        if (gpufit_job_set_int(j, cases[i].param, v + 1, NULL) == GPUFIT_OK)
            cr_assert_eq(fits(m, j, NULL), 0, "%s at %lld", cases[i].spec, (long long)v + 1);
        gpufit_model_free(m);
        gpufit_job_free(j);
    }
}

/* With a global batch, the micro-batch keeps it by accumulation: the answer is the largest
 * divisor of global_batch / dp that fits, and the next divisor does not (issue #7 F3). */
Test(largest, micro_batch_steps_over_divisors_of_the_global_batch)
{
    static const struct {
        const char *spec;
        int64_t per_rank; /* global_batch / dp */
    } cases[] = {
        {"model=llama-3-8b task=lora gpu=a100-80gb seq_len=2048 precision=bf16 global_batch=96",
         96},
        {"model=llama-3-8b task=lora gpu=a100-80gb seq_len=2048 precision=bf16 global_batch=210 "
         "dp=2 zero=2",
         105},
        {"model=gpt2 task=pretrain gpu=t4 seq_len=1024 global_batch=1000", 1000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpufit_model *m;
        gpufit_job *j;
        make(cases[i].spec, &m, &j);
        int64_t v = 0;
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_MICRO_BATCH, &v, &err), GPUFIT_OK,
                     "%s", err.message);
        cr_assert(v > 0 && cases[i].per_rank % v == 0, "%s: %lld", cases[i].spec, (long long)v);
        cr_assert_eq(gpufit_job_set_int(j, GPUFIT_JOB_MICRO_BATCH, v, NULL), GPUFIT_OK);
        cr_assert_eq(fits(m, j, NULL), 1, "%s at %lld", cases[i].spec, (long long)v);
        int64_t next = v + 1;
        while (next <= cases[i].per_rank && cases[i].per_rank % next != 0)
            next++;
        if (next <= cases[i].per_rank) {
            cr_assert_eq(gpufit_job_set_int(j, GPUFIT_JOB_MICRO_BATCH, next, NULL), GPUFIT_OK);
            cr_assert_eq(fits(m, j, NULL), 0, "%s at %lld", cases[i].spec, (long long)next);
        }
        gpufit_model_free(m);
        gpufit_job_free(j);
    }
}

Test(largest, rejects_parameters_that_are_not_monotone)
{
    gpufit_model *m;
    gpufit_job *j;
    make("model=llama-3-8b gpu=h100", &m, &j);
    int64_t v;
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_TP, &v, NULL), GPUFIT_E_UNSUPPORTED);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_BATCH, NULL, NULL), GPUFIT_E_INVALID_ARG);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(recommend, ranked_and_restricted)
{
    gpufit_model *m;
    gpufit_job *j;
    make("model=llama-3-70b task=inference context_len=8192", &m, &j);
    gpufit_list *l = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_recommend(&l, m, j, NULL, 0, 64, &err), GPUFIT_OK, "%s", err.message);
    uint32_t n = gpufit_list_count(l);
    cr_assert(n > 10);
    gpufit_recommendation prev = {.struct_size = sizeof prev};
    for (uint32_t i = 0; i < n; i++) {
        gpufit_recommendation x = {.struct_size = sizeof x};
        cr_assert_eq(gpufit_list_recommendation(l, i, &x), GPUFIT_OK);
        cr_assert_eq(x.fits, 1);
        cr_assert(x.headroom_bytes >= 0);
        int cls = x.count == 1 ? 0 : x.has_nvlink ? 1 : 2;
        if (i > 0) {
            int pcls = prev.count == 1 ? 0 : prev.has_nvlink ? 1 : 2;
            cr_assert(pcls <= cls, "interconnect order at %u", i);
        }
        prev = x;
    }
    gpufit_layout y = {.struct_size = sizeof y};
    cr_assert_eq(gpufit_list_layout(l, 0, &y), GPUFIT_E_INVALID_ARG); /* wrong kind */
    gpufit_list_free(l);
    gpufit_gpu_info g = {.struct_size = sizeof g};
    cr_assert_eq(gpufit_gpu_by_name("rtx-4090", &g), GPUFIT_OK);
    int32_t ids[1] = {g.id};
    cr_assert_eq(gpufit_recommend(&l, m, j, ids, 1, 64, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_list_count(l), 1);
    gpufit_recommendation x = {.struct_size = sizeof x};
    gpufit_list_recommendation(l, 0, &x);
    cr_assert_eq(x.gpu_id, g.id);
    cr_assert(x.count >= 8); /* 141 GB of bf16 weights over 24 GB cards */
    gpufit_list_free(l);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(plan, deepseek_r1_on_2048_h100s)
{
    gpufit_model *m;
    gpufit_job *j;
    make("model=deepseek-r1 task=pretrain gpu=h100 precision=bf16 framework=megatron "
         "seq_len=4096 global_batch=4096",
         &m, &j);
    gpufit_list *l = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_plan(&l, m, j, 8, 256, 20, &err), GPUFIT_OK, "%s", err.message);
    cr_assert(gpufit_list_evaluated(l) > 10000);
    uint32_t n = gpufit_list_count(l);
    cr_assert_eq(n, 20);
    double last = -1.0;
    for (uint32_t i = 0; i < n; i++) {
        gpufit_layout y = {.struct_size = sizeof y};
        cr_assert_eq(gpufit_list_layout(l, i, &y), GPUFIT_OK);
        cr_assert(y.cost >= last);
        last = y.cost;
        cr_assert_eq((uint64_t)y.tp * y.pp * y.dp * y.cp, 2048);
        cr_assert(y.tp <= 8);
        /* every layout re-evaluates to a fit through its own spec */
        gpufit_job *jj = NULL;
        gpufit_job_copy(&jj, j, NULL);
        cr_assert_eq(gpufit_apply_spec(NULL, jj, y.spec, &err), GPUFIT_OK, "%s", y.spec);
        uint64_t peak = 0;
        cr_assert_eq(point_fits(m, jj, &peak), 1, "%s", y.spec);
        cr_assert_eq(peak, y.peak_bytes, "%s", y.spec);
        gpufit_job_free(jj);
        cr_assert(strstr(y.placement, "CUDA_VISIBLE_DEVICES") != NULL);
    }
    gpufit_list_free(l);
    cr_assert_eq(gpufit_plan(&l, m, j, 0, 1, 1, NULL), GPUFIT_E_INVALID_ARG);
    gpufit_model_free(m);
    gpufit_job_free(j);
}
