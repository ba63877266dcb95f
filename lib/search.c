/* Largest value of a parameter that still fits. Memory is monotone in micro_batch, seq_len,
 * batch, context_len and n_gpu_layers (a property test checks it), so an exponential search
 * followed by bisection finds the exact boundary in O(log v) evaluations. */
#include "eval.h"

static int fits_with(const struct gpufit_model *m, const struct gpufit_job *j, int32_t param,
                     int64_t v, int *ok)
{
    struct gpufit_model mm = *m;
    struct gpufit_job jj = *j;
    struct gpufit_result r;
    if (gpufit__set_param(&mm, &jj, param, v, 0.0, NULL) != GPUFIT_OK)
        return 1;
    if (param == GPUFIT_JOB_PROMPT_LEN || param == GPUFIT_JOB_CONTEXT_LEN) {
        /* a prompt cannot be longer than the context it is kept in */
        if (jj.prompt_len > jj.context_len)
            jj.prompt_len = jj.context_len;
    }
    int32_t st = gpufit__evaluate_into(&r, &mm, &jj, NULL);
    if (st != GPUFIT_OK)
        return 1;
    *ok = r.fits == 1;
    return 0;
}

int32_t gpufit__max_fitting(const struct gpufit_model *m, const struct gpufit_job *j,
                            int32_t param, int64_t *out, gpufit_error *err)
{
    const gpufit__param_entry *e = gpufit__param_find(param);
    if (e == NULL || e->is_double ||
        !(param == GPUFIT_JOB_MICRO_BATCH || param == GPUFIT_JOB_SEQ_LEN ||
          param == GPUFIT_JOB_BATCH || param == GPUFIT_JOB_CONTEXT_LEN ||
          param == GPUFIT_JOB_N_GPU_LAYERS || param == GPUFIT_JOB_PROMPT_LEN))
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, param, UINT64_MAX,
                            "largest-that-fits searches micro_batch, seq_len, batch, "
                            "context_len, prompt_len or n_gpu_layers");
    struct gpufit_result r;
    int32_t st = gpufit__evaluate_into(&r, m, j, err);
    if (st != GPUFIT_OK)
        return st;
    if (r.capacity == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPU, UINT64_MAX,
                            "largest-that-fits needs a GPU (gpu=...)");
    int64_t lo = param == GPUFIT_JOB_N_GPU_LAYERS ? 0 : 1;
    int64_t hi_limit = e->max_i;
    if (param == GPUFIT_JOB_N_GPU_LAYERS) {
        gpufit__shape s;
        if ((st = gpufit__model_resolve(m, &s, err)) != GPUFIT_OK)
            return st;
        hi_limit = (int64_t)s.n_layers;
    }
    int ok = 0;
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
