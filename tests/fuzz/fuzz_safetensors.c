/* SPDX-License-Identifier: MIT */
/* libFuzzer target: gpufit_safetensors_read() on arbitrary bytes, then
 * gpufit_model_check_safetensors() against a preset (issue 5).
 *
 * Build (every lib .c file), or `make fuzz` (corpus tests/fuzz/corpus/safetensors/, written by
 * tools/gen_reader_seeds.py; dictionary safetensors.dict):
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Ilib tests/fuzz/fuzz_safetensors.c \
 *         lib/\*.c -lm
 *
 * Besides memory safety (ASan/UBSan) it checks:
 * - the status is one the reader may return and equals err.status; the message is one line;
 * - GPUFIT_E_BUFFER_TOO_SMALL asks for more than was given, and nothing else asks at all;
 * - on success of a binary header: the byte groups add up to total_bytes, the header fits in
 *   the input; an index gives total_bytes only; the output struct is not written on error;
 * - the cross-check answers OK, GPUFIT_E_INCONSISTENT (naming both counts) or
 *   GPUFIT_E_INVALID_ARG (no count). */
#include "gpufit.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpufit_safetensors_info info, before;
    memset(&info, 0xA5, sizeof info);
    info.struct_size = sizeof info;
    before = info;
    uint64_t need = 1;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_safetensors_read(&info, data, size, &need, &err);
    CHECK(err.status == st);
    CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    CHECK(st == GPUFIT_OK || st == GPUFIT_E_PARSE || st == GPUFIT_E_INVALID_ARG ||
          st == GPUFIT_E_BUFFER_TOO_SMALL);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL)
        CHECK(need > size);
    else
        CHECK(need == 0);
    if (st != GPUFIT_OK) {
        CHECK(memcmp(&info, &before, sizeof info) == 0);
        return 0;
    }
    CHECK(info.struct_size == sizeof info);
    if (info.header_bytes > 0) {
        CHECK(info.header_bytes <= size);
        CHECK(info.bytes_fp32 + info.bytes_16bit + info.bytes_8bit + info.bytes_other ==
              info.total_bytes);
    } else {
        CHECK(info.n_params == 0 && info.n_tensors == 0);
    }
    gpufit_model *m = NULL;
    CHECK(gpufit_model_from_preset(&m, "llama-3.2-1b", NULL) == GPUFIT_OK);
    gpufit_error e2 = GPUFIT_ERROR_INIT;
    int32_t cs = gpufit_model_check_safetensors(m, &info, &e2);
    CHECK(cs == e2.status);
    if (info.n_params == 0)
        CHECK(cs == GPUFIT_E_INVALID_ARG);
    else
        CHECK(cs == GPUFIT_OK || cs == GPUFIT_E_INCONSISTENT);
    if (cs == GPUFIT_E_INCONSISTENT) {
        char n[32];
        snprintf(n, sizeof n, "%llu", (unsigned long long)info.n_params);
        CHECK(strstr(e2.message, n) != NULL);
    }
    gpufit_model_free(m);
    return 0;
}
