/* SPDX-License-Identifier: MIT */
/* Evaluation: splits the model over device roles, adds the memory terms of each role, the
 * runtime overheads and the verdict. Pure arithmetic: no allocation, no strings, no I/O. */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#define GIB ((uint64_t)1 << 30)

static uint64_t max_u(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static void add_note(struct gpufit_result *r, int note)
{
    /* n_notes <= GPUFIT__NOTES_MAX, checked before the search: gcc, peeling the loop by the
     * profile, otherwise sees the store overflow the array (-Wstringop-overflow) */
    uint32_t n = r->n_notes;
    if (n >= GPUFIT__NOTES_MAX)
        return;
    for (uint32_t i = 0; i < n; i++)
        if (r->notes[i] == note)
            return;
    r->notes[n] = (uint8_t)note;
    r->n_notes = n + 1;
}

/* Layers [begin, begin + count) of the whole stack, split into the layer classes in order
 * (dense layers before MoE layers; encoder before decoder). */
static void take_layers(const gpufit__shape *s, uint64_t begin, uint64_t count,
                        gpufit__slice *sl)
{
    uint64_t at = 0, end = begin + count;
    for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++) /* a class the model lacks: none */
        sl->layers[w] = sl->layer_begin[w] = 0;
    for (int w = s->w_first; w < s->w_end; w++) {
        uint64_t n = s->layers[w], lo, hi;
        lo = begin > at ? begin - at : 0;
        hi = end > at ? end - at : 0;
        lo = lo < n ? lo : n;
        hi = hi < n ? hi : n;
        at += n;
        sl->layers[w] = hi - lo;
        sl->layer_begin[w] = lo;
    }
}

/* mul_frac's rare case: x at or above 2^52 (an integer already), or no valid product. */
GPUFIT__COLD static int mul_frac_big(double x, uint64_t *out)
{
    if (!(x >= 0.0) || x >= 1.8e19)
        return 1;
    *out = (uint64_t)llround(x);
    return 0;
}

/* v x f rounded half away from zero (llround). Below 2^52 the truncation t and x - t are
 * exact, so t + (x - t >= 0.5) is llround(x) without the libm call; larger x are integers
 * already and keep llround's result. t < 2^52 converts through int64_t, one instruction each
 * way (the unsigned conversions test for 2^63 first). */
static int mul_frac(uint64_t v, double f, uint64_t *out)
{
    double x = (double)v * f;
    if (x >= 0.0 && x < 4503599627370496.0) {
        int64_t t = (int64_t)x;
        *out = (uint64_t)t + (x - (double)t >= 0.5);
        return 0;
    }
    return mul_frac_big(x, out);
}

#define CK(expr)                                                                                   \
    do {                                                                                           \
        if (expr)                                                                                  \
            return gpufit__fail(err, GPUFIT_E_OVERFLOW, 0, UINT64_MAX,                             \
                                "a byte count exceeds 64 bits");                                   \
    } while (0)

/* Returns a status that is not GPUFIT_OK (the error already filled). */
#define CK2(expr)                                                                                  \
    do {                                                                                           \
        int32_t st_ = (expr);                                                                      \
        if (st_ != GPUFIT_OK)                                                                      \
            return st_;                                                                            \
    } while (0)

typedef gpufit__wcache wcache; /* eval.h */

static int walk(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                size_t ng, const struct gpufit_model *gguf, const gpufit__slice *sl, uint64_t *w,
                uint64_t *h, uint64_t *t, uint64_t *o)
{
    if (gguf != NULL ? gpufit__weights_bytes_gguf(gguf, p, s, sl, w, h)
                     : gpufit__weights_bytes(p, s, g, ng, sl, w, h))
        return 1;
    if (p->training && gpufit__trainable(p, s, g, ng, sl, t, o))
        return 1;
    return 0;
}

static int wcache_build(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                        size_t ng, const gpufit__aggregates *agg, int uniform, wcache *wc);

/* The weights' cache of an evaluation: the uniform bytes, and the allocator's block rests
 * (block_slack) where the framework allocates tensor by tensor on PyTorch's caching allocator
 * without expandable segments. 1 on overflow. */
static int wcache_fill(const struct gpufit_model *mdl, const gpufit__plan *p,
                       const gpufit__shape *s, const gpufit__tgroup *g, size_t ng, wcache *wc)
{
    int uniform = p->framework != GPUFIT_FW_LLAMACPP &&
                  !(p->w_dt >= GPUFIT_DTYPE_Q4_0 && p->w_dt <= GPUFIT_DTYPE_F16_GGUF) &&
                  mdl->gguf_layers == 0;
    const gpufit__aggregates *agg = mdl->cache_state == 1 ? &mdl->cache_agg : NULL;
    if (wcache_build(p, s, g, ng, agg, uniform, wc))
        return 1;
    wc->gguf = mdl->gguf_layers > 0 ? mdl : NULL;
    wc->blocks = (p->framework == GPUFIT_FW_PYTORCH || p->framework == GPUFIT_FW_MEGATRON) &&
                 !(p->framework == GPUFIT_FW_PYTORCH && p->zero > 0) &&
                 s->arch != GPUFIT_ARCH_GENERIC && wc->gguf == NULL && !p->expandable;
    wc->dummies = p->training && p->framework == GPUFIT_FW_MEGATRON && !p->lora &&
                  s->arch != GPUFIT_ARCH_GENERIC;
    if (wc->dummies && gpufit__megatron_wgrad_dummies(p, s, g, ng, agg, &wc->dum))
        return 1;
    return wc->blocks && gpufit__blocks_build(p, s, g, ng, agg, &wc->blk);
}

static int wcache_build(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                        size_t ng, const gpufit__aggregates *agg, int uniform, wcache *wc)
{
    wc->valid = 0;
    if (!uniform)
        return 0;
    const gpufit__ubytes *u = &wc->u;
    if (gpufit__uniform_bytes(p, s, g, ng, agg, &wc->u))
        return 1;
    /* globals by slice: 0 none, 1 embedding only, 2 output only (+ the tied copy), 3 both */
    wc->w_g[0] = wc->t_g[0] = wc->o_g[0] = 0;
    wc->w_g[1] = u->w_glob[0];
    wc->t_g[1] = u->t_glob[0];
    wc->o_g[1] = u->o_glob[0];
    if (gpufit__add(u->w_glob[1], u->w_glob[2], &wc->w_g[2]) ||
        gpufit__add(u->t_glob[1], u->t_glob[2], &wc->t_g[2]) ||
        gpufit__add(u->o_glob[1], u->o_glob[2], &wc->o_g[2]) ||
        gpufit__add(u->w_glob[0], u->w_glob[1], &wc->w_g[3]) ||
        gpufit__add(u->t_glob[0], u->t_glob[1], &wc->t_g[3]) ||
        gpufit__add(u->o_glob[0], u->o_glob[1], &wc->o_g[3]))
        return 1;
    /* the vision encoder: on the slices gpufit__vision_on gives it (the embedding's, or every
     * one under vLLM) */
    for (int k = 0; k < 4 && s->v_layers > 0; k++) {
        gpufit__slice sl = {{0}, {0}, k & 1, k >> 1, 1, 1, 0, 1};
        if (gpufit__vision_on(p, s, &sl) &&
            (gpufit__add(wc->w_g[k], u->w_glob[3], &wc->w_g[k]) ||
             gpufit__add(wc->t_g[k], u->t_glob[3], &wc->t_g[k]) ||
             gpufit__add(wc->o_g[k], u->o_glob[3], &wc->o_g[k])))
            return 1;
    }
    wc->valid = 1;
    return 0;
}

/* The routed experts' share of a slice's weights, trainable parameters and optimizer bytes
 * (sharded over the expert data-parallel group, memory-model.md §3.6). */
typedef struct expert_part {
    uint64_t w, t, o;
} expert_part;

/* Weights on the device and in host memory, trainable parameters and optimizer bytes. */
static int slice_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                       size_t ng, const wcache *wc, const gpufit__slice *sl, uint64_t *w,
                       uint64_t *h, uint64_t *t, uint64_t *o, expert_part *e)
{
    *w = *h = *t = *o = 0;
    *e = (expert_part){0, 0, 0};
    if (!wc->valid)
        return walk(p, s, g, ng, wc->gguf, sl, w, h, t, o);
    int k = (sl->embedding ? 1 : 0) + (sl->output ? 2 : 0);
    const gpufit__ubytes *u = &wc->u;
    *w = wc->w_g[k]; /* nothing in host memory: that is only llama.cpp's (not uniform) */
    *t = wc->t_g[k];
    *o = wc->o_g[k];
    for (int c = s->w_first; c < s->w_end; c++) {
        uint64_t n = sl->layers[c], x;
        if (n == 0)
            continue;
        if (gpufit__mul(n, u->w[c], &x) || gpufit__add(*w, x, w) ||
            gpufit__mul(n, u->t[c], &x) || gpufit__add(*t, x, t) ||
            gpufit__mul(n, u->o[c], &x) || gpufit__add(*o, x, o) ||
            gpufit__mul(n, u->we[c], &x) || gpufit__add(e->w, x, &e->w) ||
            gpufit__mul(n, u->te[c], &x) || gpufit__add(e->t, x, &e->t) ||
            gpufit__mul(n, u->oe[c], &x) || gpufit__add(e->o, x, &e->o))
            return 1;
    }
    return 0;
}

static uint64_t shard_of(uint64_t bytes, uint64_t n)
{
    return gpufit__div_up(bytes, n);
}

/* What one GPU process keeps in host memory, by component: the host role's components (the
 * others are 0). any: something was placed there. */
typedef struct host_part {
    int any;
    uint64_t weights, optimizer, master, kv;
} host_part;

/* What the roles of one evaluation share. */
typedef struct role_ctx {
    const gpufit__plan *p;
    const gpufit__shape *s;
    const gpufit__counts *c;
    const gpufit__tgroup *g;
    size_t ng;
    const wcache *wc;
    const gpufit__act_terms *at; /* training: one layer's activations (else NULL) */
    struct gpufit_result *r;     /* its roles and notes */
    gpufit_error *err;
} role_ctx;

/* Widens the high end of component c by `more` bytes (its band starts at the point when it has
 * none yet). 1 on overflow. */
static int widen_high(gpufit__role *role, int c, uint64_t more)
{
    if (more == 0 || role->comp[c] == 0)
        return 0;
    if (!(role->approx >> c & 1u)) {
        role->band_lo[c] = role->band_hi[c] = role->comp[c];
        role->approx |= 1u << c;
    }
    return gpufit__add(role->band_hi[c], more, &role->band_hi[c]);
}

/* Sum over a slice of per-layer values (v[class x stride]) and per-side globals (vg[side x
 * stride]), the sides of gpufit__ubytes: a one-stage model holds its tied embedding once.
 * 1 on overflow. */
static int slice_sum(const role_ctx *x, const gpufit__slice *sl, const uint64_t *v,
                     const uint64_t *vg, size_t stride, uint64_t *out)
{
    uint64_t sum = 0, t;
    for (int c = x->s->w_first; c < x->s->w_end; c++)
        if (gpufit__mul(sl->layers[c], v[c * stride], &t) || gpufit__add(sum, t, &sum))
            return 1;
    if (sl->embedding && gpufit__add(sum, vg[0], &sum))
        return 1;
    if (sl->output && (gpufit__add(sum, vg[stride], &sum) ||
                       (!sl->embedding && gpufit__add(sum, vg[2 * stride], &sum))))
        return 1;
    if (x->s->v_layers > 0 && gpufit__vision_on(x->p, x->s, sl) &&
        gpufit__add(sum, vg[3 * stride], &sum))
        return 1;
    *out = sum;
    return 0;
}

/* The block rests' sum over a slice: the weights' (e < 0) or the count of trainable tensors
 * above 1 MiB at 2^e bytes per element, from the walk or the model cache (gpufit__blocks). */
static int blocks_sum(const role_ctx *x, const gpufit__slice *sl, int e, uint64_t *out)
{
    const gpufit__blocks *b = &x->wc->blk;
    if (b->agg != NULL) {
        const size_t stride = sizeof(gpufit__class_agg) / sizeof(uint64_t);
        const gpufit__class_agg *l = b->agg->layer, *g = b->agg->glob;
        if (e < 0 && b->bound) /* a shard's rest: at most 1 MiB + 511 B per tensor above 1 MiB */
            return slice_sum(x, sl, &l[0].blk_t[b->ew], &g[0].blk_t[b->ew], stride, out) ||
                   gpufit__mul(*out, GPUFIT__BLOCK_REST_MAX, out);
        return e < 0 ? slice_sum(x, sl, &l[0].blk_w[b->ew], &g[0].blk_w[b->ew], stride, out)
                     : slice_sum(x, sl, &l[0].blk_t[e], &g[0].blk_t[e], stride, out);
    }
    return e < 0 ? slice_sum(x, sl, b->w, b->w_glob, 1, out)
                 : slice_sum(x, sl, b->t[e], b->t_glob[e], 1, out);
}

