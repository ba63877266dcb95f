/* SPDX-License-Identifier: MIT */
/* Thread stress (issue 7): many threads use shared const handles at once, as gpufit.h allows
 * ("functions that take a const handle may run concurrently on the same handle; a
 * gpufit_result never changes after it is created").
 *
 * Single-threaded first, each scenario's model and job are built and evaluated, and its JSON
 * report kept as the reference. Then THREADS threads, released together, each run ITERATIONS
 * rounds over every scenario: evaluate the SHARED const model and job and compare the report
 * with the reference; read the one SHARED result (summary, roles, components, notes, JSON) and
 * compare; copy the shared handles and change the copies through setters and a spec (private
 * handles); use the static catalogues (parameters, presets, GPUs, status and component names).
 * Any difference, failed call or (under `make check-tsan`) data race fails the run.
 *
 * Usage: thread_stress [THREADS [ITERATIONS]]   (defaults 16 and 20)
 * Plain C11 + pthreads: Criterion aborts under ThreadSanitizer (Snaipe/Criterion#274). */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */

#include "gpufit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const scenarios[] = {
    "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192",
    "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=2 zero=1 precision=bf16 "
    "framework=megatron",
    "model=mixtral-8x7b task=inference framework=vllm gpu=h100 tp=2 ep=2",
    "model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024",
    "model=deepseek-v2-lite task=inference framework=sglang gpu=h200 batch=32",
    "model=llama-3.1-8b task=inference framework=llamacpp weight_dtype=q4_k_m n_gpu_layers=20",
    "model=llama-3-8b task=pretrain pp=4 vpp=2 global_batch=64 checkpointing=selective",
    "model=mistral-7b task=finetune framework=deepspeed zero=3 dp=8 offload=optimizer_params "
    "host_memory_bytes=64GiB",
    "model=gpt2 task=pretrain gpu=24GiB micro_batch=8",
    "model=t5-small task=pretrain seq_len=512 gpu=t4",
    "model=bert-base-uncased task=finetune micro_batch=32 seq_len=128",
    "arch=generic n_params=7500000000 task=pretrain precision=fp16 master_weights=fp32 dp=64 "
    "zero=2",
};
#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

typedef struct shared_scenario {
    gpufit_model *m; /* used as const by the threads */
    gpufit_job *j;
    char *json; /* reference report */
    size_t json_len;
} shared_scenario;

static shared_scenario shared[N_SCENARIOS];
static gpufit_result *shared_owner;        /* one result read by every thread ... */
static const gpufit_result *shared_result; /* ... only through this const pointer */
static char *shared_result_json;
static size_t shared_result_len;
static int iterations = 20;
static atomic_int failures;
static atomic_long evaluations;
static pthread_barrier_t start;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "thread_stress: " __VA_ARGS__);                                            \
        fputc('\n', stderr);                                                                       \
        atomic_fetch_add(&failures, 1);                                                            \
    } while (0)

/* The JSON report of r in a malloc'd buffer, or NULL. */
static char *report(const gpufit_result *r, size_t *len)
{
    size_t need = 0;
    if (gpufit_result_to_json(r, NULL, 0, &need, NULL) != GPUFIT_E_BUFFER_TOO_SMALL)
        return NULL;
    char *buf = malloc(need + 1);
    if (buf == NULL)
        return NULL;
    if (gpufit_result_to_json(r, buf, need + 1, len, NULL) != GPUFIT_OK || *len != need) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Reads everything a result offers; returns a checksum of the numbers. */
static uint64_t read_result(const gpufit_result *r)
{
    uint64_t sum = 0;
    gpufit_summary s = {.struct_size = sizeof s};
    if (gpufit_result_summary(r, &s) != GPUFIT_OK)
        FAIL("summary failed");
    sum += s.peak_bytes + s.n_params + (uint64_t)s.headroom_bytes;
    for (uint32_t i = 0; i < s.n_roles; i++) {
        gpufit_role_info ro = {.struct_size = sizeof ro};
        if (gpufit_result_role(r, i, &ro) != GPUFIT_OK || ro.name == NULL)
            FAIL("role %u failed", i);
        uint64_t total = 0;
        for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
            uint64_t b = 0;
            if (gpufit_result_bytes(r, i, c, &b) != GPUFIT_OK)
                FAIL("bytes of role %u component %d failed", i, c);
            total += b;
            if (gpufit_component_name(c) == NULL)
                FAIL("component %d has no name", c);
        }
        if (total != ro.device_used_bytes)
            FAIL("role %s: components %llu != used %llu", ro.name, (unsigned long long)total,
                 (unsigned long long)ro.device_used_bytes);
        sum += total;
    }
    for (uint32_t i = 0; i < s.n_notes; i++) {
        const char *t = NULL;
        if (gpufit_result_note(r, i, &t) != GPUFIT_OK || t == NULL)
            FAIL("note %u failed", i);
        else
            sum += strlen(t);
    }
    return sum;
}

