/* SPDX-License-Identifier: MIT */
/* Property tests of the memory model (issue 7):
 * - memory never decreases when micro_batch, seq_len, context_len, batch or the layer count
 *   grows, for a set of presets and tasks including tensor- and pipeline-parallel layouts;
 * - memory never increases when a sharding degree grows with the others fixed: tp over the
 *   divisors of the heads, ZeRO stage 0 -> 3 with dp > 1, dp with ZeRO >= 1, and pp for the
 *   model states of the fullest stage;
 * - in every result the components add up to device_used_bytes and the levels are nested;
 * - 10-trillion-parameter models and million-token inputs give the right number or
 *   GPUFIT_E_OVERFLOW, never a wrapped one; sweeps towards the limits grow monotonically until
 *   they overflow, and stay overflowed.
 * A new communicator (a degree going from 1 to 2) adds a fixed NCCL buffer, and DeepSpeed's
 * ZeRO buckets are a fixed workspace: where a step adds those, the comparison leaves them out
 * (said at each place). */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_ROLES 8

typedef struct outcome {
    int32_t status;
    char message[256];
    uint32_t n_roles;
    char names[MAX_ROLES][16];
    uint64_t used[MAX_ROLES], reserved[MAX_ROLES], allocated[MAX_ROLES];
    uint64_t comp[MAX_ROLES][16];
    int32_t fits[MAX_ROLES];
    uint64_t peak;
    int32_t fits_all;
} outcome;

/* Components add up, levels are nested and differ by exactly the components between them,
 * the summary agrees with the roles. */
static void check_result(const gpufit_result *r, const char *spec, outcome *o)
{
    gpufit_summary s = {.struct_size = sizeof s};
    cr_assert_eq(gpufit_result_summary(r, &s), GPUFIT_OK);
    cr_assert(s.n_roles >= 1 && s.n_roles <= MAX_ROLES, "%s", spec);
    o->n_roles = s.n_roles;
    o->peak = s.peak_bytes;
    o->fits_all = s.fits;
    uint64_t max_used = 0;
    for (uint32_t i = 0; i < s.n_roles; i++) {
        gpufit_role_info ro = {.struct_size = sizeof ro};
        cr_assert_eq(gpufit_result_role(r, i, &ro), GPUFIT_OK);
        snprintf(o->names[i], sizeof o->names[i], "%s", ro.name);
        uint64_t sum = 0;
        memset(o->comp[i], 0, sizeof o->comp[i]);
        for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
            cr_assert(c > 0 && c < 16);
            cr_assert_eq(gpufit_result_bytes(r, i, c, &o->comp[i][c]), GPUFIT_OK);
            cr_assert(!__builtin_add_overflow(sum, o->comp[i][c], &sum),
                      "%s: role %s: the components overflow 64 bits but the status is OK", spec,
                      ro.name);
        }
        cr_assert_eq(sum, ro.device_used_bytes, "%s: role %s: components %llu != used %llu", spec,
                     ro.name, (unsigned long long)sum, (unsigned long long)ro.device_used_bytes);
        cr_assert(ro.peak_allocated_bytes <= ro.peak_reserved_bytes, "%s", spec);
        cr_assert(ro.peak_reserved_bytes <= ro.device_used_bytes, "%s", spec);
        if (strcmp(ro.name, "host") != 0) {
            cr_assert_eq(ro.peak_reserved_bytes - ro.peak_allocated_bytes,
                         o->comp[i][GPUFIT_MEM_FRAGMENTATION], "%s: reserved - allocated", spec);
            cr_assert_eq(ro.device_used_bytes - ro.peak_reserved_bytes,
                         o->comp[i][GPUFIT_MEM_RUNTIME_CONTEXT] +
                             o->comp[i][GPUFIT_MEM_COMM_BUFFERS],
                         "%s: used - reserved", spec);
            if (ro.device_used_bytes > max_used)
                max_used = ro.device_used_bytes;
        }
        o->used[i] = ro.device_used_bytes;
        o->reserved[i] = ro.peak_reserved_bytes;
        o->allocated[i] = ro.peak_allocated_bytes;
        o->fits[i] = ro.fits;
    }
    cr_assert_eq(s.peak_bytes, max_used, "%s: peak is the fullest device role", spec);
}

