/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/model/model_shape.c, lib/model/model_count.c and lib/model/model_presets.c: exact parameter
 * counts of real models, derived defaults, every validation error, and the preset catalogue. */
#include <criterion/criterion.h>

#include "internal.h"

#include <stddef.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------- */
static struct gpufit_model preset(const char *name)
{
    struct gpufit_model m;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit__preset_load(&m, name, strlen(name), &err);
    cr_assert_eq(st, GPUFIT_OK, "preset %s: %s", name, err.message);
    return m;
}

static gpufit__shape shape_of(const struct gpufit_model *m)
{
    gpufit__shape s;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit__model_resolve(m, &s, &err);
    cr_assert_eq(st, GPUFIT_OK, "resolve %s: %s", m->name, err.message);
    return s;
}

static gpufit__counts counts_of(const struct gpufit_model *m)
{
    gpufit__shape s = shape_of(m);
    gpufit__counts c;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit__model_count(&s, &c, &err);
    cr_assert_eq(st, GPUFIT_OK, "count %s: %s", m->name, err.message);
    return c;
}

/* A small custom dense decoder built on the library defaults. */
static struct gpufit_model custom(void)
{
    struct gpufit_model m;
    gpufit__model_defaults(&m);
    m.n_layers = 2;
    m.hidden_size = 4096;
    m.n_heads = 32;
    m.ffn_hidden_size = 11008;
    m.vocab_size = 32000;
    return m;
}

/* ---------------------------------------------------------------------------------------
 * Exact counts. Sources: memory-model.md §1.5 / Appendix A (verified there); the brief's list
 * of well-known totals; and published numbers found in public code (HF num_parameters()
 * printouts, keras-hub preset metadata, GGUF general.parameter_count), named per row.
 * ------------------------------------------------------------------------------------- */
typedef struct exact {
    const char *name;
    uint64_t total, active; /* active 0 = same as total (dense) */
} exact;

