/* SPDX-License-Identifier: MIT */
/**
 * @file gpufit.h
 * @brief gpufit: predict the GPU memory of a deep-learning job before it is launched.
 *
 * This header is the whole public API: anything not declared here is not API.
 *
 * Model: describe a model (gpufit_model) and a job (gpufit_job) through enum-keyed typed
 * setters or spec strings ("model=llama-3-8b task=pretrain micro_batch=2"), evaluate them
 * (gpufit_evaluate) and read the immutable gpufit_result: per device role, memory components
 * in bytes, three nested levels (peak allocated, peak reserved, device used) and a fits/OOM
 * verdict against a GPU.
 *
 * Threading: gpufit has no global or thread-local mutable state, takes no locks, performs no
 * I/O and allocates only objects it returns to the caller. Every function is reentrant. Any
 * number of threads may use distinct handles concurrently. Functions that take a const handle
 * may run concurrently on the same handle. A function that takes a non-const handle (setters,
 * *_free) must not overlap with any other use of that handle. A gpufit_result or gpufit_list
 * never changes after it is created. Strings returned by gpufit are static, or owned by the
 * result or list they came from and valid until it is freed. See docs/threading.md.
 *
 * Units: every byte count is a uint64_t number of bytes (headroom: int64_t bytes).
 */
