/* SPDX-License-Identifier: MIT */
/* Element types: bytes per block and elements per block, so that quantised formats stay
 * exact in integers. Block layouts: memory-model.md §2.1 and §7 (ggml/src/ggml-common.h
 * static_asserts; bitsandbytes; AutoGPTQ/AWQ buffers). */
#include "internal.h"

/* Indexed by gpufit_dtype. Mixed GGUF file types carry the block of their base type; the
 * per-tensor recipe lives in mem_weights.c. */
const gpufit__dtype_info gpufit__dtypes[GPUFIT__DTYPE_COUNT] = {
    [GPUFIT_DTYPE_NONE] = {"none", 0, 1},
    [GPUFIT_DTYPE_FP32] = {"fp32", 4, 1},
    [GPUFIT_DTYPE_TF32] = {"tf32", 4, 1},
    [GPUFIT_DTYPE_FP16] = {"fp16", 2, 1},
    [GPUFIT_DTYPE_BF16] = {"bf16", 2, 1},
    [GPUFIT_DTYPE_FP8] = {"fp8", 1, 1},
    [GPUFIT_DTYPE_INT8] = {"int8", 1, 1},         /* + per-row fp32 scale, added per tensor */
    [GPUFIT_DTYPE_INT4] = {"int4", 66, 128},      /* 4 bits + fp16 scale per group of 128 */
    [GPUFIT_DTYPE_NF4] = {"nf4", 36, 64},         /* 4 bits + fp32 absmax per 64: 4.5 bpw */
    [GPUFIT_DTYPE_NF4_DQ] = {"nf4_dq", 8452, 16384}, /* + 8-bit absmax/64, fp32/256 blocks: 4.127 */
    [GPUFIT_DTYPE_FP4] = {"fp4", 36, 64},
    [GPUFIT_DTYPE_GPTQ4] = {"gptq4", 133, 256},   /* 4 + 16/128 + 4/128 bpw; + g_idx per tensor */
    [GPUFIT_DTYPE_AWQ4] = {"awq4", 133, 256},     /* 4 + 16/128 + 4/128 = 4.15625 bpw */
    [GPUFIT_DTYPE_MXFP4] = {"mxfp4", 17, 32},     /* E8M0 scale per 32: 4.25 bpw */
    [GPUFIT_DTYPE_NVFP4] = {"nvfp4", 9, 16},      /* FP8 scale per 16: 4.5 bpw */
    [GPUFIT_DTYPE_Q4_0] = {"q4_0", 18, 32},
    [GPUFIT_DTYPE_Q4_1] = {"q4_1", 20, 32},
    [GPUFIT_DTYPE_Q5_0] = {"q5_0", 22, 32},
    [GPUFIT_DTYPE_Q5_1] = {"q5_1", 24, 32},
    [GPUFIT_DTYPE_Q8_0] = {"q8_0", 34, 32},
    [GPUFIT_DTYPE_Q2_K] = {"q2_k", 84, 256},
    [GPUFIT_DTYPE_Q3_K] = {"q3_k", 110, 256},
    [GPUFIT_DTYPE_Q4_K] = {"q4_k", 144, 256},
    [GPUFIT_DTYPE_Q5_K] = {"q5_k", 176, 256},
    [GPUFIT_DTYPE_Q6_K] = {"q6_k", 210, 256},
    [GPUFIT_DTYPE_Q3_K_S] = {"q3_k_s", 110, 256},
    [GPUFIT_DTYPE_Q3_K_M] = {"q3_k_m", 110, 256},
    [GPUFIT_DTYPE_Q3_K_L] = {"q3_k_l", 110, 256},
    [GPUFIT_DTYPE_Q4_K_S] = {"q4_k_s", 144, 256},
    [GPUFIT_DTYPE_Q4_K_M] = {"q4_k_m", 144, 256},
    [GPUFIT_DTYPE_Q5_K_S] = {"q5_k_s", 176, 256},
    [GPUFIT_DTYPE_Q5_K_M] = {"q5_k_m", 176, 256},
    [GPUFIT_DTYPE_IQ1_S] = {"iq1_s", 50, 256},
    [GPUFIT_DTYPE_IQ1_M] = {"iq1_m", 56, 256},
    [GPUFIT_DTYPE_IQ2_XXS] = {"iq2_xxs", 66, 256},
    [GPUFIT_DTYPE_IQ2_XS] = {"iq2_xs", 74, 256},
    [GPUFIT_DTYPE_IQ2_S] = {"iq2_s", 82, 256},
    [GPUFIT_DTYPE_IQ3_XXS] = {"iq3_xxs", 98, 256},
    [GPUFIT_DTYPE_IQ3_S] = {"iq3_s", 110, 256},
    [GPUFIT_DTYPE_IQ4_NL] = {"iq4_nl", 18, 32},
    [GPUFIT_DTYPE_IQ4_XS] = {"iq4_xs", 136, 256},
    [GPUFIT_DTYPE_TQ1_0] = {"tq1_0", 54, 256},
    [GPUFIT_DTYPE_TQ2_0] = {"tq2_0", 66, 256},
    [GPUFIT_DTYPE_F16_GGUF] = {"f16", 2, 1},
};