/* Applies "base extra" to fresh handles and evaluates; fills *o (status and numbers). */
static int32_t eval(const char *base, const char *extra, outcome *o)
{
    char spec[512];
    snprintf(spec, sizeof spec, "%s %s", base, extra);
    memset(o, 0, sizeof *o);
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, spec, &err), GPUFIT_OK, "'%s': %s", spec, err.message);
    o->status = gpufit_evaluate(&r, m, j, &err);
    snprintf(o->message, sizeof o->message, "%s", err.message);
    if (o->status == GPUFIT_OK)
        check_result(r, spec, o);
    else
        cr_assert_null(r);
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return o->status;
}

static uint64_t states(const outcome *o, uint32_t role)
{
    return o->comp[role][GPUFIT_MEM_WEIGHTS] + o->comp[role][GPUFIT_MEM_GRADIENTS] +
           o->comp[role][GPUFIT_MEM_OPTIMIZER_STATES] + o->comp[role][GPUFIT_MEM_MASTER_WEIGHTS];
}

/* Device role total, optionally without fixed-size overheads (communicators, workspaces). */
static uint64_t total(const outcome *o, uint32_t role, int no_comm, int no_workspace)
{
    uint64_t t = o->used[role];
    if (no_comm)
        t -= o->comp[role][GPUFIT_MEM_COMM_BUFFERS];
    if (no_workspace)
        t -= o->comp[role][GPUFIT_MEM_WORKSPACE];
    return t;
}

static int is_host(const outcome *o, uint32_t role)
{
    return strcmp(o->names[role], "host") == 0;
}

/* Role of b with the same name as role i of a, or -1. */
static int same_role(const outcome *a, uint32_t i, const outcome *b)
{
    for (uint32_t k = 0; k < b->n_roles; k++)
        if (strcmp(a->names[i], b->names[k]) == 0)
            return (int)k;
    return -1;
}

/* ---------------------------------------------------------------------------------------
 * Scenarios
 * ------------------------------------------------------------------------------------- */
static const char *const models[] = {
    "model=llama-3-8b",        "model=mixtral-8x7b", "model=deepseek-v2-lite", "model=gpt2",
    "model=bert-base-uncased", "model=t5-small",     "model=qwen2.5-0.5b",
};

static const char *const train_jobs[] = {
    "task=pretrain gpu=h100",
    "task=finetune framework=deepspeed zero=2 dp=4 gpu=a100-80gb",
    "task=lora checkpointing=selective",
    "task=qlora checkpointing=full precision=fp16 gpu=t4",
    "task=pretrain framework=megatron precision=bf16 tp=2 pp=2 dp=2 sp=1",
    "task=pretrain framework=megatron pp=4 vpp=2 global_batch=48",
    "task=pretrain pp=2 pp_schedule=gpipe global_batch=48",
    "task=pretrain zero=3 dp=8 attention=eager dropout=0.1",
    "task=finetune framework=deepspeed zero=3 dp=4 offload=optimizer_params",
};

static const char *const infer_jobs[] = {
    "task=inference gpu=h100",
    "task=inference framework=vllm gpu=h100",
    "task=inference framework=llamacpp weight_dtype=q4_k_m",
    "task=inference tp=2 attention=eager",
    /* a fraction of its own: SGLang's default shrinks (by its 3-digit rounding) as context_len
     * adds prefill graphs, and with it the device's use (test_serving.c) */
    "task=inference framework=sglang gpu=h200 tp=2 kv_dtype=fp8 gpu_memory_utilization=0.88",
    "task=inference framework=llamacpp n_gpu_layers=3 kv_dtype=q8_0 attention=flash",
};

/* Statuses a valid-looking combination may answer instead of a result. */
static int skipped(int32_t st)
{
    return st == GPUFIT_E_UNSUPPORTED || st == GPUFIT_E_INCONSISTENT;
}

/* Evaluates base + "key=v" for each value, in order; every successive pair must not shrink:
 * the peak, and each role's allocated / reserved / used bytes (roles matched by name); a job
 * that fits may stop fitting, never the other way round. Returns the number of comparisons. */
