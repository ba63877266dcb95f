/* SPDX-License-Identifier: MIT */
/* libFuzzer target: gpufit_model_from_hf_config() on arbitrary text (issue 5).
 *
 * Build (every lib .c file; -Ilib for the internal JSON tokenizer), or `make fuzz` (corpus
 * tests/fuzz/corpus/hf_config/ = the fixtures of tests/data/hf/; dictionary hf_config.dict):
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Ilib tests/fuzz/fuzz_hf_config.c \
 *         lib/\*.c -lm
 *
 * Besides memory safety (ASan/UBSan) it checks:
 * - the status is one the reader may return and equals err.status; the message is one line;
 * - syntax agrees with the tokenizer: invalid JSON is GPUFIT_E_PARSE with an offset inside the
 *   input, and a valid JSON object is never a parse error;
 * - a model comes back exactly on success; it counts and evaluates (a result or an error). */
#include "gpufit.h"
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static int starts_with_object(const uint8_t *d, size_t n)
{
    size_t i = 0;
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF)
        i = 3;
    while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
        i++;
    return i < n && d[i] == '{';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpufit_model *m = (gpufit_model *)1;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_model_from_hf_config(&m, (const char *)data, size, &err);
    CHECK(err.status == st);
    CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    CHECK(st == GPUFIT_OK || st == GPUFIT_E_PARSE || st == GPUFIT_E_UNSUPPORTED ||
          st == GPUFIT_E_INVALID_ARG || st == GPUFIT_E_INCONSISTENT || st == GPUFIT_E_OVERFLOW);
    CHECK((st == GPUFIT_OK) == (m != NULL));
    if (st == GPUFIT_E_PARSE)
        CHECK(err.offset <= size);
    int32_t syntax = gpufit__json_validate((const char *)data, size, NULL);
    if (syntax != GPUFIT_OK)
        CHECK(st == GPUFIT_E_PARSE);
    else if (starts_with_object(data, size))
        CHECK(st != GPUFIT_E_PARSE);
    if (m == NULL)
        return 0;
    uint64_t total = 0, active = 0;
    CHECK(gpufit_model_param_count(m, &total, &active, NULL) == GPUFIT_OK);
    CHECK(active <= total && total > 0);
    CHECK(strlen(gpufit_model_name(m)) < 64);
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    CHECK(gpufit_job_new(&j, NULL) == GPUFIT_OK);
    CHECK(gpufit_apply_spec(NULL, j, "task=inference gpu=h100 context_len=1024", NULL) ==
          GPUFIT_OK);
    gpufit_error e2 = GPUFIT_ERROR_INIT;
    int32_t es = gpufit_evaluate(&r, m, j, &e2);
    CHECK(es == e2.status);
    CHECK(es == GPUFIT_OK || es == GPUFIT_E_INVALID_ARG || es == GPUFIT_E_INCONSISTENT ||
          es == GPUFIT_E_OVERFLOW || es == GPUFIT_E_UNSUPPORTED);
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return 0;
}
