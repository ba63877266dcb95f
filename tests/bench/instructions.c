/* SPDX-License-Identifier: MIT */
/* make bench-instructions: the instructions one gpufit_evaluate_summary() takes, averaged over
 * the bench's four jobs (scenarios.h), and those of one cold job (new handles,
 * gpufit_apply_json of cold_json, gpufit_evaluate_summary, free), and those of one cell of a
 * gpufit_sweep over a 64 x 8 grid of a pre-training job (micro-batch 1-64 x 512-65,536 tokens,
 * as tools/bench_python.py's sweep). Run under `valgrind
 * --tool=callgrind --toggle-collect=measured_loop` (or cold_loop), the count is the same on any
 * machine and under any load, so it compares two versions of the code where timings on a
 * shared machine cannot. Run alone it only evaluates (a smoke test for make bench). */
#include "gpufit.h"
#include "scenarios.h"

#include <stdio.h>
#include <string.h>

#define ROUNDS 5000
#define COLD_ROUNDS 2000
#define SWEEP_ROUNDS 20 /* of 512 cells */

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

/* SWEEP_ROUNDS sweeps of 64 x 8 cells: counted with --toggle-collect=sweep_loop. */
__attribute__((noinline)) static uint64_t sweep_loop(const gpufit_model *m, const gpufit_job *j,
                                                     const int32_t *params, const double *values,
                                                     gpufit_summary *out, int32_t *status)
{
    static const uint32_t counts[2] = {64, 8};
    uint64_t sink = 0;
    for (int k = 0; k < SWEEP_ROUNDS; k++) {
        out[0].struct_size = sizeof out[0];
        if (gpufit_sweep(m, j, params, counts, values, 2, out, status, 512, NULL) == GPUFIT_OK)
            sink += out[511].peak_bytes;
    }
    return sink;
}

/* The sweep's job and grid: 1 if they cannot be set up. */
static uint64_t sweep_bench(void)
{
    static gpufit_summary out[512];
    static int32_t status[512];
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    int32_t params[2];
    double values[72];
    for (int i = 0; i < 64; i++)
        values[i] = i + 1;
    for (int k = 0; k < 8; k++)
        values[64 + k] = 512 << k;
    uint64_t sink = 0;
    if (gpufit_model_new(&m, NULL) == GPUFIT_OK && gpufit_job_new(&j, NULL) == GPUFIT_OK &&
        gpufit_apply_spec(m, j, "model=llama-3-8b task=pretrain gpu=h100 precision=bf16", NULL) ==
            GPUFIT_OK &&
        gpufit_param_by_name("micro_batch", &params[0]) == GPUFIT_OK &&
        gpufit_param_by_name("seq_len", &params[1]) == GPUFIT_OK)
        sink = sweep_loop(m, j, params, values, out, status);
    gpufit_model_free(m);
    gpufit_job_free(j);
    return sink;
}

int main(void)
{
    gpufit_model *m[N_SCEN];
    gpufit_job *j[N_SCEN];
    if (bench_setup("instructions", m, j))
        return 1;
    uint64_t sink = measured_loop(m, j), cold = cold_loop(), swept = sweep_bench();
    printf("instructions bench: %d estimates and %d cold jobs evaluated (checksums %llu, %llu); "
           "run it with make bench-instructions for the counts\n",
           (int)(ROUNDS * N_SCEN), COLD_ROUNDS, (unsigned long long)(sink % 1000003),
           (unsigned long long)(cold % 1000003));
    if (cold == 0 || swept == 0) {
        fprintf(stderr, "instructions bench: the cold job or the sweep failed\n");
        return 1;
    }
    for (size_t i = 0; i < N_SCEN; i++) {
        gpufit_model_free(m[i]);
        gpufit_job_free(j[i]);
    }
    return 0;
}
