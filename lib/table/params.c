/* SPDX-License-Identifier: MIT */
/* The parameter table: one row per public parameter (name, domain, type, bounds, default,
 * unit, doc) and the typed get/set paths built on it. Names follow shared/reference/scenario.md. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- named values ------------------------------------------------------------------- */
static const gpufit__enum_value bool_values[] = {
    GPUFIT__EV("false", 0), GPUFIT__EV("true", 1), GPUFIT__EV("0", 0),
    GPUFIT__EV("1", 1),     GPUFIT__EV("no", 0),   GPUFIT__EV("yes", 1),
    GPUFIT__EV("off", 0),   GPUFIT__EV("on", 1),   {NULL, 0, 0}};
static const gpufit__enum_value arch_values[] = {
    GPUFIT__EV("decoder", GPUFIT_ARCH_DECODER),
    GPUFIT__EV("encoder", GPUFIT_ARCH_ENCODER),
    GPUFIT__EV("encoder_decoder", GPUFIT_ARCH_ENCODER_DECODER),
    GPUFIT__EV("generic", GPUFIT_ARCH_GENERIC),
    {NULL, 0, 0}};
static const gpufit__enum_value mlp_values[] = {GPUFIT__EV("gelu", GPUFIT_MLP_GELU),
                                                GPUFIT__EV("relu", GPUFIT_MLP_RELU),
                                                GPUFIT__EV("swiglu", GPUFIT_MLP_SWIGLU),
                                                GPUFIT__EV("geglu", GPUFIT_MLP_GEGLU),
                                                {NULL, 0, 0}};
static const gpufit__enum_value norm_values[] = {GPUFIT__EV("layernorm", GPUFIT_NORM_LAYERNORM),
                                                 GPUFIT__EV("rmsnorm", GPUFIT_NORM_RMSNORM),
                                                 {NULL, 0, 0}};
static const gpufit__enum_value task_values[] = {
    GPUFIT__EV("pretrain", GPUFIT_TASK_PRETRAIN),   GPUFIT__EV("finetune", GPUFIT_TASK_FINETUNE),
    GPUFIT__EV("lora", GPUFIT_TASK_LORA),           GPUFIT__EV("qlora", GPUFIT_TASK_QLORA),
    GPUFIT__EV("inference", GPUFIT_TASK_INFERENCE), {NULL, 0, 0}};
static const gpufit__enum_value precision_values[] = {
    GPUFIT__EV("auto", -1),
    GPUFIT__EV("fp32", GPUFIT_PRECISION_FP32),
    GPUFIT__EV("tf32", GPUFIT_PRECISION_TF32),
    GPUFIT__EV("amp_fp16", GPUFIT_PRECISION_AMP_FP16),
    GPUFIT__EV("amp_bf16", GPUFIT_PRECISION_AMP_BF16),
    GPUFIT__EV("bf16", GPUFIT_PRECISION_BF16),
    GPUFIT__EV("fp16", GPUFIT_PRECISION_FP16),
    GPUFIT__EV("fp8", GPUFIT_PRECISION_FP8),
    {NULL, 0, 0}};
static const gpufit__enum_value optimizer_values[] = {
    GPUFIT__EV("adamw", GPUFIT_OPT_ADAMW),
    GPUFIT__EV("adam", GPUFIT_OPT_ADAM),
    GPUFIT__EV("sgd", GPUFIT_OPT_SGD),
    GPUFIT__EV("sgd_momentum", GPUFIT_OPT_SGD_MOMENTUM),
    GPUFIT__EV("adafactor", GPUFIT_OPT_ADAFACTOR),
    GPUFIT__EV("adamw_8bit", GPUFIT_OPT_ADAMW_8BIT),
    GPUFIT__EV("lion", GPUFIT_OPT_LION),
    GPUFIT__EV("none", GPUFIT_OPT_NONE),
    {NULL, 0, 0}};
static const gpufit__enum_value ckpt_values[] = {
    GPUFIT__EV("none", GPUFIT_CKPT_NONE),
    GPUFIT__EV("selective", GPUFIT_CKPT_SELECTIVE),
    GPUFIT__EV("full", GPUFIT_CKPT_FULL),
    GPUFIT__EV("selective_op", GPUFIT_CKPT_SELECTIVE_OP),
    {NULL, 0, 0}};
static const gpufit__enum_value attention_values[] = {GPUFIT__EV("auto", -1),
                                                      GPUFIT__EV("eager", GPUFIT_ATTN_EAGER),
                                                      GPUFIT__EV("sdpa", GPUFIT_ATTN_SDPA),
                                                      GPUFIT__EV("flash", GPUFIT_ATTN_FLASH),
                                                      {NULL, 0, 0}};
static const gpufit__enum_value framework_values[] = {GPUFIT__EV("pytorch", GPUFIT_FW_PYTORCH),
                                                      GPUFIT__EV("megatron", GPUFIT_FW_MEGATRON),
                                                      GPUFIT__EV("deepspeed", GPUFIT_FW_DEEPSPEED),
                                                      GPUFIT__EV("vllm", GPUFIT_FW_VLLM),
                                                      GPUFIT__EV("llamacpp", GPUFIT_FW_LLAMACPP),
                                                      GPUFIT__EV("sglang", GPUFIT_FW_SGLANG),
                                                      {NULL, 0, 0}};
static const gpufit__enum_value offload_values[] = {
    GPUFIT__EV("none", GPUFIT_OFFLOAD_NONE),
    GPUFIT__EV("optimizer", GPUFIT_OFFLOAD_OPTIMIZER),
    GPUFIT__EV("optimizer_params", GPUFIT_OFFLOAD_OPTIMIZER_PARAMS),
    {NULL, 0, 0}};
static const gpufit__enum_value overlap_values[] = {
    GPUFIT__EV("auto", -1), GPUFIT__EV("off", 0), GPUFIT__EV("on", 1), GPUFIT__EV("false", 0),
    GPUFIT__EV("true", 1),  GPUFIT__EV("0", 0),   GPUFIT__EV("1", 1),  {NULL, 0, 0}};
static const gpufit__enum_value schedule_values[] = {
    GPUFIT__EV("auto", -1),
    GPUFIT__EV("1f1b", GPUFIT_PP_1F1B),
    GPUFIT__EV("interleaved", GPUFIT_PP_INTERLEAVED),
    GPUFIT__EV("gpipe", GPUFIT_PP_GPIPE),
    {NULL, 0, 0}};
static const gpufit__enum_value vstyle_values[] = {
    GPUFIT__EV("clip", GPUFIT_VISION_CLIP),
    GPUFIT__EV("siglip", GPUFIT_VISION_SIGLIP),
    GPUFIT__EV("qwen2_vl", GPUFIT_VISION_QWEN2_VL),
    GPUFIT__EV("qwen2_5_vl", GPUFIT_VISION_QWEN2_5_VL),
    GPUFIT__EV("pixtral", GPUFIT_VISION_PIXTRAL),
    GPUFIT__EV("mllama", GPUFIT_VISION_MLLAMA),
    {NULL, 0, 0}};
static const gpufit__enum_value vproj_values[] = {
    GPUFIT__EV("mlp", GPUFIT_VPROJ_MLP),
    GPUFIT__EV("mlp_newline", GPUFIT_VPROJ_MLP_NEWLINE),
    GPUFIT__EV("merger", GPUFIT_VPROJ_MERGER),
    GPUFIT__EV("gemma3", GPUFIT_VPROJ_GEMMA3),
    GPUFIT__EV("mistral3", GPUFIT_VPROJ_MISTRAL3),
    GPUFIT__EV("mllama", GPUFIT_VPROJ_MLLAMA),
    {NULL, 0, 0}};
static const gpufit__enum_value opt_impl_values[] = {
    GPUFIT__EV("auto", -1),
    GPUFIT__EV("foreach", GPUFIT_OPTIMIZER_IMPL_FOREACH),
    GPUFIT__EV("fused", GPUFIT_OPTIMIZER_IMPL_FUSED),
    GPUFIT__EV("forloop", GPUFIT_OPTIMIZER_IMPL_FORLOOP),
    {NULL, 0, 0}};
static const gpufit__enum_value trainer_values[] = {
    GPUFIT__EV("auto", -1),
    GPUFIT__EV("hf", GPUFIT_TRAINER_HF),
    GPUFIT__EV("torchtune", GPUFIT_TRAINER_TORCHTUNE),
    GPUFIT__EV("loop", GPUFIT_TRAINER_LOOP),
    {NULL, 0, 0}};
static const gpufit__enum_value lora_values[] = {GPUFIT__EV("qv", GPUFIT_LORA_QV),
                                                 GPUFIT__EV("attention", GPUFIT_LORA_ATTENTION),
                                                 GPUFIT__EV("all_linear", GPUFIT_LORA_ALL_LINEAR),
                                                 {NULL, 0, 0}};

/* ---- the table ---------------------------------------------------------------------- */
#define BIG ((int64_t)1 << 40)
#define MOFF(f) offsetof(struct gpufit_model, f)
#define JOFF(f) offsetof(struct gpufit_job, f)
/* name must be a string literal ("" name does not compile otherwise): sizeof gives its length
 * at compile time (no strlen per lookup) */
/* the integer rows that gpufit__apply_entry reads as decimal digits (the others of type INT
 * have readers of their own; no INT row has value names: test_cold) */
#define PLAIN_INT(id, type)                                                                        \
    ((type) == GPUFIT_TYPE_INT && (id) != GPUFIT_JOB_GPU && (id) != GPUFIT_JOB_LORA_MODULES &&     \
     (id) != GPUFIT_JOB_FRAMEWORK_VERSION && (id) != GPUFIT_JOB_CUDA_VERSION)
#define ROW_I(id, dom, type, off, mn, mx, df, vals, name, al, unit, doc)                           \
    {                                                                                              \
        id, dom, type, 0, off, mn, mx, df, 0.0, 0.0, 0.0, vals, name, al, unit, doc,               \
            sizeof("" name) - 1, PLAIN_INT(id, type)                                               \
    }
#define ROW_F(id, dom, off, mn, mx, df, name, al, unit, doc)                                       \
    {                                                                                              \
        id, dom, GPUFIT_TYPE_FLOAT, 1, off, 0, 0, 0, mn, mx, df, NULL, name, al, unit, doc,        \
            sizeof("" name) - 1, 0                                                                 \
    }
/* list rows: up to GPUFIT_LIST_MAX elements, each in [mn, mx] */
#define JL(id, f, mn, mx, name, unit, doc)                                                         \
    {                                                                                              \
        id, GPUFIT_DOMAIN_JOB, GPUFIT_TYPE_LIST, 0, JOFF(f), 0, GPUFIT_LIST_MAX, 0, mn, mx, 0.0,   \
            NULL, name, NULL, unit, doc, sizeof("" name) - 1, 0                                    \
    }
#define MI(id, f, mn, mx, df, name, unit, doc)                                                     \
    ROW_I(id, GPUFIT_DOMAIN_MODEL, GPUFIT_TYPE_INT, MOFF(f), mn, mx, df, NULL, name, NULL, unit, doc)
#define MB(id, f, df, name, doc)                                                                   \
    ROW_I(id, GPUFIT_DOMAIN_MODEL, GPUFIT_TYPE_BOOL, MOFF(f), 0, 1, df, bool_values, name, NULL, "", \
          doc)
#define ME(id, f, mn, mx, df, vals, name, doc)                                                     \
    ROW_I(id, GPUFIT_DOMAIN_MODEL, GPUFIT_TYPE_ENUM, MOFF(f), mn, mx, df, vals, name, NULL, "", doc)
#define JI(id, f, mn, mx, df, name, al, unit, doc)                                                 \
    ROW_I(id, GPUFIT_DOMAIN_JOB, GPUFIT_TYPE_INT, JOFF(f), mn, mx, df, NULL, name, al, unit, doc)
#define JE(id, f, mn, mx, df, vals, name, al, doc)                                                 \
    ROW_I(id, GPUFIT_DOMAIN_JOB, GPUFIT_TYPE_ENUM, JOFF(f), mn, mx, df, vals, name, al, "", doc)
#define JB(id, f, df, name, doc)                                                                   \
    ROW_I(id, GPUFIT_DOMAIN_JOB, GPUFIT_TYPE_BOOL, JOFF(f), 0, 1, df, bool_values, name, NULL, "", \
          doc)
#define MD(id, f, name, doc)                                                                       \
    ROW_I(id, GPUFIT_DOMAIN_MODEL, GPUFIT_TYPE_ENUM, MOFF(f), -1, GPUFIT_DTYPE_F16_GGUF, -1,       \
          gpufit__dtype_names, name, NULL, "", doc)
