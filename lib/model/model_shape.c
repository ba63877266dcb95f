/* SPDX-License-Identifier: MIT */
/* Model validation and derived geometry: struct gpufit_model -> gpufit__shape.
 * Every error names the offending key in the spelling of scenario.md. */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* Accepted range of one integer field. The bounds keep every product of the parameter count
 * far from 2^64 (hidden <= 2^24, vocab <= 2^28, layers <= 2^20, experts <= 2^16). */
typedef struct field_range {
    size_t offset;
    int32_t param;
    const char *name; /* scenario.md key = struct field name */
    int64_t min, max;
} field_range;

/* One row per field: (field, id, lo, hi). The table names a field in an error; the check
 * itself is unrolled from the same list (a constant compare per field, no table walk). */
#define P2(n) ((int64_t)1 << (n))
/* clang-format off */
#define RANGES(R) \
    R(arch, GPUFIT_MODEL_ARCH, 0, GPUFIT_ARCH_GENERIC) \
    R(n_layers, GPUFIT_MODEL_N_LAYERS, 0, P2(20)) \
    R(hidden_size, GPUFIT_MODEL_HIDDEN_SIZE, 0, P2(24)) \
    R(n_heads, GPUFIT_MODEL_N_HEADS, 0, P2(20)) \
    R(n_kv_heads, GPUFIT_MODEL_N_KV_HEADS, 0, P2(20)) \
    R(head_dim, GPUFIT_MODEL_HEAD_DIM, 0, P2(20)) \
    R(ffn_hidden_size, GPUFIT_MODEL_FFN_HIDDEN_SIZE, 0, P2(28)) \
    R(mlp, GPUFIT_MODEL_MLP, 0, GPUFIT_MLP_GEGLU) \
    R(vocab_size, GPUFIT_MODEL_VOCAB_SIZE, 0, P2(28)) \
    R(tied_embeddings, GPUFIT_MODEL_TIED_EMBEDDINGS, 0, 1) \
    R(norm, GPUFIT_MODEL_NORM, 0, GPUFIT_NORM_RMSNORM) \
    R(qkv_bias, GPUFIT_MODEL_QKV_BIAS, 0, 1) \
    R(mlp_bias, GPUFIT_MODEL_MLP_BIAS, 0, 1) \
    R(max_position, GPUFIT_MODEL_MAX_POSITION, 0, P2(32)) \
    R(rope_positions, GPUFIT_MODEL_ROPE_POSITIONS, 0, P2(26)) \
    R(rotary_dim, GPUFIT_MODEL_ROTARY_DIM, 0, P2(16)) \
    R(o_bias, GPUFIT_MODEL_O_BIAS, -1, 1) \
    R(emb_norm, GPUFIT_MODEL_EMB_NORM, -1, 1) \
    R(qk_norm, GPUFIT_MODEL_QK_NORM, 0, 1) \
    R(type_vocab_size, GPUFIT_MODEL_TYPE_VOCAB_SIZE, 0, P2(20)) \
    R(pooler, GPUFIT_MODEL_POOLER, 0, 1) \
    R(n_experts, GPUFIT_MODEL_N_EXPERTS, 0, P2(16)) \
    R(n_shared_experts, GPUFIT_MODEL_N_SHARED_EXPERTS, 0, P2(16)) \
    R(experts_per_token, GPUFIT_MODEL_EXPERTS_PER_TOKEN, 0, P2(16)) \
    R(moe_ffn_hidden_size, GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, 0, P2(28)) \
    R(n_dense_layers, GPUFIT_MODEL_N_DENSE_LAYERS, 0, P2(20)) \
    R(shared_ffn_hidden_size, GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE, 0, P2(28)) \
    R(router_bias, GPUFIT_MODEL_ROUTER_BIAS, 0, 1) \
    R(shared_expert_gate, GPUFIT_MODEL_SHARED_EXPERT_GATE, 0, 1) \
    R(q_lora_rank, GPUFIT_MODEL_Q_LORA_RANK, 0, P2(24)) \
    R(kv_lora_rank, GPUFIT_MODEL_KV_LORA_RANK, 0, P2(24)) \
    R(qk_nope_head_dim, GPUFIT_MODEL_QK_NOPE_HEAD_DIM, 0, P2(20)) \
    R(qk_rope_head_dim, GPUFIT_MODEL_QK_ROPE_HEAD_DIM, 0, P2(20)) \
    R(v_head_dim, GPUFIT_MODEL_V_HEAD_DIM, 0, P2(20)) \
    R(n_encoder_layers, GPUFIT_MODEL_N_ENCODER_LAYERS, 0, P2(20)) \
    R(n_decoder_layers, GPUFIT_MODEL_N_DECODER_LAYERS, 0, P2(20)) \
    R(rel_pos_buckets, GPUFIT_MODEL_REL_POS_BUCKETS, 0, P2(20)) \
    R(sliding_window, GPUFIT_MODEL_SLIDING_WINDOW, 0, P2(26)) \
    R(sliding_window_pattern, GPUFIT_MODEL_SLIDING_WINDOW_PATTERN, 0, P2(20)) \
    R(n_cross_attn_layers, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS, 0, P2(20)) \
    R(cross_attn_tokens, GPUFIT_MODEL_CROSS_ATTN_TOKENS, 0, P2(26)) \
    R(vision_layers, GPUFIT_MODEL_VISION_LAYERS, 0, P2(10)) \
    R(vision_hidden_size, GPUFIT_MODEL_VISION_HIDDEN_SIZE, 0, P2(16)) \
    R(vision_heads, GPUFIT_MODEL_VISION_HEADS, 0, P2(10)) \
    R(vision_ffn_hidden_size, GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE, 0, P2(18)) \
    R(vision_patch_size, GPUFIT_MODEL_VISION_PATCH_SIZE, 0, P2(10)) \
    R(vision_image_size, GPUFIT_MODEL_VISION_IMAGE_SIZE, 0, P2(16)) \
    R(vision_merge, GPUFIT_MODEL_VISION_MERGE, 1, 64) \
    R(vision_style, GPUFIT_MODEL_VISION_STYLE, 0, GPUFIT_VISION_MLLAMA) \
    R(vision_projector, GPUFIT_MODEL_VISION_PROJECTOR, 0, GPUFIT_VPROJ_MLLAMA) \
    R(vision_tiles, GPUFIT_MODEL_VISION_TILES, 1, 64) \
    R(n_params, GPUFIT_MODEL_N_PARAMS, 0, INT64_MAX)