/* The counts of trainable tensors above 1 MiB a role's block rests have summed, by the index e
 * of bytes per element (0, 1, 2): the families of one dtype (fp32 master copies and Adam's
 * states, say) share one sum. */
typedef struct big_counts {
    uint64_t n[3];
    unsigned have; /* bit e: n[e] is summed */
} big_counts;

/* blocks_sum(x, sl, e) for e >= 0, summed once per e in memo. 1 on overflow. */
static int big_tensors(const role_ctx *x, const gpufit__slice *sl, int e, big_counts *memo,
                       uint64_t *out)
{
    if (!(memo->have >> e & 1u)) {
        if (blocks_sum(x, sl, e, &memo->n[e]))
            return 1;
        memo->have |= 1u << e;
    }
    *out = memo->n[e];
    return 0;
}

/* PyTorch's caching allocator splits a block of the large pool only when more than 1 MiB would
 * remain (c10/cuda/CUDACachingAllocator.cpp should_split, kSmallSize), and memory_allocated
 * counts the whole block: each tensor above 1 MiB may hold up to 1 MiB (+ 511 B of rounding)
 * more than its bytes, by how the segments it was carved from were cut (docs/memory/
 * allocator.md, "Blocks above 1 MiB"). The high end of each per-tensor family carries it:
 * weights, .grad, fp32 master copies and optimizer states, where the framework allocates them
 * tensor by tensor: PyTorch without FSDP; Megatron's weights and fp32 main copies without the
 * distributed optimizer (its DDP keeps the grads in one buffer, and the distributed optimizer
 * the weights too), and its main copies and optimizer states always (megatron/core/optimizer/
 * distrib_optimizer.py _build_model_and_main_param_groups clones each parameter's shard;
 * optimizer.py: one exp_avg and exp_avg_sq per main parameter). DeepSpeed and FSDP flatten
 * them into a few buffers. 1 on overflow. */
static int block_slack(const role_ctx *x, const gpufit__slice *sl, gpufit__role *role)
{
    const gpufit__plan *p = x->p;
    if (!x->wc->blocks)
        return 0;
    const uint64_t per = GPUFIT__BLOCK_REST_MAX;
    uint64_t w, n, b;
    if (p->zero == 0 &&
        (blocks_sum(x, sl, -1, &w) || widen_high(role, GPUFIT_MEM_WEIGHTS, w)))
        return 1;
    if (!p->training)
        return 0;
    /* one tensor per trainable parameter in each family's dtype: index log2(bytes) */
    int states = p->optimizer == GPUFIT_OPT_ADAMW || p->optimizer == GPUFIT_OPT_ADAM ||
                         p->optimizer == GPUFIT_OPT_ADAMW_8BIT
                     ? 2
                 : p->optimizer == GPUFIT_OPT_SGD_MOMENTUM || p->optimizer == GPUFIT_OPT_LION
                     ? 1
                     : 0; /* Adafactor's factored rows and columns stay small */
    int e;
    big_counts big = {{0}, 0};
    if (p->framework == GPUFIT_FW_PYTORCH) {
        e = gpufit__dtype_log2_bytes(p->g_dt);
        if (big_tensors(x, sl, e, &big, &n) || gpufit__mul(n, per, &b) ||
            widen_high(role, GPUFIT_MEM_GRADIENTS, b))
            return 1;
    }
    e = gpufit__dtype_log2_bytes(p->m_dt);
    if (role->comp[GPUFIT_MEM_MASTER_WEIGHTS] > 0 &&
        (big_tensors(x, sl, e, &big, &n) || gpufit__mul(n, per, &b) ||
         widen_high(role, GPUFIT_MEM_MASTER_WEIGHTS, b)))
        return 1;
    e = p->optimizer == GPUFIT_OPT_ADAMW_8BIT ? 0 : gpufit__dtype_log2_bytes(p->o_dt);
    if (states > 0 && p->task != GPUFIT_TASK_QLORA && /* paged states: outside memory_allocated */
        role->comp[GPUFIT_MEM_OPTIMIZER_STATES] > 0 &&
        (big_tensors(x, sl, e, &big, &n) || gpufit__mul(n, per * (uint64_t)states, &b) ||
         widen_high(role, GPUFIT_MEM_OPTIMIZER_STATES, b)))
        return 1;
    return 0;
}

/* How far the approximated components (role->approx, allocated ones) move the allocated and
 * the dynamic bytes at each end of their bands: lo <= point <= hi, so the low end subtracts
 * (dn) and the high end adds (up). Summed once for both ends (eval_role); ovf: an up sum
 * exceeds 64 bits, and then so would the high end's allocated (or dynamic) bytes, which are at
 * least as large (a sum of unsigned terms wraps iff some partial sum does): band_end's
 * overflow, reported where it would be. */
typedef struct approx_shift {
    uint64_t alloc_dn, dyn_dn, alloc_up, dyn_up;
    int ovf;
} approx_shift;

/* Adds component c, dn below and up above its point, to sh. */
static void approx_add(approx_shift *sh, int c, uint64_t dn, uint64_t up)
{
    sh->alloc_dn += dn; /* <= the point's allocated bytes, which include the component */
    sh->ovf |= gpufit__add(sh->alloc_up, up, &sh->alloc_up);
    if (c == GPUFIT_MEM_ACTIVATIONS || c == GPUFIT_MEM_LOGITS) {
        sh->dyn_dn += dn;
        sh->ovf |= gpufit__add(sh->dyn_up, up, &sh->dyn_up);
    }
}

