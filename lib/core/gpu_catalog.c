/* SPDX-License-Identifier: MIT */
/* GPU catalogue: a static table generated from shared/reference/gpus.csv by
 * tools/gen_gpu_catalog.py (make regen), plus lookups by index, stable id and name. */
#include "internal.h"

#include <string.h>

/* Rows in CSV order; row i has id i + 1 (ids are append-only, see the generator). */
static const gpufit__gpu gpufit__gpus[] = {
#include "gpu_catalog.inc"
};

#define GPUFIT__GPU_N (sizeof gpufit__gpus / sizeof gpufit__gpus[0])

size_t gpufit__gpu_count(void)
{
    return GPUFIT__GPU_N;
}

const gpufit__gpu *gpufit__gpu_at(size_t i)
{
    return i < GPUFIT__GPU_N ? &gpufit__gpus[i] : NULL;
}

const gpufit__gpu *gpufit__gpu_by_id(int64_t id)
{
    /* ids are 1..N in catalogue order (tools/gen_gpu_catalog.py): direct hit, else a scan */
    if (id >= 1 && (uint64_t)id <= GPUFIT__GPU_N && gpufit__gpus[id - 1].id == id)
        return &gpufit__gpus[id - 1];
    for (size_t i = 0; i < GPUFIT__GPU_N; i++) {
        if (gpufit__gpus[i].id == id)
            return &gpufit__gpus[i];
    }
    return NULL;
}

/* Lookup folding: ASCII case-insensitive, and '_' and ' ' are the same as '-'. */
static int fold(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 'a';
    if (c == '_' || c == ' ')
        return '-';
    return c;
}

/* True when the counted query q equals the counted candidate s after folding. */
static int folded_eq(const char *q, size_t qlen, const char *s, size_t slen)
{
    if (qlen != slen)
        return 0;
    for (size_t i = 0; i < qlen; i++) {
        if (fold((unsigned char)q[i]) != fold((unsigned char)s[i]))
            return 0;
    }
    return 1;
}

/* True when q matches one of the space-separated aliases of a row. */
static int alias_match(const char *q, size_t qlen, const char *aliases)
{
    const char *p = aliases;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        const char *start = p;
        while (*p != '\0' && *p != ' ')
            p++;
        if (p > start && folded_eq(q, qlen, start, (size_t)(p - start)))
            return 1;
    }
    return 0;
}

const gpufit__gpu *gpufit__gpu_find(const char *name, size_t len)
{
    if (name == NULL || len == 0)
        return NULL;
    for (size_t i = 0; i < GPUFIT__GPU_N; i++) {
        const gpufit__gpu *g = &gpufit__gpus[i];
        if (folded_eq(name, len, g->name, strlen(g->name)) ||
            folded_eq(name, len, g->key, strlen(g->key)) || alias_match(name, len, g->aliases))
            return g;
    }
    return NULL;
}

/* Fills the public size-prefixed struct from a row (gpufit__copy_out in status.c). */
static int32_t gpu_copy_out(const gpufit__gpu *g, gpufit_gpu_info *out)
{
    gpufit_gpu_info local;
    memset(&local, 0, sizeof local);
    local.struct_size = (uint32_t)sizeof local;
    local.id = g->id;
    local.memory_bytes = g->memory_bytes;
    local.marketed_bytes = g->marketed_bytes;
    local.memory_bandwidth_gbs = g->bandwidth_gbs;
    local.bf16_tflops = g->bf16_tflops;
    local.fp8_tflops = g->fp8_tflops;
    local.nvlink_gbs = g->nvlink_gbs;
    local.msrp_usd = g->msrp_usd;
    local.supports_bf16 = g->supports_bf16;
    local.supports_fp8 = g->supports_fp8;
    local.usable_known = g->usable_known;
    local.launch_year = g->launch_year;
    local.name = g->name;
    local.key = g->key;
    local.aliases = g->aliases;
    local.vendor = g->vendor;
    local.architecture = g->architecture;
    return gpufit__copy_out(out, &local, sizeof local, sizeof(gpufit_gpu_info));
}

/* A caller struct older than v1 is rejected before the lookup, so the status does not depend
 * on whether the GPU exists. */
static int32_t check_out(const gpufit_gpu_info *out)
{
    if (out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (out->struct_size < sizeof(gpufit_gpu_info))
        return GPUFIT_E_STRUCT_SIZE;
    return GPUFIT_OK;
}

int32_t gpufit_gpu_at(uint32_t index, gpufit_gpu_info *out)
{
    int32_t st = check_out(out);
    if (st != GPUFIT_OK)
        return st;
    const gpufit__gpu *g = gpufit__gpu_at(index);
    if (g == NULL)
        return GPUFIT_E_NOT_FOUND;
    return gpu_copy_out(g, out);
}

int32_t gpufit_gpu_by_name(const char *name, gpufit_gpu_info *out)
{
    if (name == NULL)
        return GPUFIT_E_INVALID_ARG;
    int32_t st = check_out(out);
    if (st != GPUFIT_OK)
        return st;
    const gpufit__gpu *g = gpufit__gpu_find(name, strlen(name));
    if (g == NULL)
        return GPUFIT_E_NOT_FOUND;
    return gpu_copy_out(g, out);
}
