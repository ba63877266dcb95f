/* SPDX-License-Identifier: MIT */
/* Shared checks of the libFuzzer targets fuzz_spec.c and fuzz_evaluate.c (issue 7).
 *
 * Every check aborts on failure, so that libFuzzer records the input as a crash. The checks
 * only use the public API (and, for the JSON report, the internal tokenizer of lib/json.h). */
#ifndef GPUFIT_FUZZ_CHECK_H
#define GPUFIT_FUZZ_CHECK_H

#include "gpufit.h"
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_assert.h"

#define FZ_MAX_PARAMS 512

/* Every parameter of both handles as raw bits, in table order (a list: its count, then its
 * elements); returns the count. */
static size_t fz_snapshot(const gpufit_model *m, const gpufit_job *j, uint64_t *out)
{
    size_t n = 0;
    for (int32_t p = gpufit_param_next(0); p != 0 && n < FZ_MAX_PARAMS; p = gpufit_param_next(p)) {
        gpufit_param_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        FZ_CHECK(gpufit_param_get_info(p, &info) == GPUFIT_OK);
        uint64_t bits = 0;
        int model = info.domain == GPUFIT_DOMAIN_MODEL;
        if ((model && m == NULL) || (!model && j == NULL)) {
            out[n++] = 0;
            continue;
        }
        if (info.type == GPUFIT_TYPE_LIST) { /* the count, then each element's bits */
            double v[GPUFIT_LIST_MAX];
            uint32_t k = UINT32_MAX;
            FZ_CHECK(!model);
            FZ_CHECK(gpufit_job_get_list(j, p, v, GPUFIT_LIST_MAX, &k, NULL) == GPUFIT_OK);
            FZ_CHECK(k <= GPUFIT_LIST_MAX);
            out[n++] = k;
            for (uint32_t i = 0; i < k && n < FZ_MAX_PARAMS; i++)
                memcpy(&out[n++], &v[i], sizeof v[i]);
            continue;
        }
        if (info.type == GPUFIT_TYPE_FLOAT) {
            double d = 0.0;
            FZ_CHECK((model ? gpufit_model_get_float(m, p, &d, NULL)
                            : gpufit_job_get_float(j, p, &d, NULL)) == GPUFIT_OK);
            memcpy(&bits, &d, sizeof bits);
        } else {
            int64_t v = 0;
            FZ_CHECK((model ? gpufit_model_get_int(m, p, &v, NULL)
                            : gpufit_job_get_int(j, p, &v, NULL)) == GPUFIT_OK);
            bits = (uint64_t)v;
        }
        out[n++] = bits;
    }
    return n;
}

/* The error detail agrees with the status: one NUL-terminated line; a named parameter is a
 * real one and its name is in the message. */
static void fz_check_error(int32_t st, const gpufit_error *err)
{
    FZ_CHECK(err->status == st);
    FZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
    FZ_CHECK(strchr(err->message, '\n') == NULL && strchr(err->message, '\r') == NULL);
    if (st == GPUFIT_OK) {
        FZ_CHECK(err->message[0] == '\0' && err->offset == UINT64_MAX && err->param == 0);
        return;
    }
    FZ_CHECK(err->message[0] != '\0');
    FZ_CHECK(st != GPUFIT_E_INTERNAL && st != GPUFIT_E_NOMEM);
    if (err->param != 0) {
        gpufit_param_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (gpufit_param_get_info(err->param, &info) == GPUFIT_OK)
            FZ_CHECK(strstr(err->message, info.name) != NULL);
        else /* an unknown id passed by the caller comes back as itself */
            FZ_CHECK(st == GPUFIT_E_UNKNOWN_PARAM);
    }
}

