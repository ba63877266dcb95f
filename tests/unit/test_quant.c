/* SPDX-License-Identifier: MIT */
/* Per-module storage of quantised checkpoints (docs/memory/quantisation.md): bytes by hand,
 * the quantization_config reader for each quant_method, and an AWQ directory not sized as
 * 16-bit (nor offered "AWQ" as a mitigation). */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdio.h>
#include <string.h>

/* A small Llama-shaped model: h 1024, 2 layers, 8 heads of 128 (MHA), SwiGLU 4096, vocab 32000,
 * untied. Per layer: q, k, v, o 4 x 1024 x 1024 = 4,194,304; gate, up, down 3 x 4096 x 1024 =
 * 12,582,912. Two layers: attention 8,388,608, MLP 25,165,824, linear 33,554,432 elements.
 * Embedding = output = 32000 x 1024 = 32,768,000. Norms: 2 x 1024 per layer + 1024 final =
 * 5,120 elements. */
#define SMALL                                                                                      \
    "hidden_size=1024 n_layers=2 n_heads=8 n_kv_heads=8 ffn_hidden_size=4096 vocab_size=32000 "    \
    "tied_embeddings=0 mlp=swiglu norm=rmsnorm "
#define ATTN_EL 8388608ull
#define MLP_EL 25165824ull
#define EMB_EL 32768000ull
#define NORM_EL 5120ull

static uint64_t weights_of(const char *spec, gpufit_result **keep)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, spec, &err), GPUFIT_OK, "%s: %s", spec, err.message);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s: %s", spec, err.message);
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(r, 0, GPUFIT_MEM_WEIGHTS, &b), GPUFIT_OK);
    if (keep != NULL)
        *keep = r;
    else
        gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return b;
}

/* AWQ 4-bit g128 (AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM: qweight int32
 * [in, out/8], qzeros int32 [in/128, out/8], scales fp16 [in/128, out]): per 256 weights
 * 128 B of nibbles + 2 groups x (fp16 scale 2 B + 4-bit zero 0.5 B) = 133 B.
 * Linear 33,554,432 / 256 x 133 = 17,432,576; embed_tokens and lm_head fp16:
 * 2 x 32,768,000 x 2 = 131,072,000; norms in the 16-bit compute dtype 5,120 x 2 = 10,240. */
Test(quant, awq_keeps_embedding_and_head_fp16)
{
    uint64_t want = (ATTN_EL + MLP_EL) / 256 * 133 + 2 * EMB_EL * 2 + NORM_EL * 2;
    cr_assert_eq(want, 148514816ull);
    cr_assert_eq(weights_of(SMALL "task=inference embedding_dtype=fp16 output_dtype=fp16 "
                                  "attention_dtype=awq4 mlp_dtype=awq4",
                            NULL),
                 want);
    /* the job's weight_dtype=awq4 on a 16-bit checkpoint: the same modules (linear only) */
    cr_assert_eq(weights_of(SMALL "task=inference weight_dtype=awq4", NULL), want);
    /* tp=2 splits every 2-D tensor (closed form and walk agree): half of each, norms replicated */
    cr_assert_eq(weights_of(SMALL "task=inference tp=2 embedding_dtype=fp16 output_dtype=fp16 "
                                  "mlp_dtype=awq4",
                            NULL),
                 (ATTN_EL + MLP_EL) / 2 / 256 * 133 + EMB_EL * 2 + NORM_EL * 2);
}

/* FP8 release with attention kept in bf16 (FBGEMM fp8 modules_to_not_convert, e.g.
 * Llama-3.1-405B-FP8): attention 8,388,608 x 2 = 16,777,216; MLP 25,165,824 x 1; embedding
 * and head bf16 131,072,000; norms 10,240. Attention != MLP dtype: the tensor walk. */
Test(quant, fp8_with_attention_bf16)
{
    uint64_t want = ATTN_EL * 2 + MLP_EL + 2 * EMB_EL * 2 + NORM_EL * 2;
    cr_assert_eq(want, 173025280ull);
    cr_assert_eq(weights_of(SMALL "task=inference embedding_dtype=bf16 output_dtype=bf16 "
                                  "attention_dtype=bf16 mlp_dtype=fp8",
                            NULL),
                 want);
}

/* QLoRA of a bf16 checkpoint, bitsandbytes NF4 with double quantisation: per 16,384 weights
 * 8,192 B of nibbles + 256 8-bit absmax (one per 64) + one fp32 per 256 absmax = 8,452 B.
 * Linear 33,554,432 / 16,384 x 8,452 = 17,309,696. lm_head is kept
 * (get_keys_to_not_convert) and nn.Embedding is never replaced: both stay in the dense dtype
 * the job's own mechanism gives them — the same bytes as a checkpoint whose per-module dtypes
 * the reader filled from bnb_4bit_use_double_quant with embedding/head left to the job. */
