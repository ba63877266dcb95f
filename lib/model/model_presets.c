/* SPDX-License-Identifier: MIT */
/* Built-in model presets. Architecture numbers are those of each model's Hugging Face
 * config.json (hf_repo); names are the lowercased repository names, with short aliases. */
#include "internal.h"

#include <string.h>

#include "preset_fields.h" /* PRESET_FIELDS and their values, gpufit__arch_values */

typedef gpufit__arch_values arch_values;

typedef struct preset {
    const char *name, *aliases, *hf_repo;
    arch_values a;
} preset;

/* Decoder-only transformer. */
#define DEC(mlp_, norm_, L_, h_, nq_, nkv_, dh_, f_, V_, tied_)                                    \
    .arch = GPUFIT_ARCH_DECODER, .mlp = mlp_, .norm = norm_, .n_layers = L_, .hidden_size = h_,    \
    .n_heads = nq_, .n_kv_heads = nkv_, .head_dim = dh_, .ffn_hidden_size = f_, .vocab_size = V_,  \
    .tied_embeddings = tied_
/* Llama/Mistral/Qwen style: RMSNorm, SwiGLU, RoPE, no linear biases. */
#define LLAMA(L_, h_, nq_, nkv_, dh_, f_, V_, tied_)                                               \
    DEC(GPUFIT_MLP_SWIGLU, GPUFIT_NORM_RMSNORM, L_, h_, nq_, nkv_, dh_, f_, V_, tied_)
/* Qwen2/2.5: Llama style with q/k/v biases. */
#define QWEN2(L_, h_, nq_, nkv_, dh_, f_, V_, tied_)                                               \
    LLAMA(L_, h_, nq_, nkv_, dh_, f_, V_, tied_), .qkv_bias = 1
/* Qwen3: Llama style with per-head q/k RMSNorm. */
#define QWEN3(L_, h_, nq_, nkv_, dh_, f_, V_, tied_)                                               \
    LLAMA(L_, h_, nq_, nkv_, dh_, f_, V_, tied_), .qk_norm = 1
/* GPT-2/NeoX/BLOOM style: LayerNorm, GELU 2-matrix MLP, every linear with a bias. */
#define GPT(L_, h_, nq_, f_, V_, tied_)                                                            \
    DEC(GPUFIT_MLP_GELU, GPUFIT_NORM_LAYERNORM, L_, h_, nq_, nq_, (h_) / (nq_), f_, V_, tied_),    \
        .qkv_bias = 1, .mlp_bias = 1, .o_bias = 1
/* OPT: as GPT with ReLU, tied, 2048 learned positions + 2 (HF OPTLearnedPositionalEmbedding). */
#define OPT(L_, h_, nq_, f_)                                                                       \
    DEC(GPUFIT_MLP_RELU, GPUFIT_NORM_LAYERNORM, L_, h_, nq_, nq_, (h_) / (nq_), f_, 50272, 1),     \
        .qkv_bias = 1, .mlp_bias = 1, .o_bias = 1, .max_position = 2050
/* Mixtral: Llama style, every layer MoE, no shared expert, no router bias. */
#define MIXTRAL(L_, h_, nq_, nkv_, f_, E_, k_, V_)                                                 \
    LLAMA(L_, h_, nq_, nkv_, 128, f_, V_, 0), .n_experts = E_, .experts_per_token = k_,            \
                                              .moe_ffn_hidden_size = f_
/* BERT/RoBERTa encoder (base model with pooler): post-LN, GELU, biases, embedding LayerNorm. */
#define BERT(L_, h_, nq_, f_, V_, pos_, types_)                                                    \
    .arch = GPUFIT_ARCH_ENCODER, .mlp = GPUFIT_MLP_GELU, .norm = GPUFIT_NORM_LAYERNORM,            \
    .n_layers = L_, .hidden_size = h_, .n_heads = nq_, .n_kv_heads = nq_,                          \
    .head_dim = (h_) / (nq_), .ffn_hidden_size = f_, .vocab_size = V_, .tied_embeddings = 1,       \
    .qkv_bias = 1, .mlp_bias = 1, .o_bias = 1, .emb_norm = 1, .max_position = pos_,                \
    .type_vocab_size = types_, .pooler = 1