#define ROW(field, id, lo, hi) {offsetof(struct gpufit_model, field), id, #field, lo, hi},
/* clang-format on */
static const field_range ranges[] = {RANGES(ROW)};
#undef ROW

static int64_t field(const struct gpufit_model *m, const field_range *r)
{
    int64_t v;
    memcpy(&v, (const char *)m + r->offset, sizeof v);
    return v;
}

/* a field outside its constant bounds (the compiler folds the pair into one compare) */
#define OUTSIDE(field, id, lo, hi) | (m->field < (lo) || m->field > (hi))

static int32_t check_ranges(const struct gpufit_model *m, gpufit_error *err)
{
    /* every refresh runs this: the unrolled test first, the table only to name the field */
    if (!(0 RANGES(OUTSIDE)))
        return GPUFIT_OK;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        const field_range *r = &ranges[i];
        int64_t v = field(m, r);
        if (v < r->min || v > r->max)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, r->param, UINT64_MAX,
                                "%s (%" PRId64 ") must be between %" PRId64 " and %" PRId64,
                                r->name, v, r->min, r->max);
    }
    return GPUFIT_OK;
}

static int32_t need_positive(int64_t v, int32_t param, const char *name, gpufit_error *err)
{
    if (v > 0)
        return GPUFIT_OK;
    /* the setters accept only values >= 1, so 0 here is the "not set" default */
    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, param, UINT64_MAX,
                        "%s is not set (give a preset, a model file or %s=N)", name, name);
}

