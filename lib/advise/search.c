/* SPDX-License-Identifier: MIT */
/* Largest value of a parameter that still fits. Memory is monotone in micro_batch, seq_len,
 * batch, context_len and n_gpu_layers (a property test checks it), so an exponential search
 * followed by bisection finds the exact boundary in O(log v) evaluations. */
#include "eval.h"

static int fits_with(const struct gpufit_model *m, const struct gpufit_job *j, int32_t param,
                     int64_t v, int *ok)
{
    struct gpufit_model mm = *m;
    struct gpufit_job jj = *j; /* set_param and the edit below leave its plan stale */
    gpufit__result_buf rb;
    struct gpufit_result *r = gpufit__result_init(&rb);
    r->lean = 1; /* only the verdict is read */
    /* only param changes: the answer, set alone, is the job evaluated (docs/advice.md) */
    if (gpufit__set_param(&mm, &jj, param, v, 0.0, NULL) != GPUFIT_OK)
        return 1;
    int32_t st = gpufit__evaluate_into(r, &mm, &jj, NULL);
    if (st != GPUFIT_OK)
        return 1;
    *ok = r->verdict == GPUFIT_VERDICT_FITS; /* sure to fit: the band's high end fits */
    return 0;
}

/* With a global batch set, a micro-batch must divide the samples each data-parallel rank
 * takes per step (gradient accumulation = global / (micro x dp)): bisect over the divisors of
 * per_rank, ascending; memory is monotone in the micro-batch at a fixed global batch. */
static int32_t largest_divisor_fitting(const struct gpufit_model *m, const struct gpufit_job *j,
                                       uint64_t per_rank, int64_t *out)
{
    /* 1,536 > the most divisors of any number below 2^32 (1,344); per_rank <= 2^32 */
    int64_t div[1536];
    size_t n = 0, n_hi = 0;
    int64_t hi_part[768];
    for (uint64_t d = 1; d * d <= per_rank && n < 768; d++) {
        if (per_rank % d != 0)
            continue;
        div[n++] = (int64_t)d;
        if (d * d != per_rank)
            hi_part[n_hi++] = (int64_t)(per_rank / d);
    }
    while (n_hi > 0) /* the co-divisors, ascending */
        div[n++] = hi_part[--n_hi];
    int ok = 0;
    *out = 0;
    if (n == 0 || fits_with(m, j, GPUFIT_JOB_MICRO_BATCH, div[0], &ok) || !ok)
        return GPUFIT_OK; /* not even one sample per micro-batch fits */
    size_t lo = 0, hi = n; /* div[lo] fits; div[hi] (when < n) does not */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (fits_with(m, j, GPUFIT_JOB_MICRO_BATCH, div[mid], &ok) == 0 && ok)
            lo = mid;
        else
            hi = mid;
    }
    *out = div[lo];
    return GPUFIT_OK;
}

int32_t gpufit__max_fitting(const struct gpufit_model *m, const struct gpufit_job *j,
                            int32_t param, int64_t *out, gpufit_error *err)
{
    const gpufit__param_entry *e = gpufit__param_find(param);
    if (e == NULL)
        return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, param, UINT64_MAX,
                            "unknown parameter id %d", (int)param);
    if (e->is_double ||
        !(param == GPUFIT_JOB_MICRO_BATCH || param == GPUFIT_JOB_SEQ_LEN ||
          param == GPUFIT_JOB_BATCH || param == GPUFIT_JOB_CONTEXT_LEN ||
          param == GPUFIT_JOB_N_GPU_LAYERS || param == GPUFIT_JOB_PROMPT_LEN))
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, param, UINT64_MAX,
                            "largest-that-fits searches micro_batch, seq_len, batch, "
                            "context_len, prompt_len or n_gpu_layers");
    /* a parameter the job's memory does not depend on has no largest value that fits */
    int inference = j->task == GPUFIT_TASK_INFERENCE;
    int server = j->framework == GPUFIT_FW_VLLM || j->framework == GPUFIT_FW_SGLANG;
    if (inference != (param != GPUFIT_JOB_MICRO_BATCH && param != GPUFIT_JOB_SEQ_LEN) ||
        (param == GPUFIT_JOB_N_GPU_LAYERS && j->framework != GPUFIT_FW_LLAMACPP))
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, param, UINT64_MAX,
                            "largest-that-fits: %s does not apply to this job (%s)", e->name,
                            param == GPUFIT_JOB_N_GPU_LAYERS && inference
                                ? "n_gpu_layers is llama.cpp's"
                            : inference ? "micro_batch and seq_len are training's"
                                        : "batch, context_len, prompt_len and n_gpu_layers "
                                          "are inference's");
    gpufit__result_buf rb;
    struct gpufit_result *r = gpufit__result_init(&rb);
    int32_t st = gpufit__evaluate_into(r, m, j, err);
    if (st != GPUFIT_OK)
        return st;
    if (r->capacity == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPU, UINT64_MAX,
                            "largest-that-fits needs a GPU (gpu=...)");
    int ok = 0;
    if (param == GPUFIT_JOB_MICRO_BATCH && j->global_batch > 0 && j->task != GPUFIT_TASK_INFERENCE)
    {
        uint64_t dp, tp, pp; /* gpus=N alone: the default layout's dp (policy.c) */
        gpufit__job_layout(j, &dp, &tp, &pp);
        return largest_divisor_fitting(m, j, (uint64_t)j->global_batch / dp, out);
    }
    int64_t lo = param == GPUFIT_JOB_N_GPU_LAYERS ? 0 : 1;
    int64_t hi_limit = e->max_i;
    /* outside a server, the prompt is kept in the context: prompt_len <= context_len */
    if (!server && param == GPUFIT_JOB_CONTEXT_LEN && j->prompt_len > lo)
        lo = j->prompt_len;
    if (!server && param == GPUFIT_JOB_PROMPT_LEN && j->context_len < hi_limit)
        hi_limit = j->context_len;
    if (param == GPUFIT_JOB_N_GPU_LAYERS) {
        gpufit__shape s;
        if ((st = gpufit__model_resolve(m, &s, err)) != GPUFIT_OK)
            return st;
        hi_limit = (int64_t)s.n_layers;
    }
    if (fits_with(m, j, param, lo, &ok) || !ok) {
        *out = 0; /* not even the smallest value fits */
        return GPUFIT_OK;
    }
    /* exponential search for a value that does not fit, then bisect (lo fits, hi does not) */
    int64_t hi = lo > 0 ? lo * 2 : 1;
    for (;;) {
        if (hi >= hi_limit) {
            hi = hi_limit;
            if (fits_with(m, j, param, hi, &ok) == 0 && ok) {
                *out = hi;
                return GPUFIT_OK;
            }
            break;
        }
        if (fits_with(m, j, param, hi, &ok) || !ok)
            break;
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (fits_with(m, j, param, mid, &ok) == 0 && ok)
            lo = mid;
        else
            hi = mid;
    }
    *out = lo;
    return GPUFIT_OK;
}