Test(quant, qlora_nf4_dq_keeps_head)
{
    uint64_t lin = (ATTN_EL + MLP_EL) / 16384 * 8452;
    cr_assert_eq(lin, 17309696ull);
    /* LoRA r=16 on q and v, fp32 (PEFT): 2 layers x 2 x 16 x (1024 + 1024) x 4 = 524,288 */
    uint64_t lora = 2ull * 2 * 16 * 2048 * 4;
    uint64_t job = weights_of(SMALL "task=qlora lora_rank=16 lora_targets=qv weight_dtype=nf4_dq",
                              NULL);
    uint64_t mdl = weights_of(SMALL "task=qlora lora_rank=16 lora_targets=qv "
                                    "attention_dtype=nf4_dq mlp_dtype=nf4_dq",
                              NULL);
    cr_assert_eq(job, mdl);
    /* embedding + head + norms in PEFT's fp32 cast (prepare_model_for_kbit_training):
     * (65,536,000 + 5,120) x 4 = 262,164,480 */
    cr_assert_eq(job, lin + lora + (2 * EMB_EL + NORM_EL) * 4);
    /* a checkpoint that stores embedding and head in bf16: PEFT recasts them to fp32 too */
    uint64_t bf = weights_of(SMALL "task=qlora lora_rank=16 lora_targets=qv attention_dtype=nf4_dq "
                                   "mlp_dtype=nf4_dq embedding_dtype=bf16 output_dtype=bf16",
                             NULL);
    cr_assert_eq(bf, job);
}

/* An explicit model dtype wins over the job's weight_dtype for that module; auto modules
 * follow the job. */
Test(quant, precedence)
{
    uint64_t a = weights_of(SMALL "task=inference weight_dtype=fp8 attention_dtype=bf16", NULL);
    cr_assert_eq(a, ATTN_EL * 2 + MLP_EL + 2 * EMB_EL * 2 + NORM_EL * 2);
}

/* ---------------------------------------------------------------------------------------
 * quantization_config reader
 * ------------------------------------------------------------------------------------- */
#define CFG_HEAD                                                                                   \
    "{\"model_type\":\"llama\",\"hidden_size\":1024,\"intermediate_size\":4096,"                   \
    "\"num_attention_heads\":8,\"num_key_value_heads\":8,\"num_hidden_layers\":2,"                  \
    "\"vocab_size\":32000,\"tie_word_embeddings\":false,\"hidden_act\":\"silu\","

static void dtypes_of(const char *json, int64_t want[5])
{
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&m, json, strlen(json), &err), GPUFIT_OK, "%s: %s",
                 json, err.message);
    static const int32_t ids[5] = {GPUFIT_MODEL_EMBEDDING_DTYPE, GPUFIT_MODEL_ATTENTION_DTYPE,
                                   GPUFIT_MODEL_MLP_DTYPE, GPUFIT_MODEL_OUTPUT_DTYPE,
                                   GPUFIT_MODEL_EXPERT_DTYPE};
    for (int i = 0; i < 5; i++) {
        int64_t v = 0;
        cr_assert_eq(gpufit_model_get_int(m, ids[i], &v, NULL), GPUFIT_OK);
        cr_assert_eq(v, want[i], "%s: module %d = %lld, want %lld", json, i, (long long)v,
                     (long long)want[i]);
    }
    gpufit_model_free(m);
}

static void reader_error(const char *json, int32_t status, const char *needle)
{
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&m, json, strlen(json), &err), status, "%s: %s",
                 json, err.message);
    cr_assert_null(m);
    cr_assert(strstr(err.message, needle) != NULL, "%s lacks %s", err.message, needle);
}

