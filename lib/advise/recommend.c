/* SPDX-License-Identifier: MIT */
/* GPU recommendation: for a job without a GPU, every catalogue GPU with the smallest count on
 * which it fits, ranked (docs/planner.md): memory fit first, then the interconnect a multi-GPU
 * layout needs (NVLink or PCIe), then the fit margin (a tenth of the memory free before a tight
 * fit), then known price (unknown prices after known ones, the smallest capacity first), then
 * tensor throughput per dollar. */
#include "list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Interconnect class of a layout: 0 one GPU (none needed), 1 an NVLink fabric between the
 * GPUs, 2 PCIe only (or a 2-GPU bridge asked to link more than two). */
static int link_class(const gpufit_recommendation *x)
{
    return x->count == 1 ? 0 : x->has_nvlink ? 1 : 2;
}

/* The per-GPU capacity of an entry (its peak plus its headroom). */
static int64_t capacity(const gpufit_recommendation *x)
{
    return (int64_t)x->peak_bytes + x->headroom_bytes;
}

/* Whether the job leaves at least a tenth of each GPU's memory free. */
static int roomy(const gpufit_recommendation *x)
{
    return x->headroom_bytes >= capacity(x) / 10;
}

/* a better than b? */
static int rec_better(const gpufit__rec *a, const gpufit__rec *b)
{
    const gpufit_recommendation *x = &a->info, *y = &b->info;
    if (x->fits != y->fits)
        return x->fits > y->fits;
    if (link_class(x) != link_class(y))
        return link_class(x) < link_class(y);
    if (roomy(x) != roomy(y))
        return roomy(x) > roomy(y); /* fit margin: 10% of the memory free before a tight fit */
    int xp = x->price_usd > 0.0, yp = y->price_usd > 0.0;
    if (xp != yp)
        return xp > yp; /* a known price before an unknown one */
    if (xp && x->price_usd != y->price_usd)
        return x->price_usd < y->price_usd;
    /* unknown prices: the least memory left idle first (an 80 GB card before a 192 GB one for
     * a 53 GiB job), so ties no longer fall to raw TFLOPS */
    if (!xp && capacity(x) != capacity(y))
        return capacity(x) < capacity(y);
    if (x->tflops_per_kusd != y->tflops_per_kusd)
        return x->tflops_per_kusd > y->tflops_per_kusd;
    if (x->count != y->count)
        return x->count < y->count;
    return x->tflops > y->tflops;
}

/* The changes that put the job on n GPUs g: inference over tensor parallelism, training with
 * FSDP full sharding (ZeRO-3) over data parallelism; gpus (the total) follows the degrees. */
static void changes_for(const struct gpufit_job *j0, const gpufit__gpu *g, uint32_t n,
                        gpufit__changes *cs)
{
    memset(cs, 0, sizeof *cs);
    gpufit__cs_int(cs, GPUFIT_JOB_GPU, g->id, 1); /* a catalogue GPU drops any capacity */
    gpufit__cs_int(cs, GPUFIT_JOB_GPUS, 0, 0);
    if (j0->task == GPUFIT_TASK_INFERENCE) {
        gpufit__cs_int(cs, GPUFIT_JOB_TP, n, 1);
    } else {
        gpufit__cs_int(cs, GPUFIT_JOB_DP, n, 1);
        if (n > 1)
            gpufit__cs_int(cs, GPUFIT_JOB_ZERO, 3, 1);
    }
}

/* Smallest power-of-two count of GPU g on which the job fits (0 if none up to max_count); cs
 * gets its changes, r its evaluation. */
static uint32_t smallest_count(const struct gpufit_model *m, const struct gpufit_job *j0,
                               const gpufit__gpu *g, uint32_t max_count, struct gpufit_result *r,
                               gpufit__changes *cs, uint64_t *evaluated)
{
    for (uint32_t n = 1; n <= max_count; n *= 2) {
        struct gpufit_job j = *j0;
        changes_for(j0, g, n, cs);
        (*evaluated)++;
        if (gpufit__cs_apply(cs, &j, NULL) == GPUFIT_OK &&
            gpufit__evaluate_into(r, m, &j, NULL) == GPUFIT_OK && r->fits == 1)
            return n;
    }
    return 0;
}