/* Value names of the dtype parameters: canonical names first, then aliases. */
const gpufit__enum_value gpufit__dtype_names[] = {
    {"auto", -1},
    {"none", GPUFIT_DTYPE_NONE},
    {"fp32", GPUFIT_DTYPE_FP32},
    {"tf32", GPUFIT_DTYPE_TF32},
    {"fp16", GPUFIT_DTYPE_FP16},
    {"bf16", GPUFIT_DTYPE_BF16},
    {"fp8", GPUFIT_DTYPE_FP8},
    {"int8", GPUFIT_DTYPE_INT8},
    {"int4", GPUFIT_DTYPE_INT4},
    {"nf4", GPUFIT_DTYPE_NF4},
    {"nf4_dq", GPUFIT_DTYPE_NF4_DQ},
    {"fp4", GPUFIT_DTYPE_FP4},
    {"gptq4", GPUFIT_DTYPE_GPTQ4},
    {"awq4", GPUFIT_DTYPE_AWQ4},
    {"mxfp4", GPUFIT_DTYPE_MXFP4},
    {"nvfp4", GPUFIT_DTYPE_NVFP4},
    {"q4_0", GPUFIT_DTYPE_Q4_0},
    {"q4_1", GPUFIT_DTYPE_Q4_1},
    {"q5_0", GPUFIT_DTYPE_Q5_0},
    {"q5_1", GPUFIT_DTYPE_Q5_1},
    {"q8_0", GPUFIT_DTYPE_Q8_0},
    {"q2_k", GPUFIT_DTYPE_Q2_K},
    {"q3_k", GPUFIT_DTYPE_Q3_K},
    {"q4_k", GPUFIT_DTYPE_Q4_K},
    {"q5_k", GPUFIT_DTYPE_Q5_K},
    {"q6_k", GPUFIT_DTYPE_Q6_K},
    {"q3_k_s", GPUFIT_DTYPE_Q3_K_S},
    {"q3_k_m", GPUFIT_DTYPE_Q3_K_M},
    {"q3_k_l", GPUFIT_DTYPE_Q3_K_L},
    {"q4_k_s", GPUFIT_DTYPE_Q4_K_S},
    {"q4_k_m", GPUFIT_DTYPE_Q4_K_M},
    {"q5_k_s", GPUFIT_DTYPE_Q5_K_S},
    {"q5_k_m", GPUFIT_DTYPE_Q5_K_M},
    {"iq1_s", GPUFIT_DTYPE_IQ1_S},
    {"iq1_m", GPUFIT_DTYPE_IQ1_M},
    {"iq2_xxs", GPUFIT_DTYPE_IQ2_XXS},
    {"iq2_xs", GPUFIT_DTYPE_IQ2_XS},
    {"iq2_s", GPUFIT_DTYPE_IQ2_S},
    {"iq3_xxs", GPUFIT_DTYPE_IQ3_XXS},
    {"iq3_s", GPUFIT_DTYPE_IQ3_S},
    {"iq4_nl", GPUFIT_DTYPE_IQ4_NL},
    {"iq4_xs", GPUFIT_DTYPE_IQ4_XS},
    {"tq1_0", GPUFIT_DTYPE_TQ1_0},
    {"tq2_0", GPUFIT_DTYPE_TQ2_0},
    {"f16", GPUFIT_DTYPE_F16_GGUF},
    {"float32", GPUFIT_DTYPE_FP32},
    {"f32", GPUFIT_DTYPE_FP32},
    {"float16", GPUFIT_DTYPE_FP16},
    {"half", GPUFIT_DTYPE_FP16},
    {"bfloat16", GPUFIT_DTYPE_BF16},
    {"e4m3", GPUFIT_DTYPE_FP8},
    {"fp8_e4m3", GPUFIT_DTYPE_FP8},
    {"fp8_e5m2", GPUFIT_DTYPE_FP8},
    {"gptq", GPUFIT_DTYPE_GPTQ4},
    {"awq", GPUFIT_DTYPE_AWQ4},
    {NULL, 0}};