#define JD(id, f, df, name, doc)                                                                   \
    ROW_I(id, GPUFIT_DOMAIN_JOB, GPUFIT_TYPE_ENUM, JOFF(f), -1, GPUFIT_DTYPE_F16_GGUF, df,         \
          gpufit__dtype_names, name, NULL, "", doc)

static const gpufit__param_entry table[] = {
    ME(GPUFIT_MODEL_ARCH, arch, 0, 3, 0, arch_values, "arch",
       "architecture family: decoder, encoder (BERT), encoder_decoder (T5), generic"),
    MI(GPUFIT_MODEL_N_LAYERS, n_layers, 1, 1 << 20, 0, "n_layers", "layers",
       "transformer layers (required unless encoder_decoder or generic)"),
    MI(GPUFIT_MODEL_HIDDEN_SIZE, hidden_size, 1, 1 << 24, 0, "hidden_size", "elements",
       "model width d_model"),
    MI(GPUFIT_MODEL_N_HEADS, n_heads, 1, 1 << 16, 0, "n_heads", "heads", "query heads"),
    MI(GPUFIT_MODEL_N_KV_HEADS, n_kv_heads, 0, 1 << 16, 0, "n_kv_heads", "heads",
       "key/value heads (GQA/MQA when fewer than n_heads); 0 = n_heads"),
    MI(GPUFIT_MODEL_HEAD_DIM, head_dim, 0, 1 << 16, 0, "head_dim", "elements",
       "head dimension; 0 = hidden_size / n_heads"),
    MI(GPUFIT_MODEL_FFN_HIDDEN_SIZE, ffn_hidden_size, 0, 1 << 26, 0, "ffn_hidden_size",
       "elements", "MLP intermediate size per branch"),
    ME(GPUFIT_MODEL_MLP, mlp, 0, 3, GPUFIT_MLP_SWIGLU, mlp_values, "mlp",
       "MLP type: gelu, relu (2 matrices), swiglu, geglu (gated, 3 matrices)"),
    MI(GPUFIT_MODEL_VOCAB_SIZE, vocab_size, 1, 1 << 28, 0, "vocab_size", "tokens",
       "vocabulary size (as padded in the checkpoint)"),
    MB(GPUFIT_MODEL_TIED_EMBEDDINGS, tied_embeddings, 0, "tied_embeddings",
       "output head shares the token embedding"),
    ME(GPUFIT_MODEL_NORM, norm, 0, 1, GPUFIT_NORM_RMSNORM, norm_values, "norm",
       "normalisation: layernorm or rmsnorm"),
    MB(GPUFIT_MODEL_QKV_BIAS, qkv_bias, 0, "qkv_bias", "biases on the q, k, v projections"),
    MB(GPUFIT_MODEL_MLP_BIAS, mlp_bias, 0, "mlp_bias", "biases on the MLP matrices"),
    MI(GPUFIT_MODEL_MAX_POSITION, max_position, 0, 1 << 26, 0, "max_position", "tokens",
       "learned absolute positions when > 0 (0 for RoPE/ALiBi/relative)"),
    ROW_I(GPUFIT_MODEL_O_BIAS, GPUFIT_DOMAIN_MODEL, GPUFIT_TYPE_INT, MOFF(o_bias), -1, 1, -1, NULL,
          "o_bias", NULL, "", "bias on the attention output projection; -1 = same as mlp_bias"),
    ROW_I(GPUFIT_MODEL_EMB_NORM, GPUFIT_DOMAIN_MODEL, GPUFIT_TYPE_INT, MOFF(emb_norm), -1, 1, -1,
          NULL, "emb_norm", NULL, "", "norm after the embedding; -1 = 1 for encoders, else 0"),
    MB(GPUFIT_MODEL_QK_NORM, qk_norm, 0, "qk_norm", "per-head q/k RMSNorm (Qwen3, OLMo-2)"),
    MI(GPUFIT_MODEL_ROPE_POSITIONS, rope_positions, 0, 1 << 26, 0, "rope_positions", "tokens",
       "rows of the RoPE cos/sin tables vLLM and SGLang precompute: config.json's "
       "max_position_embeddings (x the rope_scaling factor for linear, dynamic and yarn; "
       "summed over distinct tables, e.g. Gemma 3's local and global); 0 = none "
       "(docs/memory/vllm.md)"),
    MI(GPUFIT_MODEL_ROTARY_DIM, rotary_dim, 0, 1 << 16, 0, "rotary_dim", "elements",
       "rotated dimensions per head (partial_rotary_factor x head_dim); 0 = head_dim, or "
       "qk_rope_head_dim with multi-head latent attention"),
    MI(GPUFIT_MODEL_TYPE_VOCAB_SIZE, type_vocab_size, 0, 1 << 16, 0, "type_vocab_size", "tokens",
       "token-type embeddings (BERT: 2)"),
    MB(GPUFIT_MODEL_POOLER, pooler, 0, "pooler", "BERT pooler layer (h x h + h)"),
    MI(GPUFIT_MODEL_N_EXPERTS, n_experts, 0, 1 << 16, 0, "n_experts", "experts",
       "routed experts per MoE layer; 0 = dense"),
    MI(GPUFIT_MODEL_N_SHARED_EXPERTS, n_shared_experts, 0, 1 << 10, 0, "n_shared_experts",
       "experts", "shared (always active) experts per MoE layer; MoE models only"),
    MI(GPUFIT_MODEL_EXPERTS_PER_TOKEN, experts_per_token, 0, 1 << 16, 0, "experts_per_token",
       "experts", "routed experts per token (top-k); MoE models only"),
    MI(GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, moe_ffn_hidden_size, 0, 1 << 26, 0,
       "moe_ffn_hidden_size", "elements",
       "routed-expert intermediate size; 0 = ffn_hidden_size; MoE models only"),
    MI(GPUFIT_MODEL_N_DENSE_LAYERS, n_dense_layers, 0, 1 << 20, 0, "n_dense_layers", "layers",
       "leading dense layers of a MoE model; MoE models only"),
    MI(GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE, shared_ffn_hidden_size, 0, 1 << 26, 0,
       "shared_ffn_hidden_size", "elements", "shared-expert intermediate size; 0 = moe size; MoE models only"),
    MB(GPUFIT_MODEL_ROUTER_BIAS, router_bias, 0, "router_bias",
       "router bias or score-correction bias (one value per expert); MoE models only"),
    MB(GPUFIT_MODEL_SHARED_EXPERT_GATE, shared_expert_gate, 0, "shared_expert_gate",
       "sigmoid gate on the shared expert (Qwen2-MoE); MoE models only"),
    MI(GPUFIT_MODEL_Q_LORA_RANK, q_lora_rank, 0, 1 << 20, 0, "q_lora_rank", "elements",
       "MLA query compression rank; 0 = none; with kv_lora_rank only"),
    MI(GPUFIT_MODEL_KV_LORA_RANK, kv_lora_rank, 0, 1 << 20, 0, "kv_lora_rank", "elements",
       "MLA latent KV rank; 0 = standard attention"),
    MI(GPUFIT_MODEL_QK_NOPE_HEAD_DIM, qk_nope_head_dim, 0, 1 << 16, 0, "qk_nope_head_dim",
       "elements", "MLA non-rotary q/k head dimension; with kv_lora_rank only"),
    MI(GPUFIT_MODEL_QK_ROPE_HEAD_DIM, qk_rope_head_dim, 0, 1 << 16, 0, "qk_rope_head_dim",
       "elements", "MLA rotary head dimension (shared key); with kv_lora_rank only"),
    MI(GPUFIT_MODEL_V_HEAD_DIM, v_head_dim, 0, 1 << 16, 0, "v_head_dim", "elements",
       "MLA value head dimension; with kv_lora_rank only"),
    MI(GPUFIT_MODEL_N_ENCODER_LAYERS, n_encoder_layers, 0, 1 << 20, 0, "n_encoder_layers",
       "layers", "encoder layers of an encoder-decoder model; arch=encoder_decoder only"),
    MI(GPUFIT_MODEL_N_DECODER_LAYERS, n_decoder_layers, 0, 1 << 20, 0, "n_decoder_layers",
       "layers", "decoder layers of an encoder-decoder model; arch=encoder_decoder only"),
    MI(GPUFIT_MODEL_REL_POS_BUCKETS, rel_pos_buckets, 0, 1 << 16, 0, "rel_pos_buckets",
       "buckets", "T5 relative-position buckets (encoder-decoder)"),
    MI(GPUFIT_MODEL_SLIDING_WINDOW, sliding_window, 0, 1 << 26, 0, "sliding_window", "tokens",
       "sliding-window attention: tokens a local layer attends to (and caches); 0 = none"),
    MI(GPUFIT_MODEL_SLIDING_WINDOW_PATTERN, sliding_window_pattern, 0, 1 << 20, 0,
       "sliding_window_pattern", "layers",
       "with sliding_window: every N-th layer is global (layer i global when (i+1) % N == 0; "
       "Gemma 3: 6, Gemma 2 / GPT-OSS: 2); 0 or 1 = every layer local (Mistral v0.1)"),
    MI(GPUFIT_MODEL_N_CROSS_ATTN_LAYERS, n_cross_attn_layers, 0, 1 << 20, 0,
       "n_cross_attn_layers", "layers",
       "decoder layers that cross-attend to image states instead of self-attending (Mllama / "
       "Llama 3.2 Vision: 8 of 40), spread evenly"),
    MI(GPUFIT_MODEL_CROSS_ATTN_TOKENS, cross_attn_tokens, 0, 1 << 26, 0, "cross_attn_tokens",
       "tokens",
       "image tokens the cross-attention layers cache per sequence (Mllama: images x "
       "max_num_tiles x ((image_size / patch_size)^2 + 1) = 6404 for one 560-pixel image); "
       "0 = text-only requests"),
    MI(GPUFIT_MODEL_VISION_LAYERS, vision_layers, 0, 1 << 10, 0, "vision_layers", "layers",
       "vision encoder layers (multimodal models; docs/memory/multimodal.md); 0 = text only"),
    MI(GPUFIT_MODEL_VISION_HIDDEN_SIZE, vision_hidden_size, 0, 1 << 16, 0, "vision_hidden_size",
       "elements", "vision encoder width"),
    MI(GPUFIT_MODEL_VISION_HEADS, vision_heads, 0, 1 << 10, 0, "vision_heads", "heads",
       "vision encoder attention heads"),
    MI(GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE, vision_ffn_hidden_size, 0, 1 << 18, 0,
       "vision_ffn_hidden_size", "elements", "vision encoder MLP intermediate size"),
    MI(GPUFIT_MODEL_VISION_PATCH_SIZE, vision_patch_size, 0, 1 << 10, 0, "vision_patch_size",
       "pixels", "side of one image patch"),
    MI(GPUFIT_MODEL_VISION_IMAGE_SIZE, vision_image_size, 0, 1 << 16, 0, "vision_image_size",
       "pixels",
       "side of the largest image or tile the encoder sees (the servers' dummy image: CLIP 336, "
       "Qwen2-VL sqrt(max_pixels) = 3584)"),
    MI(GPUFIT_MODEL_VISION_MERGE, vision_merge, 1, 64, 1, "vision_merge", "patches",
       "patches merged per side into one text token (Qwen2-VL 2, Gemma 3 pooling 4); 1 = none"),
    ME(GPUFIT_MODEL_VISION_STYLE, vision_style, 0, 5, 0, vstyle_values, "vision_style",
       "vision encoder family: clip, siglip, qwen2_vl, qwen2_5_vl, pixtral, mllama"),
    ME(GPUFIT_MODEL_VISION_PROJECTOR, vision_projector, 0, 5, 0, vproj_values,
       "vision_projector",
       "projector into the text width: mlp (LLaVA), mlp_newline (LLaVA-NeXT), merger (Qwen2-VL), "
       "gemma3, mistral3, mllama"),
    MI(GPUFIT_MODEL_VISION_TILES, vision_tiles, 1, 64, 1, "vision_tiles", "tiles",
       "tiles (sub-images) the encoder runs per image (Llama 3.2 Vision: 4)"),
    MI(GPUFIT_MODEL_N_PARAMS, n_params, 0, (int64_t)1 << 50, 0, "n_params", "parameters",
       "generic model: parameter count"),
    ROW_F(GPUFIT_MODEL_ACTIVATION_BYTES_PER_TOKEN, GPUFIT_DOMAIN_MODEL,
          MOFF(activation_bytes_per_token), 0.0, 1e12, 0.0, "activation_bytes_per_token", NULL,
          "bytes", "generic model: activation bytes saved per token (training)"),
    MD(GPUFIT_MODEL_EMBEDDING_DTYPE, embedding_dtype, "embedding_dtype",
       "checkpoint storage of the token embedding; auto = the job's dense dtype"),
    MD(GPUFIT_MODEL_ATTENTION_DTYPE, attention_dtype, "attention_dtype",
       "checkpoint storage of attention projections (e.g. bf16 in FBGEMM fp8 releases); "
       "auto = the job's weight_dtype"),
    MD(GPUFIT_MODEL_MLP_DTYPE, mlp_dtype, "mlp_dtype",
       "checkpoint storage of the MLP (and shared experts); set: also the job's weight_dtype "
       "when that is auto"),
    MD(GPUFIT_MODEL_OUTPUT_DTYPE, output_dtype, "output_dtype",
       "checkpoint storage of the untied output head (lm_head); auto = the job's dense dtype"),
    MD(GPUFIT_MODEL_EXPERT_DTYPE, expert_dtype, "expert_dtype",
       "checkpoint storage of routed experts; auto = mlp_dtype, else the job's weight_dtype"),

    JE(GPUFIT_JOB_TASK, task, 0, 4, GPUFIT_TASK_INFERENCE, task_values, "task", NULL,
       "pretrain, finetune (full), lora, qlora, inference"),
    JI(GPUFIT_JOB_MICRO_BATCH, micro_batch, 1, 1 << 20, 1, "micro_batch", "mbs", "samples",
       "training samples per micro-batch per device"),
    JI(GPUFIT_JOB_SEQ_LEN, seq_len, 1, 1 << 26, 2048, "seq_len", NULL, "tokens",
       "training tokens per sample"),
    JI(GPUFIT_JOB_GLOBAL_BATCH, global_batch, 0, (int64_t)1 << 32, 0, "global_batch", "gbs",
       "samples",
       "samples per optimizer step; 0 = micro_batch x dp (accumulation = global/(micro x dp))"),
    JI(GPUFIT_JOB_BATCH, batch, 1, 1 << 20, 1, "batch", NULL, "sequences",
       "inference: concurrent sequences"),
    JI(GPUFIT_JOB_CONTEXT_LEN, context_len, 1, 1 << 26, 4096, "context_len", "ctx", "tokens",
       "inference: tokens held in the KV cache per sequence"),
    JI(GPUFIT_JOB_PROMPT_LEN, prompt_len, 0, 1 << 26, 0, "prompt_len", NULL, "tokens",
       "inference: tokens per forward pass (prefill chunk / n_ubatch); 0 = framework default"),
    JI(GPUFIT_JOB_LORA_RANK, lora_rank, 1, 1 << 16, 16, "lora_rank", NULL, "", "LoRA rank r"),
    JE(GPUFIT_JOB_LORA_TARGETS, lora_targets, 0, 2, GPUFIT_LORA_QV, lora_values, "lora_targets",
       NULL, "adapted matrices: qv, attention (q,k,v,o), all_linear"),
    JI(GPUFIT_JOB_LORA_MODULES, lora_modules, 0, 127, 0, "lora_modules", NULL, "",
       "adapted modules as a list (overrides lora_targets): q,k,v,o,gate,up,down or PEFT names "
       "q_proj ... down_proj, all-linear; stored as bits q=1 k=2 v=4 o=8 gate=16 up=32 "
       "down=64; 0 = lora_targets"),
    ROW_F(GPUFIT_JOB_LORA_DROPOUT, GPUFIT_DOMAIN_JOB, JOFF(lora_dropout), 0.0, 0.99, 0.0,
          "lora_dropout", NULL, "probability",
          "LoRA adapters' dropout (PEFT / torchtune lora_dropout): each adapted module keeps its "
          "own dropped copy of its input and the mask; 0 = none (PEFT's default)"),
    JD(GPUFIT_JOB_ADAPTER_DTYPE, adapter_dtype, -1, "adapter_dtype",
       "LoRA adapter weights and their gradients: fp32, bf16, fp16; auto = fp32 for "
       "framework=pytorch with trainer=hf (PEFT upcasts) unless grad_dtype is set, the model's "
       "dtype with trainer=torchtune, else grad_dtype"),
    JE(GPUFIT_JOB_TRAINER, trainer, -1, 2, -1, trainer_values, "trainer", NULL,
       "training front end of a framework=pytorch job: hf (Transformers Trainer, PEFT, "
       "accelerate), torchtune (tune run recipes: adapters in the model's dtype, chunked "
       "cross-entropy, config-key flags; docs/memory/torchtune.md) or loop (a training loop "
       "of one's own, as the PEFT and accelerate examples: hf's defaults, and the logits held "
       "through backward); auto = hf, with the logits' band reaching up to a loop's "
       "(docs/memory/pytorch-transients.md)"),
    JI(GPUFIT_JOB_N_GPU_LAYERS, n_gpu_layers, -1, 1 << 20, -1, "n_gpu_layers", "ngl", "layers",
       "inference: layers placed on the GPU, the rest in host memory; -1 = all; llama.cpp and "
       "PyTorch inference only (not vllm, sglang or training)"),
    ROW_F(GPUFIT_JOB_GPU_MEMORY_UTILIZATION, GPUFIT_DOMAIN_JOB, JOFF(gpu_memory_utilization), 0.0,
          1.0, 0.0, "gpu_memory_utilization", NULL, "fraction",
          "fraction of the GPU a server takes (KV cache gets the rest): vLLM's "
          "gpu_memory_utilization (default 0.92 from 0.21, 0.9 before), SGLang's "
          "mem_fraction_static (default from GPU memory, tp, release and model); 0 = framework "
          "default"),
    JI(GPUFIT_JOB_MAX_NUM_SEQS, max_num_seqs, 0, 1 << 20, 0, "max_num_seqs", NULL, "sequences",
       "servers: sequences per step, the rows the sampler is profiled with; 0 = vLLM's default "
       "(1024 on GPUs of 70 GiB or more, else 256)"),
    JI(GPUFIT_JOB_MM_ITEMS_PER_PROMPT, mm_items_per_prompt, -1, 1 << 20, -1,
       "mm_items_per_prompt", NULL, "images",
       "multimodal models: images per prompt (vLLM limit_mm_per_prompt; sizes the encoder "
       "profile); 0 = text only (vLLM skips the vision encoder); -1 = framework default (vLLM "
       "999, V0 1)"),
    JE(GPUFIT_JOB_PRECISION, precision, -1, 6, -1, precision_values, "precision", NULL,
       "policy: fp32, tf32, amp_fp16, amp_bf16, bf16, fp16, fp8; auto = amp_bf16 training "
       "(lora: a bf16 base under adapter_dtype adapters, as PEFT, litgpt and torchtune "
       "recipes load it), bf16 inference"),
    JD(GPUFIT_JOB_WEIGHT_DTYPE, weight_dtype, -1, "weight_dtype",
       "storage of the weights (incl. GGUF/GPTQ/AWQ/NF4); auto = from precision"),
    JD(GPUFIT_JOB_COMPUTE_DTYPE, compute_dtype, -1, "compute_dtype",
       "activations and matmul inputs; auto = from precision"),
    JD(GPUFIT_JOB_GRAD_DTYPE, grad_dtype, -1, "grad_dtype",
       "gradient buffers; auto = from precision and framework"),
    JD(GPUFIT_JOB_MASTER_WEIGHTS, master_weights, -1, "master_weights",
       "separate master copy of the weights (fp32) or none; auto = from precision and framework"),
    JD(GPUFIT_JOB_OPTIMIZER_DTYPE, optimizer_dtype, -1, "optimizer_dtype",
       "optimizer states; auto = from precision and framework"),
    JD(GPUFIT_JOB_KV_DTYPE, kv_dtype, -1, "kv_dtype",
       "KV cache elements (fp16, bf16, fp8, q8_0, q4_0, iq4_nl ...); auto = compute dtype"),
    JE(GPUFIT_JOB_OPTIMIZER, optimizer, 0, 7, GPUFIT_OPT_ADAMW, optimizer_values, "optimizer",
       NULL, "adamw, adam, sgd, sgd_momentum, adafactor, adamw_8bit, lion, none"),
    JE(GPUFIT_JOB_CHECKPOINTING, checkpointing, 0, 3, GPUFIT_CKPT_NONE, ckpt_values,
       "checkpointing", "ckpt",
       "activation checkpointing: none, selective (attention core), full (layer inputs), "
       "selective_op (torchtitan op-level: every other matmul output saved)"),
    JI(GPUFIT_JOB_CHECKPOINT_EVERY, checkpoint_every, 1, 1 << 20, 1, "checkpoint_every", NULL,
       "layers",
       "with checkpointing=full: checkpoint every N-th layer of a stage, the others keep all "
       "their activations (torchtitan selective_ac_option N); 1 = every layer"),
    JI(GPUFIT_JOB_CHECKPOINT_LAYERS, checkpoint_layers, 0, 1 << 20, 0, "checkpoint_layers", NULL,
       "layers",
       "with checkpointing=full: checkpoint only the first N layers of each pipeline stage "
       "(chunk) (Megatron --recompute-method block --recompute-num-layers N); 0 = every layer"),
    JB(GPUFIT_JOB_EXPANDABLE_SEGMENTS, expandable_segments, 0, "expandable_segments",
       "PyTorch's caching allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: "
       "blocks split to 512 B, so a tensor above 1 MiB keeps no rest of up to 1 MiB in "
       "memory_allocated (the band's high end of per-tensor weights, grads and optimizer "
       "states drops it; docs/memory/allocator.md); every framework but llamacpp"),
    JE(GPUFIT_JOB_OPTIMIZER_IMPL, optimizer_impl, -1, 2, -1, opt_impl_values, "optimizer_impl",
       NULL,
       "how torch.optim Adam/AdamW steps, which sets the step's temporaries: foreach (one "
       "state-sized list; torch.optim's default on CUDA since PyTorch 2.0), fused (none; HF "
       "optim=adamw_torch_fused, transformers' default with torch >= 2.8), forloop (two "
       "tensor-sized; PyTorch < 2.0, HF adamw_hf); auto = foreach with a band from fused to "
       "PyTorch 2.0's two lists (hf), fused (torchtune configs) "
       "(docs/memory/optimizer-step.md)"),
    JE(GPUFIT_JOB_ATTENTION, attention, -1, 2, -1, attention_values, "attention", NULL,
       "eager, sdpa, flash; auto = flash for megatron/vllm/sglang/llamacpp, sdpa for pytorch, "
       "eager for deepspeed"),
    ROW_F(GPUFIT_JOB_DROPOUT, GPUFIT_DOMAIN_JOB, JOFF(dropout), 0.0, 0.99, 0.0, "dropout", NULL,
          "probability", "dropout probability; 0 means no masks are kept"),
    JI(GPUFIT_JOB_DP, dp, 1, 1 << 24, 1, "dp", NULL, "GPUs", "data-parallel degree"),
    JI(GPUFIT_JOB_TP, tp, 1, 1 << 16, 1, "tp", NULL, "GPUs", "tensor-parallel degree"),
    JI(GPUFIT_JOB_PP, pp, 1, 1 << 16, 1, "pp", NULL, "stages", "pipeline-parallel stages"),
    JI(GPUFIT_JOB_VPP, vpp, 1, 1 << 10, 1, "vpp", NULL, "chunks",
       "virtual pipeline chunks per stage (interleaved schedule)"),
    JI(GPUFIT_JOB_CP, cp, 1, 1 << 16, 1, "cp", NULL, "GPUs", "context-parallel degree"),
    JI(GPUFIT_JOB_EP, ep, 1, 1 << 16, 1, "ep", NULL, "GPUs", "expert-parallel degree"),
    JI(GPUFIT_JOB_ETP, etp, 0, 1 << 16, 0, "etp", NULL, "GPUs",
       "expert tensor-parallel degree (Megatron-Core MoE parallel folding: experts split over "
       "etp x ep ranks); 0 = auto: tp when training, 1 for an expert-parallel server"),
    JB(GPUFIT_JOB_SP, sp, 0, "sp", "sequence parallelism alongside tensor parallelism"),
    JI(GPUFIT_JOB_ZERO, zero, 0, 3, 0, "zero", "fsdp", "stage",
       "ZeRO stage 0-3 (FSDP full shard = 3, shard-grad-op = 2)"),
    JE(GPUFIT_JOB_OFFLOAD, offload, 0, 2, GPUFIT_OFFLOAD_NONE, offload_values, "offload", NULL,
       "CPU offload: none, optimizer, optimizer_params"),
    JI(GPUFIT_JOB_GPUS, gpus, 0, 1 << 24, 0, "gpus", NULL, "GPUs",
       "total GPUs; 0 = dp x tp x pp x cp; given alone (dp, tp, pp, cp unset) the "
       "framework's layout: dp = gpus for training, tp = gpus for vllm and sglang, a layer "
       "split (pp = gpus) for llamacpp and pytorch inference"),
    JE(GPUFIT_JOB_PP_SCHEDULE, pp_schedule, -1, 2, -1, schedule_values, "pp_schedule", NULL,
       "pipeline schedule: 1f1b, interleaved, gpipe; auto = interleaved when vpp > 1, else 1f1b"),
    JI(GPUFIT_JOB_PP_FIRST_LAYERS, pp_first_layers, 0, 1 << 20, 0, "pp_first_layers", NULL,
       "layers", "layers on the first pipeline stage (uneven split); 0 = balanced"),
    JI(GPUFIT_JOB_PP_LAST_LAYERS, pp_last_layers, 0, 1 << 20, 0, "pp_last_layers", NULL,
       "layers", "layers on the last pipeline stage (uneven split); 0 = balanced"),
    JI(GPUFIT_JOB_ZERO_SHARD_SIZE, zero_shard_size, 0, 1 << 24, 0, "zero_shard_size", NULL,
       "GPUs", "ranks that ZeRO/FSDP shard over (FSDP hybrid shard: GPUs per node); 0 = dp"),
    JI(GPUFIT_JOB_REDUCE_BUCKET_SIZE, reduce_bucket_size, 0, (int64_t)1 << 40, 0,
       "reduce_bucket_size", NULL, "elements",
       "DeepSpeed ZeRO reduce bucket (zero_optimization.reduce_bucket_size); 0 = DeepSpeed's "
       "default 500000000; framework=deepspeed training only"),
    JE(GPUFIT_JOB_OVERLAP_COMM, overlap_comm, -1, 1, -1, overlap_values, "overlap_comm", NULL,
       "DeepSpeed zero_optimization.overlap_comm: auto (on for ZeRO-3 only, as DeepSpeed), off, "
       "on (a second reduce bucket under ZeRO-1/2; off under pipeline parallelism); "
       "framework=deepspeed training only"),
    JB(GPUFIT_JOB_SYNC_EACH_BATCH, sync_each_batch, 0, "sync_each_batch",
       "FSDP gradient accumulation (accelerate / HF Trainer): 1 = reduce-scatter every "
       "micro-batch; 0 = accelerate's default no_sync, which keeps full unsharded gradients "
       "until the last micro-batch; framework=pytorch training only"),
    JL(GPUFIT_JOB_TENSOR_SPLIT, tensor_split, 0.0, 1e6, "tensor_split", "share",
       ("share of the transformer layers on each pipeline stage, e.g. 3,1 (llama.cpp "
        "--tensor-split); one entry per stage; empty = balanced (by memory with device_gpus)")),
    ROW_I(GPUFIT_JOB_GPU, GPUFIT_DOMAIN_JOB, GPUFIT_TYPE_INT, JOFF(gpu), -1, 1 << 20, -1, NULL,
          "gpu", NULL, "",
          "GPU: a catalogue name or alias (gpufit gpus), or a capacity such as 24GiB; -1 = none"),
    JI(GPUFIT_JOB_GPU_MEMORY_BYTES, gpu_memory_bytes, 0, (int64_t)1 << 50, 0, "gpu_memory_bytes",
       NULL, "bytes",
       "device capacity override; 0 = the GPU's; not with gpu_memory_gib in the same document"),
    JE(GPUFIT_JOB_FRAMEWORK, framework, 0, 5, GPUFIT_FW_PYTORCH, framework_values, "framework",
       NULL, "pytorch, megatron, deepspeed, vllm, llamacpp, sglang: sets runtime defaults"),
    JI(GPUFIT_JOB_FRAMEWORK_VERSION, framework_version, 0, 999999999, 0, "framework_version", NULL,
       "version",
       "serving-engine release, written 0.6.3 or 0.19 (stored as major x 1000000 + minor x 1000 "
       "+ patch): selects vLLM's or SGLang's KV-budget rule (and vLLM's CUDA graphs); 0 = the "
       "current release (vLLM 0.27, SGLang 0.5.15); vllm and sglang only"),
    JI(GPUFIT_JOB_HOST_MEMORY_BYTES, host_memory_bytes, 0, (int64_t)1 << 50, 0,
       "host_memory_bytes", NULL, "bytes",
       "host RAM available to each GPU process, checked by the host role; 0 = unchecked"),
    JL(GPUFIT_JOB_DEVICE_GPUS, device_gpus, 0.0, 1048576.0, "device_gpus", "",
       ("the GPU of each pipeline stage, in order (catalogue names or ids), for machines with "
        "GPUs of different sizes; each stage is checked against its own GPU")),
    JL(GPUFIT_JOB_DEVICE_MEMORY_GIB, device_memory_gib, 0.001, 1048576.0, "device_memory_gib",
       "GiB",
       ("capacity of each pipeline stage's device in GiB, in order (e.g. 24,12), for GPUs not in "
        "the catalogue; overrides device_gpus' and the job's capacity per stage")),
    ROW_F(GPUFIT_JOB_GPU_MEMORY_GIB, GPUFIT_DOMAIN_JOB, JOFF(gpu_memory_gib), 0.0, 1048576.0, 0.0,
          "gpu_memory_gib", NULL, "GiB",
          "device capacity override in GiB (sets gpu_memory_bytes; not with it in the same "
          "document); a positive value below one byte is an error"),
    ROW_F(GPUFIT_JOB_MARGIN, GPUFIT_DOMAIN_JOB, JOFF(margin), 0.0, 0.5, 0.0, "margin", NULL,
          "fraction",
          "safety margin: share of each device's capacity the job must leave free; the verdict, "
          "--max, mitigations, recommend and plan check against capacity x (1 - margin) "
          "(docs/band.md); not with margin_bytes"),
    JI(GPUFIT_JOB_MARGIN_BYTES, margin_bytes, 0, BIG, 0, "margin_bytes", NULL, "bytes",
       "safety margin in bytes per device (e.g. 2GiB); not with margin"),
    JI(GPUFIT_JOB_CUDA_CONTEXT_BYTES, cuda_context_bytes, -1, BIG, -1, "cuda_context_bytes", NULL,
       "bytes", "CUDA context per process; -1 = framework default"),
    JI(GPUFIT_JOB_CUDA_VERSION, cuda_version, 0, 999999999, 0, "cuda_version", NULL, "version",
       "CUDA release, written 11.8 or 12.4 (stored like framework_version): lazy module loading "
       "(PyTorch from 11.7, others from 12.2) sets the CUDA context default; 0 = current 12.x "
       "(then the context's band also spans eager loading for PyTorch, DeepSpeed and Megatron "
       "on GPUs before Ada: docs/band.md)"),
    JI(GPUFIT_JOB_WORKSPACE_BYTES, workspace_bytes, -1, BIG, -1, "workspace_bytes", NULL, "bytes",
       "cuBLAS and other library workspaces (vllm and sglang: all non-torch memory, CUDA graphs "
       "included); -1 = framework default"),
    ROW_F(GPUFIT_JOB_FRAGMENTATION, GPUFIT_DOMAIN_JOB, JOFF(fragmentation), -1.0, 4.0, -1.0,
          "fragmentation", NULL, "fraction",
          "caching-allocator slack as a fraction of the dynamically allocated bytes (activations, "
          "logits, growing KV cache); -1 = framework default (0.25; 0 for servers and llama.cpp)"),
    JI(GPUFIT_JOB_MITIGATIONS, mitigations, 0, 12, 12, "mitigations", NULL, "",
       "how many mitigations gpufit_evaluate ranks when the job does not fit (0 = none, "
       "fastest)"),
    JB(GPUFIT_JOB_ALLOW_HARDWARE, allow_hardware, 0, "allow_hardware",
       "also list hardware fixes (another GPU, more GPUs) when software changes that keep the "
       "GPU make the job fit; by default they are listed only when none does "
       "(docs/mitigations.md)"),
};
#define N_PARAMS (sizeof table / sizeof table[0])

