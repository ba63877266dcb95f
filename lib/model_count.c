/* Exact parameter counts: the model as a list of tensor groups, and their sums.
 * A group is `copies` tensors of rows x cols, present once (GLOBAL) or in every layer of its
 * class. Formulas: memory-model.md §1.1 (dense), §1.2 (MoE), §1.3 (MLA). */
#include "internal.h"

#include <stddef.h>

typedef struct walk {
    gpufit__tgroup *out;
    size_t n;
} walk;

/* Appends a group; empty groups are skipped. The walk emits at most 10 global groups and 20
 * per layer class, 2 classes per model: well under GPUFIT__TGROUPS_MAX (tested). */
static void add(walk *w,
                enum gpufit__tkind kind,
                enum gpufit__where where,
                uint64_t copies,
                uint64_t rows,
                uint64_t cols)
{
    if (copies == 0 || rows == 0 || cols == 0 || w->n >= GPUFIT__TGROUPS_MAX)
        return;
    gpufit__tgroup g = {(uint16_t)kind, (uint16_t)where, (uint32_t)copies, rows, cols};
    w->out[w->n++] = g;
}

/* Tensors per norm instance: LayerNorm weight + bias, RMSNorm weight (memory-model.md §1.1). */
static uint64_t norm_tensors(const gpufit__shape *s)
{
    return s->norm == GPUFIT_NORM_LAYERNORM ? 2 : 1;
}

/* MLA attention: memory-model.md §1.3 (DeepSeek-V3 inference/model.py class MLA). */
static void mla_attention(walk *w, const gpufit__shape *s, enum gpufit__where where)
{
    if (s->r_q > 0) {
        add(w, GPUFIT__T_MLA_Q_A, where, 1, s->r_q, s->h);         /* wq_a */
        add(w, GPUFIT__T_NORM, where, norm_tensors(s), 1, s->r_q); /* q_norm */
        add(w, GPUFIT__T_ATTN_Q, where, 1, s->q, s->r_q);          /* wq_b */
    } else {
        add(w, GPUFIT__T_ATTN_Q, where, 1, s->q, s->h); /* wq */
    }
    add(w, GPUFIT__T_MLA_KV_A, where, 1, s->r_kv + s->d_r, s->h);             /* wkv_a + RoPE key */
    add(w, GPUFIT__T_NORM, where, norm_tensors(s), 1, s->r_kv);               /* kv_norm */
    add(w, GPUFIT__T_MLA_KV_B, where, 1, s->nq * (s->d_n + s->d_v), s->r_kv); /* wkv_b */
    add(w, GPUFIT__T_ATTN_O, where, 1, s->h, s->nq * s->d_v);                 /* wo */
    if (s->o_bias)
        add(w, GPUFIT__T_BIAS, where, 1, 1, s->h);
}

/* Self attention h·q + 2·h·c + q·h + [qkv_bias](q + 2c) + [o_bias]h: memory-model.md §1.1;
 * q/k norms of d_h each (Qwen3): §1.1 "Norms". */
static void attention(walk *w, const gpufit__shape *s, enum gpufit__where where)
{
    if (s->mla) {
        mla_attention(w, s, where);
        return;
    }
    add(w, GPUFIT__T_ATTN_Q, where, 1, s->q, s->h);
    add(w, GPUFIT__T_ATTN_K, where, 1, s->c, s->h);
    add(w, GPUFIT__T_ATTN_V, where, 1, s->c, s->h);
    add(w, GPUFIT__T_ATTN_O, where, 1, s->h, s->q);
    if (s->qkv_bias) {
        add(w, GPUFIT__T_BIAS, where, 1, 1, s->q);
        add(w, GPUFIT__T_BIAS, where, 2, 1, s->c);
    }
    if (s->o_bias)
        add(w, GPUFIT__T_BIAS, where, 1, 1, s->h);
    if (s->qk_norm)
        add(w, GPUFIT__T_NORM, where, 2 * norm_tensors(s), 1, s->dh);
}

/* Encoder-decoder cross attention: same shapes as self attention (HF T5LayerCrossAttention). */
static void cross_attention(walk *w, const gpufit__shape *s)
{
    add(w, GPUFIT__T_CROSS_Q, GPUFIT__W_DEC, 1, s->q, s->h);
    add(w, GPUFIT__T_CROSS_K, GPUFIT__W_DEC, 1, s->c, s->h);
    add(w, GPUFIT__T_CROSS_V, GPUFIT__W_DEC, 1, s->c, s->h);
    add(w, GPUFIT__T_CROSS_O, GPUFIT__W_DEC, 1, s->h, s->q);
    if (s->qkv_bias) {
        add(w, GPUFIT__T_BIAS, GPUFIT__W_DEC, 1, 1, s->q);
        add(w, GPUFIT__T_BIAS, GPUFIT__W_DEC, 2, 1, s->c);
    }
    if (s->o_bias)
        add(w, GPUFIT__T_BIAS, GPUFIT__W_DEC, 1, 1, s->h);
}

