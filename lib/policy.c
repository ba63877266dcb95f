/* Resolves a job into a plan: precision policy, framework defaults and runtime overheads.
 * Policies: memory-model.md §2.2 (recipes), §8.1-8.3 (runtime); scenario.md (defaults). */
#include "eval.h"

#include <math.h>

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

static int is_gguf(int64_t dt)
{
    return dt >= GPUFIT_DTYPE_Q4_0 && dt <= GPUFIT_DTYPE_F16_GGUF;
}

static int half_of(int64_t precision)
{
    return precision == GPUFIT_PRECISION_AMP_FP16 || precision == GPUFIT_PRECISION_FP16
               ? GPUFIT_DTYPE_FP16
               : GPUFIT_DTYPE_BF16;
}

static uint64_t act_bytes(int64_t dt)
{
    switch (dt) {
    case GPUFIT_DTYPE_FP32:
    case GPUFIT_DTYPE_TF32: return 4;
    default: return 2; /* fp16/bf16; fp8 recipes keep non-GEMM activations in 16 bit */
    }
}

/* Training: the precision policy and the framework decide w/c/g/m/o (memory-model.md §2.2). */
static void training_policy(const struct gpufit_job *j, int64_t prec, gpufit__plan *p)
{
    int fw = (int)j->framework;
    int mixed_fw = fw == GPUFIT_FW_MEGATRON || fw == GPUFIT_FW_DEEPSPEED;
    switch (prec) {
    case GPUFIT_PRECISION_FP32:
    case GPUFIT_PRECISION_TF32:
        p->w_dt = GPUFIT_DTYPE_FP32;
        p->c_dt = prec == GPUFIT_PRECISION_TF32 ? GPUFIT_DTYPE_TF32 : GPUFIT_DTYPE_FP32;
        p->g_dt = GPUFIT_DTYPE_FP32;
        p->m_dt = GPUFIT_DTYPE_NONE;
        p->o_dt = GPUFIT_DTYPE_FP32;
        break;
    case GPUFIT_PRECISION_AMP_FP16:
    case GPUFIT_PRECISION_AMP_BF16: /* autocast: fp32 params are the master copy */
        p->w_dt = GPUFIT_DTYPE_FP32;
        p->c_dt = half_of(prec);
        p->g_dt = GPUFIT_DTYPE_FP32;
        p->m_dt = GPUFIT_DTYPE_NONE;
        p->o_dt = GPUFIT_DTYPE_FP32;
        p->amp = 1;
        break;
    case GPUFIT_PRECISION_FP8: /* TransformerEngine: bf16 params, fp8 GEMMs, fp32 master */
        p->w_dt = GPUFIT_DTYPE_BF16;
        p->c_dt = GPUFIT_DTYPE_FP8;
        p->g_dt = GPUFIT_DTYPE_FP32;
        p->m_dt = GPUFIT_DTYPE_FP32;
        p->o_dt = GPUFIT_DTYPE_FP32;
        break;
    default: /* bf16 / fp16 params: Megatron fp32 main grads + master; DeepSpeed fp32 master;
                plain PyTorch keeps everything in 16 bit (§2.2 "pure bf16") */
        p->w_dt = half_of(prec);
        p->c_dt = p->w_dt;
        p->g_dt = fw == GPUFIT_FW_MEGATRON ? GPUFIT_DTYPE_FP32 : p->w_dt;
        p->m_dt = mixed_fw ? GPUFIT_DTYPE_FP32 : GPUFIT_DTYPE_NONE;
        p->o_dt = mixed_fw ? GPUFIT_DTYPE_FP32 : p->w_dt;
        break;
    }
}

static void inference_policy(const struct gpufit_job *j, int64_t prec, gpufit__plan *p)
{
    switch (prec) {
    case GPUFIT_PRECISION_FP32:
    case GPUFIT_PRECISION_TF32:
        p->w_dt = GPUFIT_DTYPE_FP32;
        p->c_dt = GPUFIT_DTYPE_FP32;
        break;
    case GPUFIT_PRECISION_FP8:
        p->w_dt = GPUFIT_DTYPE_FP8;
        p->c_dt = GPUFIT_DTYPE_BF16;
        break;
    default:
        p->w_dt = half_of(prec);
        p->c_dt = p->w_dt;
        break;
    }
    if (j->framework == GPUFIT_FW_LLAMACPP) { /* ggml: f16 files, fp32 intermediates */
        if (j->precision < 0)
            p->w_dt = GPUFIT_DTYPE_F16_GGUF;
        p->c_dt = GPUFIT_DTYPE_FP32;
    }
    p->g_dt = p->m_dt = p->o_dt = GPUFIT_DTYPE_NONE;
}