/* ---- lookup ------------------------------------------------------------------------- */
/* param_names[] (names and aliases, sorted) and param_row_of_id[] (each id's row), generated
 * from the table above by tools/gen_index.c (`make index`) */
#include "param_index.inc"

size_t gpufit__param_count(void)
{
    return N_PARAMS;
}

const gpufit__param_entry *gpufit__param_find_linear(int32_t id)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (table[i].id == id)
            return &table[i];
    return NULL;
}

const gpufit__param_entry *gpufit__param_find(int32_t id)
{
    if (id >= 0 && id <= PARAM_ID_MAX) {
        int r = param_row_of_id[id];
        if (r >= 0 && (size_t)r < N_PARAMS && table[r].id == id)
            return &table[r];
    }
    return gpufit__param_find_linear(id); /* an unknown id, or a stale index */
}

const gpufit__param_entry *gpufit__param_at(size_t i)
{
    return i < N_PARAMS ? &table[i] : NULL;
}

GPUFIT__COLD static int alias_match(const char *aliases, const char *name, size_t len)
{
    const char *p = aliases;
    while (p != NULL && *p != '\0') {
        const char *e = strchr(p, ' ');
        size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
        if (n == len && memcmp(p, name, len) == 0)
            return 1;
        p = e != NULL ? e + 1 : NULL;
    }
    return 0;
}

