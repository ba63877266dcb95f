/* SPDX-License-Identifier: MIT */
/* The derived data a model handle caches (shape, exact counts, tensor groups), so that an
 * evaluation — millions of them inside a planner — does not re-derive the model each time. */
#include "internal.h"

#include <string.h>

void gpufit__model_refresh(struct gpufit_model *m)
{
    /* a preset as loaded: its generated record is the cache */
    if (m->cache_state == 2 && gpufit__preset_record_fill(m, m->cache_ng)) {
        m->cache_state = 1;
        return;
    }
    m->cache_state = 3; /* until it resolves: a refresh of these fields would fail again */
    if (gpufit__model_resolve(m, &m->cache_shape, NULL) != GPUFIT_OK)
        return;
    /* the groups once: the counts are summed from them (gpufit__model_count walks them too) */
    size_t ng = gpufit__model_tensors(&m->cache_shape, m->cache_groups);
    if (gpufit__model_count_groups(&m->cache_shape, m->cache_groups, ng, &m->cache_counts,
                                   NULL) != GPUFIT_OK)
        return;
    m->cache_ng = (uint32_t)ng;
    gpufit__aggregates_build(&m->cache_shape, m->cache_groups, m->cache_ng, &m->cache_agg);
    m->cache_state = 1;
}

#define SPAN(a, b) (offsetof(struct gpufit_model, b) - offsetof(struct gpufit_model, a))

void gpufit__model_assign(struct gpufit_model *dst, const struct gpufit_model *src)
{
    /* the parameters and GGUF totals, the GGUF layers in use, and the cache when it is valid:
     * its fixed part, the tensor groups in use and the aggregates. The unused tails of the two
     * arrays (2 and 1.5 KiB) are not copied, nor a stale cache (nothing reads it: only
     * cache_state and cache_ng are) */
    size_t layers = src->gguf_layers < GPUFIT__GGUF_LAYERS_MAX ? src->gguf_layers
                                                                : GPUFIT__GGUF_LAYERS_MAX;
    memcpy(dst, src, offsetof(struct gpufit_model, gguf_layer_bytes));
    memcpy(dst->gguf_layer_bytes, src->gguf_layer_bytes, layers * sizeof src->gguf_layer_bytes[0]);
    dst->from_unknown_type = src->from_unknown_type;
    if (src->cache_state != 1) {
        dst->cache_state = src->cache_state;
        dst->cache_ng = src->cache_ng;
        return;
    }
    size_t ng = src->cache_ng < GPUFIT__TGROUPS_MAX ? src->cache_ng : GPUFIT__TGROUPS_MAX;
    memcpy(&dst->cache_state, &src->cache_state, SPAN(cache_state, cache_groups));
    memcpy(dst->cache_groups, src->cache_groups, ng * sizeof src->cache_groups[0]);
    memcpy(&dst->cache_agg, &src->cache_agg, sizeof src->cache_agg);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Adds tensor group g to the sums a (lora: whether adapters can sit on it). */
static void add_group(const gpufit__shape *s, const gpufit__tgroup *g, int lora,
                      gpufit__class_agg *a)
{
    uint64_t el = g->rows * g->cols * g->copies; /* counts fit: model_count checked */
    int oned = g->rows == 1, lin = gpufit__is_linear(g->kind) && !oned;
    for (int e = 0; e < 3 && !oned; e++) { /* the block rests at 1, 2, 4 bytes per element */
        uint64_t one = (g->rows * g->cols) << e; /* <= 2^58: rows, cols <= 2^28 (model_shape.c) */
        uint64_t rest = gpufit__block_rest(one) * g->copies; /* < 2^21 x 2^32 */
        a->blk_w[e] += rest;
        a->blk_other[e] += lin ? 0 : rest;
        a->blk_t[e] += one > ((uint64_t)1 << 20) ? g->copies : 0;
    }
    if (lin) { /* in bitsandbytes' nf4, whole blocks as gpufit__dtype_bytes counts them */
        const gpufit__dtype_info *d = &gpufit__dtypes[GPUFIT_DTYPE_NF4];
        uint64_t n = g->rows * g->cols; /* < 2^56: the bytes below too */
        a->blk_nf4 += gpufit__block_rest((n / d->block_elems + (n % d->block_elems != 0)) *
                                         d->block_bytes) *
                      g->copies;
    }
    int exp = gpufit__is_expert(g->kind);
    int kv = (g->kind == GPUFIT__T_ATTN_K || g->kind == GPUFIT__T_ATTN_V) && !s->mla;
    if (lin) { /* the wgrad dummies' families (gpufit__megatron_wgrad_dummies) */
        uint64_t one = g->rows * g->cols;
        if (kv) {
            a->dum_kv_el += one;
            a->dum_kv_cols += g->cols;
        } else if (exp) {
            a->dum_exp += one;
        } else {
            *(g->kind <= GPUFIT__T_MLA_KV_B ? &a->dum_att : &a->dum_rest) += one;
        }
    }
    if (oned || g->kind == GPUFIT__T_ROUTER) { /* replicated over tp (mem_weights.c) */
        a->oned_el += el;
        return;
    }
    if (kv) {
        a->kv_n += g->copies;
        a->kv_cols = g->cols;
    } else {
        a->rows_gcd = gcd(a->rows_gcd, g->rows);
        if (!lin)
            a->other2d_el += el;
        else if (exp)
            a->exp_el += el;
        else
            a->lin_el += el;
    }
    if (lin && !kv) {
        *(exp ? &a->exp_rows : &a->lin_rows) += g->rows * g->copies;
        *(exp ? &a->exp_cols : &a->lin_cols) += g->cols * g->copies;
    }
    if (lin && g->cols % 256 != 0)
        a->cols256 = 0;
    int b = gpufit__lora_bit(g->kind); /* one sum per module bit, combined by mask in a plan */
    if (lora && b >= 0)
        *(exp ? &a->lora_rc_exp[b] : &a->lora_rc[b]) += (g->rows + g->cols) * g->copies;
}

const gpufit__class_agg gpufit__class_agg_empty = {.cols256 = 1};

void gpufit__aggregates_clear(gpufit__aggregates *agg)
{
    memset(agg, 0, sizeof *agg);
    for (int w = 0; w < GPUFIT__W_COUNT; w++)
        agg->layer[w] = gpufit__class_agg_empty;
    for (int k = 0; k < 4; k++)
        agg->glob[k] = gpufit__class_agg_empty;
}

void gpufit__aggregates_build(const gpufit__shape *s, const gpufit__tgroup *g, size_t ng,
                              gpufit__aggregates *agg)
{
    gpufit__aggregates_clear(agg);
    agg->glob_dense = 1;
    for (size_t i = 0; i < ng; i++) {
        if (g[i].where != GPUFIT__W_GLOBAL) {
            add_group(s, &g[i], 1, &agg->layer[g[i].where]);
            continue;
        }
        /* the sides of gpufit__uniform_bytes's walk: embeddings with the first stage, the
         * rest with the output, the vision encoder apart; a tied embedding also on the last
         * stage */
        if ((gpufit__is_linear(g[i].kind) && g[i].rows != 1) || gpufit__is_expert(g[i].kind) ||
            g[i].kind == GPUFIT__T_ATTN_K || g[i].kind == GPUFIT__T_ATTN_V)
            agg->glob_dense = 0;
        add_group(s, &g[i], 0, &agg->glob[gpufit__glob_side(g[i].kind)]);
        if (g[i].kind == GPUFIT__T_TOKEN_EMBD && s->tied)
            add_group(s, &g[i], 0, &agg->glob[2]);
    }
}