/* Overflow-checked sum; 1 on overflow. */
static int fz_add(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* Invariants of a successful evaluation (memory-model.md, gpufit.h "results"):
 * components add up to device_used_bytes; allocated <= reserved <= used; the summary agrees
 * with the roles; the verdict agrees with the capacity; the JSON report is valid JSON. */
static void fz_check_result(const gpufit_result *r, const gpufit_model *m)
{
    gpufit_summary s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    FZ_CHECK(gpufit_result_summary(r, &s) == GPUFIT_OK);
    FZ_CHECK(s.n_roles >= 1 && s.n_roles <= GPUFIT_LIST_MAX + 1); /* a stage each, and host */
    FZ_CHECK(s.worst_role < s.n_roles);
    uint64_t total = 0, active = 0;
    FZ_CHECK(gpufit_model_param_count(m, &total, &active, NULL) == GPUFIT_OK);
    FZ_CHECK(s.n_params == total && s.n_active_params == active);
    FZ_CHECK(active <= total);
    int any_unfit = 0, gpu_roles = 0, all_capacities = 1;
    uint64_t max_used = 0;
    int64_t min_headroom = INT64_MAX;
    for (uint32_t i = 0; i < s.n_roles; i++) {
        gpufit_role_info ro;
        memset(&ro, 0, sizeof ro);
        ro.struct_size = sizeof ro;
        FZ_CHECK(gpufit_result_role(r, i, &ro) == GPUFIT_OK);
        FZ_CHECK(ro.name != NULL);
        int host = strcmp(ro.name, "host") == 0;
        FZ_CHECK(host || strcmp(ro.name, "all") == 0 || strcmp(ro.name, "pp_first") == 0 ||
                 strcmp(ro.name, "pp_middle") == 0 || strcmp(ro.name, "pp_last") == 0 ||
                 (strncmp(ro.name, "gpu", 3) == 0 && ro.name[3] >= '0' && ro.name[3] <= '9'));
        FZ_CHECK(ro.gpu != NULL);
        FZ_CHECK(ro.n_devices >= 1);
        uint64_t sum = 0, c_bytes[16] = {0};
        for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
            FZ_CHECK(c > 0 && c < 16);
            FZ_CHECK(gpufit_component_name(c) != NULL);
            FZ_CHECK(gpufit_result_bytes(r, i, c, &c_bytes[c]) == GPUFIT_OK);
            FZ_CHECK(!fz_add(sum, c_bytes[c], &sum)); /* a sum past 64 bits must be OVERFLOW */
        }
        FZ_CHECK(sum == ro.device_used_bytes);
        FZ_CHECK(ro.peak_allocated_bytes <= ro.peak_reserved_bytes);
        FZ_CHECK(ro.peak_reserved_bytes <= ro.device_used_bytes);
        if (!host) {
            gpu_roles++;
            /* the levels differ by exactly the components between them */
            FZ_CHECK(ro.peak_reserved_bytes - ro.peak_allocated_bytes ==
                     c_bytes[GPUFIT_MEM_FRAGMENTATION]);
            FZ_CHECK(ro.device_used_bytes - ro.peak_reserved_bytes ==
                     c_bytes[GPUFIT_MEM_RUNTIME_CONTEXT] + c_bytes[GPUFIT_MEM_COMM_BUFFERS]);
            if (ro.device_used_bytes > max_used)
                max_used = ro.device_used_bytes;
            /* the band (docs/band.md) holds the point estimate */
            FZ_CHECK(ro.peak_allocated_low_bytes <= ro.peak_allocated_bytes &&
                     ro.peak_allocated_bytes <= ro.peak_allocated_high_bytes);
            FZ_CHECK(ro.peak_reserved_low_bytes <= ro.peak_reserved_bytes &&
                     ro.peak_reserved_bytes <= ro.peak_reserved_high_bytes);
            FZ_CHECK(ro.device_used_low_bytes <= ro.device_used_bytes &&
                     ro.device_used_bytes <= ro.device_used_high_bytes);
            FZ_CHECK(ro.kv_capacity_low_bytes <= ro.kv_capacity_bytes &&
                     ro.kv_capacity_bytes <= ro.kv_capacity_high_bytes);
            /* each role against its own GPU (device_gpus), else the job's */
            if (ro.capacity_bytes > 0) {
                FZ_CHECK(ro.fits == 0 || ro.fits == 1);
                if (ro.device_used_bytes > ro.capacity_bytes)
                    FZ_CHECK(ro.fits == 0);
                /* headroom is counted above the safety margin (margin <= 0.5 of the capacity,
                 * margin_bytes <= 2^40; docs/band.md) */
                if (ro.device_used_bytes <= (uint64_t)INT64_MAX &&
                    ro.capacity_bytes <= (uint64_t)INT64_MAX) {
                    int64_t full = (int64_t)ro.capacity_bytes - (int64_t)ro.device_used_bytes;
                    FZ_CHECK(ro.headroom_bytes <= full);
                    FZ_CHECK(ro.headroom_bytes >=
                             full - (int64_t)(ro.capacity_bytes / 2) - ((int64_t)1 << 40) - 1);
                }
                if (ro.headroom_bytes < min_headroom)
                    min_headroom = ro.headroom_bytes;
            } else {
                FZ_CHECK(ro.fits == -1);
                all_capacities = 0;
            }
        }
        if (ro.fits == 0)
            any_unfit = 1;
    }
    FZ_CHECK(gpu_roles >= 1);
    gpufit_role_info worst;
    memset(&worst, 0, sizeof worst);
    worst.struct_size = sizeof worst;
    FZ_CHECK(gpufit_result_role(r, s.worst_role, &worst) == GPUFIT_OK);
    FZ_CHECK(worst.device_used_bytes == s.peak_bytes && strcmp(worst.name, "host") != 0);
    FZ_CHECK(s.capacity_bytes == worst.capacity_bytes);
    /* the worst role: the least headroom, or the fullest device when capacities are unknown */
    if (all_capacities)
        FZ_CHECK(worst.headroom_bytes == min_headroom);
    else
        FZ_CHECK(s.peak_bytes == max_used);
    if (any_unfit)
        FZ_CHECK(s.fits == 0);
    else if (all_capacities)
        FZ_CHECK(s.fits == 1);
    else
        FZ_CHECK(s.fits == -1);
    uint64_t dummy = 0;
    FZ_CHECK(gpufit_result_role(r, s.n_roles, &worst) == GPUFIT_E_NOT_FOUND);
    FZ_CHECK(gpufit_result_bytes(r, 0, 0, &dummy) == GPUFIT_E_NOT_FOUND);
    for (uint32_t i = 0; i < s.n_notes; i++) {
        const char *t = NULL;
        FZ_CHECK(gpufit_result_note(r, i, &t) == GPUFIT_OK && t != NULL && t[0] != '\0');
    }
    /* the JSON report: buffer protocol, then valid JSON of exactly that length */
    size_t need = 0;
    char small[8];
    FZ_CHECK(gpufit_result_to_json(r, small, sizeof small, &need, NULL) ==
             GPUFIT_E_BUFFER_TOO_SMALL);
    FZ_CHECK(need > sizeof small);
    char *buf = malloc(need + 1);
    FZ_CHECK(buf != NULL);
    size_t len = 0;
    FZ_CHECK(gpufit_result_to_json(r, buf, need + 1, &len, NULL) == GPUFIT_OK);
    FZ_CHECK(len == need && strlen(buf) == len);
    FZ_CHECK(gpufit__json_validate(buf, len, NULL) == GPUFIT_OK);
    free(buf);
}

