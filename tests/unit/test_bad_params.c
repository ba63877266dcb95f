/* SPDX-License-Identifier: MIT */
/* Bad-input battery over EVERY parameter of the table (issue 7).
 *
 * For each parameter gpufit_param_next() lists, and by its type (int, float, enum, bool, list):
 * below-min, above-max, the int64 extremes, NaN and infinities, non-integral numbers, non-numbers,
 * unknown value names and negative numbers, through the typed setters, spec strings and JSON
 * scenarios; list parameters also through gpufit_job_set_list/get_list (too many entries, bad
 * elements, empty entries, NULL values, a buffer that is too small). Each rejection must carry the
 * exact status, err.param = the parameter's id, a message naming the parameter, the offset of the
 * bad pair (spec) or value (JSON), and leave both handles unchanged.
 *
 * battery[] below names every parameter once, with its evaluation-time checks (missing values,
 * inconsistent combinations) or the reason it has none. `battery.covers_every_parameter` fails
 * when the table gains a parameter that battery[] does not list: add a row for it (and a case
 * if evaluation can reject it). */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * The coverage list: every parameter, with evaluation-time bad cases.
 * ------------------------------------------------------------------------------------- */
typedef struct eval_case {
    const char *spec; /* applies cleanly; gpufit_evaluate() must reject it */
    int32_t status;   /* expected status */
    int32_t param;    /* expected err.param */
} eval_case;

typedef struct battery_row {
    const char *name;
    eval_case eval[3];        /* up to three evaluation cases (spec NULL = none) */
    const char *none_because; /* when eval[0].spec is NULL: why no evaluation case exists */
} battery_row;

#define E(s, st, p)                                                                                \
    {                                                                                              \
        s, st, p                                                                                   \
    }
#define INV GPUFIT_E_INVALID_ARG
#define INC GPUFIT_E_INCONSISTENT

