/* SPDX-License-Identifier: MIT */
/* gpufit_sweep: every cell equals gpufit_evaluate_summary of copies of the handles with that
 * cell's values set through the public setters, byte for byte and status for status, in
 * row-major order; a refused cell does not disturb the next; bad axes fail the whole call. */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void handles(const char *spec, gpufit_model **m, gpufit_job **j)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(*m, *j, spec, &err), GPUFIT_OK, "%s", err.message);
}

/* What one cell must hold: copies, the values set one by one (model or job), the summary. */
static int32_t one_cell(const gpufit_model *m, const gpufit_job *j, const int32_t *params,
                        const double *v, uint32_t n, gpufit_summary *out)
{
    gpufit_model *cm = NULL;
    gpufit_job *cj = NULL;
    cr_assert_eq(gpufit_model_copy(&cm, m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_copy(&cj, j, NULL), GPUFIT_OK);
    int32_t st = GPUFIT_OK;
    for (uint32_t a = 0; a < n && st == GPUFIT_OK; a++) {
        gpufit_param_info info = {.struct_size = sizeof info};
        cr_assert_eq(gpufit_param_get_info(params[a], &info), GPUFIT_OK);
        int model = info.domain == GPUFIT_DOMAIN_MODEL;
        if (info.type == GPUFIT_TYPE_FLOAT)
            st = model ? gpufit_model_set_float(cm, params[a], v[a], NULL)
                       : gpufit_job_set_float(cj, params[a], v[a], NULL);
        else
            st = model ? gpufit_model_set_int(cm, params[a], (int64_t)v[a], NULL)
                       : gpufit_job_set_int(cj, params[a], (int64_t)v[a], NULL);
    }
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (st == GPUFIT_OK)
        st = gpufit_evaluate_summary(cm, cj, out, NULL);
    if (st != GPUFIT_OK) {
        memset(out, 0, sizeof *out);
        out->struct_size = sizeof *out;
    }
    gpufit_model_free(cm);
    gpufit_job_free(cj);
    return st;
}

/* Sweeps and compares every cell with one_cell (3 axes at most). */
static void compare(const char *spec, const int32_t *params, const uint32_t *counts,
                    const double *values, uint32_t n_axes, uint64_t want_cells, int want_bad)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    handles(spec, &m, &j);
    gpufit_summary out[256];
    int32_t status[256];
    memset(out, 0xAB, sizeof out);
    out[0].struct_size = sizeof out[0];
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_sweep(m, j, params, counts, values, n_axes, out, status, 256, &err),
                 GPUFIT_OK, "%s", err.message);
    uint64_t cells = 1;
    for (uint32_t a = 0; a < n_axes; a++)
        cells *= counts[a];
    cr_assert_eq(cells, want_cells);
    uint32_t idx[3] = {0, 0, 0};
    int bad = 0;
    for (uint64_t c = 0; c < cells; c++) {
        double v[3];
        for (uint32_t a = 0, at = 0; a < n_axes; at += counts[a], a++)
            v[a] = values[at + idx[a]];
        gpufit_summary want;
        int32_t st = one_cell(m, j, params, v, n_axes, &want);
        cr_assert_eq(status[c], st, "cell %llu: status %d, alone %d", (unsigned long long)c,
                     status[c], st);
        cr_assert_eq(memcmp(&out[c], &want, sizeof want), 0, "cell %llu differs",
                     (unsigned long long)c);
        bad += st != GPUFIT_OK;
        for (uint32_t a = n_axes; a-- > 0;) {
            if (++idx[a] < counts[a])
                break;
            idx[a] = 0;
        }
    }
    if (want_bad >= 0)
        cr_assert_eq(bad, want_bad);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(sweep, training_grid_equals_one_by_one)
{
    const int32_t p[] = {GPUFIT_JOB_MICRO_BATCH, GPUFIT_JOB_SEQ_LEN};
    const uint32_t n[] = {8, 4};
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 512, 2048, 8192, 32768};
    compare("model=llama-3-8b task=pretrain gpu=h100 precision=bf16", p, n, v, 2, 32, 0);
}

/* Axes of sizes only reuse the first cell's weights' cache (gpufit__evaluate_reuse): still
 * byte for byte the cells one by one, on the walk (tensor parallelism, LoRA, a GGUF type) and
 * on the model cache's sums, for training and inference */
