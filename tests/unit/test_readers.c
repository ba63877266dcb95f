/* SPDX-License-Identifier: MIT */
/* Unit tests of the model-file readers: lib/io/io_hf_config.c (config.json fixtures of
 * tests/data/hf/ against the presets), lib/io/io_gguf.c (GGUF headers written by a helper below,
 * exact bytes per tensor and per layer, truncation and corruption), lib/io/io_safetensors.c
 * (headers written in the test, index.json, the cross-check) and the exact-bytes branch of
 * lib/memory/mem_weights.c. Fixture paths are relative to the repository root (make check runs there). */
#include <criterion/criterion.h>

#include "eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lib/memory/mem_weights.c (declared there until lib/eval.h does) */
int gpufit__weights_bytes_gguf(const struct gpufit_model *m,
                               const gpufit__plan *p,
                               const gpufit__shape *s,
                               const gpufit__slice *sl,
                               uint64_t *dev_out,
                               uint64_t *host_out);

/* ---------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------- */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s (tests run from the repository root)", path);
    char *buf = malloc(1 << 16);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static gpufit_model *config_file(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/hf/%s.json", name);
    size_t len = 0;
    char *text = slurp(path, &len);
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_model_from_hf_config(&m, text, len, &err);
    free(text);
    cr_assert_eq(st, GPUFIT_OK, "%s: %s", name, err.message);
    return m;
}

static int32_t config_text(const char *json, gpufit_model **m, gpufit_error *err)
{
    *err = (gpufit_error)GPUFIT_ERROR_INIT;
    return gpufit_model_from_hf_config(m, json, strlen(json), err);
}

static void expect_config_error(const char *json, int32_t status, const char *needle)
{
    gpufit_model *m = (gpufit_model *)1;
    gpufit_error err;
    int32_t st = config_text(json, &m, &err);
    cr_assert_eq(st, status, "%s: status %d (%s), wanted %d", json, st, err.message, status);
    cr_assert_null(m);
    cr_assert_eq(err.status, status);
    cr_assert(strstr(err.message, needle) != NULL, "message \"%s\" lacks \"%s\"", err.message,
              needle);
}

static uint64_t total_of(const gpufit_model *m)
{
    uint64_t t = 0, a = 0;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_param_count(m, &t, &a, &err), GPUFIT_OK, "%s", err.message);
    return t;
}

/* Every model parameter of a and b equal (the name aside). */
static void expect_same_fields(const gpufit_model *a, const gpufit_model *b, const char *what)
{
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = {.struct_size = sizeof in};
        cr_assert_eq(gpufit_param_get_info(p, &in), GPUFIT_OK);
        if (in.domain != GPUFIT_DOMAIN_MODEL)
            continue;
        if (p >= GPUFIT_MODEL_EMBEDDING_DTYPE && p <= GPUFIT_MODEL_EXPERT_DTYPE)
            continue; /* storage of the checkpoint (quantization_config), not the shape */
        if (in.type == GPUFIT_TYPE_FLOAT) {
            double x = 0, y = 0;
            gpufit_model_get_float(a, p, &x, NULL);
            gpufit_model_get_float(b, p, &y, NULL);
            cr_assert(x == y, "%s: %s %g vs preset %g", what, in.name, x, y);
        } else {
            int64_t x = 0, y = 0;
            gpufit_model_get_int(a, p, &x, NULL);
            gpufit_model_get_int(b, p, &y, NULL);
            cr_assert_eq(x, y, "%s: %s = %lld, preset %lld", what, in.name, (long long)x,
                         (long long)y);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * config.json: every fixture equals its preset, field by field and in count
 * ------------------------------------------------------------------------------------- */
static const char *const preset_fixtures[] = {
    "meta-llama-3-8b",
    "meta-llama-3.1-70b",
    "llama-3.2-1b",
    "mistral-7b-v0.1",
    "mixtral-8x7b-v0.1",
    "qwen2.5-7b",
    "qwen2.5-0.5b",
    "qwen1.5-moe-a2.7b",
    "qwen3-0.6b",
    "qwen3-30b-a3b",
    "deepseek-v3",
    "deepseek-v2-lite",
    "gpt2",
    "gpt-neox-20b",
    "bloom",
    "bloom-560m",
    "bert-base-uncased",
    "roberta-base",
    "t5-base",
    "flan-t5-base",
    "phi-3-mini-4k-instruct",
    "gemma-2b",
    "llava-1.5-7b-hf",
    "qwen2-vl-7b-instruct",
    "qwen2.5-vl-7b-instruct",
};

Test(hf_config, fixtures_equal_presets)
{
    for (size_t i = 0; i < sizeof preset_fixtures / sizeof preset_fixtures[0]; i++) {
        const char *name = preset_fixtures[i];
        gpufit_model *m = config_file(name);
        gpufit_model *p = NULL;
        cr_assert_eq(gpufit_model_from_preset(&p, name, NULL), GPUFIT_OK, "preset %s", name);
        uint64_t tm = 0, am = 0, tp = 0, ap = 0;
        cr_assert_eq(gpufit_model_param_count(m, &tm, &am, NULL), GPUFIT_OK);
        cr_assert_eq(gpufit_model_param_count(p, &tp, &ap, NULL), GPUFIT_OK);
        cr_assert_eq(tm, tp, "%s: config %llu parameters, preset %llu", name,
                     (unsigned long long)tm, (unsigned long long)tp);
        cr_assert_eq(am, ap, "%s: config %llu active, preset %llu", name, (unsigned long long)am,
                     (unsigned long long)ap);
        expect_same_fields(m, p, name);
        gpufit_model_free(m);
        gpufit_model_free(p);
    }
}

/* Published totals straight from the configs (memory-model.md §1.5). */
Test(hf_config, published_totals)
{
    static const struct {
        const char *name;
        uint64_t total;
    } t[] = {{"meta-llama-3-8b", 8030261248ULL},  {"mixtral-8x7b-v0.1", 46702792704ULL},
             {"deepseek-v3", 671026419200ULL},    {"qwen2.5-7b", 7615616512ULL},
             {"gpt-neox-20b", 20554567680ULL},    {"bloom", 176247271424ULL},
             {"bloom-560m", 559214592ULL},        {"gpt2", 124439808ULL},
             {"bert-base-uncased", 109482240ULL}, {"t5-base", 222903552ULL},
             /* multimodal: vision encoder + projector + text (test_multimodal.c) */
             {"llava-1.5-7b-hf", 7063427072ULL},  {"qwen2-vl-7b-instruct", 8291375616ULL},
             {"qwen2.5-vl-7b-instruct", 8292166656ULL}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gpufit_model *m = config_file(t[i].name);
        cr_assert_eq(total_of(m), t[i].total, "%s: %llu", t[i].name,
                     (unsigned long long)total_of(m));
        gpufit_model_free(m);
    }
}

static int64_t get(const gpufit_model *m, int32_t p)
{
    int64_t v = -99;
    cr_assert_eq(gpufit_model_get_int(m, p, &v, NULL), GPUFIT_OK);
    return v;
}

/* Families without a preset: fields as their configuration classes define them. */
Test(hf_config, falcon_gemma2_gemma3_fields)
{
    gpufit_model *m = config_file("falcon-7b");
    cr_assert_eq(get(m, GPUFIT_MODEL_HIDDEN_SIZE), 4544);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_HEADS), 71);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_KV_HEADS), 1); /* multi_query */
    cr_assert_eq(get(m, GPUFIT_MODEL_HEAD_DIM), 64);
    cr_assert_eq(get(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE), 4 * 4544);
    cr_assert_eq(get(m, GPUFIT_MODEL_TIED_EMBEDDINGS), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_QKV_BIAS), 0); /* "bias": false */
    cr_assert_eq(get(m, GPUFIT_MODEL_MLP_BIAS), 0);
    cr_assert_eq(get(m, GPUFIT_MODEL_NORM), GPUFIT_NORM_LAYERNORM);
    cr_assert_eq(get(m, GPUFIT_MODEL_MLP), GPUFIT_MLP_GELU);
    cr_assert_str_eq(gpufit_model_name(m), "falcon");
    gpufit_model_free(m);

    m = config_file("gemma-2-9b");
    cr_assert_eq(get(m, GPUFIT_MODEL_N_LAYERS), 42);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_KV_HEADS), 8);
    cr_assert_eq(get(m, GPUFIT_MODEL_HEAD_DIM), 256);
    cr_assert_eq(get(m, GPUFIT_MODEL_MLP), GPUFIT_MLP_GEGLU);
    cr_assert_eq(get(m, GPUFIT_MODEL_TIED_EMBEDDINGS), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_QK_NORM), 0);
    gpufit_model_free(m);

    /* Gemma 3: the text model from text_config, Gemma3TextConfig defaults for omitted keys */
    m = config_file("gemma-3-4b-it");
    cr_assert_eq(get(m, GPUFIT_MODEL_HIDDEN_SIZE), 2560);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_LAYERS), 34);
    cr_assert_eq(get(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE), 10240);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_HEADS), 8);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_KV_HEADS), 4);
    cr_assert_eq(get(m, GPUFIT_MODEL_HEAD_DIM), 256);
    cr_assert_eq(get(m, GPUFIT_MODEL_VOCAB_SIZE), 262208);
    cr_assert_eq(get(m, GPUFIT_MODEL_QK_NORM), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_TIED_EMBEDDINGS), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_MLP), GPUFIT_MLP_GEGLU);
    gpufit_model_free(m);
}