static const battery_row battery[] = {
    {"arch", {{0}}, "every arch is valid; its required keys are checked under their own names"},
    {"n_layers",
     {E("arch=decoder hidden_size=64 n_heads=4 vocab_size=100 ffn_hidden_size=64",
        INV,
        GPUFIT_MODEL_N_LAYERS),
      E("model=llama-3-8b pp=33", INC, GPUFIT_JOB_PP)},
     NULL},
    {"hidden_size",
     {E("arch=decoder n_layers=2 n_heads=4 vocab_size=100 ffn_hidden_size=64",
        INV,
        GPUFIT_MODEL_HIDDEN_SIZE)},
     NULL},
    {"n_heads",
     {E("arch=decoder n_layers=2 hidden_size=64 vocab_size=100 ffn_hidden_size=64",
        INV,
        GPUFIT_MODEL_N_HEADS),
      E("model=gpt2 head_dim=0 n_kv_heads=0 n_heads=7", INC, GPUFIT_MODEL_N_HEADS)},
     NULL},
    {"n_kv_heads", {E("model=llama-3-8b n_kv_heads=5", INC, GPUFIT_MODEL_N_KV_HEADS)}, NULL},
    {"head_dim", {{0}}, "any head_dim in range gives a valid geometry"},
    {"ffn_hidden_size",
     {E("arch=decoder n_layers=2 hidden_size=64 n_heads=4 vocab_size=100",
        INV,
        GPUFIT_MODEL_FFN_HIDDEN_SIZE)},
     NULL},
    {"mlp", {{0}}, "enum: every named value is valid"},
    {"vocab_size",
     {E("arch=decoder n_layers=2 hidden_size=64 n_heads=4 ffn_hidden_size=64",
        INV,
        GPUFIT_MODEL_VOCAB_SIZE)},
     NULL},
    {"tied_embeddings", {{0}}, "bool"},
    {"norm", {{0}}, "enum: every named value is valid"},
    {"qkv_bias", {{0}}, "bool"},
    {"mlp_bias", {{0}}, "bool"},
    {"max_position", {{0}}, "0 (none) or any count of learned positions"},
    {"o_bias", {{0}}, "-1 (auto), 0 or 1"},
    {"emb_norm", {{0}}, "-1 (auto), 0 or 1"},
    {"qk_norm", {{0}}, "bool"},
    {"rope_positions", {{0}}, "any count in range (0 = no table)"},
    {"rotary_dim",
     {E("model=llama-3-8b rotary_dim=256", INC, GPUFIT_MODEL_ROTARY_DIM),
      E("model=deepseek-v3 rotary_dim=128", INC, GPUFIT_MODEL_ROTARY_DIM)},
     NULL},
    {"type_vocab_size", {{0}}, "0 (none) or any count"},
    {"pooler", {{0}}, "bool"},
    {"n_experts",
     {E("model=mixtral-8x7b n_experts=1", INC, GPUFIT_MODEL_EXPERTS_PER_TOKEN),
      E("model=mixtral-8x7b n_experts=6 ep=4 dp=4", INC, GPUFIT_JOB_EP)},
     NULL},
    {"n_shared_experts", {{0}}, "0 or any count of shared experts"},
    {"experts_per_token",
     {E("model=mixtral-8x7b experts_per_token=0", INC, GPUFIT_MODEL_EXPERTS_PER_TOKEN),
      E("model=mixtral-8x7b experts_per_token=9", INC, GPUFIT_MODEL_EXPERTS_PER_TOKEN),
      E("model=llama-3-8b n_experts=8", INC, GPUFIT_MODEL_EXPERTS_PER_TOKEN)},
     NULL},
    {"moe_ffn_hidden_size", {{0}}, "0 means ffn_hidden_size"},
    {"n_dense_layers",
     {E("model=mixtral-8x7b n_dense_layers=33", INC, GPUFIT_MODEL_N_DENSE_LAYERS)},
     NULL},
    {"shared_ffn_hidden_size", {{0}}, "0 means moe_ffn_hidden_size"},
    {"router_bias", {{0}}, "bool"},
    {"shared_expert_gate", {{0}}, "bool"},
    {"q_lora_rank", {{0}}, "0 (no query compression) or any rank"},
    {"kv_lora_rank",
     {E("model=llama-3-8b kv_lora_rank=64", INV, GPUFIT_MODEL_QK_NOPE_HEAD_DIM)},
     NULL},
    {"qk_nope_head_dim",
     {E("model=deepseek-v2-lite qk_nope_head_dim=0", INV, GPUFIT_MODEL_QK_NOPE_HEAD_DIM)},
     NULL},
    {"qk_rope_head_dim",
     {E("model=deepseek-v2-lite qk_rope_head_dim=0", INV, GPUFIT_MODEL_QK_ROPE_HEAD_DIM)},
     NULL},
    {"v_head_dim", {E("model=deepseek-v2-lite v_head_dim=0", INV, GPUFIT_MODEL_V_HEAD_DIM)}, NULL},
    {"n_encoder_layers",
     {E("arch=encoder_decoder hidden_size=512 n_heads=8 vocab_size=100 ffn_hidden_size=64",
        INV,
        GPUFIT_MODEL_N_ENCODER_LAYERS)},
     NULL},
    {"n_decoder_layers", {{0}}, "0 falls back to n_encoder_layers (test_models.c)"},
    {"rel_pos_buckets", {{0}}, "0 (none) or any count"},
    {"sliding_window",
     {E("model=t5-base sliding_window=128", GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_SLIDING_WINDOW),
      E("model=deepseek-v2-lite sliding_window=128", GPUFIT_E_UNSUPPORTED,
        GPUFIT_MODEL_SLIDING_WINDOW)},
     NULL},
    {"sliding_window_pattern",
     {E("model=llama-3-8b sliding_window_pattern=6", INC, GPUFIT_MODEL_SLIDING_WINDOW_PATTERN)},
     NULL},
    {"n_cross_attn_layers",
     {E("model=llama-3-8b n_cross_attn_layers=33", INC, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS),
      E("model=mixtral-8x7b n_cross_attn_layers=4", GPUFIT_E_UNSUPPORTED,
        GPUFIT_MODEL_N_CROSS_ATTN_LAYERS)},
     NULL},
    {"cross_attn_tokens",
     {E("model=llama-3-8b cross_attn_tokens=6404", INC, GPUFIT_MODEL_N_CROSS_ATTN_LAYERS)},
     NULL},
    {"vision_layers",
     {E("model=bert-base-uncased vision_layers=2 vision_hidden_size=64 vision_heads=4 "
        "vision_ffn_hidden_size=128 vision_patch_size=14 vision_image_size=28",
        GPUFIT_E_UNSUPPORTED,
        GPUFIT_MODEL_VISION_LAYERS),
      E("model=llava-1.5-7b vision_layers=0", INC, GPUFIT_MODEL_VISION_HIDDEN_SIZE)},
     NULL},
    {"vision_hidden_size",
     {E("model=llama-3-8b vision_hidden_size=1024", INC, GPUFIT_MODEL_VISION_HIDDEN_SIZE),
      E("model=llava-1.5-7b vision_hidden_size=1000", INC, GPUFIT_MODEL_VISION_HEADS)},
     NULL},
    {"vision_heads",
     {E("model=llama-3-8b vision_heads=16", INC, GPUFIT_MODEL_VISION_HEADS),
      E("model=llava-1.5-7b vision_heads=0", INV, GPUFIT_MODEL_VISION_HEADS)},
     NULL},
    {"vision_ffn_hidden_size",
     {E("model=llama-3-8b vision_ffn_hidden_size=4096", INC,
        GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE),
      E("model=llava-1.5-7b vision_ffn_hidden_size=0", INV, GPUFIT_MODEL_VISION_FFN_HIDDEN_SIZE)},
     NULL},
    {"vision_patch_size",
     {E("model=llama-3-8b vision_patch_size=14", INC, GPUFIT_MODEL_VISION_PATCH_SIZE),
      E("model=llava-1.5-7b vision_patch_size=0", INV, GPUFIT_MODEL_VISION_PATCH_SIZE),
      E("model=llava-1.5-7b vision_patch_size=15", INC, GPUFIT_MODEL_VISION_IMAGE_SIZE)},
     NULL},
    {"vision_image_size",
     {E("model=llama-3-8b vision_image_size=336", INC, GPUFIT_MODEL_VISION_IMAGE_SIZE),
      E("model=llava-1.5-7b vision_image_size=0", INV, GPUFIT_MODEL_VISION_IMAGE_SIZE),
      E("model=qwen2-vl-7b vision_image_size=3570", INC, GPUFIT_MODEL_VISION_IMAGE_SIZE)},
     NULL},
    {"vision_merge",
     {E("model=llama-3-8b vision_merge=2", INC, GPUFIT_MODEL_VISION_MERGE),
      E("model=llava-1.5-7b vision_merge=5", INC, GPUFIT_MODEL_VISION_IMAGE_SIZE)},
     NULL},
    {"vision_style",
     {E("model=llama-3-8b vision_style=siglip", INC, GPUFIT_MODEL_VISION_STYLE)},
     NULL},
    {"vision_projector",
     {E("model=llama-3-8b vision_projector=merger", INC, GPUFIT_MODEL_VISION_PROJECTOR)},
     NULL},
    {"vision_tiles",
     {E("model=llama-3-8b vision_tiles=4", INC, GPUFIT_MODEL_VISION_TILES)},
     NULL},
    {"n_params", {E("arch=generic n_params=0", INV, GPUFIT_MODEL_N_PARAMS)}, NULL},
    {"activation_bytes_per_token", {{0}}, "float: any value in range"},
    {"embedding_dtype",
     {E("model=llama-3-8b embedding_dtype=none", INV, GPUFIT_MODEL_EMBEDDING_DTYPE)},
     NULL},
    {"attention_dtype",
     {E("model=llama-3-8b attention_dtype=none", INV, GPUFIT_MODEL_ATTENTION_DTYPE)},
     NULL},
    {"mlp_dtype",
     {E("model=llama-3-8b mlp_dtype=none", INV, GPUFIT_MODEL_MLP_DTYPE),
      E("model=llama-3-8b task=pretrain mlp_dtype=awq4", GPUFIT_E_UNSUPPORTED,
        GPUFIT_MODEL_MLP_DTYPE)},
     NULL},
    {"output_dtype", {E("model=llama-3-8b output_dtype=none", INV, GPUFIT_MODEL_OUTPUT_DTYPE)}, NULL},
    {"expert_dtype",
     {E("model=mixtral-8x7b expert_dtype=none", INV, GPUFIT_MODEL_EXPERT_DTYPE)},
     NULL},

    {"task", {{0}}, "enum: every named value is valid"},
    {"micro_batch", {{0}}, "any count in range"},
    {"seq_len", {E("model=llama-3-8b task=pretrain cp=3 seq_len=4096", INC, GPUFIT_JOB_CP)}, NULL},
    {"global_batch", {{0}}, "0 or any count (accumulation rounds down, at least 1)"},
    {"batch", {{0}}, "any count in range"},
    {"context_len", {{0}}, "any count in range"},
    {"prompt_len", {{0}}, "0 (framework default) or any count"},
    {"lora_rank", {{0}}, "any rank in range"},
    {"lora_targets", {{0}}, "enum: every named value is valid"},
    {"lora_modules", {{0}}, "every bit set in range names modules; names are checked when set"},
    {"adapter_dtype",
     {E("model=llama-3-8b task=lora adapter_dtype=q4_0", INV, GPUFIT_JOB_ADAPTER_DTYPE)},
     NULL},
    {"trainer",
     {E("model=llama-3-8b task=inference trainer=torchtune", INC, GPUFIT_JOB_TRAINER),
      E("model=llama-3-8b task=lora framework=deepspeed trainer=hf", INC, GPUFIT_JOB_TRAINER)},
     NULL},
    {"optimizer_impl",
     {E("model=llama-3-8b task=inference optimizer_impl=fused", INC, GPUFIT_JOB_OPTIMIZER_IMPL),
      E("model=llama-3-8b task=pretrain framework=megatron optimizer_impl=foreach", INC,
        GPUFIT_JOB_OPTIMIZER_IMPL)},
     NULL},
    {"expandable_segments",
     {E("model=llama-3-8b task=inference framework=llamacpp expandable_segments=1", INC,
        GPUFIT_JOB_EXPANDABLE_SEGMENTS)},
     NULL},
    /* llama.cpp: a partial offload over several devices is not modelled (docs/splits.md) */
    {"n_gpu_layers",
     {E("model=llama-3-8b task=inference framework=llamacpp pp=2 n_gpu_layers=32", INC,
        GPUFIT_JOB_N_GPU_LAYERS),
      E("model=llama-3-8b task=inference framework=llamacpp pp=2 n_gpu_layers=0", INC,
        GPUFIT_JOB_N_GPU_LAYERS)},
     NULL},
    {"gpu_memory_utilization", {{0}}, "float: any fraction in range"},
    {"max_num_seqs", {{0}}, "0 (auto) or any count"},
    {"mm_items_per_prompt",
     {E("model=llama-3-8b framework=vllm mm_items_per_prompt=1", INC,
        GPUFIT_JOB_MM_ITEMS_PER_PROMPT),
      E("model=llava-1.5-7b framework=pytorch mm_items_per_prompt=2", INC,
        GPUFIT_JOB_MM_ITEMS_PER_PROMPT)},
     NULL},
    {"precision", {{0}}, "enum: every named value is valid"},
    {"weight_dtype",
     {E("model=llama-3-8b weight_dtype=none", INV, GPUFIT_JOB_WEIGHT_DTYPE),
      E("model=llama-3-8b task=pretrain weight_dtype=q4_k_m",
        GPUFIT_E_UNSUPPORTED,
        GPUFIT_JOB_WEIGHT_DTYPE)},
     NULL},
    {"compute_dtype",
     {E("model=llama-3-8b compute_dtype=q4_0", INV, GPUFIT_JOB_COMPUTE_DTYPE),
      E("model=llama-3-8b compute_dtype=none", INV, GPUFIT_JOB_COMPUTE_DTYPE)},
     NULL},
    {"grad_dtype",
     {E("model=llama-3-8b task=pretrain grad_dtype=q4_0", INV, GPUFIT_JOB_GRAD_DTYPE),
      E("model=llama-3-8b task=pretrain grad_dtype=none", INV, GPUFIT_JOB_GRAD_DTYPE)},
     NULL},
    {"master_weights",
     {E("model=llama-3-8b task=pretrain master_weights=q4_0", INV, GPUFIT_JOB_MASTER_WEIGHTS)},
     NULL},
    {"optimizer_dtype",
     {E("model=llama-3-8b task=pretrain optimizer_dtype=q4_0", INV, GPUFIT_JOB_OPTIMIZER_DTYPE)},
     NULL},
    {"kv_dtype", {{0}}, "every dtype has a size (see the report on kv_dtype=none)"},
    {"optimizer", {{0}}, "enum: every named value is valid"},
    {"checkpointing", {{0}}, "enum: every named value is valid"},
    {"checkpoint_every",
     {E("model=llama-3-8b task=pretrain checkpoint_every=2", INC, GPUFIT_JOB_CHECKPOINT_EVERY),
      E("model=llama-3-8b task=pretrain checkpointing=selective_op checkpoint_every=2",
        INC,
        GPUFIT_JOB_CHECKPOINT_EVERY)},
     NULL},
    {"checkpoint_layers",
     {E("model=llama-3-8b task=pretrain checkpointing=selective checkpoint_layers=4",
        INC,
        GPUFIT_JOB_CHECKPOINT_LAYERS),
      E("model=llama-3-8b task=pretrain checkpointing=full checkpoint_layers=4 checkpoint_every=2",
        INC,
        GPUFIT_JOB_CHECKPOINT_LAYERS)},
     NULL},
    {"attention", {{0}}, "enum: every named value is valid"},
    {"dropout", {{0}}, "float: any probability in range"},
    {"lora_dropout", {{0}}, "float: any probability in range (ignored without LoRA adapters)"},
    {"dp", {E("model=llama-3-8b dp=3 gpus=4", INC, GPUFIT_JOB_GPUS)}, NULL},
    {"tp",
     {E("model=llama-3-8b tp=3", INC, GPUFIT_JOB_TP),
      E("model=llama-3-8b tp=64", INC, GPUFIT_JOB_TP)},
     NULL},
    {"pp", {E("model=llama-3-8b pp=33", INC, GPUFIT_JOB_PP)}, NULL},
    {"vpp", {E("model=llama-3-8b vpp=2", INC, GPUFIT_JOB_VPP)}, NULL},
    {"cp", {E("model=llama-3-8b task=pretrain cp=3 seq_len=4096", INC, GPUFIT_JOB_CP)}, NULL},
    {"ep",
     {E("model=llama-3-8b ep=2 dp=2", INC, GPUFIT_JOB_EP),
      E("model=mixtral-8x7b ep=2", INC, GPUFIT_JOB_EP),
      E("model=mixtral-8x7b ep=3 dp=3", INC, GPUFIT_JOB_EP)},
     NULL},
    {"etp",
     {E("model=llama-3-8b task=pretrain framework=megatron tp=2 etp=1", INC, GPUFIT_JOB_ETP),
      E("model=mixtral-8x7b task=pretrain framework=megatron tp=2 dp=2 ep=4 etp=2",
        INC,
        GPUFIT_JOB_ETP),
      E("model=mixtral-8x7b task=pretrain tp=2 dp=2 ep=2 etp=1", INC, GPUFIT_JOB_ETP)},
     NULL},
    {"sp", {E("model=llama-3-8b sp=1", INC, GPUFIT_JOB_SP)}, NULL},
    {"zero", {{0}}, "any stage 0-3 with any dp"},
    {"offload", {{0}}, "enum: every named value is valid"},
    {"gpus",
     {E("model=llama-3-8b dp=2 gpus=3", INC, GPUFIT_JOB_GPUS),
      E("model=llama-3-8b tp=2 pp=2 gpus=2", INC, GPUFIT_JOB_GPUS)},
     NULL},
    {"pp_schedule", {{0}}, "enum: every named value is valid"},
    {"pp_first_layers",
     {E("model=llama-3-8b pp=2 pp_first_layers=33", INC, GPUFIT_JOB_PP_FIRST_LAYERS),
      E("model=llama-3-8b pp=3 pp_first_layers=31", INC, GPUFIT_JOB_PP_FIRST_LAYERS)},
     NULL},
    /* pp_last_layers: reported as GPUFIT_JOB_PP_FIRST_LAYERS, see last_layers_case below */
    {"pp_last_layers", {{0}}, "checked by bad_eval.pp_last_layers_names_itself"},
    {"zero_shard_size",
     {E("model=llama-3-8b dp=4 zero_shard_size=3 zero=3 task=pretrain",
        INC,
        GPUFIT_JOB_ZERO_SHARD_SIZE),
      E("model=llama-3-8b zero_shard_size=2", INC, GPUFIT_JOB_ZERO_SHARD_SIZE)},
     NULL},
    /* DeepSpeed / FSDP keys on jobs they do not apply to: an error naming the key */
    {"reduce_bucket_size",
     {E("model=llama-3-8b task=pretrain framework=pytorch zero=1 dp=8 reduce_bucket_size=2e8",
        INC,
        GPUFIT_JOB_REDUCE_BUCKET_SIZE),
      E("model=llama-3-8b framework=deepspeed reduce_bucket_size=2e8", INC,
        GPUFIT_JOB_REDUCE_BUCKET_SIZE)},
     NULL},
    {"overlap_comm",
     {E("model=llama-3-8b task=pretrain framework=megatron dp=8 overlap_comm=on", INC,
        GPUFIT_JOB_OVERLAP_COMM),
      E("model=llama-3-8b framework=vllm overlap_comm=off", INC, GPUFIT_JOB_OVERLAP_COMM)},
     NULL},
    {"sync_each_batch",
     {E("model=llama-3-8b task=pretrain framework=deepspeed zero=3 dp=8 sync_each_batch=1",
        INC,
        GPUFIT_JOB_SYNC_EACH_BATCH),
      E("model=llama-3-8b sync_each_batch=1", INC, GPUFIT_JOB_SYNC_EACH_BATCH)},
     NULL},
    {"gpu", {{0}}, "a catalogue id or none"},
    {"gpu_memory_bytes", {{0}}, "0 (the GPU's) or any capacity"},
    {"framework", {{0}}, "enum: every named value is valid"},
    {"framework_version",
     {E("model=llama-3-8b task=inference framework=pytorch framework_version=0.6.3", INC,
        GPUFIT_JOB_FRAMEWORK_VERSION),
      E("model=llama-3-8b task=inference framework=llamacpp framework_version=0.19", INC,
        GPUFIT_JOB_FRAMEWORK_VERSION)},
     NULL},
    {"host_memory_bytes", {{0}}, "0 (unchecked) or any capacity"},
    {"margin", {E("model=llama-3-8b gpu=h100 margin=0.1 margin_bytes=1GiB", INC,
                  GPUFIT_JOB_MARGIN_BYTES)},
     NULL},
    {"margin_bytes", {{0}}, "0 (none) or any byte count; with margin: see margin"},
    /* Lists: the setters check count, elements and (tensor_split) a positive sum; evaluation
     * checks one entry per pipeline stage and no other way of splitting (test_split.c). */
    {"tensor_split",
     {E("model=llama-3-8b task=inference pp=2 tensor_split=1,1,1", INC, GPUFIT_JOB_TENSOR_SPLIT),
      E("model=llama-3-8b task=pretrain pp=2 tensor_split=1,1 pp_last_layers=4", INC,
        GPUFIT_JOB_TENSOR_SPLIT)},
     NULL},
    {"device_gpus",
     {E("model=llama-3-8b task=inference pp=3 device_gpus=h100,rtx-4090", INC,
        GPUFIT_JOB_DEVICE_GPUS),
      E("model=llama-3-8b task=pretrain pp=2 vpp=2 device_gpus=h100,h100", INC,
        GPUFIT_JOB_DEVICE_GPUS)},
     NULL},
    /* device_memory_gib: entries > 0 (setters); one per stage and no other way of splitting
     * (evaluation) */
    {"device_memory_gib",
     {E("model=llama-3-8b task=inference framework=llamacpp pp=2 device_memory_gib=24,12,12",
        INC, GPUFIT_JOB_DEVICE_MEMORY_GIB),
      E("model=llama-3-8b task=pretrain pp=2 vpp=2 device_memory_gib=80,80", INC,
        GPUFIT_JOB_DEVICE_MEMORY_GIB),
      E("model=llama-3-8b task=inference pp=2 device_gpus=h100,rtx-4090 "
        "device_memory_gib=80,24,24",
        INC, GPUFIT_JOB_DEVICE_MEMORY_GIB)},
     NULL},
    {"gpu_memory_gib", {{0}}, "float: 0 (the GPU's) or any capacity"},
    {"cuda_context_bytes", {{0}}, "-1 (default) or any size"},
    {"cuda_version", {{0}}, "0 (current) or any release: every framework runs on CUDA"},
    {"workspace_bytes", {{0}}, "-1 (default) or any size"},
    {"fragmentation", {{0}}, "-1 (default) or any fraction in range"},
    {"mitigations", {{0}}, "any count 0-12 (0 = none)"},
    {"allow_hardware", {{0}}, "bool: every value is valid"},
};
#define N_BATTERY (sizeof battery / sizeof battery[0])

