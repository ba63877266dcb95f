/* SPDX-License-Identifier: MIT */
/* Sliding-window attention: the KV cache each framework allocates for local layers, bytes by
 * hand from the frameworks' code (docs/memory/attention.md), and the Hugging Face reader's
 * sliding_window / sliding_window_pattern / layer_types / use_sliding_window keys. */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdio.h>
#include <string.h>

static uint64_t comp_of(const char *spec, int32_t c)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    uint64_t b = 0;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, spec, &err), GPUFIT_OK, "%s: %s", spec, err.message);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s: %s", spec, err.message);
    cr_assert_eq(gpufit_result_bytes(r, 0, c, &b), GPUFIT_OK);
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return b;
}

static uint64_t kv_of(const char *spec)
{
    return comp_of(spec, GPUFIT_MEM_KV_CACHE);
}

/* A Gemma-3-shaped text model of 12 layers: 4 KV heads of 256, so one token of one layer
 * caches K + V = 2 x 4 x 256 x 2 bytes = 4096 bytes in 16 bits. sliding_window_pattern 6:
 * layers 5 and 11 are global ((i + 1) % 6 == 0), the other 10 keep a 1,024-token window. */
#define GEMMA3 "arch=decoder n_layers=12 hidden_size=2560 n_heads=8 n_kv_heads=4 head_dim=256 " \
               "ffn_hidden_size=10240 mlp=geglu vocab_size=262208 tied_embeddings=true "     \
               "sliding_window=1024 sliding_window_pattern=6 task=inference precision=bf16 "
#define ROW 4096ull

Test(sliding_window, gemma3_transformers_keeps_the_window)
{
    /* transformers DynamicSlidingWindowLayer / HybridCache: a local layer holds at most the
     * window per sequence: 2 x 4096 x 32768 + 10 x 4096 x min(1024, 32768) */
    cr_assert_eq(kv_of(GEMMA3 "framework=pytorch batch=1 context_len=32768"),
                 2 * ROW * 32768 + 10 * ROW * 1024); /* 268435456 + 41943040 */
    /* two sequences: both terms per sequence */
    cr_assert_eq(kv_of(GEMMA3 "framework=pytorch batch=2 context_len=32768"),
                 2 * (2 * ROW * 32768 + 10 * ROW * 1024));
    /* a context inside the window: every layer keeps the whole context */
    cr_assert_eq(kv_of(GEMMA3 "framework=pytorch batch=1 context_len=512"), 12 * ROW * 512);
}

Test(sliding_window, gemma3_vllm_sliding_window_spec)
{
    /* vLLM V1 SlidingWindowSpec.max_memory_usage_bytes: min(window - 1 + max_num_batched_tokens,
     * max_model_len) tokens in 16-token blocks, + 1 block. Default max_num_batched_tokens 8192:
     * min(1023 + 8192, 32768) = 9215 -> cdiv(9215, 16) = 576 -> 577 blocks = 9232 tokens;
     * full layers: 32768 / 16 = 2048 blocks. */
    cr_assert_eq(kv_of(GEMMA3 "framework=vllm batch=1 context_len=32768"),
                 2 * ROW * 32768 + 10 * ROW * 9232); /* 646578176 */
    /* prompt_len 512 (max_num_batched_tokens): 1023 + 512 = 1535 -> 96 + 1 = 97 blocks */
    cr_assert_eq(kv_of(GEMMA3 "framework=vllm batch=1 context_len=32768 prompt_len=512"),
                 2 * ROW * 32768 + 10 * ROW * 97 * 16);
    /* the window + step exceeds the context: max_model_len 2000 -> 125 + 1 blocks, while the
     * full layers take cdiv(2000, 16) = 125 blocks */
    cr_assert_eq(kv_of(GEMMA3 "framework=vllm batch=1 context_len=2000"),
                 2 * ROW * 2000 + 10 * ROW * 126 * 16);
}

