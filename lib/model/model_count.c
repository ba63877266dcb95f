/* SPDX-License-Identifier: MIT */
/* Exact parameter counts: the model as a list of tensor groups, and their sums.
 * A group is `copies` tensors of rows x cols, present once (GLOBAL) or in every layer of its
 * class. Formulas: memory-model.md §1.1 (dense), §1.2 (MoE), §1.3 (MLA). */
#include "internal.h"

#include <stddef.h>

typedef struct walk {
    gpufit__tgroup *out;
    size_t n;
} walk;

/* Appends a group; empty groups are skipped. The walk emits at most 10 global groups, 7 vision
 * groups and 20 per layer class, 2 classes per model: under GPUFIT__TGROUPS_MAX (tested). */
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

/* Rows of Mllama's aspect-ratio embeddings: one per (w, h) tile grid with w x h <= tiles, plus
 * row 0 (transformers MllamaVisionConfig supported_aspect_ratios, max_aspect_ratio_id + 1). */
static uint64_t mllama_ratio_rows(uint64_t tiles)
{
    uint64_t n = 1;
    for (uint64_t w = 1; w <= tiles; w++)
        n += tiles / w;
    return n;
}

/* The vision encoder and its projector, as global tensors on the embedding's side
 * (docs/memory/multimodal.md; shapes from transformers models/<family>/modeling_*.py):
 * matrices of the blocks and of the projector as 2-D groups (split over tp, as vLLM's parallel
 * linears are), everything vLLM replicates (patch convolution, class token, positions, norms,
 * biases, gates) as one 1-D group.
 *   CLIPVisionTransformer: conv (no bias), class_embedding, position_embedding (N + 1),
 *     pre_layrnorm; layers q, k, v, out_proj + fc1, fc2 with biases, two LayerNorms;
 *     post_layernorm.
 *   SiglipVisionTransformer: conv with bias, position_embedding (N), layers as CLIP,
 *     post_layernorm (no head: vision_use_head false in Gemma 3).
 *   Qwen2VisionTransformerPretrainedModel: Conv3d (no bias, 2 frames), blocks qkv + proj and
 *     fc1, fc2 with biases, LayerNorm norm1/norm2; Qwen2.5-VL: RMSNorm, gated MLP with biases.
 *   PixtralVisionModel: conv (no bias), ln_pre RMSNorm, q, k, v, o and gate, up, down without
 *     biases, RMSNorm attention_norm/ffn_norm.
 *   MllamaVisionModel: conv (no bias), class_embedding, gated positional embedding (N + 1) with
 *     its tile_embedding (ratios x tiles (N + 1) h), pre/post tile embeddings (ratios x tiles h,
 *     gated), layernorm_pre/post, layers q, k, v, o without biases and fc1, fc2 with biases;
 *     the last 8 layers (global_transformer, num_global_layers) have gate_attn and gate_ffn.
 *   Projectors: LlavaMultiModalProjector linear_1 (h_v -> h) + linear_2 (h -> h) with biases
 *     (LLaVA-NeXT adds image_newline, h); Qwen2-VL PatchMerger ln_q + Linear(4 h_v, 4 h_v) +
 *     Linear(4 h_v, h) with biases; Gemma3MultiModalProjector mm_soft_emb_norm (RMS, h_v) +
 *     mm_input_projection_weight (h_v x h, replicated in vLLM); Mistral3MultiModalProjector
 *     norm (RMS) + patch_merger Linear(m^2 h_v, h_v) + linear_1 (h_v -> h) + linear_2 (h -> h),
 *     no biases (multimodal_projector_bias false); Mllama multi_modal_projector
 *     Linear(6 h_v, h) with bias (vision_output_dim = h_v x (1 + 5 intermediate layers)). */