static const exact exact_counts[] = {
    /* memory-model.md §1.5 */
    {"llama-2-7b-hf", 6738415616ULL, 0},
    {"meta-llama-3-8b", 8030261248ULL, 0},
    {"meta-llama-3-70b", 70553706496ULL, 0},
    {"mixtral-8x7b-v0.1", 46702792704ULL, 12879925248ULL},
    {"deepseek-v3", 671026419200ULL, 37552297472ULL},
    {"deepseek-r1", 671026419200ULL, 37552297472ULL},
    {"qwen2.5-1.5b", 1543714304ULL, 0},
    {"qwen2.5-7b", 7615616512ULL, 0},
    {"qwen2.5-14b", 14770033664ULL, 0},
    {"qwen2.5-32b", 32763876352ULL, 0},
    {"gpt-neox-20b", 20554567680ULL, 0},
    {"bloom", 176247271424ULL, 0},
    {"bloom-560m", 559214592ULL, 0},
    /* well-known totals (brief) */
    {"gpt2", 124439808ULL, 0},
    {"bert-base-uncased", 109482240ULL, 0},
    {"t5-base", 222903552ULL, 0},
    {"meta-llama-3.1-405b", 405853388800ULL, 0},
    {"llama-3.2-1b", 1235814400ULL, 0},
    {"llama-3.2-3b", 3212749824ULL, 0},
    {"mistral-7b-v0.1", 7241732096ULL, 0},
    {"qwen2.5-72b", 72706203648ULL, 0},
    {"qwen2.5-0.5b", 494032768ULL, 0},
    /* same config.json as a verified row above */
    {"meta-llama-3.1-8b", 8030261248ULL, 0},
    {"meta-llama-3.1-70b", 70553706496ULL, 0},
    {"llama-3.3-70b-instruct", 70553706496ULL, 0},
    {"deepseek-r1-distill-llama-8b", 8030261248ULL, 0},
    {"deepseek-r1-distill-llama-70b", 70553706496ULL, 0},
    {"deepseek-r1-distill-qwen-7b", 7615616512ULL, 0},
    {"deepseek-r1-distill-qwen-14b", 14770033664ULL, 0},
    {"deepseek-r1-distill-qwen-32b", 32763876352ULL, 0},
    /* published counts found in public code */
    {"deepseek-r1-distill-qwen-1.5b", 1777088000ULL, 0}, /* llama.cpp model_n_params */
    {"gpt2-medium", 354823168ULL, 0},                    /* keras-hub / HF printouts */
    {"gpt2-large", 774030080ULL, 0},
    {"gpt2-xl", 1557611200ULL, 0},
    {"bert-large-uncased", 335141888ULL, 0}, /* keras-hub bert_large_en_uncased */
    {"bert-base-cased", 108310272ULL, 0},    /* keras-hub bert_base_en */
    {"roberta-base", 124645632ULL, 0},
    {"roberta-large", 355359744ULL, 0},
    {"t5-small", 60506624ULL, 0}, /* keras-hub t5_small */
    {"t5-large", 737668096ULL, 0},
    {"t5-3b", 2851598336ULL, 0},
    {"t5-11b", 11307321344ULL, 0},
    {"flan-t5-small", 76961152ULL, 0},
    {"flan-t5-base", 247577856ULL, 0},
    {"flan-t5-large", 783150080ULL, 0},
    {"flan-t5-xl", 2849757184ULL, 0},
    {"flan-t5-xxl", 11135332352ULL, 0},
    {"opt-125m", 125239296ULL, 0},
    {"opt-1.3b", 1315758080ULL, 0},
    {"tinyllama-1.1b-chat-v1.0", 1100048384ULL, 0},
    {"gemma-2b", 2506172416ULL, 0}, /* keras-hub gemma_2b_en */
    {"gemma-7b", 8537680896ULL, 0},
    {"phi-3-mini-4k-instruct", 3821079552ULL, 0},
    {"llama-2-13b-hf", 13015864320ULL, 0},
    {"llama-2-70b-hf", 68976648192ULL, 0},
    {"mistral-7b-v0.3", 7248023552ULL, 0},
    {"bloom-7b1", 7069016064ULL, 0},
    {"qwen2.5-3b", 3085938688ULL, 0},
    {"qwen3-0.6b", 596049920ULL, 0},
    {"qwen3-4b", 4022468096ULL, 0},
    {"qwen3-8b", 8190735360ULL, 0},
    {"qwen3-32b", 32762123264ULL, 0},
    {"qwen3-30b-a3b", 30532122624ULL, 3353032704ULL}, /* GGUF general.parameter_count */
    {"qwen1.5-moe-a2.7b", 14315784192ULL, 0},         /* active not published exactly */
    {"deepseek-v2-lite", 15706484224ULL, 0},
    {"mixtral-8x22b-v0.1", 140620634112ULL, 0},
};

Test(models, exact_published_counts)
{
    for (size_t i = 0; i < sizeof exact_counts / sizeof exact_counts[0]; i++) {
        const exact *e = &exact_counts[i];
        struct gpufit_model m = preset(e->name);
        gpufit__counts c = counts_of(&m);
        cr_assert_eq(c.total, e->total, "%s: total %llu, expected %llu", e->name,
                     (unsigned long long)c.total, (unsigned long long)e->total);
        if (e->active != 0)
            cr_assert_eq(c.active, e->active, "%s: active %llu, expected %llu", e->name,
                         (unsigned long long)c.active, (unsigned long long)e->active);
        if (m.n_experts == 0)
            cr_assert_eq(c.active, c.total, "%s: dense active != total", e->name);
    }
}