/* T5: weight-only norms (T5LayerNorm), no biases, 32 relative-position buckets per stack. */
#define T5(L_, h_, nq_, dh_, f_, mlp_, tied_)                                                      \
    .arch = GPUFIT_ARCH_ENCODER_DECODER, .mlp = mlp_, .norm = GPUFIT_NORM_RMSNORM, .n_layers = L_, \
    .n_encoder_layers = L_, .n_decoder_layers = L_, .hidden_size = h_, .n_heads = nq_,             \
    .n_kv_heads = nq_, .head_dim = dh_, .ffn_hidden_size = f_, .vocab_size = 32128,                \
    .tied_embeddings = tied_, .rel_pos_buckets = 32
/* DeepSeek-V3/R1: MLA + 3 dense layers + 58 MoE layers (256 routed, 1 shared, top-8) with the
 * e_score_correction_bias (inference/configs/config_671B.json). */
#define DEEPSEEK_V3                                                                                \
    LLAMA(61, 7168, 128, 128, 192, 18432, 129280, 0),                                              \
        .n_experts = 256, .n_shared_experts = 1, .experts_per_token = 8,                           \
        .moe_ffn_hidden_size = 2048, .n_dense_layers = 3, .router_bias = 1, .q_lora_rank = 1536,   \
        .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128

/* Vision encoders (docs/memory/multimodal.md): CLIP ViT-L/14 at 336 px with LLaVA's MLP
 * projector (vision_config of llava-hf/llava-1.5-7b-hf); the Qwen2-VL ViT (32 layers, 1280
 * wide, 2 x 2 merger) at vLLM's largest dummy image, sqrt(max_pixels 12,845,056) = 3584 px
 * (preprocessor_config.json), with the MLP of Qwen2-VL (5120) or Qwen2.5-VL (gated, 3420);
 * Mistral Small 3.1's Pixtral encoder (1540 px, 2 x 2 patch merger). */
#define VIS(st_, L_, h_, nh_, f_, p_, img_, m_, proj_)                                             \
    .vision_style = st_, .vision_layers = L_, .vision_hidden_size = h_, .vision_heads = nh_,      \
    .vision_ffn_hidden_size = f_, .vision_patch_size = p_, .vision_image_size = img_,            \
    .vision_merge = m_, .vision_projector = proj_, .vision_tiles = 1
#define LLAVA_CLIP VIS(GPUFIT_VISION_CLIP, 24, 1024, 16, 4096, 14, 336, 1, GPUFIT_VPROJ_MLP)
#define QWEN2_VL_VIT(f_, st_) VIS(st_, 32, 1280, 16, f_, 14, 3584, 2, GPUFIT_VPROJ_MERGER)

#define SWI  GPUFIT_MLP_SWIGLU
#define GEG  GPUFIT_MLP_GEGLU
#define RELU GPUFIT_MLP_RELU
#define RMS  GPUFIT_NORM_RMSNORM

