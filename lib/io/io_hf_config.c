/* SPDX-License-Identifier: MIT */
/* gpufit_model_from_hf_config(): a model from the text of a Hugging Face config.json.
 *
 * The document is read once with the bounded pull tokenizer (json.h): the keys this file knows
 * are kept (scalars, and the prefix shape of "mlp_only_layers"), everything else is skipped
 * without recursion. A nested "text_config" object (multimodal wrappers such as Gemma 3) is
 * read one level deep and, when present, describes the text model; its model_type falls back
 * to the top-level one. Each model_type family then maps its own key names and defaults, as
 * the transformers configuration class of that family does (configuration_<family>.py):
 *
 *   llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, phi3, gemma, gemma2, gemma3,
 *   gemma3_text, mllama_text_model, deepseek_v2, deepseek_v3
 *                                           hidden_size / num_hidden_layers / ... (Llama names)
 *   gpt2                                    n_embd / n_layer / n_head / n_inner / n_positions
 *   gpt_neox                                Llama names, LayerNorm, GELU, biases
 *   bloom                                   hidden_size|n_embed, n_layer, n_head, f = 4h
 *   falcon                                  multi_query / new_decoder_architecture / num_kv_heads
 *   bert, roberta                           encoder with pooler, token types, learned positions
 *   t5                                      d_model / num_layers / d_kv / d_ff / feed_forward_proj
 *
 * A second pass (read_quantization_config) reads "quantization_config" and "torch_dtype" into
 * the per-module storage dtypes (embedding/attention/mlp/output_dtype) of a pre-quantised
 * checkpoint: docs/memory/quantisation.md.
 *
 * Presets (model_presets.c) and these configs agree field for field (tests/unit/test_readers.c
 * loads tests/data/hf/ *.json and compares). Known limits, documented rather than guessed:
 * Gemma 2/3 have four norms per layer and falcon-7b style layers one; the model has two, so
 * their counts differ by 2·h per layer (under 0.01 %). Sliding-window layers (sliding_window,
 * layer_types, sliding_window_pattern, use_sliding_window) set the model's sliding_window and
 * sliding_window_pattern (map_sliding); they change the KV cache, not the parameters.
 *
 * A nested "vision_config" object is read the same way and describes the vision encoder
 * (map_vision; docs/memory/multimodal.md) of the multimodal wrappers llava, llava_next (CLIP,
 * SigLIP or Pixtral towers), qwen2_vl, qwen2_5_vl, gemma3, mistral3 and mllama; Qwen2-VL's
 * text keys sit at the top level (model_type qwen2_vl / qwen2_5_vl, Qwen2 names). A
 * vision_config of another wrapper is refused (GPUFIT_E_UNSUPPORTED), not dropped.
 *
 * Errors: a missing required key is GPUFIT_E_INVALID_ARG naming it; an unknown model_type is
 * GPUFIT_E_UNSUPPORTED naming it; malformed JSON is GPUFIT_E_PARSE with its byte offset. */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * The keys read from config.json
 * ------------------------------------------------------------------------------------- */
/* clang-format off */
#define HF_KEYS(X)                                                                                 \
    X(model_type) X(_name_or_path) X(hidden_size) X(n_embd) X(n_embed) X(d_model)                  \
    X(num_hidden_layers) X(n_layer) X(num_layers) X(num_decoder_layers)                            \
    X(num_attention_heads) X(n_head) X(num_heads) X(num_key_value_heads) X(num_kv_heads)           \
    X(n_head_kv) X(multi_query) X(new_decoder_architecture) X(head_dim) X(d_kv)                    \
    X(intermediate_size) X(n_inner) X(d_ff) X(ffn_hidden_size) X(vocab_size)                       \
    X(tie_word_embeddings) X(max_position_embeddings) X(n_positions) X(type_vocab_size)            \
    X(hidden_act) X(hidden_activation) X(activation_function) X(feed_forward_proj)                 \
    X(attention_bias) X(mlp_bias) X(bias) X(alibi) X(position_embedding_type)                      \
    X(relative_attention_num_buckets) X(num_local_experts) X(num_experts) X(n_routed_experts)      \
    X(num_experts_per_tok) X(n_shared_experts) X(moe_intermediate_size)                            \
    X(shared_expert_intermediate_size) X(first_k_dense_replace) X(moe_layer_freq)                  \
    X(decoder_sparse_step) X(mlp_only_layers) X(topk_method) X(q_lora_rank) X(kv_lora_rank)        \
    X(qk_nope_head_dim) X(qk_rope_head_dim) X(v_head_dim) X(depth) X(embed_dim) X(mlp_ratio)   \
    X(patch_size) X(image_size) X(spatial_merge_size) X(temporal_patch_size) X(out_hidden_size)    \
    X(num_global_layers) X(intermediate_layers_indices) X(max_num_tiles) X(mm_tokens_per_image)    \
    X(vision_use_head) X(multimodal_projector_bias) X(vision_feature_select_strategy)              \
    X(sliding_window) X(sliding_window_pattern) X(layer_types) X(use_sliding_window)               \
    X(max_window_layers) X(cross_attention_layers) X(rope_scaling) X(rope_parameters)             \
    X(rope_type) X(type) X(factor) X(original_max_position_embeddings) X(partial_rotary_factor)    \
    X(rotary_pct)
/* clang-format on */

enum hf_key {
#define X(k) K_##k,
    HF_KEYS(X)
#undef X
        K_COUNT
};

static const char *const key_names[K_COUNT] = {
#define X(k) #k,
    HF_KEYS(X)
#undef X
};

enum hf_kind { V_ABSENT = 0, V_INT, V_BIG, V_FLOAT, V_NULL, V_BOOL, V_STRING, V_OBJECT, V_ARRAY };

#define STR_MAX 96 /* decoded string bytes kept (model_type, activations, names) */

typedef struct hval {
    int32_t kind;      /* enum hf_kind */
    int32_t truncated; /* strings: longer than STR_MAX */
    int64_t i;         /* V_INT value; V_BOOL 0/1; V_ARRAY: elements */
    int64_t prefix;    /* V_ARRAY of integers: 1 when the elements are 0, 1, ..., n-1 */
    /* V_ARRAY of "sliding_attention" / "full_attention" strings (layer_types): the local
     * layers, the period P of the global ones (element i global iff (i + 1) % P == 0; 0 = no
     * global layer yet) and whether another string or an irregular order was seen */
    int64_t n_local, period, irregular;
    double f;          /* V_INT and V_FLOAT: the number (rope_scaling's factor) */
    size_t offset;     /* byte offset of the value */
    char s[STR_MAX + 1];
} hval;

typedef struct hcfg {
    hval v[K_COUNT];
} hcfg;

/* Copy of s for a one-line message: control bytes become '?', long text is cut. */
static const char *shown(const char *s, char out[72])
{
    size_t o = 0;
    for (size_t i = 0; s[i] != '\0' && i < 64; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    out[o] = '\0';
    return out;
}

static int find_key(const gpufit__json_token *t)
{
    for (int k = 0; k < K_COUNT; k++)
        if (gpufit__json_equals(t, key_names[k]))
            return k;
    return -1;
}

/* The value of a JSON number token (the tokenizer checked its grammar), without strtod (no
 * locale): digits, fraction and exponent; enough for rope_scaling factors. */
static double number_value(const char *s, size_t n)
{
    size_t i = 0;
    double x = 0.0, scale = 1.0;
    int neg = i < n && s[i] == '-';
    i += (size_t)neg;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        x = x * 10.0 + (s[i] - '0');
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            scale /= 10.0;
            x += (s[i] - '0') * scale;
        }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int eneg = 0, e = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            e = e < 400 ? e * 10 + (s[i] - '0') : e; /* beyond any double: saturates */
        for (; e > 0 && x != 0.0 && x < 1e300 && x > 1e-300; e--)
            x = eneg ? x / 10.0 : x * 10.0;
    }
    return neg ? -x : x;
}

/* Integer text of a JSON number: V_INT, V_BIG (an integer beyond int64) or V_FLOAT. */
static void read_number(const gpufit__json_token *t, hval *v)
{
    v->f = number_value(t->text, t->len);
    const char *s = t->text;
    size_t n = t->len, i = 0;
    int neg = 0;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    uint64_t acc = 0;
    int big = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (acc > (UINT64_MAX - d) / 10)
            big = 1;
        else
            acc = acc * 10 + d;
    }
    if (i < n) { /* fraction or exponent: accept "N.0" as an integer, anything else is a float */
        size_t j = i;
        if (s[j] == '.') {
            j++;
            while (j < n && s[j] == '0')
                j++;
        }
        if (j < n || s[i] != '.') {
            v->kind = V_FLOAT;
            return;
        }
    }
    if (big || acc > (uint64_t)INT64_MAX) {
        v->kind = V_BIG;
        return;
    }
    v->kind = V_INT;
    v->i = neg ? -(int64_t)acc : (int64_t)acc;
}

/* Reads an array value: counts its elements and checks whether they are 0, 1, ..., n-1
 * (mlp_only_layers); nested containers are skipped. */
static int32_t read_array(gpufit__json *p, hval *v, gpufit_error *err)
{
    int64_t n = 0, prefix = 1, n_local = 0, period = 0, irregular = 0;
    for (;;) {
        gpufit__json_token e;
        int32_t st = gpufit__json_next(p, &e, err);
        if (st != GPUFIT_OK)
            return st;
        if (e.type == GPUFIT__JSON_ARRAY_END)
            break;
        if (e.type == GPUFIT__JSON_NUMBER) {
            hval x = {0};
            read_number(&e, &x);
            if (x.kind != V_INT || x.i != n)
                prefix = 0;
            irregular = 1;
        } else if (e.type == GPUFIT__JSON_STRING) {
            prefix = 0;
            int local = gpufit__json_equals(&e, "sliding_attention");
            int global = gpufit__json_equals(&e, "full_attention");
            if (!local && !global)
                irregular = 1;
            n_local += local;
            if (global && period == 0)
                period = n + 1; /* the first global layer: every earlier one is local */
            else if (period > 0 && global != ((n + 1) % period == 0))
                irregular = 1;
        } else {
            prefix = 0;
            irregular = 1;
            st = gpufit__json_skip(p, &e, err);
            if (st != GPUFIT_OK)
                return st;
        }
        if (n < INT64_MAX)
            n++;
    }
    v->kind = V_ARRAY;
    v->i = n;
    v->prefix = prefix;
    v->n_local = n_local;
    v->period = period;
    v->irregular = irregular;
    return GPUFIT_OK;
}