Test(quant_reader, each_method)
{
    enum { F16 = GPUFIT_DTYPE_FP16, B16 = GPUFIT_DTYPE_BF16 };
    /* no quantization_config: every module auto */
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"bfloat16\"}", (int64_t[5]){-1, -1, -1, -1, -1});
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"float16\",\"quantization_config\":{\"bits\":4,"
                       "\"group_size\":128,\"quant_method\":\"awq\",\"version\":\"gemm\","
                       "\"zero_point\":true,\"modules_to_not_convert\":null}}",
              (int64_t[5]){F16, GPUFIT_DTYPE_AWQ4, GPUFIT_DTYPE_AWQ4, F16, -1});
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"float16\",\"quantization_config\":{\"bits\":4,"
                       "\"group_size\":128,\"desc_act\":true,\"sym\":true,"
                       "\"quant_method\":\"gptq\"}}",
              (int64_t[5]){F16, GPUFIT_DTYPE_GPTQ4, GPUFIT_DTYPE_GPTQ4, F16, -1});
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"bfloat16\",\"quantization_config\":{"
                       "\"quant_method\":\"bitsandbytes\",\"load_in_4bit\":true,"
                       "\"bnb_4bit_quant_type\":\"nf4\",\"bnb_4bit_use_double_quant\":true,"
                       "\"llm_int8_skip_modules\":null}}",
              (int64_t[5]){B16, GPUFIT_DTYPE_NF4_DQ, GPUFIT_DTYPE_NF4_DQ, B16, -1});
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"bfloat16\",\"quantization_config\":{"
                       "\"quant_method\":\"bitsandbytes\",\"load_in_4bit\":true,"
                       "\"bnb_4bit_quant_type\":\"fp4\"}}",
              (int64_t[5]){B16, GPUFIT_DTYPE_FP4, GPUFIT_DTYPE_FP4, B16, -1});
    /* LLM.int8 with the MLP skipped by name */
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"float16\",\"quantization_config\":{"
                       "\"quant_method\":\"bitsandbytes\",\"load_in_8bit\":true,"
                       "\"llm_int8_skip_modules\":[\"mlp\"]}}",
              (int64_t[5]){F16, GPUFIT_DTYPE_INT8, F16, F16, -1});
    /* FBGEMM fp8, attention and lm_head not converted (Llama-3.1-405B-FP8 style) */
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"bfloat16\",\"quantization_config\":{"
                       "\"quant_method\":\"fbgemm_fp8\",\"activation_scale_ub\":1200.0,"
                       "\"modules_to_not_convert\":[\"model.layers.0.self_attn.q_proj\","
                       "\"model.layers.0.self_attn.k_proj\",\"lm_head\"]}}",
              (int64_t[5]){B16, B16, GPUFIT_DTYPE_FP8, B16, -1});
    /* fp8 (DeepSeek-V3 style block scales): lm_head kept by get_keys_to_not_convert */
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"bfloat16\",\"quantization_config\":{"
                       "\"quant_method\":\"fp8\",\"fmt\":\"e4m3\",\"weight_block_size\":[128,128]}}",
              (int64_t[5]){B16, GPUFIT_DTYPE_FP8, GPUFIT_DTYPE_FP8, B16, -1});
    /* compressed-tensors: fp8 weights, ignore lm_head; int4 g128 (W4A16) */
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"bfloat16\",\"quantization_config\":{"
                       "\"quant_method\":\"compressed-tensors\",\"config_groups\":{\"group_0\":{"
                       "\"input_activations\":{\"num_bits\":4,\"type\":\"int\"},"
                       "\"targets\":[\"Linear\"],\"weights\":{\"num_bits\":8,\"type\":\"float\","
                       "\"strategy\":\"channel\"}}},\"ignore\":[\"lm_head\"]}}",
              (int64_t[5]){B16, GPUFIT_DTYPE_FP8, GPUFIT_DTYPE_FP8, B16, -1});
    dtypes_of(CFG_HEAD "\"torch_dtype\":\"float16\",\"quantization_config\":{"
                       "\"quant_method\":\"compressed-tensors\",\"config_groups\":{\"group_0\":{"
                       "\"weights\":{\"num_bits\":4,\"type\":\"int\",\"group_size\":128,"
                       "\"symmetric\":true},\"targets\":[\"Linear\"]}},\"ignore\":[\"lm_head\"]}}",
              (int64_t[5]){F16, GPUFIT_DTYPE_INT4, GPUFIT_DTYPE_INT4, F16, -1});
}

Test(quant_reader, unsupported_named)
{
    reader_error(CFG_HEAD "\"quantization_config\":{\"bits\":8,\"quant_method\":\"gptq\"}}",
                 GPUFIT_E_UNSUPPORTED, "bits");
    reader_error(CFG_HEAD "\"quantization_config\":{\"bits\":4,\"group_size\":64,"
                          "\"quant_method\":\"awq\"}}",
                 GPUFIT_E_UNSUPPORTED, "group_size");
    reader_error(CFG_HEAD "\"quantization_config\":{\"quant_method\":\"hqq\"}}",
                 GPUFIT_E_UNSUPPORTED, "hqq");
    reader_error(CFG_HEAD "\"quantization_config\":{\"quant_method\":\"bitsandbytes\"}}",
                 GPUFIT_E_UNSUPPORTED, "load_in_4bit");
}

/* A pre-quantised AWQ Llama-3-8B-shaped config on a 12 GiB card: 16-bit weights alone would
 * be 16 GB; as AWQ it is 5.33 GiB and fits, and no mitigation proposes AWQ again. */