static const preset presets[] = {
    /* DeepSeek */
    {"deepseek-r1", "deepseek-r1-671b", "deepseek-ai/DeepSeek-R1",
     {DEEPSEEK_V3, .rope_positions = 163840}},
    {"deepseek-v3", "deepseek-v3-671b", "deepseek-ai/DeepSeek-V3",
     {DEEPSEEK_V3, .rope_positions = 163840}},
    {"deepseek-v2-lite",
     "",
     "deepseek-ai/DeepSeek-V2-Lite",
     {LLAMA(27, 2048, 16, 16, 192, 10944, 102400, 0), .n_experts = 64, .n_shared_experts = 2,
      .experts_per_token = 6, .moe_ffn_hidden_size = 1408, .n_dense_layers = 1, .kv_lora_rank = 512,
      .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128,
      .rope_positions = 163840}},
    {"deepseek-r1-distill-qwen-1.5b",
     "r1-distill-qwen-1.5b",
     "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
     {QWEN2(28, 1536, 12, 2, 128, 8960, 151936, 0)}},
    {"deepseek-r1-distill-qwen-7b",
     "r1-distill-qwen-7b",
     "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
     {QWEN2(28, 3584, 28, 4, 128, 18944, 152064, 0)}},
    {"deepseek-r1-distill-qwen-14b",
     "r1-distill-qwen-14b",
     "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
     {QWEN2(48, 5120, 40, 8, 128, 13824, 152064, 0)}},
    {"deepseek-r1-distill-qwen-32b",
     "r1-distill-qwen-32b",
     "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
     {QWEN2(64, 5120, 40, 8, 128, 27648, 152064, 0)}},
    {"deepseek-r1-distill-llama-8b",
     "r1-distill-llama-8b",
     "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
     {LLAMA(32, 4096, 32, 8, 128, 14336, 128256, 0), .rope_positions = 131072}},
    {"deepseek-r1-distill-llama-70b",
     "r1-distill-llama-70b",
     "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
     {LLAMA(80, 8192, 64, 8, 128, 28672, 128256, 0), .rope_positions = 131072}},
    /* Meta Llama */
    {"meta-llama-3-8b",
     "llama-3-8b llama3-8b",
     "meta-llama/Meta-Llama-3-8B",
     {LLAMA(32, 4096, 32, 8, 128, 14336, 128256, 0), .rope_positions = 8192}},
    {"meta-llama-3-70b",
     "llama-3-70b llama3-70b",
     "meta-llama/Meta-Llama-3-70B",
     {LLAMA(80, 8192, 64, 8, 128, 28672, 128256, 0), .rope_positions = 8192}},
    {"meta-llama-3.1-8b",
     "llama-3.1-8b llama3.1-8b",
     "meta-llama/Meta-Llama-3.1-8B",
     {LLAMA(32, 4096, 32, 8, 128, 14336, 128256, 0), .rope_positions = 131072}},
    {"meta-llama-3.1-70b",
     "llama-3.1-70b llama3.1-70b",
     "meta-llama/Meta-Llama-3.1-70B",
     {LLAMA(80, 8192, 64, 8, 128, 28672, 128256, 0), .rope_positions = 131072}},
    {"meta-llama-3.1-405b",
     "llama-3.1-405b llama3.1-405b",
     "meta-llama/Meta-Llama-3.1-405B",
     {LLAMA(126, 16384, 128, 8, 128, 53248, 128256, 0), .rope_positions = 131072}},
    {"llama-3.2-1b",
     "llama3.2-1b",
     "meta-llama/Llama-3.2-1B",
     {LLAMA(16, 2048, 32, 8, 64, 8192, 128256, 1), .rope_positions = 131072}},
    {"llama-3.2-3b",
     "llama3.2-3b",
     "meta-llama/Llama-3.2-3B",
     {LLAMA(28, 3072, 24, 8, 128, 8192, 128256, 1), .rope_positions = 131072}},
    {"llama-3.3-70b-instruct",
     "llama-3.3-70b llama3.3-70b",
     "meta-llama/Llama-3.3-70B-Instruct",
     {LLAMA(80, 8192, 64, 8, 128, 28672, 128256, 0), .rope_positions = 131072}},
    {"llama-2-7b-hf",
     "llama-2-7b llama2-7b",
     "meta-llama/Llama-2-7b-hf",
     {LLAMA(32, 4096, 32, 32, 128, 11008, 32000, 0), .rope_positions = 4096}},
    {"llama-2-13b-hf",
     "llama-2-13b llama2-13b",
     "meta-llama/Llama-2-13b-hf",
     {LLAMA(40, 5120, 40, 40, 128, 13824, 32000, 0), .rope_positions = 4096}},
    {"llama-2-70b-hf",
     "llama-2-70b llama2-70b",
     "meta-llama/Llama-2-70b-hf",
     {LLAMA(80, 8192, 64, 8, 128, 28672, 32000, 0), .rope_positions = 4096}},
    {"tinyllama-1.1b-chat-v1.0",
     "tinyllama tinyllama-1.1b",
     "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
     {LLAMA(22, 2048, 32, 4, 64, 5632, 32000, 0), .rope_positions = 2048}},
    /* Mistral */
    {"mistral-7b-v0.1",
     "mistral-7b",
     "mistralai/Mistral-7B-v0.1",
     {LLAMA(32, 4096, 32, 8, 128, 14336, 32000, 0), .sliding_window = 4096,
      .rope_positions = 32768}},
    {"mistral-7b-v0.3",
     "",
     "mistralai/Mistral-7B-v0.3",
     {LLAMA(32, 4096, 32, 8, 128, 14336, 32768, 0), .rope_positions = 32768}},
    {"mixtral-8x7b-v0.1",
     "mixtral-8x7b",
     "mistralai/Mixtral-8x7B-v0.1",
     {MIXTRAL(32, 4096, 32, 8, 14336, 8, 2, 32000), .rope_positions = 32768}},
    {"mixtral-8x22b-v0.1",
     "mixtral-8x22b",
     "mistral-community/Mixtral-8x22B-v0.1",
     {MIXTRAL(56, 6144, 48, 8, 16384, 8, 2, 32000), .rope_positions = 65536}},
    /* Qwen */
    {"qwen2.5-0.5b", "", "Qwen/Qwen2.5-0.5B", {QWEN2(24, 896, 14, 2, 64, 4864, 151936, 1),
      .rope_positions = 32768}},
    {"qwen2.5-1.5b", "", "Qwen/Qwen2.5-1.5B", {QWEN2(28, 1536, 12, 2, 128, 8960, 151936, 1),
      .rope_positions = 32768}},
    {"qwen2.5-3b", "", "Qwen/Qwen2.5-3B", {QWEN2(36, 2048, 16, 2, 128, 11008, 151936, 1),
      .rope_positions = 32768}},
    {"qwen2.5-7b", "", "Qwen/Qwen2.5-7B", {QWEN2(28, 3584, 28, 4, 128, 18944, 152064, 0),
      .rope_positions = 131072}},
    {"qwen2.5-14b", "", "Qwen/Qwen2.5-14B", {QWEN2(48, 5120, 40, 8, 128, 13824, 152064, 0),
      .rope_positions = 131072}},
    {"qwen2.5-32b", "", "Qwen/Qwen2.5-32B", {QWEN2(64, 5120, 40, 8, 128, 27648, 152064, 0),
      .rope_positions = 131072}},
    {"qwen2.5-72b", "", "Qwen/Qwen2.5-72B", {QWEN2(80, 8192, 64, 8, 128, 29568, 152064, 0),
      .rope_positions = 131072}},
    {"qwen3-0.6b", "", "Qwen/Qwen3-0.6B", {QWEN3(28, 1024, 16, 8, 128, 3072, 151936, 1),
      .rope_positions = 40960}},
    {"qwen3-4b", "", "Qwen/Qwen3-4B", {QWEN3(36, 2560, 32, 8, 128, 9728, 151936, 1),
      .rope_positions = 40960}},
    {"qwen3-8b", "", "Qwen/Qwen3-8B", {QWEN3(36, 4096, 32, 8, 128, 12288, 151936, 0),
      .rope_positions = 40960}},
    {"qwen3-32b", "", "Qwen/Qwen3-32B", {QWEN3(64, 5120, 64, 8, 128, 25600, 151936, 0),
      .rope_positions = 40960}},
    {"qwen3-30b-a3b",
     "",
     "Qwen/Qwen3-30B-A3B",
     {QWEN3(48, 2048, 32, 4, 128, 6144, 151936, 0), .n_experts = 128, .experts_per_token = 8,
      .moe_ffn_hidden_size = 768, .rope_positions = 40960}},
    {"qwen1.5-moe-a2.7b",
     "",
     "Qwen/Qwen1.5-MoE-A2.7B",
     {QWEN2(24, 2048, 16, 16, 128, 5632, 151936, 0), .n_experts = 60, .experts_per_token = 4,
      .moe_ffn_hidden_size = 1408, .n_shared_experts = 1, .shared_ffn_hidden_size = 5632,
      .shared_expert_gate = 1, .rope_positions = 8192}},
    /* Multimodal (vision encoder + projector + text model) */
    {"llava-1.5-7b-hf",
     "llava-1.5-7b",
     "llava-hf/llava-1.5-7b-hf",
     {LLAMA(32, 4096, 32, 32, 128, 11008, 32064, 0), LLAVA_CLIP, .rope_positions = 4096}},
    {"qwen2-vl-2b-instruct",
     "qwen2-vl-2b",
     "Qwen/Qwen2-VL-2B-Instruct",
     {QWEN2(28, 1536, 12, 2, 128, 8960, 151936, 1), QWEN2_VL_VIT(5120, GPUFIT_VISION_QWEN2_VL),
      .rope_positions = 32768}},
    {"qwen2-vl-7b-instruct",
     "qwen2-vl-7b",
     "Qwen/Qwen2-VL-7B-Instruct",
     {QWEN2(28, 3584, 28, 4, 128, 18944, 152064, 0), QWEN2_VL_VIT(5120, GPUFIT_VISION_QWEN2_VL),
      .rope_positions = 32768}},
    {"qwen2.5-vl-7b-instruct",
     "qwen2.5-vl-7b",
     "Qwen/Qwen2.5-VL-7B-Instruct",
     {QWEN2(28, 3584, 28, 4, 128, 18944, 152064, 0),
      QWEN2_VL_VIT(3420, GPUFIT_VISION_QWEN2_5_VL), .rope_positions = 128000}},
    {"mistral-small-3.1-24b-instruct-2503",
     "mistral-small-3.1-24b",
     "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
     {LLAMA(40, 5120, 32, 8, 128, 32768, 131072, 0),
      VIS(GPUFIT_VISION_PIXTRAL, 24, 1024, 16, 4096, 14, 1540, 2, GPUFIT_VPROJ_MISTRAL3),
      .rope_positions = 131072}},
    /* Google Gemma (gelu_pytorch_tanh gated MLP, head_dim 256, tied) */
    {"gemma-2b", "", "google/gemma-2b", {DEC(GEG, RMS, 18, 2048, 8, 1, 256, 16384, 256000, 1),
      .rope_positions = 8192}},
    {"gemma-7b", "", "google/gemma-7b", {DEC(GEG, RMS, 28, 3072, 16, 16, 256, 24576, 256000, 1),
      .rope_positions = 8192}},
    /* Microsoft Phi-3 (fused qkv and gate_up without biases: same count as Llama style) */
    {"phi-3-mini-4k-instruct",
     "phi-3-mini",
     "microsoft/Phi-3-mini-4k-instruct",
     {LLAMA(32, 3072, 32, 32, 96, 8192, 32064, 0), .sliding_window = 2047, .rope_positions = 4096}},
    /* GPT-2, GPT-NeoX, BLOOM, OPT */
    {"gpt2",
     "gpt2-small",
     "openai-community/gpt2",
     {GPT(12, 768, 12, 3072, 50257, 1), .max_position = 1024}},
    {"gpt2-medium",
     "",
     "openai-community/gpt2-medium",
     {GPT(24, 1024, 16, 4096, 50257, 1), .max_position = 1024}},
    {"gpt2-large",
     "",
     "openai-community/gpt2-large",
     {GPT(36, 1280, 20, 5120, 50257, 1), .max_position = 1024}},
    {"gpt2-xl",
     "",
     "openai-community/gpt2-xl",
     {GPT(48, 1600, 25, 6400, 50257, 1), .max_position = 1024}},
    {"gpt-neox-20b", "neox-20b", "EleutherAI/gpt-neox-20b", {GPT(44, 6144, 64, 24576, 50432, 0),
      .rope_positions = 2048, .rotary_dim = 24}},
    {"bloom",
     "bloom-176b",
     "bigscience/bloom",
     {GPT(70, 14336, 112, 57344, 250880, 1), .emb_norm = 1}},
    {"bloom-560m",
     "",
     "bigscience/bloom-560m",
     {GPT(24, 1024, 16, 4096, 250880, 1), .emb_norm = 1}},
    {"bloom-7b1", "", "bigscience/bloom-7b1", {GPT(30, 4096, 32, 16384, 250880, 1), .emb_norm = 1}},
    {"opt-125m", "", "facebook/opt-125m", {OPT(12, 768, 12, 3072)}},
    {"opt-1.3b", "", "facebook/opt-1.3b", {OPT(24, 2048, 32, 8192)}},
    {"opt-6.7b", "", "facebook/opt-6.7b", {OPT(32, 4096, 32, 16384)}},
    /* Encoders */
    {"bert-base-uncased",
     "bert-base",
     "google-bert/bert-base-uncased",
     {BERT(12, 768, 12, 3072, 30522, 512, 2)}},
    {"bert-large-uncased",
     "bert-large",
     "google-bert/bert-large-uncased",
     {BERT(24, 1024, 16, 4096, 30522, 512, 2)}},
    {"bert-base-cased",
     "",
     "google-bert/bert-base-cased",
     {BERT(12, 768, 12, 3072, 28996, 512, 2)}},
    {"roberta-base", "", "FacebookAI/roberta-base", {BERT(12, 768, 12, 3072, 50265, 514, 1)}},
    {"roberta-large", "", "FacebookAI/roberta-large", {BERT(24, 1024, 16, 4096, 50265, 514, 1)}},
    /* Encoder-decoders: T5 (ReLU, tied), T5 v1.1 / FLAN-T5 (gated GELU, untied) */
    {"t5-small", "", "google-t5/t5-small", {T5(6, 512, 8, 64, 2048, RELU, 1)}},
    {"t5-base", "", "google-t5/t5-base", {T5(12, 768, 12, 64, 3072, RELU, 1)}},
    {"t5-large", "", "google-t5/t5-large", {T5(24, 1024, 16, 64, 4096, RELU, 1)}},
    {"t5-3b", "", "google-t5/t5-3b", {T5(24, 1024, 32, 128, 16384, RELU, 1)}},
    {"t5-11b", "", "google-t5/t5-11b", {T5(24, 1024, 128, 128, 65536, RELU, 1)}},
    {"t5-v1_1-xl", "t5-v1.1-xl", "google/t5-v1_1-xl", {T5(24, 2048, 32, 64, 5120, GEG, 0)}},
    {"flan-t5-small", "", "google/flan-t5-small", {T5(8, 512, 6, 64, 1024, GEG, 0)}},
    {"flan-t5-base", "", "google/flan-t5-base", {T5(12, 768, 12, 64, 2048, GEG, 0)}},
    {"flan-t5-large", "", "google/flan-t5-large", {T5(24, 1024, 16, 64, 2816, GEG, 0)}},
    {"flan-t5-xl", "", "google/flan-t5-xl", {T5(24, 2048, 32, 64, 5120, GEG, 0)}},
    {"flan-t5-xxl", "", "google/flan-t5-xxl", {T5(24, 4096, 64, 64, 10240, GEG, 0)}},
};