/* Reads the value whose first token is *t into v (or skips it when v is NULL). */
static int32_t read_value(gpufit__json *p, const gpufit__json_token *t, hval *v, gpufit_error *err)
{
    if (v == NULL)
        return gpufit__json_skip(p, t, err);
    memset(v, 0, sizeof *v);
    v->offset = t->offset;
    switch (t->type) {
    case GPUFIT__JSON_NUMBER:
        read_number(t, v);
        return GPUFIT_OK;
    case GPUFIT__JSON_TRUE:
    case GPUFIT__JSON_FALSE:
        v->kind = V_BOOL;
        v->i = t->type == GPUFIT__JSON_TRUE;
        return GPUFIT_OK;
    case GPUFIT__JSON_NULL:
        v->kind = V_NULL;
        return GPUFIT_OK;
    case GPUFIT__JSON_STRING: {
        size_t n = 0;
        int32_t st = gpufit__json_decode(t, v->s, sizeof v->s, &n, NULL);
        if (st == GPUFIT_E_BUFFER_TOO_SMALL)
            v->truncated = 1;
        else if (st != GPUFIT_OK)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)t->offset,
                                "config.json: malformed string at byte %zu", t->offset);
        else if (strlen(v->s) != n) /* an escaped NUL: never a valid name */
            v->truncated = 1;
        v->kind = V_STRING;
        return GPUFIT_OK;
    }
    case GPUFIT__JSON_ARRAY:
        return read_array(p, v, err);
    case GPUFIT__JSON_OBJECT:
        v->kind = V_OBJECT;
        return gpufit__json_skip(p, t, err);
    default:
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)t->offset,
                            "config.json: unexpected token at byte %zu", t->offset);
    }
}

/* Reads the members of a "rope_scaling" (transformers v5: "rope_parameters") object whose '{'
 * was just consumed into cfg: rope_type (or type), factor and original_max_position_embeddings;
 * other members, and objects nested in it (v5's per-layer-type form), are skipped. */
static int32_t read_rope(gpufit__json *p, hcfg *cfg, gpufit_error *err)
{
    static const int keys[] = {K_rope_type, K_type, K_factor, K_original_max_position_embeddings};
    cfg->v[K_rope_scaling].kind = V_OBJECT;
    for (;;) {
        gpufit__json_token k, v;
        int32_t st = gpufit__json_member(p, &k, &v, err);
        if (st <= 0)
            return st;
        int idx = -1;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (gpufit__json_equals(&k, key_names[keys[i]]))
                idx = keys[i];
        st = read_value(p, &v, idx >= 0 ? &cfg->v[idx] : NULL, err);
        if (st != GPUFIT_OK)
            return st;
    }
}

/* Reads the members of an object whose '{' was just consumed into cfg; container values other
 * than integer arrays are skipped. With text != NULL, a member "text_config" holding an object
 * is read into *text (by a second call with text == NULL, so the nesting is one level and the
 * function never calls itself) and *has_text is set. */
static int32_t
read_members(gpufit__json *p, hcfg *cfg, hcfg *text, int *has_text, gpufit_error *err)
{
    for (;;) {
        gpufit__json_token k, v;
        int32_t st = gpufit__json_member(p, &k, &v, err);
        if (st <= 0)
            return st; /* the object's end (GPUFIT_OK) or the parse error */
        if (v.type == GPUFIT__JSON_OBJECT &&
            (gpufit__json_equals(&k, "rope_scaling") || gpufit__json_equals(&k, "rope_parameters"))) {
            st = read_rope(p, cfg, err);
            if (st != GPUFIT_OK)
                return st;
            continue;
        }
        if (text != NULL && v.type == GPUFIT__JSON_OBJECT &&
            (gpufit__json_equals(&k, "text_config") || gpufit__json_equals(&k, "vision_config"))) {
            /* read by the caller, which resumes this loop afterwards */
            *has_text = gpufit__json_equals(&k, "text_config") ? 2 : 3;
            return GPUFIT_OK;
        }
        int idx = find_key(&k);
        st = read_value(p, &v, idx >= 0 ? &cfg->v[idx] : NULL, err);
        if (st != GPUFIT_OK)
            return st;
    }
}

/* Reads the top-level object (its '{' consumed) into top, a "text_config" object into text
 * and a "vision_config" object into vis (the last one wins, as for any duplicated key). */
static int32_t read_config(gpufit__json *p, hcfg *top, hcfg *text, int *has_text, hcfg *vis,
                           int *has_vis, gpufit_error *err)
{
    for (;;) {
        int state = 0;
        int32_t st = read_members(p, top, text, &state, err);
        if (st != GPUFIT_OK || state < 2)
            return st;
        hcfg *into = state == 2 ? text : vis;
        memset(into, 0, sizeof *into);
        *(state == 2 ? has_text : has_vis) = 1;
        st = read_members(p, into, NULL, NULL, err);
        if (st != GPUFIT_OK)
            return st;
    }
}

/* ---------------------------------------------------------------------------------------
 * Typed access with errors naming the key
 * ------------------------------------------------------------------------------------- */
static int present(const hcfg *c, int k)
{
    return c->v[k].kind != V_ABSENT && c->v[k].kind != V_NULL;
}

/* First present key of a list ending with -1; -1 when none is. */
static int first_of(const hcfg *c, const int *keys)
{
    for (; *keys >= 0; keys++)
        if (present(c, *keys))
            return *keys;
    return -1;
}

static int32_t type_error(const hval *v, const char *key, const char *what, gpufit_error *err)
{
    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)v->offset,
                        "config.json: \"%s\" must be %s", key, what);
}

/* Integer value of key k: absent or null gives def (or, when required, an error naming
 * `name`, the key a user should add). */
static int32_t
get_int(const hcfg *c, int k, int required, int64_t def, int64_t *out, gpufit_error *err)
{
    const hval *v = &c->v[k];
    if (!present(c, k)) {
        if (required)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                                "config.json: missing key \"%s\"", key_names[k]);
        *out = def;
        return GPUFIT_OK;
    }
    if (v->kind != V_INT || v->i < 0)
        return type_error(v, key_names[k], "a non-negative integer", err);
    *out = v->i;
    return GPUFIT_OK;
}

/* Integer value of the first present key among keys[] (the first one is named when missing). */
static int32_t get_int_any(
    const hcfg *c, const int *keys, int required, int64_t def, int64_t *out, gpufit_error *err)
{
    int k = first_of(c, keys);
    return get_int(c, k >= 0 ? k : keys[0], required, def, out, err);
}

static int32_t get_bool(const hcfg *c, int k, int64_t def, int64_t *out, gpufit_error *err)
{
    const hval *v = &c->v[k];
    if (!present(c, k)) {
        *out = def;
        return GPUFIT_OK;
    }
    if (v->kind != V_BOOL)
        return type_error(v, key_names[k], "true or false", err);
    *out = v->i;
    return GPUFIT_OK;
}

/* String value of key k, or def when absent or null. */
static int32_t get_str(const hcfg *c, int k, const char *def, const char **out, gpufit_error *err)
{
    const hval *v = &c->v[k];
    if (!present(c, k)) {
        *out = def;
        return GPUFIT_OK;
    }
    if (v->kind != V_STRING)
        return type_error(v, key_names[k], "a string", err);
    *out = v->truncated ? "" : v->s;
    return GPUFIT_OK;
}

/* Stores v into the model field of parameter id, checked against the parameter's range;
 * `key` (the config.json key it came from) is named on error. */
static int32_t
put(struct gpufit_model *m, int32_t id, int64_t v, const char *key, gpufit_error *err)
{
    const gpufit__param_entry *e = gpufit__param_find(id);
    if (e == NULL || e->is_double)
        return gpufit__fail(err, GPUFIT_E_INTERNAL, id, UINT64_MAX, "no model parameter %d",
                            (int)id);
    if (v < e->min_i || v > e->max_i)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, id, UINT64_MAX,
                            "config.json: %s = %" PRId64 " is out of range [%" PRId64 ", %" PRId64
                            "] (model parameter %s)",
                            key, v, e->min_i, e->max_i, e->name);
    memcpy((char *)m + e->offset, &v, sizeof v);
    return GPUFIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * Families
 * ------------------------------------------------------------------------------------- */
enum family {
    F_LLAMA = 0, /* Llama-style key names, RMSNorm, gated MLP */
    F_GPT2,
    F_NEOX,
    F_BLOOM,
    F_FALCON,
    F_BERT,
    F_T5
};

/* Per model_type: family, default tie_word_embeddings, default activation and the
 * family's extras (transformers configuration_<type>.py defaults). */
enum {
    X_QKV_BIAS = 1,      /* q, k, v biases without a config key (Qwen2) */
    X_QK_NORM = 2,       /* per-head q/k RMSNorm (Qwen3, Gemma 3) */
    X_MOE_MIXTRAL = 4,   /* num_local_experts, intermediate_size per expert */
    X_MOE_QWEN = 8,      /* num_experts, moe_intermediate_size (+ shared expert) */
    X_MOE_DEEPSEEK = 16, /* n_routed_experts, first_k_dense_replace, MLA */
    X_ROUTER_BIAS = 32,  /* DeepSeek-V3 e_score_correction_bias */
    X_NO_ATTN_BIAS = 64, /* the family has no attention_bias key */
    X_GEMMA3_TEXT = 128, /* Gemma3TextConfig defaults for keys multimodal configs omit */
    X_CROSS = 256        /* cross_attention_layers (Mllama text model) */
};

typedef struct family_info {
    const char *type;
    int32_t family;
    int32_t tied; /* default tie_word_embeddings */
    int32_t extras;
    const char *act; /* default activation */
} family_info;