/* Walks the static catalogues. */
static void read_catalogues(void)
{
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = {.struct_size = sizeof in};
        if (gpufit_param_get_info(p, &in) != GPUFIT_OK)
            FAIL("param %d info failed", p);
        int32_t back = 0;
        if (gpufit_param_by_name(in.name, &back) != GPUFIT_OK || back != p)
            FAIL("param %s by name failed", in.name);
        const char *vn = NULL;
        int64_t v = 0;
        if (gpufit_param_value_at(p, 0, &v, &vn) == GPUFIT_OK && vn != NULL) {
            int64_t again = 0;
            if (gpufit_param_value_by_name(p, vn, &again) != GPUFIT_OK || again != v)
                FAIL("value %s of %s failed", vn, in.name);
        }
    }
    gpufit_preset_info pr = {.struct_size = sizeof pr};
    for (uint32_t i = 0; gpufit_preset_at(i, &pr) == GPUFIT_OK; i++, pr.struct_size = sizeof pr)
        if (pr.name == NULL)
            FAIL("preset %u has no name", i);
    gpufit_gpu_info g = {.struct_size = sizeof g};
    for (uint32_t i = 0; gpufit_gpu_at(i, &g) == GPUFIT_OK; i++, g.struct_size = sizeof g) {
        gpufit_gpu_info back = {.struct_size = sizeof back};
        if (gpufit_gpu_by_name(g.key, &back) != GPUFIT_OK || back.id != g.id)
            FAIL("gpu %s by name failed", g.key);
    }
    for (int32_t st = 0; st >= -10; st--)
        if (gpufit_status_str(st) == NULL)
            FAIL("status %d has no text", st);
    if (gpufit_version_number() != GPUFIT_VERSION_NUMBER)
        FAIL("version");
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    pthread_barrier_wait(&start);
    for (int it = 0; it < iterations; it++) {
        for (size_t k = 0; k < N_SCENARIOS; k++) {
            size_t i = (k + id) % N_SCENARIOS; /* threads start at different scenarios */
            const gpufit_model *m = shared[i].m;
            const gpufit_job *j = shared[i].j;
            gpufit_error err = GPUFIT_ERROR_INIT;
            gpufit_result *r = NULL;
            if (gpufit_evaluate(&r, m, j, &err) != GPUFIT_OK) {
                FAIL("scenario %zu: evaluate: %s", i, err.message);
                continue;
            }
            atomic_fetch_add(&evaluations, 1);
            size_t len = 0;
            char *json = report(r, &len);
            if (json == NULL || len != shared[i].json_len || memcmp(json, shared[i].json, len) != 0)
                FAIL("scenario %zu: the report differs from the single-threaded one", i);
            free(json);
            (void)read_result(r);
            gpufit_result_free(r);

            /* the one shared result */
            (void)read_result(shared_result);
            json = report(shared_result, &len);
            if (json == NULL || len != shared_result_len ||
                memcmp(json, shared_result_json, len) != 0)
                FAIL("the shared result's report changed");
            free(json);

            /* const reads of the shared handles */
            uint64_t total = 0, active = 0;
            if (gpufit_model_param_count(m, &total, &active, NULL) != GPUFIT_OK || total == 0)
                FAIL("scenario %zu: param_count", i);
            int64_t v = 0;
            if (gpufit_job_get_int(j, GPUFIT_JOB_TASK, &v, NULL) != GPUFIT_OK)
                FAIL("scenario %zu: get task", i);
            if (gpufit_model_name(m) == NULL)
                FAIL("scenario %zu: model name", i);

            /* private copies, changed and evaluated */
            gpufit_model *mc = NULL;
            gpufit_job *jc = NULL;
            if (gpufit_model_copy(&mc, m, NULL) != GPUFIT_OK ||
                gpufit_job_copy(&jc, j, NULL) != GPUFIT_OK) {
                FAIL("scenario %zu: copy", i);
            } else {
                char spec[64];
                /* powers of two: they divide every scenario's global batch */
                snprintf(spec, sizeof spec, "micro_batch=%u batch=%u", 1u << ((id + it) % 4),
                         1 + (id + it) % 8);
                if (gpufit_apply_spec(mc, jc, spec, &err) != GPUFIT_OK)
                    FAIL("scenario %zu: spec on a copy: %s", i, err.message);
                if (gpufit_job_set_int(jc, GPUFIT_JOB_TP, 0, &err) != GPUFIT_E_INVALID_ARG)
                    FAIL("scenario %zu: tp=0 accepted", i);
                gpufit_result *rc = NULL;
                if (gpufit_evaluate(&rc, mc, jc, &err) != GPUFIT_OK)
                    FAIL("scenario %zu: evaluate the copy: %s", i, err.message);
                else
                    (void)read_result(rc);
                gpufit_result_free(rc);
            }
            gpufit_model_free(mc);
            gpufit_job_free(jc);
        }
        if (it % 4 == 0)
            read_catalogues();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    iterations = argc > 2 ? atoi(argv[2]) : 20;
    if (threads < 1 || threads > 1024 || iterations < 1) {
        fprintf(stderr, "usage: thread_stress [THREADS [ITERATIONS]]\n");
        return 2;
    }
    /* Single-threaded reference, from handles of their own: the shared handles are first
     * evaluated by the threads, all at once (a lazily filled cache would race there). */
    for (size_t i = 0; i < N_SCENARIOS; i++) {
        gpufit_error err = GPUFIT_ERROR_INIT;
        gpufit_model *rm = NULL;
        gpufit_job *rj = NULL;
        gpufit_result *r = NULL;
        if (gpufit_model_new(&rm, &err) != GPUFIT_OK || gpufit_job_new(&rj, &err) != GPUFIT_OK ||
            gpufit_apply_spec(rm, rj, scenarios[i], &err) != GPUFIT_OK ||
            gpufit_evaluate(&r, rm, rj, &err) != GPUFIT_OK ||
            gpufit_model_new(&shared[i].m, &err) != GPUFIT_OK ||
            gpufit_job_new(&shared[i].j, &err) != GPUFIT_OK ||
            gpufit_apply_spec(shared[i].m, shared[i].j, scenarios[i], &err) != GPUFIT_OK) {
            fprintf(stderr, "thread_stress: scenario '%s': %s\n", scenarios[i], err.message);
            return 1;
        }
        shared[i].json = report(r, &shared[i].json_len);
        if (shared[i].json == NULL) {
            fprintf(stderr, "thread_stress: no report for '%s'\n", scenarios[i]);
            return 1;
        }
        if (i == 1) {
            shared_owner = r;
            shared_result = r;
            shared_result_json = report(r, &shared_result_len);
        } else {
            gpufit_result_free(r);
        }
        gpufit_model_free(rm);
        gpufit_job_free(rj);
    }
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (tid == NULL || pthread_barrier_init(&start, NULL, (unsigned)threads) != 0) {
        fprintf(stderr, "thread_stress: setup failed\n");
        return 1;
    }
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
            fprintf(stderr, "thread_stress: pthread_create failed\n");
            return 1; /* the barrier would never open */
        }
    }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&start);
    free(tid);
    /* the shared handles and result are unchanged after all that */
    for (size_t i = 0; i < N_SCENARIOS; i++) {
        gpufit_result *r = NULL;
        size_t len = 0;
        char *json = NULL;
        if (gpufit_evaluate(&r, shared[i].m, shared[i].j, NULL) != GPUFIT_OK ||
            (json = report(r, &len)) == NULL || len != shared[i].json_len ||
            memcmp(json, shared[i].json, len) != 0)
            FAIL("scenario %zu changed after the threads ran", i);
        free(json);
        gpufit_result_free(r);
        free(shared[i].json);
        gpufit_model_free(shared[i].m);
        gpufit_job_free(shared[i].j);
    }
    gpufit_result_free(shared_owner);
    free(shared_result_json);
    int f = atomic_load(&failures);
    printf(
        "thread_stress: %d threads x %d rounds x %zu scenarios: %ld evaluations, %d failure(s)\n",
        threads, iterations, N_SCENARIOS, atomic_load(&evaluations), f);
    return f == 0 ? 0 : 1;
}
