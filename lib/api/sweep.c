/* SPDX-License-Identifier: MIT */
/* gpufit_sweep: the summary of every job of a grid in one call (issue 16: a notebook sweep
 * at the library's speed). The cells are those of copies of the handles with one value per
 * axis set through the table's checked setters, as gpufit_*_set_int/_set_float would; it
 * sits in the api layer with the setters, whose refresh it needs (docs/architecture.md). */
#include "internal.h"

#include "eval.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Sets value v of axis entry e on the working copies; the caller refreshes the handles once
 * all of a cell's changed axes are set (a refresh reads only the final values). */
static int32_t set_axis(const gpufit__param_entry *e, gpufit_model *m, gpufit_job *j, double v,
                        gpufit_error *err)
{
    int32_t st;
    if (e->type == GPUFIT_TYPE_FLOAT)
        st = e->domain == GPUFIT_DOMAIN_MODEL ? gpufit__param_set_float(e, m, NULL, v, err)
                                              : gpufit__param_set_float(e, NULL, j, v, err);
    else
        st = e->domain == GPUFIT_DOMAIN_MODEL
                 ? gpufit__param_set_int(e, m, NULL, (int64_t)v, err)
                 : gpufit__param_set_int(e, NULL, j, (int64_t)v, err);
    return st;
}

/* The axes, checked before anything is evaluated: known scalar parameters, every value of an
 * integer, enum or bool axis integral and inside int64_t, the cell count inside n_out. */
static int32_t check_axes(const int32_t *params, const uint32_t *counts, const double *values,
                          uint32_t n_axes, uint64_t n_out, const gpufit__param_entry **entries,
                          uint64_t *n_cells, gpufit_error *err)
{
    if (n_axes > GPUFIT_SWEEP_AXES_MAX)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "n_axes %u is more than GPUFIT_SWEEP_AXES_MAX (%d)",
                            (unsigned)n_axes, GPUFIT_SWEEP_AXES_MAX);
    if (n_axes > 0 && (params == NULL || counts == NULL || values == NULL))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "params, counts and values must not be NULL when n_axes > 0");
    uint64_t cells = 1, at = 0;
    for (uint32_t a = 0; a < n_axes; a++) {
        const gpufit__param_entry *e = gpufit__param_find(params[a]);
        if (e == NULL)
            return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, params[a], UINT64_MAX,
                                "axis %u: unknown parameter id %d (gpufit_param_by_name)",
                                (unsigned)a, (int)params[a]);
        if (e->type == GPUFIT_TYPE_LIST)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, UINT64_MAX,
                                "axis %u: %s is a list parameter; sweep scalar parameters",
                                (unsigned)a, e->name);
        if (counts[a] == 0)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, UINT64_MAX,
                                "axis %u (%s): no values (counts[%u] is 0)", (unsigned)a,
                                e->name, (unsigned)a);
        if (gpufit__mul(cells, counts[a], &cells))
            return gpufit__fail(err, GPUFIT_E_OVERFLOW, e->id, UINT64_MAX,
                                "the grid's cell count overflows 64 bits at axis %u (%s)",
                                (unsigned)a, e->name);
        for (uint32_t k = 0; k < counts[a]; k++, at++) {
            double v = values[at];
            int integral = isfinite(v) && v == floor(v) && v >= -9223372036854775808.0 &&
                           v < 9223372036854775808.0;
            if (e->type == GPUFIT_TYPE_FLOAT ? !isfinite(v) : !integral)
                return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, at,
                                    "axis %u (%s): values[%llu] = %g is not %s", (unsigned)a,
                                    e->name, (unsigned long long)at, v,
                                    e->type == GPUFIT_TYPE_FLOAT ? "a finite number"
                                                                 : "an integer");
        }
        entries[a] = e;
    }
    if (n_out < cells)
        return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, UINT64_MAX,
                            "the grid has %llu cells, out and status hold %llu",
                            (unsigned long long)cells, (unsigned long long)n_out);
    *n_cells = cells;
    return GPUFIT_OK;
}

