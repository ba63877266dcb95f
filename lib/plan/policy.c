/* SPDX-License-Identifier: MIT */
/* Resolves a job into a plan: precision policy, framework defaults and runtime overheads.
 * Policies: memory-model.md §2.2 (recipes), §8.1-8.3 (runtime); scenario.md (defaults). */
#include "eval.h"

#include <math.h>

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

/* Stack constants: point value and documented range (docs/memory/runtime.md has the sources).
 * The band issue reads the ranges from here. */
const gpufit__stack_const gpufit__stack[GPUFIT__STACK_COUNT] = {
    /* lazy loading (CUDA >= 11.7 under PyTorch >= 1.13, which sets CUDA_MODULE_LOADING=LAZY;
     * the CUDA default from 12.2): 274 MiB measured in pytorch PR #86509, ~300-400 MB in
     * pytorch issues #107667 / #109888, 426 MiB on cu130 (unsloth-zoo PR #1053) */
    [GPUFIT__STACK_CTX_LAZY] = {GIB / 2, 300 * MIB, 600 * MIB},
    /* eager loading: every kernel image of torch + cuDNN/cuBLAS loaded at start: 636 MiB
     * measured (pytorch PR #86509, PyTorch 1.13), ">1000MB" (issue #107667), NVML views add
     * the driver's per-process reservation */
    [GPUFIT__STACK_CTX_EAGER] = {GIB, 900 * MIB, 1434 * MIB},
    /* llama.cpp: the ggml-cuda kernels only (its CI logs, memory-model.md §8.1) */
    [GPUFIT__STACK_CTX_GGML] = {300 * MIB, 200 * MIB, 600 * MIB},
    /* PyTorch CublasHandlePool.cpp: ":4096:2:16:8" = 8,519,680 B per handle-stream; exact
     * unless CUBLAS_WORKSPACE_CONFIG is set */
    [GPUFIT__STACK_CUBLAS_WS] = {8519680, 8519680, 8519680},
    [GPUFIT__STACK_CUBLAS_WS_SM90] = {32 * MIB, 32 * MIB, 32 * MIB},
    /* vLLM's "non_torch_memory" after the profile run: 0.35 GiB on one GPU (validation README,
     * vllm issue #10517 log); workspaces and library handles, more with custom all-reduce */
    [GPUFIT__STACK_SERVER_NONTORCH] = {350 * MIB, 250 * MIB, 700 * MIB},
    /* NCCL per communicator: 544 MB (2 GPUs) to 688 MB (> 2 GPUs) on A100 NVLink (NVIDIA/nccl
     * issue #964); fewer channels on PCIe, more with all-to-all peers (issue #1685) */
    [GPUFIT__STACK_NCCL_COMM] = {GIB * 6 / 10, 256 * MIB, GIB},
    /* What the driver keeps back from cudaMemGetInfo()'s total, which vLLM/SGLang budget from
     * (torch.cuda.mem_get_info), when nvidia-smi's total is not a whole number of GiB (it
     * already leaves part out): H100 81559 MiB -> total_gpu_memory 79.22 GiB (vllm PR #12126
     * log, "H100-80G"), L40S 46068 MiB -> 44.31-44.39 GiB, RTX 4090 24564 MiB -> 23.98 GiB
     * (public vLLM start-up logs); driver-dependent (docs/memory/vllm.md) */
    [GPUFIT__STACK_DRIVER_RESERVE] = {GIB / 2, 0, GIB * 3 / 4},
    /* the floor of the same when nvidia-smi reports the whole marketed size (A100 80GB 81920 MiB
     * -> 79.15-79.33 GiB, RTX 3090 24576 MiB -> 23.53-23.67 GiB in vLLM logs); the reserve is
     * max(floor, GPUFIT__DRIVER_RESERVE_PERMILLE x total) (lib/eval/evaluate.c server_visible) */
    [GPUFIT__STACK_DRIVER_RESERVE_FULL] = {GIB * 2 / 5, GIB * 3 / 10, GIB / 2},
    /* vLLM's CUDA graphs beyond the largest capture's activations, per layer and captured batch
     * size (the driver's memory per graph node; vLLM's own estimator floors a graph at 1 MiB,
     * vllm/v1/worker/gpu_model_runner.py profile_cudagraph_memory): from logged pool sizes,
     * "Graph capturing finished in N secs, took X GiB" (docs/memory/vllm.md, "CUDA graphs") */
    [GPUFIT__STACK_VLLM_GRAPH] = {280 * 1024, 96 * 1024, 450 * 1024},
};

/* A stack constant from a calibration profile: its fitted point and range; fitted from fewer
 * than GPUFIT__PROF_NARROW_RUNS runs, the range also keeps the documented one (`table`), as
 * one or two runs cannot tell the stack's spread from one job's modelling error
 * (docs/calibration.md). */
static gpufit__stack_const profiled(const gpufit__profile *pr, int id,
                                    const gpufit__stack_const *table)
{
    gpufit__stack_const c = {pr->bytes[id][0], pr->bytes[id][1], pr->bytes[id][2]};
    if (pr->runs[id] < GPUFIT__PROF_NARROW_RUNS) {
        c.low = c.low < table->low ? c.low : table->low;
        c.high = c.high > table->high ? c.high : table->high;
    }
    return c;
}

static int is_gguf(int64_t dt)
{
    return dt >= GPUFIT_DTYPE_Q4_0 && dt <= GPUFIT_DTYPE_F16_GGUF;
}

/* Prefill CUDA graph sizes up to m tokens: 4 ... 32 by 4, 48 ... 256 by 16, 288 ... 512 by 32,
 * 576 ... 1024 by 64, 1280 ... 4096 by 256, then by 512 (python/sglang/srt/server_args.py
 * ServerArgs._generate_prefill_cuda_graph_batch_sizes). */
static uint64_t sglang_prefill_sizes(uint64_t m)
{
    static const struct {
        uint64_t first, last, step;
    } runs[5] = {{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}};
    uint64_t n = 0;
    for (int k = 0; k < 5; k++)
        if (m >= runs[k].first)
            n += ((m < runs[k].last ? m : runs[k].last) - runs[k].first) / runs[k].step + 1;
    if (m >= 4608)
        n += (m - 4608) / 512 + 1;
    return n;
}