int32_t gpufit__plan_resolve(const struct gpufit_job *j, const gpufit__shape *s,
                             gpufit__plan *p, gpufit_error *err)
{
    (void)s;
    /* every field is set below on success (no zeroing of the whole plan: this runs on every
     * evaluation); the policies set amp only under autocast */
    p->amp = 0;
    p->task = (int32_t)j->task;
    p->training = j->task != GPUFIT_TASK_INFERENCE;
    p->lora = j->task == GPUFIT_TASK_LORA || j->task == GPUFIT_TASK_QLORA;
    p->framework = (int32_t)j->framework;
    int fw = p->framework;
    int server = fw == GPUFIT_FW_VLLM || fw == GPUFIT_FW_SGLANG;

    int64_t prec = j->precision;
    if (prec < 0)
        prec = p->training ? GPUFIT_PRECISION_AMP_BF16 : GPUFIT_PRECISION_BF16;
    if (p->training)
        training_policy(j, prec, p);
    else
        inference_policy(j, prec, p);
    if (j->task == GPUFIT_TASK_QLORA && j->weight_dtype < 0) /* QLoRA: NF4 base (Dettmers) */
        p->w_dt = GPUFIT_DTYPE_NF4;
    /* explicit per-part dtypes win over the policy */
    if (j->weight_dtype >= 0)
        p->w_dt = j->weight_dtype;
    if (j->compute_dtype >= 0)
        p->c_dt = j->compute_dtype;
    if (j->grad_dtype >= 0)
        p->g_dt = j->grad_dtype;
    if (j->master_weights >= 0)
        p->m_dt = j->master_weights;
    if (j->optimizer_dtype >= 0)
        p->o_dt = j->optimizer_dtype;
    if (p->lora) {
        /* Adapters (and so their gradients) have their own dtype. PEFT upcasts fp16/bf16
         * adapters to fp32 (peft tuners_utils.py BaseTuner._cast_adapter_dtype, default
         * autocast_adapter_dtype=True in get_peft_model); recipes that keep 16-bit adapters
         * say so through grad_dtype (qlora.py --bf16) or adapter_dtype; other frameworks keep
         * the gradient dtype (docs/memory/lora.md). */
        int64_t ad = j->adapter_dtype;
        if (ad < 0)
            ad = fw == GPUFIT_FW_PYTORCH && j->grad_dtype < 0 ? GPUFIT_DTYPE_FP32 : p->g_dt;
        if (ad != GPUFIT_DTYPE_FP32 && ad != GPUFIT_DTYPE_BF16 && ad != GPUFIT_DTYPE_FP16)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_ADAPTER_DTYPE, UINT64_MAX,
                                "adapter_dtype must be fp32, bf16 or fp16");
        p->g_dt = ad;
    }
    if (p->m_dt == p->w_dt) /* a "master" copy in the weights' own dtype is the weights */
        p->m_dt = GPUFIT_DTYPE_NONE;
    p->kv_dt = j->kv_dtype >= 0 ? j->kv_dtype
               : fw == GPUFIT_FW_LLAMACPP ? GPUFIT_DTYPE_FP16
               : (p->c_dt == GPUFIT_DTYPE_FP8 ? GPUFIT_DTYPE_BF16 : p->c_dt);
    if (p->kv_dt == GPUFIT_DTYPE_TF32)
        p->kv_dt = GPUFIT_DTYPE_FP32;
    if (p->w_dt == GPUFIT_DTYPE_NONE)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_WEIGHT_DTYPE, UINT64_MAX,
                            "weight_dtype cannot be none");
    if (p->c_dt == GPUFIT_DTYPE_NONE || (p->c_dt > GPUFIT_DTYPE_FP8 && p->c_dt != GPUFIT_DTYPE_INT8))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_COMPUTE_DTYPE, UINT64_MAX,
                            "compute_dtype must be fp32, tf32, fp16, bf16 or fp8");
    if (p->training && (p->g_dt == GPUFIT_DTYPE_NONE || p->g_dt > GPUFIT_DTYPE_FP8))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GRAD_DTYPE, UINT64_MAX,
                            "grad_dtype must be fp32, fp16, bf16 or fp8 for training");
    if (p->training && !p->lora && (p->w_dt > GPUFIT_DTYPE_FP8 || is_gguf(p->w_dt)))
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_JOB_WEIGHT_DTYPE, UINT64_MAX,
                            "weight_dtype %s cannot be trained in full; use task=qlora",
                            gpufit__dtype(p->w_dt)->name);
    if (p->training && p->m_dt > GPUFIT_DTYPE_FP8)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_MASTER_WEIGHTS, UINT64_MAX,
                            "master_weights must be none, fp32, fp16 or bf16");
    if (p->training && p->o_dt > GPUFIT_DTYPE_FP8)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_OPTIMIZER_DTYPE, UINT64_MAX,
                            "optimizer_dtype must be fp32, fp16 or bf16");
    if (p->training && j->optimizer_dtype == GPUFIT_DTYPE_NONE && j->optimizer != GPUFIT_OPT_NONE)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_OPTIMIZER_DTYPE, UINT64_MAX,
                            "optimizer_dtype cannot be none while optimizer is %s "
                            "(set optimizer=none for no optimizer states)",
                            gpufit_param_value_name(GPUFIT_JOB_OPTIMIZER, j->optimizer));
    if (j->kv_dtype == GPUFIT_DTYPE_NONE)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_KV_DTYPE, UINT64_MAX,
                            "kv_dtype cannot be none (use auto or a dtype such as bf16 or q8_0)");
    p->a_b = act_bytes(p->c_dt);
    /* The residual stream has the embedding's dtype: fp32 under autocast (fp32 weights) and
     * in QLoRA when peft upcasts the embedding to fp32 (memory-model.md §7.4). */
    p->resid_b = p->amp || (p->task == GPUFIT_TASK_QLORA && p->g_dt == GPUFIT_DTYPE_FP32)
                     ? 4
                     : p->a_b;

    p->attention = (int32_t)j->attention;
    if (p->attention < 0)
        p->attention = fw == GPUFIT_FW_PYTORCH ? GPUFIT_ATTN_SDPA
                       : fw == GPUFIT_FW_DEEPSPEED ? GPUFIT_ATTN_EAGER
                                                   : GPUFIT_ATTN_FLASH;
    p->ckpt = (int32_t)j->checkpointing;
    p->optimizer = (int32_t)j->optimizer;
    /* lora_modules (a module list) overrides the lora_targets set when given */
    p->lora_mask = j->lora_modules > 0 ? (int32_t)j->lora_modules
                                       : gpufit__lora_targets_mask(j->lora_targets);
    p->lora_rank = (uint64_t)j->lora_rank;
    p->dropout = p->training ? j->dropout : 0.0;
    p->b = (uint64_t)j->micro_batch;
    p->s = (uint64_t)j->seq_len;
    p->batch = (uint64_t)j->batch;
    p->ctx = (uint64_t)j->context_len;
    p->prompt = (uint64_t)j->prompt_len;
    if (p->prompt == 0) /* n_ubatch 512 (llama.cpp); max_num_batched_tokens 8192 (vLLM V1) */
        p->prompt = fw == GPUFIT_FW_LLAMACPP ? 512 : server ? 8192 : p->ctx;
    if (!p->training && fw == GPUFIT_FW_LLAMACPP && p->prompt > p->batch * p->ctx)
        p->prompt = p->batch * p->ctx; /* causal models: n_ubatch <= n_batch <= n_ctx
                                        * (llama.cpp src/llama-context.cpp) */
    /* A server's step (max_num_batched_tokens) may cover several sequences and exceed one
     * sequence's context; elsewhere the prompt is part of the context it is kept in. */
    if (!p->training && !server && fw != GPUFIT_FW_LLAMACPP && p->prompt > p->ctx)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_PROMPT_LEN, UINT64_MAX,
                            "prompt_len (%llu) exceeds context_len (%llu): the prompt is kept in "
                            "the KV cache",
                            (unsigned long long)p->prompt, (unsigned long long)p->ctx);
    p->dp = (uint64_t)j->dp;
    p->tp = (uint64_t)j->tp;
    p->pp = (uint64_t)j->pp;
    p->vpp = (uint64_t)j->vpp;
    p->cp = (uint64_t)j->cp;
    p->ep = (uint64_t)j->ep;
    p->etp = !p->training && p->ep > 1 ? 1 : p->tp;
    p->sp = (uint64_t)j->sp;
    p->zero = (uint64_t)j->zero;
    p->offload = (uint64_t)j->offload;
    p->shard = j->zero_shard_size > 0 ? (uint64_t)j->zero_shard_size : p->dp;
    p->n_gpu_layers = j->n_gpu_layers;
    p->schedule = j->pp_schedule >= 0 ? (int32_t)j->pp_schedule
                  : j->vpp > 1        ? GPUFIT_PP_INTERLEAVED
                                      : GPUFIT_PP_1F1B;

    p->gpu = j->gpu >= 0 ? gpufit__gpu_by_id(j->gpu) : NULL;
    p->capacity = j->gpu_memory_bytes > 0 ? (uint64_t)j->gpu_memory_bytes
                  : p->gpu != NULL        ? p->gpu->memory_bytes
                                          : 0;
    if (j->device_gpus.n > 0 && p->gpu == NULL && p->capacity == 0) {
        /* GPUs per stage without a job GPU: the runtime defaults follow the smallest one */
        for (uint32_t k = 0; k < j->device_gpus.n; k++) {
            const gpufit__gpu *g = gpufit__gpu_by_id((int64_t)j->device_gpus.v[k]);
            if (g != NULL && (p->gpu == NULL || g->memory_bytes < p->capacity)) {
                p->gpu = g;
                p->capacity = g->memory_bytes;
            }
        }
    }
    int hopper = p->gpu != NULL && p->gpu->cc_major >= 9;

    /* CUDA context per process: memory-model.md §8.1 (lazy loading, ~0.3-0.5 GiB) */
    p->ctx_bytes = j->cuda_context_bytes >= 0 ? (uint64_t)j->cuda_context_bytes
                   : fw == GPUFIT_FW_LLAMACPP ? 300 * MIB
                                              : GIB / 2;
    /* cuBLAS workspaces: memory-model.md §8.2 (8,519,680 B per handle-stream, 32 MiB on
     * compute capability >= 9; forward and backward streams when training). vLLM's profiler
     * reports such non-torch allocations as ~0.35 GiB on one GPU (validation README). */
    uint64_t per_handle = hopper ? 32 * MIB : 8519680;
    p->ws_bytes = j->workspace_bytes >= 0 ? (uint64_t)j->workspace_bytes
                  : server                ? 350 * MIB
                  : fw == GPUFIT_FW_LLAMACPP ? 0
                  : fw == GPUFIT_FW_MEGATRON ? 3 * per_handle
                                             : (p->training ? 2 : 1) * per_handle;
    /* NCCL: ~0.6 GiB per communicator the layout creates (memory-model.md §8.4) */
    uint64_t comms = (p->dp > 1) + (p->tp > 1) + (p->pp > 1) + (p->cp > 1) + (p->ep > 1);
    /* vLLM/SGLang TP groups hold two: the engine's own PyNccl communicator and torch's
     * device group, created by the logits all-gather (vllm distributed/parallel_state.py) */
    if (server && p->tp > 1)
        comms++;
    if (fw == GPUFIT_FW_LLAMACPP) /* ggml copies activations between devices itself */
        comms = 0;
    p->comm_bytes = comms * (GIB * 6 / 10);
    /* caching-allocator slack as a fraction of the dynamically allocated bytes (activations,
     * logits, growing KV cache): memory-model.md §8.3 puts reserved - allocated at 0-20 % of
     * all allocated bytes in steady training, i.e. more of the part that is freed and
     * re-allocated; a server's KV pool and ggml's static buffers keep none. */
    p->frag = j->fragmentation >= 0.0 ? j->fragmentation
              : server || fw == GPUFIT_FW_LLAMACPP ? 0.0
                                                   : 0.25;
    /* vLLM defaults: 1024 sequences on GPUs of 70 GiB or more, else 256 (engine arg_utils) */
    p->max_num_seqs = j->max_num_seqs > 0                      ? (uint64_t)j->max_num_seqs
                      : p->capacity >= ((uint64_t)70 << 30) ? 1024
                                                             : 256;
    p->util = j->gpu_memory_utilization > 0.0 ? j->gpu_memory_utilization
              : server                        ? 0.9
                                              : 0.0;
    return GPUFIT_OK;
}

void gpufit__job_refresh(struct gpufit_job *j)
{
    j->plan_state = gpufit__plan_resolve(j, NULL, &j->plan, NULL) == GPUFIT_OK;
}
