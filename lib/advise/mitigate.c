/* SPDX-License-Identifier: MIT */
/* Mitigations: candidate changes that make a job fit, each evaluated for real and ranked by
 * what it costs the user (speed, quality, money), not only by the bytes it saves. The costs
 * and their reasons are listed in docs/mitigations.md. Runs only for jobs that do not fit or
 * fit with little headroom; it is not on the evaluation hot path. */
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cand {
    int32_t kind;
    double cost;
    gpufit__changes cs; /* what it changes, every edit kept (keep = 1) */
    char text[128];
} cand;


#define CANDS_MAX 40
#define MITIGATION_EDITS_MAX 8 /* edits of a combined mitigation */

typedef struct ctx {
    const struct gpufit_model *m;
    const struct gpufit_job *j;
    const struct gpufit_result *base;
    cand c[CANDS_MAX];
    uint32_t n;
    int32_t framework; /* the job's, resolved: the flags' words (flags.c) */
} ctx;

static cand *add(ctx *x, int32_t kind, double cost, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static cand *add(ctx *x, int32_t kind, double cost, const char *fmt, ...)
{
    if (x->n >= CANDS_MAX)
        return NULL;
    cand *c = &x->c[x->n++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->cost = cost;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
    return c;
}

static void set_i(cand *c, int32_t param, int64_t v)
{
    if (c != NULL)
        gpufit__cs_int(&c->cs, param, v, 1);
}

static void set_f(cand *c, int32_t param, double v)
{
    if (c != NULL)
        gpufit__cs_float(&c->cs, param, v, 1);
}

/* Evaluates a change set applied to the job (as gpufit_job_apply_mitigation applies it): 1
 * when it could be evaluated. */
static int try_cand(const ctx *x, const gpufit__changes *cs, uint64_t *peak, int32_t *fits)
{
    struct gpufit_job j = *x->j;
    gpufit__result_buf rb;
    struct gpufit_result *r = gpufit__result_init(&rb);
    if (gpufit__cs_apply(cs, &j, NULL) != GPUFIT_OK ||
        gpufit__evaluate_into(r, x->m, &j, NULL) != GPUFIT_OK)
        return 0;
    *peak = r->peak;
    /* a fix is sure to fit when the band's high end fits (docs/band.md) */
    *fits = r->verdict == GPUFIT_VERDICT_FITS ? 1 : r->fits < 0 ? -1 : 0;
    return 1;
}

static int64_t largest_fitting(const ctx *x, int32_t param, int64_t below)
{
    int64_t v = 0;
    if (gpufit__max_fitting(x->m, x->j, param, &v, NULL) != GPUFIT_OK || v >= below)
        return 0;
    return v;
}

static void training_candidates(ctx *x, const gpufit__plan *p, const gpufit__shape *s)
{
    const struct gpufit_job *j = x->j;
    cand *c;
    /* smaller micro-batch, accumulation keeps the global batch (seed guide: batch size): the
     * search steps over the divisors of the samples per data-parallel rank */
    int64_t gbs = j->global_batch > 0 ? j->global_batch : j->micro_batch * j->dp;
    struct gpufit_job kept = *j;
    kept.global_batch = gbs;
    kept.plan_state = 0; /* edited: evaluation resolves it */
    int64_t mb = 0;
    if (gpufit__max_fitting(x->m, &kept, GPUFIT_JOB_MICRO_BATCH, &mb, NULL) != GPUFIT_OK ||
        mb >= j->micro_batch)
        mb = 0;
    if (mb == 0 && j->micro_batch > 1)
        mb = 1; /* not enough alone; still a step of a combination */
    if (mb > 0) {
        double ratio = (double)j->micro_batch / (double)mb;
        c = add(x, 1, 1.0 + 0.5 * log2(ratio),
                "micro-batch %lld -> %lld with %lldx gradient accumulation (global batch %lld "
                "kept)",
                (long long)j->micro_batch, (long long)mb,
                (long long)(gbs / (mb * j->dp) > 0 ? gbs / (mb * j->dp) : 1), (long long)gbs);
        set_i(c, GPUFIT_JOB_MICRO_BATCH, mb);
        set_i(c, GPUFIT_JOB_GLOBAL_BATCH, gbs);
    }
    if (p->attention == GPUFIT_ATTN_EAGER) { /* no s x s scores; usually faster too */
        c = add(x, 3, 0.1, "use flash attention (no s x s score tensors)");
        set_i(c, GPUFIT_JOB_ATTENTION, GPUFIT_ATTN_FLASH);
    }
    if (p->ckpt == GPUFIT_CKPT_NONE && p->attention == GPUFIT_ATTN_EAGER) {
        c = add(x, 2, 0.5, "selective activation checkpointing (recompute attention scores)");
        set_i(c, GPUFIT_JOB_CHECKPOINTING, GPUFIT_CKPT_SELECTIVE);
    }
    if (p->ckpt != GPUFIT_CKPT_FULL) { /* ~1/3 more compute: one extra forward */
        c = add(x, 2, 2.5, "full activation checkpointing (about 30 %% more compute)");
        set_i(c, GPUFIT_JOB_CHECKPOINTING, GPUFIT_CKPT_FULL);
    }
    if (p->c_dt == GPUFIT_DTYPE_FP32 || p->c_dt == GPUFIT_DTYPE_TF32) {
        int bf16 = p->gpu == NULL || p->gpu->supports_bf16;
        c = add(x, 4, 0.3, "mixed precision (%s autocast)", bf16 ? "bf16" : "fp16");
        set_i(c, GPUFIT_JOB_PRECISION, bf16 ? GPUFIT_PRECISION_AMP_BF16 : GPUFIT_PRECISION_AMP_FP16);
    }
    if (p->amp) { /* 16-bit weights without an fp32 copy: quality risk (memory-model §2.2) */
        int bf16 = p->gpu == NULL || p->gpu->supports_bf16;
        c = add(x, 4, 1.5, "%s weights and optimizer states (no fp32 copy)", bf16 ? "bf16" : "fp16");
        set_i(c, GPUFIT_JOB_PRECISION, bf16 ? GPUFIT_PRECISION_BF16 : GPUFIT_PRECISION_FP16);
    }
    if ((p->optimizer == GPUFIT_OPT_ADAMW || p->optimizer == GPUFIT_OPT_ADAM) &&
        (p->o_dt == GPUFIT_DTYPE_FP32 || p->o_dt == GPUFIT_DTYPE_NONE)) {
        c = add(x, 5, 1.0, "8-bit AdamW (bitsandbytes): 2 bytes of state per parameter");
        set_i(c, GPUFIT_JOB_OPTIMIZER, GPUFIT_OPT_ADAMW_8BIT);
    }
    if (p->dp > 1 && p->zero < 3) {
        c = add(x, 6, 1.0 + 0.5 * (double)p->zero, "ZeRO stage %llu -> %llu (shard %s over %llu GPUs)",
                (unsigned long long)p->zero, (unsigned long long)p->zero + 1,
                p->zero == 0 ? "optimizer states" : p->zero == 1 ? "gradients" : "parameters",
                (unsigned long long)p->dp);
        set_i(c, GPUFIT_JOB_ZERO, (int64_t)p->zero + 1);
    }
    if (p->dp % 2 == 0 && s->nq % (p->tp * 2) == 0 && s->f % (p->tp * 2) == 0 && p->tp < 8) {
        c = add(x, 7, 2.0, "tensor parallelism %llu -> %llu (data parallelism %llu -> %llu)",
                (unsigned long long)p->tp, (unsigned long long)p->tp * 2,
                (unsigned long long)p->dp, (unsigned long long)p->dp / 2);
        set_i(c, GPUFIT_JOB_TP, (int64_t)p->tp * 2);
        set_i(c, GPUFIT_JOB_DP, (int64_t)p->dp / 2);
        set_i(c, GPUFIT_JOB_GPUS, (int64_t)(p->dp * p->tp * p->pp * p->cp)); /* same count */
    }
    if (p->dp % 2 == 0 && p->pp * 2 <= s->n_layers) {
        c = add(x, 8, 2.0, "pipeline stages %llu -> %llu (data parallelism %llu -> %llu)",
                (unsigned long long)p->pp, (unsigned long long)p->pp * 2,
                (unsigned long long)p->dp, (unsigned long long)p->dp / 2);
        set_i(c, GPUFIT_JOB_PP, (int64_t)p->pp * 2);
        set_i(c, GPUFIT_JOB_DP, (int64_t)p->dp / 2);
        set_i(c, GPUFIT_JOB_GPUS, (int64_t)(p->dp * p->tp * p->pp * p->cp)); /* same count */
    }
    /* more GPUs: shard the model states with FSDP / ZeRO-3 over the smallest count that fits */
    for (uint64_t n = 2; n <= 64 && p->pp * p->tp * p->cp == 1 && p->dp == 1; n *= 2) {
        /* a set global batch is kept: the micro-batch drops to a divisor of global / n */
        int64_t mbn = j->micro_batch;
        if (j->global_batch > 0) {
            if (j->global_batch % (int64_t)n != 0)
                continue;
            while (mbn > 1 && (j->global_batch / (int64_t)n) % mbn != 0)
                mbn--;
        }
        gpufit__changes cs = {0};
        gpufit__cs_int(&cs, GPUFIT_JOB_DP, (int64_t)n, 1);
        gpufit__cs_int(&cs, GPUFIT_JOB_ZERO, 3, 1);
        gpufit__cs_int(&cs, GPUFIT_JOB_GPUS, (int64_t)n, 1);
        if (mbn != j->micro_batch)
            gpufit__cs_int(&cs, GPUFIT_JOB_MICRO_BATCH, mbn, 1);
        uint64_t peak;
        int32_t fits;
        if (try_cand(x, &cs, &peak, &fits) && (fits == 1 || n == 64)) {
            c = add(x, 17, 5.0 + log2((double)n),
                    "shard over %llu GPUs with FSDP full shard (ZeRO-3)%s", (unsigned long long)n,
                    mbn != j->micro_batch ? ", micro-batch lowered to keep the global batch"
                                          : "");
            if (c != NULL)
                c->cs = cs;
            break;
        }
    }
    if (p->offload == GPUFIT_OFFLOAD_NONE) {
        c = add(x, 9, 4.0, "offload optimizer states to CPU memory (ZeRO-Offload; slower steps)");
        set_i(c, GPUFIT_JOB_OFFLOAD, GPUFIT_OFFLOAD_OPTIMIZER);
    }
    if (p->task == GPUFIT_TASK_FINETUNE) {
        c = add(x, 10, 6.0, "LoRA adapters instead of full fine-tuning (rank %lld)",
                (long long)j->lora_rank);
        set_i(c, GPUFIT_JOB_TASK, GPUFIT_TASK_LORA);
        c = add(x, 10, 7.0, "QLoRA (4-bit NF4 base, rank %lld adapters) instead of full "
                            "fine-tuning",
                (long long)j->lora_rank);
        set_i(c, GPUFIT_JOB_TASK, GPUFIT_TASK_QLORA);
    }
    if (p->task == GPUFIT_TASK_LORA) {
        c = add(x, 10, 3.0, "QLoRA: a 4-bit NF4 base under the adapters");
        set_i(c, GPUFIT_JOB_TASK, GPUFIT_TASK_QLORA);
    }
}

static void inference_candidates(ctx *x, const gpufit__plan *p, const gpufit__shape *s)
{
    const struct gpufit_job *j = x->j;
    int llamacpp = p->framework == GPUFIT_FW_LLAMACPP;
    cand *c;
    if (p->kv_dt == GPUFIT_DTYPE_FP16 || p->kv_dt == GPUFIT_DTYPE_BF16 ||
        p->kv_dt == GPUFIT_DTYPE_FP32) {
        c = add(x, 12, 1.0, "%s KV cache (half the bytes per token)", llamacpp ? "q8_0" : "fp8");
        set_i(c, GPUFIT_JOB_KV_DTYPE, llamacpp ? GPUFIT_DTYPE_Q8_0 : GPUFIT_DTYPE_FP8);
        if (llamacpp && p->attention != GPUFIT_ATTN_FLASH)
            set_i(c, GPUFIT_JOB_ATTENTION, GPUFIT_ATTN_FLASH);
    }
    /* a pre-quantised checkpoint keeps its format: the job's weight_dtype does not re-quantise
     * the modules it stores (docs/memory/quantisation.md, precedence) */
    int ckpt = s->quant && gpufit__plan_checkpoint(s, p) > GPUFIT_DTYPE_BF16;
    if (!ckpt && (p->w_dt == GPUFIT_DTYPE_FP16 || p->w_dt == GPUFIT_DTYPE_BF16 ||
                  p->w_dt == GPUFIT_DTYPE_FP32 || p->w_dt == GPUFIT_DTYPE_F16_GGUF)) {
        int fp8 = p->gpu != NULL && p->gpu->supports_fp8 && !llamacpp;
        c = add(x, 11, 2.0, "%s weights", llamacpp ? "Q8_0" : fp8 ? "fp8" : "int8");
        set_i(c, GPUFIT_JOB_WEIGHT_DTYPE,
              llamacpp ? GPUFIT_DTYPE_Q8_0 : fp8 ? GPUFIT_DTYPE_FP8 : GPUFIT_DTYPE_INT8);
    }
    if (!ckpt && p->w_dt != GPUFIT_DTYPE_Q4_K_M && p->w_dt != GPUFIT_DTYPE_AWQ4 &&
        !(p->w_dt >= GPUFIT_DTYPE_INT4 && p->w_dt <= GPUFIT_DTYPE_NVFP4)) {
        c = add(x, 11, 3.0, "4-bit weights (%s)", llamacpp ? "Q4_K_M" : "AWQ");
        set_i(c, GPUFIT_JOB_WEIGHT_DTYPE, llamacpp ? GPUFIT_DTYPE_Q4_K_M : GPUFIT_DTYPE_AWQ4);
    }
    if (p->attention == GPUFIT_ATTN_EAGER && !llamacpp) {
        c = add(x, 3, 0.1, "use flash attention (no score tensors)");
        set_i(c, GPUFIT_JOB_ATTENTION, GPUFIT_ATTN_FLASH);
    }
    int64_t v = largest_fitting(x, GPUFIT_JOB_BATCH, j->batch);
    if (v > 0) {
        c = add(x, 13, 2.0, "%lld concurrent sequences instead of %lld", (long long)v,
                (long long)j->batch);
        set_i(c, GPUFIT_JOB_BATCH, v);
    }
    v = largest_fitting(x, GPUFIT_JOB_CONTEXT_LEN, j->context_len);
    if (v > 0) {
        c = add(x, 14, 4.0, "context of %lld tokens instead of %lld", (long long)v,
                (long long)j->context_len);
        set_i(c, GPUFIT_JOB_CONTEXT_LEN, v);
    }
    if (llamacpp) {
        v = largest_fitting(x, GPUFIT_JOB_N_GPU_LAYERS,
                            j->n_gpu_layers >= 0 ? j->n_gpu_layers : (int64_t)s->n_layers + 1);
        if (v > 0) {
            c = add(x, 15, 5.0, "offload only %lld of %llu layers to the GPU (the rest run on "
                                "the CPU, much slower)",
                    (long long)v, (unsigned long long)s->n_layers);
            set_i(c, GPUFIT_JOB_N_GPU_LAYERS, v);
        }
    }
    if (p->util > 0.0 && p->util < 0.95) {
        c = add(x, 18, 0.5, "gpu_memory_utilization %.2f -> 0.95", p->util);
        set_f(c, GPUFIT_JOB_GPU_MEMORY_UTILIZATION, 0.95);
    }
    if (s->nq % (p->tp * 2) == 0 && s->f % (p->tp * 2) == 0 && p->tp < 8 && !llamacpp) {
        c = add(x, 17, 6.0, "tensor parallelism over %llu GPUs", (unsigned long long)p->tp * 2);
        set_i(c, GPUFIT_JOB_TP, (int64_t)p->tp * 2);
        set_i(c, GPUFIT_JOB_GPUS, (int64_t)(p->dp * p->tp * 2 * p->pp * p->cp));
    }
}

/* The smallest catalogue GPU with more memory on which the job fits. */
static void larger_gpu(ctx *x, const gpufit__plan *p)
{
    const gpufit__gpu *best = NULL;
    for (size_t i = 0; i < gpufit__gpu_count(); i++) {
        const gpufit__gpu *g = gpufit__gpu_at(i);
        if (g->memory_bytes <= p->capacity || g->cc_major == 0)
            continue; /* NVIDIA parts only: the runtime model is CUDA's */
        if (best != NULL && g->memory_bytes >= best->memory_bytes)
            continue;
        gpufit__changes cs = {0};
        gpufit__cs_int(&cs, GPUFIT_JOB_GPU, g->id, 1);
        uint64_t peak;
        int32_t fits;
        if (try_cand(x, &cs, &peak, &fits) && fits == 1)
            best = g;
    }
    if (best != NULL) {
        cand *c = add(x, 16, 5.0, "a GPU with more memory: %s (%.0f GiB)", best->name,
                      (double)best->memory_bytes / 1073741824.0);
        set_i(c, GPUFIT_JOB_GPU, best->id);
    }
}

/* A change of hardware (another GPU, more GPUs): listed after the software fixes that keep
 * the user's GPU, and only when none of those fits or the job asks (allow_hardware). */
static int is_hardware(int32_t kind)
{
    return kind == GPUFIT_MIT_LARGER_GPU || kind == GPUFIT_MIT_MORE_GPUS;
}

/* A change set that changes the hardware: another GPU, or more GPUs than the job has. */
static int changes_hardware(const gpufit__changes *cs, const struct gpufit_job *j)
{
    for (uint32_t k = 0; k < cs->n; k++) {
        const gpufit__change *c = &cs->ch[k];
        if (c->param == GPUFIT_JOB_GPU || c->param == GPUFIT_JOB_GPU_MEMORY_BYTES ||
            c->param == GPUFIT_JOB_DEVICE_GPUS ||
            (c->param == GPUFIT_JOB_GPUS && c->i > (j->gpus > 0 ? j->gpus : 1)))
            return 1;
    }
    return 0;
}

static int better(const gpufit__mitigation *a, const gpufit__mitigation *b)
{
    if (a->fits_after != b->fits_after)
        return a->fits_after > b->fits_after;
    if (a->hardware != b->hardware)
        return !a->hardware; /* keep the GPU first */
    if (a->cost != b->cost)
        return a->cost < b->cost;
    return a->peak_after < b->peak_after;
}

/* The mitigations ranked so far, best first. */
typedef struct ranking {
    uint32_t n;
    gpufit__mitigation best[GPUFIT__MITIGATIONS_MAX];
} ranking;

static void keep(ranking *rk, const gpufit__mitigation *mt)
{
    uint32_t n = rk->n;
    if (n == GPUFIT__MITIGATIONS_MAX) {
        if (!better(mt, &rk->best[n - 1]))
            return;
        n--;
    }
    uint32_t at = n;
    while (at > 0 && better(mt, &rk->best[at - 1])) {
        rk->best[at] = rk->best[at - 1];
        at--;
    }
    rk->best[at] = *mt;
    rk->n = n + 1;
}

/* Writes the spec and JSON of a ranked mitigation's change set. */
static void finish(gpufit__mitigation *mt, const struct gpufit_job *j, int32_t framework)
{
    gpufit__cs_spec(&mt->cs, mt->spec, sizeof mt->spec);
    gpufit__cs_json(&mt->cs, mt->json, sizeof mt->json);
    gpufit__cs_flags(&mt->cs, j, framework, mt->flags, sizeof mt->flags);
}

static void drop_hardware(ranking *rk);
static int chain_changes(ranking *rk, const ctx *x, const struct gpufit_result *r, int hw);

/* Ranks the candidates for the job that gave r. */
static void rank(ranking *rk, const struct gpufit_result *r, const struct gpufit_model *m,
                 const struct gpufit_job *j)
{
    gpufit__shape s;
    gpufit__plan p;
    if (r->capacity == 0 || gpufit__model_resolve(m, &s, NULL) != GPUFIT_OK ||
        gpufit__plan_resolve(j, &s, &p, NULL) != GPUFIT_OK ||
        gpufit__plan_apply_checkpoint(j, &s, &p, NULL) != GPUFIT_OK)
        return;
    ctx local; /* the working set lives on the caller's stack: no shared state */
    memset(&local, 0, sizeof local);
    local.m = m;
    local.framework = p.framework;
    local.j = j;
    local.base = r;
    if (p.training)
        training_candidates(&local, &p, &s);
    else
        inference_candidates(&local, &p, &s);
    larger_gpu(&local, &p);

    /* evaluate every single change */
    uint32_t any_fit = 0, soft_fit = 0;
    for (uint32_t i = 0; i < local.n; i++) {
        gpufit__mitigation mt;
        memset(&mt, 0, sizeof mt);
        if (local.c[i].cs.n == 0 ||
            !try_cand(&local, &local.c[i].cs, &mt.peak_after, &mt.fits_after))
            continue;
        if (mt.peak_after >= r->peak && mt.fits_after != 1)
            continue; /* saves nothing */
        mt.kind = local.c[i].kind;
        mt.cost = local.c[i].cost;
        mt.cs = local.c[i].cs;
        mt.hardware = is_hardware(mt.kind) || changes_hardware(&mt.cs, j);
        memcpy(mt.text, local.c[i].text, sizeof local.c[i].text);
        finish(&mt, local.j, local.framework);
        any_fit |= mt.fits_after == 1;
        soft_fit |= mt.fits_after == 1 && !mt.hardware;
        keep(rk, &mt);
    }
    if (!soft_fit)
        soft_fit = chain_changes(rk, &local, r, 0);
    if (!soft_fit && !any_fit) /* software cannot: a chain that may change the hardware too */
        chain_changes(rk, &local, r, 1);
    if (soft_fit && !j->allow_hardware)
        drop_hardware(rk); /* software keeps the GPU: no other hardware unless asked */
}

/* Drops the hardware changes from a ranking. */
static void drop_hardware(ranking *rk)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < rk->n; i++)
        if (!rk->best[i].hardware)
            rk->best[n++] = rk->best[i];
    rk->n = n;
}

