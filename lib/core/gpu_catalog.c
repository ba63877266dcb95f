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

/* Lookup normalisation (docs/gpus.md; tools/gen_gpu_catalog.py norm() is the same rule):
 * split at ' ', '-' and '_', drop leading vendor words (NVIDIA, GeForce, Tesla, Quadro, AMD,
 * Instinct, Intel, Habana), lowercase and join the rest. So "NVIDIA GeForce RTX 4090",
 * "NVIDIA-GeForce-RTX-4090", "rtx_4090" and "RTX4090" all become "rtx4090". Returns the length
 * written to out (NUL-terminated), or 0 when the name is empty or longer than cap - 1. */
#define VENDOR_WORDS(X)                                                                            \
    X("nvidia") X("geforce") X("tesla") X("quadro") X("amd") X("instinct") X("intel") X("habana")
#define VENDOR_ROW(w) {w, sizeof w - 1},
static const struct {
    const char *word;
    size_t len;
} vendor_words[] = {VENDOR_WORDS(VENDOR_ROW)};
/* bit n set: some vendor word has n bytes (most names are ruled out by their length) */
#define VENDOR_LEN_BIT(w) | (1u << (sizeof w - 1))
enum { VENDOR_LENS = 0u VENDOR_WORDS(VENDOR_LEN_BIT) };

static int is_sep(char c)
{
    return c == ' ' || c == '-' || c == '_';
}

static int is_vendor(const char *t, size_t n)
{
    if (n == 0 || n >= 32 || ((unsigned)VENDOR_LENS >> n & 1u) == 0)
        return 0;
    char c = t[0] >= 'A' && t[0] <= 'Z' ? (char)(t[0] - 'A' + 'a') : t[0];
    for (size_t i = 0; i < sizeof vendor_words / sizeof vendor_words[0]; i++) {
        /* the words are lower case: the length and the first byte first */
        if (vendor_words[i].len == n && vendor_words[i].word[0] == c &&
            gpufit__streq_ci(t, n, vendor_words[i].word))
            return 1;
    }
    return 0;
}

