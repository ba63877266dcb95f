/* SPDX-License-Identifier: MIT */
/* Lifetimes of the model and job handles. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int32_t gpufit_model_new(gpufit_model **out, gpufit_error *err)
{
    if (out == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out is NULL");
    *out = NULL;
    gpufit_model *m = malloc(sizeof *m);
    if (m == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    gpufit__model_defaults(m);
    m->cache_state = 3; /* the defaults do not resolve (n_layers has none; test_cold) */
    *out = m;
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_model_from_preset(gpufit_model **out, const char *name, gpufit_error *err)
{
    if (out == NULL || name == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out or name is NULL");
    *out = NULL;
    gpufit_model *m = malloc(sizeof *m);
    if (m == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    int32_t st = gpufit__preset_load(m, name, strlen(name), err);
    if (st != GPUFIT_OK) {
        free(m);
        return st;
    }
    gpufit__model_refresh(m);
    *out = m;
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_model_copy(gpufit_model **out, const gpufit_model *m, gpufit_error *err)
{
    if (out == NULL || m == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out or model is NULL");
    *out = NULL;
    gpufit_model *c = malloc(sizeof *c);
    if (c == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    *c = *m;
    *out = c;
    gpufit__ok(err);
    return GPUFIT_OK;
}

void gpufit_model_free(gpufit_model *m)
{
    free(m);
}

const char *gpufit_model_name(const gpufit_model *m)
{
    return m != NULL ? m->name : "";
}

int32_t gpufit_model_param_count(const gpufit_model *m, uint64_t *total_out,
                                 uint64_t *active_out, gpufit_error *err)
{
    if (m == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "model is NULL");
    gpufit__shape s;
    gpufit__counts c;
    int32_t st = gpufit__model_resolve(m, &s, err);
    if (st == GPUFIT_OK)
        st = gpufit__model_count(&s, &c, err);
    if (st != GPUFIT_OK)
        return st;
    if (total_out != NULL)
        *total_out = c.total;
    if (active_out != NULL)
        *active_out = c.active;
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_job_new(gpufit_job **out, gpufit_error *err)
{
    if (out == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out is NULL");
    *out = NULL;
    gpufit_job *j = malloc(sizeof *j);
    if (j == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    gpufit__job_defaults(j); /* plan_state 0: the first setter or evaluation resolves it */
    *out = j;
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_job_copy(gpufit_job **out, const gpufit_job *j, gpufit_error *err)
{
    if (out == NULL || j == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out or job is NULL");
    *out = NULL;
    gpufit_job *c = malloc(sizeof *c);
    if (c == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    *c = *j;
    *out = c;
    gpufit__ok(err);
    return GPUFIT_OK;
}

void gpufit_job_free(gpufit_job *j)
{
    free(j);
}
