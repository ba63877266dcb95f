/* SPDX-License-Identifier: MIT */
/* Shared by fuzz_advice.c and tests/unit/test_advice.c (issue 13): a random valid job built from
 * a byte string, and the check that every advice reproduces (docs/advice.md).
 *
 * The includer defines ADV_FAIL(fmt, ...) (abort in the fuzz target, a Criterion failure in the
 * unit test) before including this file. Public API only. */
#ifndef GPUFIT_ADVICE_CHECK_H
#define GPUFIT_ADVICE_CHECK_H

#include "gpufit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Bytes read one at a time; 0 past the end (so every byte string is a job). */
typedef struct adv_bytes {
    const uint8_t *p;
    size_t n, at;
} adv_bytes;

static uint8_t adv_byte(adv_bytes *b)
{
    return b->at < b->n ? b->p[b->at++] : 0;
}

static uint32_t adv_pick(adv_bytes *b, uint32_t n)
{
    return (uint32_t)adv_byte(b) % n;
}

/* The cluster and searches a job is checked with (read from the bytes too). */
typedef struct adv_case {
    gpufit_model *m;
    gpufit_job *j;
    uint32_t gpus_per_node, nodes, max_count;
    int32_t only[3];  /* recommend: candidate GPU ids (n_only of them; 0 = every GPU) */
    uint32_t n_only;
} adv_case;

#define ADV_ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

/* Sets p = v when the library accepts it (a refused value leaves the job as it was). */
static void adv_set(gpufit_job *j, int32_t p, int64_t v)
{
    (void)gpufit_job_set_int(j, p, v, NULL);
}