Test(sliding_window, gemma3_llamacpp_iswa_cache)
{
    /* llama_kv_cache_iswa: size_swa = GGML_PAD(min(size_base, n_swa x n_seq_max + n_ubatch),
     * 256); n_ubatch 512, flash attention (pad 256): min(32768, 1024 + 512) = 1536 cells;
     * f16 cache = the same 4096 bytes per cell per layer */
    cr_assert_eq(kv_of(GEMMA3 "framework=llamacpp batch=1 context_len=32768"),
                 2 * ROW * 32768 + 10 * ROW * 1536); /* 331350016 */
    /* four sequences: base 4 x 32768 cells; SWA 4 x 1024 + 512 = 4608 = 18 x 256 */
    cr_assert_eq(kv_of(GEMMA3 "framework=llamacpp batch=4 context_len=32768"),
                 2 * ROW * 131072 + 10 * ROW * 4608);
    /* n_ubatch 300: 1024 + 300 = 1324, padded to 1536 */
    cr_assert_eq(kv_of(GEMMA3 "framework=llamacpp batch=1 context_len=32768 prompt_len=300"),
                 2 * ROW * 32768 + 10 * ROW * 1536);
}

Test(sliding_window, gemma3_sglang_swa_pool)
{
    /* SGLang's SWA pool keeps the window (16-token rounding as its full layers here) */
    cr_assert_eq(kv_of(GEMMA3 "framework=sglang batch=1 context_len=32768"),
                 2 * ROW * 32768 + 10 * ROW * 1024);
}

Test(sliding_window, mistral_v01_every_layer_local)
{
    /* Mistral-7B-v0.1: sliding_window 4096 in every layer (pattern 0); 8 KV heads of 128:
     * 2 x 8 x 128 x 2 = 4096 bytes per token per layer, 32 layers */
    cr_assert_eq(kv_of("model=mistral-7b-v0.1 task=inference precision=bf16 framework=pytorch "
                       "batch=1 context_len=32768"),
                 32 * 4096ull * 4096);
    /* vLLM: min(4095 + 8192, 32768) = 12287 -> 768 + 1 blocks = 12304 tokens */
    cr_assert_eq(kv_of("model=mistral-7b-v0.1 task=inference precision=bf16 framework=vllm "
                       "batch=1 context_len=32768"),
                 32 * 4096ull * 12304);
    /* the same model without the window (Mistral v0.3 style): the whole context */
    cr_assert_eq(kv_of("model=mistral-7b-v0.1 sliding_window=0 task=inference precision=bf16 "
                       "framework=pytorch batch=1 context_len=32768"),
                 32 * 4096ull * 32768);
}