const gpufit__param_entry *gpufit__param_find_name_linear(const char *name, size_t len)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (table[i].name_len == len && memcmp(table[i].name, name, len) == 0)
            return &table[i];
    for (size_t i = 0; i < N_PARAMS; i++)
        if (table[i].aliases != NULL && alias_match(table[i].aliases, name, len))
            return &table[i];
    return NULL;
}

/* The reference scan, out of line: the index answers every known name. */
GPUFIT__COLD static const gpufit__param_entry *find_name_scan(const char *name, size_t len)
{
    return gpufit__param_find_name_linear(name, len);
}

/* The hashed lookup from slot h on (gpufit__name_hash(name, len) & the mask). */
GPUFIT__NOINLINE static const gpufit__param_entry *
find_name_from(const char *name, size_t len, size_t h)
{
    /* the generated hash table (param_index.inc): each slot names a row of the table, which
     * is compared with the name itself (an alias slot with its aliases) */
    size_t mask = param_names_SLOTS - 1;
    for (size_t probes = 0; probes <= mask; probes++, h = (h + 1) & mask) {
        unsigned slot = param_names_hash[h];
        unsigned idx = slot & ~(unsigned)PARAM_HASH_ALIAS; /* 1 + the row; 0 = empty */
        if (idx == 0 || idx > N_PARAMS)
            break; /* an empty slot ends the probe sequence */
        size_t r = idx - 1;
        const gpufit__param_entry *e = &table[r];
        if ((slot & PARAM_HASH_ALIAS) == 0 ? e->name_len == len && gpufit__bytes_eq(e->name, name, len)
                                           : e->aliases != NULL && alias_match(e->aliases, name, len))
            return e;
    }
    /* not in the index (an unknown name, or a stale index): the scan is the reference */
    return find_name_scan(name, len);
}

/* The row of a name found in its own hash slot (the usual key: no probing, not an alias), or
 * N_PARAMS; *h gets the slot where find_name_from goes on. */
static inline size_t find_name_first(const char *name, size_t len, size_t *h)
{
    *h = gpufit__name_hash(name, len) & (param_names_SLOTS - 1);
    size_t s = param_names_hash[*h]; /* 1 + the row; 0 (empty) or an alias slot: past it */
    return s != 0 && s <= N_PARAMS && table[s - 1].name_len == len &&
                   gpufit__bytes_eq(table[s - 1].name, name, len)
               ? s - 1
               : N_PARAMS;
}

const gpufit__param_entry *gpufit__param_find_name(const char *name, size_t len)
{
    size_t h, r = find_name_first(name, len, &h);
    return r < N_PARAMS ? &table[r] : find_name_from(name, len, h);
}

/* ---- applicability: keys that only mean something for some models or jobs ------------- */
typedef struct applies_row {
    int32_t domain; /* the id's domain (the check skips the other's rows without a lookup) */
    int32_t id;
    size_t offset; /* of the id's int64_t field (gpufit__applies_consistent checks both) */
    uint32_t needs; /* GPUFIT__AP_* */
    const char *where;
} applies_row;