/* Memory of one role; every component but fragmentation (finish_role) is set here. */
static int32_t eval_role(const role_ctx *x, const gpufit__slice *sl, gpufit__role *role,
                         host_part *hc, approx_shift *sh)
{
    const gpufit__plan *p = x->p;
    const gpufit__shape *s = x->s;
    const gpufit__counts *c = x->c;
    struct gpufit_result *r = x->r;
    gpufit_error *err = x->err;
    uint64_t *m = role->comp;
    uint64_t w_dev = 0, w_host = 0, trainable = 0, opt = 0, ws = 0;
    expert_part ex;
    CK(slice_bytes(p, s, x->g, x->ng, x->wc, sl, &w_dev, &w_host, &trainable, &opt, &ex));
    hc->weights += w_host;
    hc->any |= w_host != 0;
    if (s->arch == GPUFIT_ARCH_GENERIC) /* parameter count only: weights from n_params */
        CK(gpufit__dtype_bytes(p->w_dt, c->total / (p->tp * p->pp), &w_dev));
    m[0] = 0; /* unused */
    m[GPUFIT_MEM_WEIGHTS] = w_dev;
    role->approx = 0;
    if (x->wc->gguf == NULL && s->arch != GPUFIT_ARCH_GENERIC && gpufit__gguf_recipe_band(p, s) &&
        !p->training && !(p->util > 0.0)) {
        /* a GGUF file type named without its file: the recipe's bumps vary (docs/band.md) */
        uint64_t lo, lo_host;
        CK(gpufit__weights_bytes_low(p, s, x->g, x->ng, sl, &lo, &lo_host));
        role->band_lo[GPUFIT_MEM_WEIGHTS] = lo < w_dev ? lo : w_dev;
        role->band_hi[GPUFIT_MEM_WEIGHTS] = w_dev;
        role->approx |= 1u << GPUFIT_MEM_WEIGHTS;
    }

    if (p->training) {
        if (s->arch == GPUFIT_ARCH_GENERIC && !p->lora) {
            trainable = c->total / (p->tp * p->pp);
            opt = trainable * (p->optimizer <= GPUFIT_OPT_ADAM ? 8 : 4);
        }
        /* ZeRO / distributed-optimizer shards: dense parameters over the data- (and context-)
         * parallel ranks, routed experts over the expert data-parallel group
         * tp x cp x dp / (etp x ep) (memory-model.md §3.1, §3.6; Megatron-Core
         * parallel_state.initialize_model_parallel: expert_data_parallel_size =
         * world / (etp x ep x pp)); dp x cp / ep when etp = tp. */
        uint64_t nd = p->shard * p->cp, ne = nd;
        if (p->ep > 1 || p->etp != p->tp) {
            uint64_t grid = p->etp * p->ep; /* <= 2^32; nd x tp <= 2^56 */
            ne = nd * p->tp >= grid ? nd * p->tp / grid : 1;
        }
        uint64_t t_d = trainable - ex.t, gb = 0, mb = 0, ge, me;
        CK(gpufit__dtype_bytes(p->g_dt, t_d, &gb));
        CK(gpufit__dtype_bytes(p->g_dt, ex.t, &ge));
        if (p->lora) { /* adapter weights live in the adapter dtype, which the plan makes the
                        * gradient dtype (policy.c: adapter_dtype) */
            CK(gpufit__add(m[GPUFIT_MEM_WEIGHTS], gb + ge, &m[GPUFIT_MEM_WEIGHTS]));
        }
        mb = me = 0;
        if (p->m_dt != GPUFIT_DTYPE_NONE) {
            CK(gpufit__dtype_bytes(p->m_dt, t_d, &mb));
            CK(gpufit__dtype_bytes(p->m_dt, ex.t, &me));
        }
        /* DeepSpeed's gradient copies besides the 16-bit .grad (docs/memory/deepspeed.md) */
        uint64_t ds_grads = 0, full_grads = gb + ge, x16 = 0, f32_d = 0, f32_e = 0;
        int ds = p->framework == GPUFIT_FW_DEEPSPEED;
        int g32 = p->g_dt == GPUFIT_DTYPE_FP32 || p->g_dt == GPUFIT_DTYPE_TF32;
        if (ds) /* fp32 bytes of the dense and expert parameters */
            CK(gpufit__mul(t_d, 4, &f32_d) || gpufit__mul(ex.t, 4, &f32_e));
        switch (p->ds_opt) {
        case GPUFIT__DS_ZERO:
            /* "18 = 2 grads16 + 4 grads32 + 4 params32 + 8 states" (§3.2): the step's fp32 copy
             * of the partition; ZeRO-1/2 first flatten it in the gradient dtype
             * (stage_1_and_2.py step: flatten(averaged_gradients) then .to(fp32)) */
            if (p->m_dt == GPUFIT_DTYPE_FP32 && !g32)
                ds_grads = shard_of(f32_d, nd) + shard_of(f32_e, ne);
            if (p->zero <= 2 && p->offload == GPUFIT_OFFLOAD_NONE)
                ds_grads += shard_of(gb, nd) + shard_of(ge, ne);
            break;
        case GPUFIT__DS_FP16:
            /* fused_optimizer.py FP16_Optimizer.step: the fp32 copy of every .grad, listed
             * and then flattened (_flatten_dense_tensors([p.grad.to(fp32) ...])): 8 B/param */
            CK(gpufit__mul(trainable, 8, &ds_grads));
            break;
        case GPUFIT__DS_BF16:
            /* bf16_optimizer.py: the 16-bit .grad of every parameter (zeroed, not freed, by
             * clear_lp_grads) besides the unsharded accumulation buffer (gb, grad_acc_dtype);
             * step: fp32 copy of the partition when that buffer is 16-bit */
            CK(gpufit__dtype_bytes(p->w_dt, trainable, &ds_grads));
            if (!g32)
                ds_grads += shard_of(f32_d, nd) + shard_of(f32_e, ne);
            break;
        default:
            break;
        }
        /* ZeRO / BF16_Optimizer: stage 1 shards optimizer + master, 2 also grads, 3 also
         * weights (§3.1) */
        if (p->zero >= 1 || p->ds_opt == GPUFIT__DS_BF16) {
            opt = shard_of(opt - ex.o, nd) + shard_of(ex.o, ne);
            mb = shard_of(mb, nd) + shard_of(me, ne);
        } else {
            mb += me;
        }
        gb = p->zero >= 2 ? shard_of(gb, nd) + shard_of(ge, ne) : gb + ge;
        /* FSDP under accelerate's no_sync keeps full unsharded gradients (policy.c) */
        if (p->nosync)
            CK(gpufit__add(gb, full_grads, &gb));
        if (p->zero >= 3 && nd > 1) {
            uint64_t gathered = 0; /* two layers gathered at once: current + prefetch (§3.4) */
            CK(gpufit__dtype_bytes(p->c_dt == GPUFIT_DTYPE_FP32 ? GPUFIT_DTYPE_FP32
                                                                : GPUFIT_DTYPE_BF16,
                                   2 * c->largest_layer / p->tp, &gathered));
            m[GPUFIT_MEM_WEIGHTS] =
                shard_of(m[GPUFIT_MEM_WEIGHTS] - ex.w, nd) + shard_of(ex.w, ne) + gathered;
        }
        if (p->offload >= GPUFIT_OFFLOAD_OPTIMIZER) { /* ZeRO-Offload: states in host RAM */
            hc->optimizer += opt;
            hc->master += mb;
            hc->any = 1;
            opt = mb = 0;
            add_note(r, GPUFIT__NOTE_HOST_OFFLOAD);
        }
        if (p->offload >= GPUFIT_OFFLOAD_OPTIMIZER_PARAMS) {
            hc->weights += m[GPUFIT_MEM_WEIGHTS];
            hc->any = 1;
            m[GPUFIT_MEM_WEIGHTS] = 2 * c->largest_layer * 2 / p->tp;
        }
        CK(gpufit__add(gb, ds_grads, &gb));
        /* PyTorch DDP all-reduces through buckets that copy every gradient unless
         * gradient_as_bucket_view=True (memory-model.md §2.4, pytorch PR #41954). */
        if (p->framework == GPUFIT_FW_PYTORCH && p->dp > 1 && p->zero == 0)
            CK(gpufit__add(gb, gb, &gb));
        m[GPUFIT_MEM_GRADIENTS] = gb;
        if (p->ds_opt == GPUFIT__DS_ZERO) {
            /* ZeRO reduce buckets of reduce_bucket_size elements in the trainable parameters'
             * dtype (LoRA: the adapters'): stage_1_and_2.py setup_buckets (a second with
             * overlap_comm) and reduce_gradients(pipeline_parallel) (one); stage3.py __init__
             * (one) */
            CK(gpufit__dtype_bytes(p->lora ? p->g_dt : p->w_dt, p->bucket, &x16));
            ws = p->zero <= 2 && p->overlap ? 2 * x16 : x16;
        } else if (ds && p->ds_opt != GPUFIT__DS_BF16) {
            /* no ZeRO: engine.py allreduce_no_retain flattens the .grad of up to
             * MEMORY_OPT_ALLREDUCE_SIZE (5e8) elements per all-reduce (BF16_Optimizer's flat
             * buffers are all-reduced in place) */
            CK(gpufit__dtype_bytes(p->g_dt, trainable < 500000000u ? trainable : 500000000u,
                                   &ws));
        }
        m[GPUFIT_MEM_OPTIMIZER_STATES] = opt;
        m[GPUFIT_MEM_MASTER_WEIGHTS] = mb;
        m[GPUFIT_MEM_KV_CACHE] = 0;
        /* autocast caches a 16-bit cast of every fp32 weight from forward to backward (§2.2);
         * fp8 recipes keep fp8 copies. Under ZeRO-3 / FSDP the compute-dtype parameters are
         * the gathered units, already counted; adapters' base weights are not cast copies. */
        uint64_t cast = 0; /* gone by the optimizer step */
        if ((p->amp || p->c_dt == GPUFIT_DTYPE_FP8) && !p->lora && p->zero < 3) {
            uint64_t e = p->c_dt == GPUFIT_DTYPE_FP8 ? 1 : 2;
            CK(gpufit__mul(trainable, e, &cast));
            CK(gpufit__add(m[GPUFIT_MEM_WEIGHTS], cast, &m[GPUFIT_MEM_WEIGHTS]));
        }
        CK(gpufit__train_activations(p, s, x->at, sl, &m[GPUFIT_MEM_ACTIVATIONS],
                                     &m[GPUFIT_MEM_LOGITS]));
        if (p->held_logits != GPUFIT__HELD_NONE && m[GPUFIT_MEM_LOGITS] > 0) {
            /* a loop that holds the model's outputs keeps the logits through the loss's
             * backward, on top of its fp32 terms: in the model's output dtype (a_b) at the
             * point of trainer=loop, up to fp32 at the band's high end (policy.c) */
            uint64_t v = gpufit__div_up(s->V, p->tp), held, held_hi, base = m[GPUFIT_MEM_LOGITS];
            CK(gpufit__mul(4 * x->at->tok, v, &held_hi));
            CK(gpufit__mul(p->a_b * x->at->tok, v, &held));
            if (p->held_logits == GPUFIT__HELD_YES)
                CK(gpufit__add(base, held, &m[GPUFIT_MEM_LOGITS]));
            role->band_lo[GPUFIT_MEM_LOGITS] = m[GPUFIT_MEM_LOGITS];
            CK(gpufit__add(base, held_hi, &role->band_hi[GPUFIT_MEM_LOGITS]));
            if (role->band_hi[GPUFIT_MEM_LOGITS] != m[GPUFIT_MEM_LOGITS])
                role->approx |= 1u << GPUFIT_MEM_LOGITS;
        }
        if (ds && p->pp > 1 && !sl->output) {
            /* DeepSpeed's PipelineEngine keeps each in-flight micro-batch's stage output in
             * pipe_buffers['outputs'] until its backward (pipe/engine.py _exec_forward_pass),
             * the 1/tp partition when tp > 1 (pipe_partitioned, default on) */
            uint64_t out, per = p->b * gpufit__div(p->s, p->cp);
            CK(gpufit__mul(per, s->h, &out));
            out = gpufit__div_up(out, p->tp);
            CK(gpufit__mul(out, p->a_b * gpufit__div_up(sl->inflight, sl->inflight_den), &out) ||
               gpufit__add(m[GPUFIT_MEM_ACTIVATIONS], out, &m[GPUFIT_MEM_ACTIVATIONS]));
        }
        if (p->lora && s->arch != GPUFIT_ARCH_GENERIC &&
            (p->w_dt == GPUFIT_DTYPE_NF4 || p->w_dt == GPUFIT_DTYPE_NF4_DQ ||
             p->w_dt == GPUFIT_DTYPE_FP4)) {
            /* bitsandbytes MatMul4Bit (autograd/_functions.py): for training-sized inputs the
             * forward dequantises the 4-bit weight into a full 16-bit temporary and calls
             * F.linear (backends/cuda/ops.py _dequant_linear_fallback); backward dequantises
             * again for grad_A; only the packed weight is saved. One such weight, the largest
             * linear, is live at the backward peak; double quantisation first restores the
             * fp32 absmax per 64 weights (functional.py dequantize_4bit). */
            uint64_t n = gpufit__div_up(c->largest_matrix, p->tp), dq;
            CK(gpufit__mul(n, p->a_b, &dq));
            if (p->w_dt == GPUFIT_DTYPE_NF4_DQ)
                dq += (n + 63) / 64 * 4;
            CK(gpufit__add(m[GPUFIT_MEM_ACTIVATIONS], dq, &m[GPUFIT_MEM_ACTIVATIONS]));
        }
        if (p->framework == GPUFIT_FW_PYTORCH && p->zero == 0 && p->tp == 1 && p->pp == 1 &&
            p->accum == 1 && gb > 0) {
            /* PyTorch >= 2.0 frees .grad between steps (torch/optim/optimizer.py
             * Optimizer.zero_grad and torch/nn/modules/module.py Module.zero_grad default to
             * set_to_none=True since 2.0; transformers trainer.py _inner_training_loop calls
             * model.zero_grad() after each step): without accumulation the gradients appear during backward
             * while the activations are freed, so the peak holds the larger of the
             * activations at backward's start and the gradients at its end (with one
             * layer's activations), not both. PyTorch < 2.0 (zeroed, kept) holds both: the
             * point; the release decides, so the gradients' band reaches down to that. DDP's
             * buckets (the other half of gb) stay. (docs/memory/optimizer-step.md) */
            uint64_t g_t = p->dp > 1 ? gb / 2 : gb, a = 0, per = 0, nl = 0, both, one;
            CK(gpufit__add(m[GPUFIT_MEM_ACTIVATIONS], cast, &a));
            for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++) /* [GLOBAL]: unused */
                nl += sl->layers[w];
            per = nl > 0 ? a / nl : a;
            CK(gpufit__add(a, m[GPUFIT_MEM_LOGITS], &both) || gpufit__add(both, g_t, &both));
            uint64_t x1 = a + m[GPUFIT_MEM_LOGITS], x2 = g_t + per; /* no wrap: <= both */
            one = x1 > x2 ? x1 : x2;
            role->band_lo[GPUFIT_MEM_GRADIENTS] = gb - (both - one); /* both - one <= g_t */
            role->band_hi[GPUFIT_MEM_GRADIENTS] = gb;
            if (both > one)
                role->approx |= 1u << GPUFIT_MEM_GRADIENTS;
        }
        if (p->opt_impl >= 0 && opt > 0) {
            /* torch.optim's step (docs/memory/optimizer-step.md): its temporaries exist when
             * the activations, logits and autocast's copies are freed, so the step phase
             * raises the peak by what they exceed those by; counted with the optimizer states,
             * banded when the implementation is the trainer's choice */
            uint64_t st[3], held = m[GPUFIT_MEM_ACTIVATIONS], over[3];
            CK(gpufit__add(held, m[GPUFIT_MEM_LOGITS], &held) || gpufit__add(held, cast, &held));
            CK(gpufit__optimizer_step_bytes(p, s, c, sl, opt / 2, st));
            for (int e = 0; e < 3; e++)
                CK(gpufit__add(opt, st[e] > held ? st[e] - held : 0, &over[e]));
            m[GPUFIT_MEM_OPTIMIZER_STATES] = over[0];
            if (over[0] != opt || over[2] != opt)
                add_note(r, GPUFIT__NOTE_OPTIMIZER_STEP);
            if (over[1] != over[0] || over[2] != over[0]) {
                role->band_lo[GPUFIT_MEM_OPTIMIZER_STATES] = over[1];
                role->band_hi[GPUFIT_MEM_OPTIMIZER_STATES] = over[2];
                role->approx |= 1u << GPUFIT_MEM_OPTIMIZER_STATES;
            }
        }
        if (p->task == GPUFIT_TASK_QLORA) {
            /* QLoRA pages optimizer states (bitsandbytes paged optimizers, Dettmers et al. 2023
             * §3): unified memory evicts them to the host while activations are live, so only
             * the part that exceeds the activations freed before optimizer.step() stays. */
            uint64_t live = m[GPUFIT_MEM_ACTIVATIONS] + m[GPUFIT_MEM_LOGITS];
            uint64_t paged = m[GPUFIT_MEM_OPTIMIZER_STATES] < live ? m[GPUFIT_MEM_OPTIMIZER_STATES]
                                                                   : live;
            m[GPUFIT_MEM_OPTIMIZER_STATES] -= paged;
            hc->optimizer += paged;
            hc->any |= paged != 0;
        }
    } else {
        uint64_t per_tok = 0, tokens;
        m[GPUFIT_MEM_GRADIENTS] = m[GPUFIT_MEM_OPTIMIZER_STATES] = m[GPUFIT_MEM_MASTER_WEIGHTS] = 0;
        CK(gpufit__kv_bytes_per_token(p, s, sl, &per_tok));
        if (p->framework == GPUFIT_FW_LLAMACPP) { /* unified cache, padded (§6.4) */
            tokens = gpufit__llamacpp_kv_cells(p);
        } else if (p->framework == GPUFIT_FW_VLLM) {
            tokens = p->batch * ((p->ctx + 15) / 16 * 16); /* 16-token pages (§6.2) */
        } else {
            tokens = p->batch * p->ctx;
        }
        CK(gpufit__kv_cache_bytes(p, s, sl, per_tok, tokens, &m[GPUFIT_MEM_KV_CACHE]));
        uint64_t rope;
        CK(gpufit__rope_table_bytes(p, s, &rope));
        CK(gpufit__add(m[GPUFIT_MEM_WEIGHTS], rope, &m[GPUFIT_MEM_WEIGHTS]));
        uint64_t act_lo, act_hi;
        CK(gpufit__infer_activations(p, s, sl, &m[GPUFIT_MEM_ACTIVATIONS], &act_lo, &act_hi,
                                     &m[GPUFIT_MEM_LOGITS]));
        role->prof_hi = act_hi > m[GPUFIT_MEM_ACTIVATIONS] ? act_hi - m[GPUFIT_MEM_ACTIVATIONS]
                                                             : 0;
        if (act_lo < m[GPUFIT_MEM_ACTIVATIONS]) { /* llama.cpp builds before ggml_set_rows */
            role->band_lo[GPUFIT_MEM_ACTIVATIONS] = act_lo;
            role->band_hi[GPUFIT_MEM_ACTIVATIONS] = m[GPUFIT_MEM_ACTIVATIONS];
            role->approx |= 1u << GPUFIT_MEM_ACTIVATIONS;
        }
        /* stash; turned into capacity below. With sliding-window layers a token costs this
         * job's average: the capacity is counted at the job's mix of full and local layers */
        if ((s->swa_window > 0 || s->n_cross > 0) && tokens > 0)
            per_tok = m[GPUFIT_MEM_KV_CACHE] / tokens + (m[GPUFIT_MEM_KV_CACHE] % tokens != 0);
        role->kv_cap_tokens = per_tok;
        if (p->graph_sizes > 0) { /* vLLM's CUDA graphs, with the workspaces */
            uint64_t *g = role->graph, *u = role->graph_unch;
            CK(gpufit__vllm_graph_bytes(p, s, role->layers, g));
            ws += g[0];
            /* the pool comes on top of the budget unless vLLM charges its estimate to it
             * (policy.c vllm_graphs): Model Runner V2, which charges none, runs dense models
             * from 0.25 and some families (unknown here: the optimistic end) from 0.22; an
             * assumed release may be one before 0.21 (unpaid: the optimistic end) or 0.21-0.24
             * (paid: the pessimistic end) */
            int moe = s->E > 0, ch = (int)p->graph_charge, assumed = p->fw_version_assumed;
            int on_top = ch == GPUFIT__GRAPH_AFTER || (ch == GPUFIT__GRAPH_V2_DENSE && !moe);
            for (int e = 0; e < 3; e++)
                u[e] = on_top || (e == 1 && ((ch == GPUFIT__GRAPH_V2_SOME && !moe) || assumed))
                           ? g[e]
                           : 0;
            if (assumed && on_top)
                u[2] = 0;
        }
    }
    CK(gpufit__add(ws, p->ws_bytes, &m[GPUFIT_MEM_WORKSPACE]));
    m[GPUFIT_MEM_RUNTIME_CONTEXT] = p->ctx_bytes;
    m[GPUFIT_MEM_COMM_BUFFERS] = p->comm_bytes;
    role->extra_comms = 0;
    if (p->training && p->framework == GPUFIT_FW_DEEPSPEED && p->pp > 1) {
        /* PipelineEngine send/recv: one NCCL communicator per neighbouring stage (pipe/p2p.py);
         * the first and last stages also all-reduce the tied embedding (PipelineModule
         * tied_comms, _exec_reduce_tied_grads) */
        uint64_t n = sl->embedding || sl->output ? 1 + (s->tied != 0) : 2;
        m[GPUFIT_MEM_COMM_BUFFERS] += n * gpufit__stack[GPUFIT__STACK_NCCL_COMM].point;
        role->extra_comms = (uint32_t)n;
    }
    CK(block_slack(x, sl, role));
    if (x->wc->dummies) {
        /* Transformer Engine's cached wgrad dummies: kept from the first backward by the
         * Megatron and TE releases that use get_dummy_wgrad, not by those that hand autograd
         * a fresh tensor per backward: the gradients' high end (docs/memory/megatron.md) */
        const gpufit__dummies *d = &x->wc->dum;
        uint64_t att = 0, sum = sl->output ? d->head : 0;
        for (int w = s->w_first; w < s->w_end; w++)
            if (sl->layers[w] > 0) {
                att = d->att[w] > att ? d->att[w] : att;
                CK(gpufit__add(sum, d->rest[w], &sum));
            }
        CK(gpufit__add(sum, att, &sum) || widen_high(role, GPUFIT_MEM_GRADIENTS, sum));
    }
    /* an approximated component's band must still hold its final point (lo <= point <= hi);
     * its shift of the band's ends; the set bits only, lowest first (most roles mark one or
     * two) */
    *sh = (approx_shift){0, 0, 0, 0, 0};
    for (uint32_t ap = role->approx & ((1u << GPUFIT__NCOMP) - 2u); ap != 0; ap &= ap - 1) {
        int k = __builtin_ctz(ap);
        if (role->band_lo[k] > m[k] || role->band_hi[k] < m[k])
            return gpufit__fail(err, GPUFIT_E_INTERNAL, -1, UINT64_MAX,
                                "internal: the band of component %d lost its point", k);
        approx_add(sh, k, m[k] - role->band_lo[k], role->band_hi[k] - m[k]);
    }
    return GPUFIT_OK;
}

