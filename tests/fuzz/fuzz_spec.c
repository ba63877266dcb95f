/* SPDX-License-Identifier: MIT */
/* libFuzzer target: gpufit_apply_spec() with arbitrary text (issue 7).
 *
 * Built and run by `make fuzz` / `make fuzz-replay` (corpus tests/fuzz/corpus/spec/, dictionary
 * tests/fuzz/spec.dict). The input is the spec string (up to its first NUL byte).
 *
 * Besides memory safety (ASan/UBSan) it checks:
 * - the status is one of those apply_spec can return, equals err.status, and the message is one
 *   non-empty line that names the parameter err.param points at;
 * - the error offset lies within the spec; a bad key=value pair is pointed at by its key;
 * - atomicity: on any error the model and job read back exactly as before;
 * - round trip: after a success, every parameter written back as text ("name=value ...") and
 *   applied to fresh handles reads back bit for bit, and both evaluate to the same numbers;
 * - evaluation of what was applied is either a precise error or a result whose components add
 *   up (fuzz_check.h). */
#include "fuzz_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

/* Appends "name=value " for every parameter of m and j to buf; returns 0, or 1 if too long. */
static int write_spec(const gpufit_model *m, const gpufit_job *j, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        FZ_CHECK(gpufit_param_get_info(p, &in) == GPUFIT_OK);
        int model = in.domain == GPUFIT_DOMAIN_MODEL;
        char val[GPUFIT_LIST_MAX * 26];
        /* one capacity key per spec (both are an error): gpu_memory_gib when it gives the
         * bytes exactly (it sets both), else gpu_memory_bytes (which sets the GiB) */
        if (p == GPUFIT_JOB_GPU_MEMORY_BYTES || p == GPUFIT_JOB_GPU_MEMORY_GIB) {
            double gib = 0.0;
            int64_t bytes = 0;
            FZ_CHECK(gpufit_job_get_float(j, GPUFIT_JOB_GPU_MEMORY_GIB, &gib, NULL) == GPUFIT_OK);
            FZ_CHECK(gpufit_job_get_int(j, GPUFIT_JOB_GPU_MEMORY_BYTES, &bytes, NULL) ==
                     GPUFIT_OK);
            int by_gib = gib > 0.0 && llround(gib * 1073741824.0) == bytes;
            if (by_gib != (p == GPUFIT_JOB_GPU_MEMORY_GIB))
                continue;
        }
        /* Values at their default are left out: fresh handles have them, and some defaults
         * (n_layers = 0: "not set") lie outside the range a setter accepts. */
        if (in.type == GPUFIT_TYPE_LIST) { /* "a,b,...": exact with %.17g; empty: left out */
            double v[GPUFIT_LIST_MAX];
            uint32_t k = 0;
            FZ_CHECK(gpufit_job_get_list(j, p, v, GPUFIT_LIST_MAX, &k, NULL) == GPUFIT_OK);
            if (k == 0)
                continue;
            size_t at = 0;
            for (uint32_t i = 0; i < k; i++)
                at +=
                    (size_t)snprintf(val + at, sizeof val - at, "%s%.17g", i > 0 ? "," : "", v[i]);
            FZ_CHECK(at < sizeof val);
        } else if (in.type == GPUFIT_TYPE_FLOAT) {
            double d = 0.0;
            FZ_CHECK((model ? gpufit_model_get_float(m, p, &d, NULL)
                            : gpufit_job_get_float(j, p, &d, NULL)) == GPUFIT_OK);
            if (memcmp(&d, &in.default_float, sizeof d) == 0)
                continue;
            snprintf(val, sizeof val, "%.17g", d);
        } else {
            int64_t v = 0;
            FZ_CHECK((model ? gpufit_model_get_int(m, p, &v, NULL)
                            : gpufit_job_get_int(j, p, &v, NULL)) == GPUFIT_OK);
            if (v == in.default_int)
                continue;
            const char *name = gpufit_param_value_name(p, v);
            if (p == GPUFIT_JOB_GPU && v < 0)
                snprintf(val, sizeof val, "none");
            else if (v == -1 && in.min_int == -1 && name == NULL)
                snprintf(val, sizeof val, "auto");
            else if (name != NULL)
                snprintf(val, sizeof val, "%s", name);
            else if (strcmp(in.unit, "version") == 0) /* stored major*1e6+minor*1e3+patch */
                snprintf(val, sizeof val, "%lld.%lld.%lld", (long long)(v / 1000000),
                         (long long)(v / 1000 % 1000), (long long)(v % 1000));
            else
                snprintf(val, sizeof val, "%lld", (long long)v);
        }
        int w = snprintf(buf + n, cap - n, "%s=\"%s\" ", in.name, val);
        if (w < 0 || (size_t)w >= cap - n)
            return 1;
        n += (size_t)w;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (spec == NULL)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    size_t len = strlen(spec);

    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    FZ_CHECK(gpufit_model_new(&m, NULL) == GPUFIT_OK && gpufit_job_new(&j, NULL) == GPUFIT_OK);
    static uint64_t before[FZ_MAX_PARAMS], after[FZ_MAX_PARAMS];
    size_t nb = fz_snapshot(m, j, before);

    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_apply_spec(m, j, spec, &err);
    fz_check_error(st, &err);
    /* INCONSISTENT: two keys that set one thing (gpu_memory_gib with gpu_memory_bytes). */
    FZ_CHECK(st == GPUFIT_OK || st == GPUFIT_E_INVALID_ARG || st == GPUFIT_E_UNKNOWN_PARAM ||
             st == GPUFIT_E_PARSE || st == GPUFIT_E_NOT_FOUND || st == GPUFIT_E_INCONSISTENT);
    if (st != GPUFIT_OK) {
        FZ_CHECK(err.offset <= len);
        if (st != GPUFIT_E_PARSE) { /* the offset of the offending pair's key */
            FZ_CHECK(err.offset < len && !is_sep(spec[err.offset]));
            FZ_CHECK(err.offset == 0 || is_sep(spec[err.offset - 1]));
        }
        size_t na = fz_snapshot(m, j, after);
        FZ_CHECK(na == nb && memcmp(before, after, nb * sizeof before[0]) == 0);
        FZ_CHECK(strcmp(gpufit_model_name(m), "custom") == 0);
    } else {
        /* round trip through text */
        static char text[FZ_MAX_PARAMS * 96];
        FZ_CHECK(write_spec(m, j, text, sizeof text) == 0);
        gpufit_model *m2 = NULL;
        gpufit_job *j2 = NULL;
        FZ_CHECK(gpufit_model_new(&m2, NULL) == GPUFIT_OK);
        FZ_CHECK(gpufit_job_new(&j2, NULL) == GPUFIT_OK);
        gpufit_error e2 = GPUFIT_ERROR_INIT;
        int32_t st2 = gpufit_apply_spec(m2, j2, text, &e2);
        if (st2 != GPUFIT_OK)
            fprintf(stderr, "round trip of '%s' failed: %s\n", text, e2.message);
        FZ_CHECK(st2 == GPUFIT_OK);
        nb = fz_snapshot(m, j, before);
        size_t na = fz_snapshot(m2, j2, after);
        FZ_CHECK(na == nb);
        for (size_t i = 0; i < nb; i++) {
            if (before[i] != after[i])
                fprintf(stderr, "round trip: parameter #%zu differs in '%s'\n", i, text);
            FZ_CHECK(before[i] == after[i]);
        }
        gpufit_result *r1 = NULL, *r2 = NULL;
        int32_t s1 = fz_evaluate(m, j, &r1);
        int32_t s2 = fz_evaluate(m2, j2, &r2);
        FZ_CHECK(s1 == s2);
        if (s1 == GPUFIT_OK)
            fz_check_same(r1, r2);
        gpufit_result_free(r1);
        gpufit_result_free(r2);
        gpufit_model_free(m2);
        gpufit_job_free(j2);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
    free(spec);
    return 0;
}