/* Builds a random job from b; 1 when it evaluates (a valid job), 0 otherwise (c is freed). */
static int adv_build(adv_bytes *b, adv_case *c)
{
    static const char *const presets[] = {
        "llama-3-8b",   "llama-3-70b", "gpt2",    "mixtral-8x7b", "qwen3-30b-a3b",
        "qwen2.5-7b",   "bert-base",   "t5-base", "deepseek-v2-lite",
        "llama-3.2-1b", "mistral-7b",  "qwen1.5-moe-a2.7b",
    };
    static const int64_t pow2[] = {1, 2, 4, 8};
    static const int64_t seqs[] = {128, 512, 1024, 2048, 4096, 8192, 32768};
    static const int64_t gbs[] = {0, 0, 16, 64, 256, 1024};
    static const int64_t batches[] = {1, 4, 16, 64, 256};
    memset(c, 0, sizeof *c);
    if (gpufit_model_from_preset(&c->m, presets[adv_pick(b, ADV_ARRAY_N(presets))], NULL) !=
        GPUFIT_OK)
        ADV_FAIL("a preset of the advice check is missing");
    if (gpufit_job_new(&c->j, NULL) != GPUFIT_OK) {
        gpufit_model_free(c->m);
        return 0;
    }
    gpufit_job *j = c->j;
    int64_t task = adv_pick(b, 5);
    adv_set(j, GPUFIT_JOB_TASK, task);
    int inference = task == GPUFIT_TASK_INFERENCE;
    static const int64_t train_fw[] = {GPUFIT_FW_PYTORCH, GPUFIT_FW_MEGATRON, GPUFIT_FW_DEEPSPEED};
    static const int64_t serve_fw[] = {GPUFIT_FW_PYTORCH, GPUFIT_FW_VLLM, GPUFIT_FW_SGLANG,
                                       GPUFIT_FW_LLAMACPP};
    adv_set(j, GPUFIT_JOB_FRAMEWORK, inference ? serve_fw[adv_pick(b, 4)] : train_fw[adv_pick(b, 3)]);
    gpufit_gpu_info g = {.struct_size = sizeof g};
    uint32_t n_gpus = 0;
    while (gpufit_gpu_at(n_gpus, &g) == GPUFIT_OK)
        n_gpus++;
    if (gpufit_gpu_at(adv_pick(b, n_gpus), &g) == GPUFIT_OK)
        adv_set(j, GPUFIT_JOB_GPU, g.id);
    if (adv_pick(b, 8) == 0) /* a capacity override on top of the catalogue GPU */
        (void)gpufit_job_set_float(j, GPUFIT_JOB_GPU_MEMORY_GIB, 8.0 + adv_pick(b, 160), NULL);
    /* then up to 12 edits of the fields the advice decides or resets */
    uint32_t n_edits = adv_pick(b, 13);
    for (uint32_t k = 0; k < n_edits; k++) {
        uint8_t v = adv_byte(b);
        switch (adv_pick(b, 32)) {
        case 0: adv_set(j, GPUFIT_JOB_MICRO_BATCH, 1 + v % 16); break;
        case 1: adv_set(j, GPUFIT_JOB_SEQ_LEN, seqs[v % ADV_ARRAY_N(seqs)]); break;
        case 2: adv_set(j, GPUFIT_JOB_GLOBAL_BATCH, gbs[v % ADV_ARRAY_N(gbs)]); break;
        case 3: adv_set(j, GPUFIT_JOB_DP, pow2[v % 4]); break;
        case 4: adv_set(j, GPUFIT_JOB_TP, pow2[v % 4]); break;
        case 5: adv_set(j, GPUFIT_JOB_PP, 1 + v % 4); break;
        case 6: adv_set(j, GPUFIT_JOB_VPP, 1 + v % 2); break;
        case 7: adv_set(j, GPUFIT_JOB_CP, 1 + v % 2); break;
        case 8: adv_set(j, GPUFIT_JOB_ZERO, v % 4); break;
        case 9: adv_set(j, GPUFIT_JOB_PP_SCHEDULE, (int64_t)(v % 4) - 1); break;
        case 10: adv_set(j, GPUFIT_JOB_SP, v % 2); break;
        case 11: adv_set(j, GPUFIT_JOB_CHECKPOINTING, v % 4); break;
        case 12: adv_set(j, GPUFIT_JOB_ATTENTION, (int64_t)(v % 4) - 1); break;
        case 13: adv_set(j, GPUFIT_JOB_PRECISION, (int64_t)(v % 8) - 1); break;
        case 14: adv_set(j, GPUFIT_JOB_OPTIMIZER, v % 8); break;
        case 15: adv_set(j, GPUFIT_JOB_OFFLOAD, v % 3); break;
        case 16: adv_set(j, GPUFIT_JOB_PP_FIRST_LAYERS, v % 6); break;
        case 17: adv_set(j, GPUFIT_JOB_PP_LAST_LAYERS, v % 6); break;
        case 18: adv_set(j, GPUFIT_JOB_ZERO_SHARD_SIZE, pow2[v % 4]); break;
        case 19: adv_set(j, GPUFIT_JOB_GPUS, v % 3 == 0 ? 0 : pow2[v % 4] * 2); break;
        case 20: adv_set(j, GPUFIT_JOB_BATCH, batches[v % ADV_ARRAY_N(batches)]); break;
        case 21: adv_set(j, GPUFIT_JOB_CONTEXT_LEN, seqs[v % ADV_ARRAY_N(seqs)]); break;
        case 22: adv_set(j, GPUFIT_JOB_PROMPT_LEN, seqs[v % ADV_ARRAY_N(seqs)] / 2); break;
        case 23: adv_set(j, GPUFIT_JOB_N_GPU_LAYERS, (int64_t)(v % 40) - 1); break;
        case 24: {
            static const int64_t kv[] = {-1, GPUFIT_DTYPE_FP16, GPUFIT_DTYPE_FP8,
                                         GPUFIT_DTYPE_Q8_0, GPUFIT_DTYPE_Q4_0};
            adv_set(j, GPUFIT_JOB_KV_DTYPE, kv[v % ADV_ARRAY_N(kv)]);
            break;
        }
        case 25: {
            static const int64_t wd[] = {-1, GPUFIT_DTYPE_BF16, GPUFIT_DTYPE_FP8,
                                         GPUFIT_DTYPE_INT8, GPUFIT_DTYPE_AWQ4,
                                         GPUFIT_DTYPE_Q4_K_M};
            adv_set(j, GPUFIT_JOB_WEIGHT_DTYPE, wd[v % ADV_ARRAY_N(wd)]);
            break;
        }
        case 26:
            (void)gpufit_job_set_float(j, GPUFIT_JOB_GPU_MEMORY_UTILIZATION,
                                       v % 3 == 0 ? 0.0 : 0.5 + (v % 45) / 100.0, NULL);
            break;
        case 27: {
            double split[4] = {1.0 + v % 3, 1.0, 2.0, 1.0};
            (void)gpufit_job_set_list(j, GPUFIT_JOB_TENSOR_SPLIT, split, 1 + v % 4, NULL);
            break;
        }
        case 28: adv_set(j, GPUFIT_JOB_EP, pow2[v % 4]); break;
        case 29: adv_set(j, GPUFIT_JOB_ETP, v % 3); break;
        case 30: { /* a GPU per stage */
            double ids[4];
            uint32_t n = 1 + v % 4;
            for (uint32_t q = 0; q < n; q++)
                ids[q] = gpufit_gpu_at(adv_pick(b, n_gpus), &g) == GPUFIT_OK ? g.id : 0;
            (void)gpufit_job_set_list(j, GPUFIT_JOB_DEVICE_GPUS, ids, n, NULL);
            break;
        }
        case 31: { /* a capacity per stage */
            double gib[4] = {24.0, 80.0, 16.0 + v % 64, 48.0};
            (void)gpufit_job_set_list(j, GPUFIT_JOB_DEVICE_MEMORY_GIB, gib, 1 + v % 4, NULL);
            break;
        }
        }
    }
    c->gpus_per_node = (uint32_t)pow2[adv_pick(b, 3)]; /* at most 8 GPUs: a quick plan */
    c->nodes = 1 + adv_pick(b, 2);
    c->max_count = (uint32_t)pow2[adv_pick(b, 4)] * 4;
    c->n_only = adv_pick(b, 4);
    for (uint32_t k = 0; k < c->n_only; k++)
        if (gpufit_gpu_at(adv_pick(b, n_gpus), &g) == GPUFIT_OK)
            c->only[k] = g.id;
    gpufit_summary s = {.struct_size = sizeof s};
    if (gpufit_evaluate_summary(c->m, c->j, &s, NULL) != GPUFIT_OK) {
        gpufit_job_free(c->j);
        gpufit_model_free(c->m);
        return 0;
    }
    return 1;
}