#define N_PRESETS (sizeof presets / sizeof presets[0])

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Case-insensitive equality of two counted strings. */
static int eq_ci(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen)
        return 0;
    if (memcmp(a, b, alen) == 0) /* the usual case: the same bytes, no case to fold */
        return 1;
    for (size_t i = 0; i < alen; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return 0;
    return 1;
}

static int matches(const preset *p, const char *name, size_t len)
{
    if (gpufit__streq_ci(name, len, p->name) || gpufit__streq_ci(name, len, p->hf_repo))
        return 1;
    for (const char *t = p->aliases; *t != '\0';) { /* space-separated aliases */
        const char *e = strchr(t, ' ');
        size_t n = e != NULL ? (size_t)(e - t) : strlen(t);
        if (n > 0 && eq_ci(name, len, t, n))
            return 1;
        t += n;
        while (*t == ' ')
            t++;
    }
    return 0;
}

/* Loads preset p into m, named name[0..len) in lower case (cut to fit), or by p's own name
 * when name is NULL. */
static void load(struct gpufit_model *m, const preset *p, const char *name, size_t len)
{
    gpufit__model_defaults(m);
#define X(f) m->f = p->a.f;
    PRESET_FIELDS(X)
#undef X
    /* the two vision fields whose default is 1, left out of text-only presets */
    m->vision_merge = m->vision_merge > 0 ? m->vision_merge : 1;
    m->vision_tiles = m->vision_tiles > 0 ? m->vision_tiles : 1;
    size_t n = name != NULL ? len : strlen(p->name);
    n = n < sizeof m->name - 1 ? n : sizeof m->name - 1;
    if (name != NULL)
        gpufit__lower_copy(m->name, name, n);
    else
        memcpy(m->name, p->name, n);
    m->name[n] = '\0';
    /* stale, but a refresh copies the preset's record (gpufit__preset_record_fill) */
    m->cache_state = 2;
    m->cache_ng = (uint32_t)(p - presets);
}