static int grows(const char *base, const char *key, const long long *vals, size_t n)
{
    outcome prev, cur;
    int have = 0, compared = 0;
    char extra[64], prev_extra[64] = "";
    for (size_t i = 0; i < n; i++) {
        snprintf(extra, sizeof extra, "%s=%lld", key, vals[i]);
        int32_t st = eval(base, extra, &cur);
        if (st != GPUFIT_OK) {
            cr_assert(skipped(st), "%s %s: status %d (%s)", base, extra, st, cur.message);
            have = 0;
            continue;
        }
        if (have) {
            compared++;
            cr_assert(cur.peak >= prev.peak, "%s: peak shrinks from %llu (%s) to %llu (%s)", base,
                      (unsigned long long)prev.peak, prev_extra, (unsigned long long)cur.peak,
                      extra);
            for (uint32_t r = 0; r < prev.n_roles; r++) {
                int k = same_role(&prev, r, &cur);
                if (k < 0) {
                    cr_assert(is_host(&prev, r), "%s: role %s vanished at %s", base, prev.names[r],
                              extra);
                    continue;
                }
                cr_assert(cur.used[k] >= prev.used[r],
                          "%s: role %s used shrinks from %llu (%s) to %llu (%s)", base,
                          prev.names[r], (unsigned long long)prev.used[r], prev_extra,
                          (unsigned long long)cur.used[k], extra);
                cr_assert(cur.reserved[k] >= prev.reserved[r], "%s: role %s reserved, %s -> %s",
                          base, prev.names[r], prev_extra, extra);
                cr_assert(cur.allocated[k] >= prev.allocated[r],
                          "%s: role %s allocated shrinks from %llu (%s) to %llu (%s)", base,
                          prev.names[r], (unsigned long long)prev.allocated[r], prev_extra,
                          (unsigned long long)cur.allocated[k], extra);
            }
            if (prev.fits_all == 0)
                cr_assert(cur.fits_all == 0, "%s: does not fit at %s but fits at %s", base,
                          prev_extra, extra);
        }
        prev = cur;
        have = 1;
        snprintf(prev_extra, sizeof prev_extra, "%s", extra);
    }
    return compared;
}

Test(monotone, training_grows_with_micro_batch_and_seq_len)
{
    static const long long mb[] = {1, 2, 3, 4, 8, 16};
    static const long long sl[] = {128, 256, 512, 1000, 2048, 4096};
    int compared = 0;
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        for (size_t t = 0; t < sizeof train_jobs / sizeof train_jobs[0]; t++) {
            char base[256];
            snprintf(base, sizeof base, "%s %s", models[m], train_jobs[t]);
            compared += grows(base, "micro_batch", mb, sizeof mb / sizeof mb[0]);
            compared += grows(base, "seq_len", sl, sizeof sl / sizeof sl[0]);
        }
    }
    cr_assert(compared >= 400, "only %d comparisons ran", compared);
}

Test(monotone, inference_grows_with_context_len_and_batch)
{
    static const long long ctx[] = {128, 512, 1000, 4096, 8192, 32768};
    static const long long b[] = {1, 2, 3, 8, 32};
    int compared = 0;
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        for (size_t t = 0; t < sizeof infer_jobs / sizeof infer_jobs[0]; t++) {
            char base[256];
            snprintf(base, sizeof base, "%s %s", models[m], infer_jobs[t]);
            compared += grows(base, "context_len", ctx, sizeof ctx / sizeof ctx[0]);
            compared += grows(base, "batch", b, sizeof b / sizeof b[0]);
        }
    }
    cr_assert(compared >= 200, "only %d comparisons ran", compared);
}

Test(monotone, grows_with_layers)
{
    static const long long layers[] = {4, 8, 12, 16, 24, 32, 48};
    int compared = 0;
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        /* t5: the encoder and decoder stacks have their own counts */
        const char *key = strstr(models[m], "t5") != NULL ? "n_decoder_layers" : "n_layers";
        for (size_t t = 0; t < sizeof train_jobs / sizeof train_jobs[0]; t++) {
            char base[256];
            snprintf(base, sizeof base, "%s %s", models[m], train_jobs[t]);
            compared += grows(base, key, layers, sizeof layers / sizeof layers[0]);
        }
        for (size_t t = 0; t < sizeof infer_jobs / sizeof infer_jobs[0]; t++) {
            char base[256];
            snprintf(base, sizeof base, "%s %s", models[m], infer_jobs[t]);
            compared += grows(base, key, layers, sizeof layers / sizeof layers[0]);
        }
    }
    cr_assert(compared >= 300, "only %d comparisons ran", compared);
}