static const family_info families[] = {
    {"llama", F_LLAMA, 0, 0, "silu"},
    {"mistral", F_LLAMA, 0, X_NO_ATTN_BIAS, "silu"},
    {"mixtral", F_LLAMA, 0, X_NO_ATTN_BIAS | X_MOE_MIXTRAL, "silu"},
    {"qwen2", F_LLAMA, 0, X_QKV_BIAS | X_NO_ATTN_BIAS, "silu"},
    {"qwen2_moe", F_LLAMA, 0, X_QKV_BIAS | X_NO_ATTN_BIAS | X_MOE_QWEN, "silu"},
    {"qwen3", F_LLAMA, 0, X_QK_NORM, "silu"},
    {"qwen3_moe", F_LLAMA, 0, X_QK_NORM | X_MOE_QWEN, "silu"},
    {"phi3", F_LLAMA, 0, X_NO_ATTN_BIAS, "silu"},
    {"gemma", F_LLAMA, 1, 0, "gelu_pytorch_tanh"},
    {"gemma2", F_LLAMA, 1, 0, "gelu_pytorch_tanh"},
    {"gemma3", F_LLAMA, 1, X_QK_NORM | X_GEMMA3_TEXT, "gelu_pytorch_tanh"},
    {"gemma3_text", F_LLAMA, 1, X_QK_NORM | X_GEMMA3_TEXT, "gelu_pytorch_tanh"},
    {"qwen2_vl", F_LLAMA, 0, X_QKV_BIAS | X_NO_ATTN_BIAS, "silu"},
    {"qwen2_vl_text", F_LLAMA, 0, X_QKV_BIAS | X_NO_ATTN_BIAS, "silu"},
    {"qwen2_5_vl", F_LLAMA, 0, X_QKV_BIAS | X_NO_ATTN_BIAS, "silu"},
    {"qwen2_5_vl_text", F_LLAMA, 0, X_QKV_BIAS | X_NO_ATTN_BIAS, "silu"},
    {"mllama_text_model", F_LLAMA, 0, X_NO_ATTN_BIAS | X_CROSS, "silu"},
    {"deepseek_v2", F_LLAMA, 0, X_MOE_DEEPSEEK, "silu"},
    {"deepseek_v3", F_LLAMA, 0, X_MOE_DEEPSEEK | X_ROUTER_BIAS, "silu"},
    {"gpt2", F_GPT2, 1, 0, "gelu_new"},
    {"gpt_neox", F_NEOX, 0, 0, "gelu"},
    {"bloom", F_BLOOM, 1, 0, "gelu"},
    {"falcon", F_FALCON, 1, 0, "gelu"},
    {"bert", F_BERT, 1, 0, "gelu"},
    {"roberta", F_BERT, 1, 0, "gelu"},
    {"t5", F_T5, 1, 0, "relu"},
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* A byte loop, not strncmp(s, prefix, strlen(prefix)): gcc -O3 inlines it where s is a short
 * array and warns (-Wstring-compare), though the comparison stops at s's NUL. */
static int starts_with(const char *s, const char *prefix)
{
    for (; *prefix != '\0'; s++, prefix++)
        if (*s != *prefix)
            return 0;
    return 1;
}

/* MLP type of an activation name: gated families give SwiGLU/GeGLU, others GELU/ReLU.
 * Returns -1 for an activation the model cannot express. */
static int64_t mlp_of(const char *act, int gated)
{
    int silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
    int gelu = starts_with(act, "gelu") || strcmp(act, "quick_gelu") == 0;
    int relu = strcmp(act, "relu") == 0;
    if (gated)
        return silu ? GPUFIT_MLP_SWIGLU : gelu ? GPUFIT_MLP_GEGLU : -1;
    return gelu ? GPUFIT_MLP_GELU : relu ? GPUFIT_MLP_RELU : -1;
}

static int32_t bad_activation(const char *key, const char *act, gpufit_error *err)
{
    char d[72];
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_MLP, UINT64_MAX,
                        "config.json: %s \"%s\" is not modelled (mlp: gelu, relu, silu, gated)",
                        key, shown(act, d));
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int32_t st_ = (expr);                                                                      \
        if (st_ != GPUFIT_OK)                                                                      \
            return st_;                                                                            \
    } while (0)

/* The dimensions every family has: h, L, n_q, V (key lists per family). */
typedef struct dims {
    int64_t h, L, nq, V;
} dims;

static int32_t common_dims(const hcfg *c,
                           const int *kh,
                           const int *kl,
                           const int *kq,
                           dims *d,
                           struct gpufit_model *m,
                           gpufit_error *err)
{
    TRY(get_int_any(c, kh, 1, 0, &d->h, err));
    TRY(get_int_any(c, kl, 1, 0, &d->L, err));
    TRY(get_int_any(c, kq, 1, 0, &d->nq, err));
    TRY(get_int(c, K_vocab_size, 1, 0, &d->V, err));
    TRY(put(m, GPUFIT_MODEL_HIDDEN_SIZE, d->h, key_names[first_of(c, kh)], err));
    TRY(put(m, GPUFIT_MODEL_N_LAYERS, d->L, key_names[first_of(c, kl)], err));
    TRY(put(m, GPUFIT_MODEL_N_HEADS, d->nq, key_names[first_of(c, kq)], err));
    TRY(put(m, GPUFIT_MODEL_VOCAB_SIZE, d->V, "vocab_size", err));
    return GPUFIT_OK;
}

/* head_dim = h / n_q when the config has none (every family's default). */
static int32_t default_head_dim(const dims *d, struct gpufit_model *m, gpufit_error *err)
{
    if (d->nq == 0 || d->h % d->nq != 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_HEAD_DIM, UINT64_MAX,
                            "config.json: missing key \"head_dim\" (hidden size %" PRId64
                            " is not a multiple of %" PRId64 " heads)",
                            d->h, d->nq);
    return put(m, GPUFIT_MODEL_HEAD_DIM, d->h / d->nq, "head_dim", err);
}

/* Mixture of experts of the Mixtral, Qwen-MoE and DeepSeek families. */
static int32_t
map_moe(const hcfg *c, const family_info *fi, int64_t f, struct gpufit_model *m, gpufit_error *err)
{
    int64_t E = 0, k = 0, fm = 0, shared = 0, fsh = 0, dense = 0, step = 1;
    if (fi->extras & X_MOE_MIXTRAL) {
        TRY(get_int(c, K_num_local_experts, 1, 0, &E, err));
        fm = f;
    } else if (fi->extras & X_MOE_QWEN) {
        TRY(get_int(c, K_num_experts, 1, 0, &E, err));
        TRY(get_int(c, K_decoder_sparse_step, 0, 1, &step, err));
        if (step != 1)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_N_DENSE_LAYERS, UINT64_MAX,
                                "config.json: decoder_sparse_step = %" PRId64
                                " (MoE every other layer) is not modelled (n_dense_layers)",
                                step);
        const hval *mo = &c->v[K_mlp_only_layers];
        if (mo->kind == V_ARRAY) { /* dense layers first (0..n-1) are n_dense_layers */
            if (!mo->prefix)
                return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_N_DENSE_LAYERS,
                                    (uint64_t)mo->offset,
                                    "config.json: mlp_only_layers other than the first layers "
                                    "are not modelled (n_dense_layers)");
            dense = mo->i;
        }
        if (E > 0)
            TRY(get_int(c, K_moe_intermediate_size, 1, 0, &fm, err));
        TRY(get_int(c, K_shared_expert_intermediate_size, 0, 0, &fsh, err));
        if (fsh > 0)
            shared = 1;
    } else {
        TRY(get_int(c, K_n_routed_experts, 0, 0, &E, err)); /* null: a dense model */
        TRY(get_int(c, K_moe_layer_freq, 0, 1, &step, err));
        if (E > 0 && step != 1)
            return gpufit__fail(
                err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_N_DENSE_LAYERS, UINT64_MAX,
                "config.json: moe_layer_freq = %" PRId64 " is not modelled (n_dense_layers)", step);
        if (E > 0) {
            TRY(get_int(c, K_moe_intermediate_size, 1, 0, &fm, err));
            TRY(get_int(c, K_n_shared_experts, 0, 0, &shared, err));
            TRY(get_int(c, K_first_k_dense_replace, 0, 0, &dense, err));
        }
    }
    if (E == 0)
        return GPUFIT_OK;
    TRY(get_int(c, K_num_experts_per_tok, 1, 0, &k, err));
    const char *ek = key_names[(fi->extras & X_MOE_MIXTRAL) ? K_num_local_experts
                               : (fi->extras & X_MOE_QWEN)  ? K_num_experts
                                                            : K_n_routed_experts];
    TRY(put(m, GPUFIT_MODEL_N_EXPERTS, E, ek, err));
    TRY(put(m, GPUFIT_MODEL_EXPERTS_PER_TOKEN, k, "num_experts_per_tok", err));
    TRY(put(m, GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, fm,
            (fi->extras & X_MOE_MIXTRAL) ? "intermediate_size" : "moe_intermediate_size", err));
    TRY(put(m, GPUFIT_MODEL_N_SHARED_EXPERTS, shared, "n_shared_experts", err));
    TRY(put(m, GPUFIT_MODEL_N_DENSE_LAYERS, dense,
            (fi->extras & X_MOE_QWEN) ? "mlp_only_layers" : "first_k_dense_replace", err));
    if (fi->extras & X_MOE_QWEN && shared) { /* Qwen2-MoE: one gated shared expert */
        TRY(put(m, GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE, fsh, "shared_expert_intermediate_size",
                err));
        TRY(put(m, GPUFIT_MODEL_SHARED_EXPERT_GATE, 1, "shared_expert_intermediate_size", err));
    }
    if (fi->extras & X_ROUTER_BIAS) /* DeepSeek-V3 e_score_correction_bias */
        TRY(put(m, GPUFIT_MODEL_ROUTER_BIAS, 1, "topk_method", err));
    else if (fi->extras & X_MOE_DEEPSEEK) { /* V2 with noaux_tc routing has the bias too */
        const char *tm = "";
        TRY(get_str(c, K_topk_method, "greedy", &tm, err));
        if (strcmp(tm, "noaux_tc") == 0)
            TRY(put(m, GPUFIT_MODEL_ROUTER_BIAS, 1, "topk_method", err));
    }
    return GPUFIT_OK;
}