/* One row per key that does not apply everywhere. A value other than the default elsewhere
 * is an error: gpufit cannot tell a typo from an intention, and the answer would silently
 * ignore it. The model's rows come first (APPLIES_MODEL_ROWS of them), so that a check walks
 * its own domain's rows only (gpufit__applies_consistent checks the order). */
#define APPLIES_MODEL_ROWS 13
static const applies_row applies[] = {
#define MOE_ONLY "mixture-of-experts models (n_experts > 0)"
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_EXPERTS_PER_TOKEN, MOFF(experts_per_token), GPUFIT__AP_MOE, MOE_ONLY},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_N_SHARED_EXPERTS, MOFF(n_shared_experts), GPUFIT__AP_MOE, MOE_ONLY},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, MOFF(moe_ffn_hidden_size), GPUFIT__AP_MOE, MOE_ONLY},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_N_DENSE_LAYERS, MOFF(n_dense_layers), GPUFIT__AP_MOE, MOE_ONLY},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE, MOFF(shared_ffn_hidden_size), GPUFIT__AP_MOE, MOE_ONLY},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_ROUTER_BIAS, MOFF(router_bias), GPUFIT__AP_MOE, MOE_ONLY},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_SHARED_EXPERT_GATE, MOFF(shared_expert_gate), GPUFIT__AP_MOE, MOE_ONLY},
#undef MOE_ONLY
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_N_ENCODER_LAYERS, MOFF(n_encoder_layers), GPUFIT__AP_ENCDEC, "encoder-decoder models (arch=encoder_decoder)"},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_N_DECODER_LAYERS, MOFF(n_decoder_layers), GPUFIT__AP_ENCDEC, "encoder-decoder models (arch=encoder_decoder)"},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_Q_LORA_RANK, MOFF(q_lora_rank), GPUFIT__AP_MLA, "multi-head latent attention (kv_lora_rank > 0)"},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_QK_NOPE_HEAD_DIM, MOFF(qk_nope_head_dim), GPUFIT__AP_MLA, "multi-head latent attention (kv_lora_rank > 0)"},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_QK_ROPE_HEAD_DIM, MOFF(qk_rope_head_dim), GPUFIT__AP_MLA, "multi-head latent attention (kv_lora_rank > 0)"},
    {GPUFIT_DOMAIN_MODEL, GPUFIT_MODEL_V_HEAD_DIM, MOFF(v_head_dim), GPUFIT__AP_MLA, "multi-head latent attention (kv_lora_rank > 0)"},
    {GPUFIT_DOMAIN_JOB, GPUFIT_JOB_TRAINER, JOFF(trainer), GPUFIT__AP_PT_TRAIN, "training with framework=pytorch"},
    {GPUFIT_DOMAIN_JOB, GPUFIT_JOB_OPTIMIZER_IMPL, JOFF(optimizer_impl), GPUFIT__AP_PT_TRAIN, "training with framework=pytorch"},
    {GPUFIT_DOMAIN_JOB, GPUFIT_JOB_EXPANDABLE_SEGMENTS, JOFF(expandable_segments), GPUFIT__AP_TORCH, "frameworks on PyTorch's caching allocator (every one but llamacpp)"},
    {GPUFIT_DOMAIN_JOB, GPUFIT_JOB_N_GPU_LAYERS, JOFF(n_gpu_layers), GPUFIT__AP_OFFLOAD,
     "inference with llama.cpp or PyTorch (vLLM and SGLang keep every layer on the GPU; "
     "training offloads no layers)"},
};

int32_t gpufit__check_applies(int32_t domain, const void *h, uint32_t have, gpufit_error *err)
{
    /* the default of each field, from the generated initialisers (when they are current) */
    const char *def = N_PARAMS != PARAM_INDEX_ROWS   ? NULL
                      : domain == GPUFIT_DOMAIN_MODEL ? (const char *)&model_default
                                                      : (const char *)&job_default;
    size_t begin = domain == GPUFIT_DOMAIN_MODEL ? 0 : APPLIES_MODEL_ROWS,
           end = domain == GPUFIT_DOMAIN_MODEL ? APPLIES_MODEL_ROWS
                                               : sizeof applies / sizeof applies[0];
    for (size_t i = begin; i < end; i++) {
        if (applies[i].domain != domain || (applies[i].needs & have) != 0)
            continue;
        int64_t x, d;
        if (def != NULL) { /* the usual case: the field equals its default */
            memcpy(&x, (const char *)h + applies[i].offset, sizeof x);
            memcpy(&d, def + applies[i].offset, sizeof d);
            if (x == d)
                continue;
        }
        const gpufit__param_entry *e = gpufit__param_find(applies[i].id);
        if (e == NULL || e->domain != domain)
            continue;
        const char *f = (const char *)h + e->offset;
        double v = e->is_double ? *(const double *)f : (double)*(const int64_t *)f;
        if (v == (e->is_double ? e->def_f : (double)e->def_i))
            continue;
        /* an enum value by its name (trainer = hf), a number as a number */
        const char *vn = e->is_double ? NULL : gpufit_param_value_name(e->id, (int64_t)v);
        if (vn != NULL)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, e->id, UINT64_MAX,
                                "%s = %s does not apply here: it applies to %s (leave it out)",
                                e->name, vn, applies[i].where);
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, e->id, UINT64_MAX,
                            "%s = %g does not apply here: it applies to %s (leave it out)",
                            e->name, v, applies[i].where);
    }
    return GPUFIT_OK;
}

int gpufit__applies_consistent(void)
{
    for (size_t i = 0; i < sizeof applies / sizeof applies[0]; i++) {
        const gpufit__param_entry *e = gpufit__param_find(applies[i].id);
        if (e == NULL || e->domain != applies[i].domain || e->is_double ||
            e->type == GPUFIT_TYPE_LIST || e->offset != applies[i].offset ||
            (applies[i].domain == GPUFIT_DOMAIN_MODEL) != (i < APPLIES_MODEL_ROWS))
            return 0;
    }
    return 1;
}

/* ---- one document: duplicate and conflicting keys ------------------------------------ */
_Static_assert((param_names_SLOTS & (param_names_SLOTS - 1)) == 0, "a power of two");
_Static_assert(N_PARAMS + 1 <= GPUFIT__DOC_KEYS_MAX, "gpufit__doc_keys holds every parameter");

void gpufit__doc_keys_init(gpufit__doc_keys *d)
{
    memset(d->seen, 0, sizeof d->seen);
}

static int doc_seen(const gpufit__doc_keys *d, size_t slot)
{
    return slot < GPUFIT__DOC_KEYS_MAX && (d->seen[slot / 64] >> (slot % 64) & 1u) != 0;
}

/* pairs that set the same thing two ways: the capacity depended on their order */
static const int32_t conflicts[][2] = {{GPUFIT_JOB_GPU_MEMORY_GIB, GPUFIT_JOB_GPU_MEMORY_BYTES}};
_Static_assert(sizeof conflicts / sizeof conflicts[0] == 1, "gpufit__doc_find tests one pair");

GPUFIT__COLD static int32_t doc_entry_full(gpufit__doc_keys *d, const gpufit__param_entry *e,
                                          const char *key, size_t klen, uint64_t offset,
                                          gpufit_error *err);

int32_t gpufit__doc_entry(gpufit__doc_keys *d, const gpufit__param_entry *e, const char *key,
                          size_t klen, uint64_t offset, gpufit_error *err)
{
    /* the usual key: not seen before, in no conflicting pair (a small function: the reports
     * are in doc_entry_full) */
    size_t slot = e == NULL ? N_PARAMS : (size_t)(e - table);
    int32_t id = e == NULL ? 0 : e->id;
    int paired = 0;
    for (size_t c = 0; c < sizeof conflicts / sizeof conflicts[0]; c++)
        paired |= id != 0 && (conflicts[c][0] == id || conflicts[c][1] == id);
    if (paired || doc_seen(d, slot))
        return doc_entry_full(d, e, key, klen, offset, err);
    d->seen[slot / 64] |= (uint64_t)1 << (slot % 64);
    d->at[slot] = offset + 1;
    return GPUFIT_OK;
}

static int32_t doc_entry_full(gpufit__doc_keys *d, const gpufit__param_entry *e, const char *key,
                              size_t klen, uint64_t offset, gpufit_error *err)
{
    size_t slot = e == NULL ? N_PARAMS : (size_t)(e - table);
    const char *name = e == NULL ? "model" : e->name;
    int32_t id = e == NULL ? 0 : e->id;
    if (doc_seen(d, slot))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, id, offset,
                            "duplicate key '%s' (at bytes %llu and %llu; '%.*s' the second time): "
                            "give each key once",
                            name, (unsigned long long)(d->at[slot] - 1),
                            (unsigned long long)offset, (int)(klen > 64 ? 64 : klen), key);
    for (size_t c = 0; id != 0 && c < sizeof conflicts / sizeof conflicts[0]; c++) {
        for (int side = 0; side < 2; side++) {
            if (conflicts[c][side] != id)
                continue;
            const gpufit__param_entry *o = gpufit__param_find(conflicts[c][1 - side]);
            size_t os = (size_t)(o - table);
            if (doc_seen(d, os))
                return gpufit__fail(err, GPUFIT_E_INCONSISTENT, id, offset,
                                    "'%s' (byte %llu) and '%s' (byte %llu) both set the GPU "
                                    "capacity: give one of them",
                                    o->name, (unsigned long long)(d->at[os] - 1), name,
                                    (unsigned long long)offset);
        }
    }
    d->seen[slot / 64] |= (uint64_t)1 << (slot % 64);
    d->at[slot] = offset + 1;
    return GPUFIT_OK;
}

/* gpufit__doc_find past its usual key: probing, aliases, unknown keys, duplicates. */
GPUFIT__NOINLINE static int32_t doc_find_rest(gpufit__doc_keys *d,
                                              const char *key,
                                              size_t klen,
                                              uint64_t offset,
                                              const gpufit__param_entry **out,
                                              gpufit_error *err)
{
    /* the probe from the key's slot: the entry gpufit__doc_find found there, or another */
    size_t h = gpufit__name_hash(key, klen) & (param_names_SLOTS - 1);
    const gpufit__param_entry *e = find_name_from(key, klen, h);
    *out = e;
    return e != NULL ? gpufit__doc_entry(d, e, key, klen, offset, err) : GPUFIT_OK;
}

int32_t gpufit__doc_find(gpufit__doc_keys *d,
                         const char *key,
                         size_t klen,
                         uint64_t offset,
                         const gpufit__param_entry **out,
                         gpufit_error *err)
{
    size_t h, r = find_name_first(key, klen, &h);
    /* the usual key, as gpufit__doc_entry records it (its row is its slot); the rest in a
     * function of its own, so that this one saves no registers */
    if (r >= N_PARAMS || table[r].id == conflicts[0][0] || table[r].id == conflicts[0][1] ||
        doc_seen(d, r))
        return doc_find_rest(d, key, klen, offset, out, err);
    *out = &table[r];
    d->seen[r / 64] |= (uint64_t)1 << (r % 64);
    d->at[r] = offset + 1;
    return GPUFIT_OK;
}

int32_t gpufit__doc_key(gpufit__doc_keys *d, const char *key, size_t klen, uint64_t offset,
                        gpufit_error *err)
{
    const gpufit__param_entry *e = NULL;
    if (!(klen == 5 && memcmp(key, "model", 5) == 0) &&
        (e = gpufit__param_find_name(key, klen)) == NULL)
        return GPUFIT_OK;
    return gpufit__doc_entry(d, e, key, klen, offset, err);
}

static void *field_of(const gpufit__param_entry *e, struct gpufit_model *m, struct gpufit_job *j)
{
    char *base = e->domain == GPUFIT_DOMAIN_MODEL ? (char *)m : (char *)j;
    return base != NULL ? base + e->offset : NULL;
}

static void set_default(const gpufit__param_entry *e, void *f)
{
    if (e->is_double)
        *(double *)f = e->def_f;
    else
        *(int64_t *)f = e->def_i;
}

/* All-zero bytes, then the rows with another default (model_default_rows[] and
 * job_default_rows[] in param_index.inc; lists start empty). */
static void defaults(int32_t domain, void *h, const uint16_t *rows, size_t n_rows)
{
    /* every row when rows is NULL or rows were added or removed since `make index` */
    int walk = rows == NULL || N_PARAMS != PARAM_INDEX_ROWS;
    size_t n = walk ? N_PARAMS : n_rows;
    for (size_t i = 0; i < n; i++) {
        size_t r = walk ? i : rows[i];
        if (r < N_PARAMS && table[r].domain == domain && table[r].type != GPUFIT_TYPE_LIST)
            set_default(&table[r], (char *)h + table[r].offset);
    }
}