/* Generic model: only a parameter count (and optionally saved bytes per token) is known. */
static int32_t resolve_generic(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    int32_t st = need_positive(m->n_params, GPUFIT_MODEL_N_PARAMS, "n_params", err);
    if (st != GPUFIT_OK)
        return st;
    double a = m->activation_bytes_per_token;
    if (!isfinite(a) || a < 0.0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_ACTIVATION_BYTES_PER_TOKEN,
                            UINT64_MAX, "activation_bytes_per_token must be finite and >= 0");
    s->n_params_generic = (uint64_t)m->n_params;
    s->act_bytes_per_token = a;
    return GPUFIT_OK;
}

/* Hidden size, heads, head dim, vocabulary. */
static int32_t resolve_dims(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    int32_t st = need_positive(m->hidden_size, GPUFIT_MODEL_HIDDEN_SIZE, "hidden_size", err);
    if (st == GPUFIT_OK)
        st = need_positive(m->n_heads, GPUFIT_MODEL_N_HEADS, "n_heads", err);
    if (st == GPUFIT_OK)
        st = need_positive(m->vocab_size, GPUFIT_MODEL_VOCAB_SIZE, "vocab_size", err);
    if (st != GPUFIT_OK)
        return st;
    int64_t nq = m->n_heads;
    int64_t nkv = m->n_kv_heads > 0 ? m->n_kv_heads : nq; /* scenario.md: default n_heads */
    if (nkv > nq || nq % nkv != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_KV_HEADS, UINT64_MAX,
                            "n_kv_heads (%" PRId64 ") must divide n_heads (%" PRId64 ")", nkv, nq);
    int64_t dh = m->head_dim;
    if (dh == 0 && m->kv_lora_rank == 0) { /* scenario.md: default hidden / heads */
        if (m->hidden_size % nq != 0)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_HEADS, UINT64_MAX,
                                "n_heads (%" PRId64 ") must divide hidden_size (%" PRId64
                                ") when head_dim is 0",
                                nq, m->hidden_size);
        dh = m->hidden_size / nq;
    }
    s->h = (uint64_t)m->hidden_size;
    s->nq = (uint64_t)nq;
    s->nkv = (uint64_t)nkv;
    s->dh = (uint64_t)dh;
    s->q = s->nq * s->dh; /* memory-model.md §0: q = n_q·d_h, c = n_kv·d_h */
    s->c = s->nkv * s->dh;
    s->V = (uint64_t)m->vocab_size;
    return GPUFIT_OK;
}

/* Multi-head latent attention (DeepSeek-V2/V3), memory-model.md §1.3. */
static int32_t resolve_mla(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    if (m->kv_lora_rank == 0)
        return GPUFIT_OK;
    if (m->arch != GPUFIT_ARCH_DECODER)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_KV_LORA_RANK, UINT64_MAX,
                            "kv_lora_rank (multi-head latent attention) needs arch decoder");
    if (m->qkv_bias || m->qk_norm)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED,
                            m->qkv_bias ? GPUFIT_MODEL_QKV_BIAS : GPUFIT_MODEL_QK_NORM, UINT64_MAX,
                            "%s is not modelled with kv_lora_rank (MLA)",
                            m->qkv_bias ? "qkv_bias" : "qk_norm");
    int32_t st =
        need_positive(m->qk_nope_head_dim, GPUFIT_MODEL_QK_NOPE_HEAD_DIM, "qk_nope_head_dim", err);
    if (st == GPUFIT_OK)
        st = need_positive(m->qk_rope_head_dim, GPUFIT_MODEL_QK_ROPE_HEAD_DIM, "qk_rope_head_dim",
                           err);
    if (st == GPUFIT_OK)
        st = need_positive(m->v_head_dim, GPUFIT_MODEL_V_HEAD_DIM, "v_head_dim", err);
    if (st != GPUFIT_OK)
        return st;
    s->mla = 1;
    s->r_q = (uint64_t)m->q_lora_rank;
    s->r_kv = (uint64_t)m->kv_lora_rank;
    s->d_n = (uint64_t)m->qk_nope_head_dim;
    s->d_r = (uint64_t)m->qk_rope_head_dim;
    s->d_v = (uint64_t)m->v_head_dim;
    s->nkv = s->nq;          /* decompressed keys/values: one per query head */
    s->dh = s->d_n + s->d_r; /* q/k head dim (DeepSeek-V3 model.py qk_head_dim) */
    s->q = s->nq * (s->d_n + s->d_r);
    s->c = s->r_kv + s->d_r; /* latent cached per token: kv_norm input + shared RoPE key */
    return GPUFIT_OK;
}