/* No single change is enough: chain changes greedily (with hw = 0 the hardware ones are left
 * out: the chain keeps the user's GPU), each step taking the candidate with the most
 * bytes saved per unit of cost on top of the chain so far, until the job fits; then prune
 * every step it fits without. Steps edit distinct parameters, so that their union is their
 * sum. Returns 1 when the chain fits (it is ranked). */
static int chain_changes(ranking *rk, const ctx *x, const struct gpufit_result *r, int hw)
{
    ctx local = *x;
    gpufit__changes chain = {0};
    uint64_t peak_now = r->peak;
    uint32_t used[CANDS_MAX] = {0};
    int order[6];
    int n_steps = 0;
    for (int step = 0; step < 6; step++) {
        int best = -1;
        double best_score = 0.0;
        uint64_t best_peak = 0;
        int32_t best_fits = 0;
        for (uint32_t i = 0; i < local.n; i++) {
            const gpufit__changes *ci = &local.c[i].cs;
            if (used[i] || ci->n == 0 || chain.n + ci->n > MITIGATION_EDITS_MAX ||
                (!hw && (is_hardware(local.c[i].kind) || changes_hardware(ci, local.j))))
                continue;
            int clash = 0;
            for (uint32_t k = 0; k < ci->n; k++)
                clash |= gpufit__cs_has(&chain, ci->ch[k].param);
            if (clash)
                continue;
            gpufit__changes all = chain;
            gpufit__cs_merge(&all, ci);
            uint64_t pk;
            int32_t ft;
            if (!try_cand(&local, &all, &pk, &ft) || pk >= peak_now)
                continue;
            double score = (double)(peak_now - pk) / (0.5 + local.c[i].cost);
            if (ft == 1)
                score *= 1e6; /* finishing the chain beats any partial saving */
            if (best < 0 || score > best_score) {
                best = (int)i;
                best_score = score;
                best_peak = pk;
                best_fits = ft;
            }
        }
        if (best < 0)
            return 0;
        used[best] = 1;
        order[n_steps++] = best;
        gpufit__cs_merge(&chain, &local.c[best].cs);
        peak_now = best_peak;
        if (best_fits == 1)
            break;
    }
    if (n_steps == 0)
        return 0;
    /* Prune: drop every step the chain still fits without (each step tried once, in the order
     * taken). */
    int keep_step[6] = {1, 1, 1, 1, 1, 1};
    for (int t = 0; t < n_steps; t++) {
        gpufit__changes all = {0};
        keep_step[t] = 0;
        for (int q = 0; q < n_steps; q++)
            if (keep_step[q])
                gpufit__cs_merge(&all, &local.c[order[q]].cs);
        uint64_t pk;
        int32_t ft;
        if (!(all.n > 0 && try_cand(&local, &all, &pk, &ft) && ft == 1))
            keep_step[t] = 1;
    }
    gpufit__mitigation mt;
    memset(&mt, 0, sizeof mt);
    for (int q = 0; q < n_steps; q++) {
        if (!keep_step[q])
            continue;
        const cand *c = &local.c[order[q]];
        gpufit__cs_merge(&mt.cs, &c->cs);
        mt.cost += c->cost;
        size_t len = strlen(mt.text);
        snprintf(mt.text + len, sizeof mt.text - len, "%s%s", len ? "; " : "", c->text);
    }
    if (!try_cand(&local, &mt.cs, &mt.peak_after, &mt.fits_after) || mt.fits_after != 1)
        return 0;
    mt.kind = GPUFIT_MIT_COMBINED;
    mt.hardware = changes_hardware(&mt.cs, local.j);
    finish(&mt, local.j, local.framework);
    keep(rk, &mt);
    return 1;
}

int32_t gpufit__mitigate(struct gpufit_result *r, const struct gpufit_model *m,
                         const struct gpufit_job *j)
{
    ranking rk; /* on the stack; only what is kept is copied out */
    rk.n = 0;
    rank(&rk, r, m, j);
    uint32_t n = j->mitigations < (int64_t)rk.n ? (uint32_t)j->mitigations : rk.n;
    r->n_mitigations = 0;
    r->mitigations = NULL;
    if (n == 0)
        return GPUFIT_OK;
    r->mitigations = malloc(n * sizeof rk.best[0]); /* n <= GPUFIT__MITIGATIONS_MAX */
    if (r->mitigations == NULL)
        return GPUFIT_E_NOMEM;
    memcpy(r->mitigations, rk.best, n * sizeof rk.best[0]);
    r->n_mitigations = n;
    return GPUFIT_OK;
}