/* preset_names[]: every name, alias and Hugging Face id (variants included) in lower case,
 * sorted, with its preset's row; generated by tools/gen_index.c (`make index`) */
#include "preset_index.inc"

int32_t gpufit__preset_find_linear(const char *name, size_t len)
{
    /* a Hugging Face variant id (an -Instruct or -chat release of the same architecture) names
     * its base preset: lib/model/model_hf_ids.c */
    const char *base = gpufit__preset_hf_variant(name, len);
    for (size_t i = 0; i < N_PRESETS; i++)
        if (matches(&presets[i], name, len) ||
            (base != NULL && strcmp(presets[i].name, base) == 0))
            return (int32_t)i;
    return -1;
}

/* The preset's row through the index (names compare without case), checked against the
 * preset it points at; the linear scan answers a miss. */
static int32_t preset_find(const char *name, size_t len)
{
    char low[PRESET_KEY_MAX];
    if (len <= sizeof low) {
        gpufit__lower_copy(low, name, len);
        int32_t r = gpufit__name_hash_find(preset_names,
                                           sizeof preset_names / sizeof preset_names[0],
                                           preset_names_hash, preset_names_SLOTS, low, len);
        if (r >= 0 && (size_t)r < N_PRESETS) {
            const char *base;
            if (matches(&presets[r], name, len) ||
                ((base = gpufit__preset_hf_variant(name, len)) != NULL &&
                 strcmp(presets[r].name, base) == 0))
                return r;
        }
    }
    return gpufit__preset_find_linear(name, len);
}