/* DeepSeek multi-head latent attention (kv_lora_rank present). */
static int32_t map_mla(const hcfg *c, struct gpufit_model *m, gpufit_error *err)
{
    int64_t rq = 0, rkv = 0, dn = 0, dr = 0, dv = 0;
    TRY(get_int(c, K_kv_lora_rank, 1, 0, &rkv, err));
    TRY(get_int(c, K_q_lora_rank, 0, 0, &rq, err)); /* null: no query compression */
    TRY(get_int(c, K_qk_nope_head_dim, 1, 0, &dn, err));
    TRY(get_int(c, K_qk_rope_head_dim, 1, 0, &dr, err));
    TRY(get_int(c, K_v_head_dim, 1, 0, &dv, err));
    TRY(put(m, GPUFIT_MODEL_Q_LORA_RANK, rq, "q_lora_rank", err));
    TRY(put(m, GPUFIT_MODEL_KV_LORA_RANK, rkv, "kv_lora_rank", err));
    TRY(put(m, GPUFIT_MODEL_QK_NOPE_HEAD_DIM, dn, "qk_nope_head_dim", err));
    TRY(put(m, GPUFIT_MODEL_QK_ROPE_HEAD_DIM, dr, "qk_rope_head_dim", err));
    TRY(put(m, GPUFIT_MODEL_V_HEAD_DIM, dv, "v_head_dim", err));
    return put(m, GPUFIT_MODEL_HEAD_DIM, dn + dr, "qk_nope_head_dim", err);
}

/* Sliding-window attention (docs/memory/attention.md): the window and which layers use it.
 * layer_types (transformers >= 4.53 writes it into every config) wins; else the family's
 * rule: Gemma 2 alternates (configuration_gemma2.py), Gemma 3 makes every
 * sliding_window_pattern-th layer global (default 6, configuration_gemma3.py), Qwen2 slides
 * only under use_sliding_window and then only from max_window_layers on
 * (configuration_qwen2.py), the rest (Mistral v0.1) slide in every layer. A layer mix that is
 * not periodic is refused, not approximated: set sliding_window / sliding_window_pattern. */
static int32_t
map_sliding(const hcfg *g, const family_info *fi, int64_t L, struct gpufit_model *m,
            gpufit_error *err)
{
    int64_t w = 0, period = 0, use = 1, mwl = 0;
    const char *type = fi->type;
    TRY(get_int(g, K_sliding_window, 0, 0, &w, err));
    /* every Qwen family config carries use_sliding_window / max_window_layers
     * (configuration_qwen2.py, _qwen2_moe, _qwen3, _qwen3_moe, _qwen2_vl, _qwen2_5_vl) */
    if (strncmp(type, "qwen", 4) == 0) {
        TRY(get_bool(g, K_use_sliding_window, 0, &use, err));
        TRY(get_int(g, K_max_window_layers, 0, 0, &mwl, err));
        if (use && mwl > 0 && mwl < L)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_SLIDING_WINDOW,
                                UINT64_MAX,
                                "config.json: use_sliding_window with max_window_layers %" PRId64
                                " of %" PRId64 " layers (the first layers global, the rest "
                                "local) is not modelled: set sliding_window=0 for an upper "
                                "bound",
                                mwl, L);
        if (use && mwl >= L && L > 0)
            use = 0; /* no layer index reaches max_window_layers */
    }
    if (!use || w == 0)
        return GPUFIT_OK;
    const hval *lt = &g->v[K_layer_types];
    if (present(g, K_layer_types)) {
        if (lt->kind != V_ARRAY || lt->irregular)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_SLIDING_WINDOW_PATTERN,
                                (uint64_t)lt->offset,
                                "config.json: layer_types is not a periodic list of "
                                "\"sliding_attention\" and \"full_attention\" (set "
                                "sliding_window and sliding_window_pattern instead)");
        if (lt->n_local == 0)
            return GPUFIT_OK; /* every layer global: the window is never used */
        period = lt->period;
    } else if (strcmp(type, "gemma2") == 0) {
        period = 2;
    } else if (fi->extras & X_GEMMA3_TEXT) {
        TRY(get_int(g, K_sliding_window_pattern, 0, 6, &period, err));
    } else {
        TRY(get_int(g, K_sliding_window_pattern, 0, 0, &period, err));
    }
    if (period == 1) /* every layer global */
        return GPUFIT_OK;
    TRY(put(m, GPUFIT_MODEL_SLIDING_WINDOW, w, "sliding_window", err));
    return put(m, GPUFIT_MODEL_SLIDING_WINDOW_PATTERN, period,
               present(g, K_layer_types) ? "layer_types" : "sliding_window_pattern", err);
}

/* Llama-style families (LlamaConfig key names; RMSNorm; gated MLP). */
/* The RoPE tables vLLM and SGLang precompute (docs/memory/vllm.md, "RoPE tables"): rows from
 * max_position_embeddings and rope_scaling as vLLM's get_rope builds them
 * (model_executor/layers/rotary_embedding/__init__.py): linear and dynamic scale the length by
 * the factor, yarn / deepseek_yarn scale original_max_position_embeddings, longrope keeps a
 * short and a long table (original + max rows), llama3, mrope and default keep the length.
 * local_table: a second, unscaled table of the length (Gemma 3's local layers). rot_key /
 * rot_def: the key of the rotated share of each head (partial_rotary_factor, rotary_pct) and its
 * default, 0 = all of it. pos_def: the config class's max_position_embeddings when the file
 * leaves it out (0: unknown, no table). */
static int32_t map_rope(const hcfg *g, int64_t pos_def, int local_table, int rot_key,
                        double rot_def, struct gpufit_model *m, gpufit_error *err)
{
    int64_t pos = 0, orig = 0;
    TRY(get_int(g, K_max_position_embeddings, 0, pos_def, &pos, err));
    if (pos == 0)
        return GPUFIT_OK; /* the length unknown: no table counted */
    TRY(get_int(g, K_original_max_position_embeddings, 0, 0, &orig, err));
    const char *type = "default";
    int tk = present(g, K_rope_type) ? K_rope_type : K_type;
    TRY(get_str(g, tk, "default", &type, err));
    double factor = 1.0;
    const hval *fv = &g->v[K_factor];
    if (present(g, K_factor)) {
        if ((fv->kind != V_INT && fv->kind != V_FLOAT) || !(fv->f > 0.0) || fv->f > 1e6)
            return type_error(fv, "rope_scaling.factor", "a positive number", err);
        factor = fv->f;
    }
    double rows = (double)pos;
    if (strcmp(type, "linear") == 0 || strcmp(type, "dynamic") == 0)
        rows = (double)pos * factor;
    else if (strcmp(type, "yarn") == 0 || strcmp(type, "deepseek_yarn") == 0)
        rows = (double)(orig > 0 ? orig : pos) * factor;
    else if (strcmp(type, "longrope") == 0 || strcmp(type, "su") == 0)
        rows = (double)pos + (double)orig;
    rows = ceil(rows) + (local_table ? (double)pos : 0.0); /* arange of a float length */
    if (rows > (double)(1 << 26))
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_ROPE_POSITIONS, UINT64_MAX,
                            "config.json: the RoPE tables would have %.0f rows (more than 2^26)",
                            rows);
    TRY(put(m, GPUFIT_MODEL_ROPE_POSITIONS, (int64_t)rows, "max_position_embeddings", err));
    double frac = rot_def;
    if (rot_key >= 0 && present(g, rot_key)) {
        const hval *rv = &g->v[rot_key];
        if ((rv->kind != V_INT && rv->kind != V_FLOAT) || !(rv->f > 0.0) || rv->f > 1.0)
            return type_error(rv, key_names[rot_key], "a number in (0, 1]", err);
        frac = rv->f;
    }
    if (frac > 0.0 && frac < 1.0) { /* vLLM: int(head_size * partial_rotary_factor) */
        int64_t dh = m->head_dim > 0 ? m->head_dim : m->hidden_size / (m->n_heads > 0 ? m->n_heads : 1);
        int64_t rd = (int64_t)((double)dh * frac);
        TRY(put(m, GPUFIT_MODEL_ROTARY_DIM, rd > 0 ? rd : 1, key_names[rot_key], err));
    }
    return GPUFIT_OK;
}

