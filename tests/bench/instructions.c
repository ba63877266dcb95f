/* SPDX-License-Identifier: MIT */
/* make bench-instructions: the instructions one gpufit_evaluate_summary() takes, averaged over
 * the bench's four jobs (scenarios.h), and those of one cold job (new handles,
 * gpufit_apply_json of cold_json, gpufit_evaluate_summary, free). Run under `valgrind
 * --tool=callgrind --toggle-collect=measured_loop` (or cold_loop), the count is the same on any
 * machine and under any load, so it compares two versions of the code where timings on a
 * shared machine cannot. Run alone it only evaluates (a smoke test for make bench). */
#include "gpufit.h"
#include "scenarios.h"

#include <stdio.h>
#include <string.h>

#define ROUNDS 5000
#define COLD_ROUNDS 2000

/* Kept out of line: callgrind counts the instructions of this function and its callees. */
__attribute__((noinline)) static uint64_t measured_loop(gpufit_model **m, gpufit_job **j)
{
    uint64_t sink = 0;
    for (int k = 0; k < ROUNDS; k++)
        for (size_t i = 0; i < N_SCEN; i++) {
            gpufit_summary sum = {.struct_size = sizeof sum};
            if (gpufit_evaluate_summary(m[i], j[i], &sum, NULL) == GPUFIT_OK)
                sink += sum.peak_bytes;
        }
    return sink;
}

/* The cold path, COLD_ROUNDS jobs: counted with --toggle-collect=cold_loop. */
__attribute__((noinline)) static uint64_t cold_loop(void)
{
    uint64_t sink = 0;
    size_t len = strlen(cold_json);
    for (int k = 0; k < COLD_ROUNDS; k++) {
        gpufit_model *m = NULL;
        gpufit_job *j = NULL;
        gpufit_summary sum = {.struct_size = sizeof sum};
        if (gpufit_model_new(&m, NULL) == GPUFIT_OK && gpufit_job_new(&j, NULL) == GPUFIT_OK &&
            gpufit_apply_json(m, j, cold_json, len, NULL) == GPUFIT_OK &&
            gpufit_evaluate_summary(m, j, &sum, NULL) == GPUFIT_OK)
            sink += sum.peak_bytes;
        gpufit_model_free(m);
        gpufit_job_free(j);
    }
    return sink;
}

int main(void)
{
    gpufit_model *m[N_SCEN];
    gpufit_job *j[N_SCEN];
    if (bench_setup("instructions", m, j))
        return 1;
    uint64_t sink = measured_loop(m, j), cold = cold_loop();
    printf("instructions bench: %d estimates and %d cold jobs evaluated (checksums %llu, %llu); "
           "run it with make bench-instructions for the counts\n",
           (int)(ROUNDS * N_SCEN), COLD_ROUNDS, (unsigned long long)(sink % 1000003),
           (unsigned long long)(cold % 1000003));
    if (cold == 0) {
        fprintf(stderr, "instructions bench: the cold job failed\n");
        return 1;
    }
    for (size_t i = 0; i < N_SCEN; i++) {
        gpufit_model_free(m[i]);
        gpufit_job_free(j[i]);
    }
    return 0;
}