/* ---------------------------------------------------------------------------------------
 * Sharding: a larger degree never needs more memory per device.
 * ------------------------------------------------------------------------------------- */
/* prev -> cur with one degree grown: each device role uses no more. `no_comm`: the step adds a
 * communicator (degree 1 -> 2), so its fixed NCCL buffer is left out; `no_ws` likewise for a
 * fixed workspace (DeepSpeed buckets). */
static void
not_more(const outcome *prev, const outcome *cur, const char *what, int no_comm, int no_ws)
{
    for (uint32_t r = 0; r < prev->n_roles; r++) {
        if (is_host(prev, r))
            continue;
        int k = same_role(prev, r, cur);
        cr_assert(k >= 0, "%s: role %s vanished", what, prev->names[r]);
        uint64_t a = total(prev, r, no_comm, no_ws), b = total(cur, (uint32_t)k, no_comm, no_ws);
        cr_assert(b <= a, "%s: role %s grows from %llu to %llu bytes", what, prev->names[r],
                  (unsigned long long)a, (unsigned long long)b);
    }
}

Test(sharding, tp_over_divisors_of_heads)
{
    static const struct {
        const char *model;
        int heads;
    } cases[] = {
        {"model=llama-3-8b", 32}, {"model=mixtral-8x7b", 32},     {"model=gpt2", 12},
        {"model=qwen2.5-7b", 28}, {"model=deepseek-v2-lite", 16}, {"model=bert-base-uncased", 12},
        {"model=t5-small", 8}};
    static const char *const jobs[] = {"task=pretrain",
                                       "task=pretrain framework=megatron precision=bf16 sp=0",
                                       "task=lora",
                                       "task=inference",
                                       "task=inference framework=vllm gpu=h100",
                                       "task=pretrain pp=2 framework=megatron precision=bf16"};
    int compared = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (size_t jb = 0; jb < sizeof jobs / sizeof jobs[0]; jb++) {
            outcome prev, cur;
            int have = 0, prev_tp = 0;
            for (int tp = 1; tp <= cases[c].heads; tp++) {
                if (cases[c].heads % tp != 0)
                    continue;
                char base[256], extra[32], what[320];
                snprintf(base, sizeof base, "%s %s", cases[c].model, jobs[jb]);
                snprintf(extra, sizeof extra, "tp=%d", tp);
                int32_t st = eval(base, extra, &cur);
                if (st != GPUFIT_OK) { /* ffn_hidden_size not divisible */
                    cr_assert_eq(st, GPUFIT_E_INCONSISTENT, "%s %s: %s", base, extra, cur.message);
                    cr_assert(strstr(cur.message, "ffn_hidden_size") != NULL, "%s", cur.message);
                    continue;
                }
                if (have) {
                    snprintf(what, sizeof what, "%s: tp %d -> %d", base, prev_tp, tp);
                    not_more(&prev, &cur, what, prev_tp == 1, 0);
                    compared++;
                }
                prev = cur;
                prev_tp = tp;
                have = 1;
            }
        }
    }
    cr_assert(compared >= 80, "only %d comparisons ran", compared);
}

Test(sharding, zero_stages_with_data_parallelism)
{
    static const char *const mdl[] = {"model=llama-3-8b", "model=mixtral-8x7b", "model=gpt2",
                                      "model=qwen2.5-7b"};
    static const char *const fw[] = {"framework=pytorch",
                                     "framework=pytorch precision=bf16",
                                     "framework=megatron",
                                     "framework=deepspeed",
                                     "framework=deepspeed precision=fp16",
                                     "framework=pytorch task=lora",
                                     "framework=deepspeed offload=optimizer"};
    static const int dps[] = {2, 8, 64};
    int compared = 0;
    for (size_t m = 0; m < sizeof mdl / sizeof mdl[0]; m++) {
        for (size_t f = 0; f < sizeof fw / sizeof fw[0]; f++) {
            for (size_t d = 0; d < sizeof dps / sizeof dps[0]; d++) {
                outcome prev, cur;
                for (int z = 0; z <= 3; z++) {
                    char base[256], extra[64], what[320];
                    snprintf(base, sizeof base, "%s %s %s dp=%d", mdl[m],
                             strstr(fw[f], "task=") != NULL ? "" : "task=pretrain", fw[f],
                             dps[d]);
                    snprintf(extra, sizeof extra, "zero=%d", z);
                    cr_assert_eq(eval(base, extra, &cur), GPUFIT_OK, "%s %s: %s", base, extra,
                                 cur.message);
                    if (z > 0) {
                        snprintf(what, sizeof what, "%s: zero %d -> %d", base, z - 1, z);
                        /* model states never grow */
                        cr_assert(states(&cur, 0) <= states(&prev, 0), "%s: states %llu -> %llu",
                                  what, (unsigned long long)states(&prev, 0),
                                  (unsigned long long)states(&cur, 0));
                        /* DeepSpeed: ZeRO 1/2 allocate their fixed reduce/allgather buckets */
                        not_more(&prev, &cur, what, 0, strstr(fw[f], "deepspeed") != NULL);
                        compared++;
                    }
                    prev = cur;
                }
            }
        }
    }
    cr_assert(compared >= 200, "only %d comparisons ran", compared);
}