/* The derived cache of every preset (shape, counts, tensor groups, aggregates) as `make index`
 * computed it (tools/gen_index.c), with the architecture it was computed from: loading a
 * preset then copies its cache instead of deriving it. A record whose architecture is not
 * the preset's (a stale file) is not used, nor one past the presets. */
typedef struct preset_record {
    arch_values a;
    uint16_t group0, ng; /* its tensor groups: preset_record_groups[group0, group0 + ng) */
    uint16_t agg0, nagg; /* its class sums other than empty: preset_record_aggs[agg0, ...) */
    uint32_t glob_dense, reserved;
    gpufit__shape shape;
    gpufit__counts counts;
} preset_record;
/* One class sum: slot 0-4 is layer[slot], 5-8 glob[slot - 5] (gpufit__aggregates). */
typedef struct preset_agg {
    uint32_t slot, reserved;
    gpufit__class_agg a;
} preset_agg;
#include "preset_record.inc"

const gpufit__arch_values *gpufit__preset_arch(size_t row)
{
    return row < N_PRESETS ? &presets[row].a : NULL;
}

int gpufit__preset_record_fill(struct gpufit_model *m, size_t row)
{
    if (row >= N_PRESETS || row >= sizeof preset_records / sizeof preset_records[0])
        return 0;
    const preset_record *r = &preset_records[row];
    /* the record's architecture, and its spans inside the pools (a record of a stale file) */
    if (memcmp(&r->a, &presets[row].a, sizeof r->a) != 0 || r->ng > GPUFIT__TGROUPS_MAX ||
        (size_t)r->group0 + r->ng > sizeof preset_record_groups / sizeof preset_record_groups[0] ||
        (size_t)r->agg0 + r->nagg > sizeof preset_record_aggs / sizeof preset_record_aggs[0])
        return 0;
    m->cache_shape = r->shape;
    m->cache_counts = r->counts;
    m->cache_ng = r->ng;
    memcpy(m->cache_groups, &preset_record_groups[r->group0], r->ng * sizeof m->cache_groups[0]);
    /* each class sum that is read written once: the record's, or an empty one (the record
     * lists its sums by slot, in order). Nothing reads a layer class outside [w_first, w_end)
     * or the vision side of a model without one (gpufit__aggregates): those keep the handle's
     * bytes, as the unused tails of the cache's arrays do (gpufit__model_assign) */
    const preset_agg *a = &preset_record_aggs[r->agg0], *end = a + r->nagg;
    uint32_t first = (uint32_t)r->shape.w_first, last = (uint32_t)r->shape.w_end;
    uint32_t sides = r->shape.v_layers > 0 ? 4 : 3;
    for (uint32_t k = 0; k < GPUFIT__W_COUNT + 4; k++) {
        int read = k < GPUFIT__W_COUNT ? k >= first && k < last : k - GPUFIT__W_COUNT < sides;
        gpufit__class_agg *to =
            k < GPUFIT__W_COUNT ? &m->cache_agg.layer[k] : &m->cache_agg.glob[k - GPUFIT__W_COUNT];
        if (a < end && a->slot == k)
            *to = (a++)->a; /* (a stored sum outside the read ones is copied all the same) */
        else if (read)
            *to = gpufit__class_agg_empty;
    }
    m->cache_agg.glob_dense = r->glob_dense;
    m->cache_agg.reserved = 0;
    return a == end; /* else slots out of order or past the last: a stale record */
}

