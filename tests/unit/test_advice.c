/* SPDX-License-Identifier: MIT */
/* Every advice reproduces (issue 13, docs/advice.md): a plan layout, a recommendation and a
 * mitigation, applied to the job they were made for (through the apply functions, their spec
 * and their JSON), evaluate to exactly the peak and verdict they print. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gpufit.h"

#define ADV_FAIL(...) cr_assert_fail(__VA_ARGS__)
#include "../fuzz/advice_check.h"

/* The reproducer: Llama-3-8B pre-training with pp=4 pp_schedule=gpipe planned on 2 x 8
 * H100s. The planner evaluates its layouts with the default schedule; the printed spec used to
 * leave pp_schedule=gpipe in the job (1,047.7 GiB instead of the printed 55.37 GiB). */
Test(advice, plan_resets_are_printed)
{
    adv_case c = {.gpus_per_node = 8, .nodes = 2};
    cr_assert_eq(gpufit_model_from_preset(&c.m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&c.j, NULL), GPUFIT_OK);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_spec(NULL, c.j, "task=pretrain pp=4 pp_schedule=gpipe gpu=h100",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    gpufit_list *l = NULL;
    cr_assert_eq(gpufit_plan(&l, c.m, c.j, 8, 2, 3, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_list_count(l), 3);
    gpufit_layout y = {.struct_size = sizeof y};
    cr_assert_eq(gpufit_list_layout(l, 0, &y), GPUFIT_OK);
    cr_assert_str_eq(y.spec, "micro_batch=4 global_batch=1024 checkpointing=none dp=4 tp=2 pp=2 "
                             "vpp=4 cp=1 ep=1 sp=1 zero=1 pp_schedule=auto");
    cr_assert_str_eq(y.spec_json,
                     "{\"micro_batch\": 4, \"global_batch\": 1024, \"checkpointing\": \"none\", "
                     "\"dp\": 4, \"tp\": 2, \"pp\": 2, \"vpp\": 4, \"cp\": 1, \"ep\": 1, "
                     "\"sp\": 1, \"zero\": 1, \"pp_schedule\": \"auto\"}");
    /* the same job with only the degrees applied (the old spec) keeps gpipe: far more memory */
    gpufit_job *old = NULL;
    cr_assert_eq(gpufit_job_copy(&old, c.j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, old,
                                   "tp=2 pp=2 vpp=4 dp=4 cp=1 ep=1 zero=1 micro_batch=4 "
                                   "global_batch=1024 checkpointing=none sp=1",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    gpufit_summary s = {.struct_size = sizeof s};
    cr_assert_eq(gpufit_evaluate_summary(c.m, old, &s, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_gt(s.peak_bytes, 4 * y.peak_bytes);
    cr_assert_eq(s.fits, 0);
    gpufit_job_free(old);
    /* every layout, three ways, exactly */
    for (uint32_t i = 0; i < gpufit_list_count(l); i++) {
        cr_assert_eq(gpufit_list_layout(l, i, &y), GPUFIT_OK);
        adv_reproduces(&c, "layout", i, adv_apply_list, l, y.spec, y.spec_json, y.peak_bytes, 1);
    }
    gpufit_list_free(l);
    adv_free(&c);
}

/* Serving plans reset the per-stage lists: a job with tensor_split names the reset. */
Test(advice, serving_plan_clears_lists)
{
    adv_case c = {.gpus_per_node = 4, .nodes = 1};
    cr_assert_eq(gpufit_model_from_preset(&c.m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&c.j, NULL), GPUFIT_OK);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_spec(NULL, c.j,
                                   "task=inference framework=llamacpp pp=2 tensor_split=3,1 "
                                   "gpu=rtx-4090",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    gpufit_list *l = NULL;
    cr_assert_eq(gpufit_plan(&l, c.m, c.j, 4, 1, 5, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_gt(gpufit_list_count(l), 0);
    for (uint32_t i = 0; i < gpufit_list_count(l); i++) {
        gpufit_layout y = {.struct_size = sizeof y};
        cr_assert_eq(gpufit_list_layout(l, i, &y), GPUFIT_OK);
        cr_assert(strstr(y.spec, "tensor_split=none") != NULL, "%s", y.spec);
        cr_assert(strstr(y.spec_json, "\"tensor_split\": []") != NULL, "%s", y.spec_json);
        adv_reproduces(&c, "layout", i, adv_apply_list, l, y.spec, y.spec_json, y.peak_bytes, 1);
    }
    gpufit_list_free(l);
    adv_free(&c);
}

/* A recommendation names its GPU and count; applied, it is the job it was evaluated as. */
Test(advice, recommendation_spec)
{
    adv_case c = {0};
    cr_assert_eq(gpufit_model_from_preset(&c.m, "llama-3-70b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&c.j, NULL), GPUFIT_OK);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_spec(NULL, c.j, "task=inference tp=2 gpus=2 gpu_memory_gib=20", &err),
                 GPUFIT_OK, "%s", err.message);
    gpufit_gpu_info g = {.struct_size = sizeof g};
    cr_assert_eq(gpufit_gpu_by_name("h100", &g), GPUFIT_OK);
    int32_t ids[1] = {g.id};
    gpufit_list *l = NULL;
    cr_assert_eq(gpufit_recommend(&l, c.m, c.j, ids, 1, 64, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_list_count(l), 1);
    gpufit_recommendation x = {.struct_size = sizeof x};
    cr_assert_eq(gpufit_list_recommendation(l, 0, &x), GPUFIT_OK);
    char want[128];
    snprintf(want, sizeof want, "tp=%u gpus=0 gpu=%s", x.count, g.key);
    cr_assert_str_eq(x.spec, want);
    adv_reproduces(&c, "recommendation", 0, adv_apply_list, l, x.spec, x.spec_json,
                   x.peak_bytes, x.fits);
    gpufit_job *jj = NULL;
    cr_assert_eq(gpufit_job_copy(&jj, c.j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_apply_list_entry(jj, l, 1, &err), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_job_apply_list_entry(NULL, l, 0, &err), GPUFIT_E_INVALID_ARG);
    gpufit_job_free(jj);
    gpufit_list_free(l);
    adv_free(&c);
}

/* A candidate GPU id that is not in the catalogue is an error naming it, not skipped. */
Test(advice, recommend_unknown_gpu_id)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_from_preset(&m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    gpufit_gpu_info g = {.struct_size = sizeof g};
    cr_assert_eq(gpufit_gpu_by_name("h100", &g), GPUFIT_OK);
    int32_t ids[2] = {g.id, 987654};
    gpufit_list *l = (gpufit_list *)&ids; /* must be reset to NULL */
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_recommend(&l, m, j, ids, 2, 8, &err), GPUFIT_E_NOT_FOUND);
    cr_assert_null(l);
    cr_assert_eq(err.param, GPUFIT_JOB_GPU);
    cr_assert(strstr(err.message, "987654") != NULL, "%s", err.message);
    ids[1] = -1;
    cr_assert_eq(gpufit_recommend(&l, m, j, ids, 2, 8, &err), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_recommend(&l, m, j, ids, 1, 8, &err), GPUFIT_OK, "%s", err.message);
    gpufit_list_free(l);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* max_fitting: an id that is no parameter is UNKNOWN_PARAM; a parameter it does not search, or
 * one that does not apply to the job, is UNSUPPORTED. */
Test(advice, max_fitting_errors)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_from_preset(&m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "task=lora gpu=h100", NULL), GPUFIT_OK);
    int64_t v = 0;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_max_fitting(m, j, 999999, &v, &err), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(err.param, 999999);
    cr_assert_eq(gpufit_max_fitting(m, j, 0, &v, &err), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_TP, &v, &err), GPUFIT_E_UNSUPPORTED);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_MODEL_N_LAYERS, &v, &err),
                 GPUFIT_E_UNSUPPORTED);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_GPU_MEMORY_UTILIZATION, &v, &err),
                 GPUFIT_E_UNSUPPORTED);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_MICRO_BATCH, &v, &err), GPUFIT_OK);
    cr_assert_gt(v, 0);
    /* an inference parameter on a training job, and n_gpu_layers outside llama.cpp */
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_CONTEXT_LEN, &v, &err),
                 GPUFIT_E_UNSUPPORTED);
    cr_assert(strstr(err.message, "context_len") != NULL, "%s", err.message);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "task=inference framework=vllm", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_N_GPU_LAYERS, &v, &err),
                 GPUFIT_E_UNSUPPORTED);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_SEQ_LEN, &v, &err), GPUFIT_E_UNSUPPORTED);
    cr_assert_eq(gpufit_max_fitting(m, j, GPUFIT_JOB_BATCH, &v, &err), GPUFIT_OK);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* Mitigations: every ranked one reproduces, and its spec is canonical. */