/* Mixture of experts, memory-model.md §1.2. Fills E, k, n_shared, f_moe, f_sh. */
static int32_t resolve_moe(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    if (m->n_experts == 0)
        return GPUFIT_OK;
    if (m->arch != GPUFIT_ARCH_DECODER)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_N_EXPERTS, UINT64_MAX,
                            "n_experts (mixture of experts) needs arch decoder");
    if (m->experts_per_token < 1 || m->experts_per_token > m->n_experts)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_EXPERTS_PER_TOKEN, UINT64_MAX,
                            "experts_per_token (%" PRId64
                            ") must be between 1 and n_experts (%" PRId64 ")",
                            m->experts_per_token, m->n_experts);
    if (m->n_dense_layers > m->n_layers)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_DENSE_LAYERS, UINT64_MAX,
                            "n_dense_layers (%" PRId64 ") must not exceed n_layers (%" PRId64 ")",
                            m->n_dense_layers, m->n_layers);
    int64_t f_moe = m->moe_ffn_hidden_size > 0 ? m->moe_ffn_hidden_size : m->ffn_hidden_size;
    int32_t st = need_positive(f_moe, GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, "moe_ffn_hidden_size", err);
    if (st != GPUFIT_OK)
        return st;
    s->E = (uint64_t)m->n_experts;
    s->k = (uint64_t)m->experts_per_token;
    s->n_shared = (uint64_t)m->n_shared_experts;
    s->f_moe = (uint64_t)f_moe;
    s->f_sh = m->shared_ffn_hidden_size > 0 ? (uint64_t)m->shared_ffn_hidden_size : s->f_moe;
    s->router_bias = (int32_t)m->router_bias;
    s->shexp_gate = m->n_shared_experts > 0 ? (int32_t)m->shared_expert_gate : 0;
    return GPUFIT_OK;
}

/* Layers per class: dense / MoE decoder layers, encoder layers, encoder-decoder stacks. */
static int32_t resolve_layers(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    if (m->arch == GPUFIT_ARCH_ENCODER_DECODER) {
        /* HF T5Config: a stack left at 0 falls back to num_layers. */
        int64_t enc = m->n_encoder_layers > 0 ? m->n_encoder_layers : m->n_layers;
        int64_t dec = m->n_decoder_layers > 0 ? m->n_decoder_layers : m->n_layers;
        int32_t st = need_positive(enc, GPUFIT_MODEL_N_ENCODER_LAYERS, "n_encoder_layers", err);
        if (st == GPUFIT_OK)
            st = need_positive(dec, GPUFIT_MODEL_N_DECODER_LAYERS, "n_decoder_layers", err);
        if (st != GPUFIT_OK)
            return st;
        s->layers[GPUFIT__W_ENC] = (uint64_t)enc;
        s->layers[GPUFIT__W_DEC] = (uint64_t)dec;
    } else {
        int32_t st = need_positive(m->n_layers, GPUFIT_MODEL_N_LAYERS, "n_layers", err);
        if (st != GPUFIT_OK)
            return st;
        uint64_t dense = s->E > 0 ? (uint64_t)m->n_dense_layers : (uint64_t)m->n_layers;
        s->layers[GPUFIT__W_DENSE] = dense;
        s->layers[GPUFIT__W_MOE] = (uint64_t)m->n_layers - dense;
    }
    uint64_t dense_mlps =
        s->layers[GPUFIT__W_DENSE] + s->layers[GPUFIT__W_ENC] + s->layers[GPUFIT__W_DEC];
    if (dense_mlps > 0 && m->ffn_hidden_size <= 0)
        return need_positive(m->ffn_hidden_size, GPUFIT_MODEL_FFN_HIDDEN_SIZE, "ffn_hidden_size",
                             err);
    s->f = (uint64_t)m->ffn_hidden_size;
    s->w_first = GPUFIT__W_COUNT;
    s->w_end = GPUFIT__W_DENSE;
    for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++) {
        s->n_layers += s->layers[w];
        if (s->layers[w] > 0) {
            s->w_first = s->w_first < w ? s->w_first : w;
            s->w_end = w + 1;
        }
    }
    return GPUFIT_OK;
}

