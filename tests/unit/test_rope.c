/* SPDX-License-Identifier: MIT */
/* The RoPE cos/sin tables vLLM and SGLang build at model init (docs/memory/vllm.md, "RoPE
 * tables"), bytes by hand: rows from config.json's max_position_embeddings and rope_scaling
 * as vLLM's get_rope sizes them, x the rotated dims, x 2 B (vLLM: the model dtype) or 4 B
 * (SGLang keeps the table in fp32 on CUDA); counted with the weights on every rank. */
#include "run.h"

#define WEIGHTS(spec) spec_bytes0(spec, GPUFIT_MEM_WEIGHTS)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t get(const gpufit_model *m, int32_t p)
{
    int64_t v = -1;
    cr_assert_eq(gpufit_model_get_int(m, p, &v, NULL), GPUFIT_OK);
    return v;
}

static gpufit_model *config_file(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/hf/%s.json", name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s (tests run from the repository root)", path);
    static char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&m, buf, len, &err), GPUFIT_OK, "%s: %s", name,
                 err.message);
    return m;
}

/* a tiny Llama-style config with the given extra members */
static int32_t tiny(const char *extra, gpufit_model **m, gpufit_error *err)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_hidden_layers\": 2, "
             "\"num_attention_heads\": 8, \"intermediate_size\": 1024, \"vocab_size\": 1000%s}",
             extra);
    *err = (gpufit_error)GPUFIT_ERROR_INIT;
    return gpufit_model_from_hf_config(m, json, strlen(json), err);
}

static int64_t rows_of(const char *extra)
{
    gpufit_model *m = NULL;
    gpufit_error err;
    cr_assert_eq(tiny(extra, &m, &err), GPUFIT_OK, "%s: %s", extra, err.message);
    int64_t r = get(m, GPUFIT_MODEL_ROPE_POSITIONS);
    gpufit_model_free(m);
    return r;
}

Test(rope, rows_from_real_configs)
{
    static const struct {
        const char *name;
        int64_t rows, rotary_dim;
    } t[] = {
        {"meta-llama-3-8b", 8192, 0},       /* no rope_scaling */
        {"meta-llama-3.1-70b", 131072, 0},  /* llama3: the length as is */
        {"deepseek-v3", 4096 * 40, 0},      /* yarn: original_max_position_embeddings x 40 */
        {"qwen2-vl-7b-instruct", 32768, 0}, /* mrope: the length */
        {"gemma-3-4b-it", 131072 * 8 + 131072, 0}, /* linear x 8, + the local table */
        {"gpt-neox-20b", 2048, 24},         /* rotary_pct 0.25 of 96 */
        {"falcon-7b", 2048, 0},             /* FalconConfig's default length */
        {"bloom", 0, 0},                    /* ALiBi */
        {"gpt2", 0, 0},                     /* learned positions */
        {"t5-base", 0, 0},                  /* relative buckets */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gpufit_model *m = config_file(t[i].name);
        cr_assert_eq(get(m, GPUFIT_MODEL_ROPE_POSITIONS), t[i].rows, "%s", t[i].name);
        cr_assert_eq(get(m, GPUFIT_MODEL_ROTARY_DIM), t[i].rotary_dim, "%s", t[i].name);
        gpufit_model_free(m);
    }
}

