/* SPDX-License-Identifier: MIT */
/* The public typed setters: the parameter table (plan/params.c) checks and stores a value,
 * then the handle's derived state is refreshed (the model cache, model/model_cache.c; the
 * resolved plan, plan/policy.c). They sit above both (docs/architecture.md). */
#include "internal.h"

int32_t gpufit_model_set_int(gpufit_model *m, int32_t p, int64_t v, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(m, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_MODEL, err, &st);
    if (e == NULL)
        return st;
    st = gpufit__param_set_int(e, m, NULL, v, err);
    if (st == GPUFIT_OK) {
        gpufit__model_refresh(m);
        gpufit__ok(err);
    }
    return st;
}

int32_t gpufit_model_set_float(gpufit_model *m, int32_t p, double v, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(m, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_MODEL, err, &st);
    if (e == NULL)
        return st;
    st = gpufit__param_set_float(e, m, NULL, v, err);
    if (st == GPUFIT_OK) {
        gpufit__model_refresh(m);
        gpufit__ok(err);
    }
    return st;
}

int32_t gpufit_job_set_int(gpufit_job *j, int32_t p, int64_t v, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(j, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_JOB, err, &st);
    if (e == NULL)
        return st;
    st = gpufit__param_set_int(e, NULL, j, v, err);
    if (st == GPUFIT_OK) {
        gpufit__job_refresh(j);
        gpufit__ok(err);
    }
    return st;
}

int32_t gpufit_job_set_float(gpufit_job *j, int32_t p, double v, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(j, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_JOB, err, &st);
    if (e == NULL)
        return st;
    st = gpufit__param_set_float(e, NULL, j, v, err);
    if (st == GPUFIT_OK) {
        gpufit__job_refresh(j);
        gpufit__ok(err);
    }
    return st;
}

int32_t gpufit_job_set_list(gpufit_job *j, int32_t p, const double *v, uint32_t n,
                            gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(j, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_JOB, err, &st);
    if (e == NULL)
        return st;
    st = gpufit__param_set_list(e, j, v, n, err);
    if (st == GPUFIT_OK) {
        gpufit__job_refresh(j);
        gpufit__ok(err);
    }
    return st;
}