Test(hf_config, key_variants_and_defaults)
{
    gpufit_model *m = NULL;
    gpufit_error err;
    /* no num_key_value_heads: MHA; no head_dim: h / heads; no tie key: the family default */
    cr_assert_eq(config_text("{\"model_type\": \"llama\", \"hidden_size\": 512, "
                             "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                             "\"intermediate_size\": 1024, \"vocab_size\": 1000, "
                             "\"attention_bias\": true, \"_name_or_path\": \"org/tiny\"}",
                             &m, &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_KV_HEADS), 8);
    cr_assert_eq(get(m, GPUFIT_MODEL_HEAD_DIM), 64);
    cr_assert_eq(get(m, GPUFIT_MODEL_TIED_EMBEDDINGS), 0);
    cr_assert_eq(get(m, GPUFIT_MODEL_QKV_BIAS), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_O_BIAS), 1);
    cr_assert_str_eq(gpufit_model_name(m), "tiny");
    gpufit_model_free(m);
    /* a nested text_config carries the model; the outer model_type is the fallback; integral
     * floats ("512.0") are integers; unknown and nested keys are skipped */
    cr_assert_eq(config_text("{\"model_type\": \"llava\", \"vision_config\": {\"a\": [1, {}]},"
                             " \"text_config\": {\"model_type\": \"mistral\", \"hidden_size\":"
                             " 512.0, \"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                             "\"num_key_value_heads\": 2, \"intermediate_size\": 1024, "
                             "\"vocab_size\": 1000, \"rope_scaling\": {\"x\": [[]]}}}",
                             &m, &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(get(m, GPUFIT_MODEL_HIDDEN_SIZE), 512);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_KV_HEADS), 2);
    gpufit_model_free(m);
    /* DeepSeek with n_routed_experts null: a dense MLA model */
    cr_assert_eq(config_text("{\"model_type\": \"deepseek_v2\", \"hidden_size\": 512, "
                             "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                             "\"intermediate_size\": 1024, \"vocab_size\": 1000, "
                             "\"n_routed_experts\": null, \"kv_lora_rank\": 64, "
                             "\"q_lora_rank\": null, \"qk_nope_head_dim\": 32, "
                             "\"qk_rope_head_dim\": 16, \"v_head_dim\": 32}",
                             &m, &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_EXPERTS), 0);
    cr_assert_eq(get(m, GPUFIT_MODEL_KV_LORA_RANK), 64);
    cr_assert_eq(get(m, GPUFIT_MODEL_Q_LORA_RANK), 0);
    cr_assert_eq(get(m, GPUFIT_MODEL_HEAD_DIM), 48);
    gpufit_model_free(m);
    /* Qwen MoE with the first layers dense (mlp_only_layers [0, 1]) */
    cr_assert_eq(config_text("{\"model_type\": \"qwen3_moe\", \"hidden_size\": 512, "
                             "\"num_hidden_layers\": 4, \"num_attention_heads\": 8, "
                             "\"intermediate_size\": 1024, \"vocab_size\": 1000, \"head_dim\": 64,"
                             " \"num_experts\": 8, \"num_experts_per_tok\": 2, "
                             "\"moe_intermediate_size\": 256, \"mlp_only_layers\": [0, 1]}",
                             &m, &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_DENSE_LAYERS), 2);
    gpufit_model_free(m);
}

Test(hf_config, errors_name_the_key)
{
    expect_config_error("{\"hidden_size\": 4096}", GPUFIT_E_INVALID_ARG, "model_type");
    expect_config_error("{\"model_type\": \"mamba\"}", GPUFIT_E_UNSUPPORTED, "mamba");
    expect_config_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2}",
                        GPUFIT_E_INVALID_ARG, "hidden_size");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": \"4096\"}",
                        GPUFIT_E_INVALID_ARG, "hidden_size");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": 4096.5}",
                        GPUFIT_E_INVALID_ARG, "hidden_size");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": -1}", GPUFIT_E_INVALID_ARG,
                        "hidden_size");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": 99999999999999999999}",
                        GPUFIT_E_INVALID_ARG, "hidden_size");
    expect_config_error("{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, "
                        "\"n_head\": 12}",
                        GPUFIT_E_INVALID_ARG, "vocab_size");
    expect_config_error("{\"model_type\": \"t5\", \"d_model\": 768, \"num_layers\": 12, "
                        "\"num_heads\": 12, \"vocab_size\": 100, \"d_ff\": 10}",
                        GPUFIT_E_INVALID_ARG, "d_kv");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": 512, "
                        "\"num_hidden_layers\": 2097152, \"num_attention_heads\": 8, "
                        "\"intermediate_size\": 1024, \"vocab_size\": 1000}",
                        GPUFIT_E_INVALID_ARG, "num_hidden_layers");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": 512, "
                        "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                        "\"intermediate_size\": 1024, \"vocab_size\": 1000, "
                        "\"hidden_act\": \"tanh\"}",
                        GPUFIT_E_UNSUPPORTED, "tanh");
    expect_config_error("{\"model_type\": \"llama\", \"hidden_size\": 512, "
                        "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                        "\"num_key_value_heads\": 3, \"intermediate_size\": 1024, "
                        "\"vocab_size\": 1000}",
                        GPUFIT_E_INCONSISTENT, "n_kv_heads");
    expect_config_error("{\"model_type\": \"qwen2_moe\", \"hidden_size\": 512, "
                        "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                        "\"intermediate_size\": 1024, \"vocab_size\": 1000, \"num_experts\": 4,"
                        " \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, "
                        "\"decoder_sparse_step\": 2}",
                        GPUFIT_E_UNSUPPORTED, "decoder_sparse_step");
    expect_config_error("{\"model_type\": \"bert\", \"hidden_size\": 768, "
                        "\"num_hidden_layers\": 2, \"num_attention_heads\": 12, "
                        "\"intermediate_size\": 10, \"vocab_size\": 100, "
                        "\"position_embedding_type\": \"relative_key\"}",
                        GPUFIT_E_UNSUPPORTED, "relative_key");
}