Test(sharding, dp_with_zero)
{
    static const char *const mdl[] = {"model=llama-3-8b", "model=mixtral-8x7b", "model=gpt2",
                                      "model=deepseek-v2-lite"};
    static const char *const jobs[] = {
        "task=pretrain framework=pytorch", "task=pretrain framework=deepspeed",
        "task=pretrain framework=megatron precision=bf16", "task=finetune precision=bf16",
        "task=pretrain framework=megatron tp=2 pp=2 precision=bf16"};
    static const int dps[] = {2, 4, 8, 16, 64, 1024};
    int compared = 0;
    for (size_t m = 0; m < sizeof mdl / sizeof mdl[0]; m++) {
        for (size_t jb = 0; jb < sizeof jobs / sizeof jobs[0]; jb++) {
            for (int z = 1; z <= 3; z++) {
                outcome prev, cur;
                for (size_t d = 0; d < sizeof dps / sizeof dps[0]; d++) {
                    char base[256], extra[64], what[320];
                    snprintf(base, sizeof base, "%s %s zero=%d", mdl[m], jobs[jb], z);
                    snprintf(extra, sizeof extra, "dp=%d", dps[d]);
                    cr_assert_eq(eval(base, extra, &cur), GPUFIT_OK, "%s %s: %s", base, extra,
                                 cur.message);
                    if (d > 0) {
                        snprintf(what, sizeof what, "%s: dp %d -> %d", base, dps[d - 1], dps[d]);
                        not_more(&prev, &cur, what, 0, 0);
                        compared++;
                    }
                    prev = cur;
                }
            }
        }
    }
    cr_assert(compared >= 250, "only %d comparisons ran", compared);
}

Test(sharding, pp_model_states_of_the_fullest_stage)
{
    static const struct {
        const char *model;
        int layers;
    } cases[] = {
        {"model=llama-3-8b", 32}, {"model=mixtral-8x7b", 32},     {"model=gpt2", 12},
        {"model=qwen2.5-7b", 28}, {"model=deepseek-v2-lite", 27}, {"model=llama-3-70b", 80}};
    static const char *const jobs[] = {"task=pretrain",
                                       "task=pretrain framework=megatron precision=bf16",
                                       "task=pretrain pp_schedule=gpipe global_batch=32",
                                       "task=lora",
                                       "task=inference",
                                       "task=pretrain framework=deepspeed zero=1 dp=4"};
    int compared = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (size_t jb = 0; jb < sizeof jobs / sizeof jobs[0]; jb++) {
            uint64_t prev_worst = 0;
            int prev_pp = 0;
            for (int pp = 1; pp <= cases[c].layers; pp++) {
                if (cases[c].layers % pp != 0)
                    continue;
                char base[256], extra[32];
                snprintf(base, sizeof base, "%s %s", cases[c].model, jobs[jb]);
                snprintf(extra, sizeof extra, "pp=%d", pp);
                outcome cur;
                cr_assert_eq(eval(base, extra, &cur), GPUFIT_OK, "%s %s: %s", base, extra,
                             cur.message);
                uint64_t worst = 0;
                for (uint32_t r = 0; r < cur.n_roles; r++)
                    if (!is_host(&cur, r) && states(&cur, r) > worst)
                        worst = states(&cur, r);
                if (prev_pp > 0) {
                    cr_assert(worst <= prev_worst,
                              "%s: pp %d -> %d: the fullest stage's model states grow from %llu "
                              "to %llu",
                              base, prev_pp, pp, (unsigned long long)prev_worst,
                              (unsigned long long)worst);
                    compared++;
                }
                prev_worst = worst;
                prev_pp = pp;
            }
        }
    }
    cr_assert(compared >= 100, "only %d comparisons ran", compared);
}