/* ---------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------- */
typedef struct handles {
    gpufit_model *m;
    gpufit_job *j;
} handles;

static handles fresh(void)
{
    handles h = {NULL, NULL};
    cr_assert_eq(gpufit_model_from_preset(&h.m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&h.j, NULL), GPUFIT_OK);
    /* lists start non-empty, so that a rejected call that clears or shortens one shows */
    cr_assert_eq(gpufit_apply_spec(h.m, h.j,
                                   "task=pretrain tp=2 gpu=h100 tensor_split=3,1 "
                                   "device_gpus=h100,rtx-4090",
                                   NULL),
                 GPUFIT_OK);
    return h;
}

static void release(handles h)
{
    gpufit_model_free(h.m);
    gpufit_job_free(h.j);
}

static gpufit_param_info info_of(int32_t p)
{
    gpufit_param_info in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    cr_assert_eq(gpufit_param_get_info(p, &in), GPUFIT_OK, "param %d", p);
    return in;
}

#define SNAP_MAX 1024
/* Every parameter of both handles as raw bits (a list: its count, then each element's bits),
 * and the model name. */
typedef struct snap {
    uint64_t bits[SNAP_MAX];
    size_t n;
    char name[64];
} snap;

static void take(handles h, snap *s)
{
    s->n = 0;
    for (int32_t p = gpufit_param_next(0); p != 0 && s->n < SNAP_MAX; p = gpufit_param_next(p)) {
        gpufit_param_info in = info_of(p);
        int model = in.domain == GPUFIT_DOMAIN_MODEL;
        uint64_t b = 0;
        if (in.type == GPUFIT_TYPE_LIST) {
            double v[GPUFIT_LIST_MAX];
            uint32_t n = UINT32_MAX;
            cr_assert(!model, "%s: a list in the model domain", in.name);
            cr_assert_eq(gpufit_job_get_list(h.j, p, v, GPUFIT_LIST_MAX, &n, NULL), GPUFIT_OK);
            cr_assert(n <= GPUFIT_LIST_MAX, "%s: %u entries", in.name, n);
            s->bits[s->n++] = n;
            for (uint32_t k = 0; k < n && s->n < SNAP_MAX; k++)
                memcpy(&s->bits[s->n++], &v[k], sizeof v[k]);
            continue;
        }
        if (in.type == GPUFIT_TYPE_FLOAT) {
            double d = 0.0;
            cr_assert_eq(model ? gpufit_model_get_float(h.m, p, &d, NULL)
                               : gpufit_job_get_float(h.j, p, &d, NULL),
                         GPUFIT_OK);
            memcpy(&b, &d, sizeof b);
        } else {
            int64_t v = 0;
            cr_assert_eq(model ? gpufit_model_get_int(h.m, p, &v, NULL)
                               : gpufit_job_get_int(h.j, p, &v, NULL),
                         GPUFIT_OK);
            b = (uint64_t)v;
        }
        s->bits[s->n++] = b;
    }
    cr_assert(s->n < SNAP_MAX, "raise SNAP_MAX");
    snprintf(s->name, sizeof s->name, "%s", gpufit_model_name(h.m));
}

static void assert_unchanged(handles h, const snap *before, const char *what)
{
    snap after;
    take(h, &after);
    cr_assert_eq(after.n, before->n);
    for (size_t i = 0; i < after.n; i++)
        cr_assert_eq(after.bits[i], before->bits[i], "%s changed parameter #%zu", what, i);
    cr_assert_str_eq(after.name, before->name, "%s changed the model name", what);
}

/* Checks a rejection: status, err.status, err.param, the name in a one-line message. */
static void assert_rejected(int32_t st,
                            const gpufit_error *err,
                            int32_t want,
                            int32_t param,
                            const char *name,
                            const char *what)
{
    cr_assert_eq(st, want, "%s: status %d, want %d (%s)", what, st, want, err->message);
    cr_assert_eq(err->status, want, "%s: err.status %d", what, err->status);
    cr_assert_eq(err->param, param, "%s: err.param %d, want %d (%s)", what, err->param, param,
                 err->message);
    if (name != NULL)
        cr_assert(strstr(err->message, name) != NULL, "%s: message '%s' does not name %s", what,
                  err->message, name);
    cr_assert(strchr(err->message, '\n') == NULL, "%s: message is not one line", what);
}