Test(hf_config, malformed_json)
{
    gpufit_model *m = NULL;
    gpufit_error err;
    cr_assert_eq(config_text("[1, 2]", &m, &err), GPUFIT_E_PARSE);
    cr_assert_eq(config_text("{\"model_type\": \"llama\",", &m, &err), GPUFIT_E_PARSE);
    cr_assert_eq(err.offset, 23, "offset %llu", (unsigned long long)err.offset);
    cr_assert_eq(config_text("{\"model_type\": \"llama\"} x", &m, &err), GPUFIT_E_PARSE);
    cr_assert_eq(config_text("", &m, &err), GPUFIT_E_PARSE);
    /* 100 nested arrays: beyond the tokenizer's depth limit, refused without recursion */
    char deep[256];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "{\"a\": ");
    for (int i = 0; i < 100; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    cr_assert_eq(config_text(deep, &m, &err), GPUFIT_E_PARSE);
    cr_assert_null(m);
    cr_assert_eq(gpufit_model_from_hf_config(NULL, "{}", 2, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_model_from_hf_config(&m, NULL, 2, &err), GPUFIT_E_INVALID_ARG);
    /* every prefix of a real config is an error, never a crash */
    size_t len = 0;
    char *text = slurp("tests/data/hf/deepseek-v3.json", &len);
    size_t last = len;
    while (last > 0 && text[last - 1] != '}')
        last--;
    cr_assert_gt(last, 0);
    for (size_t cut = 0; cut + 1 < last; cut++) {
        int32_t st = gpufit_model_from_hf_config(&m, text, cut, NULL);
        cr_assert(st == GPUFIT_E_PARSE, "prefix %zu: %d", cut, st);
    }
    free(text);
}

/* ---------------------------------------------------------------------------------------
 * GGUF: a writer for test headers
 * ------------------------------------------------------------------------------------- */
typedef struct gb {
    uint8_t *b;
    size_t n, cap;
} gb;

static void gb_raw(gb *g, const void *p, size_t n)
{
    if (g->n + n > g->cap) {
        g->cap = (g->n + n) * 2 + 256;
        g->b = realloc(g->b, g->cap);
        cr_assert_not_null(g->b);
    }
    memcpy(g->b + g->n, p, n);
    g->n += n;
}
static void gb_le(gb *g, uint64_t v, unsigned n)
{
    uint8_t x[8];
    cr_assert_leq(n, 8);
    for (unsigned i = 0; i < n; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    gb_raw(g, x, n);
}
static void gb_str(gb *g, const char *s)
{
    gb_le(g, strlen(s), 8);
    gb_raw(g, s, strlen(s));
}
enum {
    GT_U8 = 0,
    GT_I16 = 3,
    GT_U32 = 4,
    GT_I32 = 5,
    GT_F32 = 6,
    GT_BOOL = 7,
    GT_STR = 8,
    GT_ARR = 9,
    GT_U64 = 10,
    GT_I64 = 11,
    GT_F64 = 12
};
static void kv_u32(gb *g, const char *k, uint32_t v)
{
    gb_str(g, k);
    gb_le(g, GT_U32, 4);
    gb_le(g, v, 4);
}
static void kv_str(gb *g, const char *k, const char *v)
{
    gb_str(g, k);
    gb_le(g, GT_STR, 4);
    gb_str(g, v);
}
static void kv_scalar(gb *g, const char *k, uint32_t type, uint64_t v, unsigned n)
{
    gb_str(g, k);
    gb_le(g, type, 4);
    gb_le(g, v, n);
}
static void kv_tokens(gb *g, uint32_t n)
{
    gb_str(g, "tokenizer.ggml.tokens");
    gb_le(g, GT_ARR, 4);
    gb_le(g, GT_STR, 4);
    gb_le(g, n, 8);
    for (uint32_t i = 0; i < n; i++) {
        char t[16];
        snprintf(t, sizeof t, "tok%u", i);
        gb_str(g, t);
    }
}
static void kv_int_array(gb *g, const char *k, uint32_t type, unsigned size, uint32_t n, uint64_t v)
{
    gb_str(g, k);
    gb_le(g, GT_ARR, 4);
    gb_le(g, type, 4);
    gb_le(g, n, 8);
    for (uint32_t i = 0; i < n; i++)
        gb_le(g, v, size);
}

/* ggml types used here and their exact sizes (ggml-common.h) */
enum {
    GG_F32 = 0,
    GG_F16 = 1,
    GG_Q8_0 = 8,
    GG_Q4_K = 12,
    GG_Q6_K = 14,
    GG_IQ4_XS = 23,
    GG_BF16 = 30,
    GG_MXFP4 = 39
};
static uint64_t ggml_bytes(uint32_t type, uint64_t ne0, uint64_t rows)
{
    switch (type) {
    case GG_F32:
        return 4 * ne0 * rows;
    case GG_F16:
    case GG_BF16:
        return 2 * ne0 * rows;
    case GG_Q8_0:
        return ne0 / 32 * 34 * rows;
    case GG_Q4_K:
        return ne0 / 256 * 144 * rows;
    case GG_Q6_K:
        return ne0 / 256 * 210 * rows;
    case GG_IQ4_XS:
        return ne0 / 256 * 136 * rows;
    case GG_MXFP4:
        return ne0 / 32 * 17 * rows;
    default:
        cr_assert_fail("type %u", type);
        return 0;
    }
}

/* The tensors of a test model, written after the metadata. */
typedef struct tensor {
    char name[64];
    uint32_t nd, type;
    uint64_t ne[4];
} tensor;

typedef struct tlist {
    tensor t[512];
    size_t n;
} tlist;

static void
add_t(tlist *l, const char *name, uint32_t type, uint64_t ne0, uint64_t ne1, uint64_t ne2)
{
    cr_assert_lt(l->n, 512);
    tensor *t = &l->t[l->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type = type;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
    t->ne[3] = 1;
    t->nd = ne2 > 1 ? 3 : ne1 > 1 ? 2 : 1;
}

static uint64_t t_bytes(const tensor *t)
{
    return ggml_bytes(t->type, t->ne[0], t->ne[1] * t->ne[2]);
}

static uint64_t t_elems(const tensor *t)
{
    return t->ne[0] * t->ne[1] * t->ne[2];
}

static void write_tensors(gb *g, const tlist *l)
{
    uint64_t off = 0;
    for (size_t i = 0; i < l->n; i++) {
        const tensor *t = &l->t[i];
        gb_str(g, t->name);
        gb_le(g, t->nd, 4);
        for (uint32_t d = 0; d < t->nd; d++)
            gb_le(g, t->ne[d], 8);
        gb_le(g, t->type, 4);
        gb_le(g, off, 8);
        off += (t_bytes(t) + 31) / 32 * 32;
    }
}

static void header(gb *g, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    gb_raw(g, "GGUF", 4);
    gb_le(g, version, 4);
    gb_le(g, n_tensors, 8);
    gb_le(g, n_kv, 8);
}

/* llama.cpp use_more_bits(i, n) of Q4_K_M */
static int more_bits(int i, int n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

#define TL_H 256
#define TL_F 512
#define TL_V 300
#define TL_L 8

/* A small Llama in a Q4_K_M mix: q4_K, attn_v / ffn_down q6_K on use_more_bits layers,
 * output q6_K, token_embd q4_K, norms f32, plus a rope_freqs global. */
static void tiny_llama_tensors(tlist *l)
{
    l->n = 0;
    add_t(l, "token_embd.weight", GG_Q4_K, TL_H, TL_V, 1);
    for (int i = 0; i < TL_L; i++) {
        char n[64];
        uint32_t big = more_bits(i, TL_L) ? GG_Q6_K : GG_Q4_K;
#define T(suffix, type, a, b)                                                                      \
    snprintf(n, sizeof n, "blk.%d." suffix, i);                                                    \
    add_t(l, n, type, a, b, 1)
        T("attn_norm.weight", GG_F32, TL_H, 1);
        T("attn_q.weight", GG_Q4_K, TL_H, TL_H);
        T("attn_k.weight", GG_Q4_K, TL_H, 128);
        T("attn_v.weight", big, TL_H, 128);
        T("attn_output.weight", GG_Q4_K, TL_H, TL_H);
        T("ffn_norm.weight", GG_F32, TL_H, 1);
        T("ffn_gate.weight", GG_Q4_K, TL_H, TL_F);
        T("ffn_up.weight", GG_Q4_K, TL_H, TL_F);
        T("ffn_down.weight", big, TL_F, TL_H);
#undef T
    }
    add_t(l, "output_norm.weight", GG_F32, TL_H, 1, 1);
    add_t(l, "output.weight", GG_Q6_K, TL_H, TL_V, 1);
    add_t(l, "rope_freqs.weight", GG_F32, 32, 1, 1);
}

/* Metadata of the tiny Llama: every value type appears at least once. */
static void tiny_llama_kv(gb *g, uint64_t *n_kv)
{
    kv_str(g, "general.architecture", "llama");
    kv_str(g, "general.name", "Tiny Llama");
    kv_u32(g, "general.file_type", 15); /* MOSTLY_Q4_K_M */
    kv_u32(g, "general.alignment", 32);
    kv_u32(g, "llama.block_count", TL_L);
    kv_u32(g, "llama.context_length", 8192);
    kv_u32(g, "llama.embedding_length", TL_H);
    kv_u32(g, "llama.feed_forward_length", TL_F);
    kv_u32(g, "llama.attention.head_count", 4);
    kv_u32(g, "llama.attention.head_count_kv", 2);
    kv_scalar(g, "llama.rope.freq_base", GT_F32, 0x461c4000, 4);
    kv_scalar(g, "test.f64", GT_F64, 0, 8);
    kv_scalar(g, "test.i64", GT_I64, (uint64_t)-5, 8);
    kv_scalar(g, "test.u64", GT_U64, 7, 8);
    kv_scalar(g, "test.u8", GT_U8, 1, 1);
    kv_scalar(g, "test.i16", GT_I16, 0xFFFF, 2);
    kv_scalar(g, "tokenizer.ggml.add_bos_token", GT_BOOL, 1, 1);
    kv_str(g, "tokenizer.ggml.model", "gpt2");
    kv_tokens(g, TL_V);
    kv_int_array(g, "tokenizer.ggml.token_type", GT_I32, 4, TL_V, 1);
    kv_int_array(g, "tokenizer.ggml.scores", GT_F32, 4, TL_V, 0);
    *n_kv = 21;
}

/* The whole header of the tiny Llama; *header_end = end of the tensor table. */
static gb tiny_llama(tlist *l, size_t *header_end)
{
    gb g = {0};
    gb kv = {0};
    uint64_t n_kv = 0;
    tiny_llama_tensors(l);
    tiny_llama_kv(&kv, &n_kv);
    header(&g, 3, l->n, n_kv);
    gb_raw(&g, kv.b, kv.n);
    free(kv.b);
    write_tensors(&g, l);
    *header_end = g.n;
    while (g.n % 32 != 0) /* alignment padding, then (absent) tensor data */
        gb_raw(&g, "", 1);
    return g;
}

static gpufit_model *gguf_ok(const gb *g)
{
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    uint64_t need = 1;
    int32_t st = gpufit_model_from_gguf(&m, g->b, g->n, &need, &err);
    cr_assert_eq(st, GPUFIT_OK, "GGUF: %s", err.message);
    cr_assert_eq(need, 0);
    return m;
}

static void expect_gguf_error(const gb *g, int32_t status, const char *needle)
{
    gpufit_model *m = (gpufit_model *)1;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_model_from_gguf(&m, g->b, g->n, NULL, &err);
    cr_assert_eq(st, status, "status %d (%s), wanted %d", st, err.message, status);
    cr_assert_null(m);
    cr_assert(strstr(err.message, needle) != NULL, "message \"%s\" lacks \"%s\"", err.message,
              needle);
}

/* ---------------------------------------------------------------------------------------
 * GGUF: exact bytes
 * ------------------------------------------------------------------------------------- */
Test(gguf, q4_k_m_llama_exact_bytes)
{
    tlist l;
    size_t end;
    gb g = tiny_llama(&l, &end);
    gpufit_model *m = gguf_ok(&g);
    /* architecture from the metadata and the tensor names */
    cr_assert_eq(get(m, GPUFIT_MODEL_N_LAYERS), TL_L);
    cr_assert_eq(get(m, GPUFIT_MODEL_HIDDEN_SIZE), TL_H);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_HEADS), 4);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_KV_HEADS), 2);
    cr_assert_eq(get(m, GPUFIT_MODEL_HEAD_DIM), 64);
    cr_assert_eq(get(m, GPUFIT_MODEL_FFN_HIDDEN_SIZE), TL_F);
    cr_assert_eq(get(m, GPUFIT_MODEL_VOCAB_SIZE), TL_V);
    cr_assert_eq(get(m, GPUFIT_MODEL_TIED_EMBEDDINGS), 0);
    cr_assert_eq(get(m, GPUFIT_MODEL_MLP), GPUFIT_MLP_SWIGLU);
    cr_assert_eq(get(m, GPUFIT_MODEL_NORM), GPUFIT_NORM_RMSNORM);
    cr_assert_eq(get(m, GPUFIT_MODEL_QKV_BIAS), 0);
    cr_assert_str_eq(gpufit_model_name(m), "Tiny Llama");
    /* exact bytes: per layer, token_embd, output, other globals */
    uint64_t layer[TL_L] = {0}, emb = 0, out = 0, glob = 0, all = 0, elems = 0;
    for (size_t i = 0; i < l.n; i++) {
        uint64_t b = t_bytes(&l.t[i]);
        all += b;
        int idx = -1;
        if (sscanf(l.t[i].name, "blk.%d.", &idx) == 1)
            layer[idx] += b;
        else if (strcmp(l.t[i].name, "token_embd.weight") == 0)
            emb = b;
        else if (strcmp(l.t[i].name, "output.weight") == 0)
            out = b;
        else
            glob += b;
        if (strcmp(l.t[i].name, "rope_freqs.weight") != 0)
            elems += t_elems(&l.t[i]);
    }
    cr_assert_eq(m->gguf_layers, TL_L);
    cr_assert_eq(m->gguf_file_type, GPUFIT_DTYPE_Q4_K_M);
    uint64_t sum = m->gguf_token_embd_bytes + m->gguf_output_bytes + m->gguf_global_bytes;
    for (int i = 0; i < TL_L; i++) {
        cr_assert_eq(m->gguf_layer_bytes[i], layer[i], "layer %d: %llu vs %llu", i,
                     (unsigned long long)m->gguf_layer_bytes[i], (unsigned long long)layer[i]);
        sum += m->gguf_layer_bytes[i];
    }
    cr_assert_eq(m->gguf_token_embd_bytes, emb);
    cr_assert_eq(m->gguf_output_bytes, out);
    cr_assert_eq(m->gguf_global_bytes, glob);
    cr_assert_eq(sum, all, "weights %llu = sum over tensors %llu", (unsigned long long)sum,
                 (unsigned long long)all);
    /* a q6_K layer (use_more_bits) is heavier than a q4_K one */
    cr_assert_gt(layer[0], layer[1]);
    /* the architecture counts exactly the tensors' elements (rope_freqs is not a weight) */
    cr_assert_eq(total_of(m), elems);
    gpufit_model_free(m);
    free(g.b);
}