int32_t gpufit__preset_lookup(const char *name, size_t len, size_t *row, gpufit_error *err)
{
    if (name == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "model: preset name is NULL");
    int32_t r = preset_find(name, len);
    if (r >= 0) {
        *row = (size_t)r;
        return GPUFIT_OK;
    }
    int shown = len > 64 ? 64 : (int)len;
    char hint[96];
    gpufit__suggest_preset(name, len, hint, sizeof hint);
    return gpufit__fail(err, GPUFIT_E_NOT_FOUND, 0, UINT64_MAX,
                        "model: unknown preset \"%.*s\" (see 'gpufit models')%s", shown, name,
                        hint);
}

void gpufit__preset_load_row(struct gpufit_model *m, size_t row, const char *name, size_t len)
{
    /* the report names the model as the user called it (scenario.md example) */
    if (row < N_PRESETS)
        load(m, &presets[row], name, len);
}

int32_t gpufit__preset_load(struct gpufit_model *m, const char *name, size_t len, gpufit_error *err)
{
    size_t r = 0;
    if (m == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "model: preset name is NULL");
    int32_t st = gpufit__preset_lookup(name, len, &r, err);
    if (st != GPUFIT_OK)
        return st;
    gpufit__preset_load_row(m, r, name, len);
    gpufit__ok(err);
    return GPUFIT_OK;
}