static int32_t
map_llama(const hcfg *c, const family_info *fi, struct gpufit_model *m, gpufit_error *err)
{
    static const int kh[] = {K_hidden_size, -1}, kl[] = {K_num_hidden_layers, -1},
                     kq[] = {K_num_attention_heads, -1};
    hcfg g = *c;
    if (fi->extras & X_GEMMA3_TEXT) { /* transformers configuration_gemma3.py Gemma3TextConfig
                                       * defaults, often omitted */
        static const struct {
            int key;
            int64_t v;
        } d3[] = {{K_num_attention_heads, 8},
                  {K_num_key_value_heads, 4},
                  {K_head_dim, 256},
                  {K_vocab_size, 262208},
                  {K_max_position_embeddings, 131072}};
        for (size_t i = 0; i < sizeof d3 / sizeof d3[0]; i++)
            if (!present(&g, d3[i].key)) {
                g.v[d3[i].key].kind = V_INT;
                g.v[d3[i].key].i = d3[i].v;
            }
    }
    dims d = {0, 0, 0, 0};
    int64_t nkv = 0, dh = 0, f = 0, tied = 0, ab = 0, mb = 0;
    TRY(common_dims(&g, kh, kl, kq, &d, m, err));
    TRY(get_int(&g, K_num_key_value_heads, 0, d.nq, &nkv, err));
    TRY(put(m, GPUFIT_MODEL_N_KV_HEADS, nkv, "num_key_value_heads", err));
    TRY(get_int(&g, K_intermediate_size, 1, 0, &f, err));
    TRY(put(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE, f, "intermediate_size", err));
    TRY(get_bool(&g, K_tie_word_embeddings, fi->tied, &tied, err));
    TRY(put(m, GPUFIT_MODEL_TIED_EMBEDDINGS, tied, "tie_word_embeddings", err));

    const char *act = fi->act;
    int ak = present(&g, K_hidden_activation) ? K_hidden_activation : K_hidden_act;
    TRY(get_str(&g, ak, fi->act, &act, err));
    int64_t mlp = mlp_of(act, 1);
    if (mlp < 0)
        return bad_activation(key_names[ak], act, err);
    TRY(put(m, GPUFIT_MODEL_MLP, mlp, key_names[ak], err));
    TRY(put(m, GPUFIT_MODEL_NORM, GPUFIT_NORM_RMSNORM, "model_type", err));

    if (!(fi->extras & X_NO_ATTN_BIAS))
        TRY(get_bool(&g, K_attention_bias, 0, &ab, err));
    TRY(get_bool(&g, K_mlp_bias, 0, &mb, err));
    TRY(put(m, GPUFIT_MODEL_QKV_BIAS, ab || (fi->extras & X_QKV_BIAS), "attention_bias", err));
    TRY(put(m, GPUFIT_MODEL_O_BIAS, ab, "attention_bias", err));
    TRY(put(m, GPUFIT_MODEL_MLP_BIAS, mb, "mlp_bias", err));
    if (fi->extras & X_QK_NORM)
        TRY(put(m, GPUFIT_MODEL_QK_NORM, 1, "model_type", err));

    if ((fi->extras & X_MOE_DEEPSEEK) && present(&g, K_kv_lora_rank)) {
        if (ab)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_QKV_BIAS, UINT64_MAX,
                                "config.json: attention_bias (qkv_bias) with kv_lora_rank (MLA) "
                                "is not modelled");
        TRY(map_mla(&g, m, err));
    } else {
        TRY(get_int(&g, K_head_dim, 0, 0, &dh, err));
        if (dh > 0)
            TRY(put(m, GPUFIT_MODEL_HEAD_DIM, dh, "head_dim", err));
        else
            TRY(default_head_dim(&d, m, err));
    }
    if (fi->extras & (X_MOE_MIXTRAL | X_MOE_QWEN | X_MOE_DEEPSEEK))
        TRY(map_moe(&g, fi, f, m, err));
    if (fi->extras & X_CROSS) {
        /* MllamaTextConfig.cross_attention_layers: the indices of the layers that
         * cross-attend; their K/V over the image tokens is left to cross_attn_tokens (0: text
         * only), which depends on the images a request carries */
        const hval *x = &g.v[K_cross_attention_layers];
        if (present(&g, K_cross_attention_layers)) {
            if (x->kind != V_ARRAY)
                return type_error(x, "cross_attention_layers", "a list of layer indices", err);
            if (x->i > 0)
                TRY(put(m, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS, x->i, "cross_attention_layers",
                        err));
        }
    }
    /* Gemma 3: the local layers' own default-RoPE table besides the global one (vLLM and
     * SGLang gemma3: rope_scaling {"rope_type": "default"} with rope_local_base_freq) */
    TRY(map_rope(&g, 0, (fi->extras & X_GEMMA3_TEXT) != 0, K_partial_rotary_factor, 0.0, m,
                 err));
    return map_sliding(&g, fi, d.L, m, err);
}

/* GPT-style families: LayerNorm, two-matrix GELU MLP, biases. */
static int32_t
map_gpt(const hcfg *c, const family_info *fi, struct gpufit_model *m, gpufit_error *err)
{
    static const int kh_gpt2[] = {K_n_embd, K_hidden_size, -1},
                     kl_gpt2[] = {K_n_layer, K_num_hidden_layers, -1},
                     kq_gpt2[] = {K_n_head, K_num_attention_heads, -1};
    static const int kh[] = {K_hidden_size, K_n_embed, K_n_embd, -1},
                     kl[] = {K_num_hidden_layers, K_n_layer, -1},
                     kq[] = {K_num_attention_heads, K_n_head, -1};
    int gpt2 = fi->family == F_GPT2;
    dims d = {0, 0, 0, 0};
    TRY(common_dims(c, gpt2 ? kh_gpt2 : kh, gpt2 ? kl_gpt2 : kl, gpt2 ? kq_gpt2 : kq, &d, m, err));
    TRY(default_head_dim(&d, m, err));

    int64_t f = 0, nkv = d.nq, tied = 0, bias = 1, qkv_bias = 1, pos = 0;
    int rope = 0;
    switch (fi->family) {
    case F_GPT2: { /* n_inner null: 4h; learned positions n_positions (default 1024) */
        TRY(get_int(c, K_n_inner, 0, 4 * d.h, &f, err));
        TRY(get_int(c, K_n_positions, 0, 1024, &pos, err));
        TRY(put(m, GPUFIT_MODEL_MAX_POSITION, pos, "n_positions", err));
        break;
    }
    case F_NEOX: /* rotary over rotary_pct of each head (GPTNeoXConfig default 0.25) */
        TRY(get_int(c, K_intermediate_size, 1, 0, &f, err));
        rope = 1;
        break;
    case F_BLOOM: /* BloomMLP: 4h */
        f = 4 * d.h;
        TRY(put(m, GPUFIT_MODEL_EMB_NORM, 1, "model_type", err));
        break;
    default: { /* falcon */
        int64_t newarch = 0, mq = 1, alibi = 0;
        static const int kkv[] = {K_num_kv_heads, K_n_head_kv, -1};
        TRY(get_int(c, K_ffn_hidden_size, 0, 4 * d.h, &f, err));
        TRY(get_bool(c, K_new_decoder_architecture, 0, &newarch, err));
        TRY(get_bool(c, K_multi_query, 1, &mq, err));
        TRY(get_bool(c, K_bias, 0, &bias, err));
        TRY(get_bool(c, K_alibi, 0, &alibi, err));
        if (newarch)
            TRY(get_int_any(c, kkv, 0, d.nq, &nkv, err));
        else if (mq)
            nkv = 1;
        rope = !alibi; /* FalconAttention: rotary unless alibi */
        break;
    }
    }
    qkv_bias = bias;
    if (fi->family == F_NEOX) /* GPTNeoXConfig.attention_bias (default true) */
        TRY(get_bool(c, K_attention_bias, 1, &qkv_bias, err));
    TRY(put(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE, f, gpt2 ? "n_inner" : "intermediate_size", err));
    TRY(put(m, GPUFIT_MODEL_N_KV_HEADS, nkv, "num_kv_heads", err));
    TRY(get_bool(c, K_tie_word_embeddings, fi->tied, &tied, err));
    TRY(put(m, GPUFIT_MODEL_TIED_EMBEDDINGS, tied, "tie_word_embeddings", err));

    const char *act = fi->act;
    int ak = gpt2 ? K_activation_function : K_hidden_act;
    if (fi->family == F_GPT2 || fi->family == F_NEOX)
        TRY(get_str(c, ak, fi->act, &act, err));
    int64_t mlp = mlp_of(act, 0);
    if (mlp < 0)
        return bad_activation(key_names[ak], act, err);
    TRY(put(m, GPUFIT_MODEL_MLP, mlp, key_names[ak], err));
    TRY(put(m, GPUFIT_MODEL_NORM, GPUFIT_NORM_LAYERNORM, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_QKV_BIAS, qkv_bias, "bias", err));
    TRY(put(m, GPUFIT_MODEL_O_BIAS, qkv_bias, "bias", err));
    TRY(put(m, GPUFIT_MODEL_MLP_BIAS, bias, "bias", err));
    if (rope)
        /* transformers configuration_gpt_neox.py GPTNeoXConfig and configuration_falcon.py
         * FalconConfig: max_position_embeddings 2048 by default */
        TRY(map_rope(c, 2048, 0, fi->family == F_NEOX ? K_rotary_pct : -1,
                     fi->family == F_NEOX ? 0.25 : 0.0, m, err));
    return GPUFIT_OK;
}

/* BERT / RoBERTa encoders: the base model with its pooler (BertModel). */
static int32_t map_bert(const hcfg *c, struct gpufit_model *m, gpufit_error *err)
{
    static const int kh[] = {K_hidden_size, -1}, kl[] = {K_num_hidden_layers, -1},
                     kq[] = {K_num_attention_heads, -1};
    dims d = {0, 0, 0, 0};
    int64_t f = 0, pos = 0, types = 0;
    const char *pe = "absolute", *act = "gelu";
    TRY(common_dims(c, kh, kl, kq, &d, m, err));
    TRY(default_head_dim(&d, m, err));
    TRY(get_int(c, K_intermediate_size, 1, 0, &f, err));
    TRY(get_int(c, K_max_position_embeddings, 0, 512, &pos, err));
    TRY(get_int(c, K_type_vocab_size, 0, 2, &types, err));
    TRY(get_str(c, K_position_embedding_type, "absolute", &pe, err));
    if (strcmp(pe, "absolute") != 0) {
        char dd[72];
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_MAX_POSITION, UINT64_MAX,
                            "config.json: position_embedding_type \"%s\" is not modelled "
                            "(max_position: absolute positions)",
                            shown(pe, dd));
    }
    TRY(get_str(c, K_hidden_act, "gelu", &act, err));
    int64_t mlp = mlp_of(act, 0);
    if (mlp < 0)
        return bad_activation("hidden_act", act, err);
    TRY(put(m, GPUFIT_MODEL_ARCH, GPUFIT_ARCH_ENCODER, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_N_KV_HEADS, d.nq, "num_attention_heads", err));
    TRY(put(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE, f, "intermediate_size", err));
    TRY(put(m, GPUFIT_MODEL_MLP, mlp, "hidden_act", err));
    TRY(put(m, GPUFIT_MODEL_NORM, GPUFIT_NORM_LAYERNORM, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_TIED_EMBEDDINGS, 1, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_QKV_BIAS, 1, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_O_BIAS, 1, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_MLP_BIAS, 1, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_EMB_NORM, 1, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_POOLER, 1, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_MAX_POSITION, pos, "max_position_embeddings", err));
    return put(m, GPUFIT_MODEL_TYPE_VOCAB_SIZE, types, "type_vocab_size", err);
}