void gpufit__model_defaults(struct gpufit_model *m)
{
    /* the parameters, then the cache marked stale: nothing reads the cache's other fields
     * (shape, counts, groups, aggregates) or the arrays past their counts until a refresh
     * writes them (cache_state 1), so they are left as they are */
    if (N_PARAMS == PARAM_INDEX_ROWS) { /* the generated initialiser is current */
        memcpy(m, &model_default, offsetof(struct gpufit_model, gguf_layer_bytes));
    } else {
        memset(m, 0, offsetof(struct gpufit_model, gguf_layer_bytes));
        defaults(GPUFIT_DOMAIN_MODEL, m, model_default_rows,
                 sizeof model_default_rows / sizeof model_default_rows[0]);
    }
    m->cache_state = 0;
    m->cache_ng = 0;
    m->from_unknown_type = 0;
    memcpy(m->name, "custom", sizeof "custom");
}

void gpufit__model_defaults_walk(struct gpufit_model *m)
{
    memset(m, 0, sizeof *m);
    defaults(GPUFIT_DOMAIN_MODEL, m, NULL, 0);
    memcpy(m->name, "custom", sizeof "custom");
}

void gpufit__job_defaults(struct gpufit_job *j)
{
    if (N_PARAMS == PARAM_INDEX_ROWS) { /* the generated initialiser is current */
        /* the parameters and plan_state 0: the plan is not read until it is resolved */
        memcpy(j, &job_default, offsetof(struct gpufit_job, plan));
    } else {
        memset(j, 0, sizeof *j);
        defaults(GPUFIT_DOMAIN_JOB, j, job_default_rows,
                 sizeof job_default_rows / sizeof job_default_rows[0]);
    }
}

void gpufit__job_defaults_walk(struct gpufit_job *j)
{
    memset(j, 0, sizeof *j);
    defaults(GPUFIT_DOMAIN_JOB, j, NULL, 0);
}

/* ---- typed set/get ------------------------------------------------------------------ */
static int enum_has(const gpufit__param_entry *e, int64_t v)
{
    if (e->values == NULL)
        return 1;
    for (const gpufit__enum_value *ev = e->values; ev->name != NULL; ev++)
        if (ev->value == v)
            return 1;
    return 0;
}

GPUFIT__COLD
static int32_t not_a_list(const gpufit__param_entry *e, uint64_t offset, gpufit_error *err)
{
    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                        "%s is a list: set it with gpufit_job_set_list or as %s=a,b,...", e->name,
                        e->name);
}

/* Why set_int refuses v, or GPUFIT_OK when it takes it (out of line: the reports). */
GPUFIT__COLD static int32_t set_int_refused(const gpufit__param_entry *e, int64_t v,
                                            uint64_t offset, gpufit_error *err)
{
    if (e->type == GPUFIT_TYPE_LIST)
        return not_a_list(e, offset, err);
    if (e->is_double)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s takes a number with a fraction: set it as a float", e->name);
    if (v < e->min_i || v > e->max_i)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s = %lld is out of range [%lld, %lld]", e->name, (long long)v,
                            (long long)e->min_i, (long long)e->max_i);
    if (e->type == GPUFIT_TYPE_ENUM && !enum_has(e, v))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s = %lld is not a valid value", e->name, (long long)v);
    if (e->id == GPUFIT_JOB_GPU && v >= 0 && gpufit__gpu_by_id(v) == NULL)
        return gpufit__fail(err, GPUFIT_E_NOT_FOUND, e->id, offset,
                            "gpu id %lld is not in the catalogue", (long long)v);
    return GPUFIT_OK;
}

/* Stores v, checked, and marks the handle's derived state stale. */
static void store_int(const gpufit__param_entry *e, struct gpufit_model *m,
                      struct gpufit_job *j, int64_t v)
{
    *(int64_t *)field_of(e, m, j) = v;
    if (e->domain == GPUFIT_DOMAIN_MODEL)
        m->cache_state = 0;
    else
        j->plan_state = 0;
    if (e->id == GPUFIT_JOB_GPU) { /* a new GPU drops any capacity-only description */
        j->gpu_memory_bytes = 0;
        j->gpu_memory_gib = 0.0;
        j->gpu_name[0] = '\0';
    } else if (e->id == GPUFIT_JOB_GPU_MEMORY_BYTES) {
        j->gpu_memory_gib = (double)v / 1073741824.0;
    }
}

static int32_t set_int(const gpufit__param_entry *e, struct gpufit_model *m,
                       struct gpufit_job *j, int64_t v, uint64_t offset, gpufit_error *err)
{
    /* the checks of set_int_refused, which reports the first that fails */
    if (e->type == GPUFIT_TYPE_LIST || e->is_double || v < e->min_i || v > e->max_i ||
        (e->type == GPUFIT_TYPE_ENUM && !enum_has(e, v)) ||
        (e->id == GPUFIT_JOB_GPU && v >= 0 && gpufit__gpu_by_id(v) == NULL))
        return set_int_refused(e, v, offset, err);
    store_int(e, m, j, v);
    return GPUFIT_OK;
}

/* set_int for a value taken from e's own names (e->values): one of its values by
 * construction, so the walk over them is left out; every other check is set_int's. */
static int32_t set_named(const gpufit__param_entry *e, struct gpufit_model *m,
                         struct gpufit_job *j, int64_t v, uint64_t offset, gpufit_error *err)
{
    if (e->type == GPUFIT_TYPE_LIST || e->is_double || v < e->min_i || v > e->max_i ||
        (e->id == GPUFIT_JOB_GPU && v >= 0 && gpufit__gpu_by_id(v) == NULL))
        return set_int_refused(e, v, offset, err);
    store_int(e, m, j, v);
    return GPUFIT_OK;
}

static int32_t set_float(const gpufit__param_entry *e, struct gpufit_model *m,
                         struct gpufit_job *j, double v, uint64_t offset, gpufit_error *err)
{
    if (e->type == GPUFIT_TYPE_LIST)
        return not_a_list(e, offset, err);
    if (!e->is_double) {
        /* Integral floats are accepted for integer parameters (JSON writes 1.0 sometimes). */
        if (isfinite(v) && v == floor(v) && fabs(v) > 9.0e15)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                                "%s = %g is out of range [%lld, %lld]", e->name, v,
                                (long long)e->min_i, (long long)e->max_i);
        if (!isfinite(v) || v != floor(v))
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                                "%s takes an integer", e->name);
        return set_int(e, m, j, (int64_t)v, offset, err);
    }
    if (!isfinite(v))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s must be a finite number", e->name);
    if (v < e->min_f || v > e->max_f)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s = %g is out of range [%g, %g]", e->name, v, e->min_f, e->max_f);
    /* a positive capacity that rounds to 0 bytes would read as "unset": the full GPU */
    if (e->id == GPUFIT_JOB_GPU_MEMORY_GIB && v > 0.0 && gpufit__gib_bytes(v) == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s = %g is below one byte: give at least 1 byte, or 0 for the "
                            "GPU's own capacity",
                            e->name, v);
    *(double *)field_of(e, m, j) = v;
    if (e->domain == GPUFIT_DOMAIN_MODEL)
        m->cache_state = 0;
    else
        j->plan_state = 0;
    if (e->id == GPUFIT_JOB_GPU_MEMORY_GIB)
        j->gpu_memory_bytes = (int64_t)gpufit__gib_bytes(v);
    return GPUFIT_OK;
}

int32_t gpufit__set_param(struct gpufit_model *m, struct gpufit_job *j, int32_t id, int64_t iv,
                          double fv, gpufit_error *err)
{
    const gpufit__param_entry *e = gpufit__param_find(id);
    if (e == NULL)
        return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, id, UINT64_MAX,
                            "unknown parameter id %d", (int)id);
    return gpufit__set_entry(e, m, j, iv, fv, err);
}

/* The typed setters of one table entry, for the public setters (api/setters.c). */
static int32_t set_list(const gpufit__param_entry *e, struct gpufit_job *j, const double *v,
                        uint32_t n, uint64_t offset, gpufit_error *err);
int32_t gpufit__param_set_int(const gpufit__param_entry *e, struct gpufit_model *m,
                              struct gpufit_job *j, int64_t v, gpufit_error *err)
{
    return set_int(e, m, j, v, UINT64_MAX, err);
}

int32_t gpufit__param_set_float(const gpufit__param_entry *e, struct gpufit_model *m,
                                struct gpufit_job *j, double v, gpufit_error *err)
{
    return set_float(e, m, j, v, UINT64_MAX, err);
}

int32_t gpufit__param_set_list(const gpufit__param_entry *e, struct gpufit_job *j,
                               const double *v, uint32_t n, gpufit_error *err)
{
    return set_list(e, j, v, n, UINT64_MAX, err);
}

int32_t gpufit__set_entry(const gpufit__param_entry *e, struct gpufit_model *m,
                          struct gpufit_job *j, int64_t iv, double fv, gpufit_error *err)
{
    if (e->domain == GPUFIT_DOMAIN_MODEL ? m == NULL : j == NULL)
        return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, e->id, UINT64_MAX,
                            "unknown parameter id %d", (int)e->id);
    return e->is_double ? set_float(e, m, j, fv, UINT64_MAX, err)
                        : set_int(e, m, j, iv, UINT64_MAX, err);
}

const gpufit__param_entry *gpufit__param_checked(int32_t p, int32_t domain, gpufit_error *err,
                                                int32_t *status)
{
    const gpufit__param_entry *e = gpufit__param_find(p);
    if (e == NULL) {
        *status = gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, p, UINT64_MAX,
                               "unknown parameter id %d", (int)p);
        return NULL;
    }
    if (e->domain != domain) {
        *status = gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, p, UINT64_MAX,
                               "%s is a %s parameter", e->name,
                               e->domain == GPUFIT_DOMAIN_MODEL ? "model" : "job");
        return NULL;
    }
    *status = GPUFIT_OK;
    return e;
}

static int32_t get_any(const gpufit__param_entry *e, const void *h, int want_double, void *out,
                       gpufit_error *err)
{
    if (out == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, UINT64_MAX, "out is NULL");
    if (e->type == GPUFIT_TYPE_LIST)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, UINT64_MAX,
                            "%s is a list: read it with gpufit_job_get_list", e->name);
    const char *f = (const char *)h + e->offset;
    if (want_double) {
        *(double *)out = e->is_double ? *(const double *)f : (double)*(const int64_t *)f;
    } else {
        if (e->is_double)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, UINT64_MAX,
                                "%s is a float parameter", e->name);
        *(int64_t *)out = *(const int64_t *)f;
    }
    gpufit__ok(err);
    return GPUFIT_OK;
}

int32_t gpufit_model_get_int(const gpufit_model *m, int32_t p, int64_t *out, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(m, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_MODEL, err, &st);
    return e == NULL ? st : get_any(e, m, 0, out, err);
}

int32_t gpufit_model_get_float(const gpufit_model *m, int32_t p, double *out, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(m, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_MODEL, err, &st);
    return e == NULL ? st : get_any(e, m, 1, out, err);
}

int32_t gpufit_job_get_int(const gpufit_job *j, int32_t p, int64_t *out, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(j, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_JOB, err, &st);
    return e == NULL ? st : get_any(e, j, 0, out, err);
}

int32_t gpufit_job_get_float(const gpufit_job *j, int32_t p, double *out, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(j, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_JOB, err, &st);
    return e == NULL ? st : get_any(e, j, 1, out, err);
}

/* ---- list parameters --------------------------------------------------------------- */
/* Checks and stores a list: count, finite elements in range, GPU ids in the catalogue, a
 * split with a positive sum. */