/* Llama-3.1-8B in llama.cpp's Q4_K_M recipe (memory-model.md §7.2): the header's exact bytes
 * are the published 4.894384 bpw = 4,912,898,048 bytes (Appendix A.2), of which the Q4_K
 * token embedding (295,501,824) stays in host memory and 4,617,396,224 go to the GPU, the
 * same numbers the recipe path of mem_weights.c gives (test_eval.c). */
Test(gguf, llama31_8b_q4_k_m_published_bytes)
{
    enum { H = 4096, KV = 1024, F = 14336, V = 128256, L = 32 };
    tlist *l = malloc(sizeof *l);
    l->n = 0;
    add_t(l, "token_embd.weight", GG_Q4_K, H, V, 1);
    for (int i = 0; i < L; i++) {
        char n[64];
        uint32_t big = more_bits(i, L) ? GG_Q6_K : GG_Q4_K;
#define T(suffix, type, a, b)                                                                      \
    snprintf(n, sizeof n, "blk.%d." suffix, i);                                                    \
    add_t(l, n, type, a, b, 1)
        T("attn_norm.weight", GG_F32, H, 1);
        T("attn_q.weight", GG_Q4_K, H, H);
        T("attn_k.weight", GG_Q4_K, H, KV);
        T("attn_v.weight", big, H, KV);
        T("attn_output.weight", GG_Q4_K, H, H);
        T("ffn_norm.weight", GG_F32, H, 1);
        T("ffn_gate.weight", GG_Q4_K, H, F);
        T("ffn_up.weight", GG_Q4_K, H, F);
        T("ffn_down.weight", big, F, H);
#undef T
    }
    add_t(l, "output_norm.weight", GG_F32, H, 1, 1);
    add_t(l, "output.weight", GG_Q6_K, H, V, 1);
    gb g = {0}, kv = {0};
    kv_str(&kv, "general.architecture", "llama");
    kv_u32(&kv, "general.file_type", 15);
    kv_u32(&kv, "llama.block_count", L);
    kv_u32(&kv, "llama.embedding_length", H);
    kv_u32(&kv, "llama.feed_forward_length", F);
    kv_u32(&kv, "llama.attention.head_count", 32);
    kv_u32(&kv, "llama.attention.head_count_kv", 8);
    kv_u32(&kv, "llama.vocab_size", V);
    header(&g, 3, l->n, 8);
    gb_raw(&g, kv.b, kv.n);
    write_tensors(&g, l);
    gpufit_model *m = gguf_ok(&g);
    uint64_t layers = 0;
    for (int i = 0; i < L; i++)
        layers += m->gguf_layer_bytes[i];
    uint64_t device = layers + m->gguf_output_bytes + m->gguf_global_bytes;
    cr_assert_eq(m->gguf_token_embd_bytes, 295501824ULL);
    cr_assert_eq(device, 4617396224ULL, "%llu", (unsigned long long)device);
    cr_assert_eq(device + m->gguf_token_embd_bytes, 4912898048ULL);
    /* and the architecture is the preset's */
    gpufit_model *p = NULL;
    cr_assert_eq(gpufit_model_from_preset(&p, "llama-3.1-8b", NULL), GPUFIT_OK);
    cr_assert_eq(total_of(m), total_of(p));
    gpufit_model_free(p);
    gpufit_model_free(m);
    free(g.b);
    free(kv.b);
    free(l);
}

/* Partial offload: a slice of the last N layers holds exactly those layers' bytes. */
Test(gguf, partial_offload_exact_layers)
{
    tlist l;
    size_t end;
    gb g = tiny_llama(&l, &end);
    gpufit_model *m = gguf_ok(&g);
    gpufit__shape s;
    cr_assert_eq(gpufit__model_resolve(m, &s, NULL), GPUFIT_OK);
    gpufit__plan p;
    memset(&p, 0, sizeof p);
    p.tp = p.pp = p.dp = p.ep = 1;
    for (uint64_t ngl = 0; ngl <= TL_L; ngl++) {
        gpufit__slice sl;
        memset(&sl, 0, sizeof sl);
        sl.layers[GPUFIT__W_DENSE] = ngl;
        sl.layer_begin[GPUFIT__W_DENSE] = TL_L - ngl;
        uint64_t dev = 1, host = 1, want = 0;
        for (uint64_t i = TL_L - ngl; i < TL_L; i++)
            want += m->gguf_layer_bytes[i];
        cr_assert_eq(gpufit__weights_bytes_gguf(m, &p, &s, &sl, &dev, &host), 0);
        cr_assert_eq(dev, want, "ngl %llu", (unsigned long long)ngl);
        cr_assert_eq(host, 0);
    }
    /* everything: layers + output + globals on the device, token_embd in host memory */
    gpufit__slice all;
    memset(&all, 0, sizeof all);
    all.layers[GPUFIT__W_DENSE] = TL_L;
    all.embedding = all.output = 1;
    uint64_t dev = 0, host = 0, layers = 0;
    for (int i = 0; i < TL_L; i++)
        layers += m->gguf_layer_bytes[i];
    cr_assert_eq(gpufit__weights_bytes_gguf(m, &p, &s, &all, &dev, &host), 0);
    cr_assert_eq(dev, layers + m->gguf_output_bytes + m->gguf_global_bytes);
    cr_assert_eq(host, m->gguf_token_embd_bytes);
    /* tensor parallelism divides the device bytes */
    p.tp = 2;
    uint64_t dev2 = 0;
    cr_assert_eq(gpufit__weights_bytes_gguf(m, &p, &s, &all, &dev2, &host), 0);
    cr_assert_eq(dev2, (dev + 1) / 2);
    gpufit_model_free(m);
    free(g.b);
}

/* Truncation: every prefix asks for more, never more than the header holds, and reading what
 * is asked for converges on the whole header. */