Test(advice, mitigations_reproduce)
{
    static const char *const specs[] = {
        "task=finetune gpu=rtx-4090 micro_batch=8",
        "task=inference framework=vllm gpu=l4 batch=64 context_len=8192",
        "task=inference framework=llamacpp gpu=rtx-3060 context_len=32768",
        "task=pretrain gpu=a100-40gb precision=fp32 attention=eager",
    };
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        adv_case c = {0};
        cr_assert_eq(gpufit_model_from_preset(&c.m, "llama-3-8b", NULL), GPUFIT_OK);
        cr_assert_eq(gpufit_job_new(&c.j, NULL), GPUFIT_OK);
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_apply_spec(NULL, c.j, specs[k], &err), GPUFIT_OK, "%s", err.message);
        gpufit_result *r = NULL;
        cr_assert_eq(gpufit_evaluate(&r, c.m, c.j, &err), GPUFIT_OK, "%s", err.message);
        gpufit_summary s = {.struct_size = sizeof s};
        cr_assert_eq(gpufit_result_summary(r, &s), GPUFIT_OK);
        cr_assert_gt(s.n_mitigations, 0, "%s", specs[k]);
        for (uint32_t i = 0; i < s.n_mitigations; i++) {
            gpufit_mitigation_info mi = {.struct_size = sizeof mi};
            cr_assert_eq(gpufit_result_mitigation(r, i, &mi), GPUFIT_OK);
            adv_reproduces(&c, "mitigation", i, adv_apply_mitigation, r, mi.changes,
                           mi.changes_json, mi.peak_bytes_after, mi.fits_after);
        }
        gpufit_result_free(r);
        adv_free(&c);
    }
}

