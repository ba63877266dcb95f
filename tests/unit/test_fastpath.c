/* SPDX-License-Identifier: MIT */
/* The closed-form sums (model cache aggregates: one layer of each class and the global
 * tensors by side) must equal the tensor-group walk byte for byte, for every preset under many
 * layouts, dtypes, tasks and optimizers. */
#include <criterion/criterion.h>

#include "class_sums.h"
#include "eval.h"

#include <stdio.h>
#include <string.h>

Test(fastpath, closed_form_equals_the_group_walk)
{
    static const char *const jobs[] = {
        "task=inference precision=bf16",
        "task=inference weight_dtype=int8",
        "task=inference weight_dtype=gptq4",
        "task=inference weight_dtype=awq4",
        "task=inference weight_dtype=nf4",
        "task=inference weight_dtype=nf4_dq",
        "task=inference weight_dtype=fp8 tp=2",
        "task=pretrain precision=amp_bf16",
        "task=pretrain precision=bf16 framework=megatron tp=2",
        "task=pretrain precision=bf16 framework=megatron tp=4 optimizer=sgd_momentum",
        "task=pretrain precision=fp32 optimizer=lion tp=8",
        "task=pretrain optimizer=adafactor",
        "task=pretrain optimizer=adamw_8bit tp=2",
        "task=lora lora_targets=qv",
        "task=lora lora_targets=attention tp=2",
        "task=lora lora_targets=all_linear",
        "task=qlora lora_targets=all_linear",
        "task=pretrain tp=2 ep=2 dp=2 precision=bf16 framework=megatron",
        "task=pretrain tp=1 ep=4 dp=4 precision=bf16 framework=megatron",
        "task=finetune precision=fp16 tp=4 optimizer=sgd",
        "task=finetune precision=fp32 tp=8 optimizer=adamw optimizer_dtype=bf16",
        "task=inference weight_dtype=int8 tp=4",
        "task=lora tp=8 lora_targets=all_linear optimizer=lion",
    };
    gpufit_preset_info pi = {.struct_size = sizeof pi};
    int compared = 0, globals_dense = 0, presets = 0;
    for (uint32_t i = 0; gpufit_preset_at(i, &pi) == GPUFIT_OK; i++, pi.struct_size = sizeof pi) {
        presets++;
        for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
            gpufit_model *m = NULL;
            gpufit_job *j = NULL;
            char spec[256];
            snprintf(spec, sizeof spec, "model=%s %s", pi.name, jobs[k]);
            gpufit_model_new(&m, NULL);
            gpufit_job_new(&j, NULL);
            if (gpufit_apply_spec(m, j, spec, NULL) != GPUFIT_OK) {
                gpufit_model_free(m);
                gpufit_job_free(j);
                continue;
            }
            gpufit__plan p;
            cr_assert_eq(m->cache_state, 1, "%s", spec);
            globals_dense += k == 0 && m->cache_agg.glob_dense;
            /* the cache is what a fresh build from the cached groups gives */
            gpufit__aggregates fresh;
            gpufit__aggregates_build(&m->cache_shape, m->cache_groups, m->cache_ng, &fresh);
            cr_assert_eq(class_sums_differ(&m->cache_shape, &fresh, &m->cache_agg), -1, "%s",
                         spec);
            if (gpufit__plan_resolve(j, &m->cache_shape, &p, NULL) == GPUFIT_OK) {
                gpufit__ubytes a, b;
                int ra = gpufit__uniform_bytes(&p, &m->cache_shape, m->cache_groups, m->cache_ng,
                                               &m->cache_agg, &a);
                int rb = gpufit__uniform_bytes(&p, &m->cache_shape, m->cache_groups, m->cache_ng,
                                               NULL, &b);
                cr_assert_eq(ra, rb, "%s", spec);
                /* the classes the model has (uniform_bytes leaves the others unset) */
                for (int w = m->cache_shape.w_first; w < m->cache_shape.w_end; w++) {
                    cr_assert_eq(a.w[w], b.w[w], "%s: weights of class %d", spec, w);
                    cr_assert_eq(a.t[w], b.t[w], "%s: trainable of class %d", spec, w);
                    cr_assert_eq(a.o[w], b.o[w], "%s: optimizer of class %d", spec, w);
                    cr_assert_eq(a.we[w], b.we[w], "%s: expert weights of class %d", spec, w);
                    cr_assert_eq(a.te[w], b.te[w], "%s", spec);
                    cr_assert_eq(a.oe[w], b.oe[w], "%s", spec);
                }
                for (int side = 0; side < 3; side++) {
                    cr_assert_eq(a.w_glob[side], b.w_glob[side], "%s: global weights %d", spec,
                                 side);
                    cr_assert_eq(a.t_glob[side], b.t_glob[side], "%s: global trainable %d", spec,
                                 side);
                    cr_assert_eq(a.o_glob[side], b.o_glob[side], "%s: global optimizer %d", spec,
                                 side);
                }
                compared++;
            }
            gpufit_model_free(m);
            gpufit_job_free(j);
        }
    }
    cr_assert(compared > 500, "%d comparisons", compared);
    /* the global closed form is the common case, not a corner */
    cr_assert(globals_dense == presets, "%d of %d presets", globals_dense, presets);
}