Test(gguf, truncated_prefixes_need_more)
{
    tlist l;
    size_t end;
    gb g = tiny_llama(&l, &end);
    for (size_t len = 0; len < end; len++) {
        gpufit_model *m = (gpufit_model *)1;
        uint64_t need = 0;
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t st = gpufit_model_from_gguf(&m, g.b, len, &need, &err);
        cr_assert_eq(st, GPUFIT_E_BUFFER_TOO_SMALL, "len %zu: %d %s", len, st, err.message);
        cr_assert_null(m);
        cr_assert_gt(need, len, "len %zu: need %llu", len, (unsigned long long)need);
        cr_assert_leq(need, end, "len %zu: need %llu > %zu", len, (unsigned long long)need, end);
    }
    size_t len = 0;
    int rounds = 0;
    for (;;) {
        gpufit_model *m = NULL;
        uint64_t need = 0;
        int32_t st = gpufit_model_from_gguf(&m, g.b, len, &need, NULL);
        if (st == GPUFIT_OK) {
            gpufit_model_free(m);
            break;
        }
        cr_assert_eq(st, GPUFIT_E_BUFFER_TOO_SMALL);
        len = (size_t)need;
        cr_assert_lt(++rounds, 400);
    }
    cr_assert_eq(len, end);
    free(g.b);
}

/* A MoE model with 3-D expert tensors, tied embeddings and q/k norms. */
Test(gguf, moe_tied_qk_norm)
{
    tlist l;
    l.n = 0;
    add_t(&l, "token_embd.weight", GG_Q8_0, 256, 300, 1);
    for (int i = 0; i < 2; i++) {
        char n[64];
#define T(suffix, type, a, b, c)                                                                   \
    snprintf(n, sizeof n, "blk.%d." suffix, i);                                                    \
    add_t(&l, n, type, a, b, c)
        T("attn_norm.weight", GG_F32, 256, 1, 1);
        T("attn_q.weight", GG_Q8_0, 256, 256, 1);
        T("attn_k.weight", GG_Q8_0, 256, 128, 1);
        T("attn_v.weight", GG_Q8_0, 256, 128, 1);
        T("attn_output.weight", GG_Q8_0, 256, 256, 1);
        T("attn_q_norm.weight", GG_F32, 64, 1, 1);
        T("attn_k_norm.weight", GG_F32, 64, 1, 1);
        T("ffn_norm.weight", GG_F32, 256, 1, 1);
        T("ffn_gate_inp.weight", GG_F32, 256, 4, 1);
        T("ffn_gate_exps.weight", GG_IQ4_XS, 256, 128, 4);
        T("ffn_up_exps.weight", GG_IQ4_XS, 256, 128, 4);
        T("ffn_down_exps.weight", GG_MXFP4, 128, 256, 4);
#undef T
    }
    add_t(&l, "output_norm.weight", GG_F32, 256, 1, 1);
    gb g = {0}, kv = {0};
    kv_str(&kv, "general.architecture", "qwen3moe");
    kv_u32(&kv, "qwen3moe.block_count", 2);
    kv_u32(&kv, "qwen3moe.embedding_length", 256);
    kv_u32(&kv, "qwen3moe.feed_forward_length", 512);
    kv_u32(&kv, "qwen3moe.attention.head_count", 4);
    kv_u32(&kv, "qwen3moe.attention.head_count_kv", 2);
    kv_u32(&kv, "qwen3moe.attention.key_length", 64);
    kv_u32(&kv, "qwen3moe.expert_count", 4);
    kv_u32(&kv, "qwen3moe.expert_used_count", 2);
    kv_u32(&kv, "qwen3moe.expert_feed_forward_length", 128);
    kv_u32(&kv, "qwen3moe.vocab_size", 300);
    kv_u32(&kv, "llama.block_count", 99); /* another architecture's key: ignored */
    header(&g, 2, l.n, 12);
    gb_raw(&g, kv.b, kv.n);
    write_tensors(&g, &l);
    gpufit_model *m = gguf_ok(&g);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_EXPERTS), 4);
    cr_assert_eq(get(m, GPUFIT_MODEL_EXPERTS_PER_TOKEN), 2);
    cr_assert_eq(get(m, GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE), 128);
    cr_assert_eq(get(m, GPUFIT_MODEL_QK_NORM), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_TIED_EMBEDDINGS), 1);
    cr_assert_eq(m->gguf_output_bytes, 0);
    uint64_t elems = 0, layer0 = 0;
    for (size_t i = 0; i < l.n; i++) {
        elems += t_elems(&l.t[i]);
        if (strncmp(l.t[i].name, "blk.0.", 6) == 0)
            layer0 += t_bytes(&l.t[i]);
    }
    cr_assert_eq(total_of(m), elems);
    cr_assert_eq(m->gguf_layer_bytes[0], layer0);
    /* tied: the output slice carries llama.cpp's duplicate of token_embd */
    gpufit__shape s;
    cr_assert_eq(gpufit__model_resolve(m, &s, NULL), GPUFIT_OK);
    gpufit__plan p;
    memset(&p, 0, sizeof p);
    p.tp = p.pp = p.dp = p.ep = 1;
    gpufit__slice sl;
    memset(&sl, 0, sizeof sl);
    sl.output = 1;
    uint64_t dev = 0, host = 0;
    cr_assert_eq(gpufit__weights_bytes_gguf(m, &p, &s, &sl, &dev, &host), 0);
    cr_assert_eq(dev, m->gguf_token_embd_bytes + m->gguf_global_bytes);
    gpufit_model_free(m);
    free(g.b);
    free(kv.b);
}

/* DeepSeek-V2 style: MLA, a leading dense layer, a shared expert and the router bias; the
 * architecture reproduces the tensors' element count. */
Test(gguf, deepseek2_mla)
{
    enum {
        H = 256,
        NQ = 4,
        RQ = 128,
        RKV = 64,
        DR = 32,
        DN = 64,
        DV = 64,
        F = 512,
        FM = 256,
        E = 4,
        V = 300
    };
    tlist l;
    l.n = 0;
    add_t(&l, "token_embd.weight", GG_F16, H, V, 1);
    for (int i = 0; i < 3; i++) {
        char n[64];
#define T(suffix, a, b, c)                                                                         \
    snprintf(n, sizeof n, "blk.%d." suffix, i);                                                    \
    add_t(&l, n, GG_F16, a, b, c)
        T("attn_norm.weight", H, 1, 1);
        T("attn_q_a.weight", H, RQ, 1);
        T("attn_q_a_norm.weight", RQ, 1, 1);
        T("attn_q_b.weight", RQ, NQ * (DN + DR), 1);
        T("attn_kv_a_mqa.weight", H, RKV + DR, 1);
        T("attn_kv_a_norm.weight", RKV, 1, 1);
        T("attn_kv_b.weight", RKV, NQ * (DN + DV), 1);
        T("attn_output.weight", NQ * DV, H, 1);
        T("ffn_norm.weight", H, 1, 1);
        if (i == 0) {
            T("ffn_gate.weight", H, F, 1);
            T("ffn_up.weight", H, F, 1);
            T("ffn_down.weight", F, H, 1);
        } else {
            T("ffn_gate_inp.weight", H, E, 1);
            T("exp_probs_b.bias", E, 1, 1);
            T("ffn_gate_exps.weight", H, FM, E);
            T("ffn_up_exps.weight", H, FM, E);
            T("ffn_down_exps.weight", FM, H, E);
            T("ffn_gate_shexp.weight", H, FM, 1);
            T("ffn_up_shexp.weight", H, FM, 1);
            T("ffn_down_shexp.weight", FM, H, 1);
        }
#undef T
    }
    add_t(&l, "output_norm.weight", GG_F16, H, 1, 1);
    add_t(&l, "output.weight", GG_F16, H, V, 1);
    gb g = {0}, kv = {0};
    kv_str(&kv, "general.architecture", "deepseek2");
    kv_u32(&kv, "deepseek2.block_count", 3);
    kv_u32(&kv, "deepseek2.embedding_length", H);
    kv_u32(&kv, "deepseek2.feed_forward_length", F);
    kv_u32(&kv, "deepseek2.attention.head_count", NQ);
    kv_u32(&kv, "deepseek2.attention.head_count_kv", NQ);
    kv_u32(&kv, "deepseek2.attention.key_length", DN + DR);
    kv_u32(&kv, "deepseek2.attention.value_length", DV);
    kv_u32(&kv, "deepseek2.attention.q_lora_rank", RQ);
    kv_u32(&kv, "deepseek2.attention.kv_lora_rank", RKV);
    kv_u32(&kv, "deepseek2.rope.dimension_count", DR);
    kv_u32(&kv, "deepseek2.expert_count", E);
    kv_u32(&kv, "deepseek2.expert_used_count", 2);
    kv_u32(&kv, "deepseek2.expert_shared_count", 1);
    kv_u32(&kv, "deepseek2.expert_feed_forward_length", FM);
    kv_u32(&kv, "deepseek2.leading_dense_block_count", 1);
    kv_tokens(&kv, V);
    header(&g, 3, l.n, 17);
    gb_raw(&g, kv.b, kv.n);
    write_tensors(&g, &l);
    gpufit_model *m = gguf_ok(&g);
    cr_assert_eq(get(m, GPUFIT_MODEL_KV_LORA_RANK), RKV);
    cr_assert_eq(get(m, GPUFIT_MODEL_Q_LORA_RANK), RQ);
    cr_assert_eq(get(m, GPUFIT_MODEL_QK_NOPE_HEAD_DIM), DN);
    cr_assert_eq(get(m, GPUFIT_MODEL_QK_ROPE_HEAD_DIM), DR);
    cr_assert_eq(get(m, GPUFIT_MODEL_V_HEAD_DIM), DV);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_DENSE_LAYERS), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_N_SHARED_EXPERTS), 1);
    cr_assert_eq(get(m, GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE), 0);
    cr_assert_eq(get(m, GPUFIT_MODEL_ROUTER_BIAS), 1);
    uint64_t elems = 0;
    for (size_t i = 0; i < l.n; i++)
        elems += t_elems(&l.t[i]);
    cr_assert_eq(total_of(m), elems, "%llu vs %llu", (unsigned long long)total_of(m),
                 (unsigned long long)elems);
    gpufit_model_free(m);
    free(g.b);
    free(kv.b);
}