/* set_int / set_float on the parameter's own handle. */
static int32_t set_i(handles h, const gpufit_param_info *in, int64_t v, gpufit_error *err)
{
    return in->domain == GPUFIT_DOMAIN_MODEL ? gpufit_model_set_int(h.m, in->id, v, err)
                                             : gpufit_job_set_int(h.j, in->id, v, err);
}

static int32_t set_f(handles h, const gpufit_param_info *in, double v, gpufit_error *err)
{
    return in->domain == GPUFIT_DOMAIN_MODEL ? gpufit_model_set_float(h.m, in->id, v, err)
                                             : gpufit_job_set_float(h.j, in->id, v, err);
}

static void typed_int_rejected(const gpufit_param_info *in, int64_t v, int32_t want)
{
    handles h = fresh();
    snap before;
    take(h, &before);
    gpufit_error err = GPUFIT_ERROR_INIT;
    char what[160];
    snprintf(what, sizeof what, "%s set_int(%lld)", in->name, (long long)v);
    assert_rejected(set_i(h, in, v, &err), &err, want, in->id, in->name, what);
    cr_assert_eq(err.offset, UINT64_MAX, "%s: offset", what);
    assert_unchanged(h, &before, what);
    release(h);
}

static void typed_float_rejected(const gpufit_param_info *in, double v, int32_t want)
{
    handles h = fresh();
    snap before;
    take(h, &before);
    gpufit_error err = GPUFIT_ERROR_INIT;
    char what[160];
    snprintf(what, sizeof what, "%s set_float(%g)", in->name, v);
    assert_rejected(set_f(h, in, v, &err), &err, want, in->id, in->name, what);
    cr_assert_eq(err.offset, UINT64_MAX, "%s: offset", what);
    assert_unchanged(h, &before, what);
    release(h);
}

/* "task=inference NAME=VALUE": the bad pair starts at byte 15. */
#define SPEC_PREFIX "task=inference "
static void spec_rejected(const gpufit_param_info *in, const char *value, int32_t want)
{
    handles h = fresh();
    snap before;
    take(h, &before);
    char spec[256], what[300];
    /* task itself after another key: a key given twice would be its own error */
    const char *prefix = in->id == GPUFIT_JOB_TASK ? "tp=1 " : SPEC_PREFIX;
    snprintf(spec, sizeof spec, "%s%s=%s", prefix, in->name, value);
    snprintf(what, sizeof what, "spec '%s'", spec);
    gpufit_error err = GPUFIT_ERROR_INIT;
    assert_rejected(gpufit_apply_spec(h.m, h.j, spec, &err), &err, want, in->id, in->name, what);
    cr_assert_eq(err.offset, strlen(prefix), "%s: offset %llu", what,
                 (unsigned long long)err.offset);
    assert_unchanged(h, &before, what);
    release(h);
}

/* {"task": "inference", "NAME": VALUE}: the offset is that of the value, plus `delta` (the
 * position of a bad element inside an array value). */
static void
json_rejected_at(const gpufit_param_info *in, const char *value, size_t delta, int32_t want)
{
    handles h = fresh();
    snap before;
    take(h, &before);
    char doc[256], what[300];
    int at = snprintf(doc, sizeof doc, "{\"%s\": \"inference\", \"%s\": ",
                      in->id == GPUFIT_JOB_TASK ? "_task" : "task", in->name);
    snprintf(doc + at, sizeof doc - (size_t)at, "%s}", value);
    snprintf(what, sizeof what, "JSON %s", doc);
    gpufit_error err = GPUFIT_ERROR_INIT;
    assert_rejected(gpufit_apply_json(h.m, h.j, doc, strlen(doc), &err), &err, want, in->id,
                    in->name, what);
    cr_assert_eq(err.offset, (uint64_t)at + delta, "%s: offset %llu, want %zu", what,
                 (unsigned long long)err.offset, (size_t)at + delta);
    assert_unchanged(h, &before, what);
    release(h);
}

static void json_rejected(const gpufit_param_info *in, const char *value, int32_t want)
{
    json_rejected_at(in, value, 0, want);
}

static int has_value(int32_t p, int64_t v)
{
    int64_t x = 0;
    for (uint32_t i = 0; gpufit_param_value_at(p, i, &x, NULL) == GPUFIT_OK; i++)
        if (x == v)
            return 1;
    return 0;
}

/* The smallest id >= 0 that is no catalogue GPU. */
static int64_t unused_gpu_id(void)
{
    gpufit_gpu_info g;
    int64_t unused = 0;
    int found = 1;
    for (; found; unused += found) {
        found = 0;
        g.struct_size = sizeof g;
        for (uint32_t i = 0; gpufit_gpu_at(i, &g) == GPUFIT_OK; i++, g.struct_size = sizeof g)
            found |= g.id == unused;
    }
    return unused;
}

/* ---------------------------------------------------------------------------------------
 * Coverage
 * ------------------------------------------------------------------------------------- */
Test(battery, covers_every_parameter)
{
    size_t n = 0;
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p), n++) {
        gpufit_param_info in = info_of(p);
        size_t k = 0;
        while (k < N_BATTERY && strcmp(battery[k].name, in.name) != 0)
            k++;
        cr_assert(k < N_BATTERY,
                  "parameter '%s' (id %d) has no bad-input row: add it to battery[] in "
                  "tests/unit/test_bad_params.c, with its evaluation-time cases",
                  in.name, p);
        cr_assert(battery[k].eval[0].spec != NULL || battery[k].none_because != NULL,
                  "%s: give an evaluation case or the reason there is none", in.name);
    }
    for (size_t k = 0; k < N_BATTERY; k++) {
        int32_t id = 0;
        cr_assert_eq(gpufit_param_by_name(battery[k].name, &id), GPUFIT_OK,
                     "battery[] lists '%s', which is not a parameter (renamed or removed?)",
                     battery[k].name);
        for (size_t l = 0; l < k; l++)
            cr_assert(strcmp(battery[k].name, battery[l].name) != 0, "'%s' listed twice",
                      battery[k].name);
    }
    cr_assert_eq(n, N_BATTERY, "the table has %zu parameters, battery[] %zu", n, (size_t)N_BATTERY);
}

/* Defaults lie inside the range the setters accept, except the model sizes whose default 0
 * means "not set" (a custom model must give them). */
Test(battery, defaults_are_settable)
{
    static const char *const unset_zero[] = {"n_layers", "hidden_size", "n_heads", "vocab_size"};
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = info_of(p);
        int in_range = in.type == GPUFIT_TYPE_FLOAT
                           ? in.default_float >= in.min_float && in.default_float <= in.max_float
                           : in.default_int >= in.min_int && in.default_int <= in.max_int;
        int listed = 0;
        for (size_t k = 0; k < sizeof unset_zero / sizeof unset_zero[0]; k++)
            listed |= strcmp(unset_zero[k], in.name) == 0;
        if (listed)
            cr_assert(in.default_int == 0 && !in_range, "%s: update unset_zero[]", in.name);
        else
            cr_assert(in_range, "%s: default outside [min, max]", in.name);
        /* the flag tells callers which defaults mean "not set" */
        cr_assert_eq((in.flags & GPUFIT_PARAM_FLAG_UNSET_DEFAULT) != 0, listed,
                     "%s: GPUFIT_PARAM_FLAG_UNSET_DEFAULT", in.name);
        cr_assert_eq(in.flags & ~GPUFIT_PARAM_FLAG_UNSET_DEFAULT, 0u, "%s: unknown flags", in.name);
        cr_assert(in.min_int <= in.max_int && in.min_float <= in.max_float, "%s", in.name);
        if (in.type == GPUFIT_TYPE_ENUM && p != GPUFIT_JOB_GPU)
            cr_assert(has_value(p, in.default_int), "%s: default is not a named value", in.name);
    }
}

/* ---------------------------------------------------------------------------------------
 * Typed setters
 * ------------------------------------------------------------------------------------- */
Test(typed, every_parameter_out_of_range_nan_inf_fraction)
{
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = info_of(p);
        if (in.type == GPUFIT_TYPE_LIST) {
            /* the int and float setters refuse a list, whatever the value (set_list: see the
             * lists tests below) */
            typed_int_rejected(&in, 0, GPUFIT_E_INVALID_ARG);
            typed_int_rejected(&in, 1, GPUFIT_E_INVALID_ARG);
            typed_int_rejected(&in, -1, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, 1.0, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, 0.5, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, NAN, GPUFIT_E_INVALID_ARG);
            continue;
        }
        if (in.type == GPUFIT_TYPE_FLOAT) {
            typed_float_rejected(&in, NAN, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, -NAN, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, INFINITY, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, -INFINITY, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, nextafter(in.min_float, -INFINITY), GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, nextafter(in.max_float, INFINITY), GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, -1e300, GPUFIT_E_INVALID_ARG);
            typed_float_rejected(&in, 1e300, GPUFIT_E_INVALID_ARG);
            /* a float parameter is not set through set_int */
            typed_int_rejected(&in, (int64_t)in.default_float, GPUFIT_E_INVALID_ARG);
            continue;
        }
        /* int, enum, bool */
        if (in.min_int > INT64_MIN)
            typed_int_rejected(&in, in.min_int - 1, GPUFIT_E_INVALID_ARG);
        if (in.max_int < INT64_MAX)
            typed_int_rejected(&in, in.max_int + 1, GPUFIT_E_INVALID_ARG);
        typed_int_rejected(&in, INT64_MIN, GPUFIT_E_INVALID_ARG);
        typed_int_rejected(&in, INT64_MAX, GPUFIT_E_INVALID_ARG);
        if (in.min_int >= 0)
            typed_int_rejected(&in, -1, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, NAN, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, INFINITY, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, -INFINITY, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, (double)in.min_int + 0.5, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, (double)in.min_int - 1.0, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, (double)in.max_int + 1.0, GPUFIT_E_INVALID_ARG);
        typed_float_rejected(&in, 1e300, GPUFIT_E_INVALID_ARG);
        if (in.type == GPUFIT_TYPE_ENUM) { /* a hole in the named values, if any */
            for (int64_t v = in.min_int; v <= in.max_int && v < in.min_int + 4096; v++) {
                if (!has_value(p, v)) {
                    typed_int_rejected(&in, v, GPUFIT_E_INVALID_ARG);
                    break;
                }
            }
        }
        if (p == GPUFIT_JOB_GPU) { /* in range but not in the catalogue */
            int64_t unused = unused_gpu_id();
            cr_assert(unused <= in.max_int);
            typed_int_rejected(&in, unused, GPUFIT_E_NOT_FOUND);
        }
    }
}