/* memory-model.md §1.3: one DeepSeek-V3 MLA attention block = 187,107,328 parameters. */
Test(models, deepseek_mla_attention_and_layers)
{
    struct gpufit_model m = preset("deepseek-v3");
    gpufit__shape s = shape_of(&m);
    cr_assert_eq(s.mla, 1);
    cr_assert_eq(s.c, 512 + 64);
    cr_assert_eq(s.q, 128 * (128 + 64));
    cr_assert_eq(s.layers[GPUFIT__W_DENSE], 3);
    cr_assert_eq(s.layers[GPUFIT__W_MOE], 58);
    cr_assert_eq(s.n_layers, 61);
    gpufit__counts c = counts_of(&m);
    uint64_t dense_mlp = 3ULL * 7168 * 18432, norms = 2ULL * 7168;
    cr_assert_eq(c.per_layer[GPUFIT__W_DENSE] - dense_mlp - norms, 187107328ULL);
    cr_assert_eq(c.embedding, 129280ULL * 7168);
    cr_assert_eq(c.output, 129280ULL * 7168);
    cr_assert_eq(c.largest_layer, c.per_layer[GPUFIT__W_MOE]);
}

/* Llama-2-7B per component (memory-model.md §1.1): layer = 4h² + 3hf + 2h. */
Test(models, dense_components)
{
    struct gpufit_model m = preset("llama-2-7b");
    gpufit__counts c = counts_of(&m);
    cr_assert_eq(c.per_layer[GPUFIT__W_DENSE], 4ULL * 4096 * 4096 + 3ULL * 4096 * 11008 + 8192);
    cr_assert_eq(c.embedding, 32000ULL * 4096);
    cr_assert_eq(c.output, 32000ULL * 4096);
    cr_assert_eq(c.global, 2ULL * 32000 * 4096 + 4096);
    cr_assert_eq(c.largest_layer, c.per_layer[GPUFIT__W_DENSE]);
    cr_assert_eq(c.per_layer[GPUFIT__W_MOE], 0);
}

/* GPT-2: tied head, learned positions, 12h² + 13h per layer (memory-model.md §1.5). */
Test(models, gpt2_tied_and_positions)
{
    struct gpufit_model m = preset("gpt2");
    gpufit__counts c = counts_of(&m);
    uint64_t h = 768;
    cr_assert_eq(c.per_layer[GPUFIT__W_DENSE], 12 * h * h + 13 * h);
    cr_assert_eq(c.output, 0);
    cr_assert_eq(c.global, 50257 * h + 1024 * h + 2 * h);
}

/* T5: shared embedding once, relative bias once per stack, cross attention in the decoder. */
Test(models, t5_structure)
{
    struct gpufit_model m = preset("t5-base");
    gpufit__shape s = shape_of(&m);
    cr_assert_eq(s.layers[GPUFIT__W_ENC], 12);
    cr_assert_eq(s.layers[GPUFIT__W_DEC], 12);
    cr_assert_eq(s.n_layers, 24);
    gpufit__counts c = counts_of(&m);
    uint64_t h = 768, f = 3072;
    cr_assert_eq(c.per_layer[GPUFIT__W_ENC], 4 * h * h + 2 * h * f + 2 * h);
    cr_assert_eq(c.per_layer[GPUFIT__W_DEC], 8 * h * h + 2 * h * f + 3 * h);
    cr_assert_eq(c.global, 32128 * h + 2 * h + 2 * 32 * 12);
    gpufit__tgroup g[GPUFIT__TGROUPS_MAX];
    size_t n = gpufit__model_tensors(&s, g);
    int rel = 0, cross = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i].kind == GPUFIT__T_REL_POS) {
            rel = 1;
            cr_assert_eq(g[i].copies, 2);
            cr_assert_eq(g[i].rows * g[i].cols, 32 * 12);
        }
        if (g[i].kind == GPUFIT__T_CROSS_Q)
            cross = 1;
    }
    cr_assert(rel && cross);
}

