/* SPDX-License-Identifier: MIT */
/* Layout planner: every valid (tp, pp, vpp, dp, cp, ep, zero, micro_batch, checkpointing) for
 * a cluster, evaluated with the allocation-free evaluation path, keeping the layouts that fit,
 * ordered by the cost documented in docs/planner.md. */
#include "list.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_GLOBAL_BATCH 1024

/* Cost of a layout: lost throughput as a fraction, by physical cause (docs/planner.md). */
static double layout_cost(const struct gpufit_job *j, uint64_t gpn, int flash, uint64_t n_mb,
                          uint64_t capacity, uint64_t peak)
{
    double c = 0.0;
    if (j->checkpointing == GPUFIT_CKPT_FULL)
        c += 0.33; /* one more forward pass per step */
    else if (j->checkpointing == GPUFIT_CKPT_SELECTIVE)
        c += flash ? 0.01 : 0.03; /* recomputes the attention core only */
    if (j->pp > 1)                /* pipeline bubble of 1F1B / interleaved schedules */
        c += (double)(j->pp - 1) / ((double)j->vpp * (double)n_mb);
    c += 0.02 * (double)(j->tp - 1); /* activation all-reduces per layer, inside a node */
    c += 0.02 * (double)(j->cp - 1); /* ring attention exchanges */
    if (j->ep > 1)
        c += 0.01 * log2((double)j->ep); /* token all-to-all */
    uint64_t inner = (uint64_t)(j->tp * j->cp);
    int dp_crosses = inner * (uint64_t)j->dp > gpn;
    if (j->zero >= 3)
        c += dp_crosses ? 0.10 : 0.04; /* parameter all-gathers every step */
    else if (j->zero >= 1 && dp_crosses)
        c += 0.01;
    if (j->micro_batch < 4) /* small GEMMs use the GPU less well */
        c += 0.03 * log2(4.0 / (double)j->micro_batch);
    if (peak > capacity / 20 * 19) /* less than 5 % headroom: fragmentation risk */
        c += 0.5;
    return c;
}

/* Cost of a serving layout (docs/planner.md): per-layer all-reduces, stage hand-offs, a replica
 * spread over nodes, token all-to-all; little headroom. */
static double serving_cost(const struct gpufit_job *j, uint64_t gpn, uint64_t capacity,
                           uint64_t peak)
{
    double c = 0.02 * (double)(j->tp - 1) + 0.03 * (double)(j->pp - 1);
    if ((uint64_t)(j->tp * j->pp) > gpn)
        c += 0.10; /* one replica's stages talk across nodes */
    if (j->ep > 1)
        c += 0.01 * log2((double)j->ep);
    if (peak > capacity / 20 * 19)
        c += 0.5;
    return c;
}

static void placement_text(const struct gpufit_job *j, uint64_t gpn, char *out, size_t cap)
{
    /* rank = ((pp_rank * dp + dp_rank) * cp + cp_rank) * tp + tp_rank: TP innermost, so that
     * tensor-parallel groups share a node's NVLink; pipeline stages outermost. */
    snprintf(out, cap,
             "CUDA_VISIBLE_DEVICES=%s on every node; global rank r = ((pp_rank x %lld + dp_rank) "
             "x %lld + cp_rank) x %lld + tp_rank, node = r / %llu: TP groups of %lld stay inside "
             "a node%s",
             gpn == 8 ? "0,1,2,3,4,5,6,7" : gpn == 4 ? "0,1,2,3" : gpn == 2 ? "0,1" : "0..n-1",
             (long long)j->dp, (long long)j->cp, (long long)j->tp, (unsigned long long)gpn,
             (long long)j->tp, j->ep > 1 ? "; experts spread over the dp x cp x tp ranks" : "");
}

static int better(const gpufit__lay *a, const gpufit__lay *b)
{
    if (a->info.cost != b->info.cost)
        return a->info.cost < b->info.cost;
    return a->info.peak_bytes < b->info.peak_bytes;
}