/* SGLang's default mem_fraction_static and the CUDA graph memory it reserves for
 * (python/sglang/srt/server_args.py ServerArgs._handle_gpu_memory_settings,
 * reserve_for_graph_mb, adjust_mem_fraction_for_vlm; docs/memory/sglang.md). From 0.5.4 (PR
 * #10975): reserved MiB = 512 + 1.5 x max(chunked prefill, 2048) + the graphs + tp x pp / 8 x
 * 1024, at least 10240 above 60 GiB; both sizes by GPU memory bucket (cuda_graph_max_bs 16 on
 * 20-35 GiB at tp < 4 in 0.5.4, 24 from 0.5.4.post1: #12124); fraction = round((gpu_mem -
 * reserved) / gpu_mem, 3), times 0.95 x clamp(1 - 0.1 x (vit_layers x vit_hidden^2 / (24 x
 * 1024^2) - 1), 0.8, 1.05) for a model with a vision encoder. The graphs: 2 MiB x
 * cuda_graph_max_bs for decode, and from 0.5.10 (c64274c7, prefill graphs on by default) 8 MiB
 * per prefill size up to the chunk (and context_len), or 1.5 GiB under MLA, unless pipeline
 * parallelism, a GPU that is not NVIDIA's, GGUF weights, CPU offload or a multimodal model turn
 * the prefill graphs off. Before 0.5.4: by tp (0.88, 0.87 at tp >= 2, 0.85 at 4, 0.81 at 8,
 * 0.79 at 16). s: the model, or NULL (a text model without MLA). *graph_mib receives the
 * graphs' MiB. */
double gpufit__sglang_fraction(const gpufit__plan *p, const gpufit__shape *s, uint64_t *graph_mib)
{
    uint64_t capacity = p->capacity, tp = p->tp, pp = p->pp;
    int64_t version = p->fw_version;
    double mib = (double)capacity / (double)MIB;
    uint64_t chunk, bs;
    if (mib < 20 * 1024) {
        chunk = 2048, bs = 8;
    } else if (mib < 35 * 1024) {
        chunk = 2048, bs = tp >= 4 ? 80 : version < GPUFIT__VER(0, 5, 5) ? 16 : 24;
    } else if (mib < 60 * 1024) {
        chunk = 4096, bs = tp < 4 ? 32 : 160;
    } else if (mib < 160 * 1024) {
        chunk = 8192, bs = tp < 4 ? 256 : 512;
    } else {
        chunk = 16384, bs = 512;
    }
    if (capacity == 0)
        chunk = 4096, bs = 160;
    int mla = s != NULL && s->mla, vision = s != NULL && s->v_layers > 0;
    uint64_t graphs = 2 * bs;
    if (version >= GPUFIT__VER(0, 5, 10) && pp == 1 && !vision && !is_gguf(p->w_dt) &&
        p->offload == 0 && (p->gpu == NULL || p->gpu->cc_major > 0)) {
        uint64_t m = chunk < p->ctx || p->ctx == 0 ? chunk : p->ctx;
        graphs += mla ? 1536 : 8 * sglang_prefill_sizes(m);
    }
    *graph_mib = graphs;
    if (version < GPUFIT__VER(0, 5, 4))
        return tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
    if (capacity == 0)
        return 0.88;
    double reserved = 512.0 + 1.5 * (double)(chunk > 2048 ? chunk : 2048) + (double)graphs +
                      (double)(tp * pp) / 8.0 * 1024.0;
    if (mib > 60 * 1024 && reserved < 10240.0)
        reserved = 10240.0;
    double f = round((mib - reserved) / mib * 1000.0) / 1000.0;
    if (vision) {
        double ratio = (double)s->v_layers * (double)s->v_h * (double)s->v_h / (24.0 * 1048576.0);
        double adj = 1.0 - 0.1 * (ratio - 1.0);
        f *= 0.95 * (adj < 0.8 ? 0.8 : adj > 1.05 ? 1.05 : adj);
    }
    /* a GPU smaller than the reserve: SGLang's pool is empty and it refuses to start; keep a
     * positive fraction so that the budget (0) and the KV note say so */
    return f > 0.0 ? f : 0.001;
}

/* An assumed SGLang release leaves its default fraction between the rules of the releases
 * gpufit models (policy.c gpufit__sglang_fraction: before 0.5.4, 0.5.4-0.5.9, from 0.5.10):
 * [0] the largest (the most KV budget), [1] the smallest (docs/band.md). */
static void sglang_band(const struct gpufit_job *j, const gpufit__shape *s, gpufit__plan *p)
{
    p->band.util[0] = p->band.util[1] = p->util;
    if (!p->fw_version_assumed || j->gpu_memory_utilization > 0.0)
        return;
    static const int64_t eras[3] = {GPUFIT__VER(0, 5, 3), GPUFIT__VER(0, 5, 9),
                                    GPUFIT__VER(0, 5, 15)};
    gpufit__plan q = *p;
    for (int k = 0; k < 3; k++) {
        uint64_t graphs;
        q.fw_version = eras[k];
        double f = gpufit__sglang_fraction(&q, s, &graphs);
        p->band.util[0] = f > p->band.util[0] ? f : p->band.util[0];
        p->band.util[1] = f < p->band.util[1] ? f : p->band.util[1];
    }
}

/* SGLang's defaults of plan p resolved again for model s (NULL: a text model without MLA),
 * p's workspaces holding the graphs of `before` MiB */
static void sglang_refit(const struct gpufit_job *j, const gpufit__shape *s, uint64_t before,
                         gpufit__plan *p)
{
    uint64_t graphs;
    double f = gpufit__sglang_fraction(p, s, &graphs);
    if (!(j->gpu_memory_utilization > 0.0))
        p->util = f;
    sglang_band(j, s, p);
    if (j->workspace_bytes < 0 && graphs != before) { /* the graphs sit in the workspaces */
        uint64_t add = graphs * MIB, sub = before * MIB;
        p->ws_bytes = p->ws_bytes - sub + add;
        p->band.ws[0] = p->band.ws[0] - sub + add;
        p->band.ws[1] = p->band.ws[1] - sub + add;
    }
}