/* ---------------------------------------------------------------------------------------
 * Extremes: the right number or GPUFIT_E_OVERFLOW.
 * ------------------------------------------------------------------------------------- */
Test(extremes, ten_trillion_generic_parameters)
{
    const uint64_t P = 10000000000000ull;
    outcome o;
    int32_t st = eval("arch=generic n_params=10000000000000 task=inference context_len=1000000",
                      "precision=bf16", &o);
    cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%d %s", st, o.message);
    if (st == GPUFIT_OK)
        cr_assert_eq(o.comp[0][GPUFIT_MEM_WEIGHTS], 2 * P);
    /* training, fp32 Adam over amp: 4P fp32 weights + 2P autocast copy, 4P grads, 8P states */
    st = eval("arch=generic n_params=10000000000000 task=pretrain seq_len=1000000",
              "precision=amp_bf16 optimizer=adamw framework=pytorch optimizer_impl=fused", &o);
    cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%d %s", st, o.message);
    if (st == GPUFIT_OK) {
        cr_assert_eq(o.comp[0][GPUFIT_MEM_WEIGHTS], 6 * P);
        cr_assert_eq(o.comp[0][GPUFIT_MEM_GRADIENTS], 4 * P);
        cr_assert_eq(o.comp[0][GPUFIT_MEM_OPTIMIZER_STATES], 8 * P);
    }
    /* 2^50 parameters (the table's maximum) in fp32 training: 2^54 bytes of states fit */
    st = eval("arch=generic n_params=1125899906842624 task=pretrain",
              "precision=fp32 optimizer_impl=fused", &o);
    cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%d %s", st, o.message);
    if (st == GPUFIT_OK)
        cr_assert_eq(o.comp[0][GPUFIT_MEM_OPTIMIZER_STATES], 8ull << 50);
    /* the foreach step's list (a moment, 2^52 B) on top, up to two at the band's high end */
    st = eval("arch=generic n_params=1125899906842624 task=pretrain", "precision=fp32", &o);
    cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%d %s", st, o.message);
    if (st == GPUFIT_OK) {
        cr_assert_geq(o.comp[0][GPUFIT_MEM_OPTIMIZER_STATES], 8ull << 50);
        cr_assert_leq(o.comp[0][GPUFIT_MEM_OPTIMIZER_STATES], (8ull << 50) + (4ull << 50));
    }
}

/* A ~17-trillion-parameter dense decoder (1000 layers, h = 32768, MHA) with a million-token
 * context: exact weights and KV cache, or overflow. */
#define HUGE_DECODER                                                                               \
    "arch=decoder n_layers=1000 hidden_size=32768 n_heads=256 ffn_hidden_size=131072 "             \
    "vocab_size=256000 mlp=swiglu norm=rmsnorm "

Test(extremes, ten_trillion_decoder_million_tokens)
{
    gpufit_model *m = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, NULL, HUGE_DECODER, NULL), GPUFIT_OK);
    uint64_t total = 0, active = 0;
    cr_assert_eq(gpufit_model_param_count(m, &total, &active, NULL), GPUFIT_OK);
    /* per layer: 4 h^2 attention + 3 h f MLP + 2 h norms; embeddings and head 2 V h; final norm */
    const uint64_t h = 32768, f = 131072, V = 256000, L = 1000;
    cr_assert_eq(total, L * (4 * h * h + 3 * h * f + 2 * h) + 2 * V * h + h);
    gpufit_model_free(m);

    outcome o;
    int32_t st = eval(HUGE_DECODER "task=inference framework=pytorch precision=bf16",
                      "batch=1 context_len=1000000", &o);
    cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%d %s", st, o.message);
    if (st == GPUFIT_OK) {
        cr_assert_eq(o.comp[0][GPUFIT_MEM_WEIGHTS], 2 * total);
        cr_assert_eq(o.comp[0][GPUFIT_MEM_KV_CACHE], 2 * L * h * 2 * 1000000ull);
    }
    st = eval(HUGE_DECODER "task=pretrain precision=bf16 framework=megatron attention=eager",
              "micro_batch=1 seq_len=1048576", &o);
    cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%d %s", st, o.message);
    if (st == GPUFIT_OK) /* bf16 weights, fp32 main grads, fp32 master + Adam: 18 bytes each */
        cr_assert_eq(states(&o, 0), 18 * total);
}