int32_t gpufit_sweep(const gpufit_model *m, const gpufit_job *j, const int32_t *params,
                     const uint32_t *counts, const double *values, uint32_t n_axes,
                     gpufit_summary *out, int32_t *status, uint64_t n_out, gpufit_error *err)
{
    if (m == NULL || j == NULL || out == NULL || status == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "model, job, out and status must not be NULL");
    /* the caller's struct size is the array's stride; the fields from verdict on are needed */
    const uint32_t stride = out->struct_size;
    if (stride < offsetof(gpufit_summary, verdict) || stride % sizeof(uint64_t) != 0)
        return gpufit__fail(err, GPUFIT_E_STRUCT_SIZE, 0, UINT64_MAX,
                            "out[0].struct_size %u is not the size of a gpufit_summary",
                            (unsigned)stride);
    const gpufit__param_entry *entries[GPUFIT_SWEEP_AXES_MAX];
    uint64_t cells = 0;
    int32_t st = check_axes(params, counts, values, n_axes, n_out, entries, &cells, err);
    if (st != GPUFIT_OK)
        return st;
    /* working copies, set axis by axis: moving to the next cell sets only the axes whose value
     * changed (the last axis runs fastest), as setting a parameter twice keeps the later value */
    gpufit_model *wm = malloc(sizeof *wm);
    gpufit_job *wj = malloc(sizeof *wj);
    if (wm == NULL || wj == NULL) {
        free(wm);
        free(wj);
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    }
    uint32_t idx[GPUFIT_SWEEP_AXES_MAX] = {0};
    uint64_t first[GPUFIT_SWEEP_AXES_MAX]; /* index in values of each axis' first value */
    for (uint32_t a = 0, at = 0; a < n_axes; at += counts[a], a++)
        first[a] = at;
    /* axes of batch and sequence sizes change neither the model nor the layout's dtypes and
     * degrees: the first cell's weights' cache serves every cell (gpufit__evaluate_reuse) */
    int sizes_only = 1;
    for (uint32_t a = 0; a < n_axes; a++) {
        int32_t id = entries[a]->id;
        sizes_only &= id == GPUFIT_JOB_MICRO_BATCH || id == GPUFIT_JOB_SEQ_LEN ||
                      id == GPUFIT_JOB_GLOBAL_BATCH || id == GPUFIT_JOB_BATCH ||
                      id == GPUFIT_JOB_CONTEXT_LEN || id == GPUFIT_JOB_PROMPT_LEN;
    }
    gpufit__wcache wcr;
    wcr.filled = 0;
    /* ... and one cell's resolved plan serves the others with their sizes re-derived
     * (gpufit__job_resize): the last plan that resolved */
    gpufit__plan base;
    int have_base = 0;
    int fresh = 1;          /* the copies must restart from the handles */
    uint32_t changed_from = 0; /* axes from here on changed since the previous cell */
    gpufit__result_buf rb;
    for (uint64_t c = 0; c < cells; c++) {
        gpufit_summary *o = (gpufit_summary *)(void *)((char *)out + c * stride);
        int32_t cst = GPUFIT_OK;
        if (fresh) {
            *wm = *m;
            *wj = *j;
            changed_from = 0;
            fresh = 0;
        }
        int model_set = 0, job_set = 0;
        for (uint32_t a = changed_from; a < n_axes && cst == GPUFIT_OK; a++) {
            cst = set_axis(entries[a], wm, wj, values[first[a] + idx[a]], NULL);
            *(entries[a]->domain == GPUFIT_DOMAIN_MODEL ? &model_set : &job_set) = 1;
        }
        if (cst == GPUFIT_OK) {
            if (model_set)
                gpufit__model_refresh(wm);
            if (job_set && sizes_only && have_base) {
                gpufit__job_resize(wj, &base);
            } else if (job_set) {
                gpufit__job_refresh(wj);
                if (sizes_only && wj->plan_state == 1) {
                    base = wj->plan;
                    have_base = 1;
                }
            }
            struct gpufit_result *r = gpufit__result_init(&rb);
            r->lean = 1; /* summaries only */
            cst = gpufit__evaluate_reuse(r, wm, wj, sizes_only ? &wcr : NULL, NULL);
            if (cst == GPUFIT_OK) {
                o->struct_size = stride;
                cst = gpufit__summary_out(r, o);
            }
        } else {
            fresh = 1; /* a refused value: the next cell starts from the handles again */
        }
        if (cst != GPUFIT_OK) {
            memset(o, 0, stride);
            o->struct_size = stride;
        }
        status[c] = cst;
        /* the next cell: the last axis runs fastest */
        changed_from = n_axes;
        for (uint32_t a = n_axes; a-- > 0;) {
            changed_from = a;
            if (++idx[a] < counts[a])
                break;
            idx[a] = 0;
        }
    }
    free(wm);
    free(wj);
    gpufit__ok(err);
    return GPUFIT_OK;
}