Test(sliding_window, layers_of_a_pipeline_stage)
{
    /* 8 layers, pattern 6 over pp = 2: stage 0 holds layers 0-3 (all local), stage 1 layers
     * 4-7 (layer 5 global). */
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, GEMMA3 "framework=pytorch batch=1 context_len=32768 pp=2",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    /* an override is a second document (a key twice in one spec is an error) */
    cr_assert_eq(gpufit_apply_spec(m, j, "n_layers=8", &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s", err.message);
    uint64_t b0 = 0, b1 = 0;
    cr_assert_eq(gpufit_result_bytes(r, 0, GPUFIT_MEM_KV_CACHE, &b0), GPUFIT_OK);
    cr_assert_eq(gpufit_result_bytes(r, 1, GPUFIT_MEM_KV_CACHE, &b1), GPUFIT_OK);
    cr_assert_eq(b0, 4 * ROW * 1024);
    cr_assert_eq(b1, ROW * 32768 + 3 * ROW * 1024);
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

Test(sliding_window, training_is_unchanged)
{
    /* flash attention with a window skips blocks of work, not of storage: the saved
     * activations (Q, K, V, output, log-sum-exp) do not depend on the window */
    const char *base = "arch=decoder n_layers=4 hidden_size=1024 n_heads=8 n_kv_heads=4 "
                       "ffn_hidden_size=4096 vocab_size=32000 task=pretrain seq_len=8192 "
                       "attention=flash";
    char spec[512];
    snprintf(spec, sizeof spec, "%s sliding_window=1024 sliding_window_pattern=2", base);
    uint64_t a = comp_of(base, GPUFIT_MEM_ACTIVATIONS), b = comp_of(spec, GPUFIT_MEM_ACTIVATIONS);
    cr_assert(a > 0);
    cr_assert_eq(a, b);
    cr_assert_eq(comp_of(spec, GPUFIT_MEM_KV_CACHE), 0);
}

Test(sliding_window, bad_inputs)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    static const struct {
        const char *spec;
        int32_t status, param;
    } cases[] = {
        {"model=t5-base sliding_window=128", GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_SLIDING_WINDOW},
        {"model=deepseek-v2-lite sliding_window=128", GPUFIT_E_UNSUPPORTED,
         GPUFIT_MODEL_SLIDING_WINDOW},
        {"model=llama-3-8b sliding_window_pattern=6", GPUFIT_E_INCONSISTENT,
         GPUFIT_MODEL_SLIDING_WINDOW_PATTERN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
        cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
        cr_assert_eq(gpufit_apply_spec(m, j, cases[i].spec, &err), GPUFIT_OK);
        cr_assert_eq(gpufit_evaluate(&r, m, j, &err), cases[i].status, "%s", cases[i].spec);
        cr_assert_eq(err.param, cases[i].param, "%s: %s", cases[i].spec, err.message);
        gpufit_job_free(j);
        gpufit_model_free(m);
    }
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_neq(gpufit_model_set_int(m, GPUFIT_MODEL_SLIDING_WINDOW, -1, &err), GPUFIT_OK);
    cr_assert_eq(err.param, GPUFIT_MODEL_SLIDING_WINDOW);
    gpufit_model_free(m);
}

/* ---- the Hugging Face reader ---------------------------------------------------------- */
static gpufit_model *from_hf(const char *json, gpufit_error *err)
{
    gpufit_model *m = NULL;
    *err = (gpufit_error)GPUFIT_ERROR_INIT;
    if (gpufit_model_from_hf_config(&m, json, strlen(json), err) != GPUFIT_OK)
        return NULL;
    return m;
}

static void expect_window(const char *json, int64_t window, int64_t pattern)
{
    gpufit_error err;
    gpufit_model *m = from_hf(json, &err);
    cr_assert(m != NULL, "%s: %s", json, err.message);
    int64_t w = -1, p = -1;
    cr_assert_eq(gpufit_model_get_int(m, GPUFIT_MODEL_SLIDING_WINDOW, &w, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_model_get_int(m, GPUFIT_MODEL_SLIDING_WINDOW_PATTERN, &p, NULL),
                 GPUFIT_OK);
    cr_assert_eq(w, window, "%s: sliding_window %lld", json, (long long)w);
    cr_assert_eq(p, pattern, "%s: sliding_window_pattern %lld", json, (long long)p);
    gpufit_model_free(m);
}

#define LLAMA_DIMS(type, L)                                                                        \
    "{\"model_type\": \"" type "\", \"hidden_size\": 1024, \"num_hidden_layers\": " #L           \
    ", \"num_attention_heads\": 8, \"num_key_value_heads\": 4, \"intermediate_size\": 4096, "     \
    "\"vocab_size\": 32000"

Test(hf_sliding_window, family_rules)
{
    /* Gemma 2: no pattern key, layers alternate (configuration_gemma2.py layer_types) */
    expect_window(LLAMA_DIMS("gemma2", 6) ", \"sliding_window\": 4096}", 4096, 2);
    /* Gemma 3 (multimodal wrapper): every 6th layer global by default */
    expect_window("{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": "
                  "\"gemma3_text\", \"hidden_size\": 2560, \"num_hidden_layers\": 34, "
                  "\"intermediate_size\": 10240, \"sliding_window\": 1024}}",
                  1024, 6);
    expect_window(LLAMA_DIMS("gemma3_text", 12) ", \"sliding_window\": 512, "
                                                "\"sliding_window_pattern\": 4}",
                  512, 4);
    /* Mistral v0.1: every layer local; v0.2+: null window */
    expect_window(LLAMA_DIMS("mistral", 4) ", \"sliding_window\": 4096}", 4096, 0);
    expect_window(LLAMA_DIMS("mistral", 4) ", \"sliding_window\": null}", 0, 0);
    /* Qwen2: the window only under use_sliding_window (configuration_qwen2.py) */
    expect_window(LLAMA_DIMS("qwen2", 4) ", \"sliding_window\": 131072, "
                                         "\"use_sliding_window\": false, "
                                         "\"max_window_layers\": 28}",
                  0, 0);
    expect_window(LLAMA_DIMS("qwen2", 4) ", \"sliding_window\": 4096, "
                                         "\"use_sliding_window\": true, "
                                         "\"max_window_layers\": 0}",
                  4096, 0);
    expect_window(LLAMA_DIMS("qwen2", 4) ", \"sliding_window\": 4096, "
                                         "\"use_sliding_window\": true, "
                                         "\"max_window_layers\": 4}",
                  0, 0); /* no layer index reaches max_window_layers */
}

Test(hf_sliding_window, layer_types)
{
    /* GPT-OSS style alternation, written out (transformers >= 4.53 saves layer_types) */
    expect_window(LLAMA_DIMS("llama", 4) ", \"sliding_window\": 128, \"layer_types\": "
                                         "[\"sliding_attention\", \"full_attention\", "
                                         "\"sliding_attention\", \"full_attention\"]}",
                  128, 2);
    /* Gemma 3: 5 local, 1 global, repeated; a trailing partial period */
    expect_window(LLAMA_DIMS("gemma3_text", 8) ", \"sliding_window\": 1024, \"layer_types\": "
                                               "[\"sliding_attention\", \"sliding_attention\", "
                                               "\"sliding_attention\", \"sliding_attention\", "
                                               "\"sliding_attention\", \"full_attention\", "
                                               "\"sliding_attention\", \"sliding_attention\"]}",
                  1024, 6);
    /* all global: the window is unused */
    expect_window(LLAMA_DIMS("qwen2", 2) ", \"sliding_window\": 4096, \"use_sliding_window\": "
                                         "true, \"layer_types\": [\"full_attention\", "
                                         "\"full_attention\"]}",
                  0, 0);
    /* all local */
    expect_window(LLAMA_DIMS("llama", 2) ", \"sliding_window\": 64, \"layer_types\": "
                                         "[\"sliding_attention\", \"sliding_attention\"]}",
                  64, 0);
}

Test(hf_sliding_window, refused_layer_mixes)
{
    static const char *const bad[] = {
        /* irregular: global, local, local, global */
        LLAMA_DIMS("llama", 4) ", \"sliding_window\": 128, \"layer_types\": [\"full_attention\", "
                               "\"sliding_attention\", \"sliding_attention\", "
                               "\"full_attention\"]}",
        /* another attention type */
        LLAMA_DIMS("llama", 2) ", \"sliding_window\": 128, \"layer_types\": "
                               "[\"sliding_attention\", \"linear_attention\"]}",
        /* Qwen2: the first 2 of 4 layers global, the rest local */
        LLAMA_DIMS("qwen2", 4) ", \"sliding_window\": 4096, \"use_sliding_window\": true, "
                               "\"max_window_layers\": 2}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpufit_error err;
        gpufit_model *m = from_hf(bad[i], &err);
        cr_assert(m == NULL, "%s was accepted", bad[i]);
        cr_assert_eq(err.status, GPUFIT_E_UNSUPPORTED, "%s: %s", bad[i], err.message);
        cr_assert(strstr(err.message, "layer") != NULL, "%s", err.message);
    }
    /* a window that is not a count */
    gpufit_error err;
    cr_assert(from_hf(LLAMA_DIMS("mistral", 2) ", \"sliding_window\": \"big\"}", &err) == NULL);
    cr_assert_eq(err.status, GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(err.message, "sliding_window") != NULL, "%s", err.message);
}

/* ---- cross-attention layers (Mllama / Llama 3.2 Vision) -------------------------------- */
/* The text model of Llama-3.2-11B-Vision (config.json text_config): 40 layers, of which the 8
 * at cross_attention_layers [3, 8, ..., 38] cross-attend; h 4096, 32 heads, 8 KV heads, f
 * 14336, vocab 128256. */
#define MLLAMA_TEXT                                                                                \
    "{\"model_type\": \"mllama\", \"text_config\": {\"model_type\": \"mllama_text_model\", "     \
    "\"hidden_size\": 4096, \"num_hidden_layers\": 40, \"num_attention_heads\": 32, "              \
    "\"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 128256, "           \
    "\"hidden_act\": \"silu\", \"tie_word_embeddings\": false, \"cross_attention_layers\": "       \
    "[3, 8, 13, 18, 23, 28, 33, 38]}, \"vision_config\": {\"image_size\": 560, "                 \
    "\"patch_size\": 14, \"max_num_tiles\": 4}}"

Test(cross_attention, mllama_text_parameters)
{
    gpufit_error err;
    gpufit_model *m = from_hf(MLLAMA_TEXT, &err);
    cr_assert(m != NULL, "%s", err.message);
    int64_t n = 0;
    cr_assert_eq(gpufit_model_get_int(m, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 8);
    /* transformers MllamaForCausalLM, module by module:
     *   self-attention layer: q 4096^2 + k, v 1024 x 4096 each + o 4096^2 = 41943040
     *                         MLP 3 x 14336 x 4096 = 176160768; 2 RMSNorms 8192
     *                         = 218112000 (as a Llama-3.1-8B layer)
     *   cross-attention layer (MllamaCrossAttentionDecoderLayer): the same q, k, v, o, MLP and
     *                         norms + q_norm, k_norm (128 each) + attn and mlp gates (1 each)
     *                         = 218112258
     *   embed_tokens (128256 + 8) x 4096 = 525369344, lm_head 128256 x 4096 = 525336576,
     *   final norm 4096
     *   total 32 x 218112000 + 8 x 218112258 + 525369344 + 525336576 + 4096 = 9775192080.
     * gpufit keeps one vocabulary (128256) for both: 8 x 4096 = 32768 fewer (0.0003 %). The
     * whole model is published as 10,670,220,835 (Meta's model card "11B (10.6)"): the text
     * decoder plus the vision encoder and projector that the reader also reads from
     * vision_config, 895,028,755 by hand (test_multimodal.c gemma3_and_mllama_towers). */
    uint64_t total = 0, active = 0;
    cr_assert_eq(gpufit_model_param_count(m, &total, &active, NULL), GPUFIT_OK);
    cr_assert_eq(total, 9775192080ull - 8 * 4096 + 895028755ull, "%llu",
                 (unsigned long long)total);
    cr_assert_eq(9775192080ull + 895028755ull, 10670220835ull); /* the published total */
    gpufit_model_free(m);
}

#define MLLAMA_SPEC                                                                                \
    "arch=decoder n_layers=40 hidden_size=4096 n_heads=32 n_kv_heads=8 ffn_hidden_size=14336 "   \
    "vocab_size=128256 n_cross_attn_layers=8 task=inference precision=bf16 "

Test(cross_attention, kv_over_the_image_tokens)
{
    /* one token of one layer: K + V = 2 x 8 x 128 x 2 = 4096 bytes. The 32 self-attention
     * layers cache the text context, the 8 cross layers one 560-pixel image in 4 tiles of
     * (560/14)^2 + 1 = 1601 patches = 6404 tokens per sequence. */
    cr_assert_eq(kv_of(MLLAMA_SPEC "cross_attn_tokens=6404 framework=pytorch batch=2 "
                                   "context_len=4096"),
                 2 * (32 * 4096ull * 4096 + 8 * 4096ull * 6404));
    /* vLLM: encoder tokens in 16-token blocks: 6404 -> 401 blocks = 6416 */
    cr_assert_eq(kv_of(MLLAMA_SPEC "cross_attn_tokens=6404 framework=vllm batch=1 "
                                   "context_len=4096"),
                 32 * 4096ull * 4096 + 8 * 4096ull * 6416);
    /* text-only requests: the cross layers are skipped and cache nothing */
    cr_assert_eq(kv_of(MLLAMA_SPEC "framework=pytorch batch=1 context_len=4096"),
                 32 * 4096ull * 4096);
}

Test(cross_attention, bad_inputs)
{
    static const struct {
        const char *spec;
        int32_t status;
    } cases[] = {
        {MLLAMA_SPEC "n_cross_attn_layers=41", GPUFIT_E_INCONSISTENT},
        {MLLAMA_SPEC "n_cross_attn_layers=0 cross_attn_tokens=6404", GPUFIT_E_INCONSISTENT},
        {MLLAMA_SPEC "sliding_window=4096", GPUFIT_E_UNSUPPORTED},
        {"model=mixtral-8x7b n_cross_attn_layers=4", GPUFIT_E_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpufit_model *m = NULL;
        gpufit_job *j = NULL;
        gpufit_result *r = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
        cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
        /* the base spec, then the case's keys as an override (a second document) */
        const char *spec = cases[i].spec;
        size_t base = strlen(MLLAMA_SPEC);
        if (strncmp(spec, MLLAMA_SPEC, base) == 0) {
            cr_assert_eq(gpufit_apply_spec(m, j, MLLAMA_SPEC, &err), GPUFIT_OK, "%s", err.message);
            spec += base;
        }
        cr_assert_eq(gpufit_apply_spec(m, j, spec, &err), GPUFIT_OK, "%s", err.message);
        cr_assert_eq(gpufit_evaluate(&r, m, j, &err), cases[i].status, "%s: %s", cases[i].spec,
                     err.message);
        cr_assert_eq(err.param, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS, "%s", err.message);
        gpufit_job_free(j);
        gpufit_model_free(m);
    }
    gpufit_error err;
    cr_assert(from_hf("{\"model_type\": \"mllama_text_model\", \"hidden_size\": 64, "
                      "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                      "\"intermediate_size\": 128, \"vocab_size\": 100, "
                      "\"cross_attention_layers\": 1}",
                      &err) == NULL);
    cr_assert(strstr(err.message, "cross_attention_layers") != NULL, "%s", err.message);
}

Test(cross_attention, pipeline_stages_split_them_evenly)
{
    /* 40 layers over pp = 2: layers 0-19 hold 20 x 8 / 40 = 4 cross layers, 20-39 the other 4 */
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j,
                                   MLLAMA_SPEC "cross_attn_tokens=6404 framework=pytorch "
                                               "batch=1 context_len=4096 pp=2",
                                   &err),
                 GPUFIT_OK);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s", err.message);
    for (uint32_t role = 0; role < 2; role++) {
        uint64_t b = 0;
        cr_assert_eq(gpufit_result_bytes(r, role, GPUFIT_MEM_KV_CACHE, &b), GPUFIT_OK);
        cr_assert_eq(b, 16 * 4096ull * 4096 + 4 * 4096ull * 6404);
    }
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
}