/* Sweeps towards the table's limits: OK results grow until the first GPUFIT_E_OVERFLOW, and
 * every larger input overflows too (a wrapped count would come back as a smaller number). */
static void sweep(const char *base, const char *key, int max_log2)
{
    int overflowed = 0;
    uint64_t prev = 0;
    for (int k = 0; k <= max_log2; k++) {
        char extra[64];
        snprintf(extra, sizeof extra, "%s=%lld", key, 1ll << k);
        outcome o;
        int32_t st = eval(base, extra, &o);
        cr_assert(st == GPUFIT_OK || st == GPUFIT_E_OVERFLOW, "%s %s: %d %s", base, extra, st,
                  o.message);
        if (st == GPUFIT_E_OVERFLOW) {
            overflowed = 1;
            continue;
        }
        cr_assert(!overflowed, "%s %s: OK after a smaller value overflowed", base, extra);
        cr_assert(o.peak >= prev, "%s %s: peak %llu after %llu", base, extra,
                  (unsigned long long)o.peak, (unsigned long long)prev);
        prev = o.peak;
    }
}

Test(extremes, sweeps_grow_until_overflow)
{
    sweep(HUGE_DECODER "task=inference batch=1048576", "context_len", 26);
    sweep("model=deepseek-v3 task=inference framework=vllm batch=1048576 gpu=h100", "context_len",
          26);
    sweep("model=llama-3-8b task=inference framework=llamacpp batch=1048576", "context_len", 26);
    sweep(HUGE_DECODER "task=inference context_len=67108864", "batch", 20);
    sweep("arch=decoder hidden_size=16777216 n_heads=65536 ffn_hidden_size=67108864 "
          "vocab_size=268435456 task=pretrain micro_batch=1048576 seq_len=67108864",
          "n_layers", 20);
    sweep("arch=decoder n_layers=1048576 n_heads=1 ffn_hidden_size=67108864 vocab_size=268435456 "
          "task=inference context_len=67108864 batch=1048576",
          "hidden_size", 24);
    sweep("arch=generic task=inference context_len=67108864 batch=1048576", "n_params", 50);
}

/* Training activations: the same towards the limits of micro_batch, seq_len and the generic
 * model's bytes per token (these wrapped before the activation terms were checked). */
Test(extremes, training_sweeps_grow_until_overflow)
{
    static const char *const train[] = {
        HUGE_DECODER "task=pretrain attention=eager seq_len=67108864",
        HUGE_DECODER "task=pretrain attention=flash checkpointing=full seq_len=67108864",
        HUGE_DECODER "task=pretrain framework=megatron pp=8 vpp=5 global_batch=1048576 "
                     "seq_len=65536",
        "model=llama-3-8b task=pretrain seq_len=67108864 attention=eager",
        "model=mixtral-8x7b task=lora seq_len=67108864",
    };
    for (size_t i = 0; i < sizeof train / sizeof train[0]; i++)
        sweep(train[i], "micro_batch", 20);
    sweep(HUGE_DECODER "task=pretrain micro_batch=1048576 attention=eager", "seq_len", 26);
    sweep("model=llama-3-8b task=pretrain micro_batch=1048576", "seq_len", 26);
    sweep("arch=generic n_params=1000 task=pretrain micro_batch=1048576 seq_len=67108864",
          "activation_bytes_per_token", 39);
    /* generic model: activations are bytes per token x tokens, exactly, or overflow */
    outcome o;
    int32_t st = eval("arch=generic n_params=1000 task=pretrain activation_bytes_per_token=1e12",
                      "micro_batch=1048576 seq_len=67108864", &o);
    cr_assert(st == GPUFIT_E_OVERFLOW, "1e12 x 2^46 bytes: status %d, activations %llu", st,
              (unsigned long long)o.comp[0][GPUFIT_MEM_ACTIVATIONS]);
}