/* A job's cached plan (gpufit__job_refresh) is what resolving the job again gives, after every
 * kind of public change; a copy edited directly and marked stale evaluates like a fresh job. */
static void assert_plan_fresh(const gpufit_job *j, const char *what)
{
    gpufit__plan fresh;
    int ok = gpufit__plan_resolve(j, NULL, &fresh, NULL) == GPUFIT_OK;
    cr_assert_eq(j->plan_state, ok, "%s", what);
    if (ok)
        cr_assert(memcmp(&fresh, &j->plan, sizeof fresh) == 0, "%s", what);
}

Test(fastpath, job_plan_cache_follows_every_change)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL, *c = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    /* a new job is stale (its plan is resolved by the first change, or by evaluation):
     * gpufit_job_new + gpufit_apply_json resolves once, not twice */
    cr_assert_eq(j->plan_state, 0, "new job");
    cr_assert_eq(gpufit_apply_spec(m, j, "model=llama-3-8b task=pretrain gpu=h100 tp=2", NULL),
                 GPUFIT_OK);
    assert_plan_fresh(j, "spec");
    cr_assert_eq(gpufit_job_set_int(j, GPUFIT_JOB_DP, 4, NULL), GPUFIT_OK);
    assert_plan_fresh(j, "set_int");
    cr_assert_eq(gpufit_job_set_float(j, GPUFIT_JOB_FRAGMENTATION, 0.1, NULL), GPUFIT_OK);
    assert_plan_fresh(j, "set_float");
    const double split[2] = {3, 1};
    cr_assert_eq(gpufit_job_set_int(j, GPUFIT_JOB_PP, 2, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_TENSOR_SPLIT, split, 2, NULL), GPUFIT_OK);
    assert_plan_fresh(j, "set_list");
    static const char json[] = "{\"task\": \"inference\", \"framework\": \"vllm\"}";
    cr_assert_eq(gpufit_apply_json(m, j, json, sizeof json - 1, NULL), GPUFIT_OK);
    assert_plan_fresh(j, "json");
    /* a rejected setting leaves the job and its plan as they were */
    cr_assert_neq(gpufit_apply_spec(m, j, "tp=3 precision=nonsense", NULL), GPUFIT_OK);
    assert_plan_fresh(j, "rejected spec");
    cr_assert_eq(gpufit_job_copy(&c, j, NULL), GPUFIT_OK);
    assert_plan_fresh(c, "copy");
    /* an edited copy marked stale is resolved by the evaluation itself */
    struct gpufit_job e = *j;
    e.tp = 2;
    e.plan_state = 0;
    gpufit_summary a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
    cr_assert_eq(gpufit_job_set_int(c, GPUFIT_JOB_TP, 2, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_evaluate_summary(m, &e, &a, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_evaluate_summary(m, c, &b, NULL), GPUFIT_OK);
    cr_assert(memcmp(&a, &b, sizeof a) == 0);
    /* a job that does not resolve keeps no plan: the evaluation reports why */
    cr_assert_eq(gpufit_job_set_int(c, GPUFIT_JOB_KV_DTYPE, GPUFIT_DTYPE_NONE, NULL), GPUFIT_OK);
    assert_plan_fresh(c, "unresolvable");
    cr_assert_eq(c->plan_state, 0);
    cr_assert_eq(gpufit_evaluate_summary(m, c, &b, NULL), GPUFIT_E_INVALID_ARG);
    gpufit_job_free(c);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* The inline dtype lookups (internal.h) take block_elems == 1 alone as "a plain, known dtype":
 * every unnamed slot of the table must be all zero and every named one have a block. */
Test(fastpath, dtype_table_slots_are_named_or_zero)
{
    for (int64_t dt = 0; dt < GPUFIT__DTYPE_COUNT; dt++) {
        const gpufit__dtype_info *d = &gpufit__dtypes[dt];
        if (d->name == NULL) {
            cr_expect(d->block_bytes == 0 && d->block_elems == 0, "dtype %lld", (long long)dt);
            cr_expect(gpufit__dtype(dt) == NULL);
        } else {
            cr_expect(d->block_elems >= 1, "dtype %s", d->name);
        }
        uint64_t out = 7;
        int plain = d->name != NULL && d->block_elems == 1;
        cr_expect(gpufit__dtype_bytes(dt, 3, &out) == (d->name == NULL), "dtype %lld",
                  (long long)dt);
        if (plain)
            cr_expect(out == 3u * d->block_bytes);
    }
    uint64_t out = 0;
    cr_expect(gpufit__dtype_bytes(-1, 1, &out) == 1 &&
              gpufit__dtype_bytes(GPUFIT__DTYPE_COUNT, 1, &out) == 1);
    cr_expect(gpufit__dtype_log2_bytes(-1) == 0 &&
              gpufit__dtype_log2_bytes(GPUFIT_DTYPE_FP32) == 2 &&
              gpufit__dtype_log2_bytes(GPUFIT_DTYPE_BF16) == 1 &&
              gpufit__dtype_log2_bytes(GPUFIT_DTYPE_FP8) == 0 &&
              gpufit__dtype_log2_bytes(GPUFIT_DTYPE_Q4_K) == 0);
}

/* A summary computes a server's band by its own, leaner code (evaluate.c server_band_lean):
 * its peak band, verdict and every other field must equal the full report's summary, across
 * serving engines, releases (each KV-budget rule, CUDA graphs paid or not), GPUs whose budget
 * is whole, short or empty, tensor parallelism (NCCL), margins and models with experts, MLA
 * and a vision encoder. */
Test(fastpath, lean_server_band_equals_the_report)
{
    static const char *const models[] = {"llama-3.1-8b", "llama-3-70b", "mixtral-8x7b",
                                         "qwen2-vl-7b", "deepseek-v2-lite", "qwen3-30b-a3b"};
    static const char *const engines[] = {
        "framework=vllm",
        "framework=vllm framework_version=0.6.3",
        "framework=vllm framework_version=0.19",
        "framework=vllm framework_version=0.22",
        "framework=vllm framework_version=0.27 gpu_memory_utilization=0.5",
        "framework=sglang",
        "framework=sglang framework_version=0.5.3",
        "framework=sglang framework_version=0.5.15 gpu_memory_utilization=0.95"};
    static const char *const gpus[] = {"gpu=t4", "gpu=rtx-3090", "gpu=a100-80gb",
                                       "gpu=h100 margin=0.05", "gpu=h100 cuda_version=12.1"};
    static const char *const shapes[] = {"tp=1 context_len=4096", "tp=2 context_len=65536",
                                         "tp=1 context_len=32768 weight_dtype=fp8"};
    int compared = 0, short_kv = 0;
    for (size_t a = 0; a < sizeof models / sizeof models[0]; a++)
        for (size_t b = 0; b < sizeof engines / sizeof engines[0]; b++)
            for (size_t c = 0; c < sizeof gpus / sizeof gpus[0]; c++)
                for (size_t d = 0; d < sizeof shapes / sizeof shapes[0]; d++) {
                    char spec[256];
                    snprintf(spec, sizeof spec, "model=%s task=inference %s %s %s", models[a],
                             engines[b], gpus[c], shapes[d]);
                    gpufit_model *m = NULL;
                    gpufit_job *j = NULL;
                    gpufit_result *r = NULL;
                    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
                    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
                    gpufit_summary lean = {.struct_size = sizeof lean};
                    gpufit_summary full = {.struct_size = sizeof full};
                    if (gpufit_apply_spec(m, j, spec, NULL) == GPUFIT_OK &&
                        gpufit_evaluate(&r, m, j, NULL) == GPUFIT_OK) {
                        cr_assert_eq(gpufit_evaluate_summary(m, j, &lean, NULL), GPUFIT_OK,
                                     "%s", spec);
                        cr_assert_eq(gpufit_result_summary(r, &full), GPUFIT_OK, "%s", spec);
                        full.n_mitigations = 0; /* a summary ranks none */
                        cr_assert(memcmp(&lean, &full, sizeof lean) == 0,
                                  "%s: peak band %llu-%llu (summary) vs %llu-%llu, verdict %d "
                                  "vs %d",
                                  spec, (unsigned long long)lean.peak_low_bytes,
                                  (unsigned long long)lean.peak_high_bytes,
                                  (unsigned long long)full.peak_low_bytes,
                                  (unsigned long long)full.peak_high_bytes, (int)lean.verdict,
                                  (int)full.verdict);
                        compared++;
                        short_kv += full.fits == 0;
                    }
                    gpufit_result_free(r);
                    gpufit_job_free(j);
                    gpufit_model_free(m);
                }
    /* every combination evaluates, and many do not fit (334 when written: the KV budget
     * too small or empty on the T4 and the RTX 3090) */
    cr_assert_eq(compared, 720, "%d", compared);
    cr_assert_geq(short_kv, 100, "%d", short_kv);
}