Test(typed, wrong_domain_unknown_ids_null_handles)
{
    handles h = fresh();
    snap before;
    take(h, &before);
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = info_of(p);
        int model = in.domain == GPUFIT_DOMAIN_MODEL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t st =
            model ? gpufit_job_set_int(h.j, p, 1, &err) : gpufit_model_set_int(h.m, p, 1, &err);
        assert_rejected(st, &err, GPUFIT_E_UNKNOWN_PARAM, p, in.name, "set in the other domain");
        st = model ? gpufit_job_set_float(h.j, p, 1.0, &err)
                   : gpufit_model_set_float(h.m, p, 1.0, &err);
        assert_rejected(st, &err, GPUFIT_E_UNKNOWN_PARAM, p, in.name, "set_float, other domain");
        int64_t iv = 0;
        double dv = 0.0;
        st =
            model ? gpufit_job_get_int(h.j, p, &iv, &err) : gpufit_model_get_int(h.m, p, &iv, &err);
        assert_rejected(st, &err, GPUFIT_E_UNKNOWN_PARAM, p, in.name, "get, other domain");
        /* NULL handle and NULL output */
        st = model ? gpufit_model_set_int(NULL, p, 1, &err) : gpufit_job_set_int(NULL, p, 1, &err);
        assert_rejected(st, &err, GPUFIT_E_INVALID_ARG, p, NULL, "NULL handle");
        st = model ? gpufit_model_set_float(NULL, p, 1.0, &err)
                   : gpufit_job_set_float(NULL, p, 1.0, &err);
        assert_rejected(st, &err, GPUFIT_E_INVALID_ARG, p, NULL, "NULL handle (float)");
        st = model ? gpufit_model_get_float(h.m, p, NULL, &err)
                   : gpufit_job_get_float(h.j, p, NULL, &err);
        assert_rejected(st, &err, GPUFIT_E_INVALID_ARG, p, NULL, "NULL output");
        /* the list calls: only for list parameters of the job */
        double lv[GPUFIT_LIST_MAX] = {1.0};
        uint32_t ln = 77;
        if (in.type != GPUFIT_TYPE_LIST) {
            int32_t want = model ? GPUFIT_E_UNKNOWN_PARAM : GPUFIT_E_INVALID_ARG;
            assert_rejected(gpufit_job_set_list(h.j, p, lv, 1, &err), &err, want, p, in.name,
                            "set_list of a scalar");
            assert_rejected(gpufit_job_set_list(h.j, p, NULL, 0, &err), &err, want, p, in.name,
                            "set_list (clear) of a scalar");
            assert_rejected(gpufit_job_get_list(h.j, p, lv, GPUFIT_LIST_MAX, &ln, &err), &err, want,
                            p, in.name, "get_list of a scalar");
            cr_assert_eq(ln, 77u, "%s: get_list of a scalar wrote n_out", in.name);
        } else {
            cr_assert_eq(in.domain, GPUFIT_DOMAIN_JOB, "%s", in.name);
            assert_rejected(gpufit_job_set_list(NULL, p, lv, 1, &err), &err, GPUFIT_E_INVALID_ARG,
                            p, NULL, "set_list on NULL");
            assert_rejected(gpufit_job_get_list(NULL, p, lv, GPUFIT_LIST_MAX, &ln, &err), &err,
                            GPUFIT_E_INVALID_ARG, p, NULL, "get_list on NULL");
        }
        if (in.type == GPUFIT_TYPE_LIST) {
            st = gpufit_job_get_int(h.j, p, &iv, &err);
            assert_rejected(st, &err, GPUFIT_E_INVALID_ARG, p, in.name, "get_int of a list");
            st = gpufit_job_get_float(h.j, p, &dv, &err);
            assert_rejected(st, &err, GPUFIT_E_INVALID_ARG, p, in.name, "get_float of a list");
            cr_assert(strstr(err.message, "gpufit_job_get_list") != NULL, "%s", err.message);
        } else if (in.type == GPUFIT_TYPE_FLOAT) {
            st = model ? gpufit_model_get_int(h.m, p, &iv, &err)
                       : gpufit_job_get_int(h.j, p, &iv, &err);
            assert_rejected(st, &err, GPUFIT_E_INVALID_ARG, p, in.name, "get_int of a float");
        } else {
            st = model ? gpufit_model_get_float(h.m, p, &dv, &err)
                       : gpufit_job_get_float(h.j, p, &dv, &err);
            cr_assert_eq(st, GPUFIT_OK, "%s: get_float of an integer parameter", in.name);
        }
    }
    static const int32_t unknown[] = {0, -1, 1, 99, 999, 9000, 99999, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t p = unknown[i];
        assert_rejected(gpufit_model_set_int(h.m, p, 1, &err), &err, GPUFIT_E_UNKNOWN_PARAM, p,
                        NULL, "unknown id");
        assert_rejected(gpufit_job_set_float(h.j, p, 1.0, &err), &err, GPUFIT_E_UNKNOWN_PARAM, p,
                        NULL, "unknown id");
        gpufit_param_info in;
        in.struct_size = sizeof in;
        cr_assert_eq(gpufit_param_get_info(p, &in), GPUFIT_E_UNKNOWN_PARAM);
        cr_assert_null(gpufit_param_value_name(p, 0));
        double lv[1] = {1.0};
        uint32_t ln = 0;
        assert_rejected(gpufit_job_set_list(h.j, p, lv, 1, &err), &err, GPUFIT_E_UNKNOWN_PARAM, p,
                        NULL, "set_list, unknown id");
        assert_rejected(gpufit_job_get_list(h.j, p, lv, 1, &ln, &err), &err, GPUFIT_E_UNKNOWN_PARAM,
                        p, NULL, "get_list, unknown id");
    }
    assert_unchanged(h, &before, "rejected calls of every kind");
    int32_t id = 0;
    int64_t v = 0;
    cr_assert_eq(gpufit_param_by_name("", &id), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(gpufit_param_by_name("TP", &id), GPUFIT_E_UNKNOWN_PARAM); /* case-sensitive */
    cr_assert_eq(gpufit_param_by_name(NULL, &id), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_param_by_name("tp", NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_param_value_by_name(GPUFIT_JOB_TASK, "dance", &v), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_param_value_by_name(GPUFIT_JOB_TASK, NULL, &v), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_param_value_by_name(GPUFIT_JOB_TP, "two", &v), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_param_value_at(GPUFIT_JOB_TASK, 1000, &v, NULL), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_param_get_info(GPUFIT_JOB_TP, NULL), GPUFIT_E_INVALID_ARG);
    /* an error struct too small to hold the status is never written */
    gpufit_error small = GPUFIT_ERROR_INIT;
    small.struct_size = 4;
    small.status = 12345;
    cr_assert_eq(gpufit_job_set_int(h.j, GPUFIT_JOB_TP, 0, &small), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(small.status, 12345);
    cr_assert_eq(gpufit_job_set_int(h.j, GPUFIT_JOB_TP, 0, NULL), GPUFIT_E_INVALID_ARG);
    release(h);
}

/* ---------------------------------------------------------------------------------------
 * Spec strings and JSON: every parameter with values of the wrong kind
 * ------------------------------------------------------------------------------------- */
static void text_rejected(const gpufit_param_info *in, const char *value, int32_t want)
{
    spec_rejected(in, value, want);
    /* JSON carries the same text as a number where it is one, else as a string */
    char *end = NULL;
    (void)strtod(value, &end);
    int number = end != value && *end == '\0' && strpbrk(value, "xXnNiI") == NULL;
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", value);
    json_rejected(in, number ? value : quoted, want);
}

/* A spec value with n copies of `el` joined by commas, into buf. */
static const char *repeated(char *buf, size_t cap, const char *el, int n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i > 0 ? "," : "", el);
    cr_assert(at < cap);
    return buf;
}

/* List parameters in text: comma lists in specs, strings and arrays in JSON. Errors of the
 * whole value or of one entry's text carry the value's offset (JSON) or the pair's (spec);
 * an array entry that is no number or string, or is empty, carries the entry's offset. */
static void list_text_bad(const gpufit_param_info *in)
{
    int gpus = in->id == GPUFIT_JOB_DEVICE_GPUS;
    /* an entry that is not a number (GPU lists: no catalogue GPU either) */
    int32_t not_num = gpus ? GPUFIT_E_NOT_FOUND : GPUFIT_E_INVALID_ARG;
    const char *ok = gpus ? "h100" : "3";
    char buf[512], v[600];
    static const char *const words[] = {"banana",   "nan",  "NaN",  "inf", "-inf",
                                        "Infinity", "0x10", "1KiB", "--1", "1e",
                                        ".",        "+",    "1..2", "nul", "true"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        text_rejected(in, words[i], not_num);
        snprintf(v, sizeof v, "%s,%s", ok, words[i]); /* the second entry */
        text_rejected(in, v, not_num);
        snprintf(v, sizeof v, "[%s%s%s, \"%s\"]", gpus ? "\"" : "", ok, gpus ? "\"" : "", words[i]);
        json_rejected(in, v, not_num);
    }
    /* empty entries: "3,,1" in a spec and in a JSON string; a trailing comma in a spec is a
     * separator, in a JSON string an empty entry */
    snprintf(v, sizeof v, "%s,,%s", ok, ok);
    text_rejected(in, v, not_num);
    snprintf(v, sizeof v, "\",%s\"", ok);
    json_rejected(in, v, not_num);
    snprintf(v, sizeof v, "\"%s,\"", ok);
    json_rejected(in, v, not_num);
    /* too many entries: 17 */
    text_rejected(in, repeated(buf, sizeof buf, ok, GPUFIT_LIST_MAX + 1), GPUFIT_E_INVALID_ARG);
    snprintf(v, sizeof v, "[%s]",
             repeated(buf, sizeof buf, gpus ? "\"rtx-4090\"" : "1", GPUFIT_LIST_MAX + 1));
    json_rejected(in, v, GPUFIT_E_INVALID_ARG);
    snprintf(v, sizeof v, "[%s]", repeated(buf, sizeof buf, "1", 64));
    json_rejected(in, v, GPUFIT_E_INVALID_ARG);
    /* out of the element range, NaN and infinities as numbers */
    snprintf(buf, sizeof buf, "%.17g", nextafter(in->max_float, INFINITY));
    text_rejected(in, buf, GPUFIT_E_INVALID_ARG);
    snprintf(v, sizeof v, "%s,%s", ok, buf);
    text_rejected(in, v, GPUFIT_E_INVALID_ARG);
    text_rejected(in, "-1", GPUFIT_E_INVALID_ARG);
    text_rejected(in, "-1e300", GPUFIT_E_INVALID_ARG);
    text_rejected(in, "1e999", not_num); /* overflows: no number */
    json_rejected(in, "[-1]", GPUFIT_E_INVALID_ARG);
    json_rejected(in, "[1e999]", not_num);
    snprintf(v, sizeof v, "%s,-1", ok);
    text_rejected(in, v, GPUFIT_E_INVALID_ARG);
    if (gpus) {
        /* ids: non-integral, or in range but no catalogue GPU */
        text_rejected(in, "1.5", GPUFIT_E_NOT_FOUND);
        json_rejected(in, "[1.5]", GPUFIT_E_NOT_FOUND);
        snprintf(buf, sizeof buf, "%lld", (long long)unused_gpu_id());
        text_rejected(in, buf, GPUFIT_E_NOT_FOUND);
        snprintf(v, sizeof v, "[\"h100\", %s]", buf);
        json_rejected(in, v, GPUFIT_E_NOT_FOUND);
        text_rejected(in, "h100x", GPUFIT_E_NOT_FOUND);
        text_rejected(in, "24GiB", GPUFIT_E_NOT_FOUND); /* a capacity is not a GPU here */
        json_rejected(in, "[\"rtx-4090\", \"no-such-gpu\"]", GPUFIT_E_NOT_FOUND);
    } else {
        /* shares: all zero */
        text_rejected(in, "0", GPUFIT_E_INVALID_ARG);
        text_rejected(in, "0,0", GPUFIT_E_INVALID_ARG);
        text_rejected(in, "0,0.0,0e5", GPUFIT_E_INVALID_ARG);
        json_rejected(in, "[0, 0]", GPUFIT_E_INVALID_ARG);
        json_rejected(in, "[0]", GPUFIT_E_INVALID_ARG);
        snprintf(buf, sizeof buf, "%.17g", nextafter(0.0, -INFINITY));
        snprintf(v, sizeof v, "1,%s", buf);
        text_rejected(in, v, GPUFIT_E_INVALID_ARG);
    }
    /* JSON entries that are neither numbers nor strings, or empty, or hold a comma: the
     * offset is the entry's ("[3, " is 4 bytes, "[" 1) */
    static const char *const bad_entries[] = {"null",       "true", "false",  "[1]",
                                              "{\"v\": 1}", "\"\"", "\"3,1\""};
    for (size_t i = 0; i < sizeof bad_entries / sizeof bad_entries[0]; i++) {
        snprintf(v, sizeof v, "[%s%s%s, %s]", gpus ? "\"" : "", ok, gpus ? "\"" : "",
                 bad_entries[i]);
        json_rejected_at(in, v, 3 + strlen(ok) + (gpus ? 2u : 0u), GPUFIT_E_INVALID_ARG);
        snprintf(v, sizeof v, "[%s]", bad_entries[i]);
        json_rejected_at(in, v, 1, GPUFIT_E_INVALID_ARG);
    }
    /* whole values that are no list */
    json_rejected(in, "null", GPUFIT_E_INVALID_ARG);
    json_rejected(in, "{\"v\": 1}", GPUFIT_E_INVALID_ARG);
    json_rejected(in, "\"\"", GPUFIT_E_INVALID_ARG);
}

Test(text, every_parameter_bad_values)
{
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = info_of(p);
        char buf[64];
        if (p == GPUFIT_JOB_GPU) { /* a catalogue name, "none" or a capacity such as 24GiB */
            static const char *const bad[] = {"banana", "-5",     "0",    "nan",
                                              "inf",    "-24GiB", "0GiB", "1e999GiB",
                                              "24XiB",  "h100x",  "1.5"};
            for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char quoted[64];
                snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
                spec_rejected(&in, bad[i], GPUFIT_E_NOT_FOUND);
                json_rejected(&in, quoted, GPUFIT_E_NOT_FOUND);
            }
            /* JSON: a number, boolean or null is not a GPU */
            json_rejected(&in, "-5", GPUFIT_E_INVALID_ARG);
            json_rejected(&in, "24", GPUFIT_E_INVALID_ARG);
            json_rejected(&in, "true", GPUFIT_E_INVALID_ARG);
            json_rejected(&in, "null", GPUFIT_E_INVALID_ARG);
            json_rejected(&in, "[\"h100\"]", GPUFIT_E_INVALID_ARG);
            continue;
        }
        if (in.type == GPUFIT_TYPE_LIST) { /* comma lists and JSON arrays: see list_text_bad */
            list_text_bad(&in);
            continue;
        }
        static const char *const common[] = {"banana", "nan",    "NaN",  "inf", "-inf", "Infinity",
                                             "1e999",  "-1e999", "0x10", "1,5", "--1",  "1e",
                                             ".",      "+",      "1..2", "nul"};
        for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) {
            if (strchr(common[i], ',') != NULL)
                json_rejected(&in, "\"1,5\"", GPUFIT_E_INVALID_ARG); /* ',' splits a spec */
            else
                text_rejected(&in, common[i], GPUFIT_E_INVALID_ARG);
        }
        switch (in.type) {
        case GPUFIT_TYPE_FLOAT:
            snprintf(buf, sizeof buf, "%.17g", nextafter(in.min_float, -INFINITY));
            text_rejected(&in, buf, GPUFIT_E_INVALID_ARG);
            snprintf(buf, sizeof buf, "%.17g", nextafter(in.max_float, INFINITY));
            text_rejected(&in, buf, GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "-1e300", GPUFIT_E_INVALID_ARG);
            break;
        case GPUFIT_TYPE_INT:
            snprintf(buf, sizeof buf, "%lld", (long long)in.min_int - 1);
            text_rejected(&in, buf, GPUFIT_E_INVALID_ARG);
            snprintf(buf, sizeof buf, "%lld", (long long)in.max_int + 1);
            text_rejected(&in, buf, GPUFIT_E_INVALID_ARG);
            snprintf(buf, sizeof buf, "%lld.5", (long long)in.min_int);
            if (p != GPUFIT_JOB_FRAMEWORK_VERSION && p != GPUFIT_JOB_CUDA_VERSION)
                text_rejected(&in, buf, GPUFIT_E_INVALID_ARG); /* releases: 0.5 is one */
            else /* releases: parts of more than 3 digits, four parts, letters */
                for (size_t v = 0; v < 5; v++)
                    text_rejected(&in, (const char *[]){"0.x", "1.2.3.4", "0.1234", "v", "0..1"}[v],
                                  GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "-9223372036854775809", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "9223372036854775808", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "1e30", GPUFIT_E_INVALID_ARG);
            if (strcmp(in.unit, "bytes") != 0) /* size suffixes only on byte values */
                text_rejected(&in, "1KiB", GPUFIT_E_INVALID_ARG);
            else
                text_rejected(&in, "1e30GiB", GPUFIT_E_INVALID_ARG);
            break;
        case GPUFIT_TYPE_ENUM:
            text_rejected(&in, "not_a_value", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "-5", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "99999", GPUFIT_E_INVALID_ARG);
            break;
        case GPUFIT_TYPE_BOOL:
            text_rejected(&in, "maybe", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "2", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "-1", GPUFIT_E_INVALID_ARG);
            text_rejected(&in, "0.5", GPUFIT_E_INVALID_ARG);
            break;
        default:
            cr_assert_fail("%s: unknown type %d", in.name, in.type);
        }
        if (in.min_int >= 0 && in.type != GPUFIT_TYPE_FLOAT)
            text_rejected(&in, "-1", GPUFIT_E_INVALID_ARG);
        if (in.min_int == -1 && in.type != GPUFIT_TYPE_FLOAT)
            text_rejected(&in, "-2", GPUFIT_E_INVALID_ARG);
        /* JSON values that are not scalars, or null */
        json_rejected(&in, "null", GPUFIT_E_INVALID_ARG);
        json_rejected(&in, "[1]", GPUFIT_E_INVALID_ARG);
        json_rejected(&in, "{\"v\": 1}", GPUFIT_E_INVALID_ARG);
    }
}