Test(quant_reader, awq_directory_not_sized_16bit)
{
    const char *json =
        "{\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":14336,"
        "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"num_hidden_layers\":32,"
        "\"vocab_size\":128256,\"tie_word_embeddings\":false,\"hidden_act\":\"silu\","
        "\"torch_dtype\":\"float16\",\"quantization_config\":{\"bits\":4,\"group_size\":128,"
        "\"quant_method\":\"awq\",\"version\":\"gemm\",\"zero_point\":true}}";
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&m, json, strlen(json), &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "task=inference context_len=4096 gpu_memory_gib=12",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s", err.message);
    uint64_t w = 0;
    cr_assert_eq(gpufit_result_bytes(r, 0, GPUFIT_MEM_WEIGHTS, &w), GPUFIT_OK);
    /* per layer linear: 2 x 4096^2 + 2 x 1024 x 4096 + 3 x 14336 x 4096 = 218,103,808;
     * x 32 / 256 x 133 = 3,625,975,808; embed + head fp16 2 x 128256 x 4096 x 2 =
     * 2,101,346,304; norms (2 x 32 + 1) x 4096 x 2 = 532,480 */
    cr_assert_eq(w, 3625975808ull + 2101346304ull + 532480ull);
    gpufit_summary sm = {.struct_size = sizeof sm};
    cr_assert_eq(gpufit_result_summary(r, &sm), GPUFIT_OK);
    for (uint32_t i = 0; i < sm.n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        cr_assert_eq(gpufit_result_mitigation(r, i, &mi), GPUFIT_OK);
        cr_assert(strstr(mi.text, "AWQ") == NULL, "mitigation %s", mi.text);
    }
    gpufit_result_free(r);
    /* the same job on a card it does not fit either way: still no AWQ mitigation */
    cr_assert_eq(gpufit_apply_spec(NULL, j, "gpu_memory_gib=6", &err), GPUFIT_OK);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s", err.message);
    cr_assert_eq(gpufit_result_summary(r, &sm), GPUFIT_OK);
    cr_assert(sm.fits == 0);
    for (uint32_t i = 0; i < sm.n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        cr_assert_eq(gpufit_result_mitigation(r, i, &mi), GPUFIT_OK);
        cr_assert(strstr(mi.text, "AWQ") == NULL, "mitigation %s", mi.text);
    }
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* The safetensors cross-check of a packed checkpoint compares bytes: AWQ qweight packs 8
 * weights per int32, so the element count is far below the parameters. The small model as
 * AWQ: 17,432,576 + 131,072,000 + norms 5,120 x 2 = 148,514,816 bytes. */
Test(quant_reader, safetensors_bytes_of_packed_checkpoint)
{
    const char *json = CFG_HEAD "\"torch_dtype\":\"float16\",\"quantization_config\":{"
                                "\"bits\":4,\"group_size\":128,\"quant_method\":\"awq\"}}";
    gpufit_model *m = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_hf_config(&m, json, strlen(json), &err), GPUFIT_OK);
    gpufit_safetensors_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    /* int32 words: 33,554,432 / 8 qweight + zeros and scales, + 16-bit embed/head/norms */
    info.n_params = 33554432ull / 8 + 2 * 32768000ull + 5120;
    info.total_bytes = 148514816ull;
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_OK, "%s", err.message);
    info.total_bytes = 2 * 148514816ull; /* a 16-bit-sized file is not this checkpoint */
    cr_assert_eq(gpufit_model_check_safetensors(m, &info, &err), GPUFIT_E_INCONSISTENT);
    cr_assert(strstr(err.message, "bytes") != NULL, "%s", err.message);
    gpufit_model_free(m);
}

/* An LLM.int8 checkpoint is not offered "int8" or "4-bit (AWQ)" weights: a job key cannot
 * re-quantise what the checkpoint stores. */
Test(quant, no_requantise_mitigation)
{
    gpufit_result *r = NULL;
    weights_of(SMALL "task=inference context_len=32768 batch=64 gpu_memory_gib=1 "
                     "attention_dtype=int8 mlp_dtype=int8",
               &r);
    gpufit_summary sm = {.struct_size = sizeof sm};
    cr_assert_eq(gpufit_result_summary(r, &sm), GPUFIT_OK);
    cr_assert(sm.n_mitigations > 0);
    for (uint32_t i = 0; i < sm.n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        cr_assert_eq(gpufit_result_mitigation(r, i, &mi), GPUFIT_OK);
        cr_assert(strstr(mi.changes, "weight_dtype") == NULL, "mitigation %s", mi.changes);
    }
    gpufit_result_free(r);
}