/* MLP of width f: gated 3·h·f + [bias](2f + h), else 2·h·f + [bias](f + h) (memory-model.md
 * §1.1). kinds[] = gate, up, down. Routed experts pass bias 0 (no MoE preset has them). */
static void mlp(walk *w,
                const gpufit__shape *s,
                enum gpufit__where where,
                const enum gpufit__tkind kinds[3],
                uint64_t copies,
                uint64_t f,
                int bias)
{
    if (s->gated)
        add(w, kinds[0], where, copies, f, s->h);
    add(w, kinds[1], where, copies, f, s->h);
    add(w, kinds[2], where, copies, s->h, f);
    if (bias) {
        add(w, GPUFIT__T_BIAS, where, copies * (s->gated ? 2 : 1), 1, f);
        add(w, GPUFIT__T_BIAS, where, copies, 1, s->h);
    }
}

static const enum gpufit__tkind ffn_kinds[3] = {GPUFIT__T_FFN_GATE, GPUFIT__T_FFN_UP,
                                                GPUFIT__T_FFN_DOWN};
static const enum gpufit__tkind exp_kinds[3] = {GPUFIT__T_EXP_GATE, GPUFIT__T_EXP_UP,
                                                GPUFIT__T_EXP_DOWN};
static const enum gpufit__tkind shexp_kinds[3] = {GPUFIT__T_SHEXP_GATE, GPUFIT__T_SHEXP_UP,
                                                  GPUFIT__T_SHEXP_DOWN};

/* Dense decoder layer or encoder layer: attention + MLP + 2 norms (memory-model.md §1.1). */
static void dense_layer(walk *w, const gpufit__shape *s, enum gpufit__where where)
{
    attention(w, s, where);
    mlp(w, s, where, ffn_kinds, 1, s->f, s->mlp_bias);
    add(w, GPUFIT__T_NORM, where, 2 * norm_tensors(s), 1, s->h);
}

/* MoE layer: attention + norms + router h·E (+E bias) + E experts + shared experts (+ h gate),
 * memory-model.md §1.2. */
static void moe_layer(walk *w, const gpufit__shape *s)
{
    attention(w, s, GPUFIT__W_MOE);
    add(w, GPUFIT__T_NORM, GPUFIT__W_MOE, 2 * norm_tensors(s), 1, s->h);
    add(w, GPUFIT__T_ROUTER, GPUFIT__W_MOE, 1, s->E, s->h);
    if (s->router_bias)
        add(w, GPUFIT__T_BIAS, GPUFIT__W_MOE, 1, 1, s->E);
    mlp(w, s, GPUFIT__W_MOE, exp_kinds, s->E, s->f_moe, 0);
    mlp(w, s, GPUFIT__W_MOE, shexp_kinds, s->n_shared, s->f_sh, s->mlp_bias);
    if (s->shexp_gate)
        add(w, GPUFIT__T_SHEXP_ROUTER_GATE, GPUFIT__W_MOE, 1, 1, s->h);
}

/* T5 decoder layer: self attention + cross attention + MLP + 3 norms (HF T5Block). */
static void decoder_layer(walk *w, const gpufit__shape *s)
{
    attention(w, s, GPUFIT__W_DEC);
    cross_attention(w, s);
    mlp(w, s, GPUFIT__W_DEC, ffn_kinds, 1, s->f, s->mlp_bias);
    add(w, GPUFIT__T_NORM, GPUFIT__W_DEC, 3 * norm_tensors(s), 1, s->h);
}

/* Embeddings, output head, final norms, pooler, relative-position bias (memory-model.md §1.1
 * "Embeddings"; BERT: HF BertEmbeddings/BertPooler; T5: one final norm and one relative bias
 * per stack, HF T5Stack). */