/* keeps the best `cap` layouts, sorted */
static void insert(struct gpufit_list *l, const gpufit__lay *e)
{
    uint32_t n = l->n;
    if (n == l->cap) {
        if (!better(e, &l->u.lay[n - 1]))
            return;
        n--;
    }
    uint32_t at = n;
    while (at > 0 && better(e, &l->u.lay[at - 1])) {
        l->u.lay[at] = l->u.lay[at - 1];
        at--;
    }
    l->u.lay[at] = *e;
    l->n = n + 1;
}

/* Keeps the layout just evaluated into r when it ranks among the best: its degrees come from
 * the evaluated job copy c (micro_batch 0 when serving), the strings are written only for the
 * layouts kept. 1 when kept, so that the caller writes them. */
static int rank_layout(struct gpufit_list *l, const struct gpufit_result *r,
                       const struct gpufit_job *c, double cost, int training, gpufit__lay *e)
{
    memset(e, 0, sizeof *e);
    e->info.cost = cost;
    e->info.peak_bytes = r->peak;
    if (l->n == l->cap && !better(e, &l->u.lay[l->n - 1]))
        return 0;
    e->info.tp = (uint32_t)c->tp;
    e->info.pp = (uint32_t)c->pp;
    e->info.vpp = (uint32_t)c->vpp;
    e->info.dp = (uint32_t)c->dp;
    e->info.cp = (uint32_t)c->cp;
    e->info.ep = (uint32_t)c->ep;
    e->info.zero = (uint32_t)c->zero;
    e->info.micro_batch = training ? (uint32_t)c->micro_batch : 0;
    e->info.checkpointing = (int32_t)c->checkpointing;
    e->info.headroom_bytes = (int64_t)r->capacity - (int64_t)r->peak;
    return 1;
}

/* The table entries of the parameters a layout sets, looked up once per plan (the search
 * records them for every candidate). */
typedef struct lay_entries {
    const gpufit__param_entry *tp, *pp, *vpp, *cp, *ep, *dp, *zero, *mb, *gb, *ckpt, *ckpt_every,
        *ckpt_layers, *etp, *sp;
} lay_entries;

static lay_entries entries(void)
{
    lay_entries le = {
        gpufit__param_find(GPUFIT_JOB_TP),          gpufit__param_find(GPUFIT_JOB_PP),
        gpufit__param_find(GPUFIT_JOB_VPP),         gpufit__param_find(GPUFIT_JOB_CP),
        gpufit__param_find(GPUFIT_JOB_EP),          gpufit__param_find(GPUFIT_JOB_DP),
        gpufit__param_find(GPUFIT_JOB_ZERO),        gpufit__param_find(GPUFIT_JOB_MICRO_BATCH),
        gpufit__param_find(GPUFIT_JOB_GLOBAL_BATCH), gpufit__param_find(GPUFIT_JOB_CHECKPOINTING),
        gpufit__param_find(GPUFIT_JOB_CHECKPOINT_EVERY),
        gpufit__param_find(GPUFIT_JOB_CHECKPOINT_LAYERS), gpufit__param_find(GPUFIT_JOB_ETP),
        gpufit__param_find(GPUFIT_JOB_SP)};
    return le;
}

/* Evaluates a candidate into r: c = the job jb (the original job with the plan's resets
 * applied) with the candidate's own changes cs applied; 1 when it fits. The resets and a
 * candidate's changes edit distinct parameters, none of which sets another, so c is the
 * original job with their union applied: the set write_changes() keeps and prints. */
static int eval_changes(struct gpufit_list *l, struct gpufit_result *r,
                        const struct gpufit_model *mc, const struct gpufit_job *jb,
                        const gpufit__changes *cs, struct gpufit_job *c)
{
    *c = *jb;
    l->evaluated++;
    return gpufit__cs_apply(cs, c, NULL) == GPUFIT_OK &&
           gpufit__evaluate_into(r, mc, c, NULL) == GPUFIT_OK && r->fits == 1;
}

/* A kept layout: the resets and its own changes as one set, canonical for the original job j,
 * as spec and JSON (docs/advice.md), and the job c it was evaluated as (r) in its framework's
 * flags (docs/flags.md). */
