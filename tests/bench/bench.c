/* SPDX-License-Identifier: MIT */
/* make bench: single estimates per second on one core, and the time of the DeepSeek-R1 671B
 * layout search on 2,048 H100s (issue #4 targets: >= 5 million estimates per second and the
 * 671B search in under one second). A program, not a test: the machine may be noisy, so each
 * figure is the best of several runs. */
#define _POSIX_C_SOURCE 199309L
#include "gpufit.h"
#include "scenarios.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
    gpufit_model *m[N_SCEN];
    gpufit_job *j[N_SCEN];
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (bench_setup("bench", m, j))
        return 1;
    uint64_t sink = 0;
    double best_public = 0.0, best_summary = 0.0;
    for (int rep = 0; rep < 5; rep++) {
        /* the public path: gpufit_evaluate() allocates the result, gpufit_result_free() */
        long n = 0;
        double t0 = now();
        while (now() - t0 < 0.4) {
            for (int k = 0; k < 1000; k++, n++) {
                gpufit_result *res = NULL;
                gpufit_evaluate(&res, m[n % N_SCEN], j[n % N_SCEN], NULL);
                sink += res != NULL;
                gpufit_result_free(res);
            }
        }
        double rate = (double)n / (now() - t0);
        best_public = rate > best_public ? rate : best_public;
        /* the allocation-free public path for schedulers and planners */
        n = 0;
        t0 = now();
        while (now() - t0 < 0.4) {
            for (int k = 0; k < 1000; k++, n++) {
                gpufit_summary sum = {.struct_size = sizeof sum};
                gpufit_evaluate_summary(m[n % N_SCEN], j[n % N_SCEN], &sum, NULL);
                sink += sum.peak_bytes;
            }
        }
        rate = (double)n / (now() - t0);
        best_summary = rate > best_summary ? rate : best_summary;
    }
    /* the cold path, what a scheduler does per submitted job (issue 16): new handles, the
     * scenario as JSON, the verdict, free; then where its time goes, stage by stage (each
     * stage adds one step to the one before: best of 5, ns per job) */
    static const struct {
        const char *what, *json;
        int evaluate;
    } stages[] = {
        {"new model and job handles, free", NULL, 0},
        {"+ gpufit_apply_json of {}", "{}", 0},
        {"+ a preset (\"model\": \"llama-3-70b\")", "{\"model\": \"llama-3-70b\"}", 0},
        {"+ the GPU and 11 more keys (the scenario above)", cold_json, 0},
        {"+ gpufit_evaluate_summary (the cold path)", cold_json, 1},
        /* not part of the cold path: what the same evaluation costs once its code is warm */
        {"+ a second gpufit_evaluate_summary of the job", cold_json, 2},
    };
    enum { N_STAGES = sizeof stages / sizeof stages[0], COLD = N_STAGES - 2 };
    double stage_ns[N_STAGES];
    for (int st = 0; st < N_STAGES; st++) {
        double best = 0.0;
        size_t jl = stages[st].json != NULL ? strlen(stages[st].json) : 0;
        for (int rep = 0; rep < 5; rep++) {
            long n = 0;
            double t0 = now();
            while (now() - t0 < 0.2) {
                for (int k = 0; k < 100; k++, n++) {
                    gpufit_model *cm = NULL;
                    gpufit_job *cj = NULL;
                    gpufit_summary sum = {.struct_size = sizeof sum};
                    if (gpufit_model_new(&cm, NULL) == GPUFIT_OK &&
                        gpufit_job_new(&cj, NULL) == GPUFIT_OK &&
                        (stages[st].json == NULL ||
                         gpufit_apply_json(cm, cj, stages[st].json, jl, NULL) == GPUFIT_OK) &&
                        (stages[st].evaluate < 1 ||
                         gpufit_evaluate_summary(cm, cj, &sum, NULL) == GPUFIT_OK) &&
                        (stages[st].evaluate < 2 ||
                         gpufit_evaluate_summary(cm, cj, &sum, NULL) == GPUFIT_OK))
                        sink += sum.peak_bytes + 1;
                    gpufit_model_free(cm);
                    gpufit_job_free(cj);
                }
            }
            double rate = (double)n / (now() - t0);
            best = rate > best ? rate : best;
        }
        stage_ns[st] = 1e9 / best;
    }
    double best_cold = 1e9 / stage_ns[COLD];
    printf("single estimates per second, one core (4 scenarios in turn, best of 5):\n");
    printf("  gpufit_evaluate + gpufit_result_free    : %10.0f /s\n", best_public);
    printf("  gpufit_evaluate_summary (no allocation) : %10.0f /s\n", best_summary);
    printf("  cold: new handles + gpufit_apply_json + gpufit_evaluate_summary + free: %10.0f jobs/s "
           "(%.1f %% of gpufit_evaluate_summary; issue 16 target >= 1,000,000: %s)\n",
           best_cold, 100.0 * best_cold / best_summary, best_cold >= 1e6 ? "met" : "missed");
    printf("  where a cold job's time goes (ns per job; each stage adds one step; the last is\n"
           "  past the cold path: a first evaluation after reading runs on cold branch predictors\n"
           "  and instruction caches, a second one of the same job on warm ones):\n");
    for (int st = 0; st < N_STAGES; st++)
        printf("    %-52s %6.0f ns  (+%5.0f ns, %4.1f %% of the cold path)\n", stages[st].what,
               stage_ns[st], st > 0 ? stage_ns[st] - stage_ns[st - 1] : stage_ns[0],
               100.0 * (st > 0 ? stage_ns[st] - stage_ns[st - 1] : stage_ns[0]) /
                   stage_ns[COLD]);

    gpufit_model *dm = NULL;
    gpufit_job *dj = NULL;
    if (gpufit_model_new(&dm, &err) || gpufit_job_new(&dj, &err) ||
        gpufit_apply_spec(dm, dj,
                          "model=deepseek-r1 task=pretrain gpu=h100 precision=bf16 "
                          "framework=megatron seq_len=4096 global_batch=4096",
                          &err)) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    double best_plan = 1e9;
    uint64_t evaluated = 0;
    uint32_t kept = 0;
    for (int rep = 0; rep < 3; rep++) {
        gpufit_list *l = NULL;
        double t0 = now();
        if (gpufit_plan(&l, dm, dj, 8, 256, 10, &err) != GPUFIT_OK) {
            fprintf(stderr, "bench: plan: %s\n", err.message);
            return 1;
        }
        double t = now() - t0;
        best_plan = t < best_plan ? t : best_plan;
        evaluated = gpufit_list_evaluated(l);
        kept = gpufit_list_count(l);
        gpufit_list_free(l);
    }
    printf("DeepSeek-R1 671B layout search on 256 x 8 H100: %.3f s (%llu layouts evaluated, "
           "%u kept, best of 3)\n",
           best_plan, (unsigned long long)evaluated, kept);
    printf("targets: >= 5,000,000 estimates/s: %s (gpufit_evaluate), %s "
           "(gpufit_evaluate_summary); 671B search < 1 s: %s\n",
           best_public >= 5e6 ? "met" : "missed", best_summary >= 5e6 ? "met" : "missed",
           best_plan < 1.0 ? "met" : "missed");
    for (size_t i = 0; i < N_SCEN; i++) {
        gpufit_model_free(m[i]);
        gpufit_job_free(j[i]);
    }
    gpufit_model_free(dm);
    gpufit_job_free(dj);
    return sink == 0; /* keeps the loops from being optimised away */
}