/* Vision encoder (docs/memory/multimodal.md). Without vision_layers every other vision key
 * must keep its default: a width or image size given alone is refused, not ignored. The
 * bounds (width <= 2^16, image side <= 2^16, tiles <= 64) keep patches x width x 16 bytes far
 * from 2^64. */
static int32_t resolve_vision(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    static const struct {
        size_t off;
        int32_t id;
        const char *name;
        int64_t def;
    } keys[] = {
        {offsetof(struct gpufit_model, vision_hidden_size), GPUFIT_MODEL_VISION_HIDDEN_SIZE,
         "vision_hidden_size", 0},
        {offsetof(struct gpufit_model, vision_heads), GPUFIT_MODEL_VISION_HEADS, "vision_heads",
         0},
        {offsetof(struct gpufit_model, vision_ffn_hidden_size),
         GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE, "vision_ffn_hidden_size", 0},
        {offsetof(struct gpufit_model, vision_patch_size), GPUFIT_MODEL_VISION_PATCH_SIZE,
         "vision_patch_size", 0},
        {offsetof(struct gpufit_model, vision_image_size), GPUFIT_MODEL_VISION_IMAGE_SIZE,
         "vision_image_size", 0},
        {offsetof(struct gpufit_model, vision_merge), GPUFIT_MODEL_VISION_MERGE, "vision_merge", 1},
        {offsetof(struct gpufit_model, vision_style), GPUFIT_MODEL_VISION_STYLE, "vision_style", 0},
        {offsetof(struct gpufit_model, vision_projector), GPUFIT_MODEL_VISION_PROJECTOR,
         "vision_projector", 0},
        {offsetof(struct gpufit_model, vision_tiles), GPUFIT_MODEL_VISION_TILES, "vision_tiles", 1},
    };
    if (m->vision_layers == 0) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            int64_t v;
            memcpy(&v, (const char *)m + keys[i].off, sizeof v);
            if (v != keys[i].def)
                return gpufit__fail(err, GPUFIT_E_INCONSISTENT, keys[i].id, UINT64_MAX,
                                    "%s is set but the model has no vision encoder (set "
                                    "vision_layers)",
                                    keys[i].name);
        }
        return GPUFIT_OK;
    }
    if (m->arch != GPUFIT_ARCH_DECODER)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, UINT64_MAX,
                            "vision_layers (a vision encoder) needs arch decoder");
    for (size_t i = 0; i < 5; i++) { /* width, heads, MLP, patch, image are required */
        int64_t v;
        memcpy(&v, (const char *)m + keys[i].off, sizeof v);
        int32_t st = need_positive(v, keys[i].id, keys[i].name, err);
        if (st != GPUFIT_OK)
            return st;
    }
    int64_t hv = m->vision_hidden_size, p = m->vision_patch_size, mg = m->vision_merge;
    if (hv % m->vision_heads != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_VISION_HEADS, UINT64_MAX,
                            "vision_heads (%" PRId64 ") must divide vision_hidden_size (%" PRId64
                            ")",
                            m->vision_heads, hv);
    if (m->vision_image_size % (p * mg) != 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_VISION_IMAGE_SIZE, UINT64_MAX,
                            "vision_image_size (%" PRId64 ") must be a multiple of "
                            "vision_patch_size x vision_merge (%" PRId64 " x %" PRId64 ")",
                            m->vision_image_size, p, mg);
    s->v_style = (int32_t)m->vision_style;
    s->v_proj = (int32_t)m->vision_projector;
    s->v_layers = (uint64_t)m->vision_layers;
    s->v_h = (uint64_t)hv;
    s->v_heads = (uint64_t)m->vision_heads;
    s->v_f = (uint64_t)m->vision_ffn_hidden_size;
    s->v_patch = (uint64_t)p;
    s->v_grid = (uint64_t)(m->vision_image_size / p);
    s->v_merge = (uint64_t)mg;
    s->v_tiles = (uint64_t)m->vision_tiles;
    /* positions per tile: the patches, and the class token of CLIP and Mllama */
    int cls = s->v_style == GPUFIT_VISION_CLIP || s->v_style == GPUFIT_VISION_MLLAMA;
    s->v_pos = s->v_grid * s->v_grid + (uint64_t)cls;
    /* pixels a patch embeds: 3 channels x p^2, x 2 frames for the 3-D convolution of Qwen2-VL
     * (temporal_patch_size 2: an image is repeated to two frames) */
    int qwen = s->v_style == GPUFIT_VISION_QWEN2_VL || s->v_style == GPUFIT_VISION_QWEN2_5_VL;
    s->v_pix = 3 * s->v_patch * s->v_patch * (qwen ? 2 : 1);
    /* tokens an image becomes: LLaVA drops the class token (vision_feature_select_strategy
     * "default"), Mllama keeps every position of every tile (its cross-attention states),
     * the others merge mg x mg patches (Qwen2-VL merger, Gemma 3 average pool, Mistral 3
     * patch merger) */
    uint64_t per_tile = s->v_style == GPUFIT_VISION_MLLAMA
                            ? s->v_pos
                            : (s->v_grid / s->v_merge) * (s->v_grid / s->v_merge);
    s->v_tokens = per_tile * s->v_tiles;
    /* the projector's widest intermediate per output token (its activation) */
    switch (s->v_proj) {
    case GPUFIT_VPROJ_MERGER: s->v_proj_mid = s->v_h * s->v_merge * s->v_merge; break;
    case GPUFIT_VPROJ_MLP:
    case GPUFIT_VPROJ_MLP_NEWLINE:
    case GPUFIT_VPROJ_MISTRAL3: s->v_proj_mid = s->h; break;
    default: s->v_proj_mid = 0; break;
    }
    return GPUFIT_OK;
}