/* The bytes of a device of `cap` bytes that a job may use: less the operator's safety margin
 * (docs/band.md); 0 stays 0 (unknown). */
static uint64_t usable(const gpufit__plan *p, uint64_t cap)
{
    uint64_t m = p->margin_bytes;
    if (p->margin > 0.0 && mul_frac(cap, p->margin, &m))
        m = cap;
    return cap > m ? cap - m : 0;
}

/* vLLM and SGLang budget from torch.cuda.mem_get_info()'s total, which leaves out what the
 * driver keeps back. end: 0 the point, 1 the low end of the reserve (the most budget), 2 the
 * high end. When nvidia-smi reports the whole marketed size (a whole number of GiB: A100 80GB
 * 81920 MiB -> ~79.2 GiB, RTX 3090 24576 MiB -> 23.58 GiB) the reserve is max(floor, a share
 * of the total); otherwise nvidia-smi already leaves part out and a smaller, fixed reserve
 * stays (H100 81559 MiB -> 79.22 GiB). Constants and sources: gpufit__stack
 * (GPUFIT__STACK_DRIVER_RESERVE*), docs/memory/vllm.md. */
static uint64_t server_visible(uint64_t cap, int end)
{
    /* share of a whole-GiB total: 1 % point (A100 80GB: 0.85 GiB of 80), 0.8-1.1 % range */
    static const uint64_t permille10[3] = {100, 80, 110}; /* hundredths of a percent */
    const gpufit__stack_const *c;
    uint64_t reserve;
    if (cap % ((uint64_t)1 << 30) != 0) {
        c = &gpufit__stack[GPUFIT__STACK_DRIVER_RESERVE];
        reserve = end == 0 ? c->point : end == 1 ? c->low : c->high;
    } else {
        c = &gpufit__stack[GPUFIT__STACK_DRIVER_RESERVE_FULL];
        uint64_t floor = end == 0 ? c->point : end == 1 ? c->low : c->high;
        uint64_t share = end == 0 ? cap / 100 : cap / 10000 * permille10[end];
        reserve = share > floor ? share : floor;
    }
    return cap > reserve ? cap - reserve : 0;
}

/* What a server's budget starts from on one device: its CUDA-visible total (server_visible)
 * and, for vLLM, util x that total (the same for every setting of the other stack terms). */
typedef struct server_total {
    uint64_t visible, budget;
    double frac; /* SGLang: mem_fraction_static at this setting (an assumed release's band) */
} server_total;

/* The KV budget a server leaves on a device: util x its total minus the profiled peak (§6.2),
 * given the stack terms (context, NCCL), the other allocated bytes (of which `unch`, vLLM's
 * CUDA graphs captured after the budget, are not charged to it) and the weights. 1 on
 * overflow. */
static int server_kv(const gpufit__plan *p, const server_total *tot, uint64_t ctx, uint64_t comm,
                     uint64_t other, uint64_t unch, uint64_t weights, uint64_t *kv)
{
    uint64_t budget, profiled;
    if (p->kv_rule == GPUFIT__KV_SGLANG) {
        /* SGLang (model_runner.py profile_max_num_token): KV = free memory after loading the
         * weights - (1 - mem_fraction_static) x free memory before loading, the latter measured
         * after the CUDA context and NCCL are up: f x free_before - weights. No profile run;
         * activations and CUDA graphs live in the (1 - f) rest. */
        uint64_t up, visible = tot->visible;
        if (gpufit__add(ctx, comm, &up) ||
            mul_frac(visible > up ? visible - up : 0, tot->frac, &budget))
            return 1;
        profiled = weights;
    } else {
        /* NCCL buffers count among the profiler's non-torch memory, inside the budget; vLLM
         * <= 0.6.3 counts every non-torch byte on the device, the CUDA context too
         * (vllm/worker/worker.py determine_num_available_blocks) */
        budget = tot->budget;
        if (gpufit__add(other - unch, comm, &profiled) ||
            (p->kv_rule == GPUFIT__KV_VLLM_ALL && gpufit__add(profiled, ctx, &profiled)))
            return 1;
    }
    *kv = budget > profiled ? budget - profiled : 0;
    return 0;
}

/* What the levels of one role come to under one setting of the stack constants. */
typedef struct levels_in {
    uint64_t ctx, comm, ws; /* runtime context, comm buffers, workspace component */
    double frag;            /* allocator slack fraction */
    server_total tot;       /* a server's total and vLLM budget, else 0 */
    uint64_t unch;          /* of ws: vLLM's CUDA graphs its budget does not pay for */
    uint64_t prof;          /* a server's profiled bytes above the point's (role->prof_hi) */
} levels_in;
typedef struct levels_out {
    uint64_t alloc, reserved, used, kv_cap, kv_tokens;
    uint64_t dynamic;       /* the bytes the allocator slack is a fraction of */
    int32_t fits;           /* 1, 0, or -1 without a capacity */
    int32_t kv_short;       /* the server's KV budget is too small */
} levels_out;

/* Levels and server budget of a role whose components are m (point terms; the stack terms of
 * `in` replace theirs in m): the KV component of a server and the slack are written into m.
 * room: usable(p, role->capacity), the bytes the verdict checks against. */
static int32_t levels(const gpufit__plan *p, const gpufit__role *role, uint64_t per_tok,
                      uint64_t room, const levels_in *in, uint64_t *m, levels_out *o,
                      gpufit_error *err)
{
    uint64_t cap = role->capacity; /* the role's own GPU (device_gpus), else the job's */
    m[GPUFIT_MEM_RUNTIME_CONTEXT] = in->ctx;
    m[GPUFIT_MEM_COMM_BUFFERS] = in->comm;
    m[GPUFIT_MEM_WORKSPACE] = in->ws;
    *o = (levels_out){0, 0, 0, 0, 0, 0, role->fits, 0};
    /* allocated = the KV cache + the other tensors and workspaces (held apart for the server
     * budget below); a sum of unsigned terms wraps iff some partial sum does, in any order */
    uint64_t alloc, other;
    CK(gpufit__add(m[GPUFIT_MEM_WEIGHTS], m[GPUFIT_MEM_GRADIENTS], &other) ||
       gpufit__add(other, m[GPUFIT_MEM_OPTIMIZER_STATES], &other) ||
       gpufit__add(other, m[GPUFIT_MEM_MASTER_WEIGHTS], &other) ||
       gpufit__add(other, m[GPUFIT_MEM_ACTIVATIONS], &other) ||
       gpufit__add(other, m[GPUFIT_MEM_LOGITS], &other) ||
       gpufit__add(other, m[GPUFIT_MEM_WORKSPACE], &other));
    if (!p->training && p->util > 0.0 && cap > 0) {
        /* vLLM/SGLang: the KV pool takes util x total minus the profiled peak (§6.2) */
        CK(server_kv(p, &in->tot, in->ctx, m[GPUFIT_MEM_COMM_BUFFERS], other, in->unch,
                     m[GPUFIT_MEM_WEIGHTS], &o->kv_cap));
        uint64_t need = m[GPUFIT_MEM_KV_CACHE];
        o->kv_tokens = per_tok > 0 ? o->kv_cap / per_tok : 0;
        m[GPUFIT_MEM_KV_CACHE] = o->kv_cap;
        if (o->kv_cap < need || o->kv_cap == 0) {
            o->kv_short = 1;
            o->fits = 0;
        }
    }
    CK(gpufit__add(other, m[GPUFIT_MEM_KV_CACHE], &alloc));
    /* Caching-allocator slack comes from tensors freed and re-allocated in other sizes
     * (memory-model.md §8.3): activations, logits and a growing KV cache; weights and
     * optimizer states are allocated once and keep exact-size segments. */
    uint64_t dynamic = m[GPUFIT_MEM_ACTIVATIONS] + m[GPUFIT_MEM_LOGITS];
    if (!p->training && p->framework == GPUFIT_FW_PYTORCH)
        dynamic += m[GPUFIT_MEM_KV_CACHE];
    o->dynamic = dynamic;
    if (in->frag == 0.0) /* servers and llama.cpp: mul_frac would give 0 */
        m[GPUFIT_MEM_FRAGMENTATION] = 0;
    else
        CK(mul_frac(dynamic, in->frag, &m[GPUFIT_MEM_FRAGMENTATION]));
    o->alloc = alloc;
    CK(gpufit__add(alloc, m[GPUFIT_MEM_FRAGMENTATION], &o->reserved));
    CK(gpufit__add(o->reserved, m[GPUFIT_MEM_RUNTIME_CONTEXT], &o->used));
    CK(gpufit__add(o->used, m[GPUFIT_MEM_COMM_BUFFERS], &o->used));
    if (cap > 0) {
        if (o->fits != 0)
            o->fits = o->used <= room;
        if (!p->training && !(p->util > 0.0) && per_tok > 0) {
            uint64_t rest = o->used - m[GPUFIT_MEM_KV_CACHE];
            o->kv_cap = cap > rest ? cap - rest : 0;
            o->kv_tokens = o->kv_cap / per_tok;
        }
    } else {
        o->fits = -1;
    }
    return GPUFIT_OK;
}

/* The band of a role whose KV cache is not a server's budget: every stack term enters the
 * levels additively (workspace, context, NCCL) or as a fraction of the dynamic bytes (slack),
 * so each end follows from the point levels in closed form. e: 0 low, 1 high; sh: the
 * approximated components' shift (eval_role); room: usable(p, role->capacity); lean:
 * only the used total's band and the verdict are read (gpufit_result.lean). */