/* ---------------------------------------------------------------------------------------
 * GGUF: corrupt and hostile headers
 * ------------------------------------------------------------------------------------- */
/* A minimal valid header: llama metadata, no tensors; extra_kv/extra_t append raw entries. */
static gb minimal(uint32_t version, uint64_t n_tensors, uint64_t extra_kv, const gb *extra)
{
    gb g = {0};
    header(&g, version, n_tensors, 5 + extra_kv);
    kv_str(&g, "general.architecture", "llama");
    kv_u32(&g, "llama.block_count", 2);
    kv_u32(&g, "llama.embedding_length", 64);
    kv_u32(&g, "llama.attention.head_count", 4);
    kv_u32(&g, "llama.feed_forward_length", 128);
    if (extra != NULL)
        gb_raw(&g, extra->b, extra->n);
    return g;
}

Test(gguf, corrupt_headers)
{
    gb g = {0}, x = {0};
    /* magic, version */
    gb_raw(&g, "GGML", 4);
    gb_le(&g, 3, 4);
    gb_le(&g, 0, 8);
    gb_le(&g, 0, 8);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "not a GGUF file");
    free(g.b);
    g = minimal(1, 0, 0, NULL);
    expect_gguf_error(&g, GPUFIT_E_UNSUPPORTED, "version 1");
    free(g.b);
    g = minimal(0x03000000, 0, 0, NULL);
    expect_gguf_error(&g, GPUFIT_E_UNSUPPORTED, "big-endian");
    free(g.b);
    /* counts beyond the limits */
    g = (gb){0};
    header(&g, 3, ((uint64_t)1 << 20) + 1, 0);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "2^20");
    free(g.b);
    g = (gb){0};
    header(&g, 3, 0, UINT64_MAX);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "2^20");
    free(g.b);
    /* no tokens, no token_embd: the vocabulary is missing */
    g = minimal(3, 0, 0, NULL);
    expect_gguf_error(&g, GPUFIT_E_INVALID_ARG, "llama.vocab_size");
    free(g.b);
    /* a string longer than 1 MiB */
    x = (gb){0};
    gb_le(&x, ((uint64_t)1 << 20) + 1, 8);
    g = minimal(3, 0, 1, &x);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "1 MiB");
    free(g.b);
    free(x.b);
    /* an unknown value type */
    x = (gb){0};
    gb_str(&x, "k");
    gb_le(&x, 13, 4);
    g = minimal(3, 0, 1, &x);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "unknown value type");
    free(g.b);
    free(x.b);
    /* an array of arrays */
    x = (gb){0};
    gb_str(&x, "k");
    gb_le(&x, GT_ARR, 4);
    gb_le(&x, GT_ARR, 4);
    gb_le(&x, 1, 8);
    g = minimal(3, 0, 1, &x);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "array of arrays");
    free(g.b);
    free(x.b);
    /* array lengths whose bytes overflow, or exceed the 1 GiB header limit */
    x = (gb){0};
    gb_str(&x, "k");
    gb_le(&x, GT_ARR, 4);
    gb_le(&x, GT_U64, 4);
    gb_le(&x, (uint64_t)1 << 61, 8);
    g = minimal(3, 0, 1, &x);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "exceeds the limit of 2^24");
    free(g.b);
    free(x.b);
    x = (gb){0};
    gb_str(&x, "k");
    gb_le(&x, GT_ARR, 4);
    gb_le(&x, GT_STR, 4);
    gb_le(&x, (uint64_t)1 << 40, 8);
    g = minimal(3, 0, 1, &x);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "exceeds the limit of 2^24");
    free(g.b);
    free(x.b);
    /* general.architecture of the wrong type; missing; a bad alignment */
    g = (gb){0};
    header(&g, 3, 0, 1);
    kv_u32(&g, "general.architecture", 1);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "general.architecture");
    free(g.b);
    g = (gb){0};
    header(&g, 3, 0, 1);
    kv_u32(&g, "llama.block_count", 1);
    expect_gguf_error(&g, GPUFIT_E_INVALID_ARG, "general.architecture");
    free(g.b);
    x = (gb){0};
    kv_u32(&x, "general.alignment", 24);
    g = minimal(3, 0, 1, &x);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "alignment");
    free(g.b);
    free(x.b);
    /* a missing required key names "<arch>.<key>" */
    g = (gb){0};
    header(&g, 3, 0, 2);
    kv_str(&g, "general.architecture", "llama");
    kv_u32(&g, "llama.embedding_length", 64);
    expect_gguf_error(&g, GPUFIT_E_INVALID_ARG, "llama.block_count");
    free(g.b);
    /* a per-layer head count that varies */
    x = (gb){0};
    kv_tokens(&x, 10);
    gb_str(&x, "llama.attention.head_count_kv");
    gb_le(&x, GT_ARR, 4);
    gb_le(&x, GT_U32, 4);
    gb_le(&x, 2, 8);
    gb_le(&x, 1, 4);
    gb_le(&x, 2, 4);
    g = minimal(3, 0, 2, &x);
    expect_gguf_error(&g, GPUFIT_E_UNSUPPORTED, "head_count_kv");
    free(g.b);
    free(x.b);
}

/* One bad tensor after valid metadata. */
static void bad_tensor(const char *name,
                       uint32_t nd,
                       const uint64_t *ne,
                       uint32_t type,
                       uint64_t off,
                       int32_t status,
                       const char *needle)
{
    gb x = {0};
    kv_tokens(&x, 10);
    gb_str(&x, name);
    gb_le(&x, nd, 4);
    for (uint32_t i = 0; i < nd && i < 8; i++)
        gb_le(&x, i < 4 ? ne[i] : 1, 8);
    gb_le(&x, type, 4);
    gb_le(&x, off, 8);
    gb g = minimal(3, 1, 1, &x);
    expect_gguf_error(&g, status, needle);
    free(g.b);
    free(x.b);
}

Test(gguf, corrupt_tensors)
{
    const uint64_t ok[4] = {64, 64, 1, 1};
    const uint64_t odd[4] = {100, 64, 1, 1};
    const uint64_t huge[4] = {(uint64_t)1 << 40, (uint64_t)1 << 40, 1, 1};
    bad_tensor("blk.0.attn_q.weight", 5, ok, GG_F32, 0, GPUFIT_E_PARSE, "dimensions");
    bad_tensor("blk.0.attn_q.weight", 0, ok, GG_F32, 0, GPUFIT_E_PARSE, "dimensions");
    bad_tensor("blk.0.attn_q.weight", 2, ok, 4, 0, GPUFIT_E_UNSUPPORTED, "ggml type 4");
    bad_tensor("blk.0.attn_q.weight", 2, ok, 1000, 0, GPUFIT_E_UNSUPPORTED, "ggml type");
    bad_tensor("blk.0.attn_q.weight", 2, odd, GG_Q4_K, 0, GPUFIT_E_PARSE, "block");
    bad_tensor("blk.0.attn_q.weight", 2, huge, GG_F32, 0, GPUFIT_E_PARSE, "2^63");
    bad_tensor("blk.0.attn_q.weight", 2, ok, GG_F32, 7, GPUFIT_E_PARSE, "aligned");
    bad_tensor("blk.2.attn_q.weight", 2, ok, GG_F32, 0, GPUFIT_E_INCONSISTENT, "blk.2");
    bad_tensor("blk.99999999999.x", 2, ok, GG_F32, 0, GPUFIT_E_INCONSISTENT, "");
    /* a name that merely looks like a layer is a global tensor: fine */
    gb x = {0};
    kv_tokens(&x, 10);
    gb_str(&x, "blk.x.weight");
    gb_le(&x, 2, 4);
    gb_le(&x, 64, 8);
    gb_le(&x, 64, 8);
    gb_le(&x, GG_F32, 4);
    gb_le(&x, 0, 8);
    gb g = minimal(3, 1, 1, &x);
    gpufit_model *m = gguf_ok(&g);
    cr_assert_eq(m->gguf_global_bytes, 64 * 64 * 4);
    gpufit_model_free(m);
    free(g.b);
    free(x.b);
}