/* ---------------------------------------------------------------------------------------
 * List parameters through gpufit_job_set_list / gpufit_job_get_list
 * ------------------------------------------------------------------------------------- */
static void
set_list_rejected(int32_t p, const double *v, uint32_t n, int32_t want, const char *what)
{
    gpufit_param_info in = info_of(p);
    handles h = fresh();
    snap before;
    take(h, &before);
    gpufit_error err = GPUFIT_ERROR_INIT;
    char w[200];
    snprintf(w, sizeof w, "%s set_list: %s", in.name, what);
    assert_rejected(gpufit_job_set_list(h.j, p, v, n, &err), &err, want, p, in.name, w);
    cr_assert_eq(err.offset, UINT64_MAX, "%s: offset", w);
    assert_unchanged(h, &before, w);
    /* without an error struct: the same status, still nothing changed */
    cr_assert_eq(gpufit_job_set_list(h.j, p, v, n, NULL), want, "%s (err NULL)", w);
    assert_unchanged(h, &before, w);
    release(h);
}

Test(bad_lists, set_list_bad_values)
{
    static const int32_t lists[] = {GPUFIT_JOB_TENSOR_SPLIT, GPUFIT_JOB_DEVICE_GPUS};
    double gpu_ok = 0.0; /* a catalogue id */
    gpufit_gpu_info g = {.struct_size = sizeof g};
    cr_assert_eq(gpufit_gpu_by_name("h100", &g), GPUFIT_OK);
    gpu_ok = (double)g.id;
    for (size_t k = 0; k < 2; k++) {
        int32_t p = lists[k];
        gpufit_param_info in = info_of(p);
        int gpus = p == GPUFIT_JOB_DEVICE_GPUS;
        double ok = gpus ? gpu_ok : 1.0;
        double v[GPUFIT_LIST_MAX + 8];
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            v[i] = ok;
        /* too many entries */
        set_list_rejected(p, v, GPUFIT_LIST_MAX + 1, GPUFIT_E_INVALID_ARG, "17 entries");
        set_list_rejected(p, v, UINT32_MAX, GPUFIT_E_INVALID_ARG, "UINT32_MAX entries");
        /* NULL values with n > 0 */
        set_list_rejected(p, NULL, 1, GPUFIT_E_INVALID_ARG, "NULL values");
        set_list_rejected(p, NULL, GPUFIT_LIST_MAX, GPUFIT_E_INVALID_ARG, "NULL values, 16");
        /* one bad element, first or last */
        const double bad[] = {NAN,
                              -NAN,
                              INFINITY,
                              -INFINITY,
                              -1.0,
                              -1e300,
                              1e300,
                              nextafter(in.min_float, -INFINITY),
                              nextafter(in.max_float, INFINITY)};
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            char what[64];
            snprintf(what, sizeof what, "entry %g", bad[b]);
            v[0] = bad[b];
            set_list_rejected(p, v, 1, GPUFIT_E_INVALID_ARG, what);
            set_list_rejected(p, v, 3, GPUFIT_E_INVALID_ARG, what);
            v[0] = ok;
            v[GPUFIT_LIST_MAX - 1] = bad[b];
            set_list_rejected(p, v, GPUFIT_LIST_MAX, GPUFIT_E_INVALID_ARG, what);
            v[GPUFIT_LIST_MAX - 1] = ok;
        }
        if (gpus) {
            /* in range, but not an id of the catalogue */
            const double unknown[] = {gpu_ok + 0.5, 0.25, (double)unused_gpu_id(), in.max_float};
            for (size_t b = 0; b < sizeof unknown / sizeof unknown[0]; b++) {
                v[1] = unknown[b];
                set_list_rejected(p, v, 2, GPUFIT_E_NOT_FOUND, "not a catalogue id");
                v[1] = ok;
            }
        } else {
            /* the shares must not all be zero */
            const double zeros[3] = {0.0, -0.0, 0.0};
            set_list_rejected(p, zeros, 1, GPUFIT_E_INVALID_ARG, "all-zero split (1)");
            set_list_rejected(p, zeros, 3, GPUFIT_E_INVALID_ARG, "all-zero split (3)");
        }
        /* the bounds of the element range are accepted */
        handles h = fresh();
        double edge[2] = {gpus ? gpu_ok : in.min_float, gpus ? gpu_ok : in.max_float};
        cr_assert_eq(gpufit_job_set_list(h.j, p, edge, 2, NULL), GPUFIT_OK, "%s", in.name);
        release(h);
    }
}