static int32_t band_end(const gpufit__plan *p, gpufit__role *role, const levels_in *in,
                        const levels_out *pt, const approx_shift *sh, int32_t fits0,
                        uint64_t per_tok, uint64_t room, int e, int lean, gpufit_error *err)
{
    const uint64_t *m = role->comp;
    uint64_t *v = e == 0 ? role->band_lo : role->band_hi;
    uint64_t frag, alloc, reserved, used, dynamic = pt->dynamic;
    CK(gpufit__add(pt->alloc - m[GPUFIT_MEM_WORKSPACE], in->ws, &alloc));
    if (e == 0) { /* no wrap: the point's totals include every shifted component */
        alloc -= sh->alloc_dn;
        dynamic -= sh->dyn_dn;
    } else {
        CK(gpufit__add(alloc, sh->alloc_up, &alloc) ||
           gpufit__add(dynamic, sh->dyn_up, &dynamic));
    }
    if (in->frag == 0.0)
        frag = 0;
    else
        CK(mul_frac(dynamic, in->frag, &frag));
    CK(gpufit__add(alloc, frag, &reserved) || gpufit__add(reserved, in->ctx, &used) ||
       gpufit__add(used, in->comm, &used));
    uint64_t cap = role->capacity, kv = pt->kv_cap;
    role->used_b[e] = used;
    role->fits_b[e] = cap == 0 ? -1 : (int32_t)(used <= room) & fits0; /* fits0: 0 or 1 */
    if (lean)
        return GPUFIT_OK; /* the other totals' and the components' bands are the report's */
    v[GPUFIT_MEM_WORKSPACE] = in->ws;
    v[GPUFIT_MEM_RUNTIME_CONTEXT] = in->ctx;
    v[GPUFIT_MEM_COMM_BUFFERS] = in->comm;
    v[GPUFIT_MEM_FRAGMENTATION] = frag;
    v[GPUFIT_MEM_KV_CACHE] = m[GPUFIT_MEM_KV_CACHE];
    role->alloc_b[e] = alloc;
    role->reserved_b[e] = reserved;
    if (cap > 0 && !p->training && !(p->util > 0.0) && per_tok > 0) {
        uint64_t rest = used - m[GPUFIT_MEM_KV_CACHE];
        kv = cap > rest ? cap - rest : 0;
    }
    role->kv_cap_b[1 - e] = kv; /* more of the rest, less room for the cache */
    return GPUFIT_OK;
}

/* A server role's used total and KV budget with the stack terms given one by one (its
 * workspace's unch not charged to the budget, prof more profiled) and the budget's start at
 * tot, from its point components m (after levels); base: the allocated bytes less the KV cache
 * and workspace. The same rules as levels(); 1 on overflow. */
static inline int server_used(const gpufit__plan *p, const server_total *tot, uint64_t base,
                              uint64_t ctx, uint64_t comm, uint64_t ws, uint64_t unch,
                              uint64_t prof, const uint64_t *m, uint64_t *used, uint64_t *kv)
{
    uint64_t other = base + ws;
    if (gpufit__add(other, prof, &other) ||
        server_kv(p, tot, ctx, comm, other, unch, m[GPUFIT_MEM_WEIGHTS], kv))
        return 1;
    *used = other + *kv + m[GPUFIT_MEM_FRAGMENTATION] + ctx + comm;
    return 0;
}

/* server_used with the stack terms of v, as all four totals: t = {allocated, reserved, used,
 * KV budget} (the slack is fixed: servers keep none). 1 on overflow. */
static int server_totals(const gpufit__plan *p, const gpufit__role *role, const levels_in *v,
                         uint64_t *t)
{
    const uint64_t *m = role->comp;
    uint64_t base = role->alloc - m[GPUFIT_MEM_KV_CACHE] - m[GPUFIT_MEM_WORKSPACE];
    if (server_used(p, &v->tot, base, v->ctx, v->comm, v->ws, v->unch, v->prof, m, &t[2],
                    &t[3]))
        return 1;
    t[1] = t[2] - v->ctx - v->comm;
    t[0] = t[1] - m[GPUFIT_MEM_FRAGMENTATION];
    return 0;
}

/* Widens [*lo, *hi] by the signed change from pt to t (budgets < 2^63). */
static inline void widen_by(uint64_t pt, uint64_t t, int64_t *lo, int64_t *hi)
{
    int64_t d = t >= pt ? (int64_t)(t - pt) : -(int64_t)(pt - t);
    *lo = d < *lo ? d : *lo;
    *hi = d > *hi ? d : *hi;
}

/* Widens [dlo, dhi] of the four totals by their change from the point pt to t. */
static void note_change(const uint64_t *pt, const uint64_t *t, int64_t *dlo, int64_t *dhi)
{
    for (int k = 0; k < 4; k++)
        widen_by(pt[k], t[k], &dlo[k], &dhi[k]);
}

/* The band of a server role (role->comp and levels at the point already set): its KV budget is
 * what the rest leaves, so terms move in opposite directions (SGLang: a larger context shrinks
 * the budget, a larger workspace grows the allocation). The band of each total is the point
 * plus, per stack term, the smaller and the larger change of varying that term alone; the
 * verdict's ends set every term low (optimistic: the most budget, the least used) or high.
 * room: usable(p, role->capacity). The report's; a summary computes the used total's band
 * alone (server_band_lean). */
static int32_t server_band(const gpufit__plan *p, gpufit__role *role, const levels_in *in,
                           uint64_t need, int32_t fits0, uint64_t room, gpufit_error *err)
{
    /* the totals whose bands are kept: allocated, reserved, used, KV budget */
    const uint64_t *m = role->comp;
    const levels_in *o = &in[0];
    /* the point's totals, as levels() left them (server_totals at in[0] gives the same) */
    uint64_t pt[4] = {role->alloc, role->reserved, role->used, role->kv_cap_bytes}, t[4];
    int64_t dlo[4] = {0}, dhi[4] = {0};
    for (int e = 1; e <= 2; e++) {
        /* the driver's reserve moves only the KV budget, and every total with it by as much */
        uint64_t other = role->alloc - m[GPUFIT_MEM_KV_CACHE], kv;
        CK(server_kv(p, &in[e].tot, o->ctx, o->comm, other, o->unch, m[GPUFIT_MEM_WEIGHTS],
                     &kv));
        for (int k = 0; k < 4; k++)
            widen_by(pt[3], kv, &dlo[k], &dhi[k]);
        /* context, NCCL, workspace, the profile: each alone at this end (an end equal to the
         * point moves nothing) */
        levels_in v = *o;
        if (in[e].ctx != o->ctx) {
            v.ctx = in[e].ctx;
            CK(server_totals(p, role, &v, t));
            note_change(pt, t, dlo, dhi);
            v.ctx = o->ctx;
        }
        if (in[e].comm != o->comm) {
            v.comm = in[e].comm;
            CK(server_totals(p, role, &v, t));
            note_change(pt, t, dlo, dhi);
            v.comm = o->comm;
        }
        if (in[e].ws != o->ws) {
            v.ws = in[e].ws;
            v.unch = in[e].unch;
            CK(server_totals(p, role, &v, t));
            note_change(pt, t, dlo, dhi);
            v.ws = o->ws;
            v.unch = o->unch;
        }
        if (in[e].prof != o->prof) {
            v.prof = in[e].prof;
            CK(server_totals(p, role, &v, t));
            note_change(pt, t, dlo, dhi);
        }
    }
    uint64_t *b[4] = {role->alloc_b, role->reserved_b, role->used_b, role->kv_cap_b};
    for (int k = 0; k < 4; k++) {
        b[k][0] = pt[k] - (uint64_t)(-dlo[k]); /* dlo <= 0 <= dhi */
        b[k][1] = pt[k] + (uint64_t)dhi[k];
    }
    for (int e = 0; e < 2; e++) {
        const levels_in *v = &in[1 + e];
        CK(server_totals(p, role, v, t));
        role->fits_b[e] = fits0 != 0 && t[3] >= need && t[3] > 0 && t[2] <= room;
        uint64_t *band = e == 0 ? role->band_lo : role->band_hi;
        band[GPUFIT_MEM_WORKSPACE] = v->ws;
        band[GPUFIT_MEM_RUNTIME_CONTEXT] = v->ctx;
        band[GPUFIT_MEM_COMM_BUFFERS] = v->comm;
        band[GPUFIT_MEM_FRAGMENTATION] = m[GPUFIT_MEM_FRAGMENTATION];
        band[GPUFIT_MEM_KV_CACHE] = role->kv_cap_b[e];
    }
    return GPUFIT_OK;
}

/* server_band for a summary (lean): the used total's band and the verdict's ends only, by the
 * same rule and in the same order, each total computed alone from scalars where the full band
 * carries arrays of four totals (tests/unit/test_fastpath.c compares the two). One block per
 * stack term, as in server_band: a loop over the terms measured slower (docs/architecture.md,
 * "What the summary computes"). */
static int32_t server_band_lean(const gpufit__plan *p, gpufit__role *role, const levels_in *in,
                                uint64_t need, int32_t fits0, uint64_t room, gpufit_error *err)
{
    const uint64_t *m = role->comp;
    const levels_in *o = &in[0];
    uint64_t base = role->alloc - m[GPUFIT_MEM_KV_CACHE] - m[GPUFIT_MEM_WORKSPACE], used, kv;
    int64_t lo = 0, hi = 0;
    for (int e = 1; e <= 2; e++) {
        const levels_in *x = &in[e];
        /* the driver's reserve moves only the KV budget, and the used total with it */
        CK(server_kv(p, &x->tot, o->ctx, o->comm, base + o->ws, o->unch, m[GPUFIT_MEM_WEIGHTS],
                     &kv));
        widen_by(role->kv_cap_bytes, kv, &lo, &hi);
        /* context, NCCL, workspace, the profile: each alone at this end */
        if (x->ctx != o->ctx) {
            CK(server_used(p, &o->tot, base, x->ctx, o->comm, o->ws, o->unch, o->prof, m, &used,
                           &kv));
            widen_by(role->used, used, &lo, &hi);
        }
        if (x->comm != o->comm) {
            CK(server_used(p, &o->tot, base, o->ctx, x->comm, o->ws, o->unch, o->prof, m, &used,
                           &kv));
            widen_by(role->used, used, &lo, &hi);
        }
        if (x->ws != o->ws) {
            CK(server_used(p, &o->tot, base, o->ctx, o->comm, x->ws, x->unch, o->prof, m, &used,
                           &kv));
            widen_by(role->used, used, &lo, &hi);
        }
        if (x->prof != o->prof) {
            CK(server_used(p, &o->tot, base, o->ctx, o->comm, o->ws, o->unch, x->prof, m, &used,
                           &kv));
            widen_by(role->used, used, &lo, &hi);
        }
    }
    role->used_b[0] = role->used - (uint64_t)(-lo); /* lo <= 0 <= hi */
    role->used_b[1] = role->used + (uint64_t)hi;
    for (int e = 0; e < 2; e++) {
        const levels_in *x = &in[1 + e];
        CK(server_used(p, &x->tot, base, x->ctx, x->comm, x->ws, x->unch, x->prof, m, &used,
                       &kv));
        role->fits_b[e] = fits0 != 0 && kv >= need && kv > 0 && used <= room;
    }
    return GPUFIT_OK;
}

/* Levels, server budgets and the verdict of one role, at the point values of the stack
 * constants and at both ends of their documented ranges (the band, docs/band.md): the low
 * end sets every constant low, the high end high. The stack terms (workspace, context, NCCL,
 * slack), a server's KV budget and the components eval_role marks approximate (a GGUF recipe's
 * weights, the optimizer step, gradients freed between steps) have a band; every other
 * component is exact. */
