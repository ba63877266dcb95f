/* SPDX-License-Identifier: MIT */
/* What every auto of a job resolved to (issue 15): the precision policy, the dtypes, the
 * attention implementation, the layout chosen from gpus=N and the framework defaults the
 * estimate used. Captured from the plan on every evaluation (a few stores), written only
 * when read: the report's "resolved" object and its text line (docs/report.md). */
#include "eval.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gpufit__resolved_set(gpufit__resolved *out, const struct gpufit_job *j, const gpufit__plan *p)
{
    /* the policy the plan used: auto is amp_bf16 for training, bf16 for inference (policy.c);
     * LoRA's auto is its own policy (a bf16 base, amp off): reported as bf16 */
    int64_t prec = j->precision >= 0                                   ? j->precision
                   : !p->training                                      ? GPUFIT_PRECISION_BF16
                   : p->lora && !p->amp && j->task == GPUFIT_TASK_LORA ? GPUFIT_PRECISION_BF16
                   : p->trainer == GPUFIT_TRAINER_TORCHTUNE            ? GPUFIT_PRECISION_BF16
                                                                       : GPUFIT_PRECISION_AMP_BF16;
    out->precision = (int16_t)prec;
    out->framework = (int16_t)p->framework;
    out->attention = (int16_t)p->attention;
    out->layout = (int16_t)p->layout_auto;
    out->w_dt = (int16_t)p->w_dt;
    out->c_dt = (int16_t)p->c_dt;
    out->g_dt = (int16_t)p->g_dt;
    out->m_dt = (int16_t)p->m_dt;
    out->o_dt = (int16_t)p->o_dt;
    out->kv_dt = (int16_t)p->kv_dt;
    out->training = (int16_t)p->training;
    out->ds = p->ds_opt != GPUFIT__DS_NONE;
    out->overlap = (int16_t)p->overlap;
    out->server = p->framework == GPUFIT_FW_VLLM || p->framework == GPUFIT_FW_SGLANG;
    out->trainer = (int16_t)p->trainer;
    out->opt_impl = (int16_t)p->opt_impl;
    out->reserved16[0] = out->reserved16[1] = 0;
    out->dp = (uint32_t)p->dp;
    out->tp = (uint32_t)p->tp;
    out->pp = (uint32_t)p->pp;
    out->cp = (uint32_t)p->cp;
    out->bucket = p->bucket;
    out->prompt = p->prompt;
    out->max_num_seqs = p->max_num_seqs;
    out->util = p->util;
    out->fw_version = p->fw_version;
}

typedef struct rw {
    gpufit__text t; /* bounded output (util.c) */
    int json, n;
} rw;

/* key = value, where value is already text; quoted in JSON when it is a string */
static void item(rw *w, const char *key, const char *val, int quote)
{
    if (w->json)
        gpufit__text_put(&w->t, "%s\"%s\": %s%s%s", w->n ? ", " : "", key, quote ? "\"" : "", val,
                         quote ? "\"" : "");
    else
        gpufit__text_put(&w->t, "%s%s=%s", w->n ? " " : "", key, val);
    w->n++;
}

static void name(rw *w, const char *key, int32_t param, int64_t v)
{
    const char *t = gpufit_param_value_name(param, v);
    item(w, key, t != NULL ? t : "none", 1);
}

static void num(rw *w, const char *key, unsigned long long v)
{
    char t[24];
    snprintf(t, sizeof t, "%llu", v);
    item(w, key, t, 0);
}

size_t gpufit__resolved_write(const gpufit__resolved *res, int json, char *buf, size_t cap)
{
    rw w = {{buf, cap, 0}, json, 0};
    if (cap > 0)
        buf[0] = '\0';
    if (json)
        gpufit__text_put(&w.t, "{");
    name(&w, "framework", GPUFIT_JOB_FRAMEWORK, res->framework);
    name(&w, "precision", GPUFIT_JOB_PRECISION, res->precision);
    name(&w, "weight_dtype", GPUFIT_JOB_WEIGHT_DTYPE, res->w_dt);
    name(&w, "compute_dtype", GPUFIT_JOB_COMPUTE_DTYPE, res->c_dt);
    if (res->training) {
        name(&w, "grad_dtype", GPUFIT_JOB_GRAD_DTYPE, res->g_dt);
        name(&w, "master_weights", GPUFIT_JOB_MASTER_WEIGHTS, res->m_dt);
        name(&w, "optimizer_dtype", GPUFIT_JOB_OPTIMIZER_DTYPE, res->o_dt);
    } else {
        name(&w, "kv_dtype", GPUFIT_JOB_KV_DTYPE, res->kv_dt);
    }
    name(&w, "attention", GPUFIT_JOB_ATTENTION, res->attention);
    if (res->training && res->framework == GPUFIT_FW_PYTORCH)
        name(&w, "trainer", GPUFIT_JOB_TRAINER, res->trainer);
    if (res->opt_impl >= 0) /* the torch.optim step (docs/memory/optimizer-step.md) */
        name(&w, "optimizer_impl", GPUFIT_JOB_OPTIMIZER_IMPL, res->opt_impl);
    num(&w, "dp", res->dp);
    num(&w, "tp", res->tp);
    num(&w, "pp", res->pp);
    num(&w, "cp", res->cp);
    static const char *const layouts[] = {"given", "gpus_dp", "gpus_tp", "gpus_layers"};
    item(&w, "layout", layouts[res->layout >= 0 && res->layout <= 3 ? res->layout : 0], 1);
    if (res->ds) { /* DeepSpeed's ZeRO defaults (policy.c deepspeed_policy) */
        item(&w, "overlap_comm", res->overlap ? "true" : "false", 0);
        num(&w, "reduce_bucket_size", (unsigned long long)res->bucket);
    }
    if (!res->training)
        num(&w, "prompt_len", (unsigned long long)res->prompt); /* tokens per forward pass */
    if (res->server) {
        char t[32];
        snprintf(t, sizeof t, "%.3f", res->util);
        item(&w, "gpu_memory_utilization", t, 0);
        num(&w, "max_num_seqs", (unsigned long long)res->max_num_seqs);
        snprintf(t, sizeof t, "%lld.%lld.%lld", (long long)(res->fw_version / 1000000),
                 (long long)(res->fw_version / 1000 % 1000), (long long)(res->fw_version % 1000));
        item(&w, "framework_version", t, 1);
    }
    if (json)
        gpufit__text_put(&w.t, "}");
    return w.t.len;
}

int32_t gpufit_result_resolved(const gpufit_result *r, char *buf, size_t cap, size_t *len_out)
{
    if (r == NULL || (buf == NULL && cap > 0))
        return GPUFIT_E_INVALID_ARG;
    size_t need = gpufit__resolved_write(&r->resolved, 0, buf, cap);
    if (len_out != NULL)
        *len_out = need;
    return need < cap ? GPUFIT_OK : GPUFIT_E_BUFFER_TOO_SMALL;
}
