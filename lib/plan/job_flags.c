/* SPDX-License-Identifier: MIT */
/* The job's own flags (issue 15): the settings of the job that its framework takes as
 * command-line flags or config keys, with the values the estimate used (the report's
 * "resolved"), in the framework's words (flags.c, docs/flags.md). gpufit_evaluate keeps the
 * few job keys they need (gpufit__flags_keep); the text is written only when it is read. */
#include "changes.h"
#include "eval.h"

#include <string.h>

void gpufit__flags_keep(gpufit__flags_in *in, const struct gpufit_job *j)
{
    in->context_len = j->context_len;
    in->batch = j->batch;
    in->prompt_len = j->prompt_len;
    in->kv_dtype = j->kv_dtype;
    in->max_num_seqs = j->max_num_seqs;
    in->weight_dtype = j->weight_dtype;
    in->n_gpu_layers = j->n_gpu_layers;
    in->vpp = j->vpp;
    in->ep = j->ep;
    in->sp = j->sp;
    in->micro_batch = j->micro_batch;
    in->global_batch = j->global_batch;
    in->zero = j->zero;
    in->checkpointing = j->checkpointing;
    in->task = j->task;
    in->optimizer = j->optimizer;
    in->offload = j->offload;
    in->seq_len = j->seq_len;
    in->lora_rank = j->lora_rank;
    in->lora_dropout = j->lora_dropout;
    in->trainer = j->trainer;
    in->optimizer_impl = j->optimizer_impl;
    in->set = 1;
}

