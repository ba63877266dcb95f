/* SPDX-License-Identifier: MIT */
/* make snapshot: the library's answers to many scenarios, one line each, so that a change meant
 * to keep every output (a refactor, a speed-up, a build flag) can be checked byte for byte:
 *
 *   make snapshot                       # before: writes build/snapshot.txt
 *   cp build/snapshot.txt /tmp/before.txt
 *   ... change ...
 *   make snapshot SNAPSHOT_BASE=/tmp/before.txt   # after: compares, fails on any difference
 *
 * Scenario i (0 <= i < N, default 30,000) is a preset and a job template chosen by a fixed
 * pseudo-random sequence, applied with gpufit_apply_spec, then 0-4 parameters of the table set
 * through the typed setters to values the table names (enum values, bounds, powers of two,
 * fractions of a float's range); accepted or not, the calls' statuses are recorded. Each line
 * is `i hash summary_status evaluate_status`, where hash is FNV-1a over the spec, the setters'
 * statuses, the gpufit_evaluate_summary() struct (or its error message) and the full JSON report
 * of gpufit_evaluate() with its mitigations (or its error message). Deterministic: the same
 * library gives the same file on any machine. Public API only. */
#include "gpufit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull; /* xorshift64 */
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* fuzz_evaluate's job templates (tests/fuzz/job_templates.h), then the bench's jobs and a few
 * more layouts */
#include "job_templates.h"
#include "scenario_tables.h"
static const char *const more_jobs[] = {
    "task=inference gpu=rtx-4090 context_len=8192",
    "task=pretrain gpu=h100 tp=8 pp=4 dp=4 zero=1 precision=bf16 framework=megatron "
    "seq_len=8192 global_batch=256 sp=1 checkpointing=selective",
    "task=qlora gpu=t4 precision=fp16 seq_len=1024 checkpointing=full",
    "task=inference gpu=h100 weight_dtype=fp8 framework=vllm context_len=32768",
    "task=pretrain framework=deepspeed zero=1 dp=4 pp=2 gpu=a100-80gb",
    "task=finetune framework=pytorch zero=3 dp=8 gpu=h100 global_batch=64",
    "task=inference framework=llamacpp gpu=rtx-3090 n_gpu_layers=20",
    "task=inference framework=vllm gpu=a100-40gb tp=2",
};
#define N_MORE      (sizeof more_jobs / sizeof more_jobs[0])
#define N_JOBS      (N_TEMPLATES + N_MORE)
static char report[1 << 20];

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 30000;
    size_t n_params = 0;
    uint32_t n_presets = 0;
    load_scenario_tables(&n_params, &n_presets);
    if (n_params == 0 || n_presets == 0) {
        fprintf(stderr, "snapshot: no parameters or presets\n");
        return 1;
    }
    static const int64_t ints[] = {0,  1,   2,   3,    4,    8,    16,    32,
                                   64, 128, 512, 1024, 4096, 8192, 32768, -1};
    for (long i = 0; i < n; i++) {
        gpufit_model *m = NULL;
        gpufit_job *j = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        if (gpufit_model_new(&m, NULL) != GPUFIT_OK || gpufit_job_new(&j, NULL) != GPUFIT_OK) {
            fprintf(stderr, "snapshot: out of memory\n");
            return 1;
        }
        char spec[512];
        const char *preset = presets[next() % n_presets];
        size_t t = (size_t)(next() % N_JOBS);
        snprintf(spec, sizeof spec, "model=%s %s", preset,
                 t < N_TEMPLATES ? job_templates[t] : more_jobs[t - N_TEMPLATES]);
        int32_t st = gpufit_apply_spec(m, j, spec, &err);
        uint64_t h = fnv(spec, strlen(spec), 1469598103934665603ull);
        int changes = (int)(next() % 5);
        for (int k = 0; k < changes; k++) {
            const param *pi = &params[next() % n_params];
            int32_t id = pi->info.id, s2;
            int64_t v;
            if (pi->info.type == GPUFIT_TYPE_LIST)
                continue;
            int job = pi->info.domain == GPUFIT_DOMAIN_JOB;
            if (pi->n_values > 0) {
                v = pi->values[next() % pi->n_values];
            } else {
                v = ints[next() % (sizeof ints / sizeof ints[0])];
                v = v < pi->info.min_int   ? pi->info.min_int
                    : v > pi->info.max_int ? pi->info.max_int
                                           : v;
            }
            if (pi->info.type == GPUFIT_TYPE_FLOAT) {
                double d = pi->info.min_float + (pi->info.max_float - pi->info.min_float) *
                                                    (double)(next() % 1000) / 1000.0;
                if (!isfinite(d))
                    d = 0.5;
                s2 = job ? gpufit_job_set_float(j, id, d, NULL)
                         : gpufit_model_set_float(m, id, d, NULL);
            } else {
                s2 =
                    job ? gpufit_job_set_int(j, id, v, NULL) : gpufit_model_set_int(m, id, v, NULL);
            }
            h = fnv(&id, sizeof id, h);
            h = fnv(&v, sizeof v, h);
            h = fnv(&s2, sizeof s2, h);
        }
        gpufit_summary sum;
        memset(&sum, 0, sizeof sum);
        sum.struct_size = sizeof sum;
        int32_t s3 = gpufit_evaluate_summary(m, j, &sum, &err);
        h = fnv(&st, sizeof st, h);
        h = fnv(&s3, sizeof s3, h);
        h = s3 == GPUFIT_OK ? fnv(&sum, sizeof sum, h) : fnv(err.message, strlen(err.message), h);
        gpufit_result *r = NULL;
        int32_t s4 = gpufit_evaluate(&r, m, j, &err);
        h = fnv(&s4, sizeof s4, h);
        size_t len = 0;
        if (s4 != GPUFIT_OK)
            h = fnv(err.message, strlen(err.message), h);
        else if (gpufit_result_to_json(r, report, sizeof report, &len, NULL) == GPUFIT_OK)
            h = fnv(report, len, h);
        else
            h = fnv("(report too large)", 18, h);
        gpufit_result_free(r);
        printf("%ld %016llx %d %d\n", i, (unsigned long long)h, (int)s3, (int)s4);
        gpufit_model_free(m);
        gpufit_job_free(j);
    }
    return 0;
}