#ifndef GPUFIT_H
#define GPUFIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup visibility Export macros
 *  @{ */
#if defined(_WIN32) && !defined(GPUFIT_STATIC)
#ifdef GPUFIT_BUILDING
#define GPUFIT_API __declspec(dllexport)
#else
#define GPUFIT_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && __GNUC__ >= 4
/** Marks an exported symbol. */
#define GPUFIT_API __attribute__((visibility("default")))
#else
#define GPUFIT_API
#endif
/** @} */

/** @defgroup version Version
 *  The header is the single source of the version; the Makefile reads these lines.
 *  @{ */
#define GPUFIT_VERSION_MAJOR 0 /**< Major version. */
#define GPUFIT_VERSION_MINOR 1 /**< Minor version. */
#define GPUFIT_VERSION_PATCH 0 /**< Patch version. */
#define GPUFIT_SOVERSION 0     /**< ABI major: the N of libgpufit.so.N. */
/** Packed version: MAJOR*10000 + MINOR*100 + PATCH. */
#define GPUFIT_VERSION_NUMBER                                                                      \
    (GPUFIT_VERSION_MAJOR * 10000 + GPUFIT_VERSION_MINOR * 100 + GPUFIT_VERSION_PATCH)
#define GPUFIT_VERSION_STRING "0.1.0" /**< Version as text. */

/** Packed version of the loaded library (compare with GPUFIT_VERSION_NUMBER). @since 0.1.0 */
GPUFIT_API uint32_t gpufit_version_number(void);
/** Version of the loaded library as a static string, e.g. "0.1.0". @since 0.1.0 */
GPUFIT_API const char *gpufit_version_string(void);
/** @} */

/** @defgroup errors Status codes and errors
 *  @{ */
/** Result of every fallible call: 0 on success, negative on failure. Values never change. */
typedef enum gpufit_status {
    GPUFIT_OK = 0,                  /**< Success. */
    GPUFIT_E_INVALID_ARG = -1,      /**< NULL, NaN, negative, zero or out-of-range value. */
    GPUFIT_E_INCONSISTENT = -2,     /**< Values that do not fit together (tp does not divide heads). */
    GPUFIT_E_OVERFLOW = -3,         /**< A byte count would exceed uint64_t. */
    GPUFIT_E_UNKNOWN_PARAM = -4,    /**< Parameter id or name unknown to this library. */
    GPUFIT_E_UNSUPPORTED = -5,      /**< Known, but this combination is not modelled. */
    GPUFIT_E_PARSE = -6,            /**< Malformed spec string or JSON. */
    GPUFIT_E_NOT_FOUND = -7,        /**< Unknown preset, GPU or value name; index past the end. */
    GPUFIT_E_BUFFER_TOO_SMALL = -8, /**< Output buffer too small; the needed length is returned. */
    GPUFIT_E_STRUCT_SIZE = -9,      /**< struct_size too small, or a non-zero unknown tail. */
    GPUFIT_E_NOMEM = -10,           /**< Allocation failed. */
    GPUFIT_E_INTERNAL = -99,        /**< A bug in gpufit. */
    GPUFIT_STATUS_MAX_ = 0x7FFFFFFF /**< Forces a 32-bit enum; not a value. */
} gpufit_status;

/** Caller-owned error detail; pass NULL where the detail is not wanted. */
typedef struct gpufit_error {
    uint32_t struct_size; /**< In: sizeof(gpufit_error). */
    int32_t status;       /**< gpufit_status of the failure. */
    int32_t param;        /**< Offending gpufit_param, or 0. */
    uint32_t reserved0;   /**< Must be 0. */
    uint64_t offset;      /**< Byte offset into parsed text, or UINT64_MAX when not parsing. */
    char message[256];    /**< NUL-terminated one-line English message naming the key. */
} gpufit_error;
/** Initialiser for a gpufit_error. */
#define GPUFIT_ERROR_INIT {sizeof(gpufit_error), 0, 0, 0, UINT64_MAX, {0}}

/** Static English text of a status; never NULL. @since 0.1.0 */
GPUFIT_API const char *gpufit_status_str(int32_t status);
/** @} */

/** @defgroup enums Value enumerations
 *  Enumerated parameter values travel as int64_t through the setters. -1 means "auto":
 *  derived from other parameters (documented per parameter by gpufit_param_get_info()).
 *  @{ */

/** Model architecture family. */
typedef enum gpufit_arch {
    GPUFIT_ARCH_DECODER = 0,         /**< Decoder-only transformer (GPT, Llama, MoE). */
    GPUFIT_ARCH_ENCODER = 1,         /**< Encoder-only (BERT). */
    GPUFIT_ARCH_ENCODER_DECODER = 2, /**< Encoder-decoder (T5). */
    GPUFIT_ARCH_GENERIC = 3,         /**< Only a parameter count is known. */
    GPUFIT_ARCH_MAX_ = 0x7FFFFFFF    /**< Not a value. */
} gpufit_arch;

/** Feed-forward block type. */
typedef enum gpufit_mlp {
    GPUFIT_MLP_GELU = 0,         /**< Two matrices, GELU. */
    GPUFIT_MLP_RELU = 1,         /**< Two matrices, ReLU. */
    GPUFIT_MLP_SWIGLU = 2,       /**< Gated, three matrices, SiLU. */
    GPUFIT_MLP_GEGLU = 3,        /**< Gated, three matrices, GELU. */
    GPUFIT_MLP_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_mlp;

/** Normalisation layer. */
typedef enum gpufit_norm {
    GPUFIT_NORM_LAYERNORM = 0,    /**< LayerNorm: weight and bias. */
    GPUFIT_NORM_RMSNORM = 1,      /**< RMSNorm: weight only. */
    GPUFIT_NORM_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_norm;

/** What the job does. */
typedef enum gpufit_task {
    GPUFIT_TASK_PRETRAIN = 0,     /**< Training from scratch: every parameter trained. */
    GPUFIT_TASK_FINETUNE = 1,     /**< Full fine-tuning: every parameter trained. */
    GPUFIT_TASK_LORA = 2,         /**< LoRA adapters on a frozen base. */
    GPUFIT_TASK_QLORA = 3,        /**< LoRA adapters on a quantised frozen base. */
    GPUFIT_TASK_INFERENCE = 4,    /**< Serving or generation with a KV cache. */
    GPUFIT_TASK_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_task;

/** Element types: storage types and quantised block formats. */
typedef enum gpufit_dtype {
    GPUFIT_DTYPE_NONE = 0,     /**< Absent (e.g. no fp32 master weights). */
    GPUFIT_DTYPE_FP32 = 1,     /**< 4 bytes. */
    GPUFIT_DTYPE_TF32 = 2,     /**< Stored as fp32 (4 bytes); a compute mode. */
    GPUFIT_DTYPE_FP16 = 3,     /**< 2 bytes. */
    GPUFIT_DTYPE_BF16 = 4,     /**< 2 bytes. */
    GPUFIT_DTYPE_FP8 = 5,      /**< 1 byte (e4m3/e5m2). */
    GPUFIT_DTYPE_INT8 = 6,     /**< 1 byte + per-row fp32 scale (bitsandbytes LLM.int8). */
    GPUFIT_DTYPE_INT4 = 7,     /**< 4 bits + fp16 scale per 128 (generic int4). */
    GPUFIT_DTYPE_NF4 = 8,      /**< bitsandbytes NF4, fp32 absmax per 64: 4.5 bits. */
    GPUFIT_DTYPE_NF4_DQ = 9,   /**< NF4 with double quantisation: 4.127 bits. */
    GPUFIT_DTYPE_FP4 = 10,     /**< bitsandbytes FP4, as NF4. */
    GPUFIT_DTYPE_GPTQ4 = 11,   /**< GPTQ 4-bit, group 128, with g_idx. */
    GPUFIT_DTYPE_AWQ4 = 12,    /**< AWQ 4-bit, group 128. */
    GPUFIT_DTYPE_MXFP4 = 13,   /**< OCP MXFP4: 4.25 bits. */
    GPUFIT_DTYPE_NVFP4 = 14,   /**< NVFP4: 4.5 bits. */
    GPUFIT_DTYPE_Q4_0 = 20,    /**< GGUF Q4_0 (32 per 18 bytes). */
    GPUFIT_DTYPE_Q4_1 = 21,    /**< GGUF Q4_1. */
    GPUFIT_DTYPE_Q5_0 = 22,    /**< GGUF Q5_0. */
    GPUFIT_DTYPE_Q5_1 = 23,    /**< GGUF Q5_1. */
    GPUFIT_DTYPE_Q8_0 = 24,    /**< GGUF Q8_0 (32 per 34 bytes). */
    GPUFIT_DTYPE_Q2_K = 25,    /**< GGUF Q2_K. */
    GPUFIT_DTYPE_Q3_K = 26,    /**< GGUF Q3_K (tensor type); as a file type: Q3_K_M mix. */
    GPUFIT_DTYPE_Q4_K = 27,    /**< GGUF Q4_K (tensor type); as a file type: Q4_K_S mix. */
    GPUFIT_DTYPE_Q5_K = 28,    /**< GGUF Q5_K (tensor type); as a file type: Q5_K_S mix. */
    GPUFIT_DTYPE_Q6_K = 29,    /**< GGUF Q6_K (256 per 210 bytes). */
    GPUFIT_DTYPE_Q3_K_S = 30,  /**< GGUF file mix Q3_K_S. */
    GPUFIT_DTYPE_Q3_K_M = 31,  /**< GGUF file mix Q3_K_M. */
    GPUFIT_DTYPE_Q3_K_L = 32,  /**< GGUF file mix Q3_K_L. */
    GPUFIT_DTYPE_Q4_K_S = 33,  /**< GGUF file mix Q4_K_S. */
    GPUFIT_DTYPE_Q4_K_M = 34,  /**< GGUF file mix Q4_K_M. */
    GPUFIT_DTYPE_Q5_K_S = 35,  /**< GGUF file mix Q5_K_S. */
    GPUFIT_DTYPE_Q5_K_M = 36,  /**< GGUF file mix Q5_K_M. */
    GPUFIT_DTYPE_IQ1_S = 37,   /**< GGUF IQ1_S. */
    GPUFIT_DTYPE_IQ1_M = 38,   /**< GGUF IQ1_M. */
    GPUFIT_DTYPE_IQ2_XXS = 39, /**< GGUF IQ2_XXS. */
    GPUFIT_DTYPE_IQ2_XS = 40,  /**< GGUF IQ2_XS. */
    GPUFIT_DTYPE_IQ2_S = 41,   /**< GGUF IQ2_S. */
    GPUFIT_DTYPE_IQ3_XXS = 42, /**< GGUF IQ3_XXS. */
    GPUFIT_DTYPE_IQ3_S = 43,   /**< GGUF IQ3_S. */
    GPUFIT_DTYPE_IQ4_NL = 44,  /**< GGUF IQ4_NL (32 per 18 bytes). */
    GPUFIT_DTYPE_IQ4_XS = 45,  /**< GGUF IQ4_XS. */
    GPUFIT_DTYPE_TQ1_0 = 46,   /**< GGUF TQ1_0 (ternary). */
    GPUFIT_DTYPE_TQ2_0 = 47,   /**< GGUF TQ2_0 (ternary). */
    GPUFIT_DTYPE_F16_GGUF = 48, /**< GGUF F16 file: 2-D tensors fp16, 1-D tensors fp32. */
    GPUFIT_DTYPE_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_dtype;

/** Precision policy preset; per-part dtype parameters override it. */
typedef enum gpufit_precision {
    GPUFIT_PRECISION_FP32 = 0,     /**< fp32 weights, compute, grads, optimizer. */
    GPUFIT_PRECISION_TF32 = 1,     /**< As fp32, TF32 tensor-core compute. */
    GPUFIT_PRECISION_AMP_FP16 = 2, /**< torch.autocast fp16 over fp32 weights (+ loss scaling). */
    GPUFIT_PRECISION_AMP_BF16 = 3, /**< torch.autocast bf16 over fp32 weights. */
    GPUFIT_PRECISION_BF16 = 4,     /**< bf16 weights and compute (framework sets master/grads). */
    GPUFIT_PRECISION_FP16 = 5,     /**< fp16 weights and compute (framework sets master/grads). */
    GPUFIT_PRECISION_FP8 = 6,      /**< bf16 weights, fp8 GEMMs (TransformerEngine style). */
    GPUFIT_PRECISION_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_precision;

/** Optimizer. */
typedef enum gpufit_optimizer {
    GPUFIT_OPT_ADAMW = 0,        /**< Two states per parameter. */
    GPUFIT_OPT_ADAM = 1,         /**< Two states per parameter. */
    GPUFIT_OPT_SGD = 2,          /**< No state. */
    GPUFIT_OPT_SGD_MOMENTUM = 3, /**< One state. */
    GPUFIT_OPT_ADAFACTOR = 4,    /**< Factored second moment. */
    GPUFIT_OPT_ADAMW_8BIT = 5,   /**< bitsandbytes block-wise 8-bit AdamW. */
    GPUFIT_OPT_LION = 6,         /**< One state. */
    GPUFIT_OPT_NONE = 7,         /**< No optimizer (frozen). */
    GPUFIT_OPT_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_optimizer;

/** Activation checkpointing. */
typedef enum gpufit_checkpointing {
    GPUFIT_CKPT_NONE = 0,         /**< Every saved tensor is kept. */
    GPUFIT_CKPT_SELECTIVE = 1,    /**< Core attention recomputed (Korthikanti et al.). */
    GPUFIT_CKPT_FULL = 2,         /**< Only layer inputs kept; one layer re-materialised. */
    GPUFIT_CKPT_SELECTIVE_OP = 3, /**< torchtitan op-level SAC: layer input, every other
                                       matmul output and the attention output kept. */
    GPUFIT_CKPT_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_checkpointing;

/** Attention implementation. */
typedef enum gpufit_attention {
    GPUFIT_ATTN_EAGER = 0,        /**< Scores materialised (s x s per head). */
    GPUFIT_ATTN_SDPA = 1,         /**< PyTorch SDPA, memory-efficient/flash backend. */
    GPUFIT_ATTN_FLASH = 2,        /**< FlashAttention: no s x s tensor. */
    GPUFIT_ATTN_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_attention;

/** Software stack: sets runtime-overhead and policy defaults. */
typedef enum gpufit_framework {
    GPUFIT_FW_PYTORCH = 0,      /**< Eager PyTorch / Hugging Face. */
    GPUFIT_FW_MEGATRON = 1,     /**< Megatron-LM (mcore + TransformerEngine). */
    GPUFIT_FW_DEEPSPEED = 2,    /**< DeepSpeed / Megatron-DeepSpeed. */
    GPUFIT_FW_VLLM = 3,         /**< vLLM server. */
    GPUFIT_FW_LLAMACPP = 4,     /**< llama.cpp / ggml. */
    GPUFIT_FW_SGLANG = 5,       /**< SGLang server. */
    GPUFIT_FW_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_framework;

/** The training front end of a PyTorch job (job key `trainer`): whose defaults and flags the
 *  estimate follows (docs/memory/torchtune.md). */
typedef enum gpufit_trainer {
    GPUFIT_TRAINER_HF = 0,           /**< Transformers Trainer / PEFT / accelerate. */
    GPUFIT_TRAINER_TORCHTUNE = 1,    /**< torchtune recipes (`tune run`). */
    GPUFIT_TRAINER_LOOP = 2,         /**< A training loop of one's own over a transformers model
                                          (the PEFT and accelerate examples): the Trainer's
                                          defaults, and the model's outputs (the logits) held
                                          through backward. */
    GPUFIT_TRAINER_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_trainer;

/** How a PyTorch optimizer (torch.optim Adam/AdamW) runs its step (job key
 *  `optimizer_impl`): it decides the step's temporary bytes (docs/memory/optimizer-step.md). */
typedef enum gpufit_optimizer_impl {
    GPUFIT_OPTIMIZER_IMPL_FOREACH = 0, /**< torch.optim foreach: one state-sized list. */
    GPUFIT_OPTIMIZER_IMPL_FUSED = 1,   /**< fused=True: no step temporaries. */
    GPUFIT_OPTIMIZER_IMPL_FORLOOP = 2, /**< per-tensor loop: two tensor-sized temporaries. */
    GPUFIT_OPTIMIZER_IMPL_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_optimizer_impl;

/** What offload moves to host memory. */
typedef enum gpufit_offload {
    GPUFIT_OFFLOAD_NONE = 0,             /**< Nothing. */
    GPUFIT_OFFLOAD_OPTIMIZER = 1,        /**< Optimizer states, master weights, fp32 grads. */
    GPUFIT_OFFLOAD_OPTIMIZER_PARAMS = 2, /**< The above and the parameters. */
    GPUFIT_OFFLOAD_MAX_ = 0x7FFFFFFF     /**< Not a value. */
} gpufit_offload;

/** Pipeline schedule. */
typedef enum gpufit_pp_schedule {
    GPUFIT_PP_1F1B = 0,        /**< One forward, one backward (PipeDream-flush, Megatron). */
    GPUFIT_PP_INTERLEAVED = 1, /**< Megatron interleaved 1F1B with vpp chunks per stage. */
    GPUFIT_PP_GPIPE = 2,       /**< All micro-batches forward, then all backward. */
    GPUFIT_PP_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_pp_schedule;

/** Which linear layers get LoRA adapters. */
typedef enum gpufit_lora_targets {
    GPUFIT_LORA_QV = 0,           /**< Query and value projections. */
    GPUFIT_LORA_ATTENTION = 1,    /**< q, k, v, o. */
    GPUFIT_LORA_ALL_LINEAR = 2,   /**< Every linear layer of the blocks. */
    GPUFIT_LORA_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_lora_targets;

/** Vision encoder family (GPUFIT_MODEL_VISION_STYLE): which tensors its blocks and embeddings
 *  have (docs/memory/multimodal.md). */
typedef enum gpufit_vision_style {
    GPUFIT_VISION_CLIP = 0,       /**< CLIP ViT (LLaVA): class token, positions, pre/post LN. */
    GPUFIT_VISION_SIGLIP = 1,     /**< SigLIP (Gemma 3): conv bias, positions, post LN. */
    GPUFIT_VISION_QWEN2_VL = 2,   /**< Qwen2-VL: 3-D patch conv, LayerNorm, biases, RoPE. */
    GPUFIT_VISION_QWEN2_5_VL = 3, /**< Qwen2.5-VL: 3-D patch conv, RMSNorm, gated MLP. */
    GPUFIT_VISION_PIXTRAL = 4,    /**< Pixtral (Mistral 3): RMSNorm, gated MLP, no biases. */
    GPUFIT_VISION_MLLAMA = 5,     /**< Llama 3.2 Vision: tiles, 8 gated global layers. */
    GPUFIT_VISION_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_vision_style;

/** Multimodal projector into the text hidden size (GPUFIT_MODEL_VISION_PROJECTOR). */
typedef enum gpufit_vision_projector {
    GPUFIT_VPROJ_MLP = 0,         /**< LLaVA: linear, GELU, linear (with biases). */
    GPUFIT_VPROJ_MLP_NEWLINE = 1, /**< LLaVA-NeXT: the MLP and an image_newline vector. */
    GPUFIT_VPROJ_MERGER = 2,      /**< Qwen2-VL: norm, then an MLP over merged patches. */
    GPUFIT_VPROJ_GEMMA3 = 3,      /**< Gemma 3: pooling, RMSNorm, one matrix (no bias). */
    GPUFIT_VPROJ_MISTRAL3 = 4,    /**< Mistral 3: RMSNorm, patch merger, two matrices. */
    GPUFIT_VPROJ_MLLAMA = 5,      /**< Llama 3.2 Vision: one linear on 6 stacked features. */
    GPUFIT_VPROJ_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_vision_projector;

/** Bits of GPUFIT_JOB_LORA_MODULES: the projections that get LoRA adapters (PEFT module
 *  names q_proj ... down_proj). qv = Q|V, attention = Q|K|V|O, all_linear = every bit. */
typedef enum gpufit_lora_module {
    GPUFIT_LORA_MODULE_Q = 1,    /**< q_proj (and cross-attention q). */
    GPUFIT_LORA_MODULE_K = 2,    /**< k_proj (and MLA's q_a / kv_a down-projections). */
    GPUFIT_LORA_MODULE_V = 4,    /**< v_proj (and MLA's kv_b). */
    GPUFIT_LORA_MODULE_O = 8,    /**< o_proj. */
    GPUFIT_LORA_MODULE_GATE = 16, /**< gate_proj (dense, routed and shared experts). */
    GPUFIT_LORA_MODULE_UP = 32,   /**< up_proj (or fc1 of a two-matrix MLP). */
    GPUFIT_LORA_MODULE_DOWN = 64, /**< down_proj (or fc2). */
    GPUFIT_LORA_MODULE_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_lora_module;
/** @} */

/** @defgroup handles Handles
 *  @{ */
typedef struct gpufit_model gpufit_model;   /**< A model architecture (opaque). */
typedef struct gpufit_job gpufit_job;       /**< Task, batch, precision, layout, GPU (opaque). */
typedef struct gpufit_result gpufit_result; /**< Immutable evaluation result (opaque). */

/** New model with every parameter at its default; free with gpufit_model_free(). @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_new(gpufit_model **out, gpufit_error *err);
/** New model from a built-in preset name or alias (case-insensitive). @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_from_preset(gpufit_model **out, const char *name,
                                            gpufit_error *err);
/** Deep copy of @p m. @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_copy(gpufit_model **out, const gpufit_model *m, gpufit_error *err);
/** Frees a model; NULL is a no-op. @since 0.1.0 */
GPUFIT_API void gpufit_model_free(gpufit_model *m);
/** Name of the model (preset name or "custom"); owned by @p m. @since 0.1.0 */
GPUFIT_API const char *gpufit_model_name(const gpufit_model *m);
/** Exact parameter counts: every parameter once, and those used per token. @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_param_count(const gpufit_model *m, uint64_t *total_out,
                                            uint64_t *active_out, gpufit_error *err);

/** New job with every parameter at its default; free with gpufit_job_free(). @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_new(gpufit_job **out, gpufit_error *err);
/** Deep copy of @p j. @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_copy(gpufit_job **out, const gpufit_job *j, gpufit_error *err);
/** Frees a job; NULL is a no-op. @since 0.1.0 */
GPUFIT_API void gpufit_job_free(gpufit_job *j);
/** @} */

/** @defgroup params Parameters
 *  One enum covers model (100-999) and job (1000-8999) parameters. Values are explicit and
 *  never reused; new parameters are appended. Names: docs/scenario.md, docs/params.md.
 *  @{ */
/** Parameter ids of models (100-999) and jobs (1000-8999). */
typedef enum gpufit_param {
    /* model: architecture */
    GPUFIT_MODEL_ARCH = 100,              /**< gpufit_arch. */
    GPUFIT_MODEL_N_LAYERS = 101,          /**< Transformer layers (decoder-only / encoder). */
    GPUFIT_MODEL_HIDDEN_SIZE = 102,       /**< d_model. */
    GPUFIT_MODEL_N_HEADS = 103,           /**< Query heads. */
    GPUFIT_MODEL_N_KV_HEADS = 104,        /**< Key/value heads; 0 = n_heads. */
    GPUFIT_MODEL_HEAD_DIM = 105,          /**< Head dimension; 0 = hidden / heads. */
    GPUFIT_MODEL_FFN_HIDDEN_SIZE = 106,   /**< MLP intermediate size per branch. */
    GPUFIT_MODEL_MLP = 107,               /**< gpufit_mlp. */
    GPUFIT_MODEL_VOCAB_SIZE = 108,        /**< Vocabulary (padded) size. */
    GPUFIT_MODEL_TIED_EMBEDDINGS = 109,   /**< 1 when the output head shares the embedding. */
    GPUFIT_MODEL_NORM = 110,              /**< gpufit_norm. */
    GPUFIT_MODEL_QKV_BIAS = 111,          /**< Biases on q, k, v projections. */
    GPUFIT_MODEL_MLP_BIAS = 112,          /**< Biases on MLP matrices. */
    GPUFIT_MODEL_MAX_POSITION = 113,      /**< Learned position embeddings when > 0. */
    GPUFIT_MODEL_O_BIAS = 114,            /**< Bias on the attention output; -1 = mlp_bias. */
    GPUFIT_MODEL_EMB_NORM = 115,          /**< Norm after the embedding; -1 = 1 for encoders. */
    GPUFIT_MODEL_QK_NORM = 116,           /**< Per-head q/k RMSNorm (Qwen3). */
    GPUFIT_MODEL_TYPE_VOCAB_SIZE = 117,   /**< Token-type embeddings (BERT: 2). */
    GPUFIT_MODEL_POOLER = 118,            /**< BERT pooler (h x h + h). */
    GPUFIT_MODEL_N_EXPERTS = 120,         /**< Routed experts; 0 = dense. */
    GPUFIT_MODEL_N_SHARED_EXPERTS = 121,  /**< Shared experts. */
    GPUFIT_MODEL_EXPERTS_PER_TOKEN = 122, /**< Top-k. */
    GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE = 123,    /**< Routed-expert intermediate size. */
    GPUFIT_MODEL_N_DENSE_LAYERS = 124,         /**< Leading dense layers of a MoE model. */
    GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE = 125, /**< Shared-expert size; 0 = moe_ffn. */
    GPUFIT_MODEL_ROUTER_BIAS = 126,            /**< Router bias / correction bias (E values). */
    GPUFIT_MODEL_SHARED_EXPERT_GATE = 127,     /**< Shared-expert gate (h values). */
    /* model: rotary position tables (vLLM and SGLang precompute them; docs/memory/vllm.md) */
    GPUFIT_MODEL_ROPE_POSITIONS = 150, /**< Rows of the RoPE cos/sin tables; 0 = none. */
    GPUFIT_MODEL_ROTARY_DIM = 151,     /**< Rotated dims per head; 0 = head_dim (MLA: rope). */
    GPUFIT_MODEL_Q_LORA_RANK = 140,            /**< MLA query rank; 0 = no compression. */
    GPUFIT_MODEL_KV_LORA_RANK = 141,           /**< MLA latent rank; 0 = no MLA. */
    GPUFIT_MODEL_QK_NOPE_HEAD_DIM = 142,       /**< MLA non-rotary q/k head dim. */
    GPUFIT_MODEL_QK_ROPE_HEAD_DIM = 143,       /**< MLA rotary head dim (shared key). */
    GPUFIT_MODEL_V_HEAD_DIM = 144,             /**< MLA value head dim. */
    GPUFIT_MODEL_N_ENCODER_LAYERS = 160,       /**< Encoder-decoder: encoder layers. */
    GPUFIT_MODEL_N_DECODER_LAYERS = 161,       /**< Encoder-decoder: decoder layers. */
    GPUFIT_MODEL_REL_POS_BUCKETS = 162,        /**< T5 relative-position buckets. */
    GPUFIT_MODEL_SLIDING_WINDOW = 170,         /**< Sliding-window attention tokens; 0 = none. */
    GPUFIT_MODEL_SLIDING_WINDOW_PATTERN = 171, /**< Every N-th layer global; 0/1 = all local. */
    GPUFIT_MODEL_N_CROSS_ATTN_LAYERS = 172,    /**< Layers that cross-attend (Mllama: 8 of 40). */
    GPUFIT_MODEL_CROSS_ATTN_TOKENS = 173,      /**< Tokens they cache per sequence; 0 = text only. */
    GPUFIT_MODEL_N_PARAMS = 180,               /**< Generic model: parameter count. */
    GPUFIT_MODEL_ACTIVATION_BYTES_PER_TOKEN = 181, /**< Generic model: saved bytes per token. */
    GPUFIT_MODEL_VISION_LAYERS = 190,          /**< Vision encoder layers; 0 = text only. */
    GPUFIT_MODEL_VISION_HIDDEN_SIZE = 191,     /**< Vision encoder width. */
    GPUFIT_MODEL_VISION_HEADS = 192,           /**< Vision encoder attention heads. */
    GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE = 193, /**< Vision encoder MLP intermediate size. */
    GPUFIT_MODEL_VISION_PATCH_SIZE = 194,      /**< Patch side in pixels. */
    GPUFIT_MODEL_VISION_IMAGE_SIZE = 195,      /**< Side of the largest image (tile), pixels. */
    GPUFIT_MODEL_VISION_MERGE = 196,           /**< Patches merged per side (1 = none). */
    GPUFIT_MODEL_VISION_STYLE = 197,           /**< gpufit_vision_style. */
    GPUFIT_MODEL_VISION_PROJECTOR = 198,       /**< gpufit_vision_projector. */
    GPUFIT_MODEL_VISION_TILES = 199,           /**< Tiles the encoder runs per image. */
    GPUFIT_MODEL_EMBEDDING_DTYPE = 200, /**< Checkpoint storage of the token embedding; -1 auto. */
    GPUFIT_MODEL_ATTENTION_DTYPE = 201, /**< Checkpoint storage of attention projections; -1 auto. */
    GPUFIT_MODEL_MLP_DTYPE = 202,       /**< Checkpoint storage of dense MLP / shared experts. */
    GPUFIT_MODEL_OUTPUT_DTYPE = 203,    /**< Checkpoint storage of the untied output head. */
    GPUFIT_MODEL_EXPERT_DTYPE = 204,    /**< Checkpoint storage of routed experts; -1 = mlp. */

    /* job: task and shapes */
    GPUFIT_JOB_TASK = 1000,          /**< gpufit_task. */
    GPUFIT_JOB_MICRO_BATCH = 1001,   /**< Training samples per micro-batch per device. */
    GPUFIT_JOB_SEQ_LEN = 1002,       /**< Training tokens per sample. */
    GPUFIT_JOB_GLOBAL_BATCH = 1003,  /**< Samples per step, a multiple of micro_batch x dp; 0 = that. */
    GPUFIT_JOB_BATCH = 1004,         /**< Inference: concurrent sequences. */
    GPUFIT_JOB_CONTEXT_LEN = 1005,   /**< Inference: tokens held in KV cache per sequence. */
    GPUFIT_JOB_PROMPT_LEN = 1006,    /**< Inference: prefill chunk (tokens per forward). */
    GPUFIT_JOB_LORA_RANK = 1007,     /**< LoRA rank r. */
    GPUFIT_JOB_LORA_TARGETS = 1008,  /**< gpufit_lora_targets. */
    GPUFIT_JOB_N_GPU_LAYERS = 1009,  /**< Inference: layers on the GPU; -1 = all. */
    GPUFIT_JOB_GPU_MEMORY_UTILIZATION = 1010, /**< vLLM/SGLang budget fraction; 0 = none. */
    GPUFIT_JOB_MAX_NUM_SEQS = 1011, /**< Server: sequences per step (sampler profile); 0 = auto. */
    GPUFIT_JOB_MM_ITEMS_PER_PROMPT = 1012, /**< Images per prompt; -1 = auto, 0 = text only. */
    GPUFIT_JOB_LORA_MODULES = 1013,  /**< gpufit_lora_module bits; 0 = from lora_targets. */
    GPUFIT_JOB_ADAPTER_DTYPE = 1014, /**< LoRA adapter dtype (gpufit_dtype); -1 = auto. */
    GPUFIT_JOB_TRAINER = 1015, /**< gpufit_trainer of a PyTorch training job; -1 = auto (hf). */
    GPUFIT_JOB_LORA_DROPOUT = 1016, /**< LoRA adapters' dropout probability (PEFT and torchtune
                                         `lora_dropout`); 0 = none (PEFT's default). */
    /* job: precision */
    GPUFIT_JOB_PRECISION = 1100,       /**< gpufit_precision; -1 = auto. */
    GPUFIT_JOB_WEIGHT_DTYPE = 1101,    /**< gpufit_dtype; -1 = from precision. */
    GPUFIT_JOB_COMPUTE_DTYPE = 1102,   /**< gpufit_dtype; -1 = from precision. */
    GPUFIT_JOB_GRAD_DTYPE = 1103,      /**< gpufit_dtype; -1 = from precision. */
    GPUFIT_JOB_MASTER_WEIGHTS = 1104,  /**< gpufit_dtype or none; -1 = from precision. */
    GPUFIT_JOB_OPTIMIZER_DTYPE = 1105, /**< gpufit_dtype; -1 = from precision. */
    GPUFIT_JOB_KV_DTYPE = 1106,        /**< gpufit_dtype; -1 = compute dtype. */
    /* job: training */
    GPUFIT_JOB_OPTIMIZER = 1150,     /**< gpufit_optimizer. */
    GPUFIT_JOB_CHECKPOINTING = 1151, /**< gpufit_checkpointing. */
    GPUFIT_JOB_ATTENTION = 1152,     /**< gpufit_attention; -1 = by framework. */
    GPUFIT_JOB_DROPOUT = 1153,       /**< Dropout probability; 0 = no masks. */
    GPUFIT_JOB_CHECKPOINT_EVERY = 1154,  /**< Full checkpointing of every N-th layer of a stage
                                              (torchtitan); 1 = every layer. */
    GPUFIT_JOB_CHECKPOINT_LAYERS = 1155, /**< Full checkpointing of the first N layers of each
                                              stage chunk (Megatron block); 0 = every layer. */
    GPUFIT_JOB_OPTIMIZER_IMPL = 1156, /**< gpufit_optimizer_impl of a PyTorch training job;
                                           -1 = auto (the trainer's default, with a band). */
    GPUFIT_JOB_EXPANDABLE_SEGMENTS = 1157, /**< Bool: PyTorch's caching allocator runs with
                                                `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`
                                                (it then splits every block to 512 B: no tensor
                                                keeps a rest of up to 1 MiB); not llama.cpp. */
    /* job: parallelism */
    GPUFIT_JOB_DP = 1200,      /**< Data-parallel degree. */
    GPUFIT_JOB_TP = 1201,      /**< Tensor-parallel degree. */
    GPUFIT_JOB_PP = 1202,      /**< Pipeline stages. */
    GPUFIT_JOB_VPP = 1203,     /**< Virtual pipeline chunks per stage. */
    GPUFIT_JOB_CP = 1204,      /**< Context-parallel degree. */
    GPUFIT_JOB_EP = 1205,      /**< Expert-parallel degree. */
    GPUFIT_JOB_SP = 1206,      /**< Sequence parallelism with TP (0/1). */
    GPUFIT_JOB_ZERO = 1207,    /**< ZeRO stage 0-3 (FSDP full shard = 3). */
    GPUFIT_JOB_OFFLOAD = 1208, /**< gpufit_offload. */
    GPUFIT_JOB_GPUS = 1209,    /**< Total GPUs; 0 = dp x tp x pp x cp. */
    GPUFIT_JOB_PP_SCHEDULE = 1210, /**< gpufit_pp_schedule; -1 = interleaved when vpp > 1. */
    GPUFIT_JOB_PP_FIRST_LAYERS = 1211, /**< Layers on the first stage; 0 = balanced. */
    GPUFIT_JOB_PP_LAST_LAYERS = 1212,  /**< Layers on the last stage; 0 = balanced. */
    GPUFIT_JOB_ZERO_SHARD_SIZE = 1213, /**< Ranks ZeRO/FSDP shards over (hybrid); 0 = dp. */
    GPUFIT_JOB_TENSOR_SPLIT = 1214, /**< List: share of the layers per pipeline stage/device. */
    GPUFIT_JOB_REDUCE_BUCKET_SIZE = 1215, /**< DeepSpeed ZeRO reduce bucket, elements; 0 = 5e8. */
    GPUFIT_JOB_OVERLAP_COMM = 1216, /**< DeepSpeed overlap_comm: -1 auto (stage 3), 0 off, 1 on. */
    GPUFIT_JOB_SYNC_EACH_BATCH = 1217, /**< FSDP: sync grads every micro-batch (0/1; 0 = no_sync). */
    GPUFIT_JOB_ETP = 1218, /**< Expert tensor-parallel degree (Megatron); 0 = auto (tp for
                                training, 1 for an expert-parallel server). */
    /* job: device and runtime */
    GPUFIT_JOB_GPU = 1300,                /**< Catalogue GPU id (see gpufit_gpu_info); -1 = none. */
    GPUFIT_JOB_GPU_MEMORY_BYTES = 1301,   /**< Capacity override, bytes; 0 = from the GPU. */
    GPUFIT_JOB_FRAMEWORK = 1302,          /**< gpufit_framework. */
    GPUFIT_JOB_GPU_MEMORY_GIB = 1303,     /**< Capacity override in GiB (sets the bytes). */
    GPUFIT_JOB_HOST_MEMORY_BYTES = 1304,  /**< Host RAM per GPU process, bytes; 0 = unchecked. */
    GPUFIT_JOB_DEVICE_GPUS = 1305,        /**< List: catalogue GPU id of each pipeline stage. */
    /** List: capacity in GiB of each pipeline stage's device (one entry per stage, > 0); it
     *  overrides the catalogue GPU's memory (device_gpus) and the job's gpu / gpu_memory_* for
     *  that stage, and llama.cpp's default split by free memory uses it. */
    GPUFIT_JOB_DEVICE_MEMORY_GIB = 1306,
    /** Serving-engine release (vLLM, SGLang) as major x 1000000 + minor x 1000 + patch
     *  (text `0.6.3` or `0.19` in specs, JSON and Python); 0 = the framework's current release.
     *  Selects the engine's KV-budget rule; INCONSISTENT on frameworks without releases
     *  modelled (pytorch, megatron, deepspeed, llamacpp). */
    GPUFIT_JOB_FRAMEWORK_VERSION = 1307,
    /** Safety margin: the share of each device's capacity a job must leave free (0 to 0.5);
     *  the verdict, max_fitting, mitigations, recommend and plan check against capacity x
     *  (1 - margin) (docs/band.md). Not with margin_bytes. */
    GPUFIT_JOB_MARGIN = 1308,
    GPUFIT_JOB_MARGIN_BYTES = 1309, /**< Safety margin in bytes per device; 0 = none. */
    GPUFIT_JOB_CUDA_CONTEXT_BYTES = 1400, /**< CUDA context per process, bytes; -1 = default. */
    GPUFIT_JOB_WORKSPACE_BYTES = 1401,    /**< Library workspaces, bytes; -1 = default. */
    GPUFIT_JOB_FRAGMENTATION = 1402,      /**< Allocator slack fraction; -1 = default. */
    /** CUDA toolkit release the job runs on, encoded as GPUFIT_JOB_FRAMEWORK_VERSION (text
     *  `11.8`, `12.4`); 0 = current CUDA 12.x. Decides lazy module loading and so the CUDA
     *  context default (cuda_context_bytes wins when set). */
    GPUFIT_JOB_CUDA_VERSION = 1403,
    GPUFIT_JOB_MITIGATIONS = 1500,        /**< Mitigations gpufit_evaluate ranks; 0 = none. */
    /** Bool: list hardware changes (another GPU, more GPUs) among the mitigations even when
     *  software changes that keep the GPU make the job fit (default: only when none does). */
    GPUFIT_JOB_ALLOW_HARDWARE = 1501,
    GPUFIT_PARAM_MAX_ = 0x7FFFFFFF        /**< Not a value. */
} gpufit_param;

/** Value type of a parameter. */
typedef enum gpufit_param_type {
    GPUFIT_TYPE_INT = 1,   /**< int64_t: set with *_set_int. */
    GPUFIT_TYPE_FLOAT = 2, /**< double: set with *_set_float. */
    GPUFIT_TYPE_ENUM = 3,  /**< int64_t from a named list (gpufit_param_value_at). */
    GPUFIT_TYPE_BOOL = 4,  /**< int64_t 0 or 1. */
    GPUFIT_TYPE_LIST = 5,  /**< Up to GPUFIT_LIST_MAX doubles: gpufit_job_set_list. */
    GPUFIT_TYPE_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_param_type;

#define GPUFIT_DOMAIN_MODEL 1 /**< Parameter of a gpufit_model. */
#define GPUFIT_DOMAIN_JOB 2   /**< Parameter of a gpufit_job. */

/** gpufit_param_info.flags: the default (0) lies outside the range and means "not set": a
 *  preset, a model file or the caller must give the value before evaluation (n_layers, ...). */
#define GPUFIT_PARAM_FLAG_UNSET_DEFAULT 0x1u

/** Description of one parameter (size-prefixed output struct). */
typedef struct gpufit_param_info {
    uint32_t struct_size; /**< In: sizeof; out: bytes filled. */
    int32_t id;           /**< gpufit_param. */
    int32_t domain;       /**< GPUFIT_DOMAIN_MODEL or GPUFIT_DOMAIN_JOB. */
    int32_t type;         /**< gpufit_param_type. */
    int64_t min_int;      /**< Smallest accepted integer value. */
    int64_t max_int;      /**< Largest accepted integer value. */
    int64_t default_int;  /**< Default integer value. */
    double min_float;     /**< Smallest accepted float value. */
    double max_float;     /**< Largest accepted float value. */
    double default_float; /**< Default float value. */
    uint32_t since;       /**< GPUFIT_VERSION_NUMBER that added it. */
    uint32_t flags;       /**< GPUFIT_PARAM_FLAG_* bits. */
    const char *name;     /**< Name used in specs, JSON and Python; static. */
    const char *unit;     /**< Unit ("bytes", "tokens", "" ...); static. */
    const char *doc;      /**< One-line description; static. */
} gpufit_param_info;

/** Describes parameter @p p. @since 0.1.0 */
GPUFIT_API int32_t gpufit_param_get_info(int32_t p, gpufit_param_info *out);
/** Looks a parameter up by name or alias. @since 0.1.0 */
GPUFIT_API int32_t gpufit_param_by_name(const char *name, int32_t *out);
/** Next parameter id after @p prev (0 starts); returns 0 at the end. @since 0.1.0 */
GPUFIT_API int32_t gpufit_param_next(int32_t prev);
/** The @p index-th named value of an enum/bool parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_param_value_at(int32_t p, uint32_t index, int64_t *value_out,
                                         const char **name_out);
/** Name of value @p v of an enum parameter; NULL when it has none. @since 0.1.0 */
GPUFIT_API const char *gpufit_param_value_name(int32_t p, int64_t v);
/** Value of an enum/bool parameter from its name. @since 0.1.0 */
GPUFIT_API int32_t gpufit_param_value_by_name(int32_t p, const char *name, int64_t *out);

/** Sets an integer, enum or bool model parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_set_int(gpufit_model *m, int32_t p, int64_t v, gpufit_error *err);
/** Sets a float model parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_set_float(gpufit_model *m, int32_t p, double v,
                                          gpufit_error *err);
/** Reads an integer, enum or bool model parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_get_int(const gpufit_model *m, int32_t p, int64_t *out,
                                        gpufit_error *err);
/** Reads a float model parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_model_get_float(const gpufit_model *m, int32_t p, double *out,
                                          gpufit_error *err);
/** Most elements of a list parameter (GPUFIT_TYPE_LIST). */
#define GPUFIT_LIST_MAX 16

/** Sets an integer, enum or bool job parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_set_int(gpufit_job *j, int32_t p, int64_t v, gpufit_error *err);
/** Sets a float job parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_set_float(gpufit_job *j, int32_t p, double v, gpufit_error *err);
/** Reads an integer, enum or bool job parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_get_int(const gpufit_job *j, int32_t p, int64_t *out,
                                      gpufit_error *err);
/** Reads a float job parameter. @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_get_float(const gpufit_job *j, int32_t p, double *out,
                                        gpufit_error *err);
/**
 * Sets a list job parameter (GPUFIT_TYPE_LIST) to the @p n values at @p v (copied);
 * @p n = 0 clears it. Each value is checked against the parameter's element range
 * (min_float..max_float of gpufit_param_info); GPU lists take catalogue ids. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_job_set_list(gpufit_job *j, int32_t p, const double *v, uint32_t n,
                                       gpufit_error *err);
/**
 * Reads a list job parameter: up to @p cap values into @p v (may be NULL when @p cap is 0) and
 * the list's length into @p n_out; GPUFIT_E_BUFFER_TOO_SMALL when @p cap is smaller. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_job_get_list(const gpufit_job *j, int32_t p, double *v, uint32_t cap,
                                       uint32_t *n_out, gpufit_error *err);

/**
 * Applies a spec string of space- or comma-separated key=value pairs to a model and a job.
 * `model=NAME` (applied first, wherever it stands) replaces @p m with a preset; model keys go
 * to @p m, job keys to @p j; `gpu=NAME` picks a catalogue GPU. Either handle may be NULL when
 * the spec has no key for it. On error neither handle changes and err->offset is the byte
 * offset of the bad token. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_apply_spec(gpufit_model *m, gpufit_job *j, const char *spec,
                                     gpufit_error *err);

/**
 * Applies a JSON scenario (docs/scenario.md) held in @p json (@p len bytes, need not be
 * NUL-terminated) to @p m and @p j. The model may be a preset name, {"preset": ..., overrides}
 * or architecture keys; the gpu a catalogue name or {"memory_gib": N} / {"memory_bytes": N}.
 * On error neither handle changes and err->offset is the byte offset. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_apply_json(gpufit_model *m, gpufit_job *j, const char *json, size_t len,
                                     gpufit_error *err);
/** @} */

/** @defgroup readers Model-file readers
 *  The core does no I/O: readers take buffers; the command and the bindings read the files.
 *  Every reader treats its input as hostile (bounds, depth and overflow checked).
 *  @{ */
/**
 * Model from the text of a Hugging Face config.json (@p len bytes, need not be
 * NUL-terminated). Unsupported model_type or a missing key: an error naming it. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_model_from_hf_config(gpufit_model **out, const char *json, size_t len,
                                               gpufit_error *err);
/**
 * Model from the beginning of a GGUF file: header, metadata and tensor-info table (no tensor
 * data needed). The model records every tensor's ggml type and shape, so its weight bytes are
 * exact per tensor and per layer. When @p len is too short the call returns
 * GPUFIT_E_BUFFER_TOO_SMALL and @p needed_out (optional) receives the bytes to read. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_model_from_gguf(gpufit_model **out, const void *buf, size_t len,
                                          uint64_t *needed_out, gpufit_error *err);

/** What a safetensors header (or a model.safetensors.index.json) holds (size-prefixed). */
typedef struct gpufit_safetensors_info {
    uint32_t struct_size;     /**< In: sizeof; out: bytes filled. */
    uint32_t n_tensors;       /**< Tensors listed. */
    uint64_t n_params;        /**< Elements over all tensors. */
    uint64_t total_bytes;     /**< Bytes of tensor data. */
    uint64_t header_bytes;    /**< Bytes of the header (8-byte length + JSON). */
    uint64_t bytes_fp32;      /**< Bytes stored as F32. */
    uint64_t bytes_16bit;     /**< Bytes stored as F16 or BF16. */
    uint64_t bytes_8bit;      /**< Bytes stored as F8_* , I8 or U8. */
    uint64_t bytes_other;     /**< Bytes of any other dtype (I32, I64, F64, BOOL ...). */
} gpufit_safetensors_info;

/**
 * Reads a safetensors header from the start of a .safetensors file, or a whole
 * model.safetensors.index.json (then only total_bytes is known). Summaries of several shards
 * may be added up by the caller. GPUFIT_E_BUFFER_TOO_SMALL with @p needed_out when the header
 * is longer than @p len. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_safetensors_read(gpufit_safetensors_info *out, const void *buf,
                                           size_t len, uint64_t *needed_out, gpufit_error *err);
/**
 * Cross-checks a model against safetensors: GPUFIT_E_INCONSISTENT (with both counts in the
 * message) when the parameter count differs beyond tied/duplicated embeddings. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_model_check_safetensors(const gpufit_model *m,
                                                  const gpufit_safetensors_info *info,
                                                  gpufit_error *err);
/** @} */

/** @defgroup catalogues Built-in catalogues
 *  @{ */
/** Description of a built-in model preset (size-prefixed output struct). */
typedef struct gpufit_preset_info {
    uint32_t struct_size;   /**< In: sizeof; out: bytes filled. */
    uint32_t index;         /**< Position in the catalogue. */
    uint64_t n_params;      /**< Total parameters. */
    uint64_t n_active_params; /**< Parameters used per token. */
    const char *name;       /**< Preset name (lowercased HF repository name); static. */
    const char *aliases;    /**< Space-separated short aliases; static. */
    const char *hf_repo;    /**< Hugging Face repository id; static. */
} gpufit_preset_info;
/** Describes the @p index-th preset; GPUFIT_E_NOT_FOUND past the end. @since 0.1.0 */
GPUFIT_API int32_t gpufit_preset_at(uint32_t index, gpufit_preset_info *out);

/** Description of a catalogue GPU (size-prefixed output struct). */
typedef struct gpufit_gpu_info {
    uint32_t struct_size;        /**< In: sizeof; out: bytes filled. */
    int32_t id;                  /**< Stable catalogue id (value of GPUFIT_JOB_GPU). */
    uint64_t memory_bytes;       /**< Capacity used for the verdict, bytes. */
    uint64_t marketed_bytes;     /**< Marketed GiB x 2^30, bytes. */
    double memory_bandwidth_gbs; /**< GB/s (10^9). */
    double bf16_tflops;          /**< Dense fp16/bf16 tensor TFLOPS, fp32 accumulate. */
    double fp8_tflops;           /**< Dense fp8 TFLOPS; 0 if unsupported. */
    double nvlink_gbs;           /**< NVLink bidirectional GB/s; 0 if none. */
    double msrp_usd;             /**< List price in USD; 0 if unknown. */
    int32_t supports_bf16;       /**< 1 when bf16 has hardware support. */
    int32_t supports_fp8;        /**< 1 when fp8 has hardware support. */
    int32_t usable_known;        /**< 1 when memory_bytes is a measured nvidia-smi total. */
    int32_t launch_year;         /**< Launch year. */
    const char *name;            /**< Catalogue name ("H100 SXM5"); static. */
    const char *key;             /**< Lowercase key ("h100-sxm5"); static. */
    const char *aliases;         /**< Space-separated aliases; static. */
    const char *vendor;          /**< Vendor; static. */
    const char *architecture;    /**< Architecture; static. */
} gpufit_gpu_info;
/** Describes the @p index-th catalogue GPU; GPUFIT_E_NOT_FOUND past the end. @since 0.1.0 */
GPUFIT_API int32_t gpufit_gpu_at(uint32_t index, gpufit_gpu_info *out);
/** Finds a GPU by name, key or alias (case-insensitive). @since 0.1.0 */
GPUFIT_API int32_t gpufit_gpu_by_name(const char *name, gpufit_gpu_info *out);
/** @} */

/** @defgroup results Evaluation and results
 *  @{ */
/** Memory components of a role; they add up exactly to its device_used_bytes. */
typedef enum gpufit_component {
    GPUFIT_MEM_WEIGHTS = 1,          /**< Model parameters resident on the device. */
    GPUFIT_MEM_GRADIENTS = 2,        /**< Gradient buffers. */
    GPUFIT_MEM_OPTIMIZER_STATES = 3, /**< Optimizer states. */
    GPUFIT_MEM_MASTER_WEIGHTS = 4,   /**< fp32 master copy of low-precision weights. */
    GPUFIT_MEM_ACTIVATIONS = 5,      /**< Saved activations / forward transients at the peak. */
    GPUFIT_MEM_KV_CACHE = 6,         /**< Key/value cache. */
    GPUFIT_MEM_LOGITS = 7,           /**< Output logits and loss buffers. */
    GPUFIT_MEM_COMM_BUFFERS = 8,     /**< NCCL and other communication buffers. */
    GPUFIT_MEM_WORKSPACE = 9,        /**< cuBLAS/cuDNN workspaces and other scratch. */
    GPUFIT_MEM_RUNTIME_CONTEXT = 10, /**< CUDA context and kernels. */
    GPUFIT_MEM_FRAGMENTATION = 11,   /**< Caching-allocator rounding and free cached blocks. */
    GPUFIT_COMPONENT_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_component;
/** Next component after @p prev (0 starts); 0 at the end. @since 0.1.0 */
GPUFIT_API int32_t gpufit_component_next(int32_t prev);
/** Name of a component ("kv_cache"); static; NULL if unknown. @since 0.1.0 */
GPUFIT_API const char *gpufit_component_name(int32_t c);

/** Evaluates @p m under @p j. An OOM verdict is a result, not an error. @since 0.1.0 */
GPUFIT_API int32_t gpufit_evaluate(gpufit_result **out, const gpufit_model *m,
                                   const gpufit_job *j, gpufit_error *err);
/** Frees a result; NULL is a no-op. @since 0.1.0 */
GPUFIT_API void gpufit_result_free(gpufit_result *r);

/**
 * The three-way verdict (docs/band.md): the band [low, high] of each role's device memory
 * comes from the documented ranges of the stack-dependent constants (CUDA context, NCCL
 * buffers, workspaces, allocator slack); exact terms have no width.
 */
typedef enum gpufit_verdict {
    GPUFIT_VERDICT_UNKNOWN = 0,  /**< No capacity given: no verdict. */
    GPUFIT_VERDICT_FITS = 1,     /**< The high end of every role's band fits. */
    GPUFIT_VERDICT_MARGINAL = 2, /**< Some role's capacity lies inside its band. */
    GPUFIT_VERDICT_OOM = 3,      /**< Some role does not fit even at the low end. */
    GPUFIT_VERDICT_MAX_ = 0x7FFFFFFF /**< Not a value. */
} gpufit_verdict;

/** Summary of a result (size-prefixed output struct; fields after n_mitigations were
 *  added later: an older, smaller struct_size is filled up to its size). */
typedef struct gpufit_summary {
    uint32_t struct_size;     /**< In: sizeof; out: bytes filled. */
    int32_t fits;             /**< 1 fits, 0 does not fit, -1 no verdict (no GPU given). */
    uint32_t n_roles;         /**< Device roles (gpufit_result_role). */
    uint32_t worst_role;      /**< Index of the role with the largest device_used_bytes. */
    uint32_t n_notes;         /**< Notes and warnings (gpufit_result_note). */
    uint32_t reserved0;       /**< 0. */
    uint64_t capacity_bytes;  /**< Device capacity the verdict used, bytes. */
    uint64_t peak_bytes;      /**< device_used_bytes of the worst role, bytes. */
    int64_t headroom_bytes;   /**< capacity - peak; negative when it does not fit. */
    uint64_t n_params;        /**< Model parameters (each once). */
    uint64_t n_active_params; /**< Parameters used per token. */
    uint64_t host_bytes;      /**< Host (CPU) memory the job places there, bytes. */
    uint32_t n_mitigations;   /**< Ranked mitigations (gpufit_result_mitigation). */
    uint32_t reserved1;       /**< 0. */
    int32_t verdict;          /**< gpufit_verdict. @since 0.1.0 */
    uint32_t reserved2;       /**< 0. */
    uint64_t peak_low_bytes;  /**< Low end of peak_bytes' band, bytes. @since 0.1.0 */
    uint64_t peak_high_bytes; /**< High end of peak_bytes' band, bytes. @since 0.1.0 */
} gpufit_summary;
/** Fills @p out with the summary of @p r. @since 0.1.0 */
GPUFIT_API int32_t gpufit_result_summary(const gpufit_result *r, gpufit_summary *out);
/**
 * Evaluates without allocating and fills @p out (size-prefixed) with the summary
 * gpufit_result_summary() would give, except n_mitigations = 0 (no mitigations are ranked):
 * the fast path for schedulers and planners. Thread-safe; the handles are only read.
 * @since 0.1.0
 */
GPUFIT_API int32_t gpufit_evaluate_summary(const gpufit_model *m, const gpufit_job *j,
                                           gpufit_summary *out, gpufit_error *err);

/** Most axes gpufit_sweep() takes. */
#define GPUFIT_SWEEP_AXES_MAX 8
/**
 * Evaluates a grid of jobs in one call: every combination of the values of @p n_axes
 * parameters (model or job, scalar: int, float, enum or bool), each set on copies of @p m and
 * @p j as the typed setters would, summarised as gpufit_evaluate_summary() does. Axis @c a is
 * parameter @p params[a] with @p counts[a] values, taken in order from @p values (axis 0's
 * first, then axis 1's...; enum and bool values by number, gpufit_param_value_by_name). Cells
 * are in row-major order (the last axis runs fastest, like Python's itertools.product):
 * cell @c c writes @p out[c] and @p status[c], GPUFIT_OK or the status that cell's setter or
 * evaluation returned (its summary then zero). @p out[0].struct_size is the caller's
 * sizeof(gpufit_summary) and the array's stride; @p n_out (the length of both arrays) must
 * cover the product of @p counts (else GPUFIT_E_BUFFER_TOO_SMALL). The call fails as a whole
 * only on a bad axis (unknown id, a list parameter, no values, a non-integer value for an
 * integer axis: the error's offset is its index in @p values) or a NULL argument; the
 * handles are only read. Thread-safe. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_sweep(const gpufit_model *m, const gpufit_job *j, const int32_t *params,
                                const uint32_t *counts, const double *values, uint32_t n_axes,
                                gpufit_summary *out, int32_t *status, uint64_t n_out,
                                gpufit_error *err);

/** One device role (size-prefixed output struct). */
typedef struct gpufit_role_info {
    uint32_t struct_size;          /**< In: sizeof; out: bytes filled. */
    uint32_t n_devices;            /**< Devices that share this role. */
    uint64_t peak_allocated_bytes; /**< Tensors and library workspaces at the peak. */
    uint64_t peak_reserved_bytes;  /**< Plus allocator caching (max_memory_reserved). */
    uint64_t device_used_bytes;    /**< Plus CUDA context and NCCL buffers (nvidia-smi). */
    int64_t headroom_bytes;        /**< capacity - device_used_bytes. */
    uint64_t kv_capacity_bytes;    /**< Inference: KV cache that fits in the budget. */
    uint64_t kv_capacity_tokens;   /**< Inference: tokens that fit in kv_capacity_bytes. */
    int32_t fits;                  /**< 1 fits, 0 not, -1 unchecked (no GPU; host role
                                        without host_memory_bytes). */
    uint32_t layers;               /**< Transformer layers held by this role. */
    const char *name;              /**< "all", "pp_first", "pp_middle", "pp_last", "gpu0".. (one
                                        per stage of a tensor_split/device_gpus split), "host";
                                        static. */
    uint64_t capacity_bytes;       /**< Memory of this role's GPU, bytes; 0 = unknown (host:
                                        host_memory_bytes). */
    const char *gpu;               /**< This role's GPU: a catalogue name, the job's GPU name,
                                        or "" (none); owned by the result or static. */
    /* the band (docs/band.md), bytes; an older, smaller struct_size stops before it */
    uint64_t peak_allocated_low_bytes;  /**< Low end of peak_allocated_bytes. @since 0.1.0 */
    uint64_t peak_allocated_high_bytes; /**< High end of peak_allocated_bytes. */
    uint64_t peak_reserved_low_bytes;   /**< Low end of peak_reserved_bytes. */
    uint64_t peak_reserved_high_bytes;  /**< High end of peak_reserved_bytes. */
    uint64_t device_used_low_bytes;     /**< Low end of device_used_bytes. */
    uint64_t device_used_high_bytes;    /**< High end of device_used_bytes. */
    uint64_t kv_capacity_low_bytes;     /**< Low end of kv_capacity_bytes (servers). */
    uint64_t kv_capacity_high_bytes;    /**< High end of kv_capacity_bytes. */
    int32_t verdict;                    /**< gpufit_verdict of this role. */
    uint32_t reserved0;                 /**< 0. */
} gpufit_role_info;
/** Fills @p out with role @p i of @p r. @since 0.1.0 */
GPUFIT_API int32_t gpufit_result_role(const gpufit_result *r, uint32_t i, gpufit_role_info *out);
/** Bytes of component @p c in role @p role. @since 0.1.0 */
GPUFIT_API int32_t gpufit_result_bytes(const gpufit_result *r, uint32_t role, int32_t c,
                                       uint64_t *out_bytes);
/**
 * Fits the stack constants that measured runs constrain (docs/calibration.md): @p runs holds
 * @p len bytes of JSON Lines in the format of docs/runs.md; the profile (JSON, for
 * gpufit_job_apply_profile()) is written into @p buf (capacity @p cap, NUL-terminated;
 * GPUFIT_E_BUFFER_TOO_SMALL with *@p len_out = the length needed). Errors carry the byte
 * offset in @p runs. No I/O. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_calibrate(const char *runs, size_t len, char *buf, size_t cap,
                                    size_t *len_out, gpufit_error *err);
/**
 * Applies a calibration profile (gpufit_calibrate()'s JSON, @p len bytes) to @p j: its
 * constants replace the defaults of the stack-constant table (a value the job gives, such as
 * cuda_context_bytes, still wins). All or nothing; errors name the member and byte offset.
 * @since 0.1.0
 */
GPUFIT_API int32_t gpufit_job_apply_profile(gpufit_job *j, const char *json, size_t len,
                                            gpufit_error *err);
/** Band of component @p c in role @p role: @p low_out and @p high_out (bytes, equal for
 *  exact terms; docs/band.md). @since 0.1.0 */
GPUFIT_API int32_t gpufit_result_bytes_band(const gpufit_result *r, uint32_t role, int32_t c,
                                            uint64_t *low_out, uint64_t *high_out);
/** The @p i-th note (assumption or warning) of @p r, owned by @p r. @since 0.1.0 */
GPUFIT_API int32_t gpufit_result_note(const gpufit_result *r, uint32_t i, const char **text_out);

/**
 * Writes the JSON report of docs/scenario.md into @p buf (capacity @p cap, NUL-terminated).
 * @p len_out (optional) receives the length without the NUL; when @p cap is too small the
 * call returns GPUFIT_E_BUFFER_TOO_SMALL and @p len_out still receives the needed length.
 * @since 0.1.0
 */
GPUFIT_API int32_t gpufit_result_to_json(const gpufit_result *r, char *buf, size_t cap,
                                         size_t *len_out, gpufit_error *err);
/**
 * What every auto of the job resolved to, as spec text ("framework=pytorch precision=amp_bf16
 * weight_dtype=fp32 ... dp=1 tp=1 pp=1 cp=1 layout=given"): the precision policy, the dtypes,
 * the attention implementation, the layout (chosen from gpus=N alone: layout=gpus_dp,
 * gpus_tp or gpus_layers) and the framework defaults used (docs/report.md, "resolved").
 * NUL-terminated into @p buf (capacity @p cap); @p len_out (optional) receives the length;
 * GPUFIT_E_BUFFER_TOO_SMALL when @p cap is too small. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_result_resolved(const gpufit_result *r, char *buf, size_t cap,
                                          size_t *len_out);
/**
 * The job's own flags in its framework's words (docs/flags.md): vLLM / SGLang server
 * arguments, llama.cpp options, Megatron-LM arguments, DeepSpeed config keys, or Hugging Face
 * Trainer / PEFT arguments, with the values the estimate used; "" when the framework takes
 * none of the job's settings as flags. NUL-terminated into @p buf (capacity @p cap); @p len_out
 * (optional) receives the length; GPUFIT_E_BUFFER_TOO_SMALL when @p cap is too small.
 * @since 0.1.0
 */
GPUFIT_API int32_t gpufit_result_flags(const gpufit_result *r, char *buf, size_t cap,
                                       size_t *len_out);

/** What a mitigation changes. */
typedef enum gpufit_mitigation_kind {
    GPUFIT_MIT_MICRO_BATCH = 1,       /**< Smaller micro-batch, more accumulation. */
    GPUFIT_MIT_CHECKPOINTING = 2,     /**< Selective or full activation checkpointing. */
    GPUFIT_MIT_ATTENTION = 3,         /**< Flash attention. */
    GPUFIT_MIT_PRECISION = 4,         /**< Mixed precision. */
    GPUFIT_MIT_OPTIMIZER = 5,         /**< 8-bit optimizer states, or a fused step. */
    GPUFIT_MIT_ZERO = 6,              /**< Higher ZeRO / FSDP stage. */
    GPUFIT_MIT_TENSOR_PARALLEL = 7,   /**< More tensor parallelism on the same GPUs. */
    GPUFIT_MIT_PIPELINE_PARALLEL = 8, /**< More pipeline stages on the same GPUs. */
    GPUFIT_MIT_OFFLOAD = 9,           /**< CPU offload of optimizer states. */
    GPUFIT_MIT_ADAPTERS = 10,         /**< LoRA / QLoRA instead of full training. */
    GPUFIT_MIT_WEIGHT_QUANT = 11,     /**< Quantised weights (inference). */
    GPUFIT_MIT_KV_QUANT = 12,         /**< Quantised KV cache. */
    GPUFIT_MIT_BATCH = 13,            /**< Fewer concurrent sequences. */
    GPUFIT_MIT_CONTEXT = 14,          /**< Shorter context. */
    GPUFIT_MIT_GPU_LAYERS = 15,       /**< Fewer layers on the GPU (partial offload). */
    GPUFIT_MIT_LARGER_GPU = 16,       /**< A catalogue GPU with more memory. */
    GPUFIT_MIT_MORE_GPUS = 17,        /**< More GPUs. */
    GPUFIT_MIT_SERVER_BUDGET = 18,    /**< A larger gpu_memory_utilization. */
    GPUFIT_MIT_COMBINED = 19,         /**< Two changes together. */
    GPUFIT_MIT_MAX_ = 0x7FFFFFFF      /**< Not a value. */
} gpufit_mitigation_kind;

/** One ranked mitigation (size-prefixed output struct). */
typedef struct gpufit_mitigation_info {
    uint32_t struct_size;      /**< In: sizeof; out: bytes filled. */
    int32_t kind;              /**< gpufit_mitigation_kind. */
    int32_t fits_after;        /**< 1 when the job fits after the change. */
    uint32_t n_changes;        /**< Parameter edits it consists of. */
    uint64_t peak_bytes_after; /**< Worst role's device_used_bytes after the change. */
    int64_t saved_bytes;       /**< Peak before minus peak after, bytes. */
    double cost;               /**< Rank key: what it costs in speed, quality or money. */
    const char *text;          /**< One-line description; owned by the result. */
    const char *changes;       /**< The edits as a canonical spec string (docs/advice.md: each
                                    key once, in parameter-id order); applied to the evaluated
                                    job it gives peak_bytes_after and fits_after; owned by the
                                    result. */
    const char *changes_json;  /**< The same edits as a JSON object for gpufit_apply_json();
                                    owned by the result. @since 0.1.0 */
    const char *flags;         /**< The same edits as the job's framework writes them, ready
                                    to paste (vLLM/SGLang arguments, llama.cpp options, HF
                                    Trainer/PEFT, DeepSpeed config, Megatron-LM arguments;
                                    docs/flags.md); owned by the result. @since 0.1.0 */
} gpufit_mitigation_info;

/**
 * The @p i-th mitigation, best first. gpufit_evaluate() ranks mitigations when the job does
 * not fit or fits with less than 5 % headroom. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_result_mitigation(const gpufit_result *r, uint32_t i,
                                            gpufit_mitigation_info *out);
/** Applies mitigation @p i of @p r to @p j (atomically): its changes, as printed. Applied to
 *  the job @p r was evaluated for, it gives exactly peak_bytes_after and fits_after.
 *  @since 0.1.0 */
GPUFIT_API int32_t gpufit_job_apply_mitigation(gpufit_job *j, const gpufit_result *r, uint32_t i,
                                               gpufit_error *err);
/**
 * Largest value of @p param (micro_batch, seq_len, batch, context_len, prompt_len or
 * n_gpu_layers) with which the job still fits its GPU, found exactly by bisection (memory is
 * monotone in each); 0 when even the smallest value does not fit. With global_batch set, the
 * micro-batch is the largest divisor of global_batch / dp that fits (the global batch is
 * kept by gradient accumulation). Only @p param changes: the value found, set alone, fits
 * (outside vLLM/SGLang a prompt stays within its context: context_len is searched from
 * prompt_len up, prompt_len up to context_len). GPUFIT_E_UNKNOWN_PARAM for an id that is no
 * parameter; GPUFIT_E_UNSUPPORTED for a parameter that is not searched or does not apply to
 * the job (training: micro_batch, seq_len; inference: batch, context_len, prompt_len, and
 * n_gpu_layers with llama.cpp). @since 0.1.0
 */
GPUFIT_API int32_t gpufit_max_fitting(const gpufit_model *m, const gpufit_job *j, int32_t param,
                                      int64_t *out, gpufit_error *err);

/** @} */

/** @defgroup planning GPU recommendation and layout planning
 *  @{ */
typedef struct gpufit_list gpufit_list; /**< Ranked recommendations or layouts (opaque). */

/** One GPU recommendation (size-prefixed output struct). */
typedef struct gpufit_recommendation {
    uint32_t struct_size;   /**< In: sizeof; out: bytes filled. */
    int32_t gpu_id;         /**< Catalogue id (gpufit_gpu_info.id). */
    uint32_t count;         /**< GPUs needed (the smallest power of two that fits). */
    int32_t fits;           /**< 1 when the job fits on count GPUs. */
    int32_t needs_nvlink;   /**< 1 when the layout shards the model over several GPUs. */
    int32_t has_nvlink;     /**< 1 when the GPU has NVLink. */
    uint64_t peak_bytes;    /**< device_used_bytes of the fullest GPU. */
    int64_t headroom_bytes; /**< Capacity minus peak, bytes. */
    double price_usd;       /**< count x list price; 0 when unknown. */
    double tflops;          /**< count x dense bf16 TFLOPS. */
    double tflops_per_kusd; /**< TFLOPS per 1000 USD; 0 when the price is unknown. */
    const char *gpu_name;   /**< Catalogue name; static. */
    const char *reason;     /**< Why it ranks where it does; owned by the list. */
    const char *spec;       /**< The job changes it consists of (gpu, count, ...) as a canonical
                                 spec string (docs/advice.md); applied to the job it was made
                                 for, it gives exactly peak_bytes and fits; owned by the list.
                                 @since 0.1.0 */
    const char *spec_json;  /**< The same changes as a JSON object; owned by the list.
                                 @since 0.1.0 */
} gpufit_recommendation;

/**
 * Every catalogue GPU (or only @p gpu_ids, @p n_gpu_ids of them) with the smallest count up to
 * @p max_count on which the job fits: inference over tensor parallelism, training with FSDP
 * full sharding over data parallelism. Ranked by the seed guide's order: memory fit, then the
 * interconnect a multi-GPU layout needs (NVLink), then price, then TFLOPS per dollar.
 * An id in @p gpu_ids that is not in the catalogue is GPUFIT_E_NOT_FOUND (the message names
 * it). @since 0.1.0
 */
GPUFIT_API int32_t gpufit_recommend(gpufit_list **out, const gpufit_model *m, const gpufit_job *j,
                                    const int32_t *gpu_ids, uint32_t n_gpu_ids, uint32_t max_count,
                                    gpufit_error *err);

/** One layout found by the planner (size-prefixed output struct). */
typedef struct gpufit_layout {
    uint32_t struct_size;   /**< In: sizeof; out: bytes filled. */
    uint32_t tp;            /**< Tensor-parallel degree. */
    uint32_t pp;            /**< Pipeline stages. */
    uint32_t vpp;           /**< Virtual pipeline chunks. */
    uint32_t dp;            /**< Data-parallel degree. */
    uint32_t cp;            /**< Context-parallel degree. */
    uint32_t ep;            /**< Expert-parallel degree. */
    uint32_t zero;          /**< ZeRO stage. */
    uint32_t micro_batch;   /**< Micro-batch. */
    int32_t checkpointing;  /**< gpufit_checkpointing. */
    uint64_t peak_bytes;    /**< device_used_bytes of the fullest role. */
    int64_t headroom_bytes; /**< Capacity minus peak, bytes. */
    double cost;            /**< Documented cost (docs/planner.md); lower is better. */
    const char *spec;       /**< The layout as a canonical spec string (docs/advice.md): every
                                 degree it decides and every job field the planner reset;
                                 applied to the job it was planned for, it gives exactly
                                 peak_bytes (and a fit); owned by the list. */
    const char *placement;  /**< Rank placement and CUDA_VISIBLE_DEVICES; owned by the list. */
    uint64_t kv_capacity_tokens; /**< Serving: KV-cache tokens that fit per replica (the room
                                      to serve); 0 for training. */
    const char *spec_json;       /**< The same changes as a JSON object; owned by the list.
                                      @since 0.1.0 */
    const char *flags; /**< The layout in its framework's own flags (Megatron arguments, a
                            DeepSpeed config fragment, vLLM/SGLang options, llama.cpp's
                            -ngl/-ts; docs/flags.md), as gpufit_result_flags() gives for the
                            job with the layout applied; "" when it has none; owned by the
                            list. @since 0.1.0 */
} gpufit_layout;

/**
 * Enumerates every valid (tp, pp, vpp, dp, cp, ep, zero, micro_batch, checkpointing) for
 * @p gpus_per_node x @p nodes GPUs of the job's GPU kind, keeps the layouts that fit and
 * returns the @p max_results cheapest by the documented cost. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_plan(gpufit_list **out, const gpufit_model *m, const gpufit_job *j,
                               uint32_t gpus_per_node, uint32_t nodes, uint32_t max_results,
                               gpufit_error *err);

/** Entries in a list. @since 0.1.0 */
GPUFIT_API uint32_t gpufit_list_count(const gpufit_list *l);
/** Candidates the search evaluated to build the list. @since 0.1.0 */
GPUFIT_API uint64_t gpufit_list_evaluated(const gpufit_list *l);
/** The @p i-th recommendation of a list made by gpufit_recommend(). @since 0.1.0 */
GPUFIT_API int32_t gpufit_list_recommendation(const gpufit_list *l, uint32_t i,
                                              gpufit_recommendation *out);
/** The @p i-th layout of a list made by gpufit_plan(). @since 0.1.0 */
GPUFIT_API int32_t gpufit_list_layout(const gpufit_list *l, uint32_t i, gpufit_layout *out);
/**
 * Applies entry @p i of @p l (a recommendation or a layout) to @p j (atomically): the changes
 * its spec names. Applied to the job the list was made for, the job then evaluates to exactly
 * the entry's peak_bytes and verdict. @since 0.1.0
 */
GPUFIT_API int32_t gpufit_job_apply_list_entry(gpufit_job *j, const gpufit_list *l, uint32_t i,
                                               gpufit_error *err);
/** Frees a list; NULL is a no-op. @since 0.1.0 */
GPUFIT_API void gpufit_list_free(gpufit_list *l);
/** @} */

/** @addtogroup results
 *  @{ */
/** True when a size-prefixed struct filled by gpufit contains @p field. */
#define GPUFIT_HAS_FIELD(ptr, type, field)                                                         \
    ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* GPUFIT_H */