Test(sweep, size_axes_reuse_the_weights_cache)
{
    const int32_t pt[] = {GPUFIT_JOB_MICRO_BATCH, GPUFIT_JOB_SEQ_LEN, GPUFIT_JOB_GLOBAL_BATCH};
    const uint32_t nt[] = {3, 2, 2};
    const double vt[] = {1, 2, 4, 1024, 4096, 0, 64};
    static const char *const train[] = {
        "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=4 zero=1 framework=megatron",
        "model=llama-3-8b task=lora gpu=rtx-4090 trainer=loop",
        "model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 checkpointing=full",
        "model=bert-large task=finetune gpu=v100-16gb precision=fp32",
    };
    for (size_t i = 0; i < sizeof train / sizeof train[0]; i++)
        compare(train[i], pt, nt, vt, 3, 12, 0);
    const int32_t pi[] = {GPUFIT_JOB_BATCH, GPUFIT_JOB_CONTEXT_LEN, GPUFIT_JOB_PROMPT_LEN};
    const uint32_t ni[] = {2, 2, 2};
    const double vi[] = {1, 8, 4096, 32768, 256, 1024};
    static const char *const infer[] = {
        "model=llama-3-8b task=inference gpu=rtx-4090",
        "model=llama-3-8b task=inference gpu=rtx-4090 framework=llamacpp weight_dtype=q4_k_m",
        "model=mixtral-8x7b task=inference gpu=h100 framework=vllm weight_dtype=fp8",
    };
    for (size_t i = 0; i < sizeof infer / sizeof infer[0]; i++)
        compare(infer[i], pi, ni, vi, 3, 8, -1);
}

/* Axes of sizes only also reuse a resolved plan, with the fields the sizes decide re-derived
 * (gpufit__job_resize): the accumulation count and FSDP's unsharded gradients under
 * accumulation without sync (global_batch), the prompt's defaults and clamps, and a cell
 * refused for its sizes (prompt_len > context_len) before any plan resolved and between
 * others: still byte for byte the cells one by one */
Test(sweep, size_axes_reuse_the_resolved_plan)
{
    const int32_t pa[] = {GPUFIT_JOB_MICRO_BATCH, GPUFIT_JOB_GLOBAL_BATCH, GPUFIT_JOB_SEQ_LEN};
    const uint32_t na[] = {2, 3, 2};
    const double va[] = {1, 2, 0, 16, 64, 1024, 4096};
    compare("model=llama-3-8b task=finetune gpu=h100 framework=pytorch zero=3 dp=8 "
            "precision=bf16",
            pa, na, va, 3, 12, 0);
    compare("model=llama-3-8b task=finetune gpu=a100-80gb framework=deepspeed zero=2 dp=4 "
            "precision=bf16",
            pa, na, va, 3, 12, 0);
    /* prompt_len 1024 > context_len 512 refuses the first cell, before any plan resolved */
    const int32_t pp[] = {GPUFIT_JOB_PROMPT_LEN, GPUFIT_JOB_CONTEXT_LEN};
    const uint32_t np[] = {3, 2};
    const double vp[] = {1024, 0, 256, 512, 4096};
    compare("model=llama-3-8b task=inference gpu=rtx-4090", pp, np, vp, 2, 6, 1);
    /* llama.cpp: n_ubatch at most batch x n_ctx; vLLM: the step may exceed one context */
    const int32_t pl[] = {GPUFIT_JOB_BATCH, GPUFIT_JOB_CONTEXT_LEN, GPUFIT_JOB_PROMPT_LEN};
    const uint32_t nl[] = {2, 2, 2};
    const double vl[] = {1, 4, 256, 2048, 0, 1024};
    compare("model=llama-3-8b task=inference gpu=rtx-4090 framework=llamacpp "
            "weight_dtype=q4_k_m",
            pl, nl, vl, 3, 8, 0);
    compare("model=llama-3-8b task=inference gpu=h100 framework=vllm", pl, nl, vl, 3, 8, 0);
    /* SGLang: context_len caps the prefill CUDA graphs, which move the default fraction and the
     * workspace; MLA and a vision encoder re-resolve them in evaluation */
    compare("model=llama-3-8b task=inference gpu=h100 framework=sglang", pl, nl, vl, 3, 8, 0);
    compare("model=deepseek-v2-lite task=inference gpu=h100 framework=sglang", pl, nl, vl, 3, 8,
            0);
    compare("model=llava-1.5-7b-hf task=inference gpu=h100 framework=sglang "
            "gpu_memory_utilization=0.8",
            pl, nl, vl, 3, 8, 0);
}

