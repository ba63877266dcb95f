/* SPDX-License-Identifier: MIT */
/* libFuzzer target: calibration (lib/api/calibrate.c) with arbitrary bytes, both ways in:
 * gpufit_job_apply_profile() on a profile and gpufit_calibrate() on measured runs.
 *
 * Besides memory safety (ASan/UBSan) it checks:
 * - a status is returned with a NUL-terminated one-line message, and an error with an offset
 *   has it within the input;
 * - atomicity: a refused profile leaves the job's evaluation unchanged;
 * - what gpufit_calibrate writes is itself a profile gpufit_job_apply_profile accepts. */
#include "fuzz_assert.h"
#include "gpufit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void message_ok(const gpufit_error *err)
{
    FZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
    FZ_CHECK(strchr(err->message, '\n') == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    FZ_CHECK(gpufit_model_from_preset(&m, "llama-3-8b", NULL) == GPUFIT_OK);
    FZ_CHECK(gpufit_job_new(&j, NULL) == GPUFIT_OK);
    FZ_CHECK(gpufit_apply_spec(NULL, j, "task=inference gpu=rtx-4090 context_len=4096", NULL) ==
             GPUFIT_OK);
    gpufit_summary before = {.struct_size = sizeof before}, after = before;
    FZ_CHECK(gpufit_evaluate_summary(m, j, &before, NULL) == GPUFIT_OK);

    /* 1: the bytes as a profile */
    int32_t st = gpufit_job_apply_profile(j, text, size, &err);
    FZ_CHECK(st == err.status);
    message_ok(&err);
    if (st != GPUFIT_OK) {
        FZ_CHECK(err.offset == UINT64_MAX || err.offset <= size);
        FZ_CHECK(gpufit_evaluate_summary(m, j, &after, NULL) == GPUFIT_OK);
        FZ_CHECK(after.peak_bytes == before.peak_bytes && after.verdict == before.verdict);
    } else {
        /* an accepted profile still evaluates (or fails cleanly) */
        gpufit_error e2 = GPUFIT_ERROR_INIT;
        int32_t s2 = gpufit_evaluate_summary(m, j, &after, &e2);
        FZ_CHECK(s2 == GPUFIT_OK || s2 == GPUFIT_E_OVERFLOW || s2 == GPUFIT_E_INCONSISTENT);
        message_ok(&e2);
    }

    /* 2: the bytes as measured runs (bounded: each line is a full evaluation) */
    if (size <= 4096) {
        char prof[2048];
        size_t len = 0;
        err = (gpufit_error)GPUFIT_ERROR_INIT;
        st = gpufit_calibrate(text, size, prof, sizeof prof, &len, &err);
        FZ_CHECK(st == err.status);
        message_ok(&err);
        if (st == GPUFIT_OK) {
            FZ_CHECK(len == strlen(prof));
            gpufit_job *k = NULL;
            FZ_CHECK(gpufit_job_new(&k, NULL) == GPUFIT_OK);
            gpufit_error e3 = GPUFIT_ERROR_INIT;
            FZ_CHECK(gpufit_job_apply_profile(k, prof, len, &e3) == GPUFIT_OK);
            gpufit_job_free(k);
        } else if (err.offset != UINT64_MAX) {
            FZ_CHECK(err.offset <= size);
        }
    }
    gpufit_job_free(j);
    gpufit_model_free(m);
    return 0;
}