void gpufit__sglang_model(const struct gpufit_job *j, const gpufit__shape *s, gpufit__plan *p)
{
    uint64_t text;
    (void)gpufit__sglang_fraction(p, NULL, &text);
    sglang_refit(j, s, text, p);
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

/* The plan's fields that the batch and sequence sizes decide (micro_batch, seq_len, batch,
 * context_len, prompt_len; global_batch through accum_of and nosync_of): set by
 * gpufit__plan_resolve, and alone by gpufit__job_resize when only sizes changed. Reads
 * p->training and p->framework. */
static int32_t plan_sizes(const struct gpufit_job *j, gpufit__plan *p, gpufit_error *err)
{
    int fw = p->framework;
    int server = fw == GPUFIT_FW_VLLM || fw == GPUFIT_FW_SGLANG;
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
    return GPUFIT_OK;
}

/* micro-batches per optimizer step: global / (micro x dp) when the global batch is larger */
static uint64_t accum_of(const struct gpufit_job *j, const gpufit__plan *p)
{
    return j->global_batch > 0 && (uint64_t)j->global_batch > p->b * p->dp
               ? (uint64_t)j->global_batch / (p->b * p->dp)
               : 1;
}

/* accelerate (accelerator.py accumulate / no_sync) runs the non-final micro-batches of an
 * accumulation inside model.no_sync() (FSDP1) / set_requires_gradient_sync(False) (FSDP2)
 * unless sync_each_batch; FSDP then keeps full unsharded gradients until the sync
 * (FULL_SHARD and SHARD_GRAD_OP alike: FSDP1 _post_backward_hook returns before the
 * reduce-scatter). */
static int32_t nosync_of(const struct gpufit_job *j, const gpufit__plan *p)
{
    return p->framework == GPUFIT_FW_PYTORCH && p->training && p->zero >= 2 && p->shard > 1 &&
           j->sync_each_batch <= 0 && p->accum > 1;
}

/* DeepSpeed's optimizer wrapper and ZeRO buckets, FSDP's no_sync gradients (docs/memory/
 * deepspeed.md, docs/memory/fsdp.md). Needs the dtypes, zero, dp, pp and offload resolved. */
static int32_t deepspeed_policy(const struct gpufit_job *j, gpufit__plan *p, gpufit_error *err)
{
    int ds = p->framework == GPUFIT_FW_DEEPSPEED && p->training;
    if (j->reduce_bucket_size > 0 && !ds)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_REDUCE_BUCKET_SIZE, UINT64_MAX,
                            "reduce_bucket_size applies to DeepSpeed training "
                            "(framework=deepspeed, task other than inference)");
    if (j->overlap_comm >= 0 && !ds)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_OVERLAP_COMM, UINT64_MAX,
                            "overlap_comm applies to DeepSpeed training "
                            "(framework=deepspeed, task other than inference)");
    if (j->sync_each_batch > 0 && !(p->framework == GPUFIT_FW_PYTORCH && p->training))
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_SYNC_EACH_BATCH, UINT64_MAX,
                            "sync_each_batch applies to PyTorch (accelerate / HF Trainer) "
                            "training (framework=pytorch)");
    /* zero/config.py: reduce_bucket_size 5e8; overlap_comm None -> stage == 3
     * (overlap_comm_valid); engine.py _configure_zero_optimizer turns it off for a
     * PipelineModule under stage 1/2 ("Pipeline parallelism does not support overlapped
     * communication, will be disabled"). */
    p->bucket = j->reduce_bucket_size > 0 ? (uint64_t)j->reduce_bucket_size : 500000000u;
    p->overlap = j->overlap_comm >= 0 ? (int32_t)j->overlap_comm : p->zero == 3;
    if (p->zero <= 2 && p->pp > 1)
        p->overlap = 0;
    /* engine.py _do_optimizer_sanity_check: ZeRO, except bf16 weights + fp32 gradient
     * accumulation at stage 1 without offload (BF16_Optimizer); without ZeRO, fp32 runs the
     * torch optimizer, bf16 under a PipelineModule the BF16_Optimizer, otherwise
     * FP16_Optimizer (fp16, or bf16 as DDP_BFLOAT16). bf16 + fp32 accumulation without ZeRO is
     * the BF16_Optimizer of DeepSpeed 0.6-0.8 (BLOOM's ZERO_STAGE=0); fp16 + fp32 accumulation
     * without ZeRO has no optimizer (NotImplementedError). */
    /* the operator's safety margin (docs/band.md): one of a share or bytes */
    if (j->margin > 0.0 && j->margin_bytes > 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_MARGIN_BYTES, UINT64_MAX,
                            "margin (%g) and margin_bytes (%lld) are both set: give one",
                            j->margin, (long long)j->margin_bytes);
    p->margin = j->margin;
    p->margin_bytes = (uint64_t)j->margin_bytes;
    p->ds_opt = GPUFIT__DS_NONE;
    if (ds) {
        int w16 = p->w_dt == GPUFIT_DTYPE_BF16 || p->w_dt == GPUFIT_DTYPE_FP16;
        int g32 = p->g_dt == GPUFIT_DTYPE_FP32 || p->g_dt == GPUFIT_DTYPE_TF32;
        if (p->zero >= 1)
            p->ds_opt = p->w_dt == GPUFIT_DTYPE_BF16 && g32 && p->zero == 1 &&
                                p->offload == GPUFIT_OFFLOAD_NONE
                            ? GPUFIT__DS_BF16
                            : GPUFIT__DS_ZERO;
        else if (!w16)
            p->ds_opt = GPUFIT__DS_NONE;
        else if (p->w_dt == GPUFIT_DTYPE_BF16 && (g32 || p->pp > 1))
            p->ds_opt = GPUFIT__DS_BF16;
        else if (g32)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_GRAD_DTYPE, UINT64_MAX,
                                "DeepSpeed has no optimizer for fp16 weights with fp32 "
                                "gradients without ZeRO (engine.py _do_optimizer_sanity_check): "
                                "use zero >= 1 or grad_dtype=fp16");
        else
            p->ds_opt = GPUFIT__DS_FP16;
    }
    p->nosync = nosync_of(j, p); /* FSDP under accumulation without sync */
    return GPUFIT_OK;
}

int32_t gpufit__job_layout(const struct gpufit_job *j, uint64_t *dp, uint64_t *tp, uint64_t *pp)
{
    *dp = (uint64_t)j->dp;
    *tp = (uint64_t)j->tp;
    *pp = (uint64_t)j->pp;
    if (j->gpus <= 1 || j->dp != 1 || j->tp != 1 || j->pp != 1 || j->cp != 1)
        return GPUFIT__LAYOUT_GIVEN;
    /* gpus=N alone: what the framework does with N GPUs and no layout flag */
    if (j->task != GPUFIT_TASK_INFERENCE) { /* torchrun / accelerate: a rank per GPU */
        *dp = (uint64_t)j->gpus;
        return GPUFIT__LAYOUT_DP;
    }
    if (j->framework == GPUFIT_FW_VLLM || j->framework == GPUFIT_FW_SGLANG) {
        *tp = (uint64_t)j->gpus; /* the documented way to use N GPUs (--tensor-parallel-size,
                                  * --tp-size); one GPU per engine otherwise */
        return GPUFIT__LAYOUT_TP;
    }
    /* llama.cpp: --split-mode layer is the default (common/arg.cpp, LLAMA_SPLIT_MODE_LAYER);
     * Transformers: device_map="auto" places consecutive layers on each GPU (accelerate
     * infer_auto_device_map) */
    *pp = (uint64_t)j->gpus;
    return GPUFIT__LAYOUT_LAYERS;
}