static void write_changes(gpufit__lay *e, const gpufit__changes *base, const gpufit__changes *cs,
                          const struct gpufit_job *j, const struct gpufit_job *c,
                          const struct gpufit_result *r)
{
    e->cs = *base;
    gpufit__cs_merge(&e->cs, cs);
    gpufit__cs_canon(&e->cs, j);
    gpufit__cs_spec(&e->cs, e->spec, sizeof e->spec);
    gpufit__cs_json(&e->cs, e->json, sizeof e->json);
    gpufit__flags_in fi;
    gpufit__flags_keep(&fi, c);
    gpufit__job_flags_write(&fi, &r->resolved, e->flags, sizeof e->flags);
}

/* The original job with the plan's resets applied: 0 when they do not apply (no layout). */
static int apply_base(const struct gpufit_job *j, const gpufit__changes *base,
                      struct gpufit_job *jb)
{
    *jb = *j;
    return gpufit__cs_apply(base, jb, NULL) == GPUFIT_OK;
}

/* Serving: every (tp, pp, ep) of one replica, the replicas (dp) filling the cluster; a layout
 * fits when the fullest device holds the weights and the KV cache of `batch` sequences of
 * `context_len` tokens (with a server budget, within gpu_memory_utilization). */
static void plan_serving(struct gpufit_list *l, struct gpufit_result *r,
                         const struct gpufit_model *mc, const gpufit__shape *s,
                         const struct gpufit_job *j, uint64_t gpn, uint64_t total)
{
    /* what a replica layout resets in the job (named in a layout's spec when it changes the
     * job); each (tp, pp, dp, ep) below is added to it */
    gpufit__changes base = {0};
    gpufit__cs_int(&base, GPUFIT_JOB_CHECKPOINTING, GPUFIT_CKPT_NONE, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_CHECKPOINT_EVERY, 1, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_CHECKPOINT_LAYERS, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_VPP, 1, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_CP, 1, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_ETP, 0, 0); /* each ep below fixes the servers' split */
    gpufit__cs_int(&base, GPUFIT_JOB_SP, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_ZERO, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_GPUS, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_PP_FIRST_LAYERS, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_PP_LAST_LAYERS, 0, 0);
    gpufit__cs_clear(&base, GPUFIT_JOB_TENSOR_SPLIT, 0);
    gpufit__cs_clear(&base, GPUFIT_JOB_DEVICE_GPUS, 0);
    gpufit__cs_clear(&base, GPUFIT_JOB_DEVICE_MEMORY_GIB, 0);
    struct gpufit_job c, jb;
    if (!apply_base(j, &base, &jb))
        return;
    const lay_entries le = entries();
    for (uint64_t tp = 1; tp <= gpn; tp *= 2) {
        if (gpn % tp || s->nq % tp || s->f % tp || (s->E > 0 && s->f_moe % tp))
            continue;
        for (uint64_t pp = 1; pp <= s->n_layers && pp <= total / tp; pp++) {
            if ((total / tp) % pp)
                continue;
            uint64_t dp = total / tp / pp;
            /* MoE: experts tensor-parallel (ep = 1) or spread whole over a replica's TP ranks
             * (ep = tp: vLLM --enable-expert-parallel) */
            for (uint64_t ep = 1; ep <= tp; ep = ep == tp ? tp + 1 : tp) {
                if (ep > 1 && (s->E == 0 || s->E % ep))
                    continue;
                gpufit__changes cs;
                cs.n = cs.overflow = 0;
                gpufit__cs_int_e(&cs, le.tp, (int64_t)tp, 1);
                gpufit__cs_int_e(&cs, le.pp, (int64_t)pp, 1);
                gpufit__cs_int_e(&cs, le.dp, (int64_t)dp, 1);
                gpufit__cs_int_e(&cs, le.ep, (int64_t)ep, 1);
                if (!eval_changes(l, r, mc, &jb, &cs, &c))
                    continue;
                gpufit__lay e;
                if (!rank_layout(l, r, &c, serving_cost(&c, gpn, r->capacity, r->peak), 0, &e))
                    continue;
                /* every stage keeps its layers' KV: the replica holds the fewest tokens */
                e.info.kv_capacity_tokens = UINT64_MAX;
                for (uint32_t k = 0; k < r->n_roles; k++)
                    if (strcmp(r->roles[k].name, "host") != 0 &&
                        r->roles[k].kv_cap_tokens < e.info.kv_capacity_tokens)
                        e.info.kv_capacity_tokens = r->roles[k].kv_cap_tokens;
                write_changes(&e, &base, &cs, j, &c, r);
                snprintf(e.placement, sizeof e.placement,
                         "%llu replica%s of %llu GPUs; within a replica rank r = pp_rank x %llu "
                         "+ tp_rank, node = (replica x %llu + r) / %llu%s",
                         (unsigned long long)dp, dp == 1 ? "" : "s", (unsigned long long)(tp * pp),
                         (unsigned long long)tp, (unsigned long long)(tp * pp),
                         (unsigned long long)gpn,
                         tp * pp > gpn ? ": a replica spans nodes" : "");
                insert(l, &e);
            }
        }
    }
}