Test(bad_lists, typed_calls_refuse_lists)
{
    static const int32_t lists[] = {GPUFIT_JOB_TENSOR_SPLIT, GPUFIT_JOB_DEVICE_GPUS};
    for (size_t k = 0; k < 2; k++) {
        gpufit_param_info in = info_of(lists[k]);
        cr_assert_eq(in.type, GPUFIT_TYPE_LIST);
        handles h = fresh();
        snap before;
        take(h, &before);
        gpufit_error err = GPUFIT_ERROR_INIT;
        int64_t iv = 12345;
        double dv = 12345.0;
        assert_rejected(gpufit_job_set_int(h.j, in.id, 1, &err), &err, GPUFIT_E_INVALID_ARG, in.id,
                        in.name, "set_int of a list");
        cr_assert(strstr(err.message, "gpufit_job_set_list") != NULL, "%s", err.message);
        assert_rejected(gpufit_job_set_float(h.j, in.id, 1.0, &err), &err, GPUFIT_E_INVALID_ARG,
                        in.id, in.name, "set_float of a list");
        assert_rejected(gpufit_job_get_int(h.j, in.id, &iv, &err), &err, GPUFIT_E_INVALID_ARG,
                        in.id, in.name, "get_int of a list");
        assert_rejected(gpufit_job_get_float(h.j, in.id, &dv, &err), &err, GPUFIT_E_INVALID_ARG,
                        in.id, in.name, "get_float of a list");
        cr_assert_eq(iv, 12345);
        cr_assert(dv == 12345.0);
        /* the model calls do not know a job parameter */
        assert_rejected(gpufit_model_set_int(h.m, in.id, 1, &err), &err, GPUFIT_E_UNKNOWN_PARAM,
                        in.id, in.name, "model_set_int of a job list");
        assert_rejected(gpufit_model_get_float(h.m, in.id, &dv, &err), &err, GPUFIT_E_UNKNOWN_PARAM,
                        in.id, in.name, "model_get_float of a job list");
        assert_unchanged(h, &before, "typed calls on a list");
        release(h);
    }
}

Test(bad_lists, get_list_buffer_too_small)
{
    handles h = fresh(); /* tensor_split=3,1 device_gpus=h100,rtx-4090 */
    static const int32_t lists[] = {GPUFIT_JOB_TENSOR_SPLIT, GPUFIT_JOB_DEVICE_GPUS};
    for (size_t k = 0; k < 2; k++) {
        gpufit_param_info in = info_of(lists[k]);
        for (uint32_t cap = 0; cap < 2; cap++) {
            double v[2] = {-7.0, -7.0};
            uint32_t n = 99;
            gpufit_error err = GPUFIT_ERROR_INIT;
            assert_rejected(gpufit_job_get_list(h.j, in.id, cap > 0 ? v : NULL, cap, &n, &err),
                            &err, GPUFIT_E_BUFFER_TOO_SMALL, in.id, in.name, "small buffer");
            cr_assert_eq(err.offset, UINT64_MAX);
            cr_assert_eq(n, 2u, "%s: n_out %u with cap %u", in.name, n, cap);
            cr_assert(v[0] == -7.0 && v[1] == -7.0, "%s: values written on error", in.name);
            /* n_out may be NULL: still BUFFER_TOO_SMALL */
            cr_assert_eq(gpufit_job_get_list(h.j, in.id, v, cap, NULL, NULL),
                         GPUFIT_E_BUFFER_TOO_SMALL);
        }
        /* enough room, but no buffer */
        uint32_t n = 99;
        gpufit_error err = GPUFIT_ERROR_INIT;
        assert_rejected(gpufit_job_get_list(h.j, in.id, NULL, GPUFIT_LIST_MAX, &n, &err), &err,
                        GPUFIT_E_INVALID_ARG, in.id, NULL, "NULL values");
        /* the exact size is enough */
        double v[2] = {0.0, 0.0};
        cr_assert_eq(gpufit_job_get_list(h.j, in.id, v, 2, &n, &err), GPUFIT_OK, "%s", err.message);
        cr_assert_eq(n, 2u);
        cr_assert_eq(err.status, GPUFIT_OK);
        /* an empty list: cap 0 and NULL values are fine */
        cr_assert_eq(gpufit_job_set_list(h.j, in.id, NULL, 0, &err), GPUFIT_OK);
        n = 99;
        cr_assert_eq(gpufit_job_get_list(h.j, in.id, NULL, 0, &n, &err), GPUFIT_OK);
        cr_assert_eq(n, 0u);
    }
    release(h);
}

/* ---------------------------------------------------------------------------------------
 * Evaluation: missing values and inconsistent combinations, per parameter
 * ------------------------------------------------------------------------------------- */
static void eval_rejected(const char *spec, int32_t want, int32_t param)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, spec, &err), GPUFIT_OK, "'%s' must apply: %s", spec,
                 err.message);
    int32_t st = gpufit_evaluate(&r, m, j, &err);
    char what[300];
    snprintf(what, sizeof what, "evaluate '%s'", spec);
    gpufit_param_info in = info_of(param);
    assert_rejected(st, &err, want, param, in.name, what);
    cr_assert_eq(err.offset, UINT64_MAX, "%s", what);
    cr_assert_null(r, "%s: no result on error", what);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

Test(bad_eval, every_listed_case)
{
    size_t n = 0;
    for (size_t k = 0; k < N_BATTERY; k++) {
        for (size_t c = 0; c < 3 && battery[k].eval[c].spec != NULL; c++, n++)
            eval_rejected(battery[k].eval[c].spec, battery[k].eval[c].status,
                          battery[k].eval[c].param);
    }
    cr_assert(n >= 40, "only %zu evaluation cases", n);
}