/* Batch sizes on vLLM's default capture grid up to t tokens: 1, 2, 4, then every 8 (before
 * 0.12) or every 8 below 256 and every 16 from 256 (284cc9227), and max_num_batched_tokens
 * `mbt` itself when it is the largest (vllm/config/vllm.py VllmConfig._set_cudagraph_sizes). */
static uint64_t graph_grid(uint64_t t, int step16, uint64_t mbt)
{
    uint64_t n = (t >= 1) + (t >= 2) + (t >= 4), top = t;
    if (step16 && t >= 256)
        top = 255;
    if (top >= 8)
        n += top / 8;
    if (step16 && t >= 256)
        n += (t - 256) / 16 + 1;
    int on_grid = t < 8 ? (t == 1 || t == 2 || t == 4)
                  : step16 && t >= 256 ? t % 16 == 0
                                       : t % 8 == 0;
    return n + (t == mbt && !on_grid);
}

/* vLLM's CUDA graphs by release (docs/memory/vllm.md "CUDA graphs"): none before 0.2.6 (PR
 * #1926); V0 (< 0.8) one graph per decode batch size 1, 2, 4, 8, 16 ... 256 (from 0.6, up to
 * the first size >= max_num_seqs: c334b1898); V1 piecewise graphs per size up to 512 tokens
 * (from 0.10: 2 x max_num_seqs, 34dad19e7), and from 0.11 full decode graphs for the sizes up
 * to max_num_seqs besides (FULL_AND_PIECEWISE, 24fab45d9; vllm/v1/cudagraph_dispatcher.py
 * CudagraphDispatcher.initialize_cudagraph_keys); 1024 tokens on Blackwell (compute
 * capability 10) from 0.28 (021b7d985). The budget pays for them from 0.21 (PR #38284,
 * vllm/v1/worker/gpu_worker.py determine_available_memory), except on Model Runner V2
 * (vllm/v1/worker/gpu/model_runner.py profile_cudagraph_memory returns 0), the default for
 * dense models from 0.25 (a2f713002; some families from 0.22: vllm/config/vllm.py
 * use_v2_model_runner). */
static void vllm_graphs(const struct gpufit_job *j, gpufit__plan *p)
{
    int64_t v = p->fw_version;
    p->graph_sizes = p->graph_tokens = 0;
    p->graph_charge = GPUFIT__GRAPH_AFTER;
    p->graph_per[0] = p->graph_per[1] = p->graph_per[2] = 0;
    /* a workspace_bytes of the user's is the whole non-torch memory, graphs included */
    if (p->framework != GPUFIT_FW_VLLM || p->training || v < GPUFIT__VER(0, 2, 6) ||
        j->workspace_bytes >= 0)
        return;
    const gpufit__stack_const *g = &gpufit__stack[GPUFIT__STACK_VLLM_GRAPH];
    gpufit__stack_const g_p; /* a calibration profile's value wins over the table's */
    if (j->profile.set & (1u << GPUFIT__PROF_GRAPH)) {
        g_p = profiled(&j->profile, GPUFIT__PROF_GRAPH, g);
        g = &g_p;
    }
    p->graph_per[0] = g->point;
    p->graph_per[1] = g->low;
    p->graph_per[2] = g->high;
    uint64_t m = p->max_num_seqs, mbt = p->prompt;
    if (v < GPUFIT__VER(0, 8, 0)) { /* V0: decode graphs of up to 256 (or max_num_seqs) */
        uint64_t top = 256;
        if (v >= GPUFIT__VER(0, 6, 0))
            top = m <= 4 ? (m <= 1 ? 1 : m <= 2 ? 2 : 4) : m >= 8192 ? 8192 : (m + 7) / 8 * 8;
        p->graph_sizes = graph_grid(top, 0, 0);
        p->graph_tokens = top;
        return;
    }
    uint64_t cap = p->gpu != NULL && p->gpu->cc_major == 10 && v >= GPUFIT__VER(0, 28, 0)
                       ? 1024
                       : 512;
    uint64_t t = v < GPUFIT__VER(0, 10, 0) ? cap : (2 * m < cap ? 2 * m : cap);
    t = t < mbt ? t : mbt;
    int step16 = v >= GPUFIT__VER(0, 12, 0);
    p->graph_sizes = graph_grid(t, step16, mbt);
    if (v >= GPUFIT__VER(0, 11, 0)) /* full decode graphs: the sizes up to max_num_seqs */
        p->graph_sizes += graph_grid(m < t ? m : t, step16, m < t ? 0 : mbt);
    p->graph_tokens = t;
    p->graph_charge = v < GPUFIT__VER(0, 21, 0)   ? GPUFIT__GRAPH_AFTER
                      : v < GPUFIT__VER(0, 22, 0) ? GPUFIT__GRAPH_CHARGED
                      : v < GPUFIT__VER(0, 25, 0) ? GPUFIT__GRAPH_V2_SOME
                                                  : GPUFIT__GRAPH_V2_DENSE;
}

/* NVLS (NVLink SHARP) buffers, the most they add to the layout's communicators on one device
 * (docs/memory/runtime.md, "NVLS"). On NVSwitch boards (Hopper and later, NVLink 900 GB/s and
 * up) NCCL gives every communicator with two or more GPUs of a node multicast buffers when it
 * first runs an NVLS collective (src/transport/nvls.cc ncclNvlsBufferSetup): nChannels x 2 x
 * buffSize per head, times nHeads, the communicator's GPUs on the node. NCCL 2.18-2.19:
 * buffSize = NCCL_BUFFSIZE 4 MiB + NVLS_MEM_ALIGN_SIZE 2 MiB, 16 channels: 192 MiB per head;
 * later releases: NVLS_CHUNKSIZE 128 KiB x NCCL_STEPS 8 = 1 MiB, 16 channels on SM90
 * (NVLS_NCHANNELS_SM90), 32 on SM100: 32 / 64 MiB per head. NCCL_NVLS_ENABLE=0, a board
 * without NVSwitch, or no NVLS collective: none. So the band's high end only; the groups
 * that run collectives (tp, the data-parallel group, cp, ep, and a server's second tp
 * communicator), each over at most 8 GPUs of a node. */