static void vision(walk *w, const gpufit__shape *s)
{
    const enum gpufit__where g = GPUFIT__W_GLOBAL;
    const enum gpufit__tkind k = GPUFIT__T_VISION;
    uint64_t hv = s->v_h, L = s->v_layers, f = s->v_f, h = s->h, m2 = s->v_merge * s->v_merge;
    int st = s->v_style;
    int ln = st == GPUFIT_VISION_CLIP || st == GPUFIT_VISION_SIGLIP ||
             st == GPUFIT_VISION_QWEN2_VL || st == GPUFIT_VISION_MLLAMA;
    int attn_bias = st == GPUFIT_VISION_CLIP || st == GPUFIT_VISION_SIGLIP ||
                    st == GPUFIT_VISION_QWEN2_VL || st == GPUFIT_VISION_QWEN2_5_VL;
    int mlp_bias = st != GPUFIT_VISION_PIXTRAL;
    int gated = st == GPUFIT_VISION_QWEN2_5_VL || st == GPUFIT_VISION_PIXTRAL;
    uint64_t nrm = ln ? 2 * hv : hv; /* one norm: LayerNorm weight + bias, RMSNorm weight */
    if (L == 0)
        return; /* a text-only model */
    /* replicated elements */
    uint64_t r = hv * s->v_pix;           /* patch embedding */
    if (st == GPUFIT_VISION_SIGLIP)
        r += hv;                          /* its bias */
    if (st == GPUFIT_VISION_CLIP || st == GPUFIT_VISION_SIGLIP)
        r += s->v_pos * hv;               /* learned positions (+ class token's for CLIP) */
    if (st == GPUFIT_VISION_CLIP)
        r += hv + nrm;                    /* class_embedding, pre_layrnorm */
    if (st == GPUFIT_VISION_PIXTRAL)
        r += nrm;                         /* ln_pre */
    if (st == GPUFIT_VISION_MLLAMA) {
        uint64_t rows = mllama_ratio_rows(s->v_tiles);
        r += hv + s->v_pos * hv + 1;              /* class, positions and their gate */
        r += rows * s->v_tiles * s->v_pos * hv;   /* tile_embedding */
        r += 2 * (rows * s->v_tiles * hv + 1);    /* pre/post tile embeddings, gated */
        r += 2 * nrm + 2 * 8;                     /* layernorm_pre/post, 8 global layers' gates */
    }
    if (st == GPUFIT_VISION_CLIP || st == GPUFIT_VISION_SIGLIP)
        r += nrm;                         /* post_layernorm */
    r += L * 2 * nrm;                     /* two norms per layer */
    if (attn_bias)
        r += L * 4 * hv;                  /* q, k, v, o biases */
    if (mlp_bias)
        r += L * ((gated ? 2 : 1) * f + hv);
    switch (s->v_proj) {
    case GPUFIT_VPROJ_MLP_NEWLINE: r += 3 * h; break; /* biases and image_newline */
    case GPUFIT_VPROJ_MLP: r += 2 * h; break;
    case GPUFIT_VPROJ_MERGER: r += nrm + hv * m2 + h; break;
    case GPUFIT_VPROJ_GEMMA3: r += hv + hv * h; break;
    case GPUFIT_VPROJ_MISTRAL3: r += hv; break;
    default: r += h; break; /* Mllama: the bias */
    }
    add(w, k, g, 1, 1, r);
    /* split matrices */
    add(w, k, g, 4 * L, hv, hv);
    add(w, k, g, (gated ? 2 : 1) * L, f, hv);
    add(w, k, g, L, hv, f);
    switch (s->v_proj) {
    case GPUFIT_VPROJ_MLP:
    case GPUFIT_VPROJ_MLP_NEWLINE:
        add(w, k, g, 1, h, hv * m2);
        add(w, k, g, 1, h, h);
        break;
    case GPUFIT_VPROJ_MERGER:
        add(w, k, g, 1, hv * m2, hv * m2);
        add(w, k, g, 1, h, hv * m2);
        break;
    case GPUFIT_VPROJ_MISTRAL3:
        add(w, k, g, 1, hv, hv * m2);
        add(w, k, g, 1, h, hv);
        add(w, k, g, 1, h, h);
        break;
    case GPUFIT_VPROJ_MLLAMA: add(w, k, g, 1, h, 6 * hv); break;
    default: break; /* Gemma 3: the replicated matrix above */
    }
}

size_t gpufit__model_tensors(const gpufit__shape *s, gpufit__tgroup *out)
{
    walk w = {out, 0};
    if (s->arch == GPUFIT_ARCH_GENERIC) {
        add(&w, GPUFIT__T_GENERIC, GPUFIT__W_GLOBAL, 1, 1, s->n_params_generic);
        return w.n;
    }
    globals(&w, s); /* first: gpufit__uniform_bytes stops after them when it can */
    vision(&w, s);
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
    size_t n = gpufit__model_tensors(s, groups);
    return gpufit__model_count_groups(s, groups, n, out, err);
}

int32_t gpufit__model_count_groups(const gpufit__shape *s, const gpufit__tgroup *groups, size_t n,
                                   gpufit__counts *out, gpufit_error *err)
{
    gpufit__counts c = {0};
    uint64_t layer_active[GPUFIT__W_COUNT] = {0};
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
            if (g->kind == GPUFIT__T_VISION)
                ovf |= gpufit__add(c.vision, all, &c.vision);
        } else {
            if (gpufit__is_linear(g->kind) && g->rows > 1 && g->rows * g->cols > c.largest_matrix)
                c.largest_matrix = g->rows * g->cols; /* <= all, checked above */
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