/* T5 encoder-decoder (T5Config). */
static int32_t
map_t5(const hcfg *c, const family_info *fi, struct gpufit_model *m, gpufit_error *err)
{
    static const int kh[] = {K_d_model, -1}, kl[] = {K_num_layers, -1}, kq[] = {K_num_heads, -1};
    dims d = {0, 0, 0, 0};
    int64_t dkv = 0, f = 0, dec = 0, buckets = 0, tied = 0;
    const char *proj = "relu";
    TRY(common_dims(c, kh, kl, kq, &d, m, err));
    TRY(get_int(c, K_d_kv, 1, 0, &dkv, err));
    TRY(get_int(c, K_d_ff, 1, 0, &f, err));
    TRY(get_int(c, K_num_decoder_layers, 0, d.L, &dec, err));
    TRY(get_int(c, K_relative_attention_num_buckets, 0, 32, &buckets, err));
    TRY(get_bool(c, K_tie_word_embeddings, fi->tied, &tied, err));
    TRY(get_str(c, K_feed_forward_proj, "relu", &proj, err));
    int gated = starts_with(proj, "gated-");
    int64_t mlp = mlp_of(gated ? proj + 6 : proj, gated);
    if (mlp < 0)
        return bad_activation("feed_forward_proj", proj, err);
    TRY(put(m, GPUFIT_MODEL_ARCH, GPUFIT_ARCH_ENCODER_DECODER, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_N_ENCODER_LAYERS, d.L, "num_layers", err));
    TRY(put(m, GPUFIT_MODEL_N_DECODER_LAYERS, dec, "num_decoder_layers", err));
    TRY(put(m, GPUFIT_MODEL_N_KV_HEADS, d.nq, "num_heads", err));
    TRY(put(m, GPUFIT_MODEL_HEAD_DIM, dkv, "d_kv", err));
    TRY(put(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE, f, "d_ff", err));
    TRY(put(m, GPUFIT_MODEL_MLP, mlp, "feed_forward_proj", err));
    TRY(put(m, GPUFIT_MODEL_NORM, GPUFIT_NORM_RMSNORM, "model_type", err));
    TRY(put(m, GPUFIT_MODEL_TIED_EMBEDDINGS, tied, "tie_word_embeddings", err));
    return put(m, GPUFIT_MODEL_REL_POS_BUCKETS, buckets, "relative_attention_num_buckets", err);
}

/* ---------------------------------------------------------------------------------------
 * Vision encoders (docs/memory/multimodal.md)
 * ------------------------------------------------------------------------------------- */
/* Sets the keys a vision configuration class fills by default (transformers
 * configuration_<family>.py) where vision_config omits them. */
typedef struct vdefault {
    int key;
    int64_t v;
} vdefault;

static void fill_defaults(hcfg *v, const vdefault *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!present(v, d[i].key)) {
            v->v[d[i].key].kind = V_INT;
            v->v[d[i].key].i = d[i].v;
        }
}

static int32_t vision_unsupported(const char *what, const char *name, gpufit_error *err)
{
    char d[72];
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_VISION_LAYERS, UINT64_MAX,
                        "config.json: %s \"%s\" is not modelled (set the vision_* keys by hand)",
                        what, shown(name, d));
}

/* The vision encoder of a multimodal config: vision_config (vis) with the wrapper's
 * model_type and keys (top) choosing the family and projector. Image sizes: the servers'
 * dummy image (LLaVA/CLIP image_size; Qwen2-VL and Qwen2.5-VL sqrt(max_pixels) of their
 * released preprocessor_config.json, 12,845,056 = 3584^2, which config.json does not hold). */
static int32_t map_vision(const hcfg *top, const hcfg *vis, struct gpufit_model *m,
                          gpufit_error *err)
{
    static const vdefault clip_d[] = {{K_hidden_size, 768},     {K_intermediate_size, 3072},
                                      {K_num_hidden_layers, 12}, {K_num_attention_heads, 12},
                                      {K_image_size, 224},       {K_patch_size, 32}};
    static const vdefault siglip_d[] = {{K_hidden_size, 768},     {K_intermediate_size, 3072},
                                        {K_num_hidden_layers, 12}, {K_num_attention_heads, 12},
                                        {K_image_size, 224},       {K_patch_size, 16}};
    static const vdefault pixtral_d[] = {{K_hidden_size, 1024},    {K_intermediate_size, 4096},
                                         {K_num_hidden_layers, 24}, {K_num_attention_heads, 16},
                                         {K_image_size, 1024},      {K_patch_size, 16}};
    static const vdefault qwen2_d[] = {{K_depth, 32},      {K_embed_dim, 1280},
                                       {K_hidden_size, 3584}, {K_mlp_ratio, 4},
                                       {K_num_heads, 16},  {K_patch_size, 14},
                                       {K_spatial_merge_size, 2}, {K_temporal_patch_size, 2}};
    static const vdefault qwen25_d[] = {{K_depth, 32},          {K_hidden_size, 1280},
                                        {K_intermediate_size, 3420}, {K_num_heads, 16},
                                        {K_patch_size, 14},     {K_spatial_merge_size, 2},
                                        {K_temporal_patch_size, 2}, {K_out_hidden_size, 3584}};
    static const vdefault mllama_d[] = {{K_hidden_size, 1280},      {K_num_hidden_layers, 32},
                                        {K_num_global_layers, 8},   {K_num_attention_heads, 16},
                                        {K_intermediate_size, 5120}, {K_image_size, 448},
                                        {K_patch_size, 14},         {K_max_num_tiles, 4}};
    const char *wrap = "", *vt = "";
    TRY(get_str(top, K_model_type, "", &wrap, err));
    TRY(get_str(vis, K_model_type, "", &vt, err));
    hcfg v = *vis;
    int64_t style, proj, L = 0, hv = 0, nh = 0, f = 0, p = 0, img = 0, merge = 1, tiles = 1;
    int64_t x = 0, out = 0;
    int llava = strcmp(wrap, "llava") == 0, next = strcmp(wrap, "llava_next") == 0;
    if (llava || next || strcmp(wrap, "gemma3") == 0 || strcmp(wrap, "mistral3") == 0) {
        /* LlavaConfig: a vision_config without model_type is CLIP's */
        if (vt[0] == '\0' && (llava || next))
            vt = "clip_vision_model";
        if (strcmp(vt, "clip_vision_model") == 0) {
            style = GPUFIT_VISION_CLIP;
            fill_defaults(&v, clip_d, sizeof clip_d / sizeof clip_d[0]);
        } else if (strcmp(vt, "siglip_vision_model") == 0) {
            style = GPUFIT_VISION_SIGLIP;
            fill_defaults(&v, siglip_d, sizeof siglip_d / sizeof siglip_d[0]);
            TRY(get_bool(&v, K_vision_use_head, 1, &x, err));
            if (x && !(llava || next) && strcmp(wrap, "gemma3") != 0)
                return vision_unsupported("vision_use_head of", wrap, err);
        } else if (strcmp(vt, "pixtral") == 0) {
            style = GPUFIT_VISION_PIXTRAL;
            fill_defaults(&v, pixtral_d, sizeof pixtral_d / sizeof pixtral_d[0]);
        } else {
            return vision_unsupported("vision_config model_type", vt, err);
        }
        TRY(get_int(&v, K_num_hidden_layers, 1, 0, &L, err));
        TRY(get_int(&v, K_hidden_size, 1, 0, &hv, err));
        TRY(get_int(&v, K_num_attention_heads, 1, 0, &nh, err));
        TRY(get_int(&v, K_intermediate_size, 1, 0, &f, err));
        TRY(get_int(&v, K_patch_size, 1, 0, &p, err));
        TRY(get_int(&v, K_image_size, 1, 0, &img, err));
        if (strcmp(wrap, "gemma3") == 0) {
            /* Gemma3MultiModalProjector: average pool to mm_tokens_per_image (default 256) */
            int64_t per = 256, side = 1, grid = p > 0 ? img / p : 0;
            TRY(get_int(top, K_mm_tokens_per_image, 0, 256, &per, err));
            while (side * side < per)
                side++;
            if (style != GPUFIT_VISION_SIGLIP || side * side != per || side == 0 ||
                grid % side != 0)
                return vision_unsupported("mm_tokens_per_image of", wrap, err);
            proj = GPUFIT_VPROJ_GEMMA3;
            merge = grid / side;
        } else if (strcmp(wrap, "mistral3") == 0) {
            /* Mistral3MultiModalProjector: merger of spatial_merge_size (default 2), no bias */
            TRY(get_int(top, K_spatial_merge_size, 0, 2, &merge, err));
            TRY(get_bool(top, K_multimodal_projector_bias, 0, &x, err));
            if (x)
                return vision_unsupported("multimodal_projector_bias of", wrap, err);
            proj = GPUFIT_VPROJ_MISTRAL3;
        } else {
            /* LlavaMultiModalProjector, with biases (multimodal_projector_bias, default true);
             * LLaVA-NeXT's anyres: the base image and 2 x 2 tiles of its largest grid pinpoint
             * (672 x 672 in every llava-v1.6 release), 5 encoder passes per image */
            TRY(get_bool(top, K_multimodal_projector_bias, 1, &x, err));
            if (!x)
                return vision_unsupported("multimodal_projector_bias false of", wrap, err);
            proj = next ? GPUFIT_VPROJ_MLP_NEWLINE : GPUFIT_VPROJ_MLP;
            tiles = next ? 5 : 1;
        }
    } else if (strcmp(wrap, "qwen2_vl") == 0 || strcmp(wrap, "qwen2_5_vl") == 0) {
        int q25 = strcmp(wrap, "qwen2_5_vl") == 0;
        fill_defaults(&v, q25 ? qwen25_d : qwen2_d, 8);
        style = q25 ? GPUFIT_VISION_QWEN2_5_VL : GPUFIT_VISION_QWEN2_VL;
        proj = GPUFIT_VPROJ_MERGER;
        TRY(get_int(&v, K_depth, 1, 0, &L, err));
        TRY(get_int(&v, K_num_heads, 1, 0, &nh, err));
        TRY(get_int(&v, K_patch_size, 1, 0, &p, err));
        TRY(get_int(&v, K_spatial_merge_size, 1, 0, &merge, err));
        TRY(get_int(&v, K_temporal_patch_size, 1, 0, &x, err));
        if (x != 2)
            return vision_unsupported("temporal_patch_size other than 2 of", wrap, err);
        if (q25) { /* Qwen2_5_VLVisionConfig: hidden_size is the ViT's width */
            TRY(get_int(&v, K_hidden_size, 1, 0, &hv, err));
            TRY(get_int(&v, K_intermediate_size, 1, 0, &f, err));
            TRY(get_int(&v, K_out_hidden_size, 1, 0, &out, err));
        } else { /* Qwen2VLVisionConfig: embed_dim wide, hidden_size the merger's output */
            int64_t ratio = 0;
            TRY(get_int(&v, K_embed_dim, 1, 0, &hv, err));
            TRY(get_int(&v, K_mlp_ratio, 1, 0, &ratio, err));
            TRY(get_int(&v, K_hidden_size, 1, 0, &out, err));
            f = hv * ratio;
        }
        if (out != m->hidden_size)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_VISION_PROJECTOR,
                                UINT64_MAX,
                                "config.json: vision_config %s (%" PRId64
                                ") differs from the text hidden_size (%" PRId64 ")",
                                q25 ? "out_hidden_size" : "hidden_size", out, m->hidden_size);
        img = 3584;
    } else if (strcmp(wrap, "mllama") == 0) {
        /* MllamaVisionConfig: num_hidden_layers local + num_global_layers gated layers, and
         * the projector over 1 + len(intermediate_layers_indices) stacked features; every
         * release has 8 and 5 */
        const hval *il = &v.v[K_intermediate_layers_indices];
        int64_t glob = 0;
        fill_defaults(&v, mllama_d, sizeof mllama_d / sizeof mllama_d[0]);
        TRY(get_int(&v, K_num_global_layers, 1, 0, &glob, err));
        if (glob != 8 || (present(&v, K_intermediate_layers_indices) &&
                          (il->kind != V_ARRAY || il->i != 5)))
            return vision_unsupported("num_global_layers / intermediate_layers_indices of", wrap,
                                      err);
        style = GPUFIT_VISION_MLLAMA;
        proj = GPUFIT_VPROJ_MLLAMA;
        TRY(get_int(&v, K_num_hidden_layers, 1, 0, &L, err));
        L += glob;
        TRY(get_int(&v, K_hidden_size, 1, 0, &hv, err));
        TRY(get_int(&v, K_num_attention_heads, 1, 0, &nh, err));
        TRY(get_int(&v, K_intermediate_size, 1, 0, &f, err));
        TRY(get_int(&v, K_patch_size, 1, 0, &p, err));
        TRY(get_int(&v, K_image_size, 1, 0, &img, err));
        TRY(get_int(&v, K_max_num_tiles, 1, 0, &tiles, err));
    } else {
        return vision_unsupported("vision_config of model_type", wrap, err);
    }
    TRY(put(m, GPUFIT_MODEL_VISION_LAYERS, L, "vision_config num_hidden_layers", err));
    TRY(put(m, GPUFIT_MODEL_VISION_HIDDEN_SIZE, hv, "vision_config hidden_size", err));
    TRY(put(m, GPUFIT_MODEL_VISION_HEADS, nh, "vision_config num_attention_heads", err));
    TRY(put(m, GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE, f, "vision_config intermediate_size", err));
    TRY(put(m, GPUFIT_MODEL_VISION_PATCH_SIZE, p, "vision_config patch_size", err));
    TRY(put(m, GPUFIT_MODEL_VISION_IMAGE_SIZE, img, "vision_config image_size", err));
    TRY(put(m, GPUFIT_MODEL_VISION_MERGE, merge, "spatial_merge_size", err));
    TRY(put(m, GPUFIT_MODEL_VISION_TILES, tiles, "max_num_tiles", err));
    TRY(put(m, GPUFIT_MODEL_VISION_STYLE, style, "vision_config model_type", err));
    return put(m, GPUFIT_MODEL_VISION_PROJECTOR, proj, "model_type", err);
}