static int32_t finish_role(const gpufit__plan *p, gpufit__role *role, const approx_shift *sh,
                           gpufit_error *err, struct gpufit_result *r)
{
    static const uint64_t none[3] = {0, 0, 0};
    uint64_t per_tok = role->kv_cap_tokens;
    /* vLLM's CUDA graphs: in the workspaces, each end at its own (eval_role) */
    const uint64_t *g = p->graph_sizes > 0 ? role->graph : none;
    const uint64_t *u = p->graph_sizes > 0 ? role->graph_unch : none;
    uint64_t ws_other = role->comp[GPUFIT_MEM_WORKSPACE] - p->ws_bytes - g[0]; /* exact part */
    uint64_t extra = role->extra_comms; /* DeepSpeed pipeline send/recv communicators */
    int32_t fits0 = role->fits != 0; /* 0 or 1: band_end's verdict ands it (no branch) */
    /* the point, the low end, the high end; tot only for a server (levels and band_end read
     * it only then): set field by field, the rest of the struct is not written */
    levels_in in[3];
    in[0].ctx = p->ctx_bytes;
    in[0].comm = role->comp[GPUFIT_MEM_COMM_BUFFERS];
    in[0].ws = role->comp[GPUFIT_MEM_WORKSPACE];
    in[0].frag = p->frag;
    in[0].unch = u[0];
    in[0].prof = 0;
    for (int e = 1; e <= 2; e++) {
        in[e].ctx = p->band.ctx[e - 1];
        in[e].comm = p->band.comm[e - 1] + extra * p->band.nccl[e - 1];
        in[e].ws = ws_other + p->band.ws[e - 1] + g[e];
        in[e].frag = p->band.frag[e - 1];
        in[e].unch = u[e];
        in[e].prof = 0;
    }
    levels_out o[1];
    int server = !p->training && p->util > 0.0 && role->capacity > 0;
    if (server)
        in[2].prof = role->prof_hi;
    for (int e = 0; e < 3 && server; e++) {
        in[e].tot.budget = 0; /* SGLang's: unused (server_kv) */
        in[e].tot.visible = server_visible(role->capacity, e);
        /* vLLM's budget, util x the total, whatever the other stack terms (server_kv); an
         * assumed release's default fraction has a band (policy.c) */
        in[e].tot.frac = e == 0 ? p->util : p->band.util[e - 1];
        if (p->kv_rule != GPUFIT__KV_SGLANG)
            CK(mul_frac(in[e].tot.visible, in[e].tot.frac, &in[e].tot.budget));
    }
    /* the bytes the verdict checks every level against: the capacity less the margin */
    uint64_t room = usable(p, role->capacity);
    uint64_t need = role->comp[GPUFIT_MEM_KV_CACHE]; /* the cache the job needs */
    CK2(levels(p, role, per_tok, room, &in[0], role->comp, &o[0], err));
    if (o[0].kv_short)
        add_note(r, GPUFIT__NOTE_KV_TOO_SMALL);
    role->alloc = o[0].alloc;
    role->reserved = o[0].reserved;
    role->used = o[0].used;
    role->kv_cap_bytes = o[0].kv_cap;
    role->kv_cap_tokens = o[0].kv_tokens;
    role->fits = o[0].fits;
    if (server && r->lean) {
        CK2(server_band_lean(p, role, in, need, fits0, room, err));
    } else if (server) {
        CK2(server_band(p, role, in, need, fits0, room, err));
    } else {
        CK(sh->ovf);
        for (int e = 0; e < 2; e++)
            CK2(band_end(p, role, &in[1 + e], &o[0], sh, fits0, per_tok, room, e, r->lean, err));
    }
    /* headroom: above the safety margin */
    role->headroom = role->capacity == 0 ? 0
                                         : (int64_t)(room > role->used ? room - role->used : 0) -
                                               (int64_t)(role->used > room ? role->used - room : 0);
    return GPUFIT_OK;
}

/* Folds role i, the roles before it folded, into the verdict: the worst role has the least
 * headroom (the fullest device when capacities are equal or unknown); a role that does not
 * fit fails the job, and one without a capacity leaves it without a verdict. */
static void rank_role(struct gpufit_result *r, uint32_t i)
{
    const gpufit__role *a = &r->roles[i], *w = &r->roles[r->worst];
    if (i == 0)
        r->fits = a->capacity > 0 ? 1 : -1;
    if (a->capacity > 0 && w->capacity > 0 ? a->headroom < w->headroom : a->used > w->used)
        r->worst = i;
    if (a->fits == 0)
        r->fits = 0;
    if (a->capacity == 0)
        r->fits = r->fits == 0 ? 0 : -1;
}

/* The three-way verdict (docs/band.md): oom when some role does not fit even with every stack
 * constant at the low end of its range, fits when every role fits with them at the high end,
 * marginal in between; unknown without a capacity. The peak's band is the worst role's. */
static void band_verdict(struct gpufit_result *r)
{
    const gpufit__role *w = &r->roles[r->worst];
    r->peak_b[0] = w->used_b[0];
    r->peak_b[1] = w->used_b[1];
    if (r->fits < 0) {
        r->verdict = GPUFIT_VERDICT_UNKNOWN;
        return;
    }
    int32_t v = GPUFIT_VERDICT_FITS; /* the worst role's (the enum is ordered) */
    for (uint32_t i = 0; i < r->n_roles; i++) {
        int32_t rv = gpufit__role_verdict(&r->roles[i]);
        v = rv > v ? rv : v;
    }
    r->verdict = v;
}

/* Role k of x->r: its memory, what it keeps in host memory (hc), its verdict, folded. */
static int32_t run_role(const role_ctx *x, const gpufit__slice *sl, uint32_t k, host_part *hc)
{
    gpufit__role *role = &x->r->roles[k];
    *hc = (host_part){0, 0, 0, 0, 0};
    /* the approximated components' shift of the band's ends (eval_role sets it; zeroed here
     * too, since gcc cannot always see that finish_role runs only after it) */
    approx_shift sh = {0, 0, 0, 0, 0};
    int32_t st = eval_role(x, sl, role, hc, &sh);
    if (st == GPUFIT_OK)
        st = finish_role(x->p, role, &sh, x->err, x->r);
    if (st == GPUFIT_OK)
        rank_role(x->r, k);
    return st;
}

/* First layer il in [0, L + 1] with il / (L + 1) >= pt, in llama.cpp's float arithmetic. */
static uint64_t split_point(float pt, uint64_t L)
{
    if (!(pt > 0.0f)) /* also NaN */
        return 0;
    if (!(pt < 1.0f))
        return L + 1;
    float act = (float)(L + 1);
    double est = ceil((double)pt * (double)(L + 1));
    uint64_t il = est <= 0.0 ? 0 : est >= (double)(L + 1) ? L + 1 : (uint64_t)est;
    while (il > 0 && !(pt > (float)(il - 1) / act))
        il--;
    while (il <= L && pt > (float)il / act)
        il++;
    return il;
}

/* Capacity of stage k's device: device_memory_gib, else its catalogue GPU (device_gpus),
 * else the job's (0 = unknown). */
static uint64_t stage_capacity(const struct gpufit_job *j, const gpufit__plan *p, uint64_t k)
{
    if (j->device_memory_gib.n > 0)
        return gpufit__gib_bytes(j->device_memory_gib.v[k]); /* <= 2^50 */
    const gpufit__gpu *g =
        j->device_gpus.n > 0 ? gpufit__gpu_by_id((int64_t)j->device_gpus.v[k]) : NULL;
    return g != NULL ? g->memory_bytes : p->capacity;
}

/* Layers of each stage under shares (tensor_split, else each device's free memory, else
 * equal), as llama.cpp assigns them (src/llama-model.cpp load_tensors): without
 * --tensor-split the share of a device is its free memory (ggml_backend_dev_memory, i.e.
 * cudaMemGetInfo after the CUDA context of the query is created: capacity - the context,
 * nothing else running assumed); cumulative shares in float normalised to split points; layer
 * il, the output head counting as layer L, goes to the first device whose split point exceeds
 * il / (L + 1). Devices of one capacity (no per-device list) share equally. begin[k]..begin[k+1]
 * are stage k's layers; *out_stage receives the stage of the output head. */
static void split_layers(const struct gpufit_job *j, const gpufit__plan *p, uint64_t L,
                         uint64_t stages, uint64_t begin[GPUFIT_LIST_MAX + 1],
                         uint64_t *out_stage)
{
    float pts[GPUFIT_LIST_MAX];
    float sum = 0.0f;
    int by_free = j->device_gpus.n > 0 || j->device_memory_gib.n > 0;
    for (uint64_t k = 0; k < stages; k++) {
        uint64_t cap = by_free ? stage_capacity(j, p, k) : 0;
        uint64_t free_b = cap > p->ctx_bytes ? cap - p->ctx_bytes : 0;
        sum += j->tensor_split.n > 0 ? (float)j->tensor_split.v[k]
               : by_free            ? (float)free_b
                                    : 1.0f;
        pts[k] = sum;
    }
    if (!(sum > 0.0f) || !(sum < 3.0e38f)) { /* shares that vanish (or overflow) as floats */
        for (uint64_t k = 0; k < stages; k++)
            pts[k] = (float)(k + 1);
        sum = (float)stages;
    }
    for (uint64_t k = 0; k < stages; k++)
        pts[k] /= sum;
    begin[0] = 0;
    *out_stage = stages - 1;
    int found = 0;
    for (uint64_t k = 0; k < stages; k++) {
        /* the last device takes everything past the last split point (upper_bound's end) */
        uint64_t b = k + 1 < stages ? split_point(pts[k], L) : L + 1;
        if (b > L && !found) { /* the first device whose range reaches "layer" L */
            *out_stage = k;
            found = 1;
        }
        begin[k + 1] = b > L ? L : b < begin[k] ? begin[k] : b;
    }
}

/* The expert layout (Megatron-Core MoE parallel folding; vLLM/SGLang expert parallelism). */
static int32_t check_experts(const gpufit__plan *p, const gpufit__shape *s,
                             const struct gpufit_job *j, gpufit_error *err)
{
    if (j->etp > 0 && s->E == 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_ETP, UINT64_MAX,
                            "etp (%lld) needs a mixture-of-experts model (n_experts > 0)",
                            (long long)j->etp);
    if (p->ep > 1 && s->E == 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_EP, UINT64_MAX,
                            "ep (%llu) needs a mixture-of-experts model (n_experts > 0)",
                            (unsigned long long)p->ep);
    if (s->E == 0)
        return GPUFIT_OK;
    int megatron = p->training && p->framework == GPUFIT_FW_MEGATRON;
    if (p->training) {
        /* Megatron-Core builds a second rank grid for the experts, etp x ep x expert-dp x pp
         * over the same world (parallel_state.initialize_model_parallel: "world_size is not
         * divisible by expert_tensor_model_pipeline_parallel size"): etp x ep divides
         * tp x cp x dp. Other trainers split each expert over the tp ranks (etp = tp). */
        if (j->etp > 0 && (uint64_t)j->etp != p->tp && !megatron)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_ETP, UINT64_MAX,
                                "etp (%lld) other than tp (%llu) is Megatron-Core's expert tensor "
                                "parallelism: set framework=megatron",
                                (long long)j->etp, (unsigned long long)p->tp);
        uint64_t ranks = p->dp * p->cp * p->tp, grid = p->etp * p->ep; /* <= 2^56, 2^32 */
        if (grid > 1 && ranks % grid != 0)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT,
                                j->etp > 0 ? GPUFIT_JOB_ETP : GPUFIT_JOB_EP, UINT64_MAX,
                                "etp x ep (%llu x %llu) must divide tp x cp x dp (%llu): the "
                                "experts' etp x ep x expert-dp grid folds into the same ranks",
                                (unsigned long long)p->etp, (unsigned long long)p->ep,
                                (unsigned long long)ranks);
    } else {
        /* vLLM/SGLang: experts tensor-parallel over the tp ranks (ep = 1), or whole experts
         * spread over the dp x tp ranks (ep > 1) */
        uint64_t want = p->ep > 1 ? 1 : p->tp;
        if (j->etp > 0 && (uint64_t)j->etp != want)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_ETP, UINT64_MAX,
                                "etp (%lld): a server %s (etp = %llu)", (long long)j->etp,
                                p->ep > 1 ? "keeps whole experts on each rank under ep"
                                          : "splits every expert over its tp ranks",
                                (unsigned long long)want);
        if (p->ep > 1 && (p->dp * p->tp) % p->ep != 0)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_EP, UINT64_MAX,
                                "ep (%llu) must divide dp x tp (%llu): whole experts are spread "
                                "over the serving ranks",
                                (unsigned long long)p->ep, (unsigned long long)(p->dp * p->tp));
    }
    /* the distributed optimizer's instances split the expert data-parallel group too
     * (parallel_state: expert_data_parallel_size % num_distributed_optimizer_instances) */
    if (megatron && p->shard < p->dp && p->dp % p->shard == 0 &&
        (p->dp * p->cp * p->tp / (p->etp * p->ep)) % (p->dp / p->shard) != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_ZERO_SHARD_SIZE, UINT64_MAX,
                            "zero_shard_size (%llu): dp / zero_shard_size (%llu optimizer "
                            "instances) must divide the expert data-parallel size "
                            "tp x cp x dp / (etp x ep) = %llu",
                            (unsigned long long)p->shard, (unsigned long long)(p->dp / p->shard),
                            (unsigned long long)(p->dp * p->cp * p->tp / (p->etp * p->ep)));
    /* each expert's FC1/FC2 split over etp (TEGroupedLinear: divide(moe_ffn_hidden_size,
     * tp_size) over the expert tp group) */
    if (p->etp > 1 && s->f_moe % p->etp != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT,
                            j->etp > 0 ? GPUFIT_JOB_ETP : GPUFIT_JOB_TP, UINT64_MAX,
                            "%s (%llu) must divide moe_ffn_hidden_size (%llu): each expert is "
                            "split over the expert tensor-parallel ranks",
                            j->etp > 0 ? "etp" : "tp", (unsigned long long)p->etp,
                            (unsigned long long)s->f_moe);
    if (p->ep > 1 && s->E % p->ep != 0) /* arguments.py: num_experts % ep == 0 */
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_EP, UINT64_MAX,
                            "ep (%llu) must divide n_experts (%llu)", (unsigned long long)p->ep,
                            (unsigned long long)s->E);
    return GPUFIT_OK;
}