static void adv_free(adv_case *c)
{
    gpufit_job_free(c->j);
    gpufit_model_free(c->m);
}

/* Keys of a spec in strictly increasing parameter-id order, each once ("gpu" is the job's GPU
 * id): the canonical form. */
static int adv_spec_canonical(const char *spec)
{
    int32_t last = 0;
    const char *p = spec;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        const char *eq = strchr(p, '=');
        if (eq == NULL)
            return *p == '\0';
        char key[64];
        size_t n = (size_t)(eq - p);
        if (n == 0 || n >= sizeof key)
            return 0;
        memcpy(key, p, n);
        key[n] = '\0';
        int32_t id = 0;
        if (gpufit_param_by_name(key, &id) != GPUFIT_OK || id <= last)
            return 0;
        last = id;
        p = strchr(eq, ' ');
        if (p == NULL)
            break;
    }
    return 1;
}

/* Applies an advice to a copy of the case's job three ways (the apply function when given,
 * the spec, the JSON) and checks each evaluates to peak and verdict exactly. what names the
 * advice in a failure. */
typedef int32_t (*adv_apply_fn)(gpufit_job *j, const void *src, uint32_t i, gpufit_error *err);

static int32_t adv_apply_list(gpufit_job *j, const void *src, uint32_t i, gpufit_error *err)
{
    return gpufit_job_apply_list_entry(j, (const gpufit_list *)src, i, err);
}

static int32_t adv_apply_mitigation(gpufit_job *j, const void *src, uint32_t i, gpufit_error *err)
{
    return gpufit_job_apply_mitigation(j, (const gpufit_result *)src, i, err);
}

static void adv_reproduces(const adv_case *c, const char *what, uint32_t i, adv_apply_fn apply,
                           const void *src, const char *spec, const char *json, uint64_t peak,
                           int32_t fits)
{
    if (spec == NULL || json == NULL || !adv_spec_canonical(spec))
        ADV_FAIL("%s %u: spec not canonical: '%s'", what, i, spec ? spec : "(null)");
    for (int way = 0; way < 3; way++) {
        gpufit_job *jj = NULL;
        gpufit_model *mm = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        if (gpufit_job_copy(&jj, c->j, NULL) != GPUFIT_OK ||
            gpufit_model_copy(&mm, c->m, NULL) != GPUFIT_OK)
            ADV_FAIL("%s: copy failed", what);
        int32_t st = way == 0   ? apply(jj, src, i, &err)
                     : way == 1 ? gpufit_apply_spec(NULL, jj, spec, &err)
                                : gpufit_apply_json(mm, jj, json, strlen(json), &err);
        if (st != GPUFIT_OK)
            ADV_FAIL("%s %u (%s) way %d: applying it failed: %s", what, i, spec, way,
                     err.message);
        gpufit_summary s = {.struct_size = sizeof s};
        st = gpufit_evaluate_summary(mm, jj, &s, &err);
        if (st != GPUFIT_OK)
            ADV_FAIL("%s %u (%s) way %d: the job it gives does not evaluate: %s", what, i, spec,
                     way, err.message);
        /* a mitigation's fits_after is "sure to fit" (the band's high end, docs/band.md) */
        int32_t got = strcmp(what, "mitigation") == 0
                          ? (s.verdict == GPUFIT_VERDICT_FITS ? 1 : s.fits < 0 ? -1 : 0)
                          : s.fits;
        if (s.peak_bytes != peak || got != fits)
            ADV_FAIL("%s %u (%s) way %d: printed %llu bytes fits=%d, applied %llu bytes fits=%d",
                     what, i, spec, way, (unsigned long long)peak, (int)fits,
                     (unsigned long long)s.peak_bytes, (int)got);
        gpufit_job_free(jj);
        gpufit_model_free(mm);
    }
}