static uint64_t nvls_high(const gpufit__plan *p, int second_tp)
{
    if (p->gpu == NULL || p->gpu->cc_major < 9 || p->gpu->nvlink_gbs < 900.0)
        return 0;
    const uint64_t per_head = p->gpu->cc_major >= 10 ? 64 * MIB : 192 * MIB;
    const uint64_t groups[5] = {p->tp, p->dp, p->cp, p->ep, second_tp ? p->tp : 1};
    uint64_t heads = 0;
    for (int k = 0; k < 5; k++)
        if (groups[k] > 1)
            heads += groups[k] < 8 ? groups[k] : 8;
    return heads * per_head; /* <= 40 x 192 MiB */
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
    /* torchtune (docs/memory/torchtune.md): the recipes train in one dtype, `dtype: bf16` in
     * their configs, with no autocast (recipes/lora_finetune_single_device.py and the others: training.get_dtype) */
    int tune = p->training && fw == GPUFIT_FW_PYTORCH && j->trainer == GPUFIT_TRAINER_TORCHTUNE;
    p->trainer = tune ? GPUFIT_TRAINER_TORCHTUNE
                 : p->training && fw == GPUFIT_FW_PYTORCH && j->trainer == GPUFIT_TRAINER_LOOP
                     ? GPUFIT_TRAINER_LOOP
                     : GPUFIT_TRAINER_HF;

    int64_t prec = j->precision;
    if (prec < 0)
        prec = !p->training ? GPUFIT_PRECISION_BF16
               : tune       ? GPUFIT_PRECISION_BF16
                            : GPUFIT_PRECISION_AMP_BF16;
    if (p->training)
        training_policy(j, prec, p);
    else
        inference_policy(j, prec, p);
    if (j->task == GPUFIT_TASK_QLORA && j->weight_dtype < 0) /* QLoRA: NF4 base (Dettmers) */
        p->w_dt = GPUFIT_DTYPE_NF4;
    /* LoRA with precision auto: the frozen base loads in 16 bit, no fp32 copy, as current
     * recipes do (torchtune recipes/configs/llama3/8B_lora_single_device.yaml "dtype: bf16";
     * litgpt config_hub/finetune/MODEL/lora.yaml "precision: bf16-true"; Transformers 5
     * from_pretrained loads the checkpoint's dtype, dtype="auto", under a PEFT adapter);
     * the adapters keep their own dtype (adapter_dtype below) and compute is bf16 */
    if (j->task == GPUFIT_TASK_LORA && j->precision < 0 && j->weight_dtype < 0) {
        p->w_dt = half_of(prec);
        p->c_dt = p->w_dt;
        p->amp = 0; /* 16-bit weights: no autocast casts, a 16-bit residual stream */
    }
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
        /* torchtune builds the whole model, adapters included, under the recipe's dtype
         * (recipes/lora_finetune_single_device.py _setup_model: `with
         * training.set_default_dtype(self._dtype)`): adapters in the model's float dtype,
         * the compute dtype under a 4-bit base (QLoRA) */
        int64_t ad = j->adapter_dtype;
        int float_w = p->w_dt == GPUFIT_DTYPE_FP32 || p->w_dt == GPUFIT_DTYPE_BF16 ||
                      p->w_dt == GPUFIT_DTYPE_FP16;
        if (ad < 0 && tune)
            ad = float_w ? p->w_dt : p->c_dt == GPUFIT_DTYPE_TF32 ? GPUFIT_DTYPE_FP32 : p->c_dt;
        else if (ad < 0)
            ad = fw == GPUFIT_FW_PYTORCH && j->grad_dtype < 0 ? GPUFIT_DTYPE_FP32 : p->g_dt;
        /* torch.optim.AdamW keeps its states in the parameter's dtype (adamw.py _init_group:
         * zeros_like(p)): under torchtune the adapters' */
        if (tune && j->optimizer_dtype < 0 && p->o_dt != GPUFIT_DTYPE_NONE)
            p->o_dt = ad;
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
    p->ckpt_every = (uint32_t)j->checkpoint_every;
    p->ckpt_layers = (uint32_t)j->checkpoint_layers;
    /* torchtitan's every-N-th layer and Megatron's block method both choose which layers
     * full checkpointing wraps (docs/memory/checkpointing.md) */
    if ((p->ckpt_every > 1 || p->ckpt_layers > 0) && p->ckpt != GPUFIT_CKPT_FULL)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT,
                            p->ckpt_every > 1 ? GPUFIT_JOB_CHECKPOINT_EVERY
                                              : GPUFIT_JOB_CHECKPOINT_LAYERS,
                            UINT64_MAX, "%s chooses the layers full checkpointing wraps: set "
                                        "checkpointing=full",
                            p->ckpt_every > 1 ? "checkpoint_every" : "checkpoint_layers");
    if (p->ckpt_every > 1 && p->ckpt_layers > 0)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_CHECKPOINT_LAYERS, UINT64_MAX,
                            "checkpoint_layers (Megatron's block method) and checkpoint_every "
                            "(torchtitan's every N-th layer) exclude each other: set one");
    p->optimizer = (int32_t)j->optimizer;
    /* torch.optim's Adam/AdamW step (docs/memory/optimizer-step.md): PyTorch training whose
     * states live on the GPU; QLoRA's paged optimizer is bitsandbytes' own (in place).
     * auto: torchtune's shipped configs set fused: True (recipes/configs/llama3_1/8B_lora.yaml);
     * the HF Trainer's default optim is adamw_torch (foreach) up to torch 2.7 and
     * adamw_torch_fused from 2.8 (transformers training_args.py default_optim), a plain loop's
     * torch.optim.AdamW is foreach on CUDA from PyTorch 2.0 (torch/optim/optimizer.py
     * _default_to_fused_or_foreach): foreach, with a band */
    p->opt_auto = j->optimizer_impl < 0;
    p->opt_impl = -1;
    if (p->training && fw == GPUFIT_FW_PYTORCH && j->task != GPUFIT_TASK_QLORA &&
        (j->optimizer == GPUFIT_OPT_ADAMW || j->optimizer == GPUFIT_OPT_ADAM))
        p->opt_impl = j->optimizer_impl >= 0 ? (int32_t)j->optimizer_impl
                      : tune                 ? GPUFIT_OPTIMIZER_IMPL_FUSED
                                             : GPUFIT_OPTIMIZER_IMPL_FOREACH;
    /* the model's outputs held through backward (docs/memory/pytorch-transients.md, "Logits
     * held by the loop"): transformers trainer.py Trainer.compute_loss returns the loss alone,
     * so its outputs (the logits) are freed before backward, and torchtune's recipes `del
     * logits` before backward; a loop of one's own (`outputs = model(**batch);
     * outputs.loss.backward()`, the PEFT and accelerate examples) keeps them to the step's end.
     * trainer=loop holds them in the model's output dtype (transformers >= 4.45), trainer=auto
     * does not say which loop runs (none held); both bands reach up to fp32 logits
     * (transformers 4.36-4.44 upcast them inside the model's forward, e.g.
     * models/llama/modeling_llama.py LlamaForCausalLM.forward `logits = logits.float()`) */
    p->held_logits = !p->training || fw != GPUFIT_FW_PYTORCH ? GPUFIT__HELD_NONE
                     : j->trainer < 0                        ? GPUFIT__HELD_MAYBE
                     : j->trainer == GPUFIT_TRAINER_LOOP     ? GPUFIT__HELD_YES
                                                             : GPUFIT__HELD_NONE;
    /* lora_modules (a module list) overrides the lora_targets set when given */
    p->lora_mask = j->lora_modules > 0 ? (int32_t)j->lora_modules
                                       : gpufit__lora_targets_mask(j->lora_targets);
    p->lora_rank = (uint64_t)j->lora_rank;
    p->dropout = p->training ? j->dropout : 0.0;
    p->lora_dropout = p->training && p->lora ? j->lora_dropout : 0.0;
    int32_t st = plan_sizes(j, p, err);
    if (st != GPUFIT_OK)
        return st;
    p->layout_auto = gpufit__job_layout(j, &p->dp, &p->tp, &p->pp);
    p->vpp = (uint64_t)j->vpp;
    p->cp = (uint64_t)j->cp;
    p->ep = (uint64_t)j->ep;
    /* experts' own tensor parallelism: Megatron-Core defaults expert_tensor_parallel_size to
     * tp (training/arguments.py validate_args; parallel_state.initialize_model_parallel);
     * vLLM/SGLang expert parallelism keeps whole experts per rank (evaluate.c checks etp) */
    p->etp = j->etp > 0                  ? (uint64_t)j->etp
             : !p->training && p->ep > 1 ? 1
                                         : p->tp;
    p->sp = (uint64_t)j->sp;
    p->zero = (uint64_t)j->zero;
    p->offload = (uint64_t)j->offload;
    p->shard = j->zero_shard_size > 0 ? (uint64_t)j->zero_shard_size : p->dp;
    p->accum = accum_of(j, p);
    st = deepspeed_policy(j, p, err);
    if (st == GPUFIT_OK) /* keys that do not apply to this task or framework (params.c) */
        st = gpufit__check_applies(GPUFIT_DOMAIN_JOB, j,
                                   (!p->training && !server ? GPUFIT__AP_OFFLOAD : 0u) |
                                       (p->training && fw == GPUFIT_FW_PYTORCH
                                            ? GPUFIT__AP_PT_TRAIN
                                            : 0u) |
                                       (fw != GPUFIT_FW_LLAMACPP ? GPUFIT__AP_TORCH : 0u),
                                   err);
    if (st != GPUFIT_OK)
        return st;
    p->n_gpu_layers = j->n_gpu_layers;
    p->expandable = j->expandable_segments != 0;
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
    if (j->device_memory_gib.n > 0 && j->gpu < 0 && j->gpu_memory_bytes <= 0) {
        /* capacities per stage without a job GPU: the job's is the smallest (they override
         * device_gpus' catalogue memory stage by stage) */
        p->capacity = 0;
        for (uint32_t k = 0; k < j->device_memory_gib.n; k++) {
            uint64_t b = gpufit__gib_bytes(j->device_memory_gib.v[k]);
            if (p->capacity == 0 || b < p->capacity)
                p->capacity = b;
        }
    }
    int hopper = p->gpu != NULL && p->gpu->cc_major >= 9;

    /* Serving-engine release and its KV budget rule (docs/memory/vllm.md, sglang.md) */
    if (j->framework_version > 0 && !server)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_JOB_FRAMEWORK_VERSION, UINT64_MAX,
                            "framework_version applies to vllm and sglang only (framework is "
                            "%s)",
                            gpufit_param_value_name(GPUFIT_JOB_FRAMEWORK, j->framework));
    p->fw_version_assumed = server && j->framework_version <= 0;
    p->fw_version = j->framework_version > 0       ? j->framework_version
                    : fw == GPUFIT_FW_VLLM   ? GPUFIT__VLLM_CURRENT
                    : fw == GPUFIT_FW_SGLANG ? GPUFIT__SGLANG_CURRENT
                                             : 0;
    /* vLLM <= 0.6.3 (vllm/worker/worker.py determine_num_available_blocks) subtracts all
     * non-torch memory on the device, CUDA context included; 0.6.4+ (vllm/utils.py
     * memory_profiling) only what grew after its baseline snapshot, taken with the context
     * already up. */
    p->kv_rule = fw == GPUFIT_FW_SGLANG                              ? GPUFIT__KV_SGLANG
                 : fw != GPUFIT_FW_VLLM                              ? GPUFIT__KV_NONE
                 : p->fw_version < GPUFIT__VER(0, 6, 4) ? GPUFIT__KV_VLLM_ALL
                                                                     : GPUFIT__KV_VLLM_PROF;
    /* The profile's sampler warm-up, bytes per logit: up to 0.16 the PyTorch top-k/top-p path
     * sorts (38 B, 40 with fp32 logits: mem_inference.c); from 0.17 top-k/top-p run in place
     * on the fp32 logits in a Triton kernel from 8 rows on (vllm/v1/sample/ops/
     * topk_topp_triton.py apply_top_k_top_p_triton, PR #33538), and Model Runner V2's warm-up
     * skips them (vllm/v1/worker/gpu/model_runner.py _dummy_sampler_run): the logits and their
     * fp32 copy only. */
    p->sampler_b = fw != GPUFIT_FW_VLLM ? 0
                   : p->fw_version >= GPUFIT__VER(0, 17, 0) ? p->a_b + 4
                   : p->a_b >= 4                            ? 40
                                                            : 38;

    /* CUDA context: lazy module loading from CUDA 11.7 under PyTorch (which sets
     * CUDA_MODULE_LOADING=LAZY since 1.13), from 12.2 elsewhere (the CUDA default); memory-model
     * §8.1, docs/memory/runtime.md */
    int64_t cuda = j->cuda_version > 0 ? j->cuda_version : GPUFIT__CUDA_CURRENT;
    int lazy = cuda >= (fw == GPUFIT_FW_LLAMACPP ? GPUFIT__VER(12, 2, 0) : GPUFIT__VER(11, 7, 0));

    /* the band (docs/band.md): each stack constant at its documented low and high; a value
     * the user gives is their stack's own, with no band */
    const gpufit__stack_const *ctx_c = !lazy                       ? &gpufit__stack[GPUFIT__STACK_CTX_EAGER]
                                       : fw == GPUFIT_FW_LLAMACPP ? &gpufit__stack[GPUFIT__STACK_CTX_GGML]
                                                                  : &gpufit__stack[GPUFIT__STACK_CTX_LAZY];
    gpufit__stack_const ctx_p; /* a calibration profile's value wins over the table's */
    /* fp8 tensor cores (Ada sm_89, Hopper sm_90, Blackwell) need CUDA >= 11.8: lazy */
    int new_arch = p->gpu != NULL && p->gpu->cc_major > 0 && p->gpu->supports_fp8;
    if (j->cuda_version <= 0 && !new_arch &&
        (fw == GPUFIT_FW_PYTORCH || fw == GPUFIT_FW_DEEPSPEED || fw == GPUFIT_FW_MEGATRON)) {
        /* CUDA release not given: the point is today's lazy loading, but these stacks still
         * run on CUDA < 11.7 (eager) on GPUs older than Ada, so the band spans both
         * (docs/memory/runtime.md). vLLM and SGLang need CUDA >= 11.8, lazy under their
         * PyTorch; llama.cpp's own kernels have no eager figure. */
        ctx_p = (gpufit__stack_const){ctx_c->point, ctx_c->low,
                                      gpufit__stack[GPUFIT__STACK_CTX_EAGER].high};
        ctx_c = &ctx_p;
    }
    if (j->profile.set & (1u << GPUFIT__PROF_CTX)) {
        ctx_p = profiled(&j->profile, GPUFIT__PROF_CTX, ctx_c);
        ctx_c = &ctx_p;
    }
    p->ctx_bytes = j->cuda_context_bytes >= 0 ? (uint64_t)j->cuda_context_bytes : ctx_c->point;
    p->band.ctx[0] = j->cuda_context_bytes >= 0 ? p->ctx_bytes : ctx_c->low;
    p->band.ctx[1] = j->cuda_context_bytes >= 0 ? p->ctx_bytes : ctx_c->high;
    /* cuBLAS workspaces: memory-model.md §8.2 (8,519,680 B per handle-stream, 32 MiB on
     * compute capability >= 9; forward and backward streams when training). vLLM's profiler
     * reports such non-torch allocations as ~0.35 GiB on one GPU (validation README). */
    uint64_t per_handle = gpufit__stack[hopper ? GPUFIT__STACK_CUBLAS_WS_SM90
                                               : GPUFIT__STACK_CUBLAS_WS].point;
    /* SGLang captures CUDA graphs out of its (1 - mem_fraction_static) reserve, sized by its
     * own estimate (gpufit__sglang_fraction; a model with MLA or a vision encoder is
     * re-resolved by evaluation: gpufit__sglang_model) */
    uint64_t graph_mib = 0;
    double sg_frac = fw == GPUFIT_FW_SGLANG ? gpufit__sglang_fraction(p, NULL, &graph_mib) : 0.0;
    const gpufit__stack_const *nt = &gpufit__stack[GPUFIT__STACK_SERVER_NONTORCH];
    gpufit__stack_const nt_p;
    if (j->profile.set & (1u << GPUFIT__PROF_NONTORCH)) {
        nt_p = profiled(&j->profile, GPUFIT__PROF_NONTORCH, nt);
        nt = &nt_p;
    }
    p->ws_bytes = j->workspace_bytes >= 0 ? (uint64_t)j->workspace_bytes
                  : fw == GPUFIT_FW_SGLANG ? nt->point + graph_mib * MIB
                  : server ? nt->point
                  : fw == GPUFIT_FW_LLAMACPP ? 0
                  : fw == GPUFIT_FW_MEGATRON ? 3 * per_handle
                                             : (p->training ? 2 : 1) * per_handle;
    p->band.ws[0] = p->band.ws[1] = p->ws_bytes; /* cuBLAS workspaces: exact */
    if (j->workspace_bytes < 0 && p->training && !server && fw != GPUFIT_FW_LLAMACPP &&
        fw != GPUFIT_FW_MEGATRON) {
        /* the backward's handle-stream (torch/csrc/autograd/engine.cpp runs backward on a
         * device thread, and aten/src/ATen/cuda/CublasHandlePool.cpp keeps a workspace per
         * handle and stream) is counted from PyTorch 2.0, except 2.2-2.3 builds with CUDA >=
         * 12.2 (pytorch PR #113994, undone by PR #124250): one workspace at the low end */
        p->band.ws[0] = p->ws_bytes - per_handle;
    }
    if (j->workspace_bytes < 0 && server) {
        p->band.ws[0] = p->ws_bytes - nt->point + nt->low;
        p->band.ws[1] = p->ws_bytes - nt->point + nt->high;
    }
    /* NCCL: ~0.6 GiB per communicator the layout creates (memory-model.md §8.4) */
    uint64_t comms = (p->dp > 1) + (p->tp > 1) + (p->pp > 1) + (p->cp > 1) + (p->ep > 1);
    if (fw == GPUFIT_FW_DEEPSPEED && p->training) {
        /* Megatron-DeepSpeed: one communicator per process group used (NCCL creates them
         * lazily, at a group's first collective; docs/memory/deepspeed.md): Megatron's tp
         * group (layers) and the model-parallel group of the grad-norm all-reduce (mpu, or
         * the pipe grid's ds_model_proc_group: tp x pp ranks); with pp > 1 DeepSpeed's grid
         * (pipe/topology.py) adds its tp slice group (pipe_partitioned activations) and the
         * pipe group (loss broadcast), per-neighbour send/recv in eval_role; the dp group
         * reduces gradients. */
        comms = (p->dp > 1) + (p->tp > 1) + (p->tp * p->pp > 1) + (p->cp > 1) + (p->ep > 1);
        if (p->pp > 1)
            comms += (p->tp > 1) + 1;
    }
    /* vLLM/SGLang TP groups hold two: the engine's own PyNccl communicator and torch's
     * device group, created by the logits all-gather (vllm distributed/parallel_state.py) */
    if (server && p->tp > 1)
        comms++;
    if (fw == GPUFIT_FW_LLAMACPP) /* ggml copies activations between devices itself */
        comms = 0;
    const gpufit__stack_const *nc = &gpufit__stack[GPUFIT__STACK_NCCL_COMM];
    gpufit__stack_const nc_p;
    if (j->profile.set & (1u << GPUFIT__PROF_NCCL)) {
        nc_p = profiled(&j->profile, GPUFIT__PROF_NCCL, nc);
        nc = &nc_p;
    }
    p->comm_bytes = comms * nc->point;
    p->band.nccl[0] = nc->low;
    p->band.nccl[1] = nc->high;
    p->band.comm[0] = comms * nc->low;
    p->band.comm[1] = comms * nc->high;
    if (comms > 0 && !(j->profile.set & (1u << GPUFIT__PROF_NCCL))) {
        /* a calibrated profile's NCCL bytes already hold what NVLS adds on that stack */
        p->band.comm[1] += nvls_high(p, server && p->tp > 1);
    }
    /* caching-allocator slack as a fraction of the dynamically allocated bytes (activations,
     * logits, growing KV cache): memory-model.md §8.3 puts reserved - allocated at 0-20 % of
     * all allocated bytes in steady training, i.e. more of the part that is freed and
     * re-allocated; a server's KV pool and ggml's static buffers keep none. Point 0.25, range
     * 0.10-0.35 (docs/memory/allocator.md: no source measures it for checkpointed pipelines) */
    int prof_slack = (j->profile.set & (1u << GPUFIT__PROF_SLACK)) != 0;
    p->frag = j->fragmentation >= 0.0 ? j->fragmentation
              : server || fw == GPUFIT_FW_LLAMACPP ? 0.0
              : prof_slack                         ? j->profile.slack[0]
                                                   : GPUFIT__FRAG_POINT;
    int fixed = j->fragmentation >= 0.0 || server || fw == GPUFIT_FW_LLAMACPP;
    p->band.frag[0] = fixed ? p->frag : prof_slack ? j->profile.slack[1] : GPUFIT__FRAG_LOW;
    p->band.frag[1] = fixed ? p->frag : prof_slack ? j->profile.slack[2] : GPUFIT__FRAG_HIGH;
    if (!fixed && prof_slack && j->profile.runs[GPUFIT__PROF_SLACK] < GPUFIT__PROF_NARROW_RUNS) {
        /* too few runs to narrow (profiled() above) */
        p->band.frag[0] = p->band.frag[0] < GPUFIT__FRAG_LOW ? p->band.frag[0] : GPUFIT__FRAG_LOW;
        p->band.frag[1] = p->band.frag[1] > GPUFIT__FRAG_HIGH ? p->band.frag[1] : GPUFIT__FRAG_HIGH;
    }
    /* vLLM defaults: 1024 sequences on GPUs of 70 GiB or more, else 256 (V1 engine arg_utils,
     * from 0.8); V0 (before 0.8) 256 everywhere (EngineArgs.max_num_seqs) */
    p->max_num_seqs = j->max_num_seqs > 0 ? (uint64_t)j->max_num_seqs
                      : p->capacity >= ((uint64_t)70 << 30) &&
                              !(fw == GPUFIT_FW_VLLM && p->fw_version < GPUFIT__VER(0, 8, 0))
                          ? 1024
                          : 256;
    /* images per prompt: -1 leaves vLLM's default (999 per modality in V1, 1 in V0:
     * vllm/config/multimodal.py get_limit_per_prompt); the V0 profile rule is selected by the
     * engine release (framework_version < 0.8.0, when V1 became the default) */
    p->mm_items = (int32_t)j->mm_items_per_prompt;
    p->mm_v0 = fw == GPUFIT_FW_VLLM && p->fw_version < GPUFIT__VER(0, 8, 0);
    /* gpu_memory_utilization (vLLM, default 0.9; 0.92 from 0.21, PR #38284, which also charges
     * the CUDA graphs to the budget: vllm/config/cache.py CacheConfig) or mem_fraction_static
     * (SGLang) */
    p->util = j->gpu_memory_utilization > 0.0 ? j->gpu_memory_utilization
              : fw == GPUFIT_FW_SGLANG        ? sg_frac
              : fw == GPUFIT_FW_VLLM && p->fw_version >= GPUFIT__VER(0, 21, 0) ? 0.92
              : server                                                         ? 0.9
                                                                               : 0.0;
    /* its default follows the release: an assumed one leaves the budget between 0.27's 0.92
     * and the 0.9 of releases before 0.21 (docs/band.md) */
    p->band.util[0] = p->band.util[1] = p->util;
    if (fw == GPUFIT_FW_VLLM && p->fw_version_assumed && !(j->gpu_memory_utilization > 0.0))
        p->band.util[1] = 0.9;
    if (fw == GPUFIT_FW_SGLANG)
        sglang_band(j, NULL, p);
    vllm_graphs(j, p);
    return GPUFIT_OK;
}