/* Fills m->name from _name_or_path (its last path component) or the model_type. */
static void set_name(struct gpufit_model *m, const hcfg *c, const char *type)
{
    const char *n = type;
    const hval *v = &c->v[K__name_or_path];
    if (v->kind == V_STRING && !v->truncated && v->s[0] != '\0') {
        const char *slash = strrchr(v->s, '/');
        n = slash != NULL && slash[1] != '\0' ? slash + 1 : v->s;
    }
    size_t o = 0;
    for (size_t i = 0; n[i] != '\0' && o < sizeof m->name - 1; i++) {
        unsigned char ch = (unsigned char)n[i];
        m->name[o++] = (ch < 0x20 || ch == 0x7F) ? '?' : (char)ch;
    }
    m->name[o] = '\0';
    if (o == 0)
        memcpy(m->name, "custom", sizeof "custom");
}

/* Builds the model from the collected keys (text: the text_config, or the top level). */
static int32_t build(const hcfg *top, hcfg *text, int has_text, const hcfg *vis, int has_vis,
                     struct gpufit_model *m, gpufit_error *err)
{
    const hcfg *c = has_text ? text : top;
    const char *type = NULL;
    int tk = present(c, K_model_type) ? K_model_type : -1;
    const hcfg *tc = tk >= 0 ? c : top;
    if (!present(tc, K_model_type))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "config.json: missing key \"model_type\"");
    TRY(get_str(tc, K_model_type, "", &type, err));
    const family_info *fi = NULL;
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (strcmp(type, families[i].type) == 0)
            fi = &families[i];
    /* an unknown model_type with the standard keys is read as a Llama-style decoder (the
     * report notes it); without them it stays an error naming the missing keys */
    static const family_info generic = {"", F_LLAMA, 0, X_NO_ATTN_BIAS, "silu"};
    int unknown_type = fi == NULL;
    if (fi == NULL) {
        static const int std_keys[] = {K_hidden_size, K_num_hidden_layers, K_num_attention_heads,
                                       K_intermediate_size, K_vocab_size};
        static const char *const std_names[] = {"hidden_size", "num_hidden_layers",
                                                "num_attention_heads", "intermediate_size",
                                                "vocab_size"};
        char d[72], missing[128];
        size_t n = 0;
        missing[0] = '\0';
        for (size_t i = 0; i < sizeof std_keys / sizeof std_keys[0]; i++)
            if (!present(c, std_keys[i]))
                n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%s", n ? ", " : "",
                                      std_names[i]);
        if (n > 0)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0,
                                (uint64_t)tc->v[K_model_type].offset,
                                "config.json: model_type \"%s\" is not known and the standard "
                                "keys of a decoder are missing: %s",
                                shown(tc->v[K_model_type].truncated ? "(too long)" : type, d),
                                missing);
        fi = &generic;
    }
    if (has_text && strcmp(type, "llama") == 0) {
        /* a nested LlamaConfig (LLaVA's text_config) leaves its class defaults out
         * (configuration_llama.py: 4096 wide, 32 layers and heads, 11008, 32000 tokens) */
        static const vdefault llama_d[] = {{K_hidden_size, 4096},
                                           {K_intermediate_size, 11008},
                                           {K_num_hidden_layers, 32},
                                           {K_num_attention_heads, 32},
                                           {K_vocab_size, 32000}};
        fill_defaults(text, llama_d, sizeof llama_d / sizeof llama_d[0]);
    }
    gpufit__model_defaults(m);
    m->from_unknown_type = unknown_type;
    /* presets set these explicitly (never their -1 "auto"): so do configs */
    m->o_bias = 0;
    m->emb_norm = 0;
    m->arch = GPUFIT_ARCH_DECODER;
    switch (fi->family) {
    case F_LLAMA:
        TRY(map_llama(c, fi, m, err));
        break;
    case F_BERT:
        TRY(map_bert(c, m, err));
        break;
    case F_T5:
        TRY(map_t5(c, fi, m, err));
        break;
    default:
        TRY(map_gpt(c, fi, m, err));
        break;
    }
    if (has_vis)
        TRY(map_vision(top, vis, m, err));
    set_name(m, top, type);
    /* the same checks as any model: ranges, divisibility, counts within 64 bits */
    gpufit__shape s;
    gpufit__counts n;
    TRY(gpufit__model_resolve(m, &s, err));
    return gpufit__model_count(&s, &n, err);
}

/* ---------------------------------------------------------------------------------------
 * quantization_config: per-module storage of a pre-quantised checkpoint
 * (docs/memory/quantisation.md). A second pass over the document, self-contained.
 * ------------------------------------------------------------------------------------- */
enum { QK_EMBD = 1, QK_ATTN = 2, QK_MLP = 4, QK_OUT = 8 };

/* Module groups a not-converted / ignored module name covers (substring match, so that
 * "lm_head", "re:.*lm_head", "model.layers.0.self_attn.q_proj" all count). */
static int q_kept(const char *n)
{
    int f = 0;
    if (strstr(n, "lm_head") || strstr(n, "output"))
        f |= QK_OUT;
    if (strstr(n, "embed"))
        f |= QK_EMBD;
    if (strstr(n, "attn") || strstr(n, "attention") || strstr(n, "q_proj") ||
        strstr(n, "k_proj") || strstr(n, "v_proj") || strstr(n, "o_proj"))
        f |= QK_ATTN;
    if (strstr(n, "mlp") || strstr(n, "gate_proj") || strstr(n, "up_proj") ||
        strstr(n, "down_proj") || strstr(n, "experts"))
        f |= QK_MLP;
    return f;
}

typedef struct qcfg {
    char method[32], quant_type[16], ctype[16];
    int64_t bits, group, ctbits, ctgroup;
    int load4, load8, dq, kept, has_bits;
    size_t off; /* offset of quantization_config */
} qcfg;

static void q_string(const gpufit__json_token *t, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    if (t->type != GPUFIT__JSON_STRING && t->type != GPUFIT__JSON_KEY)
        return;
    if (gpufit__json_decode(t, out, cap, &n, NULL) != GPUFIT_OK)
        out[0] = '\0'; /* too long: no name we know */
}

static int64_t q_int(const gpufit__json_token *t)
{
    hval v = {0};
    if (t->type != GPUFIT__JSON_NUMBER)
        return INT64_MIN;
    read_number(t, &v);
    return v.kind == V_INT ? v.i : INT64_MIN;
}

/* Reads a value of unknown shape: module-name arrays add to q->kept; inside config_groups
 * the "weights" objects give num_bits / type / group_size. Iterative (depth from tokens). */