int32_t gpufit__evaluate_into(struct gpufit_result *r, const struct gpufit_model *mdl,
                              const struct gpufit_job *j, gpufit_error *err)
{
    return gpufit__evaluate_reuse(r, mdl, j, NULL, err);
}

int32_t gpufit__evaluate_reuse(struct gpufit_result *r, const struct gpufit_model *mdl,
                               const struct gpufit_job *j, gpufit__wcache *reuse,
                               gpufit_error *err)
{
    gpufit__shape sbuf;
    gpufit__counts cbuf;
    gpufit__plan pbuf;
    gpufit__tgroup gbuf[GPUFIT__TGROUPS_MAX];
    const gpufit__tgroup *g = mdl->cache_groups;
    size_t ng = mdl->cache_ng;
    int32_t st = GPUFIT_OK;
    if (mdl->cache_state != 1) { /* not cached: derive it here (and report its errors) */
        st = gpufit__model_resolve(mdl, &sbuf, err);
        if (st == GPUFIT_OK)
            st = gpufit__model_count(&sbuf, &cbuf, err);
        if (st != GPUFIT_OK)
            return st;
        ng = gpufit__model_tensors(&sbuf, gbuf);
        g = gbuf;
    }
    const gpufit__shape *s = mdl->cache_state == 1 ? &mdl->cache_shape : &sbuf;
    const gpufit__counts *c = mdl->cache_state == 1 ? &mdl->cache_counts : &cbuf;
    /* the job's resolved plan, unless it is stale (then resolved here, reporting its errors) */
    const gpufit__plan *p = &j->plan;
    if (j->plan_state != 1) {
        st = gpufit__plan_resolve(j, s, &pbuf, err);
        if (st != GPUFIT_OK)
            return st;
        p = &pbuf;
    }
    /* a model read from a GGUF file stores its file type and exact bytes per layer */
    if (mdl->gguf_layers > 0 && j->weight_dtype < 0 && mdl->gguf_file_type > 0) {
        if (p != &pbuf)
            pbuf = *p;
        pbuf.w_dt = mdl->gguf_file_type;
        p = &pbuf;
    }
    /* a pre-quantised checkpoint is the job's weight dtype unless the job names one */
    if (s->quant && j->weight_dtype < 0 && mdl->gguf_layers == 0 &&
        gpufit__plan_checkpoint(s, p) != p->w_dt) {
        if (p != &pbuf)
            pbuf = *p;
        p = &pbuf;
        st = gpufit__plan_apply_checkpoint(j, s, &pbuf, err);
        if (st != GPUFIT_OK)
            return st;
    }
    /* SGLang's defaults also follow the model: an MLA backend's prefill graphs, a vision
     * encoder (policy.c gpufit__sglang_fraction) */
    if (p->framework == GPUFIT_FW_SGLANG && (s->mla || s->v_layers > 0)) {
        if (p != &pbuf)
            pbuf = *p;
        p = &pbuf;
        gpufit__sglang_model(j, s, &pbuf);
    }
    wcache wc_own, *wc = reuse != NULL ? reuse : &wc_own;
    if (reuse == NULL || !reuse->filled) {
        CK(wcache_fill(mdl, p, s, g, ng, wc));
        wc->filled = reuse != NULL;
    }
    /* every field is set below; roles are filled whole by the role loop (not zeroed here:
     * this runs millions of times inside the planner) */
    r->n_roles = r->worst = r->n_notes = r->n_mitigations = 0;
    if (mdl->from_unknown_type)
        add_note(r, GPUFIT__NOTE_UNKNOWN_TYPE);
    r->mitigations = NULL;
    r->fits = 0;
    r->peak = r->host_bytes = 0;
    r->gpu = NULL;
    r->gpu_name[0] = '\0';
    r->n_params = c->total;
    r->n_active = c->active;
    r->capacity = p->capacity;
    r->gpu = p->gpu; /* the report names it; capacity-only GPUs keep the job's name */
    if (!r->lean) { /* text the summary never reads */
        memcpy(r->model_name, mdl->name, sizeof r->model_name);
        gpufit__resolved_set(&r->resolved, j, p);
        if (p->gpu == NULL)
            memcpy(r->gpu_name, j->gpu_name, sizeof r->gpu_name);
    }

    /* layout checks (parallelism details: issue 3), in the order their errors are reported; a
     * degree of 1 divides everything, so the common layouts skip the 64-bit divisions */
    if (p->tp > 1 && s->nq % p->tp != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_TP, UINT64_MAX,
                            "tp (%llu) must divide n_heads (%llu)", (unsigned long long)p->tp,
                            (unsigned long long)s->nq);
    if (p->pp > s->n_layers && s->arch != GPUFIT_ARCH_GENERIC)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_PP, UINT64_MAX,
                            "pp (%llu) exceeds n_layers (%llu)", (unsigned long long)p->pp,
                            (unsigned long long)s->n_layers);
    if (p->tp > 1 && s->f % p->tp != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_TP, UINT64_MAX,
                            "tp (%llu) must divide ffn_hidden_size (%llu)",
                            (unsigned long long)p->tp, (unsigned long long)s->f);
    st = check_experts(p, s, j, err);
    if (st != GPUFIT_OK)
        return st;
    /* images per prompt (vLLM limit_mm_per_prompt) size vLLM's encoder profile only */
    if (p->mm_items >= 0 && (s->v_layers == 0 || p->framework != GPUFIT_FW_VLLM))
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_MM_ITEMS_PER_PROMPT, UINT64_MAX,
                            s->v_layers == 0 ? "mm_items_per_prompt needs a model with a vision "
                                               "encoder (vision_layers > 0)"
                                             : "mm_items_per_prompt applies to framework vllm "
                                               "(limit_mm_per_prompt)");
    if (p->shard != p->dp && (p->shard > p->dp || p->dp % p->shard != 0))
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_ZERO_SHARD_SIZE, UINT64_MAX,
                            "zero_shard_size (%llu) must divide dp (%llu)",
                            (unsigned long long)p->shard, (unsigned long long)p->dp);
    if (p->vpp > 1 && p->pp == 1)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_VPP, UINT64_MAX,
                            "vpp (%llu) needs pipeline parallelism (pp > 1)",
                            (unsigned long long)p->vpp);
    if (p->sp && p->tp == 1)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_SP, UINT64_MAX,
                            "sp (sequence parallelism) needs tensor parallelism (tp > 1)");
    if (p->training && p->cp > 1 && p->s % p->cp != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_CP, UINT64_MAX,
                            "cp (%llu) must divide seq_len (%llu)", (unsigned long long)p->cp,
                            (unsigned long long)p->s);
    /* Megatron and DeepSpeed reject a global batch that is not a whole number of
     * micro-batches on every data-parallel rank (Megatron arguments.py; DeepSpeed config). */
    uint64_t n_mb = 1; /* training: micro-batches per step on each data-parallel rank */
    if (p->training && j->global_batch > 0) {
        uint64_t per_step = p->b * p->dp; /* <= 2^20 x 2^24 */
        n_mb = (uint64_t)j->global_batch / per_step;
        if (n_mb * per_step != (uint64_t)j->global_batch) /* else n_mb >= 1 */
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_GLOBAL_BATCH, UINT64_MAX,
                                "global_batch (%lld) must be a multiple of micro_batch x dp "
                                "(%llu x %llu)",
                                (long long)j->global_batch, (unsigned long long)p->b,
                                (unsigned long long)p->dp);
    }
    /* a split names one share / one GPU per pipeline stage */
    static const int32_t list_ids[3] = {GPUFIT_JOB_TENSOR_SPLIT, GPUFIT_JOB_DEVICE_GPUS,
                                        GPUFIT_JOB_DEVICE_MEMORY_GIB};
    static const char *const list_names[3] = {"tensor_split", "device_gpus",
                                              "device_memory_gib"};
    const gpufit__list *lists[3] = {&j->tensor_split, &j->device_gpus, &j->device_memory_gib};
    int first_list = -1;
    for (int k = 0; k < 3; k++) {
        if (lists[k]->n > 0 && lists[k]->n != p->pp)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, list_ids[k], UINT64_MAX,
                                "%s has %u entries but pp = %llu: give one per pipeline stage",
                                list_names[k], lists[k]->n, (unsigned long long)p->pp);
        if (lists[k]->n > 0 && first_list < 0)
            first_list = k;
    }
    if (first_list >= 0 && (j->pp_first_layers > 0 || j->pp_last_layers > 0 || p->vpp > 1))
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, list_ids[first_list], UINT64_MAX,
                            "%s splits the layers itself: leave pp_first_layers, "
                            "pp_last_layers and vpp unset",
                            list_names[first_list]);
    /* llama.cpp over several devices offloads everything (a partial offload with a split is
     * not modelled: docs/splits.md); n_gpu_layers > n_layers or -1 is everything */
    if (p->framework == GPUFIT_FW_LLAMACPP && !p->training && p->pp > 1 &&
        p->n_gpu_layers >= 0 && (uint64_t)p->n_gpu_layers <= s->n_layers)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_N_GPU_LAYERS, UINT64_MAX,
                            "n_gpu_layers (%lld) with pp = %llu devices: a partial offload over "
                            "several devices is not modelled; use -1 or more than n_layers "
                            "(%llu)",
                            (long long)p->n_gpu_layers, (unsigned long long)p->pp,
                            (unsigned long long)s->n_layers);
    uint64_t layout = p->dp * p->tp * p->pp * p->cp;
    if (j->gpus > 0 && (uint64_t)j->gpus != layout)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_GPUS, UINT64_MAX,
                            "gpus (%lld) must equal dp x tp x pp x cp (%llu)", (long long)j->gpus,
                            (unsigned long long)layout);

    if (p->gpu == NULL && p->capacity == 0)
        add_note(r, GPUFIT__NOTE_NO_GPU);
    if (p->gpu != NULL && !p->gpu->supports_bf16 &&
        (p->c_dt == GPUFIT_DTYPE_BF16 || p->w_dt == GPUFIT_DTYPE_BF16))
        add_note(r, GPUFIT__NOTE_BF16_UNSUPPORTED);
    /* FP8 weights alone run on older GPUs in llama.cpp and vLLM/SGLang (weight-only FP8 with
     * Marlin kernels on Ampere); FP8 compute needs the hardware */
    if (p->gpu != NULL && !p->gpu->supports_fp8 &&
        (p->c_dt == GPUFIT_DTYPE_FP8 ||
         (p->w_dt == GPUFIT_DTYPE_FP8 && p->framework != GPUFIT_FW_LLAMACPP &&
          p->framework != GPUFIT_FW_VLLM && p->framework != GPUFIT_FW_SGLANG)))
        add_note(r, GPUFIT__NOTE_FP8_UNSUPPORTED);
    if (p->framework == GPUFIT_FW_LLAMACPP && p->attention != GPUFIT_ATTN_FLASH &&
        p->kv_dt > GPUFIT_DTYPE_FP8 && !p->training)
        add_note(r, GPUFIT__NOTE_QUANT_V_NEEDS_FA);
    if (s->arch == GPUFIT_ARCH_GENERIC)
        add_note(r, GPUFIT__NOTE_GENERIC_MODEL);
    if (j->task == GPUFIT_TASK_LORA && j->precision < 0 && j->weight_dtype < 0)
        add_note(r, GPUFIT__NOTE_LORA_BASE16);
    if (p->layout_auto != GPUFIT__LAYOUT_GIVEN)
        add_note(r, p->layout_auto == GPUFIT__LAYOUT_DP   ? GPUFIT__NOTE_LAYOUT_DP
                    : p->layout_auto == GPUFIT__LAYOUT_TP ? GPUFIT__NOTE_LAYOUT_TP
                                                          : GPUFIT__NOTE_LAYOUT_LAYERS);
    if (p->fw_version_assumed) /* the release whose KV rule was used */
        add_note(r, p->framework == GPUFIT_FW_VLLM ? GPUFIT__NOTE_VLLM_ASSUMED
                                                   : GPUFIT__NOTE_SGLANG_ASSUMED);

    uint64_t L = s->n_layers;
    host_part hostc = {0, 0, 0, 0, 0}; /* host memory per GPU process: the most of any role */
    host_part rolehost;
    /* Inference with partial offload: the last n_gpu_layers layers sit on the GPU; the output
     * layer counts as one more (llama.cpp -ngl). */
    if (!p->training && p->n_gpu_layers >= 0 && (uint64_t)p->n_gpu_layers <= L && p->pp == 1) {
        gpufit__slice dev = {0}, hst = {0};
        uint64_t ngl = (uint64_t)p->n_gpu_layers;
        dev.sched_copies = hst.sched_copies = 1;
        dev.last_layer = ngl > 0;
        take_layers(s, L - ngl, ngl, &dev);
        take_layers(s, 0, L - ngl, &hst);
        hst.embedding = 1;
        hst.output = 1;
        dev.inflight = hst.inflight = 1;
        dev.inflight_den = hst.inflight_den = 1;
        gpufit__role *role = &r->roles[0];
        role->name = "all";
        role->n_devices = 1;
        role->layers = (uint32_t)ngl;
        role->capacity = p->capacity;
        role->gpu = NULL;
        role->fits = 1;
        role_ctx x = {p, s, c, g, ng, wc, NULL, r, err};
        st = run_role(&x, &dev, 0, &rolehost);
        if (st != GPUFIT_OK)
            return st;
        uint64_t hw = 0, hh = 0, kvt = 0;
        CK(wc->gguf != NULL ? gpufit__weights_bytes_gguf(mdl, p, s, &hst, &hw, &hh)
                           : gpufit__weights_bytes(p, s, g, ng, &hst, &hw, &hh));
        CK(gpufit__kv_bytes_per_token(p, s, &hst, &kvt));
        CK(gpufit__add(rolehost.weights, hw, &hostc.weights) ||
           gpufit__add(hostc.weights, hh, &hostc.weights));
        CK(gpufit__kv_cache_bytes(p, s, &hst, kvt, p->batch * p->ctx, &hostc.kv));
        hostc.any = 1;
        r->n_roles = 1;
    } else {
        /* Pipeline stages: pp_first_layers / pp_last_layers fix the end stages (0 = balanced),
         * the other stages share the rest evenly, earlier ones taking the remainder. */
        uint64_t stages = p->pp;
        uint64_t F = stages > 1 ? (uint64_t)j->pp_first_layers : 0;
        uint64_t Z = stages > 1 ? (uint64_t)j->pp_last_layers : 0;
        uint64_t fixed = (F > 0) + (Z > 0);
        uint64_t rest_stages = stages - fixed;
        if (stages > 1 && (F + Z > L || (rest_stages > 0 && L - F - Z < rest_stages) ||
                           (rest_stages == 0 && F + Z != L)))
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT,
                                F > 0 ? GPUFIT_JOB_PP_FIRST_LAYERS : GPUFIT_JOB_PP_LAST_LAYERS,
                                UINT64_MAX,
                                "pp_first_layers (%llu) + pp_last_layers (%llu) leave no valid "
                                "split of %llu layers over pp = %llu stages",
                                (unsigned long long)F, (unsigned long long)Z,
                                (unsigned long long)L, (unsigned long long)stages);
        uint64_t rest = L - F - Z;
        /* interleaving cuts every stage into vpp equal chunks (Megatron: layers divisible by
         * pp x vpp; uneven first/last stages still split into whole chunks) */
        if (p->vpp > 1 && (F % p->vpp != 0 || Z % p->vpp != 0 ||
                           (rest_stages > 0 && rest % (rest_stages * p->vpp) != 0)))
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_VPP, UINT64_MAX,
                                "pp x vpp (%llu x %llu) must divide the %llu layers evenly "
                                "(each stage holds vpp equal chunks)",
                                (unsigned long long)stages, (unsigned long long)p->vpp,
                                (unsigned long long)(rest_stages > 0 ? rest : L));
        uint64_t base = rest_stages == 1 ? rest : 0, rem = 0;
        if (rest_stages > 1) {
            base = rest / rest_stages;
            rem = rest % rest_stages;
        }
        /* a split by shares or over different GPUs: every stage is a role of its own */
        int split = j->tensor_split.n > 0 || j->device_gpus.n > 0 || j->device_memory_gib.n > 0;
        /* llama.cpp splits layers by its own rule even with equal shares (17 + 15 of 32 layers
         * on two GPUs, the output head on the second): stages keep their pp_* roles */
        int by_rule = split || (p->framework == GPUFIT_FW_LLAMACPP && stages > 1 && F == 0 &&
                                Z == 0 && stages <= GPUFIT_LIST_MAX);
        uint64_t sb[GPUFIT_LIST_MAX + 1], out_stage = stages - 1;
        if (by_rule)
            split_layers(j, p, L, stages, sb, &out_stage);
        /* llama.cpp turns on pipeline parallelism with more than one device, everything
         * offloaded, layer split mode, KV offload and no tensor overrides (src/llama-context.cpp
         * llama_context: pipeline_parallel; gpufit has no keys for the last three, so they hold);
         * ggml's scheduler then keeps GGML_SCHED_MAX_COPIES = 4 copies of every split input
         * (ggml/src/ggml-backend.cpp ggml_backend_sched_new: n_copies) */
        uint32_t copies = p->framework == GPUFIT_FW_LLAMACPP && !p->training && stages > 1 ? 4 : 1;
        gpufit__act_terms at; /* training: one layer's activations, the same on every stage */
        if (p->training)
            CK(gpufit__train_layer_terms(p, s, &at));
        role_ctx x = {p, s, c, g, ng, wc, &at, r, err};
        static const char *const names[3] = {"pp_first", "pp_middle", "pp_last"};
        static const char *const dev_names[GPUFIT_LIST_MAX] = {
            "gpu0", "gpu1", "gpu2",  "gpu3",  "gpu4",  "gpu5",  "gpu6",  "gpu7",
            "gpu8", "gpu9", "gpu10", "gpu11", "gpu12", "gpu13", "gpu14", "gpu15"};
        int n = split ? (int)stages : stages == 1 ? 1 : stages == 2 ? 2 : 3;
        for (int k = 0; k < n; k++) {
            /* roles: stage 0, stage 1 (the fullest middle stage), the last stage; or each
             * stage of a split */
            uint64_t stage = split ? (uint64_t)k : k == 0 ? 0 : k == 1 && stages > 2 ? 1 : stages - 1;
            uint64_t begin, count;
            if (by_rule) {
                begin = sb[stage];
                count = sb[stage + 1] - sb[stage];
            } else if (stage == 0 && F > 0) {
                begin = 0;
                count = F;
            } else if (stage == stages - 1 && Z > 0) {
                begin = L - Z;
                count = Z;
            } else {
                uint64_t idx = stage - (F > 0); /* position among the evenly split stages */
                begin = F + idx * base + (idx < rem ? idx : rem);
                count = base + (idx < rem);
            }
            gpufit__slice sl; /* every field is set here */
            take_layers(s, begin, count, &sl);
            sl.embedding = stage == 0;
            sl.last_layer = count > 0 && begin + count == L;
            sl.sched_copies = copies;
            sl.output = stage == (by_rule && p->framework == GPUFIT_FW_LLAMACPP ? out_stage
                                                                                : stages - 1);
            /* Micro-batches in flight on stage i (§4.3): 1F1B keeps min(p - i, m); GPipe all m;
             * the interleaved schedule keeps min(2(p - i - 1) + (v - 1)p + 1, m v) chunks of
             * L/(p v) layers (Megatron's warm-up count + 1), which is L (1 + (p-1)/(p v)) layer
             * activations on the first stage. */
            sl.inflight_den = 1;
            if (!p->training) {
                sl.inflight = 1;
            } else if (p->schedule == GPUFIT_PP_GPIPE) {
                sl.inflight = n_mb;
            } else if (p->schedule == GPUFIT_PP_INTERLEAVED && stages > 1) {
                uint64_t chunks = 2 * (stages - stage - 1) + (p->vpp - 1) * stages + 1;
                sl.inflight = chunks < n_mb * p->vpp ? chunks : n_mb * p->vpp;
                sl.inflight_den = p->vpp;
            } else {
                sl.inflight = stages - stage < n_mb ? stages - stage : n_mb;
            }
            gpufit__role *role = &r->roles[k];
            uint64_t per_stage = p->dp * p->tp * p->cp;
            if (split) {
                role->name = dev_names[k];
                role->n_devices = (uint32_t)per_stage;
            } else {
                role->name = stages == 1 ? "all" : names[k == 1 && stages == 2 ? 2 : k];
                role->n_devices = (uint32_t)(k == 1 && stages > 2 ? per_stage * (stages - 2)
                                                                  : per_stage);
            }
            role->gpu = j->device_gpus.n > 0 ? gpufit__gpu_by_id((int64_t)j->device_gpus.v[k])
                                             : NULL;
            role->capacity = split ? stage_capacity(j, p, stage) : p->capacity;
            role->layers = (uint32_t)count;
            role->fits = 1;
            st = run_role(&x, &sl, (uint32_t)k, &rolehost);
            if (st != GPUFIT_OK)
                return st;
            if (rolehost.any) {
                hostc.any = 1;
                hostc.weights = max_u(hostc.weights, rolehost.weights);
                hostc.optimizer = max_u(hostc.optimizer, rolehost.optimizer);
                hostc.master = max_u(hostc.master, rolehost.master);
                hostc.kv = max_u(hostc.kv, rolehost.kv);
            }
        }
        r->n_roles = (uint32_t)n;
    }
    /* the worst role and the verdict (rank_role) */
    r->peak = r->roles[r->worst].used;
    r->capacity = r->roles[r->worst].capacity;
    /* The host role: what one GPU process keeps in CPU RAM (offload, paged optimizer states,
     * layers left on the CPU, llama.cpp's token embedding), checked against host_memory_bytes. */
    uint64_t host = 0;
    if (hostc.any)
        CK(gpufit__add(hostc.weights, hostc.optimizer, &host) ||
           gpufit__add(host, hostc.master, &host) || gpufit__add(host, hostc.kv, &host));
    r->host_bytes = host;
    if (host > 0 && r->n_roles < GPUFIT__ROLES_MAX) {
        uint32_t n_devices = 0;
        for (uint32_t i = 0; i < r->n_roles; i++)
            n_devices += r->roles[i].n_devices;
        if (p->framework == GPUFIT_FW_LLAMACPP)
            n_devices = 1; /* one process drives every GPU */
        uint64_t cap = (uint64_t)j->host_memory_bytes;
        /* every field, one by one: gcc clears a struct this size with rep stos, slow to start */
        gpufit__role *hr = &r->roles[r->n_roles++];
        uint64_t *hm = hr->comp;
        hr->name = "host";
        hr->n_devices = n_devices;
        hr->layers = 0;
        hm[0] = 0;
        hm[GPUFIT_MEM_WEIGHTS] = hostc.weights;
        hm[GPUFIT_MEM_GRADIENTS] = 0;
        hm[GPUFIT_MEM_OPTIMIZER_STATES] = hostc.optimizer;
        hm[GPUFIT_MEM_MASTER_WEIGHTS] = hostc.master;
        hm[GPUFIT_MEM_ACTIVATIONS] = 0;
        hm[GPUFIT_MEM_KV_CACHE] = hostc.kv;
        hm[GPUFIT_MEM_LOGITS] = hm[GPUFIT_MEM_COMM_BUFFERS] = hm[GPUFIT_MEM_WORKSPACE] = 0;
        hm[GPUFIT_MEM_RUNTIME_CONTEXT] = hm[GPUFIT_MEM_FRAGMENTATION] = 0;
        hr->alloc = hr->reserved = hr->used = host;
        hr->kv_cap_bytes = hr->kv_cap_tokens = 0;
        hr->capacity = cap;
        hr->gpu = NULL;
        hr->fits = cap > 0 ? host <= cap : -1;
        hr->headroom = cap > 0 ? (int64_t)cap - (int64_t)host : 0;
        hr->approx = 0;
        if (!r->lean) { /* host bytes: no stack constant (the components' bands: the report's) */
            memcpy(hr->band_lo, hm, sizeof hr->comp);
            memcpy(hr->band_hi, hm, sizeof hr->comp);
        }
        hr->alloc_b[0] = hr->alloc_b[1] = hr->reserved_b[0] = hr->reserved_b[1] = host;
        hr->used_b[0] = hr->used_b[1] = host;
        hr->kv_cap_b[0] = hr->kv_cap_b[1] = 0;
        hr->fits_b[0] = hr->fits_b[1] = hr->fits;
        hr->extra_comms = 0;
        if (hr->fits == 0) {
            r->fits = 0;
            add_note(r, GPUFIT__NOTE_HOST_TOO_SMALL);
        }
        add_note(r, GPUFIT__NOTE_HOST_OFFLOAD);
    }
    band_verdict(r);
    return GPUFIT_OK;
}

int32_t gpufit_evaluate_summary(const gpufit_model *m, const gpufit_job *j, gpufit_summary *out,
                                gpufit_error *err)
{
    if (m == NULL || j == NULL || out == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "model, job and out must not be NULL");
    /* checked first: nothing is written; fields from verdict on came later (older callers) */
    if (out->struct_size < offsetof(gpufit_summary, verdict))
        return gpufit__fail(err, GPUFIT_E_STRUCT_SIZE, 0, UINT64_MAX,
                            "gpufit_summary.struct_size %u is smaller than %zu",
                            (unsigned)out->struct_size, offsetof(gpufit_summary, verdict));
    gpufit__result_buf rb; /* on the stack: no allocation (evaluate_into ranks no mitigations) */
    struct gpufit_result *r = gpufit__result_init(&rb);
    r->lean = 1;
    int32_t st = gpufit__evaluate_into(r, m, j, err);
    if (st != GPUFIT_OK)
        return st;
    st = gpufit__summary_out(r, out);
    if (st == GPUFIT_OK)
        gpufit__ok(err);
    return st;
}