int32_t gpufit_plan(gpufit_list **out, const gpufit_model *m, const gpufit_job *j,
                    uint32_t gpus_per_node, uint32_t nodes, uint32_t max_results,
                    gpufit_error *err)
{
    if (out == NULL || m == NULL || j == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "out, model and job must not be NULL");
    *out = NULL;
    if (gpus_per_node == 0 || gpus_per_node > 64 || nodes == 0 || nodes > 65536 ||
        max_results == 0 || max_results > 10000)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPUS, UINT64_MAX,
                            "gpus_per_node in [1, 64], nodes in [1, 65536] and max_results in "
                            "[1, 10000] are required");
    struct gpufit_model mc = *m;
    if (mc.cache_state != 1)
        gpufit__model_refresh(&mc);
    gpufit__shape s;
    int32_t st = gpufit__model_resolve(&mc, &s, err);
    if (st != GPUFIT_OK)
        return st;
    gpufit__result_buf *rb = malloc(sizeof *rb); /* every role: it goes to evaluate_into */
    struct gpufit_result *r = rb != NULL ? gpufit__result_init(rb) : NULL;
    struct gpufit_list *l = gpufit__list_new(2, max_results);
    if (r == NULL || l == NULL) {
        free(rb);
        gpufit_list_free(l);
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    }
    uint64_t gpn = gpus_per_node, total = (uint64_t)gpus_per_node * nodes;
    if (j->task == GPUFIT_TASK_INFERENCE) {
        plan_serving(l, r, &mc, &s, j, gpn, total);
        free(rb);
        *out = l;
        gpufit__ok(err);
        return GPUFIT_OK;
    }
    int64_t gbs = j->global_batch > 0 ? j->global_batch : DEFAULT_GLOBAL_BATCH;
    int flash = j->attention == GPUFIT_ATTN_FLASH || j->attention < 0;
    static const int64_t mbs_set[] = {1, 2, 4, 8};
    static const int64_t ckpt_set[] = {GPUFIT_CKPT_NONE, GPUFIT_CKPT_SELECTIVE, GPUFIT_CKPT_FULL};
    /* what a training layout resets in the job (named in a layout's spec when it changes the
     * job); each candidate's degrees are added to it */
    gpufit__changes base = {0};
    gpufit__cs_int(&base, GPUFIT_JOB_GPUS, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_PP_SCHEDULE, -1, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_PP_FIRST_LAYERS, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_PP_LAST_LAYERS, 0, 0);
    gpufit__cs_int(&base, GPUFIT_JOB_ZERO_SHARD_SIZE, 0, 0);
    struct gpufit_job c, jb;
    int base_ok = apply_base(j, &base, &jb);
    const lay_entries le = entries();
    /* TP stays inside a node; every other degree divides what is left */
    for (uint64_t tp = 1; base_ok && tp <= gpn; tp *= 2) {
        if (gpn % tp || s.nq % tp || s.f % tp || (s.E > 0 && s.f_moe % tp))
            continue;
        for (uint64_t pp = 1; pp <= s.n_layers && pp <= total / tp; pp++) {
            if ((total / tp) % pp)
                continue;
            for (uint64_t cp = 1; cp <= 8; cp *= 2) {
                if ((total / tp / pp) % cp || (uint64_t)j->seq_len % cp)
                    continue;
                uint64_t dp = total / tp / pp / cp;
                /* MoE: experts over etp x ep of the tp x cp x dp ranks (Megatron-Core folds the
                 * expert grid into the same ranks): the job's etp, else tp (ei = 0) and, for
                 * Megatron with tp > 1, also etp = 1 (ei = 1: whole experts, MoE parallel
                 * folding) */
                int fold = j->etp == 0 && s.E > 0 && tp > 1 && j->framework == GPUFIT_FW_MEGATRON;
                for (uint64_t ep = 1, ei = 0; ep <= (s.E > 0 ? s.E : 1);
                     ei = !ei, ep = ei ? ep : ep * 2) {
                    uint64_t etp = j->etp > 0 ? (uint64_t)j->etp : ei == 0 ? tp : 1;
                    if ((ei == 1 && !fold) || (s.E > 0 && s.f_moe % etp))
                        continue;
                    if ((s.E > 0 && s.E % ep) || (dp * cp * tp) % (etp * ep))
                        continue; /* experts: etp x ep ranks hold one copy */
                    for (uint64_t vpp = 1; vpp <= 4; vpp *= 2) {
                        if (vpp > 1 && (pp == 1 || (s.n_layers / pp) % vpp))
                            continue;
                        for (int64_t zero = 0; zero <= 3; zero++) {
                            if (zero > 0 && dp == 1)
                                continue;
                            for (size_t mi = 0; mi < 4; mi++) {
                                int64_t mbs = mbs_set[mi];
                                if (gbs % (mbs * (int64_t)dp))
                                    continue;
                                for (size_t ci = 0; ci < 3; ci++) {
                                    int full = ckpt_set[ci] == GPUFIT_CKPT_FULL;
                                    gpufit__changes cs;
                cs.n = cs.overflow = 0;
                                    /* in parameter-id order: each edit is appended */
                                    gpufit__cs_int_e(&cs, le.mb, mbs, 1);
                                    gpufit__cs_int_e(&cs, le.gb, gbs, 1);
                                    gpufit__cs_int_e(&cs, le.ckpt, ckpt_set[ci], 1);
                                    /* the job's choice of checkpointed layers goes with full */
                                    gpufit__cs_int_e(&cs, le.ckpt_every,
                                                     full ? j->checkpoint_every : 1, 0);
                                    gpufit__cs_int_e(&cs, le.ckpt_layers,
                                                     full ? j->checkpoint_layers : 0, 0);
                                    gpufit__cs_int_e(&cs, le.dp, (int64_t)dp, 1);
                                    gpufit__cs_int_e(&cs, le.tp, (int64_t)tp, 1);
                                    gpufit__cs_int_e(&cs, le.pp, (int64_t)pp, 1);
                                    gpufit__cs_int_e(&cs, le.vpp, (int64_t)vpp, 1);
                                    gpufit__cs_int_e(&cs, le.cp, (int64_t)cp, 1);
                                    gpufit__cs_int_e(&cs, le.ep, (int64_t)ep, 1);
                                    gpufit__cs_int_e(&cs, le.sp, tp > 1, tp > 1);
                                    gpufit__cs_int_e(&cs, le.zero, zero, 1);
                                    gpufit__cs_int_e(&cs, le.etp, ei == 1 ? 1 : j->etp, ei == 1);
                                    if (!eval_changes(l, r, &mc, &jb, &cs, &c))
                                        continue;
                                    gpufit__lay e;
                                    uint64_t n_mb = (uint64_t)gbs / ((uint64_t)mbs * dp);
                                    if (!rank_layout(l, r, &c,
                                                     layout_cost(&c, gpn, flash, n_mb,
                                                                 r->capacity, r->peak),
                                                     1, &e))
                                        continue; /* strings only for the kept ones */
                                    write_changes(&e, &base, &cs, j, &c, r);
                                    placement_text(&c, gpn, e.placement, sizeof e.placement);
                                    insert(l, &e);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    free(rb);
    *out = l;
    gpufit__ok(err);
    return GPUFIT_OK;
}
