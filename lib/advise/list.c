/* SPDX-License-Identifier: MIT */
/* Lists of recommendations and layouts: allocation and accessors. */
#include "list.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct gpufit_list *gpufit__list_new(int32_t kind, uint32_t cap)
{
    struct gpufit_list *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->kind = kind;
    l->cap = cap;
    size_t each = kind == 1 ? sizeof(gpufit__rec) : sizeof(gpufit__lay);
    void *p = calloc(cap > 0 ? cap : 1, each);
    if (p == NULL) {
        free(l);
        return NULL;
    }
    if (kind == 1)
        l->u.rec = p;
    else
        l->u.lay = p;
    return l;
}

uint32_t gpufit_list_count(const gpufit_list *l)
{
    return l != NULL ? l->n : 0;
}

uint64_t gpufit_list_evaluated(const gpufit_list *l)
{
    return l != NULL ? l->evaluated : 0;
}

int32_t gpufit_list_recommendation(const gpufit_list *l, uint32_t i, gpufit_recommendation *out)
{
    if (l == NULL || out == NULL || l->kind != 1)
        return GPUFIT_E_INVALID_ARG;
    if (i >= l->n)
        return GPUFIT_E_NOT_FOUND;
    gpufit_recommendation r = l->u.rec[i].info;
    r.reason = l->u.rec[i].reason;
    r.spec = l->u.rec[i].spec;
    r.spec_json = l->u.rec[i].json;
    r.struct_size = (uint32_t)sizeof r;
    /* callers built before spec was appended still get the fields they know */
    return gpufit__copy_out(out, &r, sizeof r, offsetof(gpufit_recommendation, spec));
}

int32_t gpufit_list_layout(const gpufit_list *l, uint32_t i, gpufit_layout *out)
{
    if (l == NULL || out == NULL || l->kind != 2)
        return GPUFIT_E_INVALID_ARG;
    if (i >= l->n)
        return GPUFIT_E_NOT_FOUND;
    gpufit_layout y = l->u.lay[i].info;
    y.spec = l->u.lay[i].spec;
    y.placement = l->u.lay[i].placement;
    y.spec_json = l->u.lay[i].json;
    y.flags = l->u.lay[i].flags;
    y.struct_size = (uint32_t)sizeof y;
    return gpufit__copy_out(out, &y, sizeof y, offsetof(gpufit_layout, spec_json));
}

int32_t gpufit_job_apply_list_entry(gpufit_job *j, const gpufit_list *l, uint32_t i,
                                    gpufit_error *err)
{
    if (j == NULL || l == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "job or list is NULL");
    if (i >= l->n)
        return gpufit__fail(err, GPUFIT_E_NOT_FOUND, 0, UINT64_MAX,
                            "list entry %u does not exist (%u listed)", i, l->n);
    struct gpufit_job copy = *j;
    int32_t st = gpufit__cs_apply(l->kind == 1 ? &l->u.rec[i].cs : &l->u.lay[i].cs, &copy, err);
    if (st != GPUFIT_OK)
        return st;
    gpufit__job_refresh(&copy);
    *j = copy;
    gpufit__ok(err);
    return GPUFIT_OK;
}

void gpufit_list_free(gpufit_list *l)
{
    if (l == NULL)
        return;
    free(l->kind == 1 ? (void *)l->u.rec : (void *)l->u.lay);
    free(l);
}