Test(gguf, null_arguments)
{
    gpufit_model *m = NULL;
    uint64_t need = 5;
    cr_assert_eq(gpufit_model_from_gguf(NULL, "GGUF", 4, &need, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(need, 0);
    cr_assert_eq(gpufit_model_from_gguf(&m, NULL, 4, NULL, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_model_from_gguf(&m, NULL, 0, &need, NULL), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(need, 24);
    cr_assert_eq(gpufit_model_from_gguf(&m, "GG", 2, &need, NULL), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(gpufit_model_from_gguf(&m, "XX", 2, &need, NULL), GPUFIT_E_PARSE);
}

/* ---------------------------------------------------------------------------------------
 * safetensors
 * ------------------------------------------------------------------------------------- */
typedef struct sbuf {
    char json[1 << 16];
    size_t n;
    uint64_t off;
} sbuf;

static void st_begin(sbuf *s)
{
    s->n = (size_t)snprintf(s->json, sizeof s->json, "{\"__metadata__\": {\"format\": \"pt\"}");
    s->off = 0;
}

static void
st_add(sbuf *s, const char *name, const char *dtype, unsigned esize, uint64_t a, uint64_t b)
{
    uint64_t bytes = a * (b ? b : 1) * esize;
    char shape[64];
    if (b)
        snprintf(shape, sizeof shape, "[%llu, %llu]", (unsigned long long)a, (unsigned long long)b);
    else
        snprintf(shape, sizeof shape, "[%llu]", (unsigned long long)a);
    s->n += (size_t)snprintf(s->json + s->n, sizeof s->json - s->n,
                             ", \"%s\": {\"dtype\": \"%s\", \"shape\": %s, \"data_offsets\": "
                             "[%llu, %llu]}",
                             name, dtype, shape, (unsigned long long)s->off,
                             (unsigned long long)(s->off + bytes));
    s->off += bytes;
}

/* The file image: u64 length + JSON padded with spaces to 8 bytes (as safetensors writes). */
static uint8_t *st_file(sbuf *s, size_t *len)
{
    s->n += (size_t)snprintf(s->json + s->n, sizeof s->json - s->n, "}");
    while (s->n % 8 != 0)
        s->json[s->n++] = ' ';
    uint8_t *f = malloc(8 + s->n);
    for (int i = 0; i < 8; i++)
        f[i] = (uint8_t)((uint64_t)s->n >> (8 * i));
    memcpy(f + 8, s->json, s->n);
    *len = 8 + s->n;
    return f;
}

/* A two-layer Llama (h 64, 4 heads / 2 KV heads, f 128, V 100) in HF tensor names. */
#define TINY_CONFIG                                                                                \
    "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "                  \
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": 128, "         \
    "\"vocab_size\": 100, \"tie_word_embeddings\": %s}"

static void tiny_tensors(sbuf *s, int lm_head)
{
    st_begin(s);
    st_add(s, "model.embed_tokens.weight", "BF16", 2, 100, 64);
    for (int i = 0; i < 2; i++) {
        char n[96];
#define A(suffix, dt, es, a, b)                                                                    \
    snprintf(n, sizeof n, "model.layers.%d." suffix, i);                                           \
    st_add(s, n, dt, es, a, b)
        A("input_layernorm.weight", "F32", 4, 64, 0);
        A("self_attn.q_proj.weight", "BF16", 2, 64, 64);
        A("self_attn.k_proj.weight", "BF16", 2, 32, 64);
        A("self_attn.v_proj.weight", "BF16", 2, 32, 64);
        A("self_attn.o_proj.weight", "BF16", 2, 64, 64);
        A("post_attention_layernorm.weight", "F32", 4, 64, 0);
        A("mlp.gate_proj.weight", "F8_E4M3", 1, 128, 64);
        A("mlp.up_proj.weight", "F8_E4M3", 1, 128, 64);
        A("mlp.down_proj.weight", "I8", 1, 64, 128);
#undef A
    }
    st_add(s, "model.norm.weight", "F32", 4, 64, 0);
    if (lm_head)
        st_add(s, "lm_head.weight", "F16", 2, 100, 64);
}

static gpufit_model *tiny_model(int tied)
{
    char json[512];
    snprintf(json, sizeof json, TINY_CONFIG, tied ? "true" : "false");
    gpufit_model *m = NULL;
    gpufit_error err;
    cr_assert_eq(config_text(json, &m, &err), GPUFIT_OK, "%s", err.message);
    return m;
}

static int32_t
st_read(const void *b, size_t len, gpufit_safetensors_info *info, uint64_t *need, gpufit_error *err)
{
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    *err = (gpufit_error)GPUFIT_ERROR_INIT;
    return gpufit_safetensors_read(info, b, len, need, err);
}

Test(safetensors, header_sums_and_check)
{
    sbuf *s = malloc(sizeof *s);
    size_t len;
    tiny_tensors(s, 1);
    uint8_t *f = st_file(s, &len);
    gpufit_safetensors_info info;
    gpufit_error err;
    uint64_t need = 9;
    cr_assert_eq(st_read(f, len, &info, &need, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(need, 0);
    cr_assert_eq(info.struct_size, sizeof info);
    cr_assert_eq(info.n_tensors, 21);
    uint64_t layer = 64 + 64 * 64 + 2 * 32 * 64 + 64 * 64 + 64 + 3 * 128 * 64;
    uint64_t params = 2 * 100 * 64 + 2 * layer + 64;
    cr_assert_eq(info.n_params, params);
    cr_assert_eq(info.bytes_fp32, 4 * (2 * 64 * 2 + 64));
    cr_assert_eq(info.bytes_16bit, 2 * (100 * 64 * 2 + 2 * (2 * 64 * 64 + 2 * 32 * 64)));
    cr_assert_eq(info.bytes_8bit, 2 * 3 * 128 * 64);
    cr_assert_eq(info.bytes_other, 0);
    cr_assert_eq(info.total_bytes,
                 info.bytes_fp32 + info.bytes_16bit + info.bytes_8bit + info.bytes_other);
    cr_assert_eq(info.header_bytes, len);

    /* the model of the same config agrees; a tied config with the head saved agrees too */
    gpufit_model *m = tiny_model(0);
    cr_assert_eq(total_of(m), params);
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_OK, "%s", err.message);
    gpufit_model_free(m);
    m = tiny_model(1);
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_OK, "%s", err.message);
    /* one tensor short: inconsistent, with both counts */
    gpufit_safetensors_info less = info;
    less.n_params -= 64;
    cr_assert_eq(gpufit_model_check_safetensors(m, &less, &err), GPUFIT_E_INCONSISTENT);
    char a[32], b[32];
    snprintf(a, sizeof a, "%llu", (unsigned long long)less.n_params);
    snprintf(b, sizeof b, "%llu", (unsigned long long)total_of(m));
    cr_assert(strstr(err.message, a) && strstr(err.message, b), "%s", err.message);
    less.n_params = 0; /* an index gives no count */
    cr_assert_eq(gpufit_model_check_safetensors(m, &less, &err), GPUFIT_E_INVALID_ARG);
    gpufit_model_free(m);

    /* truncated: the exact length is asked for */
    cr_assert_eq(st_read(f, 5, &info, &need, &err), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(need, 8);
    for (size_t cut = 8; cut < len; cut += 7) {
        cr_assert_eq(st_read(f, cut, &info, &need, &err), GPUFIT_E_BUFFER_TOO_SMALL);
        cr_assert_eq(need, len);
    }
    free(f);
    free(s);
}

/* DeepSeek-V3: the hub checkpoint holds the MTP module and its copies of embedding and head
 * (memory-model.md §1.4: 684,489,845,504); the main model alone is 671,026,419,200. */
Test(safetensors, deepseek_mtp_allowed)
{
    gpufit_model *m = config_file("deepseek-v3");
    gpufit_safetensors_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    gpufit_error err = GPUFIT_ERROR_INIT;
    info.n_params = 684489845504ULL;
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_OK, "%s", err.message);
    info.n_params = 671026419200ULL;
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_OK);
    info.n_params = 671026419201ULL;
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_E_INCONSISTENT);
    gpufit_model_free(m);
}

static void expect_st_error(const char *tensors, int32_t status, const char *needle)
{
    sbuf *s = malloc(sizeof *s);
    s->n = (size_t)snprintf(s->json, sizeof s->json, "{%s", tensors);
    size_t len;
    uint8_t *f = st_file(s, &len);
    gpufit_safetensors_info info;
    gpufit_error err;
    uint64_t need = 0;
    int32_t st = st_read(f, len, &info, &need, &err);
    cr_assert_eq(st, status, "%s: %d (%s)", tensors, st, err.message);
    cr_assert(strstr(err.message, needle) != NULL, "\"%s\" lacks \"%s\"", err.message, needle);
    free(f);
    free(s);
}

Test(safetensors, bad_headers)
{
    expect_st_error("\"w\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 20]}",
                    GPUFIT_E_PARSE, "span 20 bytes");
    expect_st_error("\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 0]}",
                    GPUFIT_E_PARSE, "end before");
    expect_st_error("\"w\": {\"dtype\": \"F31\", \"shape\": [2], \"data_offsets\": [0, 8]}",
                    GPUFIT_E_PARSE, "unknown dtype");
    expect_st_error("\"w\": {\"dtype\": \"F32\", \"shape\": [2]}", GPUFIT_E_PARSE,
                    "missing data_offsets");
    expect_st_error("\"w\": {\"shape\": [2], \"data_offsets\": [0, 8]}", GPUFIT_E_PARSE,
                    "missing dtype");
    expect_st_error("\"w\": {\"dtype\": \"F32\", \"shape\": [-2], \"data_offsets\": [0, 8]}",
                    GPUFIT_E_PARSE, "non-negative");
    expect_st_error("\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8, 9]}",
                    GPUFIT_E_PARSE, "[begin, end]");
    expect_st_error("\"w\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], "
                    "\"data_offsets\": [0, 8]}",
                    GPUFIT_E_PARSE, "64 bits");
    expect_st_error("\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 16]}",
                    GPUFIT_E_PARSE, "gaps or overlaps");
    expect_st_error("\"w\": {\"dtype\": \"F4\", \"shape\": [3], \"data_offsets\": [0, 1]}",
                    GPUFIT_E_PARSE, "partial");
    expect_st_error("\"w\": [1]", GPUFIT_E_PARSE, "not an object");
    expect_st_error("\"__metadata__\": 3", GPUFIT_E_PARSE, "__metadata__");
    expect_st_error("\"w\": {\"dtype\": \"F32\"", GPUFIT_E_PARSE, "");
    /* a header length beyond 16 MiB */
    uint8_t big[16] = {0, 0, 0, 2, 0, 0, 0, 0, '{', '}'};
    gpufit_safetensors_info info;
    gpufit_error err;
    uint64_t need = 0;
    cr_assert_eq(st_read(big, sizeof big, &info, &need, &err), GPUFIT_E_PARSE);
    cr_assert(strstr(err.message, "limit") != NULL, "%s", err.message);
    /* sub-byte and unusual dtypes */
    sbuf *s = malloc(sizeof *s);
    st_begin(s);
    s->n += (size_t)snprintf(s->json + s->n, sizeof s->json - s->n,
                             ", \"a\": {\"dtype\": \"F4\", \"shape\": [4], \"data_offsets\": [0, "
                             "2]}, \"b\": {\"dtype\": \"BOOL\", \"shape\": [], \"data_offsets\": "
                             "[2, 3], \"extra\": {\"x\": 1}}");
    size_t len;
    uint8_t *f = st_file(s, &len);
    cr_assert_eq(st_read(f, len, &info, &need, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(info.n_params, 5);
    cr_assert_eq(info.bytes_other, 3);
    free(f);
    free(s);
    /* struct_size too small */
    memset(&info, 0, sizeof info);
    info.struct_size = 8;
    cr_assert_eq(gpufit_safetensors_read(&info, big, sizeof big, NULL, NULL), GPUFIT_E_STRUCT_SIZE);
}

Test(safetensors, index_json)
{
    const char *idx = "{\n  \"metadata\": {\"total_size\": 16060522496, \"format\": {}},\n"
                      "  \"weight_map\": {\"lm_head.weight\": \"model-00004-of-00004."
                      "safetensors\"}\n}\n";
    gpufit_safetensors_info info;
    gpufit_error err;
    uint64_t need = 0;
    cr_assert_eq(st_read(idx, strlen(idx), &info, &need, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(info.total_bytes, 16060522496ULL);
    cr_assert_eq(info.n_params, 0);
    cr_assert_eq(info.n_tensors, 0);
    const char *no_size = "{\"metadata\": {}, \"weight_map\": {}}";
    cr_assert_eq(st_read(no_size, strlen(no_size), &info, &need, &err), GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(err.message, "total_size") != NULL);
    const char *bad = "{\"metadata\": {\"total_size\": \"12\"}}";
    cr_assert_eq(st_read(bad, strlen(bad), &info, &need, &err), GPUFIT_E_INVALID_ARG);
    const char *broken = "{\"metadata\": {\"total_size\": 12}";
    cr_assert_eq(st_read(broken, strlen(broken), &info, &need, &err), GPUFIT_E_PARSE);
}

/* A GGUF header whose tensor shapes give ~1.4e19 bytes of weights on each side (found by the
 * unsigned-overflow fuzz build, make fuzz-uio): with partial offload the host role's weights
 * (the GPU role's host part + the host layers + the host globals) exceed 64 bits. That is an
 * overflow error, not a wrapped byte count. */
Test(gguf, partial_offload_host_weights_overflow)
{
    size_t len = 0;
    char *buf = slurp("tests/fuzz/corpus/gguf/regress-uio-host-weights-overflow.bin", &len);
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_gguf(&m, buf, len, NULL, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j,
                                   "task=inference framework=llamacpp n_gpu_layers=1 "
                                   "context_len=256",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_E_OVERFLOW, "%s", err.message);
    cr_assert_null(r);
    cr_assert(strstr(err.message, "64 bits") != NULL, "%s", err.message);
    gpufit_job_free(j);
    gpufit_model_free(m);
    free(buf);
}

/* ---------------------------------------------------------------------------------------
 * GGUF: duplicates and hostile counts (issue 13)
 * ------------------------------------------------------------------------------------- */
Test(gguf, duplicate_key_is_refused_naming_both)
{
    tlist l;
    gb g = {0}, kv = {0};
    uint64_t n_kv = 0;
    tiny_llama_tensors(&l);
    tiny_llama_kv(&kv, &n_kv);
    size_t second = 24 + kv.n;
    kv_u32(&kv, "llama.block_count", 2); /* again, disagreeing */
    header(&g, 3, l.n, n_kv + 1);
    gb_raw(&g, kv.b, kv.n);
    free(kv.b);
    write_tensors(&g, &l);
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_gguf(&m, g.b, g.n, NULL, &err), GPUFIT_E_PARSE, "%s",
                 err.message);
    cr_assert_null(m);
    cr_assert_eq(err.offset, second);
    cr_assert(strstr(err.message, "duplicate key \"llama.block_count\"") != NULL, "%s",
              err.message);
    char both[64];
    snprintf(both, sizeof both, "and %zu", second);
    cr_assert(strstr(err.message, both) != NULL, "%s", err.message);
    free(g.b);
}

Test(gguf, duplicate_tensor_name_is_refused)
{
    tlist l;
    gb g = {0}, kv = {0};
    uint64_t n_kv = 0;
    tiny_llama_tensors(&l);
    add_t(&l, "blk.0.attn_q.weight", GG_Q4_K, TL_H, TL_H, 1);
    tiny_llama_kv(&kv, &n_kv);
    header(&g, 3, l.n, n_kv);
    gb_raw(&g, kv.b, kv.n);
    free(kv.b);
    write_tensors(&g, &l);
    expect_gguf_error(&g, GPUFIT_E_PARSE, "duplicate tensor name \"blk.0.attn_q.weight\"");
    free(g.b);
}

/* A 40-byte buffer claiming a 2^30-element array: refused at once, not "read 1 GiB more". */
Test(gguf, huge_array_count_is_refused_before_reading)
{
    static const uint32_t types[] = {GT_U8, GT_I32, GT_STR};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        gb g = {0};
        header(&g, 3, 0, 1);
        gb_le(&g, 3, 8);
        gb_raw(&g, "a.b", 3);
        gb_le(&g, 9, 4); /* array */
        gb_le(&g, types[i], 4);
        gb_le(&g, (uint64_t)1 << 30, 8);
        gpufit_model *m = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        uint64_t need = 7;
        cr_assert_eq(gpufit_model_from_gguf(&m, g.b, g.n, &need, &err), GPUFIT_E_PARSE, "%s",
                     err.message);
        cr_assert_eq(need, 0);
        cr_assert_eq(err.offset, 39); /* the array's element type */
        cr_assert(strstr(err.message, "1073741824 elements") != NULL, "%s", err.message);
        free(g.b);
    }
}

/* quantization_config keys that are scalars, given as containers: skipped whole (a fuzzed
 * "quant_method": [128, 128] once left the reader parsing the array's elements as members,
 * without end); the reader answers, and a JSON reader out of step is an error, never a loop. */
Test(hf_config, quantization_config_containers_are_skipped)
{
    static const char *const cfgs[] = {
        "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
        "\"quantization_config\": {\"quant_method\": [128, 128]}, \"rope_scaling\": {}}",
        "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
        "\"quantization_config\": {\"bits\": {\"a\": [1]}, \"load_in_4bit\": [true], "
        "\"quant_method\": \"bitsandbytes\"}}",
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        gpufit_model *m = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t st = gpufit_model_from_hf_config(&m, cfgs[i], strlen(cfgs[i]), &err);
        /* an answer: the model, or an error that says why (never the reader's own bug) */
        cr_assert(st != GPUFIT_E_INTERNAL, "config %zu: %s", i, err.message);
        cr_assert(st == GPUFIT_OK || err.message[0] != '\0', "config %zu", i);
        gpufit_model_free(m);
    }
}