/* Two successful results of the same scenario hold the same numbers. */
static void fz_check_same(const gpufit_result *a, const gpufit_result *b)
{
    gpufit_summary sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    sa.struct_size = sb.struct_size = sizeof sa;
    FZ_CHECK(gpufit_result_summary(a, &sa) == GPUFIT_OK);
    FZ_CHECK(gpufit_result_summary(b, &sb) == GPUFIT_OK);
    FZ_CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
    for (uint32_t i = 0; i < sa.n_roles; i++) {
        gpufit_role_info ra, rb;
        memset(&ra, 0, sizeof ra);
        memset(&rb, 0, sizeof rb);
        ra.struct_size = rb.struct_size = sizeof ra;
        FZ_CHECK(gpufit_result_role(a, i, &ra) == GPUFIT_OK);
        FZ_CHECK(gpufit_result_role(b, i, &rb) == GPUFIT_OK);
        FZ_CHECK(ra.device_used_bytes == rb.device_used_bytes);
        FZ_CHECK(ra.peak_allocated_bytes == rb.peak_allocated_bytes);
        FZ_CHECK(ra.peak_reserved_bytes == rb.peak_reserved_bytes);
        FZ_CHECK(ra.kv_capacity_bytes == rb.kv_capacity_bytes);
        FZ_CHECK(ra.n_devices == rb.n_devices && ra.layers == rb.layers && ra.fits == rb.fits);
        FZ_CHECK(strcmp(ra.name, rb.name) == 0);
        for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
            uint64_t x = 0, y = 0;
            FZ_CHECK(gpufit_result_bytes(a, i, c, &x) == GPUFIT_OK);
            FZ_CHECK(gpufit_result_bytes(b, i, c, &y) == GPUFIT_OK);
            FZ_CHECK(x == y);
        }
    }
}

/* Evaluates m and j: either OK with every invariant, or a precise error; never a crash. The
 * result (or NULL) is returned through *out; the status is returned. */
static int32_t fz_evaluate(const gpufit_model *m, const gpufit_job *j, gpufit_result **out)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_result *r = NULL;
    int32_t st = gpufit_evaluate(&r, m, j, &err);
    fz_check_error(st, &err);
    FZ_CHECK(st == GPUFIT_OK || st == GPUFIT_E_INVALID_ARG || st == GPUFIT_E_INCONSISTENT ||
             st == GPUFIT_E_OVERFLOW || st == GPUFIT_E_UNSUPPORTED);
    FZ_CHECK(err.offset == UINT64_MAX);
    if (st != GPUFIT_OK) {
        FZ_CHECK(r == NULL);
    } else {
        FZ_CHECK(r != NULL);
        fz_check_result(r, m);
    }
    *out = r;
    return st;
}

#endif /* GPUFIT_FUZZ_CHECK_H */