static void globals(walk *w, const gpufit__shape *s)
{
    const enum gpufit__where g = GPUFIT__W_GLOBAL;
    uint64_t stacks = s->arch == GPUFIT_ARCH_ENCODER_DECODER ? 2 : 1;
    add(w, GPUFIT__T_TOKEN_EMBD, g, 1, s->V, s->h);
    add(w, GPUFIT__T_POS_EMBD, g, stacks, s->max_position, s->h);
    add(w, GPUFIT__T_TYPE_EMBD, g, 1, s->type_vocab, s->h);
    if (s->emb_norm)
        add(w, GPUFIT__T_NORM, g, stacks * norm_tensors(s), 1, s->h);
    if (!s->tied)
        add(w, GPUFIT__T_OUTPUT, g, 1, s->V, s->h);
    if (s->arch != GPUFIT_ARCH_ENCODER) /* BERT is post-norm: no final norm */
        add(w, GPUFIT__T_NORM, g, stacks * norm_tensors(s), 1, s->h);
    if (s->pooler) {
        add(w, GPUFIT__T_POOLER, g, 1, s->h, s->h);
        add(w, GPUFIT__T_BIAS, g, 1, 1, s->h);
    }
    add(w, GPUFIT__T_REL_POS, g, stacks, s->rel_buckets, s->nq);
    /* a cross-attention layer is a self-attention layer's tensors plus q_norm and k_norm
     * (head_dim each) and two tanh gates (transformers MllamaCrossAttentionDecoderLayer):
     * 2 d_h + 2 parameters, counted here with the globals (a few KiB) */
    add(w, GPUFIT__T_NORM, g, s->n_cross, 1, 2 * s->dh + 2);
}

size_t gpufit__model_tensors(const gpufit__shape *s, gpufit__tgroup *out)
{
    walk w = {out, 0};
    if (s->arch == GPUFIT_ARCH_GENERIC) {
        add(&w, GPUFIT__T_GENERIC, GPUFIT__W_GLOBAL, 1, 1, s->n_params_generic);
        return w.n;
    }
    globals(&w, s); /* first: gpufit__uniform_bytes stops after them when it can */
    if (s->layers[GPUFIT__W_DENSE] > 0)
        dense_layer(&w, s, GPUFIT__W_DENSE);
    if (s->layers[GPUFIT__W_MOE] > 0)
        moe_layer(&w, s);
    if (s->layers[GPUFIT__W_ENC] > 0)
        dense_layer(&w, s, GPUFIT__W_ENC);
    if (s->layers[GPUFIT__W_DEC] > 0)
        decoder_layer(&w, s);
    return w.n;
}

static int is_routed_expert(uint16_t kind)
{
    return kind == GPUFIT__T_EXP_GATE || kind == GPUFIT__T_EXP_UP || kind == GPUFIT__T_EXP_DOWN;
}

/* Parameters of one group: copies·rows·cols, and those used per token (top-k of E experts). */
static int
group_size(const gpufit__shape *s, const gpufit__tgroup *g, uint64_t *all, uint64_t *active)
{
    uint64_t one, used = g->copies;
    if (is_routed_expert(g->kind) && s->k < used)
        used = s->k; /* memory-model.md §1.2: P_moe_active uses k·P_expert */
    int ovf = gpufit__mul(g->rows, g->cols, &one);
    ovf |= gpufit__mul(one, g->copies, all); /* the builtins always store their result */
    ovf |= gpufit__mul(one, used, active);
    return ovf;
}

int32_t gpufit__model_count(const gpufit__shape *s, gpufit__counts *out, gpufit_error *err)
{
    gpufit__tgroup groups[GPUFIT__TGROUPS_MAX];
    gpufit__counts c = {0};
    uint64_t layer_active[GPUFIT__W_COUNT] = {0};
    size_t n = gpufit__model_tensors(s, groups);
    int ovf = 0;
    for (size_t i = 0; i < n; i++) {
        const gpufit__tgroup *g = &groups[i];
        uint64_t all, active;
        ovf |= group_size(s, g, &all, &active);
        if (g->where == GPUFIT__W_GLOBAL) {
            ovf |= gpufit__add(c.global, all, &c.global);
            if (g->kind == GPUFIT__T_TOKEN_EMBD)
                c.embedding = all;
            if (g->kind == GPUFIT__T_OUTPUT)
                c.output = all;
        } else {
            ovf |= gpufit__add(c.per_layer[g->where], all, &c.per_layer[g->where]);
            ovf |= gpufit__add(layer_active[g->where], active, &layer_active[g->where]);
        }
    }
    /* P = Σ_class L_class·P_layer + globals (memory-model.md §1.1 "Total", §1.2). */
    c.total = c.active = c.global;
    for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++) {
        uint64_t t, a;
        ovf |= gpufit__mul(s->layers[w], c.per_layer[w], &t);
        ovf |= gpufit__mul(s->layers[w], layer_active[w], &a);
        ovf |= gpufit__add(c.total, t, &c.total);
        ovf |= gpufit__add(c.active, a, &c.active);
        if (s->layers[w] > 0 && c.per_layer[w] > c.largest_layer)
            c.largest_layer = c.per_layer[w];
    }
    if (ovf)
        return gpufit__fail(err, GPUFIT_E_OVERFLOW, 0, UINT64_MAX,
                            "parameter count does not fit in 64 bits");
    *out = c;
    gpufit__ok(err);
    return GPUFIT_OK;
}