/* The tensor walk and the counts agree for every preset; no group list overflows. */
Test(models, groups_sum_to_total)
{
    for (size_t i = 0; i < gpufit__preset_count(); i++) {
        struct gpufit_model m;
        cr_assert_eq(gpufit__preset_get(i, &m, NULL, NULL, NULL), GPUFIT_OK);
        gpufit__shape s = shape_of(&m);
        gpufit__tgroup g[GPUFIT__TGROUPS_MAX];
        size_t n = gpufit__model_tensors(&s, g);
        cr_assert(n > 0 && n < GPUFIT__TGROUPS_MAX, "%s: %zu groups", m.name, n);
        uint64_t sum = 0;
        for (size_t j = 0; j < n; j++) {
            uint64_t mult = g[j].where == GPUFIT__W_GLOBAL ? 1 : s.layers[g[j].where];
            cr_assert(g[j].where < GPUFIT__W_COUNT && g[j].kind < GPUFIT__T_COUNT);
            cr_assert(g[j].copies > 0 && g[j].rows > 0 && g[j].cols > 0);
            sum += mult * g[j].copies * g[j].rows * g[j].cols;
        }
        gpufit__counts c = counts_of(&m);
        cr_assert_eq(sum, c.total, "%s", m.name);
        cr_assert(c.active <= c.total && c.active > 0, "%s", m.name);
        cr_assert(c.largest_layer > 0 && c.largest_layer < c.total, "%s", m.name);
    }
}

/* Every optional tensor at once stays within GPUFIT__TGROUPS_MAX. */
Test(models, all_options_fit_group_limit)
{
    struct gpufit_model m = custom();
    m.norm = GPUFIT_NORM_LAYERNORM;
    m.qkv_bias = m.mlp_bias = m.qk_norm = m.pooler = 1;
    m.max_position = 2048;
    m.type_vocab_size = 2;
    m.emb_norm = 1;
    m.rel_pos_buckets = 32;
    m.n_experts = 8;
    m.experts_per_token = 2;
    m.n_shared_experts = 1;
    m.shared_expert_gate = 1;
    m.router_bias = 1;
    m.n_dense_layers = 1;
    /* and the vision tower with the most groups: gated MLP, three projector matrices */
    m.vision_layers = 2;
    m.vision_hidden_size = 64;
    m.vision_heads = 4;
    m.vision_ffn_hidden_size = 128;
    m.vision_patch_size = 4;
    m.vision_image_size = 16;
    m.vision_merge = 2;
    m.vision_style = GPUFIT_VISION_PIXTRAL;
    m.vision_projector = GPUFIT_VPROJ_MISTRAL3;
    gpufit__shape s = shape_of(&m);
    gpufit__tgroup g[GPUFIT__TGROUPS_MAX];
    size_t n = gpufit__model_tensors(&s, g);
    cr_assert(n < GPUFIT__TGROUPS_MAX, "%zu groups", n);
    gpufit__counts c = counts_of(&m);
    cr_assert(c.active < c.total);
}

Test(models, generic_model)
{
    struct gpufit_model m;
    gpufit__model_defaults(&m);
    m.arch = GPUFIT_ARCH_GENERIC;
    m.n_params = 1234567;
    m.activation_bytes_per_token = 4096.0;
    gpufit__shape s = shape_of(&m);
    cr_assert_eq(s.n_params_generic, 1234567);
    gpufit__tgroup g[GPUFIT__TGROUPS_MAX];
    cr_assert_eq(gpufit__model_tensors(&s, g), 1);
    cr_assert_eq(g[0].kind, GPUFIT__T_GENERIC);
    gpufit__counts c = counts_of(&m);
    cr_assert_eq(c.total, 1234567);
    cr_assert_eq(c.active, 1234567);
}

Test(models, overflow_is_reported)
{
    struct gpufit_model m = custom();
    m.hidden_size = 1 << 24;
    m.n_heads = 1;
    m.n_experts = 1 << 16;
    m.experts_per_token = 1;
    m.moe_ffn_hidden_size = 1 << 28;
    m.n_layers = 1 << 20;
    gpufit__shape s = shape_of(&m);
    gpufit__counts c;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__model_count(&s, &c, &err), GPUFIT_E_OVERFLOW);
    cr_assert_eq(err.status, GPUFIT_E_OVERFLOW);
}