Test(rope, rope_scaling_kinds)
{
    cr_assert_eq(rows_of(""), 0, "no max_position_embeddings: no table");
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 4096"), 4096);
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 4096, \"rope_scaling\": null"), 4096);
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 4096, "
                         "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.5}"),
                 10240);
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 4096, "
                         "\"rope_scaling\": {\"rope_type\": \"dynamic\", \"factor\": 4}"),
                 16384);
    /* yarn without original_max_position_embeddings scales the length itself; 1.5e0 */
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 4000, "
                         "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 1.5e0}"),
                 6000);
    /* a fractional length is rounded up (torch.arange of a float end) */
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 1001, "
                         "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 1.5}"),
                 1502);
    /* longrope: a short and a long table */
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 131072, \"rope_scaling\": "
                         "{\"type\": \"longrope\", \"original_max_position_embeddings\": 4096, "
                         "\"short_factor\": [1.0, 1.1], \"long_factor\": [1.0, 2.0]}"),
                 135168);
    /* transformers v5 names it rope_parameters; nested per-layer objects are skipped */
    cr_assert_eq(rows_of(", \"max_position_embeddings\": 2048, \"rope_parameters\": "
                         "{\"rope_theta\": 10000.0, \"rope_type\": \"linear\", \"factor\": 2.0, "
                         "\"full_attention\": {\"rope_type\": \"yarn\", \"factor\": 9}}"),
                 4096);
    /* partial rotation: int(64 x 0.5) */
    gpufit_model *m = NULL;
    gpufit_error err;
    cr_assert_eq(tiny(", \"max_position_embeddings\": 2048, \"partial_rotary_factor\": 0.5", &m,
                      &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(get(m, GPUFIT_MODEL_ROTARY_DIM), 32);
    gpufit_model_free(m);
}

Test(rope, bad_rope_scaling_names_the_key)
{
    static const char *const bad[] = {
        (", \"max_position_embeddings\": 4096, \"rope_scaling\": {\"type\": \"linear\", "
         "\"factor\": \"8\"}"),
        (", \"max_position_embeddings\": 4096, \"rope_scaling\": {\"type\": \"linear\", "
         "\"factor\": -2}"),
        (", \"max_position_embeddings\": 4096, \"rope_scaling\": {\"type\": \"linear\", "
         "\"factor\": 0}"),
        (", \"max_position_embeddings\": 4096, \"partial_rotary_factor\": 1.5"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpufit_model *m = NULL;
        gpufit_error err;
        cr_assert_neq(tiny(bad[i], &m, &err), GPUFIT_OK, "%s", bad[i]);
        cr_assert(strstr(err.message, "factor") != NULL, "%s: %s", bad[i], err.message);
    }
    /* more rows than the parameter holds: an error naming it, not a silent clamp */
    gpufit_model *m = NULL;
    gpufit_error err;
    cr_assert_neq(tiny(", \"max_position_embeddings\": 1048576, \"rope_scaling\": "
                       "{\"type\": \"linear\", \"factor\": 1e6}",
                       &m, &err),
                  GPUFIT_OK);
    cr_assert(strstr(err.message, "RoPE") != NULL, "%s", err.message);
}

/* Llama-3-8B: 8192 rows x 128 dims; every TP rank keeps the whole table */
Test(rope, counted_with_the_weights_of_vllm_and_sglang)
{
#define S "model=llama-3-8b task=inference gpu=h100 context_len=4096 "
    uint64_t table = 8192ull * 128;
    cr_assert_eq(WEIGHTS(S "framework=vllm") - WEIGHTS(S "framework=vllm rope_positions=0"),
                 table * 2);
    cr_assert_eq(WEIGHTS(S "framework=vllm tp=2") -
                     WEIGHTS(S "framework=vllm tp=2 rope_positions=0"),
                 table * 2);
    cr_assert_eq(WEIGHTS(S "framework=sglang") - WEIGHTS(S "framework=sglang rope_positions=0"),
                 table * 4);
    cr_assert_eq(WEIGHTS(S "framework=vllm rope_positions=1000 rotary_dim=32") -
                     WEIGHTS(S "framework=vllm rope_positions=0"),
                 1000ull * 32 * 2);
    /* Transformers and llama.cpp compute the angles per forward: no table */
    cr_assert_eq(WEIGHTS(S "framework=pytorch"), WEIGHTS(S "framework=pytorch rope_positions=0"));
    cr_assert_eq(WEIGHTS(S "framework=llamacpp"),
                 WEIGHTS(S "framework=llamacpp rope_positions=0"));
    /* DeepSeek-V3 (MLA): the table rotates qk_rope_head_dim (64) */
    cr_assert_eq(WEIGHTS("model=deepseek-v3 task=inference framework=vllm tp=8 gpu=h200") -
                     WEIGHTS("model=deepseek-v3 task=inference framework=vllm tp=8 gpu=h200 "
                             "rope_positions=0"),
                 163840ull * 64 * 2);
#undef S
}
