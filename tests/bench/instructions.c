/* SPDX-License-Identifier: MIT */
/* make bench-instructions: the instructions one gpufit_evaluate_summary() takes, averaged over
 * the bench's four jobs (scenarios.h). Run under `valgrind --tool=callgrind
 * --toggle-collect=measured_loop`, the count is the same on any machine and under any load, so
 * it compares two versions of the code where timings on a shared machine cannot. Run alone it
 * only evaluates (a smoke test for make bench). */
#include "gpufit.h"
#include "scenarios.h"

#include <stdio.h>

#define ROUNDS 5000

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

int main(void)
{
    gpufit_model *m[N_SCEN];
    gpufit_job *j[N_SCEN];
    if (bench_setup("instructions", m, j))
        return 1;
    uint64_t sink = measured_loop(m, j);
    printf("instructions bench: %d estimates evaluated (checksum %llu); run it with make "
           "bench-instructions for the count\n",
           (int)(ROUNDS * N_SCEN), (unsigned long long)(sink % 1000003));
    for (size_t i = 0; i < N_SCEN; i++) {
        gpufit_model_free(m[i]);
        gpufit_job_free(j[i]);
    }
    return 0;
}