/* ---------------------------------------------------------------------------------------
 * Derived defaults
 * ------------------------------------------------------------------------------------- */
Test(models, derived_defaults)
{
    struct gpufit_model m = custom();
    gpufit__shape s = shape_of(&m);
    cr_assert_eq(s.dh, 128);
    cr_assert_eq(s.nkv, 32);
    cr_assert_eq(s.q, 4096);
    cr_assert_eq(s.c, 4096);
    cr_assert_eq(s.gated, 1);
    cr_assert_eq(s.layers[GPUFIT__W_DENSE], 2);
    cr_assert_eq(s.o_bias, 0);
    cr_assert_eq(s.emb_norm, 0);

    m.mlp_bias = 1; /* o_bias -1 follows mlp_bias */
    m.mlp = GPUFIT_MLP_GELU;
    m.n_kv_heads = 8;
    s = shape_of(&m);
    cr_assert_eq(s.o_bias, 1);
    cr_assert_eq(s.gated, 0);
    cr_assert_eq(s.c, 8 * 128);

    m.arch = GPUFIT_ARCH_ENCODER; /* emb_norm -1 = 1 for encoders */
    s = shape_of(&m);
    cr_assert_eq(s.emb_norm, 1);
}

Test(models, moe_defaults)
{
    struct gpufit_model m = custom();
    m.n_experts = 4;
    m.experts_per_token = 1;
    m.n_shared_experts = 2;
    gpufit__shape s = shape_of(&m);
    cr_assert_eq(s.f_moe, 11008); /* moe_ffn 0 = ffn_hidden_size */
    cr_assert_eq(s.f_sh, 11008);  /* shared 0 = moe_ffn */
    cr_assert_eq(s.layers[GPUFIT__W_MOE], 2);
    cr_assert_eq(s.layers[GPUFIT__W_DENSE], 0);
    m.moe_ffn_hidden_size = 1408;
    s = shape_of(&m);
    cr_assert_eq(s.f_sh, 1408);
}

Test(models, encoder_decoder_layer_fallback)
{
    struct gpufit_model m = preset("t5-small");
    m.n_encoder_layers = 0;
    m.n_decoder_layers = 0;
    m.n_layers = 3;
    gpufit__shape s = shape_of(&m);
    cr_assert_eq(s.layers[GPUFIT__W_ENC], 3);
    cr_assert_eq(s.layers[GPUFIT__W_DEC], 3);
    m.n_decoder_layers = 5;
    s = shape_of(&m);
    cr_assert_eq(s.layers[GPUFIT__W_DEC], 5);
}

/* ---------------------------------------------------------------------------------------
 * Validation errors: each bad input gives its status, the offending param and its key name.
 * ------------------------------------------------------------------------------------- */
typedef struct edit {
    size_t offset; /* int64_t field of struct gpufit_model; 0 ends the list (name is at 0) */
    int64_t value;
} edit;

typedef struct bad {
    const char *base; /* preset */
    edit edits[3];
    int32_t status, param;
    const char *key; /* must appear in the message */
} bad;

#define E(field, v)                                                                                \
    {                                                                                              \
        offsetof(struct gpufit_model, field), v                                                    \
    }