size_t gpufit__job_flags_write(const gpufit__flags_in *fi, const gpufit__resolved *res,
                               char *buf, size_t cap)
{
    if (cap > 0)
        buf[0] = '\0';
    if (!fi->set)
        return 0;
    /* the flag writers read a job: one with the kept keys and the resolved layout */
    static const struct gpufit_job zero_job;
    struct gpufit_job jb = zero_job;
    const struct gpufit_job *j = &jb;
    jb.context_len = fi->context_len;
    jb.batch = fi->batch;
    jb.prompt_len = fi->prompt_len;
    jb.kv_dtype = fi->kv_dtype;
    jb.max_num_seqs = fi->max_num_seqs;
    jb.weight_dtype = fi->weight_dtype;
    jb.n_gpu_layers = fi->n_gpu_layers;
    jb.vpp = fi->vpp;
    jb.ep = fi->ep;
    jb.sp = fi->sp;
    jb.micro_batch = fi->micro_batch;
    jb.global_batch = fi->global_batch;
    jb.zero = fi->zero;
    jb.checkpointing = fi->checkpointing;
    jb.task = fi->task;
    jb.optimizer = fi->optimizer;
    jb.offload = fi->offload;
    jb.seq_len = fi->seq_len;
    jb.lora_rank = fi->lora_rank;
    jb.lora_dropout = fi->lora_dropout;
    jb.trainer = fi->trainer;
    jb.optimizer_impl = fi->optimizer_impl;
    jb.framework = res->framework;
    jb.dp = res->dp;
    jb.tp = res->tp;
    jb.pp = res->pp;
    jb.cp = res->cp;
    gpufit__changes cs = {0};
    int fw = res->framework;
#define SET(param, v) gpufit__cs_int(&cs, (param), (int64_t)(v), 1)
    if (fw == GPUFIT_FW_VLLM || fw == GPUFIT_FW_SGLANG) {
        SET(GPUFIT_JOB_CONTEXT_LEN, j->context_len);
        if (res->tp > 1)
            SET(GPUFIT_JOB_TP, res->tp);
        if (res->pp > 1)
            SET(GPUFIT_JOB_PP, res->pp);
        gpufit__cs_float(&cs, GPUFIT_JOB_GPU_MEMORY_UTILIZATION, res->util, 1);
        if (j->kv_dtype >= 0)
            SET(GPUFIT_JOB_KV_DTYPE, j->kv_dtype);
        if (j->max_num_seqs > 0)
            SET(GPUFIT_JOB_MAX_NUM_SEQS, j->max_num_seqs);
        if (j->prompt_len > 0)
            SET(GPUFIT_JOB_PROMPT_LEN, j->prompt_len);
        if (j->weight_dtype >= 0)
            SET(GPUFIT_JOB_WEIGHT_DTYPE, j->weight_dtype);
    } else if (fw == GPUFIT_FW_LLAMACPP) {
        /* -ngl 999: every layer (llama.cpp clamps it to the model's) */
        SET(GPUFIT_JOB_N_GPU_LAYERS, j->n_gpu_layers >= 0 ? j->n_gpu_layers : 999);
        SET(GPUFIT_JOB_CONTEXT_LEN, j->context_len);
        if (j->batch > 1)
            SET(GPUFIT_JOB_BATCH, j->batch);
        if (j->prompt_len > 0)
            SET(GPUFIT_JOB_PROMPT_LEN, j->prompt_len);
        if (j->kv_dtype >= 0)
            SET(GPUFIT_JOB_KV_DTYPE, j->kv_dtype);
        SET(GPUFIT_JOB_ATTENTION, res->attention);
        if (j->weight_dtype >= 0)
            SET(GPUFIT_JOB_WEIGHT_DTYPE, j->weight_dtype);
    } else if (fw == GPUFIT_FW_MEGATRON) {
        SET(GPUFIT_JOB_TP, res->tp);
        SET(GPUFIT_JOB_PP, res->pp);
        if (j->vpp > 1)
            SET(GPUFIT_JOB_VPP, j->vpp);
        if (res->cp > 1)
            SET(GPUFIT_JOB_CP, res->cp);
        if (j->ep > 1)
            SET(GPUFIT_JOB_EP, j->ep);
        if (j->sp > 0)
            SET(GPUFIT_JOB_SP, j->sp);
        SET(GPUFIT_JOB_MICRO_BATCH, j->micro_batch);
        if (j->global_batch > 0)
            SET(GPUFIT_JOB_GLOBAL_BATCH, j->global_batch);
        if (j->zero > 0)
            SET(GPUFIT_JOB_ZERO, j->zero);
        if (j->checkpointing != GPUFIT_CKPT_NONE)
            SET(GPUFIT_JOB_CHECKPOINTING, j->checkpointing);
    } else if (res->training) { /* DeepSpeed's config keys, else Trainer / PEFT arguments */
        if (j->task == GPUFIT_TASK_LORA || j->task == GPUFIT_TASK_QLORA)
            SET(GPUFIT_JOB_TASK, j->task);
        SET(GPUFIT_JOB_MICRO_BATCH, j->micro_batch);
        if (j->global_batch > 0)
            SET(GPUFIT_JOB_GLOBAL_BATCH, j->global_batch);
        if (j->checkpointing != GPUFIT_CKPT_NONE)
            SET(GPUFIT_JOB_CHECKPOINTING, j->checkpointing);
        SET(GPUFIT_JOB_PRECISION, res->precision);
        SET(GPUFIT_JOB_OPTIMIZER, j->optimizer);
        if (j->optimizer_impl >= 0 && res->opt_impl >= 0) /* given: the step it names */
            SET(GPUFIT_JOB_OPTIMIZER_IMPL, j->optimizer_impl);
        SET(GPUFIT_JOB_ATTENTION, res->attention);
        if (j->zero > 0 && (fw == GPUFIT_FW_DEEPSPEED || j->zero >= 2))
            SET(GPUFIT_JOB_ZERO, j->zero);
        if (j->offload != GPUFIT_OFFLOAD_NONE)
            SET(GPUFIT_JOB_OFFLOAD, j->offload);
        SET(GPUFIT_JOB_SEQ_LEN, j->seq_len);
    } else { /* Transformers inference: from_pretrained's attention implementation */
        SET(GPUFIT_JOB_ATTENTION, res->attention);
    }
#undef SET
    return gpufit__cs_flags_only(&cs, j, fw, buf, cap);
}