int32_t gpufit_recommend(gpufit_list **out, const gpufit_model *m, const gpufit_job *j,
                         const int32_t *gpu_ids, uint32_t n_gpu_ids, uint32_t max_count,
                         gpufit_error *err)
{
    if (out == NULL || m == NULL || j == NULL || (gpu_ids == NULL && n_gpu_ids > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "out, model and job must not be NULL");
    *out = NULL;
    if (max_count == 0 || max_count > 4096)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPUS, UINT64_MAX,
                            "max_count (%u) must be in [1, 4096]", max_count);
    for (uint32_t k = 0; k < n_gpu_ids; k++) /* a candidate that is not there is an error */
        if (gpufit__gpu_by_id(gpu_ids[k]) == NULL)
            return gpufit__fail(err, GPUFIT_E_NOT_FOUND, GPUFIT_JOB_GPU, UINT64_MAX,
                                "gpu id %d (candidate %u) is not in the catalogue (see "
                                "gpufit_gpu_at)",
                                (int)gpu_ids[k], k + 1);
    gpufit__result_buf *rb = malloc(sizeof *rb); /* every role: it goes to evaluate_into */
    struct gpufit_result *r = rb != NULL ? gpufit__result_init(rb) : NULL;
    if (r == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    /* the job itself must be valid, on any GPU */
    int32_t st = gpufit__evaluate_into(r, m, j, err);
    if (st != GPUFIT_OK) {
        free(rb);
        return st;
    }
    size_t n_cat = gpufit__gpu_count();
    struct gpufit_list *l = gpufit__list_new(1, (uint32_t)n_cat);
    if (l == NULL) {
        free(rb);
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    }
    for (size_t i = 0; i < n_cat; i++) {
        const gpufit__gpu *g = gpufit__gpu_at(i);
        if (n_gpu_ids > 0) {
            int wanted = 0;
            for (uint32_t k = 0; k < n_gpu_ids; k++)
                wanted |= gpu_ids[k] == g->id;
            if (!wanted)
                continue;
        }
        gpufit__changes cs;
        uint32_t count = smallest_count(m, j, g, max_count, r, &cs, &l->evaluated);
        if (count == 0)
            continue;
        gpufit__rec *e = &l->u.rec[l->n++];
        gpufit__cs_canon(&cs, j);
        e->cs = cs;
        gpufit__cs_spec(&cs, e->spec, sizeof e->spec);
        gpufit__cs_json(&cs, e->json, sizeof e->json);
        gpufit_recommendation *x = &e->info;
        x->gpu_id = g->id;
        x->count = count;
        x->fits = 1;
        x->needs_nvlink = count > 1;
        /* PCIe cards link pairs through a bridge; SXM/HGX parts sit on an NVSwitch fabric */
        int fabric = strstr(g->name, "SXM") != NULL || strstr(g->name, "HGX") != NULL ||
                     strstr(g->name, "GB200") != NULL;
        x->has_nvlink = g->nvlink_gbs > 0.0 && (count <= 2 || fabric);
        x->peak_bytes = r->peak;
        x->headroom_bytes = (int64_t)r->capacity - (int64_t)r->peak;
        x->price_usd = g->msrp_usd * count;
        x->tflops = g->bf16_tflops * count;
        x->tflops_per_kusd = x->price_usd > 0.0 ? x->tflops / (x->price_usd / 1000.0) : 0.0;
        x->gpu_name = g->name;
        snprintf(e->reason, sizeof e->reason,
                 "%u x %s: %.1f of %.1f GiB per GPU%s%s%s", count, g->name,
                 (double)r->peak / 1073741824.0, (double)r->capacity / 1073741824.0,
                 count == 1                 ? ""
                 : x->has_nvlink            ? ", NVLink between GPUs"
                 : g->nvlink_gbs > 0.0      ? ", NVLink bridges link only pairs: PCIe between pairs"
                                            : ", PCIe only (slow for sharded layouts)",
                 x->price_usd > 0.0 ? "" : ", list price unknown",
                 g->cc_major == 0 ? ", not CUDA: runtime overheads assumed as on NVIDIA" : "");
    }
    free(rb);
    /* insertion sort: at most a few dozen entries */
    for (uint32_t a = 1; a < l->n; a++) {
        gpufit__rec t = l->u.rec[a];
        uint32_t b = a;
        while (b > 0 && rec_better(&t, &l->u.rec[b - 1])) {
            l->u.rec[b] = l->u.rec[b - 1];
            b--;
        }
        l->u.rec[b] = t;
    }
    *out = l;
    gpufit__ok(err);
    return GPUFIT_OK;
}