/* clang-format off */
static const bad bad_inputs[] = {
    {"llama-2-7b", {E(hidden_size, 0)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_HIDDEN_SIZE,
     "hidden_size"},
    {"llama-2-7b", {E(n_layers, 0)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_LAYERS, "n_layers"},
    {"llama-2-7b", {E(n_heads, 0)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_HEADS, "n_heads"},
    {"llama-2-7b", {E(vocab_size, 0)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_VOCAB_SIZE,
     "vocab_size"},
    {"llama-2-7b", {E(ffn_hidden_size, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_FFN_HIDDEN_SIZE, "ffn_hidden_size"},
    {"llama-2-7b", {E(n_kv_heads, 5)}, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_KV_HEADS,
     "n_kv_heads (5) must divide n_heads (32)"},
    {"llama-2-7b", {E(n_kv_heads, 64)}, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_KV_HEADS,
     "n_kv_heads"},
    {"llama-2-7b", {E(head_dim, 0), E(n_heads, 7), E(n_kv_heads, 7)}, GPUFIT_E_INCONSISTENT,
     GPUFIT_MODEL_N_HEADS, "n_heads (7) must divide hidden_size (4096)"},
    {"llama-2-7b", {E(hidden_size, (1 << 24) + 1)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_HIDDEN_SIZE, "hidden_size"},
    {"llama-2-7b", {E(n_layers, (1 << 20) + 1)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_LAYERS,
     "n_layers"},
    {"llama-2-7b", {E(vocab_size, (1 << 28) + 1)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_VOCAB_SIZE, "vocab_size"},
    {"llama-2-7b", {E(n_experts, (1 << 16) + 1)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_EXPERTS,
     "n_experts"},
    {"llama-2-7b", {E(ffn_hidden_size, -1)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_FFN_HIDDEN_SIZE, "ffn_hidden_size"},
    {"llama-2-7b", {E(arch, 7)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_ARCH, "arch"},
    {"llama-2-7b", {E(mlp, 9)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_MLP, "mlp"},
    {"llama-2-7b", {E(norm, 2)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_NORM, "norm"},
    {"llama-2-7b", {E(tied_embeddings, 2)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_TIED_EMBEDDINGS, "tied_embeddings"},
    {"llama-2-7b", {E(o_bias, -2)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_O_BIAS, "o_bias"},
    {"llama-2-7b", {E(n_experts, 8)}, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_EXPERTS_PER_TOKEN,
     "experts_per_token"},
    {"mixtral-8x7b", {E(experts_per_token, 9)}, GPUFIT_E_INCONSISTENT,
     GPUFIT_MODEL_EXPERTS_PER_TOKEN, "experts_per_token (9)"},
    {"mixtral-8x7b", {E(n_dense_layers, 33)}, GPUFIT_E_INCONSISTENT,
     GPUFIT_MODEL_N_DENSE_LAYERS, "n_dense_layers"},
    {"mixtral-8x7b", {E(moe_ffn_hidden_size, 0), E(ffn_hidden_size, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, "moe_ffn_hidden_size"},
    {"deepseek-v3", {E(n_dense_layers, 3), E(ffn_hidden_size, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_FFN_HIDDEN_SIZE, "ffn_hidden_size"},
    {"deepseek-v3", {E(qk_nope_head_dim, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_QK_NOPE_HEAD_DIM, "qk_nope_head_dim"},
    {"deepseek-v3", {E(qk_rope_head_dim, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_QK_ROPE_HEAD_DIM, "qk_rope_head_dim"},
    {"deepseek-v3", {E(v_head_dim, 0)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_V_HEAD_DIM,
     "v_head_dim"},
    {"deepseek-v3", {E(qkv_bias, 1)}, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_QKV_BIAS, "qkv_bias"},
    {"bert-base", {E(n_experts, 8), E(experts_per_token, 2)}, GPUFIT_E_UNSUPPORTED,
     GPUFIT_MODEL_N_EXPERTS, "n_experts"},
    {"t5-small", {E(kv_lora_rank, 512)}, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_KV_LORA_RANK,
     "kv_lora_rank"},
    {"t5-small", {E(n_encoder_layers, 0), E(n_layers, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_N_ENCODER_LAYERS, "n_encoder_layers"},
    {"t5-small", {E(n_decoder_layers, 0), E(n_layers, 0)}, GPUFIT_E_INVALID_ARG,
     GPUFIT_MODEL_N_DECODER_LAYERS, "n_decoder_layers"},
    {"llama-2-7b", {E(arch, GPUFIT_ARCH_GENERIC)}, GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_PARAMS,
     "n_params"},
};
/* clang-format on */
#undef E

Test(models, resolve_errors)
{
    for (size_t i = 0; i < sizeof bad_inputs / sizeof bad_inputs[0]; i++) {
        const bad *b = &bad_inputs[i];
        struct gpufit_model m = preset(b->base);
        for (size_t j = 0; j < 3 && b->edits[j].offset != 0; j++)
            memcpy((char *)&m + b->edits[j].offset, &b->edits[j].value, sizeof(int64_t));
        gpufit__shape s;
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t st = gpufit__model_resolve(&m, &s, &err);
        cr_assert_eq(st, b->status, "case %zu (%s): status %d, expected %d: %s", i, b->key, st,
                     b->status, err.message);
        cr_assert_eq(err.status, b->status, "case %zu", i);
        cr_assert_eq(err.param, b->param, "case %zu (%s): param %d, expected %d", i, b->key,
                     err.param, b->param);
        cr_assert_eq(err.offset, UINT64_MAX, "case %zu", i);
        cr_assert(strstr(err.message, b->key) != NULL, "case %zu: \"%s\" lacks \"%s\"", i,
                  err.message, b->key);
    }
}

Test(models, generic_activation_bytes_rejected)
{
    struct gpufit_model m;
    gpufit__model_defaults(&m);
    m.arch = GPUFIT_ARCH_GENERIC;
    m.n_params = 1000;
    m.activation_bytes_per_token = -1.0;
    gpufit__shape s;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__model_resolve(&m, &s, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.param, GPUFIT_MODEL_ACTIVATION_BYTES_PER_TOKEN);
    cr_assert(strstr(err.message, "activation_bytes_per_token") != NULL);
}

Test(models, resolve_null_and_null_err)
{
    gpufit__shape s;
    cr_assert_eq(gpufit__model_resolve(NULL, &s, NULL), GPUFIT_E_INVALID_ARG);
    struct gpufit_model m = custom();
    m.hidden_size = 0;
    cr_assert_eq(gpufit__model_resolve(&m, &s, NULL), GPUFIT_E_INVALID_ARG);
}

/* ---------------------------------------------------------------------------------------
 * Presets
 * ------------------------------------------------------------------------------------- */
static int is_lower_name(const char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            return 0;
    return 1;
}

Test(presets, every_preset_loads_by_name_and_alias)
{
    cr_assert(gpufit__preset_count() >= 40);
    for (size_t i = 0; i < gpufit__preset_count(); i++) {
        struct gpufit_model m;
        const char *name, *aliases, *hf;
        cr_assert_eq(gpufit__preset_get(i, &m, &name, &aliases, &hf), GPUFIT_OK);
        cr_assert_str_eq(m.name, name);
        cr_assert(is_lower_name(name), "%s", name);
        cr_assert(strchr(hf, '/') != NULL, "%s: hf_repo %s", name, hf);
        gpufit__counts c = counts_of(&m);
        cr_assert(c.total > 0, "%s", name);

        char upper[GPUFIT__NAME_MAX];
        size_t n = strlen(name);
        for (size_t k = 0; k < n; k++)
            upper[k] = (char)((name[k] >= 'a' && name[k] <= 'z') ? name[k] - 32 : name[k]);
        struct gpufit_model u;
        cr_assert_eq(gpufit__preset_load(&u, upper, n, NULL), GPUFIT_OK, "%s", name);
        cr_assert_str_eq(u.name, name);

        for (const char *t = aliases; *t;) {
            size_t len = strcspn(t, " ");
            struct gpufit_model a;
            cr_assert_eq(gpufit__preset_load(&a, t, len, NULL), GPUFIT_OK, "%s alias", name);
            /* the model keeps the name the user typed; the architecture is the preset's */
            cr_assert_eq(counts_of(&a).total, c.total, "alias %.*s", (int)len, t);
            cr_assert_eq(strncmp(a.name, t, len), 0, "alias %.*s", (int)len, t);
            t += len;
            t += strspn(t, " ");
        }
    }
}

Test(presets, names_and_aliases_are_unique)
{
    for (size_t i = 0; i < gpufit__preset_count(); i++) {
        const char *name;
        gpufit__preset_get(i, NULL, &name, NULL, NULL);
        struct gpufit_model m, ref;
        memset(&m, 0, sizeof m); /* loading leaves the arrays' unused tails alone */
        memset(&ref, 0, sizeof ref);
        gpufit__preset_get(i, &ref, NULL, NULL, NULL);
        cr_assert_eq(gpufit__preset_load(&m, name, strlen(name), NULL), GPUFIT_OK);
        memcpy(m.name, ref.name, sizeof m.name);
        cr_assert(memcmp(&m, &ref, sizeof m) == 0, "%s shadowed by another preset", name);
    }
}

Test(presets, unknown_and_counted_names)
{
    struct gpufit_model m;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit__preset_load(&m, "llama", 5, &err), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(err.status, GPUFIT_E_NOT_FOUND);
    cr_assert(strstr(err.message, "llama") != NULL);
    cr_assert_eq(gpufit__preset_load(&m, "gpt2x", 5, NULL), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit__preset_load(&m, "gpt2-medium", 4, NULL), GPUFIT_OK); /* "gpt2" */
    cr_assert_str_eq(m.name, "gpt2");
    cr_assert_eq(gpufit__preset_load(&m, "Llama-3-8B", 10, NULL), GPUFIT_OK);
    cr_assert_str_eq(m.name, "llama-3-8b"); /* as typed, lowercased */
    cr_assert_eq(gpufit__preset_load(&m, "", 0, NULL), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit__preset_load(NULL, "gpt2", 4, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit__preset_get(gpufit__preset_count(), NULL, NULL, NULL, NULL),
                 GPUFIT_E_NOT_FOUND);
}

Test(presets, preset_sets_explicit_kv_heads_and_head_dim)
{
    for (size_t i = 0; i < gpufit__preset_count(); i++) {
        struct gpufit_model m;
        gpufit__preset_get(i, &m, NULL, NULL, NULL);
        cr_assert(m.n_kv_heads > 0 && m.head_dim > 0, "%s", m.name);
        cr_assert(m.o_bias >= 0 && m.emb_norm >= 0, "%s", m.name);
    }
}

Test(presets, preset_at)
{
    gpufit_preset_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    for (uint32_t i = 0; i < gpufit__preset_count(); i++) {
        cr_assert_eq(gpufit_preset_at(i, &info), GPUFIT_OK);
        cr_assert_eq(info.struct_size, sizeof info);
        cr_assert_eq(info.index, i);
        struct gpufit_model m = preset(info.name);
        gpufit__counts c = counts_of(&m);
        cr_assert_eq(info.n_params, c.total);
        cr_assert_eq(info.n_active_params, c.active);
        cr_assert(info.aliases != NULL && info.hf_repo != NULL);
    }
    cr_assert_eq(gpufit_preset_at((uint32_t)gpufit__preset_count(), &info), GPUFIT_E_NOT_FOUND);
    info.struct_size = 8;
    cr_assert_eq(gpufit_preset_at(0, &info), GPUFIT_E_STRUCT_SIZE);
    cr_assert_eq(gpufit_preset_at(0, NULL), GPUFIT_E_INVALID_ARG);

    struct {
        gpufit_preset_info info;
        uint64_t newer_field;
    } big;
    memset(&big, 0xAB, sizeof big);
    big.info.struct_size = sizeof big;
    cr_assert_eq(gpufit_preset_at(1, &big.info), GPUFIT_OK);
    cr_assert_eq(big.info.struct_size, sizeof(gpufit_preset_info));
    cr_assert_eq(big.info.index, 1);
}
