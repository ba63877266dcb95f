/* SPDX-License-Identifier: MIT */
/* Mitigations: candidate changes that make a job fit, each evaluated for real and ranked by
 * what it costs the user (speed, quality, money), not only by the bytes it saves. The costs
 * are the table in costs.c, printed in docs/mitigations.md. Runs only for jobs that do not fit or
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
    int64_t dp = (int64_t)p->dp; /* gpus=N alone: the plan's layout (policy.c) */
    int64_t gbs = j->global_batch > 0 ? j->global_batch : j->micro_batch * dp;
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
        c = add(x, 1, gpufit__cost(GPUFIT__COST_MICRO_BATCH, log2(ratio)),
                "micro-batch %lld -> %lld with %lldx gradient accumulation (global batch %lld "
                "kept)",
                (long long)j->micro_batch, (long long)mb,
                (long long)(gbs / (mb * dp) > 0 ? gbs / (mb * dp) : 1), (long long)gbs);
        set_i(c, GPUFIT_JOB_MICRO_BATCH, mb);
        set_i(c, GPUFIT_JOB_GLOBAL_BATCH, gbs);
    }
    if (p->attention == GPUFIT_ATTN_EAGER) { /* no s x s scores; usually faster too */
        c = add(x, 3, gpufit__cost(GPUFIT__COST_FLASH, 0), "use flash attention (no s x s score tensors)");
        set_i(c, GPUFIT_JOB_ATTENTION, GPUFIT_ATTN_FLASH);
    }
    if (p->ckpt == GPUFIT_CKPT_NONE && p->attention == GPUFIT_ATTN_EAGER) {
        c = add(x, 2, gpufit__cost(GPUFIT__COST_SELECTIVE, 0), "selective activation checkpointing (recompute attention scores)");
        set_i(c, GPUFIT_JOB_CHECKPOINTING, GPUFIT_CKPT_SELECTIVE);
    }
    if (p->ckpt != GPUFIT_CKPT_FULL) { /* ~1/3 more compute: one extra forward */
        c = add(x, 2, gpufit__cost(GPUFIT__COST_FULL_CKPT, 0), "full activation checkpointing (about 30 %% more compute)");
        set_i(c, GPUFIT_JOB_CHECKPOINTING, GPUFIT_CKPT_FULL);
    }
    if (p->c_dt == GPUFIT_DTYPE_FP32 || p->c_dt == GPUFIT_DTYPE_TF32) {
        int bf16 = p->gpu == NULL || p->gpu->supports_bf16;
        c = add(x, 4, gpufit__cost(GPUFIT__COST_AMP, 0), "mixed precision (%s autocast)", bf16 ? "bf16" : "fp16");
        set_i(c, GPUFIT_JOB_PRECISION, bf16 ? GPUFIT_PRECISION_AMP_BF16 : GPUFIT_PRECISION_AMP_FP16);
    }
    if (p->amp) { /* 16-bit weights without an fp32 copy: quality risk (memory-model §2.2) */
        int bf16 = p->gpu == NULL || p->gpu->supports_bf16;
        c = add(x, 4, gpufit__cost(GPUFIT__COST_PURE16, 0), "%s weights and optimizer states (no fp32 copy)", bf16 ? "bf16" : "fp16");
        set_i(c, GPUFIT_JOB_PRECISION, bf16 ? GPUFIT_PRECISION_BF16 : GPUFIT_PRECISION_FP16);
    }
    if (p->opt_impl >= 0 && p->opt_impl != GPUFIT_OPTIMIZER_IMPL_FUSED) {
        /* torch.optim's fused step keeps no temporaries (docs/memory/optimizer-step.md) */
        c = add(x, 5, gpufit__cost(GPUFIT__COST_FUSED_STEP, 0),
                "fused AdamW step (no step temporaries; the same update)");
        set_i(c, GPUFIT_JOB_OPTIMIZER_IMPL, GPUFIT_OPTIMIZER_IMPL_FUSED);
    }
    if ((p->optimizer == GPUFIT_OPT_ADAMW || p->optimizer == GPUFIT_OPT_ADAM) &&
        (p->o_dt == GPUFIT_DTYPE_FP32 || p->o_dt == GPUFIT_DTYPE_NONE)) {
        c = add(x, 5, gpufit__cost(GPUFIT__COST_ADAM8, 0), "8-bit AdamW (bitsandbytes): 2 bytes of state per parameter");
        set_i(c, GPUFIT_JOB_OPTIMIZER, GPUFIT_OPT_ADAMW_8BIT);
    }
    if (p->dp > 1 && p->zero < 3) {
        c = add(x, 6, gpufit__cost(GPUFIT__COST_ZERO, (double)p->zero), "ZeRO stage %llu -> %llu (shard %s over %llu GPUs)",
                (unsigned long long)p->zero, (unsigned long long)p->zero + 1,
                p->zero == 0 ? "optimizer states" : p->zero == 1 ? "gradients" : "parameters",
                (unsigned long long)p->dp);
        set_i(c, GPUFIT_JOB_ZERO, (int64_t)p->zero + 1);
    }
    if (p->dp % 2 == 0 && s->nq % (p->tp * 2) == 0 && s->f % (p->tp * 2) == 0 && p->tp < 8) {
        c = add(x, 7, gpufit__cost(GPUFIT__COST_MORE_TP_PP, 0), "tensor parallelism %llu -> %llu (data parallelism %llu -> %llu)",
                (unsigned long long)p->tp, (unsigned long long)p->tp * 2,
                (unsigned long long)p->dp, (unsigned long long)p->dp / 2);
        set_i(c, GPUFIT_JOB_TP, (int64_t)p->tp * 2);
        set_i(c, GPUFIT_JOB_DP, (int64_t)p->dp / 2);
        set_i(c, GPUFIT_JOB_GPUS, (int64_t)(p->dp * p->tp * p->pp * p->cp)); /* same count */
    }
    if (p->dp % 2 == 0 && p->pp * 2 <= s->n_layers) {
        c = add(x, 8, gpufit__cost(GPUFIT__COST_MORE_TP_PP, 0), "pipeline stages %llu -> %llu (data parallelism %llu -> %llu)",
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
            c = add(x, 17, gpufit__cost(GPUFIT__COST_FSDP, log2((double)n)),
                    "shard over %llu GPUs with FSDP full shard (ZeRO-3)%s", (unsigned long long)n,
                    mbn != j->micro_batch ? ", micro-batch lowered to keep the global batch"
                                          : "");
            if (c != NULL)
                c->cs = cs;
            break;
        }
    }
    if (p->offload == GPUFIT_OFFLOAD_NONE) {
        c = add(x, 9, gpufit__cost(GPUFIT__COST_OFFLOAD, 0), "offload optimizer states to CPU memory (ZeRO-Offload; slower steps)");
        set_i(c, GPUFIT_JOB_OFFLOAD, GPUFIT_OFFLOAD_OPTIMIZER);
    }
    if (p->task == GPUFIT_TASK_FINETUNE) {
        c = add(x, 10, gpufit__cost(GPUFIT__COST_LORA, 0), "LoRA adapters instead of full fine-tuning (rank %lld)",
                (long long)j->lora_rank);
        set_i(c, GPUFIT_JOB_TASK, GPUFIT_TASK_LORA);
        c = add(x, 10, gpufit__cost(GPUFIT__COST_QLORA, 0), "QLoRA (4-bit NF4 base, rank %lld adapters) instead of full "
                            "fine-tuning",
                (long long)j->lora_rank);
        set_i(c, GPUFIT_JOB_TASK, GPUFIT_TASK_QLORA);
    }
    if (p->task == GPUFIT_TASK_LORA) {
        c = add(x, 10, gpufit__cost(GPUFIT__COST_QLORA_FROM_LORA, 0), "QLoRA: a 4-bit NF4 base under the adapters");
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
        c = add(x, 12, gpufit__cost(GPUFIT__COST_KV8, 0), "%s KV cache (half the bytes per token)", llamacpp ? "q8_0" : "fp8");
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
        c = add(x, 11, gpufit__cost(GPUFIT__COST_W8, 0), "%s weights", llamacpp ? "Q8_0" : fp8 ? "fp8" : "int8");
        set_i(c, GPUFIT_JOB_WEIGHT_DTYPE,
              llamacpp ? GPUFIT_DTYPE_Q8_0 : fp8 ? GPUFIT_DTYPE_FP8 : GPUFIT_DTYPE_INT8);
    }
    if (!ckpt && p->w_dt != GPUFIT_DTYPE_Q4_K_M && p->w_dt != GPUFIT_DTYPE_AWQ4 &&
        !(p->w_dt >= GPUFIT_DTYPE_INT4 && p->w_dt <= GPUFIT_DTYPE_NVFP4)) {
        c = add(x, 11, gpufit__cost(GPUFIT__COST_W4, 0), "4-bit weights (%s)", llamacpp ? "Q4_K_M" : "AWQ");
        set_i(c, GPUFIT_JOB_WEIGHT_DTYPE, llamacpp ? GPUFIT_DTYPE_Q4_K_M : GPUFIT_DTYPE_AWQ4);
    }
    if (p->attention == GPUFIT_ATTN_EAGER && !llamacpp) {
        c = add(x, 3, gpufit__cost(GPUFIT__COST_FLASH, 0), "use flash attention (no score tensors)");
        set_i(c, GPUFIT_JOB_ATTENTION, GPUFIT_ATTN_FLASH);
    }
    int64_t v = largest_fitting(x, GPUFIT_JOB_BATCH, j->batch);
    if (v > 0) {
        c = add(x, 13, gpufit__cost(GPUFIT__COST_SEQS, 0), "%lld concurrent sequences instead of %lld", (long long)v,
                (long long)j->batch);
        set_i(c, GPUFIT_JOB_BATCH, v);
    }
    v = largest_fitting(x, GPUFIT_JOB_CONTEXT_LEN, j->context_len);
    if (v > 0) {
        c = add(x, 14, gpufit__cost(GPUFIT__COST_CONTEXT, 0), "context of %lld tokens instead of %lld", (long long)v,
                (long long)j->context_len);
        set_i(c, GPUFIT_JOB_CONTEXT_LEN, v);
    }
    if (llamacpp) {
        v = largest_fitting(x, GPUFIT_JOB_N_GPU_LAYERS,
                            j->n_gpu_layers >= 0 ? j->n_gpu_layers : (int64_t)s->n_layers + 1);
        if (v > 0) {
            c = add(x, 15, gpufit__cost(GPUFIT__COST_NGL, 0), "offload only %lld of %llu layers to the GPU (the rest run on "
                                "the CPU, much slower)",
                    (long long)v, (unsigned long long)s->n_layers);
            set_i(c, GPUFIT_JOB_N_GPU_LAYERS, v);
        }
    }
    if (p->util > 0.0 && p->util < 0.95) {
        c = add(x, 18, gpufit__cost(GPUFIT__COST_UTIL, 0), "gpu_memory_utilization %.2f -> 0.95", p->util);
        set_f(c, GPUFIT_JOB_GPU_MEMORY_UTILIZATION, 0.95);
    }
    if (s->nq % (p->tp * 2) == 0 && s->f % (p->tp * 2) == 0 && p->tp < 8 && !llamacpp) {
        c = add(x, 17, gpufit__cost(GPUFIT__COST_TP_GPUS, 0), "tensor parallelism over %llu GPUs", (unsigned long long)p->tp * 2);
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
        cand *c = add(x, 16, gpufit__cost(GPUFIT__COST_GPU, 0), "a GPU with more memory: %s (%.0f GiB)", best->name,
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
static int search_combination(ranking *rk, const ctx *x, int hw);

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
    /* the cheapest software combination, listed when it is cheaper than every fitting single
     * change (a single one is ranked above already) */
    soft_fit = search_combination(rk, &local, 0);
    if (!soft_fit && !any_fit) /* software cannot: a combination that may change hardware */
        search_combination(rk, &local, 1);
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

/* The cheapest combination that fits: a bounded best-first (uniform-cost) search over the
 * subsets of the candidates, popped in order of their summed cost (docs/mitigations.md), each
 * evaluated for real. With hw = 0 the hardware changes are left out: the combination keeps the
 * user's GPU and GPU count. The first subset popped that fits is the cheapest one within the
 * bounds, and no step of it is superfluous (every cost is > 0: the subset without a step costs
 * less and was popped, and did not fit). Steps edit distinct parameters, so that their union
 * is their sum. Bounds: SEARCH_DEPTH steps, SEARCH_EVALS evaluations, SEARCH_OPEN open nodes.
 * Returns 1 when a fitting subset was found (a single change is ranked already; a combination
 * is ranked here as GPUFIT_MIT_COMBINED). */
#define SEARCH_DEPTH 4
#define SEARCH_EVALS 2048
#define SEARCH_OPEN 16384

typedef struct node {
    double cost;
    uint8_t n, idx[SEARCH_DEPTH]; /* candidate indices, ascending */
    uint8_t last;                 /* 1 + the index in refinable[] of a last step: the largest
                                     value of a parameter that fits on top of the others */
    int64_t value;                /* ... that value */
} node;

/* Steps whose value depends on the rest of the combination: searched for on top of it (the
 * largest value that fits, search.c), as the combination's last step. Their costs are the
 * same as the single changes' (costs.c). */
static const struct {
    int32_t param, kind;
    int32_t cost; /* enum gpufit__cost_id (costs.c) */
} refinable[] = {
    {GPUFIT_JOB_BATCH, GPUFIT_MIT_BATCH, GPUFIT__COST_SEQS},
    {GPUFIT_JOB_CONTEXT_LEN, GPUFIT_MIT_CONTEXT, GPUFIT__COST_CONTEXT},
    {GPUFIT_JOB_N_GPU_LAYERS, GPUFIT_MIT_GPU_LAYERS, GPUFIT__COST_NGL},
};
/* Evaluations one largest-that-fits search is counted as (exponential search and bisection
 * over a range below 2^26: at most about 2 x 26) */
#define REFINE_EVALS 52

/* Pop order: cheaper first, then fewer steps, then lower candidate indices (deterministic). */
static int node_before(const node *a, const node *b)
{
    if (a->cost != b->cost)
        return a->cost < b->cost;
    if (a->n + (a->last > 0) != b->n + (b->last > 0))
        return a->n + (a->last > 0) < b->n + (b->last > 0);
    int c = memcmp(a->idx, b->idx, a->n < b->n ? a->n : b->n);
    if (c != 0 || a->n != b->n)
        return c != 0 ? c < 0 : a->n < b->n;
    return a->last < b->last;
}

static void heap_push(node *h, uint32_t *n, const node *v)
{
    if (*n >= SEARCH_OPEN)
        return; /* bounded: the rest of the frontier is not searched */
    uint32_t at = (*n)++;
    while (at > 0 && node_before(v, &h[(at - 1) / 2])) {
        h[at] = h[(at - 1) / 2];
        at = (at - 1) / 2;
    }
    h[at] = *v;
}

static node heap_pop(node *h, uint32_t *n)
{
    node top = h[0], last = h[--*n];
    uint32_t at = 0;
    for (;;) {
        uint32_t c = 2 * at + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && node_before(&h[c + 1], &h[c]))
            c++;
        if (!node_before(&h[c], &last))
            break;
        h[at] = h[c];
        at = c;
    }
    if (*n > 0)
        h[at] = last;
    return top;
}

/* Whether candidate i may join a combination (hw = 0: software only). */
static int usable(const ctx *x, uint32_t i, int hw)
{
    const cand *c = &x->c[i];
    return c->cs.n > 0 && (hw || !(is_hardware(c->kind) || changes_hardware(&c->cs, x->j)));
}

/* Pushes the children of parent: one more usable candidate after its last, editing parameters
 * none of its steps edits. */
static void expand(const ctx *x, node *h, uint32_t *nh, const node *parent,
                   const gpufit__changes *set, int hw)
{
    if (parent->n >= SEARCH_DEPTH)
        return;
    uint32_t from = parent->n > 0 ? parent->idx[parent->n - 1] + 1u : 0u;
    for (uint32_t i = from; i < x->n; i++) {
        const gpufit__changes *ci = &x->c[i].cs;
        if (!usable(x, i, hw) || set->n + ci->n > MITIGATION_EDITS_MAX)
            continue;
        int clash = 0;
        for (uint32_t k = 0; k < ci->n; k++)
            clash |= gpufit__cs_has(set, ci->ch[k].param);
        if (clash)
            continue;
        node child = *parent;
        child.idx[child.n++] = (uint8_t)i;
        child.cost += x->c[i].cost;
        heap_push(h, nh, &child);
    }
}

/* Pushes, for each refinable parameter that parent's steps leave alone and that applies to
 * the job, the largest value that fits on top of them as a last step. */
static void refine(const ctx *x, node *h, uint32_t *nh, const node *parent,
                   const gpufit__changes *set, uint32_t *evals)
{
    struct gpufit_job j = *x->j;
    if (parent->n == 0 || parent->n >= SEARCH_DEPTH || j.task != GPUFIT_TASK_INFERENCE ||
        gpufit__cs_apply(set, &j, NULL) != GPUFIT_OK)
        return;
    j.plan_state = 0; /* edited: evaluation resolves it */
    for (size_t k = 0; k < sizeof refinable / sizeof refinable[0]; k++) {
        int32_t param = refinable[k].param;
        int64_t now = param == GPUFIT_JOB_BATCH         ? j.batch
                      : param == GPUFIT_JOB_CONTEXT_LEN ? j.context_len
                                                        : j.n_gpu_layers;
        if (gpufit__cs_has(set, param) || *evals + REFINE_EVALS > SEARCH_EVALS ||
            (param == GPUFIT_JOB_N_GPU_LAYERS && j.framework != GPUFIT_FW_LLAMACPP) ||
            (param == GPUFIT_JOB_BATCH && now <= 1))
            continue;
        *evals += REFINE_EVALS;
        int64_t v = 0;
        if (gpufit__max_fitting(x->m, &j, param, &v, NULL) != GPUFIT_OK || v <= 0 ||
            (now >= 0 && v >= now))
            continue;
        node child = *parent;
        child.last = (uint8_t)(k + 1);
        child.value = v;
        child.cost += gpufit__cost(refinable[k].cost, 0);
        heap_push(h, nh, &child);
    }
}

/* The change set of a node: its steps, then its last step. */
static void node_set(const ctx *x, const node *v, gpufit__changes *set)
{
    memset(set, 0, sizeof *set);
    for (uint8_t q = 0; q < v->n; q++)
        gpufit__cs_merge(set, &x->c[v->idx[q]].cs);
    if (v->last > 0)
        gpufit__cs_int(set, refinable[v->last - 1].param, v->value, 1);
}

static int search_combination(ranking *rk, const ctx *x, int hw)
{
    node *h = malloc(SEARCH_OPEN * sizeof *h);
    if (h == NULL)
        return 0;
    uint32_t nh = 0, evals = 0;
    node root;
    memset(&root, 0, sizeof root);
    gpufit__changes none = {0};
    expand(x, h, &nh, &root, &none, hw);
    int found = 0;
    node best;
    uint64_t peak = 0;
    int32_t fits = 0;
    while (nh > 0 && evals < SEARCH_EVALS) {
        node v = heap_pop(h, &nh);
        gpufit__changes set;
        node_set(x, &v, &set);
        evals++;
        if (!try_cand(x, &set, &peak, &fits))
            continue; /* an inconsistent job: no child of it is consistent either */
        if (fits == 1) {
            best = v;
            found = 1;
            break;
        }
        if (v.last > 0)
            continue; /* a last step ends a combination */
        expand(x, h, &nh, &v, &set, hw);
        refine(x, h, &nh, &v, &set, &evals);
    }
    free(h);
    if (!found)
        return 0;
    if (best.n == 1 && best.last == 0)
        return 1; /* a single change: ranked with the others already */
    gpufit__mitigation mt;
    memset(&mt, 0, sizeof mt);
    node_set(x, &best, &mt.cs);
    mt.cost = best.cost;
    for (uint8_t q = 0; q <= best.n; q++) {
        char step[128];
        if (q < best.n) {
            snprintf(step, sizeof step, "%s", x->c[best.idx[q]].text);
        } else if (best.last > 0) {
            int32_t param = refinable[best.last - 1].param;
            const struct gpufit_job *j = x->j;
            if (param == GPUFIT_JOB_BATCH)
                snprintf(step, sizeof step, "%lld concurrent sequences instead of %lld",
                         (long long)best.value, (long long)j->batch);
            else if (param == GPUFIT_JOB_CONTEXT_LEN)
                snprintf(step, sizeof step, "context of %lld tokens instead of %lld",
                         (long long)best.value, (long long)j->context_len);
            else
                snprintf(step, sizeof step, "offload only %lld layers to the GPU (the rest run "
                         "on the CPU, much slower)", (long long)best.value);
        } else {
            break;
        }
        size_t len = strlen(mt.text);
        snprintf(mt.text + len, sizeof mt.text - len, "%s%s", len ? "; " : "", step);
    }
    mt.peak_after = peak;
    mt.fits_after = fits;
    mt.kind = GPUFIT_MIT_COMBINED;
    mt.hardware = changes_hardware(&mt.cs, x->j);
    finish(&mt, x->j, x->framework);
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