static int32_t q_walk(gpufit__json *p, const gpufit__json_token *first, int names, qcfg *q,
                      gpufit_error *err)
{
    if (first->type != GPUFIT__JSON_ARRAY && first->type != GPUFIT__JSON_OBJECT)
        return GPUFIT_OK;
    uint32_t base = first->depth, weights = 0; /* weights: depth of its members */
    char key[32] = "", buf[256];
    for (;;) {
        gpufit__json_token t;
        int32_t st = gpufit__json_next(p, &t, err);
        if (st != GPUFIT_OK)
            return st;
        int end = t.type == GPUFIT__JSON_ARRAY_END || t.type == GPUFIT__JSON_OBJECT_END;
        if (end && t.depth == base) /* a close token has the depth of its open token */
            return GPUFIT_OK;
        if (end && weights != 0 && t.depth + 1 == weights)
            weights = 0;
        if (t.type == GPUFIT__JSON_KEY) {
            q_string(&t, key, sizeof key);
            continue;
        }
        if (!names && t.type == GPUFIT__JSON_OBJECT && strcmp(key, "weights") == 0)
            weights = t.depth + 1;
        else if (names && t.type == GPUFIT__JSON_STRING) {
            q_string(&t, buf, sizeof buf);
            q->kept |= q_kept(buf);
        } else if (!names && weights != 0 && t.depth == weights) {
            if (strcmp(key, "num_bits") == 0)
                q->ctbits = q_int(&t);
            else if (strcmp(key, "group_size") == 0)
                q->ctgroup = q_int(&t);
            else if (strcmp(key, "type") == 0)
                q_string(&t, q->ctype, sizeof q->ctype);
        }
        key[0] = '\0';
    }
}

static int32_t q_unsupported(const qcfg *q, const char *what, gpufit_error *err)
{
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_MLP_DTYPE, (uint64_t)q->off,
                        "config.json: quantization_config %s is not supported", what);
}

/* Fills m's per-module dtypes from quantization_config and torch_dtype; a model without
 * quantization_config keeps them auto. */
static int32_t read_quantization_config(const char *json, size_t len, struct gpufit_model *m,
                                        gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token t, k, v;
    qcfg q;
    memset(&q, 0, sizeof q);
    q.bits = q.group = q.ctbits = q.ctgroup = INT64_MIN;
    char torch[16] = "";
    int found = 0;
    TRY(gpufit__json_init(&p, json, len, err));
    TRY(gpufit__json_next(&p, &t, err));
    for (;;) {
        int32_t st = gpufit__json_member(&p, &k, &v, err);
        if (st < 0)
            return st;
        if (st == 0)
            break;
        if ((gpufit__json_equals(&k, "torch_dtype") || gpufit__json_equals(&k, "dtype")) &&
            v.type == GPUFIT__JSON_STRING) {
            q_string(&v, torch, sizeof torch);
            continue;
        }
        if (!gpufit__json_equals(&k, "quantization_config") || v.type != GPUFIT__JSON_OBJECT) {
            TRY(gpufit__json_skip(&p, &v, err));
            continue;
        }
        found = 1;
        q.off = v.offset;
        for (;;) { /* members of quantization_config */
            gpufit__json_token qk, qv;
            st = gpufit__json_member(&p, &qk, &qv, err);
            if (st < 0)
                return st;
            if (st == 0)
                break;
            int skip_list = gpufit__json_equals(&qk, "modules_to_not_convert") ||
                            gpufit__json_equals(&qk, "llm_int8_skip_modules") ||
                            gpufit__json_equals(&qk, "ignore");
            if (skip_list || gpufit__json_equals(&qk, "config_groups")) {
                TRY(q_walk(&p, &qv, skip_list, &q, err));
                continue;
            }
            if (qv.type == GPUFIT__JSON_ARRAY || qv.type == GPUFIT__JSON_OBJECT) {
                /* every other key read here is a scalar: a container is skipped whole (a
                 * fuzzed "quant_method": [...] was read as a string and its elements then
                 * parsed as members, without end) */
                TRY(gpufit__json_skip(&p, &qv, err));
                continue;
            }
            if (gpufit__json_equals(&qk, "quant_method"))
                q_string(&qv, q.method, sizeof q.method);
            else if (gpufit__json_equals(&qk, "bits") || gpufit__json_equals(&qk, "w_bit"))
                q.bits = q_int(&qv), q.has_bits = 1;
            else if (gpufit__json_equals(&qk, "group_size") || gpufit__json_equals(&qk, "q_group_size"))
                q.group = q_int(&qv);
            else if (gpufit__json_equals(&qk, "load_in_4bit"))
                q.load4 = qv.type == GPUFIT__JSON_TRUE;
            else if (gpufit__json_equals(&qk, "load_in_8bit"))
                q.load8 = qv.type == GPUFIT__JSON_TRUE;
            else if (gpufit__json_equals(&qk, "bnb_4bit_use_double_quant"))
                q.dq = qv.type == GPUFIT__JSON_TRUE;
            else if (gpufit__json_equals(&qk, "bnb_4bit_quant_type"))
                q_string(&qv, q.quant_type, sizeof q.quant_type);
        }
    }
    if (!found)
        return GPUFIT_OK;
    /* the 16-bit modules: torch_dtype (transformers loads the kept modules in it) */
    int64_t half = strcmp(torch, "float32") == 0   ? GPUFIT_DTYPE_FP32
                   : strcmp(torch, "bfloat16") == 0 ? GPUFIT_DTYPE_BF16
                                                    : GPUFIT_DTYPE_FP16;
    int64_t lin;
    int kept = q.kept;
    const char *mth = q.method;
    if (strcmp(mth, "awq") == 0 || strcmp(mth, "gptq") == 0) {
        /* AutoAWQ / AutoGPTQ quantise the decoder layers' nn.Linear only: embed_tokens and
         * lm_head stay in torch_dtype (awq/quantize/quantizer.py, auto_gptq quantize) */
        if (q.has_bits && q.bits != 4)
            return q_unsupported(&q, "bits other than 4 (gptq/awq)", err);
        if (q.group != INT64_MIN && q.group != 128)
            return q_unsupported(&q, "group_size other than 128 (gptq/awq)", err);
        lin = mth[0] == 'a' ? GPUFIT_DTYPE_AWQ4 : GPUFIT_DTYPE_GPTQ4;
        kept |= QK_EMBD | QK_OUT;
    } else if (strcmp(mth, "bitsandbytes") == 0) {
        /* replace_with_bnb_linear skips get_keys_to_not_convert (lm_head / tied output);
         * nn.Embedding is never replaced (transformers integrations/bitsandbytes.py) */
        if (q.load4) {
            int fp4 = strcmp(q.quant_type, "fp4") == 0;
            if (q.dq)
                lin = GPUFIT_DTYPE_NF4_DQ; /* nested absmax: same bytes for fp4 and nf4 */
            else
                lin = fp4 ? GPUFIT_DTYPE_FP4 : GPUFIT_DTYPE_NF4;
        } else if (q.load8) {
            lin = GPUFIT_DTYPE_INT8;
        } else {
            return q_unsupported(&q, "bitsandbytes without load_in_4bit or load_in_8bit", err);
        }
        kept |= QK_EMBD | QK_OUT;
    } else if (strcmp(mth, "fp8") == 0 || strcmp(mth, "fbgemm_fp8") == 0) {
        /* HfQuantizer.get_modules_to_not_convert (transformers quantizers/base.py) adds
         * get_keys_to_not_convert (lm_head) to modules_to_not_convert; nn.Embedding is no
         * Linear. Per-channel / 128x128-block fp32 scales are not counted (< 0.4 %). */
        lin = GPUFIT_DTYPE_FP8;
        kept |= QK_EMBD | QK_OUT;
    } else if (strcmp(mth, "compressed-tensors") == 0) {
        /* compressed-tensors quantises Linear targets; embeddings stay (ignore: lm_head) */
        int isfloat = strcmp(q.ctype, "float") == 0;
        if (q.ctbits == 8)
            lin = isfloat ? GPUFIT_DTYPE_FP8 : GPUFIT_DTYPE_INT8;
        else if (q.ctbits == 4 && !isfloat && (q.ctgroup == 128 || q.ctgroup == INT64_MIN))
            lin = GPUFIT_DTYPE_INT4; /* pack-quantized: 4 bits + 16-bit scale per 128 */
        else
            return q_unsupported(&q, "config_groups weights other than 8-bit or int4 g128", err);
        kept |= QK_EMBD;
    } else {
        char d[72];
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_MLP_DTYPE, (uint64_t)q.off,
                            "config.json: quantization_config quant_method \"%s\" is not "
                            "supported", shown(mth, d));
    }
    m->embedding_dtype = kept & QK_EMBD ? half : lin;
    m->output_dtype = kept & QK_OUT ? half : lin;
    m->attention_dtype = kept & QK_ATTN ? half : lin;
    m->mlp_dtype = kept & QK_MLP ? half : lin;
    m->expert_dtype = -1;
    return GPUFIT_OK;
}

int32_t
gpufit_model_from_hf_config(gpufit_model **out, const char *json, size_t len, gpufit_error *err)
{
    if (out == NULL || (json == NULL && len > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out or json is NULL");
    *out = NULL;
    gpufit__json p;
    gpufit__json_token t;
    int32_t st = gpufit__json_init(&p, json, len, err);
    if (st == GPUFIT_OK)
        st = gpufit__json_next(&p, &t, err);
    if (st != GPUFIT_OK)
        return st;
    if (t.type != GPUFIT__JSON_OBJECT)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)t.offset,
                            "config.json: the document must be a JSON object");
    /* keys on the heap would be an allocation beyond the model: keep them on the stack,
     * three tables (top level, text_config, vision_config) of K_COUNT small values */
    hcfg top, text, vis;
    int has_text = 0, has_vis = 0;
    memset(&top, 0, sizeof top);
    memset(&text, 0, sizeof text);
    memset(&vis, 0, sizeof vis);
    st = read_config(&p, &top, &text, &has_text, &vis, &has_vis, err);
    if (st == GPUFIT_OK)
        st = gpufit__json_next(&p, &t, err); /* END: nothing after the object */
    if (st != GPUFIT_OK)
        return st;
    struct gpufit_model m;
    /* every byte, so that the returned handle is the same for the same file (the defaults
     * leave a stale cache's bytes as they are) */
    memset(&m, 0, sizeof m);
    st = build(&top, &text, has_text, &vis, has_vis, &m, err);
    if (st != GPUFIT_OK)
        return st;
    st = read_quantization_config(json, len, &m, err);
    if (st != GPUFIT_OK)
        return st;
    gpufit_model *r = malloc(sizeof *r);
    if (r == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    *r = m;
    *out = r;
    gpufit__ok(err);
    return GPUFIT_OK;
}
