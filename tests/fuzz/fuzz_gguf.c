/* SPDX-License-Identifier: MIT */
/* libFuzzer target: gpufit_model_from_gguf() on arbitrary bytes (issue 5).
 *
 * Build (every lib .c file; -Ilib for internal.h and eval.h), or `make fuzz` (corpus
 * tests/fuzz/corpus/gguf/, written by tools/gen_reader_seeds.py; dictionary gguf.dict):
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Ilib tests/fuzz/fuzz_gguf.c lib/\*.c -lm
 *
 * Besides memory safety (ASan/UBSan) it checks:
 * - the status is one a reader may return and equals err.status; the message is one line;
 * - GPUFIT_E_BUFFER_TOO_SMALL asks for more than was given, and nothing else asks at all;
 * - a model comes back exactly on success, and reading twice gives the same bytes;
 * - a model read is a valid model: its counts, its exact weight bytes for every slice that
 *   evaluation can ask for, and its evaluation (a result or a precise error). */
#include "eval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int gpufit__weights_bytes_gguf(const struct gpufit_model *m,
                               const gpufit__plan *p,
                               const gpufit__shape *s,
                               const gpufit__slice *sl,
                               uint64_t *dev_out,
                               uint64_t *host_out);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check_error(int32_t st, const gpufit_error *err)
{
    CHECK(err->status == st);
    CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
    CHECK(strchr(err->message, '\n') == NULL);
    if (st == GPUFIT_OK)
        CHECK(err->message[0] == '\0');
    else
        CHECK(err->message[0] != '\0');
}

/* Evaluation of a model read from a file: a result whose components add up, or an error. */
static void evaluate(const gpufit_model *m, const char *spec)
{
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    CHECK(gpufit_job_new(&j, NULL) == GPUFIT_OK);
    CHECK(gpufit_apply_spec(NULL, j, spec, NULL) == GPUFIT_OK);
    int32_t st = gpufit_evaluate(&r, m, j, &err);
    check_error(st, &err);
    CHECK(st == GPUFIT_OK || st == GPUFIT_E_INVALID_ARG || st == GPUFIT_E_INCONSISTENT ||
          st == GPUFIT_E_OVERFLOW || st == GPUFIT_E_UNSUPPORTED);
    if (st == GPUFIT_OK) {
        gpufit_summary s = {.struct_size = sizeof s};
        CHECK(gpufit_result_summary(r, &s) == GPUFIT_OK);
        for (uint32_t i = 0; i < s.n_roles; i++) {
            gpufit_role_info ro = {.struct_size = sizeof ro};
            CHECK(gpufit_result_role(r, i, &ro) == GPUFIT_OK);
            uint64_t sum = 0;
            for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
                uint64_t b = 0;
                CHECK(gpufit_result_bytes(r, i, c, &b) == GPUFIT_OK);
                CHECK(!__builtin_add_overflow(sum, b, &sum));
            }
            CHECK(sum == ro.device_used_bytes);
        }
    }
    gpufit_result_free(r);
    gpufit_job_free(j);
}

/* The exact-bytes branch of mem_weights.c on the slices evaluation builds. */
static void slices(const gpufit_model *m)
{
    gpufit__shape s;
    if (gpufit__model_resolve(m, &s, NULL) != GPUFIT_OK)
        return;
    gpufit__plan p;
    memset(&p, 0, sizeof p);
    p.tp = p.pp = p.dp = p.ep = 1;
    uint64_t total = 0, dev = 0, host = 0, prev = 0;
    for (uint32_t i = 0; i < m->gguf_layers; i++)
        CHECK(!__builtin_add_overflow(total, m->gguf_layer_bytes[i], &total));
    for (int k = 0; k < 3; k++) { /* no layer, the first half, all of them */
        gpufit__slice sl;
        memset(&sl, 0, sizeof sl);
        for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++)
            sl.layers[w] = k == 0 ? 0 : k == 1 ? s.layers[w] / 2 : s.layers[w];
        sl.embedding = sl.output = k == 2;
        if (gpufit__weights_bytes_gguf(m, &p, &s, &sl, &dev, &host) == 0) {
            CHECK(dev >= prev);
            prev = dev;
            if (k == 2 && s.n_layers <= GPUFIT__GGUF_LAYERS_MAX)
                CHECK(dev >= total && host == m->gguf_token_embd_bytes);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpufit_model *m = (gpufit_model *)1, *m2 = NULL;
    uint64_t need = 1, need2 = 1;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_model_from_gguf(&m, data, size, &need, &err);
    check_error(st, &err);
    CHECK(st == GPUFIT_OK || st == GPUFIT_E_PARSE || st == GPUFIT_E_UNSUPPORTED ||
          st == GPUFIT_E_INVALID_ARG || st == GPUFIT_E_INCONSISTENT || st == GPUFIT_E_OVERFLOW ||
          st == GPUFIT_E_BUFFER_TOO_SMALL);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL)
        CHECK(need > size);
    else
        CHECK(need == 0);
    CHECK((st == GPUFIT_OK) == (m != NULL));
    CHECK(gpufit_model_from_gguf(&m2, data, size, &need2, NULL) == st && need2 == need);
    if (m == NULL)
        return 0;
    CHECK(memcmp(m, m2, sizeof *m) == 0);
    CHECK(m->gguf_layers >= 1 && m->gguf_layers <= GPUFIT__GGUF_LAYERS_MAX);
    uint64_t total = 0, active = 0;
    CHECK(gpufit_model_param_count(m, &total, &active, NULL) == GPUFIT_OK);
    CHECK(active <= total);
    slices(m);
    evaluate(m, "task=inference framework=llamacpp context_len=512 gpu=rtx-4090");
    evaluate(m, "task=inference framework=llamacpp n_gpu_layers=1 context_len=256");
    gpufit_model_free(m);
    gpufit_model_free(m2);
    return 0;
}