Test(sweep, model_float_and_enum_axes)
{
    /* a model axis, an enum (by number) and a float: each set where it belongs */
    const int32_t p[] = {GPUFIT_MODEL_N_LAYERS, GPUFIT_JOB_CHECKPOINTING, GPUFIT_JOB_DROPOUT};
    const uint32_t n[] = {3, 3, 2};
    const double v[] = {8, 16, 32, 0, 1, 2, 0.0, 0.1};
    compare("model=llama-3-8b task=finetune gpu=a100-40gb precision=amp_bf16 seq_len=2048", p,
            n, v, 3, 18, 0);
}

Test(sweep, refused_cells_keep_their_status_and_the_next_starts_clean)
{
    /* tp=3 does not divide the heads, tp=0 is out of range: those cells fail alone */
    const int32_t p[] = {GPUFIT_JOB_TP, GPUFIT_JOB_MICRO_BATCH};
    const uint32_t n[] = {4, 2};
    const double v[] = {1, 3, 0, 2, 1, 4};
    compare("model=llama-3-8b task=pretrain gpu=h100 precision=bf16", p, n, v, 2, 8, 4);
}

Test(sweep, no_axes_is_the_job_itself)
{
    compare("model=qwen2.5-7b task=inference gpu=rtx-4090 context_len=8192", NULL, NULL, NULL,
            0, 1, 0);
}

Test(sweep, bad_axes_fail_the_call)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    handles("model=llama-3-8b task=pretrain gpu=h100", &m, &j);
    gpufit_summary out[4];
    int32_t status[4];
    out[0].struct_size = sizeof out[0];
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t mb = GPUFIT_JOB_MICRO_BATCH;
    uint32_t two = 2, five = 5, zero = 0;
    double ok[] = {1, 2, 3, 4, 5}, half[] = {1, 2.5};
    cr_assert_eq(gpufit_sweep(m, j, &mb, &two, half, 1, out, status, 4, &err),
                 GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.param, GPUFIT_JOB_MICRO_BATCH);
    cr_assert_eq(err.offset, 1);
    cr_assert(strstr(err.message, "micro_batch") != NULL, "%s", err.message);
    cr_assert_eq(gpufit_sweep(m, j, &mb, &five, ok, 1, out, status, 4, &err),
                 GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(gpufit_sweep(m, j, &mb, &zero, ok, 1, out, status, 4, &err),
                 GPUFIT_E_INVALID_ARG);
    int32_t unknown = 999999, list = GPUFIT_JOB_TENSOR_SPLIT;
    cr_assert_eq(gpufit_sweep(m, j, &unknown, &two, ok, 1, out, status, 4, &err),
                 GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(gpufit_sweep(m, j, &list, &two, ok, 1, out, status, 4, &err),
                 GPUFIT_E_INVALID_ARG);
    double nan_v[] = {NAN, 1};
    int32_t dropout = GPUFIT_JOB_DROPOUT;
    cr_assert_eq(gpufit_sweep(m, j, &dropout, &two, nan_v, 1, out, status, 4, &err),
                 GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_sweep(m, j, &mb, &two, ok, 9, out, status, 4, &err),
                 GPUFIT_E_INVALID_ARG); /* more than GPUFIT_SWEEP_AXES_MAX axes */
    cr_assert_eq(gpufit_sweep(NULL, j, &mb, &two, ok, 1, out, status, 4, &err),
                 GPUFIT_E_INVALID_ARG);
    out[0].struct_size = 8;
    cr_assert_eq(gpufit_sweep(m, j, &mb, &two, ok, 1, out, status, 4, &err),
                 GPUFIT_E_STRUCT_SIZE);
    gpufit_model_free(m);
    gpufit_job_free(j);
}
