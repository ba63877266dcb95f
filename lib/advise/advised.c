/* SPDX-License-Identifier: MIT */
/* The public entry points that add advice to an evaluation (the advice layer): gpufit_evaluate
 * ranks mitigations when a job does not fit, and the mitigations, the largest value that fits
 * and their application to a job are read here. The evaluation (eval/) never calls advice;
 * advice calls the evaluation (docs/architecture.md). */
#include "changes.h"
#include "eval.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int32_t gpufit_evaluate(gpufit_result **out, const gpufit_model *m, const gpufit_job *j,
                        gpufit_error *err)
{
    if (out == NULL || m == NULL || j == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "out, model and job must not be NULL");
    *out = NULL;
    gpufit__result_buf rb; /* evaluated on the stack, then copied into one exact-size block */
    struct gpufit_result *t = gpufit__result_init(&rb);
    int32_t st = gpufit__evaluate_into(t, m, j, err);
    if (st != GPUFIT_OK)
        return st;
    gpufit__flags_keep(&t->flags_in, j); /* the job's own flags: written when read */
    /* rank what would make it fit when it does not, or fits with < 5 % headroom */
    if (t->capacity > 0 && j->mitigations > 0 &&
        (t->fits == 0 || t->peak > t->capacity / 20 * 19) &&
        gpufit__mitigate(t, m, j) != GPUFIT_OK)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    size_t roles_size = t->n_roles * sizeof t->roles[0]; /* n_roles <= GPUFIT__ROLES_MAX */
    struct gpufit_result *r = malloc(sizeof *r + roles_size);
    if (r == NULL) {
        free(t->mitigations);
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    }
    *r = *t;
    r->roles = (gpufit__role *)(r + 1); /* sizeof *r is a multiple of its 8-byte alignment */
    memcpy(r->roles, t->roles, roles_size);
    *out = r;
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_result_mitigation(const gpufit_result *r, uint32_t i, gpufit_mitigation_info *out)
{
    if (r == NULL || out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (i >= r->n_mitigations)
        return GPUFIT_E_NOT_FOUND;
    const gpufit__mitigation *mt = &r->mitigations[i];
    gpufit_mitigation_info info;
    memset(&info, 0, sizeof info);
    info.kind = mt->kind;
    info.fits_after = mt->fits_after;
    info.n_changes = mt->cs.n;
    info.peak_bytes_after = mt->peak_after;
    info.saved_bytes = (int64_t)r->peak - (int64_t)mt->peak_after;
    info.cost = mt->cost;
    info.text = mt->text;
    info.changes = mt->spec;
    info.changes_json = mt->json;
    info.flags = mt->flags;
    info.struct_size = (uint32_t)sizeof info;
    /* callers built before changes_json was appended still get the fields they know */
    return gpufit__copy_out(out, &info, sizeof info,
                            offsetof(gpufit_mitigation_info, changes_json));
}

int32_t gpufit_job_apply_mitigation(gpufit_job *j, const gpufit_result *r, uint32_t i,
                                    gpufit_error *err)
{
    if (j == NULL || r == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "job or result is NULL");
    if (i >= r->n_mitigations)
        return gpufit__fail(err, GPUFIT_E_NOT_FOUND, 0, UINT64_MAX,
                            "mitigation %u does not exist (%u ranked)", i, r->n_mitigations);
    struct gpufit_job copy = *j;
    int32_t st = gpufit__cs_apply(&r->mitigations[i].cs, &copy, err);
    if (st != GPUFIT_OK)
        return st;
    gpufit__job_refresh(&copy);
    *j = copy;
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_max_fitting(const gpufit_model *m, const gpufit_job *j, int32_t param,
                           int64_t *out, gpufit_error *err)
{
    if (m == NULL || j == NULL || out == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, param, UINT64_MAX,
                            "model, job and out must not be NULL");
    int32_t st = gpufit__max_fitting(m, j, param, out, err);
    if (st == GPUFIT_OK)
        gpufit__ok(err);
    return st;
}