size_t gpufit__preset_count(void)
{
    return N_PRESETS;
}

int32_t gpufit__preset_get(
    size_t i, struct gpufit_model *m, const char **name, const char **aliases, const char **hf_repo)
{
    if (i >= N_PRESETS)
        return GPUFIT_E_NOT_FOUND;
    const preset *p = &presets[i];
    if (m != NULL)
        load(m, p, NULL, 0);
    if (name != NULL)
        *name = p->name;
    if (aliases != NULL)
        *aliases = p->aliases;
    if (hf_repo != NULL)
        *hf_repo = p->hf_repo;
    return GPUFIT_OK;
}

int32_t gpufit_preset_at(uint32_t index, gpufit_preset_info *out)
{
    struct gpufit_model m;
    gpufit__shape s;
    gpufit__counts c;
    gpufit_preset_info info;
    memset(&info, 0, sizeof info);
    int32_t st = gpufit__preset_get(index, &m, &info.name, &info.aliases, &info.hf_repo);
    if (st != GPUFIT_OK)
        return st;
    st = gpufit__model_resolve(&m, &s, NULL);
    if (st == GPUFIT_OK)
        st = gpufit__model_count(&s, &c, NULL);
    if (st != GPUFIT_OK)
        return GPUFIT_E_INTERNAL; /* every preset resolves: tests/unit/test_models.c */
    info.struct_size = (uint32_t)sizeof info;
    info.index = index;
    info.n_params = c.total;
    info.n_active_params = c.active;
    return gpufit__copy_out(out, &info, sizeof info, sizeof(gpufit_preset_info));
}