static int32_t set_list(const gpufit__param_entry *e, struct gpufit_job *j, const double *v,
                        uint32_t n, uint64_t offset, gpufit_error *err)
{
    if (e->type != GPUFIT_TYPE_LIST)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset, "%s is not a list",
                            e->name);
    if (n > GPUFIT_LIST_MAX)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s has %u entries; at most %d", e->name, n, GPUFIT_LIST_MAX);
    if (n > 0 && v == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset, "%s: values are NULL",
                            e->name);
    gpufit__list l;
    memset(&l, 0, sizeof l);
    double sum = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        if (!isfinite(v[i]) || v[i] < e->min_f || v[i] > e->max_f)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                                "%s entry %u (%g) is out of range [%g, %g]", e->name, i + 1,
                                v[i], e->min_f, e->max_f);
        if (e->id == GPUFIT_JOB_DEVICE_GPUS &&
            (v[i] != floor(v[i]) || gpufit__gpu_by_id((int64_t)v[i]) == NULL))
            return gpufit__fail(err, GPUFIT_E_NOT_FOUND, e->id, offset,
                                "%s entry %u (%g) is not a catalogue GPU id", e->name, i + 1,
                                v[i]);
        l.v[i] = v[i];
        sum += v[i];
    }
    if (e->id == GPUFIT_JOB_TENSOR_SPLIT && n > 0 && !(sum > 0.0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s needs at least one share above 0", e->name);
    l.n = n;
    *(gpufit__list *)field_of(e, NULL, j) = l;
    j->plan_state = 0;
    return GPUFIT_OK;
}


int32_t gpufit_job_get_list(const gpufit_job *j, int32_t p, double *v, uint32_t cap,
                            uint32_t *n_out, gpufit_error *err)
{
    int32_t st;
    GPUFIT__NULL_CHECK(j, p);
    const gpufit__param_entry *e = gpufit__param_checked(p, GPUFIT_DOMAIN_JOB, err, &st);
    if (e == NULL)
        return st;
    if (e->type != GPUFIT_TYPE_LIST)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, p, UINT64_MAX,
                            "%s is not a list: read it with gpufit_job_get_int/_float", e->name);
    const gpufit__list *l = (const gpufit__list *)((const char *)j + e->offset);
    if (n_out != NULL)
        *n_out = l->n;
    if (cap < l->n)
        return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, p, UINT64_MAX,
                            "%s has %u entries; the buffer holds %u", e->name, l->n, cap);
    if (l->n > 0 && v == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, p, UINT64_MAX, "values are NULL");
    for (uint32_t i = 0; i < l->n; i++)
        v[i] = l->v[i];
    gpufit__ok(err);
    return GPUFIT_OK;
}

/* ---- text values (spec strings and JSON scalars) ------------------------------------ */
/* Parses a finite decimal number with an optional binary-unit suffix (KiB, MiB, GiB, TiB, or
 * K/M/G/T read as powers of 1024) into *out; returns 0 on success. */
static int parse_number(const char *s, size_t n, double *out, double *unit_out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return -1;
    if (n <= 15) { /* plain decimal digits: exact below 2^53, what strtod gives */
        uint64_t x = 0;
        size_t i = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            x = x * 10 + (uint64_t)(s[i] - '0');
        if (i == n) {
            *out = (double)x;
            *unit_out = 1.0;
            return 0;
        }
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++) /* strtod would accept "nan", "inf" and hex forms */
        if (!((buf[i] >= '0' && buf[i] <= '9') || buf[i] == '.' || buf[i] == '-' ||
              buf[i] == '+' || buf[i] == 'e' || buf[i] == 'E' || (buf[i] >= 'A' && buf[i] <= 'Z') ||
              (buf[i] >= 'a' && buf[i] <= 'z')))
            return -1;
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v) || buf[0] == 'i' || buf[0] == 'n' || buf[0] == 'I' ||
        buf[0] == 'N')
        return -1;
    if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
        return -1;
    size_t rest = n - (size_t)(end - buf);
    double unit = 1.0;
    if (rest > 0) {
        static const struct {
            const char *s;
            double mult;
        } units[] = {{"k", 1024.0},         {"kib", 1024.0},     {"m", 1048576.0},
                     {"mib", 1048576.0},    {"g", 1073741824.0}, {"gib", 1073741824.0},
                     {"t", 1099511627776.0}, {"tib", 1099511627776.0}};
        size_t u = 0;
        for (; u < sizeof units / sizeof units[0]; u++)
            if (gpufit__streq_ci(end, rest, units[u].s))
                break;
        if (u == sizeof units / sizeof units[0])
            return -1;
        unit = units[u].mult;
    }
    *out = v;
    *unit_out = unit;
    return 0;
}

/* An unknown gpu: ambiguous names list their variants, others get a "did you mean". */
GPUFIT__COLD
static int32_t gpu_not_found(const char *val, size_t vlen, uint64_t offset, gpufit_error *err)
{
    const char *variants = gpufit__gpu_ambiguous(val, vlen);
    if (variants != NULL)
        return gpufit__fail(err, GPUFIT_E_NOT_FOUND, GPUFIT_JOB_GPU, offset,
                            "gpu '%.*s' is ambiguous (memory decides the answer): name one of %s",
                            (int)(vlen > 64 ? 64 : vlen), val, variants);
    char hint[96];
    gpufit__suggest_gpu(val, vlen, hint, sizeof hint);
    return gpufit__fail(err, GPUFIT_E_NOT_FOUND, GPUFIT_JOB_GPU, offset,
                        "gpu '%.*s' is not in the catalogue (see 'gpufit gpus') and is not a "
                        "capacity such as 24GiB%s",
                        (int)(vlen > 64 ? 64 : vlen), val, hint);
}

GPUFIT__NOINLINE
static int32_t apply_gpu(struct gpufit_job *j, const char *val, size_t vlen, uint64_t offset,
                         gpufit_error *err)
{
    j->plan_state = 0; /* (on failure the caller drops its copy or restores the job) */
    if (vlen == 4 && gpufit__bytes_eq_lower(val, "none", 4)) {
        j->gpu = -1;
        return GPUFIT_OK;
    }
    const gpufit__gpu *g = gpufit__gpu_find(val, vlen);
    if (g != NULL) {
        j->gpu = g->id;
        j->gpu_memory_bytes = 0;
        j->gpu_memory_gib = 0.0;
        j->gpu_name[0] = '\0';
        return GPUFIT_OK;
    }
    double v, unit;
    if (parse_number(val, vlen, &v, &unit) == 0 && unit > 1.0 && v > 0.0 &&
        v * unit <= 1125899906842624.0) {
        if (llround(v * unit) < 1) /* 0 bytes would read as "no capacity given" */
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPU, offset,
                                "gpu capacity '%.*s' is below one byte",
                                (int)(vlen > 64 ? 64 : vlen), val);
        j->gpu = -1;
        j->gpu_memory_bytes = (int64_t)llround(v * unit);
        j->gpu_memory_gib = (double)j->gpu_memory_bytes / 1073741824.0;
        return GPUFIT_OK;
    }
    return gpu_not_found(val, vlen, offset, err);
}

/* A release as text: 1 to 3 dot-separated decimal parts of at most 3 digits ("0.6.3", "0.19",
 * "12"), an optional leading 'v'; "current" / "auto" = 0. Stored as major x 1000000 + minor x
 * 1000 + patch (GPUFIT_JOB_FRAMEWORK_VERSION). */
GPUFIT__COLD
static int32_t apply_version(const gpufit__param_entry *e, struct gpufit_job *j, const char *val,
                             size_t vlen, uint64_t offset, gpufit_error *err)
{
    if (gpufit__streq_ci(val, vlen, "current") || gpufit__streq_ci(val, vlen, "auto"))
        return set_int(e, NULL, j, 0, offset, err);
    size_t i = vlen > 0 && (val[0] == 'v' || val[0] == 'V') ? 1 : 0;
    int64_t parts[3] = {0, 0, 0};
    int n = 0;
    while (i < vlen) {
        size_t b = i;
        int64_t x = 0;
        while (i < vlen && val[i] >= '0' && val[i] <= '9' && i - b < 4)
            x = x * 10 + (val[i++] - '0');
        if (i == b || i - b > 3 || n == 3 || (i < vlen && val[i] != '.') ||
            (i < vlen && i + 1 == vlen))
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                                "%s: '%.*s' is not a release such as 0.6.3 or 0.19 (up to three "
                                "numbers of at most 3 digits, separated by dots)",
                                e->name, (int)(vlen > 64 ? 64 : vlen), val);
        parts[n++] = x;
        if (i < vlen)
            i++; /* the dot */
    }
    if (n == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset, "%s has no value", e->name);
    return set_int(e, NULL, j, parts[0] * 1000000 + parts[1] * 1000 + parts[2], offset, err);
}

/* A list from text: comma-separated numbers, or GPU names for device_gpus; "none" clears. */
GPUFIT__COLD
static int32_t apply_list(const gpufit__param_entry *e, struct gpufit_job *j, const char *val,
                          size_t vlen, uint64_t offset, gpufit_error *err)
{
    double v[GPUFIT_LIST_MAX] = {0};
    uint32_t n = 0;
    if (gpufit__streq_ci(val, vlen, "none"))
        return set_list(e, j, v, 0, offset, err);
    size_t i = 0;
    for (;;) {
        size_t b = i;
        while (i < vlen && val[i] != ',')
            i++;
        const char *el = val + b;
        size_t len = i - b;
        /* errors carry the value's offset: in JSON the text is joined from an array, so a
         * position inside it is no byte of the document (a spec reports the pair anyway) */
        if (n == GPUFIT_LIST_MAX)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                                "%s has more than %d entries", e->name, GPUFIT_LIST_MAX);
        const gpufit__gpu *g =
            e->id == GPUFIT_JOB_DEVICE_GPUS ? gpufit__gpu_find(el, len) : NULL;
        double x, unit;
        if (g != NULL) {
            x = (double)g->id;
        } else if (parse_number(el, len, &x, &unit) != 0 || unit != 1.0) {
            return gpufit__fail(err, e->id == GPUFIT_JOB_DEVICE_GPUS ? GPUFIT_E_NOT_FOUND
                                                                     : GPUFIT_E_INVALID_ARG,
                                e->id, offset, "%s entry %u '%.*s' is not %s", e->name,
                                n + 1, (int)(len > 64 ? 64 : len), el,
                                e->id == GPUFIT_JOB_DEVICE_GPUS
                                    ? "a catalogue GPU (see 'gpufit gpus')"
                                    : "a number");
        }
        v[n++] = x;
        if (i >= vlen)
            break;
        i++; /* the comma */
    }
    return set_list(e, j, v, n, offset, err);
}

/* lora_modules: a comma list of module names (q, k, v, o, gate, up, down, their PEFT names
 * q_proj ... down_proj, or all-linear / all_linear), or the bit mask as a number. */
GPUFIT__COLD static int32_t apply_lora_modules(struct gpufit_job *j, const char *val, size_t vlen,
                                  uint64_t offset, gpufit_error *err)
{
    static const struct {
        const char *name;
        int64_t bits;
    } names[] = {{"q", GPUFIT_LORA_MODULE_Q},       {"q_proj", GPUFIT_LORA_MODULE_Q},
                 {"k", GPUFIT_LORA_MODULE_K},       {"k_proj", GPUFIT_LORA_MODULE_K},
                 {"v", GPUFIT_LORA_MODULE_V},       {"v_proj", GPUFIT_LORA_MODULE_V},
                 {"o", GPUFIT_LORA_MODULE_O},       {"o_proj", GPUFIT_LORA_MODULE_O},
                 {"gate", GPUFIT_LORA_MODULE_GATE}, {"gate_proj", GPUFIT_LORA_MODULE_GATE},
                 {"up", GPUFIT_LORA_MODULE_UP},     {"up_proj", GPUFIT_LORA_MODULE_UP},
                 {"down", GPUFIT_LORA_MODULE_DOWN}, {"down_proj", GPUFIT_LORA_MODULE_DOWN},
                 {"all-linear", 127},               {"all_linear", 127},
                 {"none", 0}};
    const gpufit__param_entry *e = gpufit__param_find(GPUFIT_JOB_LORA_MODULES);
    if (vlen > 0 && val[0] >= '0' && val[0] <= '9') { /* the mask as a number */
        double v, unit;
        if (parse_number(val, vlen, &v, &unit) != 0 || unit != 1.0)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                                "lora_modules: '%.*s' is not a module list or a number",
                                (int)(vlen > 64 ? 64 : vlen), val);
        return set_float(e, NULL, j, v, offset, err);
    }
    int64_t mask = 0;
    size_t i = 0;
    while (i <= vlen) {
        size_t b = i;
        while (i < vlen && val[i] != ',')
            i++;
        size_t a = b, z = i; /* trim spaces */
        while (a < z && val[a] == ' ')
            a++;
        while (z > a && val[z - 1] == ' ')
            z--;
        size_t k = 0, n = sizeof names / sizeof names[0];
        while (k < n && !gpufit__streq_ci(val + a, z - a, names[k].name))
            k++;
        if (k == n)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset + a,
                                "lora_modules: unknown module '%.*s' (q, k, v, o, gate, up, down "
                                "or their PEFT names q_proj ... down_proj, all-linear)",
                                (int)(z - a > 64 ? 64 : z - a), val + a);
        mask |= names[k].bits;
        i++; /* the comma, or past the end */
    }
    return set_int(e, NULL, j, mask, offset, err);
}