/* Callers built before the spec fields were appended still read the entries. */
Test(advice, older_struct_sizes)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_from_preset(&m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "task=inference gpu=h100", NULL), GPUFIT_OK);
    gpufit_list *l = NULL;
    cr_assert_eq(gpufit_plan(&l, m, j, 2, 1, 2, NULL), GPUFIT_OK);
    gpufit_layout y;
    memset(&y, 0, sizeof y);
    y.struct_size = (uint32_t)offsetof(gpufit_layout, spec_json);
    cr_assert_eq(gpufit_list_layout(l, 0, &y), GPUFIT_OK);
    cr_assert_eq(y.struct_size, offsetof(gpufit_layout, spec_json));
    cr_assert_null(y.spec_json);
    gpufit_list_free(l);
    cr_assert_eq(gpufit_recommend(&l, m, j, NULL, 0, 8, NULL), GPUFIT_OK);
    gpufit_recommendation x;
    memset(&x, 0, sizeof x);
    x.struct_size = (uint32_t)offsetof(gpufit_recommendation, spec);
    cr_assert_eq(gpufit_list_recommendation(l, 0, &x), GPUFIT_OK);
    cr_assert_null(x.spec);
    x.struct_size = (uint32_t)offsetof(gpufit_recommendation, spec) - 1;
    cr_assert_eq(gpufit_list_recommendation(l, 0, &x), GPUFIT_E_STRUCT_SIZE);
    gpufit_list_free(l);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* The property: 1,000 random valid jobs (a fixed-seed generator), every plan layout, every
 * recommendation, every ranked mitigation and every max_fitting answer reproduces. */
Test(advice, random_jobs_reproduce, .timeout = 600)
{
    uint64_t state = 0x9E3779B97F4A7C15ull; /* xorshift64*, fixed seed: deterministic */
    uint32_t valid = 0, checked = 0, tries = 0;
    while (valid < 1000) {
        cr_assert_lt(++tries, 20000u, "too few valid random jobs (%u)", valid);
        uint8_t bytes[64];
        for (size_t k = 0; k < sizeof bytes; k++) {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            bytes[k] = (uint8_t)((state * 0x2545F4914F6CDD1Dull) >> 56);
        }
        adv_bytes b = {bytes, sizeof bytes, 0};
        adv_case c;
        if (!adv_build(&b, &c))
            continue;
        valid++;
        checked += adv_check(&c);
        adv_free(&c);
    }
    cr_assert_gt(checked, 5000u, "only %u advices checked", checked);
}