/* Every plan layout, every recommendation and every ranked mitigation of c reproduces; the
 * largest value max_fitting finds fits. Returns how many advices were checked. */
static uint32_t adv_check(const adv_case *c)
{
    uint32_t checked = 0;
    gpufit_list *l = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (gpufit_plan(&l, c->m, c->j, c->gpus_per_node, c->nodes, 4, &err) != GPUFIT_OK)
        ADV_FAIL("plan failed on a valid job: %s", err.message);
    for (uint32_t i = 0; i < gpufit_list_count(l); i++, checked++) {
        gpufit_layout y = {.struct_size = sizeof y};
        if (gpufit_list_layout(l, i, &y) != GPUFIT_OK)
            ADV_FAIL("layout %u unreadable", i);
        adv_reproduces(c, "layout", i, adv_apply_list, l, y.spec, y.spec_json, y.peak_bytes, 1);
    }
    gpufit_list_free(l);
    l = NULL;
    if (gpufit_recommend(&l, c->m, c->j, c->n_only ? c->only : NULL, c->n_only, c->max_count,
                         &err) != GPUFIT_OK)
        ADV_FAIL("recommend failed on a valid job: %s", err.message);
    for (uint32_t i = 0; i < gpufit_list_count(l); i++, checked++) {
        gpufit_recommendation x = {.struct_size = sizeof x};
        if (gpufit_list_recommendation(l, i, &x) != GPUFIT_OK)
            ADV_FAIL("recommendation %u unreadable", i);
        adv_reproduces(c, "recommendation", i, adv_apply_list, l, x.spec, x.spec_json,
                       x.peak_bytes, x.fits);
    }
    gpufit_list_free(l);
    gpufit_result *r = NULL;
    if (gpufit_evaluate(&r, c->m, c->j, &err) != GPUFIT_OK)
        ADV_FAIL("evaluate failed on a valid job: %s", err.message);
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_result_summary(r, &s);
    for (uint32_t i = 0; i < s.n_mitigations; i++, checked++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        if (gpufit_result_mitigation(r, i, &mi) != GPUFIT_OK)
            ADV_FAIL("mitigation %u unreadable", i);
        adv_reproduces(c, "mitigation", i, adv_apply_mitigation, r, mi.changes, mi.changes_json,
                       mi.peak_bytes_after, mi.fits_after);
    }
    gpufit_result_free(r);
    /* max_fitting: the value found, set alone, fits */
    static const int32_t searched[] = {GPUFIT_JOB_MICRO_BATCH, GPUFIT_JOB_SEQ_LEN,
                                       GPUFIT_JOB_BATCH,       GPUFIT_JOB_CONTEXT_LEN,
                                       GPUFIT_JOB_PROMPT_LEN,  GPUFIT_JOB_N_GPU_LAYERS};
    for (size_t k = 0; k < ADV_ARRAY_N(searched); k++) {
        int64_t v = -1;
        int32_t st = gpufit_max_fitting(c->m, c->j, searched[k], &v, &err);
        if (st == GPUFIT_E_UNSUPPORTED)
            continue; /* does not apply to this job */
        if (st != GPUFIT_OK)
            ADV_FAIL("max_fitting(%d) failed on a valid job: %s", (int)searched[k], err.message);
        if (v <= 0)
            continue;
        gpufit_job *jj = NULL;
        if (gpufit_job_copy(&jj, c->j, NULL) != GPUFIT_OK ||
            gpufit_job_set_int(jj, searched[k], v, &err) != GPUFIT_OK)
            ADV_FAIL("max_fitting(%d) = %lld cannot be set: %s", (int)searched[k], (long long)v,
                     err.message);
        s = (gpufit_summary){.struct_size = sizeof s};
        if (gpufit_evaluate_summary(c->m, jj, &s, &err) != GPUFIT_OK || s.fits != 1)
            ADV_FAIL("max_fitting(%d) = %lld does not fit when set (%s)", (int)searched[k],
                     (long long)v, err.message);
        gpufit_job_free(jj);
        checked++;
    }
    return checked;
}

#endif /* GPUFIT_ADVICE_CHECK_H */