Test(bad_eval, pp_last_layers_names_itself)
{
    /* The message names both counts; err.param is pp_first_layers for either. */
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_preset(&m, "llama-3-8b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, "pp=2 pp_last_layers=32", NULL), GPUFIT_OK);
    int32_t st = gpufit_evaluate(&r, m, j, &err);
    cr_assert_eq(st, GPUFIT_E_INCONSISTENT);
    cr_assert(err.param == GPUFIT_JOB_PP_LAST_LAYERS || err.param == GPUFIT_JOB_PP_FIRST_LAYERS);
    cr_assert(strstr(err.message, "pp_last_layers") != NULL, "%s", err.message);
    cr_assert_null(r);
    gpufit_model_free(m);
    gpufit_job_free(j);
}

/* ---------------------------------------------------------------------------------------
 * Malformed spec strings: syntax errors carry the offset of the bad byte or pair.
 * ------------------------------------------------------------------------------------- */
Test(spec_syntax, offsets)
{
    static const struct {
        const char *spec;
        int32_t status;
        uint64_t offset;
        int32_t param;
    } cases[] = {
        {"tp=2 pp", GPUFIT_E_PARSE, 5, 0},
        {"=", GPUFIT_E_PARSE, 0, 0},
        {"  =2", GPUFIT_E_PARSE, 2, 0},
        {"tp=2,,=3", GPUFIT_E_PARSE, 6, 0},
        {"tp", GPUFIT_E_PARSE, 0, 0},
        {"tp=", GPUFIT_E_PARSE, 3, 0},
        {"task=\"\"", GPUFIT_E_PARSE, 6, 0},
        {"gpu=\"h100\"x=1", GPUFIT_E_PARSE, 10, 0},
        {"gpu=\"h100", GPUFIT_E_PARSE, 4, 0},
        {"tp=2 gpu=\"", GPUFIT_E_PARSE, 9, 0},
        {"tp==2", GPUFIT_E_INVALID_ARG, 0, GPUFIT_JOB_TP},
        {"tp=2=3", GPUFIT_E_INVALID_ARG, 0, GPUFIT_JOB_TP},
        {"tp=2 tp=banana", GPUFIT_E_INVALID_ARG, 5, GPUFIT_JOB_TP}, /* given twice */
        {"tp=2\tpp=x", GPUFIT_E_INVALID_ARG, 5, GPUFIT_JOB_PP},
        {"tp=2\npp=x", GPUFIT_E_INVALID_ARG, 5, GPUFIT_JOB_PP},
        {"tp=2,pp=x", GPUFIT_E_INVALID_ARG, 5, GPUFIT_JOB_PP},
        {"tp=\"2 \"", GPUFIT_E_INVALID_ARG, 0, GPUFIT_JOB_TP},
        {"tp=2 pp=2 gpu=h100 model=nope", GPUFIT_E_NOT_FOUND, 19, 0},
        {"frobnicate=1 model=nope", GPUFIT_E_NOT_FOUND, 13, 0}, /* model= goes first */
        {"tp=2 frobnicate=1", GPUFIT_E_UNKNOWN_PARAM, 5, 0},
        {"tp=2 T\xc3\xa4sk=1", GPUFIT_E_UNKNOWN_PARAM, 5, 0},
        {"TP=2", GPUFIT_E_UNKNOWN_PARAM, 0, 0},
        {"gpu=nope tp=2", GPUFIT_E_NOT_FOUND, 0, GPUFIT_JOB_GPU},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        handles h = fresh();
        snap before;
        take(h, &before);
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t st = gpufit_apply_spec(h.m, h.j, cases[i].spec, &err);
        cr_assert_eq(st, cases[i].status, "'%s': status %d (%s)", cases[i].spec, st, err.message);
        cr_assert_eq(err.status, st);
        cr_assert_eq(err.offset, cases[i].offset, "'%s': offset %llu (%s)", cases[i].spec,
                     (unsigned long long)err.offset, err.message);
        cr_assert_eq(err.param, cases[i].param, "'%s': param %d", cases[i].spec, err.param);
        cr_assert(err.message[0] != '\0');
        assert_unchanged(h, &before, cases[i].spec);
        release(h);
    }
}

Test(spec_syntax, empty_and_separator_only_specs_change_nothing)
{
    static const char *const ok[] = {"", " ", ",", " ,\t\r\n,, "};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        handles h = fresh();
        snap before;
        take(h, &before);
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_apply_spec(h.m, h.j, ok[i], &err), GPUFIT_OK);
        assert_unchanged(h, &before, "empty spec");
        release(h);
    }
}

Test(spec_syntax, long_inputs)
{
    /* a 1 MiB + 1 byte spec is refused as a whole; a long key is named, cut to 64 bytes */
    size_t n = ((size_t)1 << 20) + 1;
    char *big = malloc(n + 1);
    cr_assert_not_null(big);
    memset(big, ' ', n);
    big[n] = '\0';
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_spec(h.m, h.j, big, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.offset, UINT64_MAX);
    memset(big, 'k', 300);
    memcpy(big + 300, "=1", 3);
    cr_assert_eq(gpufit_apply_spec(h.m, h.j, big, &err), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(err.offset, 0);
    cr_assert(strlen(err.message) < sizeof err.message - 1);
    cr_assert(strstr(err.message, "kkkk") != NULL);
    /* a long bad value is cut in the message, which still names the key */
    memcpy(big, "tp=", 3);
    memset(big + 3, '9', 500);
    big[503] = '\0';
    cr_assert_eq(gpufit_apply_spec(h.m, h.j, big, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.param, GPUFIT_JOB_TP);
    cr_assert(strstr(err.message, "tp") != NULL);
    free(big);
    release(h);
}

/* Either handle may be NULL when the spec has no key for it (gpufit.h); otherwise the key is
 * refused and named. */
Test(spec_syntax, null_handles)
{
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_spec(NULL, h.j, "tp=2", &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(h.m, NULL, "n_layers=2", &err), GPUFIT_OK);
    assert_rejected(gpufit_apply_spec(NULL, h.j, "tp=2 n_layers=2", &err), &err,
                    GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_LAYERS, "n_layers", "no model handle");
    cr_assert_eq(err.offset, 5);
    assert_rejected(gpufit_apply_spec(h.m, NULL, "n_layers=2 tp=2", &err), &err,
                    GPUFIT_E_INVALID_ARG, GPUFIT_JOB_TP, "tp", "no job handle");
    cr_assert_eq(err.offset, 11);
    assert_rejected(gpufit_apply_spec(h.m, NULL, "gpu=h100", &err), &err, GPUFIT_E_INVALID_ARG,
                    GPUFIT_JOB_GPU, "gpu", "gpu without a job handle");
    cr_assert_eq(gpufit_apply_spec(NULL, h.j, "model=gpt2", &err), GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(err.message, "model") != NULL);
    cr_assert_eq(gpufit_apply_spec(h.m, h.j, NULL, &err), GPUFIT_E_INVALID_ARG);
    release(h);
}

/* ---------------------------------------------------------------------------------------
 * Malformed JSON: offsets of syntax errors and of bad members, atomicity.
 * ------------------------------------------------------------------------------------- */
Test(json_syntax, offsets)
{
    static const struct {
        const char *doc;
        int32_t status;
        uint64_t offset;
    } cases[] = {
        {"{", GPUFIT_E_PARSE, 1},
        {"{\"tp\"", GPUFIT_E_PARSE, 5},
        {"{\"tp\":", GPUFIT_E_PARSE, 6},
        {"{\"tp\": }", GPUFIT_E_PARSE, 7},
        {"{\"tp\" 2}", GPUFIT_E_PARSE, 6},
        {"{tp: 2}", GPUFIT_E_PARSE, 1},
        {"{'tp': 2}", GPUFIT_E_PARSE, 1},
        {"{\"tp\": 2 \"pp\": 2}", GPUFIT_E_PARSE, 9},
        {"{\"tp\": +2}", GPUFIT_E_PARSE, 7},
        {"{\"tp\": 2.}", GPUFIT_E_PARSE, 9},
        {"{\"tp\": .5}", GPUFIT_E_PARSE, 7},
        {"{\"tp\": 0x10}", GPUFIT_E_PARSE, 8},
        {"{\"tp\": NaN}", GPUFIT_E_PARSE, 7},
        {"{\"tp\": Infinity}", GPUFIT_E_PARSE, 7},
        {"{\"tp\": tru}", GPUFIT_E_PARSE, 7},
        {"{\"task\": \"inference}", GPUFIT_E_PARSE, 20},
        {"{\"tp\": 2}}", GPUFIT_E_PARSE, 9},
        {"{\"tp\": 2} {}", GPUFIT_E_PARSE, 10},
        {"{\"tp\": 2, \"pp\": 0}", GPUFIT_E_INVALID_ARG, 16},
        {"{\"pp\": 2, \"tp\": \"x\"}", GPUFIT_E_INVALID_ARG, 16},
        {"\xef\xbb\xbf{\"tp\": -1}", GPUFIT_E_INVALID_ARG, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        handles h = fresh();
        snap before;
        take(h, &before);
        gpufit_error err = GPUFIT_ERROR_INIT;
        size_t len = strlen(cases[i].doc);
        int32_t st = gpufit_apply_json(h.m, h.j, cases[i].doc, len, &err);
        cr_assert_eq(st, cases[i].status, "'%s': status %d (%s)", cases[i].doc, st, err.message);
        cr_assert_eq(err.offset, cases[i].offset, "'%s': offset %llu (%s)", cases[i].doc,
                     (unsigned long long)err.offset, err.message);
        cr_assert(err.offset <= len);
        assert_unchanged(h, &before, cases[i].doc);
        release(h);
    }
}

Test(json_syntax, truncations_of_a_valid_document_fail_with_an_offset_inside)
{
    static const char doc[] = "{\"model\": {\"preset\": \"llama-3-8b\", \"n_layers\": 8}, "
                              "\"gpu\": {\"memory_gib\": 24, \"name\": \"x\"}, \"task\": "
                              "\"pretrain\", \"tp\": 2, \"dropout\": 0.1, \"sp\": true}";
    handles h = fresh();
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_json(h.m, h.j, doc, strlen(doc), &err), GPUFIT_OK, "%s", err.message);
    release(h);
    for (size_t n = 0; n < strlen(doc); n++) {
        h = fresh();
        snap before;
        take(h, &before);
        int32_t st = gpufit_apply_json(h.m, h.j, doc, n, &err);
        cr_assert_eq(st, GPUFIT_E_PARSE, "prefix of %zu bytes: %d", n, st);
        cr_assert(err.offset <= n, "prefix of %zu bytes: offset %llu", n,
                  (unsigned long long)err.offset);
        assert_unchanged(h, &before, "truncated JSON");
        release(h);
    }
}