int64_t gpufit__plan_checkpoint(const gpufit__shape *s, const gpufit__plan *p)
{
    if (!s->quant)
        return p->w_dt;
    int64_t q = s->mod_dt[GPUFIT__M_MLP] >= 0 ? s->mod_dt[GPUFIT__M_MLP] : s->mod_dt[GPUFIT__M_EXP];
    return q > GPUFIT_DTYPE_BF16 ? q : p->w_dt;
}

int32_t gpufit__plan_apply_checkpoint(const struct gpufit_job *j, const gpufit__shape *s,
                                      gpufit__plan *p, gpufit_error *err)
{
    int64_t q = gpufit__plan_checkpoint(s, p);
    if (j->weight_dtype >= 0 || q == p->w_dt)
        return GPUFIT_OK; /* an explicit weight_dtype wins for the modules the model leaves auto */
    if (p->training && !p->lora)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, GPUFIT_MODEL_MLP_DTYPE, UINT64_MAX,
                            "mlp_dtype: a checkpoint stored as %s cannot be trained in full; use "
                            "task=qlora (or lora)", gpufit__dtypes[q].name);
    p->w_dt = q;
    return GPUFIT_OK;
}

void gpufit__job_refresh(struct gpufit_job *j)
{
    j->plan_state = gpufit__plan_resolve(j, NULL, &j->plan, NULL) == GPUFIT_OK;
}

void gpufit__job_resize(struct gpufit_job *j, const gpufit__plan *base)
{
    j->plan = *base;
    j->plan_state = plan_sizes(j, &j->plan, NULL) == GPUFIT_OK;
    if (j->plan_state == 1) {
        j->plan.accum = accum_of(j, &j->plan);
        j->plan.nosync = nosync_of(j, &j->plan);
        vllm_graphs(j, &j->plan); /* its largest capture: up to max_num_batched_tokens */
        if (j->plan.framework == GPUFIT_FW_SGLANG) { /* prefill graphs up to context_len */
            uint64_t before;
            (void)gpufit__sglang_fraction(base, NULL, &before);
            sglang_refit(j, NULL, before, &j->plan);
        }
    }
}