size_t gpufit__gpu_norm(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0, i = 0;
    int leading = 1;
    if (cap == 0)
        return 0;
    /* the usual name, one word in lower case ("h100"): itself, unless it is a vendor word */
    while (i < len && i + 1 < cap && !is_sep(s[i]) && !(s[i] >= 'A' && s[i] <= 'Z')) {
        out[i] = s[i];
        i++;
    }
    if (i == len && len > 0 && !is_vendor(s, len)) {
        out[len] = '\0';
        return len;
    }
    i = 0;
    while (i < len) {
        while (i < len && is_sep(s[i]))
            i++;
        size_t b = i;
        while (i < len && !is_sep(s[i]))
            i++;
        if (i == b)
            break;
        if (leading && is_vendor(s + b, i - b))
            continue;
        leading = 0;
        for (size_t k = b; k < i; k++) {
            if (o + 1 >= cap) {
                out[0] = '\0';
                return 0;
            }
            char c = s[k];
            out[o++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
    }
    out[o] = '\0';
    return o;
}

/* True when the normalised query nq equals candidate s (length slen) after normalisation. */
static int norm_eq(const char *nq, size_t nqlen, const char *s, size_t slen)
{
    /* quick reject: normalising keeps the last character that is no separator (lowercased),
     * so most rows are ruled out without normalising them (the cold path looks GPUs up) */
    size_t e = slen;
    while (e > 0 && is_sep(s[e - 1]))
        e--;
    char last = e > 0 ? s[e - 1] : '\0';
    if (last >= 'A' && last <= 'Z')
        last = (char)(last - 'A' + 'a');
    if (nqlen == 0 || last != nq[nqlen - 1])
        return 0;
    char ns[GPUFIT__GPU_NAME_MAX];
    size_t n = gpufit__gpu_norm(s, slen, ns, sizeof ns);
    return n == nqlen && n > 0 && memcmp(nq, ns, n) == 0;
}

/* True when nq matches one of the space-separated aliases of a row. */
static int alias_match(const char *nq, size_t nqlen, const char *aliases)
{
    const char *p = aliases;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        const char *start = p;
        while (*p != '\0' && *p != ' ')
            p++;
        if (p > start && norm_eq(nq, nqlen, start, (size_t)(p - start)))
            return 1;
    }
    return 0;
}

/* Every normalised name, key and alias with the first row that has it, sorted by strcmp
 * (generated with the catalogue: gpu_index.inc). */
static const struct {
    const char *norm;
    uint16_t row;
} gpu_index[] = {
#include "gpu_index.inc"
};
#define GPU_INDEX_N (sizeof gpu_index / sizeof gpu_index[0])

/* 1 + the gpu_index entry hashed to each slot, 0 = empty (generated with the catalogue). */
static const uint16_t gpu_hash[] = {
#include "gpu_hash.inc"
};
#define GPU_HASH_N (sizeof gpu_hash / sizeof gpu_hash[0])
_Static_assert((GPU_HASH_N & (GPU_HASH_N - 1)) == 0, "the GPU hash table is a power of two");

const gpufit__gpu *gpufit__gpu_find(const char *name, size_t len)
{
    char nq[GPUFIT__GPU_NAME_MAX];
    size_t nqlen;
    if (name == NULL || len == 0 || (nqlen = gpufit__gpu_norm(name, len, nq, sizeof nq)) == 0)
        return NULL;
    /* the hash table first: one or two names compared */
    size_t h = gpufit__name_hash(nq, nqlen) & (GPU_HASH_N - 1);
    for (size_t probes = 0; probes < GPU_HASH_N; probes++, h = (h + 1) & (GPU_HASH_N - 1)) {
        size_t s = gpu_hash[h];
        if (s == 0 || s > GPU_INDEX_N)
            break;
        if (strcmp(gpu_index[s - 1].norm, nq) == 0 && gpu_index[s - 1].row < GPUFIT__GPU_N)
            return &gpufit__gpus[gpu_index[s - 1].row];
    }
    /* not there (another name, or a stale table): the sorted index answers */
    size_t lo = 0, hi = GPU_INDEX_N; /* binary search: the first entry >= nq */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(gpu_index[mid].norm, nq) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < GPU_INDEX_N && strcmp(gpu_index[lo].norm, nq) == 0 &&
        gpu_index[lo].row < GPUFIT__GPU_N)
        return &gpufit__gpus[gpu_index[lo].row];
    return NULL;
}

const gpufit__gpu *gpufit__gpu_find_scan(const char *name, size_t len)
{
    char nq[GPUFIT__GPU_NAME_MAX];
    size_t nqlen = name != NULL ? gpufit__gpu_norm(name, len, nq, sizeof nq) : 0;
    if (nqlen == 0)
        return NULL;
    for (size_t i = 0; i < GPUFIT__GPU_N; i++) {
        const gpufit__gpu *g = &gpufit__gpus[i];
        if (norm_eq(nq, nqlen, g->name, strlen(g->name)) ||
            norm_eq(nq, nqlen, g->key, strlen(g->key)) || alias_match(nq, nqlen, g->aliases))
            return g;
    }
    return NULL;
}

/* Names that stand for several catalogue rows of different memory (a bare "a100"): the
 * generator's AMBIGUOUS table. {normalised name, the keys it could mean}. */
static const struct {
    const char *name, *keys;
} ambiguous[] = {
#include "gpu_ambiguous.inc"
};

const char *gpufit__gpu_ambiguous(const char *name, size_t len)
{
    char nq[GPUFIT__GPU_NAME_MAX];
    size_t nqlen = name != NULL ? gpufit__gpu_norm(name, len, nq, sizeof nq) : 0;
    if (nqlen == 0)
        return NULL;
    for (size_t i = 0; i < sizeof ambiguous / sizeof ambiguous[0]; i++) {
        if (strlen(ambiguous[i].name) == nqlen && memcmp(ambiguous[i].name, nq, nqlen) == 0)
            return ambiguous[i].keys;
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