/* An enum value that is none of its names, with a "did you mean". */
GPUFIT__COLD static int32_t unknown_value(const gpufit__param_entry *e, const char *val,
                                          size_t vlen, uint64_t offset, gpufit_error *err)
{
    char hint[96];
    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                        "%s: unknown value '%.*s' (see 'gpufit params')%s", e->name,
                        (int)(vlen > 64 ? 64 : vlen), val,
                        (gpufit__suggest_value(e, val, vlen, hint, sizeof hint), hint));
}

/* The value of ev's list named val[0..vlen) (without case), or NULL. The names are in lower
 * case (test_cold), so that only val's bytes are folded. */
GPUFIT__INLINE static const gpufit__enum_value *
value_named(const gpufit__enum_value *ev, const char *val, size_t vlen)
{
    unsigned char first = (unsigned char)val[0];
    first = first >= 'A' && first <= 'Z' ? (unsigned char)(first - 'A' + 'a') : first;
    for (; ev->name != NULL; ev++)
        if (ev->len == vlen && (unsigned char)ev->name[0] == first &&
            (gpufit__bytes_eq(val, ev->name, vlen) || /* the usual value, in lower case */
             gpufit__bytes_eq_lower(val, ev->name, vlen)))
            return ev;
    return NULL;
}

/* gpufit__apply_entry's general path: every parameter and value form, and the reports. */
GPUFIT__NOINLINE static int32_t apply_text(struct gpufit_model *m,
                                           struct gpufit_job *j,
                                           const gpufit__param_entry *e,
                                           const char *val,
                                           size_t vlen,
                                           uint64_t offset,
                                           gpufit_error *err)
{
    if (e->id == GPUFIT_JOB_GPU) {
        if (j == NULL)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPU, offset,
                                "gpu: no job handle");
        return apply_gpu(j, val, vlen, offset, err);
    }
    if (e->id == GPUFIT_JOB_LORA_MODULES && j != NULL)
        return apply_lora_modules(j, val, vlen, offset, err);
    if ((e->domain == GPUFIT_DOMAIN_MODEL && m == NULL) ||
        (e->domain == GPUFIT_DOMAIN_JOB && j == NULL))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset, "%s: no %s handle", e->name,
                            e->domain == GPUFIT_DOMAIN_MODEL ? "model" : "job");
    if (vlen == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset, "%s has no value", e->name);
    if (e->type == GPUFIT_TYPE_LIST)
        return apply_list(e, j, val, vlen, offset, err);
    if (e->id == GPUFIT_JOB_FRAMEWORK_VERSION || e->id == GPUFIT_JOB_CUDA_VERSION)
        return apply_version(e, j, val, vlen, offset, err);
    /* the names compare without case; the first byte first (vlen > 0 here) */
    int first = val[0] >= 'A' && val[0] <= 'Z' ? val[0] - 'A' + 'a' : val[0];
    if (e->min_i == -1 && !e->is_double && first == 'a' && gpufit__streq_ci(val, vlen, "auto"))
        return set_int(e, m, j, -1, offset, err);
    if (e->values != NULL) {
        const gpufit__enum_value *ev = value_named(e->values, val, vlen);
        if (ev != NULL)
            return set_named(e, m, j, ev->value, offset, err);
        if (e->type == GPUFIT_TYPE_ENUM)
            return unknown_value(e, val, vlen, offset, err);
    }
    if (!e->is_double && vlen <= 15) { /* plain decimal digits: what the path below gives */
        int64_t x = 0;
        size_t i = 0;
        for (; i < vlen && val[i] >= '0' && val[i] <= '9'; i++)
            x = x * 10 + (val[i] - '0');
        if (i == vlen) /* exact as a double, below 9e15: set_float would pass it to set_int */
            return set_int(e, m, j, x, offset, err);
    }
    double v, unit;
    if (parse_number(val, vlen, &v, &unit) != 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s: '%.*s' is not a number", e->name, (int)(vlen > 64 ? 64 : vlen),
                            val);
    if (unit != 1.0 && strcmp(e->unit, "bytes") != 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, offset,
                            "%s: a size suffix is only allowed on byte values", e->name);
    /* set_float checks integrality for integer parameters, then calls set_int */
    return set_float(e, m, j, v * unit, offset, err);
}

/* Whether ev, the value of e's list named val[0..vlen), is stored as apply_text would store
 * it, without its checks: a named value in range, not "auto" where that means -1 (apply_text
 * sets that through set_int). */
static inline int name_stored_plainly(const gpufit__param_entry *e, const gpufit__enum_value *ev,
                                      const char *val, size_t vlen)
{
    return ev != NULL && !e->is_double && e->type != GPUFIT_TYPE_LIST &&
           ev->value >= e->min_i && ev->value <= e->max_i &&
           !(e->min_i == -1 && vlen == 4 && gpufit__bytes_eq_lower(val, "auto", 4));
}

/* gpufit__apply_entry for a parameter with value names and its handle, vlen > 0: a name
 * without case (name_stored_plainly), anything else through apply_text. Out of line: the
 * digits' path saves no registers for its loop. */
GPUFIT__NOINLINE static int32_t apply_named(struct gpufit_model *m,
                                            struct gpufit_job *j,
                                            const gpufit__param_entry *e,
                                            const char *val,
                                            size_t vlen,
                                            uint64_t offset,
                                            gpufit_error *err)
{
    const gpufit__enum_value *ev = value_named(e->values, val, vlen);
    if (name_stored_plainly(e, ev, val, vlen)) {
        store_int(e, m, j, ev->value);
        return GPUFIT_OK;
    }
    return apply_text(m, j, e, val, vlen, offset, err);
}

int32_t gpufit__apply_entry(struct gpufit_model *m,
                            struct gpufit_job *j,
                            const gpufit__param_entry *e,
                            const char *val,
                            size_t vlen,
                            uint64_t offset,
                            gpufit_error *err)
{
    /* the usual values first, stored as apply_text would store them: decimal digits of a plain
     * integer, a value name; anything else, and every refusal, goes through apply_text */
    const void *h = e->domain == GPUFIT_DOMAIN_MODEL ? (const void *)m : (const void *)j;
    if (h != NULL && vlen != 0) {
        if (e->plain_int) {
            int64_t x = 0;
            size_t i = 0;
            while (i < vlen && i < 15 && val[i] >= '0' && val[i] <= '9')
                x = x * 10 + (val[i++] - '0');
            if (i == vlen && x >= e->min_i && x <= e->max_i) {
                store_int(e, m, j, x);
                return GPUFIT_OK;
            }
        } else if (e->values != NULL) {
            /* the usual value: a name as written in the list (lower case), not "auto" where
             * that means -1 (names compare without case: apply_named) */
            const gpufit__enum_value *ev = e->values;
            while (ev->name != NULL && (ev->len != vlen || ev->name[0] != val[0] ||
                                        !gpufit__bytes_eq(val, ev->name, vlen)))
                ev++;
            if (name_stored_plainly(e, ev->name != NULL ? ev : NULL, val, vlen)) {
                store_int(e, m, j, ev->value);
                return GPUFIT_OK;
            }
            return apply_named(m, j, e, val, vlen, offset, err);
        }
    }
    return apply_text(m, j, e, val, vlen, offset, err);
}

int32_t gpufit__apply_kv(struct gpufit_model *m, struct gpufit_job *j, const char *key,
                         size_t klen, const char *val, size_t vlen, uint64_t offset,
                         gpufit_error *err)
{
    /* "model" (a preset) is applied by the readers above (spec.c), not here: the parameter
     * table sits below the presets (docs/architecture.md) */
    const gpufit__param_entry *e = gpufit__param_find_name(key, klen);
    char hint[96];
    if (e == NULL)
        return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, offset,
                            "unknown parameter '%.*s' (see 'gpufit params')%s",
                            (int)(klen > 64 ? 64 : klen), key,
                            (gpufit__suggest_key(key, klen, hint, sizeof hint), hint));
    return gpufit__apply_entry(m, j, e, val, vlen, offset, err);
}

/* ---- introspection ------------------------------------------------------------------ */
int32_t gpufit_param_get_info(int32_t p, gpufit_param_info *out)
{
    const gpufit__param_entry *e = gpufit__param_find(p);
    if (out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (e == NULL)
        return GPUFIT_E_UNKNOWN_PARAM;
    gpufit_param_info info;
    memset(&info, 0, sizeof info);
    info.id = e->id;
    info.domain = e->domain;
    info.type = e->type;
    info.min_int = e->min_i;
    info.max_int = e->max_i;
    info.default_int = e->def_i;
    int floats = e->is_double || e->type == GPUFIT_TYPE_LIST; /* lists: element range */
    info.min_float = floats ? e->min_f : (double)e->min_i;
    info.max_float = floats ? e->max_f : (double)e->max_i;
    info.default_float = e->is_double ? e->def_f : (double)e->def_i;
    info.since = 100;
    info.flags = !e->is_double && e->def_i < e->min_i ? GPUFIT_PARAM_FLAG_UNSET_DEFAULT : 0u;
    info.name = e->name;
    info.unit = e->unit;
    info.doc = e->doc;
    info.struct_size = (uint32_t)sizeof info;
    return gpufit__copy_out(out, &info, sizeof info, sizeof info);
}

int32_t gpufit_param_by_name(const char *name, int32_t *out)
{
    if (name == NULL || out == NULL)
        return GPUFIT_E_INVALID_ARG;
    const gpufit__param_entry *e = gpufit__param_find_name(name, strlen(name));
    if (e == NULL)
        return GPUFIT_E_UNKNOWN_PARAM;
    *out = e->id;
    return GPUFIT_OK;
}

int32_t gpufit_param_next(int32_t prev)
{
    if (prev == 0)
        return table[0].id;
    for (size_t i = 0; i + 1 < N_PARAMS; i++)
        if (table[i].id == prev)
            return table[i + 1].id;
    return 0;
}

int32_t gpufit_param_value_at(int32_t p, uint32_t index, int64_t *value_out,
                              const char **name_out)
{
    const gpufit__param_entry *e = gpufit__param_find(p);
    if (e == NULL)
        return GPUFIT_E_UNKNOWN_PARAM;
    if (e->id == GPUFIT_JOB_GPU) { /* the GPU catalogue is this parameter's value list */
        const gpufit__gpu *g = gpufit__gpu_at(index);
        if (g == NULL)
            return GPUFIT_E_NOT_FOUND;
        if (value_out != NULL)
            *value_out = g->id;
        if (name_out != NULL)
            *name_out = g->key;
        return GPUFIT_OK;
    }
    if (e->values == NULL)
        return GPUFIT_E_NOT_FOUND;
    for (uint32_t i = 0; e->values[i].name != NULL; i++) {
        if (i == index) {
            if (value_out != NULL)
                *value_out = e->values[i].value;
            if (name_out != NULL)
                *name_out = e->values[i].name;
            return GPUFIT_OK;
        }
    }
    return GPUFIT_E_NOT_FOUND;
}

const char *gpufit_param_value_name(int32_t p, int64_t v)
{
    const gpufit__param_entry *e = gpufit__param_find(p);
    if (e == NULL)
        return NULL;
    if (e->id == GPUFIT_JOB_GPU) {
        const gpufit__gpu *g = gpufit__gpu_by_id(v);
        return g != NULL ? g->key : NULL;
    }
    if (e->values == NULL)
        return NULL;
    for (const gpufit__enum_value *ev = e->values; ev->name != NULL; ev++)
        if (ev->value == v)
            return ev->name;
    return NULL;
}

int32_t gpufit_param_value_by_name(int32_t p, const char *name, int64_t *out)
{
    const gpufit__param_entry *e = gpufit__param_find(p);
    if (name == NULL || out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (e == NULL)
        return GPUFIT_E_UNKNOWN_PARAM;
    if (e->id == GPUFIT_JOB_GPU) {
        const gpufit__gpu *g = gpufit__gpu_find(name, strlen(name));
        if (g == NULL)
            return GPUFIT_E_NOT_FOUND;
        *out = g->id;
        return GPUFIT_OK;
    }
    if (e->values == NULL)
        return GPUFIT_E_NOT_FOUND;
    for (const gpufit__enum_value *ev = e->values; ev->name != NULL; ev++) {
        if (gpufit__streq_ci(name, strlen(name), ev->name)) {
            *out = ev->value;
            return GPUFIT_OK;
        }
    }
    return GPUFIT_E_NOT_FOUND;
}
