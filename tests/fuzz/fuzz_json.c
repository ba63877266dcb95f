/* SPDX-License-Identifier: MIT */
/* libFuzzer target: gpufit_apply_json() on fresh handles with arbitrary bytes.
 *
 * Build (with every lib .c file; -Ilib for the internal JSON tokenizer):
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Ilib \
 *         tests/fuzz/fuzz_json.c LIB_SOURCES -lm -o fuzz_json
 * Run:  ./fuzz_json -dict=tests/fuzz/json.dict tests/fuzz/corpus/json
 *
 * Besides memory safety (ASan/UBSan) it checks:
 * - the returned status equals err.status, and the message is NUL-terminated and one line;
 * - a parse error has an offset within the input;
 * - the tokenizer and gpufit_apply_json agree on syntax: invalid JSON is always GPUFIT_E_PARSE,
 *   and valid JSON whose top-level value is an object never is;
 * - atomicity: on any error the model and job read back exactly as before. */
#include "gpufit.h"
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* Every parameter of both handles as raw bits, in table order (a list: its count, then its
 * elements). */
static size_t snapshot(const gpufit_model *m, const gpufit_job *j, uint64_t *out, size_t cap)
{
    size_t n = 0;
    for (int32_t p = gpufit_param_next(0); p != 0 && n < cap; p = gpufit_param_next(p)) {
        gpufit_param_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (gpufit_param_get_info(p, &info) != GPUFIT_OK)
            continue;
        uint64_t bits = 0;
        if (info.type == GPUFIT_TYPE_LIST) { /* the count, then each element's bits */
            double v[GPUFIT_LIST_MAX];
            uint32_t k = 0;
            (void)gpufit_job_get_list(j, p, v, GPUFIT_LIST_MAX, &k, NULL);
            out[n++] = k;
            for (uint32_t i = 0; i < k && i < GPUFIT_LIST_MAX && n < cap; i++)
                memcpy(&out[n++], &v[i], sizeof v[i]);
            continue;
        }
        if (info.type == GPUFIT_TYPE_FLOAT) {
            double d = 0.0;
            if (info.domain == GPUFIT_DOMAIN_MODEL)
                (void)gpufit_model_get_float(m, p, &d, NULL);
            else
                (void)gpufit_job_get_float(j, p, &d, NULL);
            memcpy(&bits, &d, sizeof bits);
        } else {
            int64_t v = 0;
            if (info.domain == GPUFIT_DOMAIN_MODEL)
                (void)gpufit_model_get_int(m, p, &v, NULL);
            else
                (void)gpufit_job_get_int(j, p, &v, NULL);
            bits = (uint64_t)v;
        }
        out[n++] = bits;
    }
    return n;
}

/* 1 when the first significant byte (after a UTF-8 BOM and whitespace) is '{'. */
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
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    if (gpufit_model_new(&m, NULL) != GPUFIT_OK || gpufit_job_new(&j, NULL) != GPUFIT_OK) {
        gpufit_model_free(m);
        return 0;
    }
    uint64_t before[512], after[512];
    size_t nb = snapshot(m, j, before, 512);
    char name_before[64];
    const char *nm = gpufit_model_name(m);
    strncpy(name_before, nm != NULL ? nm : "", sizeof name_before - 1);
    name_before[sizeof name_before - 1] = '\0';

    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_apply_json(m, j, (const char *)data, size, &err);

    CHECK(st == err.status);
    CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    if (st == GPUFIT_E_PARSE)
        CHECK(err.offset <= size);
    if (st == GPUFIT_OK)
        CHECK(err.offset == UINT64_MAX && err.message[0] == '\0');

    int32_t syntax = gpufit__json_validate((const char *)data, size, NULL);
    if (syntax != GPUFIT_OK)
        CHECK(st == GPUFIT_E_PARSE);
    else if (starts_with_object(data, size))
        CHECK(st != GPUFIT_E_PARSE);

    if (st != GPUFIT_OK) {
        size_t na = snapshot(m, j, after, 512);
        CHECK(na == nb && memcmp(before, after, nb * sizeof before[0]) == 0);
        nm = gpufit_model_name(m);
        CHECK(nm != NULL && strcmp(nm, name_before) == 0);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
    return 0;
}