int32_t gpufit__model_resolve(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err)
{
    if (m == NULL || s == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "model is NULL");
    memset(s, 0, sizeof *s);
    int32_t st = check_ranges(m, err);
    if (st == GPUFIT_OK)
        st = gpufit__check_applies(
            GPUFIT_DOMAIN_MODEL, m,
            (m->n_experts > 0 ? GPUFIT__AP_MOE : 0u) |
                (m->arch == GPUFIT_ARCH_ENCODER_DECODER ? GPUFIT__AP_ENCDEC : 0u) |
                (m->kv_lora_rank > 0 ? GPUFIT__AP_MLA : 0u),
            err);
    if (st != GPUFIT_OK)
        return st;
    s->arch = (int32_t)m->arch;
    /* per-module checkpoint storage (docs/memory/quantisation.md); experts follow the MLP */
    const int64_t md[5] = {m->embedding_dtype, m->attention_dtype, m->mlp_dtype, m->output_dtype,
                           m->expert_dtype >= 0 ? m->expert_dtype : m->mlp_dtype};
    static const char *const mname[5] = {"embedding_dtype", "attention_dtype", "mlp_dtype",
                                         "output_dtype", "expert_dtype"};
    static const int32_t mid[5] = {GPUFIT_MODEL_EMBEDDING_DTYPE, GPUFIT_MODEL_ATTENTION_DTYPE,
                                   GPUFIT_MODEL_MLP_DTYPE, GPUFIT_MODEL_OUTPUT_DTYPE,
                                   GPUFIT_MODEL_EXPERT_DTYPE};
    for (int i = 0; i < 5; i++) {
        if (md[i] == GPUFIT_DTYPE_NONE || (md[i] > 0 && gpufit__dtype(md[i]) == NULL))
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, mid[i], UINT64_MAX,
                                "%s: a module's storage dtype cannot be none", mname[i]);
        s->mod_dt[i] = md[i];
        s->quant |= md[i] >= 0;
    }
    if (m->arch == GPUFIT_ARCH_GENERIC) {
        st = resolve_generic(m, s, err);
        if (st == GPUFIT_OK)
            st = resolve_vision(m, s, err);
        if (st == GPUFIT_OK)
            gpufit__ok(err);
        return st;
    }
    st = resolve_dims(m, s, err);
    if (st == GPUFIT_OK)
        st = resolve_mla(m, s, err);
    if (st == GPUFIT_OK)
        st = resolve_moe(m, s, err);
    if (st == GPUFIT_OK)
        st = resolve_layers(m, s, err);
    if (st == GPUFIT_OK)
        st = resolve_vision(m, s, err);
    if (st != GPUFIT_OK)
        return st;
    s->mlp = (int32_t)m->mlp;
    s->norm = (int32_t)m->norm;
    s->gated = m->mlp == GPUFIT_MLP_SWIGLU || m->mlp == GPUFIT_MLP_GEGLU;
    s->tied = (uint64_t)m->tied_embeddings;
    s->max_position = (uint64_t)m->max_position;
    /* the RoPE tables rotate rotary_dim of each head: all of it unless partial (MLA: the
     * shared rope part) */
    s->rope_rows = (uint64_t)m->rope_positions;
    uint64_t rot_max = s->d_r > 0 ? s->d_r : s->dh;
    if ((uint64_t)m->rotary_dim > rot_max)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_ROTARY_DIM, UINT64_MAX,
                            "rotary_dim (%" PRId64 ") exceeds the rotated head dimension "
                            "(%" PRIu64 ": %s)",
                            m->rotary_dim, rot_max, s->d_r > 0 ? "qk_rope_head_dim" : "head_dim");
    s->rope_dim = m->rotary_dim > 0 ? (uint64_t)m->rotary_dim : rot_max;
    s->qkv_bias = (int32_t)m->qkv_bias;
    s->mlp_bias = (int32_t)m->mlp_bias;
    s->o_bias = (int32_t)(m->o_bias >= 0 ? m->o_bias : m->mlp_bias); /* -1 = mlp_bias */
    s->emb_norm =
        (int32_t)(m->emb_norm >= 0 ? m->emb_norm : m->arch == GPUFIT_ARCH_ENCODER); /* -1 = BERT */
    s->qk_norm = (int32_t)m->qk_norm;
    s->pooler = (int32_t)m->pooler;
    s->type_vocab = (uint64_t)m->type_vocab_size;
    s->rel_buckets = (uint64_t)m->rel_pos_buckets;
    if (m->sliding_window > 0 && m->arch != GPUFIT_ARCH_DECODER)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_SLIDING_WINDOW, UINT64_MAX,
                            "sliding_window (local attention layers) needs arch decoder");
    if (m->sliding_window > 0 && s->mla)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_SLIDING_WINDOW, UINT64_MAX,
                            "sliding_window is not modelled with kv_lora_rank (MLA)");
    if (m->sliding_window_pattern > 0 && m->sliding_window == 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_SLIDING_WINDOW_PATTERN,
                            UINT64_MAX,
                            "sliding_window_pattern (%" PRId64 ") needs sliding_window > 0",
                            m->sliding_window_pattern);
    s->swa_window = (uint64_t)m->sliding_window;
    s->swa_period = (uint64_t)m->sliding_window_pattern;
    if (m->n_cross_attn_layers > 0 || m->cross_attn_tokens > 0) {
        int32_t bad = m->arch != GPUFIT_ARCH_DECODER || s->mla || s->E > 0 || m->sliding_window > 0;
        if (bad)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS,
                                UINT64_MAX,
                                "n_cross_attn_layers is modelled for dense decoders without "
                                "kv_lora_rank (MLA), n_experts or sliding_window");
        if (m->n_cross_attn_layers > m->n_layers || m->n_cross_attn_layers == 0)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS,
                                UINT64_MAX,
                                "n_cross_attn_layers (%" PRId64 ") must be between 1 and n_layers "
                                "(%" PRId64 ") when cross_attn_tokens is set",
                                m->n_cross_attn_layers, m->n_layers);
    }
    s->n_cross = (uint64_t)m->n_cross_attn_layers;
    s->cross_tokens = (uint64_t)m->cross_attn_tokens;
    gpufit__ok(err);
    return GPUFIT_OK;
}
