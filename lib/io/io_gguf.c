/* SPDX-License-Identifier: MIT */
/* gpufit_model_from_gguf(): a model from the beginning of a GGUF file (v2 and v3,
 * little-endian): header, metadata key/value pairs and the tensor-info table. Tensor data is
 * never read.
 *
 * Layout (ggml/src/gguf.cpp, docs/gguf.md of ggml): "GGUF", u32 version, u64 n_tensors,
 * u64 n_kv; n_kv times {string key, u32 type, value}; n_tensors times {string name, u32 n_dims,
 * u64 ne[n_dims], u32 ggml_type, u64 offset}. A string is u64 length + bytes; an array is
 * u32 element type + u64 count + elements (arrays of arrays are refused, as gguf.cpp does).
 *
 * What is kept:
 * - architecture metadata (<arch>.block_count, embedding_length, feed_forward_length,
 *   attention.head_count[_kv], key_length/value_length (+ _mla), expert_* counts and widths,
 *   leading_dense_block_count, attention.q_lora_rank / kv_lora_rank, rope.dimension_count,
 *   vocab_size or the length of tokenizer.ggml.tokens, general.file_type, general.name);
 * - per tensor: the exact bytes from its ggml type and shape (block sizes of ggml-common.h,
 *   memory-model.md §7.1), summed per layer ("blk.N.", T5 "enc.blk.N." / "dec.blk.N."), for
 *   token_embd, for output (absent when tied) and for every other global tensor;
 * - architecture flags the metadata does not state, from the tensor names: biases, q/k norms,
 *   LayerNorm (norm biases), gated MLP, router bias, shared experts, learned positions.
 *
 * Hostile input: at most 2^20 tensors and 2^20 key/value pairs, strings of at most 1 MiB,
 * metadata arrays of at most 2^24 elements, the header (up to the end of the tensor table) at
 * most 1 GiB, every count times its smallest element within what the header can still hold, all
 * checked before anything is scanned; duplicate keys and tensor names are refused; every length is checked against
 * the buffer before use, every offset and product overflow-checked; no recursion and no
 * allocation but the returned model. When the buffer ends before the tensor table does, the
 * result is GPUFIT_E_BUFFER_TOO_SMALL and *needed_out a lower bound of the bytes to read
 * (exact once the remaining strings are known; the caller reads more and calls again). */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GGUF_TENSORS_MAX ((uint64_t)1 << 20)
#define GGUF_KV_MAX      ((uint64_t)1 << 20)
#define GGUF_STRING_MAX  ((uint64_t)1 << 20)
#define GGUF_HEADER_MAX  ((uint64_t)1 << 30)
/* Elements of one metadata array: the largest real ones are tokenizer vocabularies and merge
 * lists of some 2^18-2^19 entries (Gemma 3: 262,144 tokens). Refused before anything is read
 * or scanned, so that a header claiming 2^30 elements costs neither memory nor time. */
#define GGUF_ARRAY_MAX   ((uint64_t)1 << 24)
#define GGUF_DIMS_MAX    4 /* GGML_MAX_DIMS */
/* Smallest encodings, used to bound what the rest of a truncated header needs. */
#define MIN_KV_BYTES     13 /* key length 8 + type 4 + one byte */
#define MIN_TENSOR_BYTES 32 /* name length 8 + n_dims 4 + ne 8 + type 4 + offset 8 */

enum gguf_type {
    T_U8 = 0,
    T_I8 = 1,
    T_U16 = 2,
    T_I16 = 3,
    T_U32 = 4,
    T_I32 = 5,
    T_F32 = 6,
    T_BOOL = 7,
    T_STRING = 8,
    T_ARRAY = 9,
    T_U64 = 10,
    T_I64 = 11,
    T_F64 = 12,
    T_COUNT = 13
};

/* Bytes of a fixed-size value type; 0 for strings and arrays. */
static uint32_t type_size(uint32_t t)
{
    static const uint8_t sz[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < T_COUNT ? sz[t] : 0;
}

/* ggml tensor types: bytes per block and elements per block (ggml.c type_traits, with the
 * static_asserted block structs of ggml-common.h, memory-model.md §7.1). Removed types (4, 5,
 * 31-33, 36-38) are absent (elems 0) and refused. */
typedef struct ggml_type_info {
    const char *name;
    uint16_t bytes, elems;
} ggml_type_info;

static const ggml_type_info ggml_types[] = {
    [0] = {"f32", 4, 1},         [1] = {"f16", 2, 1},         [2] = {"q4_0", 18, 32},
    [3] = {"q4_1", 20, 32},      [6] = {"q5_0", 22, 32},      [7] = {"q5_1", 24, 32},
    [8] = {"q8_0", 34, 32},      [9] = {"q8_1", 36, 32},      [10] = {"q2_k", 84, 256},
    [11] = {"q3_k", 110, 256},   [12] = {"q4_k", 144, 256},   [13] = {"q5_k", 176, 256},
    [14] = {"q6_k", 210, 256},   [15] = {"q8_k", 292, 256},   [16] = {"iq2_xxs", 66, 256},
    [17] = {"iq2_xs", 74, 256},  [18] = {"iq3_xxs", 98, 256}, [19] = {"iq1_s", 50, 256},
    [20] = {"iq4_nl", 18, 32},   [21] = {"iq3_s", 110, 256},  [22] = {"iq2_s", 82, 256},
    [23] = {"iq4_xs", 136, 256}, [24] = {"i8", 1, 1},         [25] = {"i16", 2, 1},
    [26] = {"i32", 4, 1},        [27] = {"i64", 8, 1},        [28] = {"f64", 8, 1},
    [29] = {"iq1_m", 56, 256},   [30] = {"bf16", 2, 1},       [34] = {"tq1_0", 54, 256},
    [35] = {"tq2_0", 66, 256},   [39] = {"mxfp4", 17, 32},
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof ggml_types[0])

/* general.file_type (llama_ftype, without the 1024 "guessed" bit) -> gpufit_dtype. */
static uint32_t file_type_dtype(uint64_t ft)
{
    static const uint8_t map[] = {
        [0] = GPUFIT_DTYPE_FP32,     [1] = GPUFIT_DTYPE_F16_GGUF, [2] = GPUFIT_DTYPE_Q4_0,
        [3] = GPUFIT_DTYPE_Q4_1,     [7] = GPUFIT_DTYPE_Q8_0,     [8] = GPUFIT_DTYPE_Q5_0,
        [9] = GPUFIT_DTYPE_Q5_1,     [10] = GPUFIT_DTYPE_Q2_K,    [11] = GPUFIT_DTYPE_Q3_K_S,
        [12] = GPUFIT_DTYPE_Q3_K_M,  [13] = GPUFIT_DTYPE_Q3_K_L,  [14] = GPUFIT_DTYPE_Q4_K_S,
        [15] = GPUFIT_DTYPE_Q4_K_M,  [16] = GPUFIT_DTYPE_Q5_K_S,  [17] = GPUFIT_DTYPE_Q5_K_M,
        [18] = GPUFIT_DTYPE_Q6_K,    [19] = GPUFIT_DTYPE_IQ2_XXS, [20] = GPUFIT_DTYPE_IQ2_XS,
        [23] = GPUFIT_DTYPE_IQ3_XXS, [24] = GPUFIT_DTYPE_IQ1_S,   [25] = GPUFIT_DTYPE_IQ4_NL,
        [26] = GPUFIT_DTYPE_IQ3_S,   [28] = GPUFIT_DTYPE_IQ2_S,   [30] = GPUFIT_DTYPE_IQ4_XS,
        [31] = GPUFIT_DTYPE_IQ1_M,   [32] = GPUFIT_DTYPE_BF16,    [36] = GPUFIT_DTYPE_TQ1_0,
        [37] = GPUFIT_DTYPE_TQ2_0,
    };
    ft &= ~(uint64_t)1024;
    return ft < sizeof map ? map[ft] : 0;
}

/* ---------------------------------------------------------------------------------------
 * Bounded reader
 * ------------------------------------------------------------------------------------- */
typedef struct rd {
    const uint8_t *b;
    uint64_t len, pos;
    uint64_t need; /* after GPUFIT_E_BUFFER_TOO_SMALL: bytes the read needed */
} rd;

static int32_t corrupt(gpufit_error *err, uint64_t at, const char *what)
{
    return gpufit__fail(err, GPUFIT_E_PARSE, 0, at, "GGUF: %s at byte %" PRIu64, what, at);
}

/* Makes n bytes at the cursor available (or records what is needed). */
static int32_t avail(rd *r, uint64_t n, gpufit_error *err)
{
    uint64_t end;
    if (gpufit__add(r->pos, n, &end) || end > GGUF_HEADER_MAX)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, r->pos,
                            "GGUF: header would exceed %" PRIu64 " bytes (a length of %" PRIu64
                            " at byte %" PRIu64 ")",
                            GGUF_HEADER_MAX, n, r->pos);
    if (end > r->len) {
        r->need = end;
        return GPUFIT_E_BUFFER_TOO_SMALL;
    }
    return GPUFIT_OK;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int32_t rd_uint(rd *r, unsigned n, uint64_t *out, gpufit_error *err)
{
    int32_t st = avail(r, n, err);
    if (st != GPUFIT_OK)
        return st;
    *out = le(r->b + r->pos, n);
    r->pos += n;
    return GPUFIT_OK;
}

/* A string: u64 length (at most 1 MiB) + bytes; *s points into the buffer. */
static int32_t rd_str(rd *r, const uint8_t **s, uint64_t *n, gpufit_error *err)
{
    uint64_t at = r->pos, len;
    int32_t st = rd_uint(r, 8, &len, err);
    if (st != GPUFIT_OK)
        return st;
    if (len > GGUF_STRING_MAX)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                            "GGUF: string of %" PRIu64 " bytes at byte %" PRIu64
                            " exceeds the 1 MiB limit",
                            len, at);
    st = avail(r, len, err);
    if (st != GPUFIT_OK)
        return st;
    *s = r->b + r->pos;
    *n = len;
    r->pos += len;
    return GPUFIT_OK;
}

static const char *shown(const uint8_t *s, uint64_t n, char out[72]);

/* A value as far as this reader needs it. */
typedef struct gval {
    uint32_t type;
    int32_t is_int;   /* integer scalar (or bool) that fits int64 and is >= 0 */
    uint64_t u;       /* is_int: the value */
    const uint8_t *s; /* strings */
    uint64_t slen;
    uint32_t arr_type;   /* arrays */
    int32_t arr_uniform; /* integer array whose elements all equal arr_u (and >= 0) */
    uint64_t arr_n, arr_u;
} gval;

/* Integer of n bytes at p of type t; 0 when negative or beyond int64 (not a count). */
static int int_of(uint32_t t, const uint8_t *p, uint64_t *out)
{
    unsigned n = type_size(t);
    uint64_t v = le(p, n);
    int is_signed = t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64;
    if (is_signed && n < 8 && (v >> (8 * n - 1)) != 0)
        return 0; /* negative */
    if (v > (uint64_t)INT64_MAX)
        return 0;
    *out = v;
    return 1;
}

static int is_int_type(uint32_t t)
{
    return t <= T_I32 || t == T_BOOL || t == T_U64 || t == T_I64;
}

/* Reads one value of type t (arrays: one level, elements bounds-checked; integer arrays are
 * scanned for a uniform value, string arrays string by string). */
static int32_t rd_value(rd *r, uint32_t t, gval *v, gpufit_error *err)
{
    uint64_t at = r->pos;
    memset(v, 0, sizeof *v);
    v->type = t;
    if (t >= T_COUNT)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                            "GGUF: unknown value type %" PRIu32 " at byte %" PRIu64, t, at);
    if (t == T_STRING)
        return rd_str(r, &v->s, &v->slen, err);
    if (t != T_ARRAY) {
        unsigned n = type_size(t);
        int32_t st = avail(r, n, err);
        if (st != GPUFIT_OK)
            return st;
        if (is_int_type(t))
            v->is_int = int_of(t, r->b + r->pos, &v->u);
        r->pos += n;
        return GPUFIT_OK;
    }
    uint64_t et, n;
    int32_t st = rd_uint(r, 4, &et, err);
    if (st == GPUFIT_OK)
        st = rd_uint(r, 8, &n, err);
    if (st != GPUFIT_OK)
        return st;
    if (et >= T_COUNT || et == T_ARRAY)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at, "GGUF: array of %s at byte %" PRIu64,
                            et == T_ARRAY ? "arrays (not supported)" : "an unknown type", at);
    if (n > GGUF_ARRAY_MAX)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                            "GGUF: array of %" PRIu64 " elements at byte %" PRIu64
                            " exceeds the limit of 2^24",
                            n, at);
    v->arr_type = (uint32_t)et;
    v->arr_n = n;
    if (et != T_STRING) {
        uint64_t bytes, esz = type_size((uint32_t)et);
        if (gpufit__mul(n, esz, &bytes))
            return corrupt(err, at, "array length overflows");
        st = avail(r, bytes, err);
        if (st != GPUFIT_OK)
            return st;
        if (is_int_type((uint32_t)et)) {
            v->arr_uniform = 1;
            for (uint64_t i = 0; i < n; i++) {
                uint64_t x = 0;
                if (!int_of((uint32_t)et, r->b + r->pos + i * esz, &x) || (i > 0 && x != v->arr_u))
                    v->arr_uniform = 0;
                v->arr_u = x;
            }
            if (n == 0)
                v->arr_uniform = 0;
        }
        r->pos += bytes;
        return GPUFIT_OK;
    }
    /* strings: at least 8 bytes each */
    uint64_t least;
    if (gpufit__mul(n, 8, &least))
        return corrupt(err, at, "array length overflows");
    st = avail(r, least, err);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL)
        st = GPUFIT_OK; /* still read what is there: the strings say how much is needed */
    if (st != GPUFIT_OK)
        return st;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *s;
        uint64_t sl;
        st = rd_str(r, &s, &sl, err);
        if (st == GPUFIT_E_BUFFER_TOO_SMALL) {
            /* the strings after this one need at least 8 bytes each (checked above) */
            r->need += (n - i - 1) * 8;
            return st;
        }
        if (st != GPUFIT_OK)
            return st;
    }
    return GPUFIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------------------- */
/* clang-format off */
#define ARCH_KEYS(X)                                                                               \
    X(block_count, "block_count") X(embedding_length, "embedding_length")                          \
    X(feed_forward_length, "feed_forward_length") X(head_count, "attention.head_count")            \
    X(head_count_kv, "attention.head_count_kv") X(key_length, "attention.key_length")              \
    X(value_length, "attention.value_length") X(key_length_mla, "attention.key_length_mla")        \
    X(value_length_mla, "attention.value_length_mla") X(expert_count, "expert_count")              \
    X(expert_used_count, "expert_used_count") X(expert_shared_count, "expert_shared_count")        \
    X(expert_ffn, "expert_feed_forward_length")                                                    \
    X(expert_shared_ffn, "expert_shared_feed_forward_length")                                      \
    X(leading_dense, "leading_dense_block_count") X(q_lora_rank, "attention.q_lora_rank")          \
    X(kv_lora_rank, "attention.kv_lora_rank") X(rope_dims, "rope.dimension_count")                 \
    X(vocab_size, "vocab_size") X(decoder_block_count, "decoder_block_count")                      \
    X(rel_buckets, "attention.relative_buckets_count")
/* clang-format on */

enum arch_key {
#define X(id, text) A_##id,
    ARCH_KEYS(X)
#undef X
        A_COUNT
};

static const char *const arch_key_names[A_COUNT] = {
#define X(id, text) text,
    ARCH_KEYS(X)
#undef X
};

typedef struct meta {
    const uint8_t *arch; /* general.architecture, in the buffer */
    uint64_t arch_len;
    const uint8_t *name; /* general.name */
    uint64_t name_len;
    uint64_t file_type, alignment, n_tokens;
    int has_file_type, has_tokens;
    int has[A_COUNT];
    uint64_t val[A_COUNT];
    uint64_t at[A_COUNT]; /* byte offset of each value */
    int bad[A_COUNT];     /* present but not a count (or a non-uniform array) */
} meta;

static int key_is(const uint8_t *k, uint64_t kl, const char *lit)
{
    size_t n = strlen(lit);
    return kl == n && memcmp(k, lit, n) == 0;
}

/* A set of the strings already read (keys, tensor names), each by the offset of its u64
 * length in the buffer: open addressing over 2^k slots (at least twice the strings), so that
 * a duplicate is found in O(1) per string. llama.cpp refuses duplicate keys and tensor names
 * (ggml/src/gguf.cpp, gguf_init_from_file_impl: "duplicate key '%s' for tensors %zu and %"
 * and "duplicate tensor name"); so does this reader, naming both byte offsets. */
typedef struct strset {
    uint64_t *slot; /* offset + 1; 0 = empty */
    uint64_t mask;
    uint64_t seed; /* per call: a file cannot be crafted offline so that its strings collide */
    unsigned shift; /* the slot is the top bits of the mixed hash */
} strset;

/* Hashing multiplies modulo 2^64 on purpose: exempt from the unsigned-overflow fuzz build. */
#if defined(__clang__)
#define HASH_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow")))
#else
#define HASH_WRAPS
#endif

HASH_WRAPS static int32_t strset_init(strset *t, uint64_t n, gpufit_error *err)
{
    uint64_t cap = 16;
    while (cap < 2 * n)
        cap <<= 1; /* n <= 2^20 */
    t->slot = calloc((size_t)cap, sizeof *t->slot);
    t->mask = cap - 1;
    unsigned k = 0;
    while (((uint64_t)1 << k) < cap)
        k++;
    t->shift = 64 - k; /* cap = 2^k, k >= 4 */
    /* FNV-1a alone lets a hostile header steer its low bits (the slot) with a byte or two per
     * key: 2^20 colliding keys would cost 2^39 comparisons. A seed the file cannot know (the
     * stack address, under ASLR, and the time; the result never depends on it) and a
     * finalizer whose top bits depend on every input bit keep probes short. */
    uintptr_t here = (uintptr_t)&cap;
    t->seed = (uint64_t)here * 0x9E3779B97F4A7C15u ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)t;
    return t->slot != NULL ? GPUFIT_OK
                           : gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
}

/* Adds the string whose length field is at `at` (already read, so in the buffer); returns 0,
 * or the offset + 1 of an equal string added before. */
HASH_WRAPS static uint64_t strset_add(strset *t, const rd *r, uint64_t at)
{
    uint64_t n = le(r->b + at, 8), h = 1469598103934665603u;
    const uint8_t *s = r->b + at + 8;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211u; /* FNV-1a */
    h ^= t->seed; /* splitmix64's finalizer */
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9u;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBu;
    h ^= h >> 31;
    for (uint64_t i = (h >> t->shift) & t->mask;; i = (i + 1) & t->mask) {
        uint64_t o = t->slot[i];
        if (o == 0) {
            t->slot[i] = at + 1;
            return 0;
        }
        if (le(r->b + o - 1, 8) == n && memcmp(r->b + o - 1 + 8, s, (size_t)n) == 0)
            return o;
    }
}

/* Pass over the key/value pairs. Pass 1 (m->arch == NULL) validates and finds
 * general.architecture; pass 2 keeps the values under "<arch>." and refuses duplicate keys
 * (keys: the set, pass 2 only). */
static int32_t rd_kv(rd *r, uint64_t n_kv, uint64_t n_tensors, meta *m, int pass, strset *keys,
                     gpufit_error *err)
{
    for (uint64_t i = 0; i < n_kv; i++) {
        const uint8_t *k;
        uint64_t kl, t, vat, kat = r->pos;
        gval v;
        int32_t st = rd_str(r, &k, &kl, err);
        if (st == GPUFIT_OK && keys != NULL) {
            uint64_t first = strset_add(keys, r, kat);
            char d[72];
            if (first != 0)
                return gpufit__fail(err, GPUFIT_E_PARSE, 0, kat,
                                    "GGUF: duplicate key \"%s\" at bytes %" PRIu64 " and %" PRIu64
                                    " (llama.cpp refuses the file)",
                                    shown(k, kl, d), first - 1, kat);
        }
        if (st == GPUFIT_OK)
            st = rd_uint(r, 4, &t, err);
        vat = r->pos;
        if (st == GPUFIT_OK)
            st = rd_value(r, (uint32_t)(t > UINT32_MAX ? UINT32_MAX : t), &v, err);
        if (st == GPUFIT_E_BUFFER_TOO_SMALL) {
            /* what the rest of the header needs at least (bounded: counts <= 2^20) */
            r->need += (n_kv - i - 1) * MIN_KV_BYTES + n_tensors * MIN_TENSOR_BYTES;
            return st;
        }
        if (st != GPUFIT_OK)
            return st;
        if (pass == 1) {
            if (key_is(k, kl, "general.architecture")) {
                if (v.type != T_STRING)
                    return corrupt(err, vat, "general.architecture is not a string");
                m->arch = v.s;
                m->arch_len = v.slen;
            } else if (key_is(k, kl, "general.alignment")) {
                if (!v.is_int || v.u == 0 || v.u > ((uint64_t)1 << 30) || (v.u & (v.u - 1)))
                    return corrupt(err, vat, "general.alignment is not a power of two");
                m->alignment = v.u;
            }
            continue;
        }
        if (key_is(k, kl, "general.name") && v.type == T_STRING) {
            m->name = v.s;
            m->name_len = v.slen;
        } else if (key_is(k, kl, "general.file_type") && v.is_int) {
            m->file_type = v.u;
            m->has_file_type = 1;
        } else if (key_is(k, kl, "tokenizer.ggml.tokens") && v.type == T_ARRAY) {
            m->n_tokens = v.arr_n;
            m->has_tokens = 1;
        } else if (kl > m->arch_len + 1 && memcmp(k, m->arch, m->arch_len) == 0 &&
                   k[m->arch_len] == '.') {
            const uint8_t *sfx = k + m->arch_len + 1;
            uint64_t sl = kl - m->arch_len - 1;
            for (int a = 0; a < A_COUNT; a++) {
                if (!key_is(sfx, sl, arch_key_names[a]))
                    continue;
                m->has[a] = 1;
                m->at[a] = vat;
                m->bad[a] = 0;
                if (v.is_int)
                    m->val[a] = v.u;
                else if (v.type == T_ARRAY && v.arr_uniform)
                    m->val[a] = v.arr_u; /* per-layer array with one value */
                else
                    m->bad[a] = 1;
            }
        }
    }
    return GPUFIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------------------- */
enum {
    FL_QKV_BIAS = 1 << 0,
    FL_O_BIAS = 1 << 1,
    FL_MLP_BIAS = 1 << 2,
    FL_QK_NORM = 1 << 3,
    FL_LAYERNORM = 1 << 4,
    FL_GATED = 1 << 5,
    FL_ROUTER_BIAS = 1 << 6,
    FL_SHEXP_GATE = 1 << 7,
    FL_SHEXP = 1 << 8,
    FL_EMB_NORM = 1 << 9,
    FL_OUTPUT = 1 << 10,
    FL_TOKEN_EMBD = 1 << 11
};

typedef struct tables {
    uint64_t n_layers; /* layers the names may index: block_count (+ decoder layers, T5) */
    uint64_t n_enc;    /* T5: encoder layers, the base of "dec.blk.N" */
    uint64_t layer[GPUFIT__GGUF_LAYERS_MAX];
    uint64_t tail; /* bytes of layers >= GPUFIT__GGUF_LAYERS_MAX - 1 when there are more */
    uint64_t token_embd, output, global;
    uint32_t flags;
    uint64_t vocab_rows, embd_cols; /* token_embd shape */
    uint64_t positions, token_types, shexp_width;
} tables;

/* Suffix of a layer tensor name against a list of names. */
static int sfx_in(const uint8_t *s, uint64_t n, const char *const *names)
{
    for (; *names != NULL; names++)
        if (key_is(s, n, *names))
            return 1;
    return 0;
}

/* Records what a layer tensor's name says about the architecture. */
static void layer_flags(tables *tb, const uint8_t *s, uint64_t n, const uint64_t *ne)
{
    static const char *const qkv_b[] = {"attn_q.bias", "attn_k.bias", "attn_v.bias",
                                        "attn_qkv.bias", NULL};
    static const char *const o_b[] = {"attn_output.bias", NULL};
    static const char *const mlp_b[] = {"ffn_up.bias", "ffn_down.bias", NULL};
    static const char *const qk_n[] = {"attn_q_norm.weight", "attn_k_norm.weight", NULL};
    static const char *const ln[] = {"attn_norm.bias", "ffn_norm.bias", "attn_output_norm.bias",
                                     "layer_output_norm.bias", NULL};
    static const char *const rb[] = {"exp_probs_b.bias", "exp_probs_b", NULL};
    static const char *const shg[] = {"ffn_gate_inp_shexp.weight", NULL};
    static const char *const shu[] = {"ffn_up_shexp.weight", NULL};
    tb->flags |= sfx_in(s, n, qkv_b) ? FL_QKV_BIAS : 0;
    tb->flags |= sfx_in(s, n, o_b) ? FL_O_BIAS : 0;
    tb->flags |= sfx_in(s, n, mlp_b) ? FL_MLP_BIAS : 0;
    tb->flags |= sfx_in(s, n, qk_n) ? FL_QK_NORM : 0;
    tb->flags |= sfx_in(s, n, ln) ? FL_LAYERNORM : 0;
    /* a gate projection: ffn_gate, ffn_gate_exps, ffn_gate_shexp, old per-expert
     * ffn_gate.E; not the router (ffn_gate_inp, ffn_gate_inp_shexp) */
    if (n > 8 && memcmp(s, "ffn_gate", 8) == 0 && !(n >= 12 && memcmp(s, "ffn_gate_inp", 12) == 0))
        tb->flags |= FL_GATED;
    tb->flags |= sfx_in(s, n, rb) ? FL_ROUTER_BIAS : 0;
    tb->flags |= sfx_in(s, n, shg) ? FL_SHEXP_GATE : 0;
    if (sfx_in(s, n, shu)) {
        tb->flags |= FL_SHEXP;
        tb->shexp_width = ne[1];
    }
}

/* Parses "blk.N." (after an optional "enc."/"dec." prefix, already removed): the layer
 * index (saturated far above any layer count) and the offset of the suffix after the dot.
 * Returns 0 when the name is not a layer tensor. */
static int layer_index(const uint8_t *s, uint64_t n, uint64_t *idx, uint64_t *sfx)
{
    if (n < 6 || memcmp(s, "blk.", 4) != 0)
        return 0;
    uint64_t i = 4, v = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        v = v > ((uint64_t)1 << 40) ? v : v * 10 + (uint64_t)(s[i] - '0');
    if (i == 4 || i >= n || s[i] != '.')
        return 0;
    *idx = v;
    *sfx = i + 1;
    return 1;
}

static int32_t add_to(uint64_t *acc, uint64_t b, uint64_t at, gpufit_error *err)
{
    if (gpufit__add(*acc, b, acc))
        return gpufit__fail(err, GPUFIT_E_OVERFLOW, 0, at, "GGUF: weight bytes exceed 64 bits");
    return GPUFIT_OK;
}

/* Shows a tensor name in a message. */
static const char *shown(const uint8_t *s, uint64_t n, char out[72])
{
    size_t o = 0;
    for (uint64_t i = 0; i < n && i < 64; i++)
        out[o++] = (s[i] < 0x20 || s[i] >= 0x7F) ? '?' : (char)s[i];
    out[o] = '\0';
    return out;
}

/* One tensor-info entry: its bytes go to its layer or global group. */
static int32_t rd_tensor(rd *r, const meta *m, tables *tb, strset *names, gpufit_error *err)
{
    const uint8_t *name;
    uint64_t nl, nd, ne[GGUF_DIMS_MAX] = {1, 1, 1, 1}, type, off, at = r->pos;
    char d[72];
    int32_t st = rd_str(r, &name, &nl, err);
    if (st == GPUFIT_OK) {
        uint64_t first = strset_add(names, r, at);
        if (first != 0)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                                "GGUF: duplicate tensor name \"%s\" at bytes %" PRIu64
                                " and %" PRIu64 " (llama.cpp refuses the file)",
                                shown(name, nl, d), first - 1, at);
    }
    if (st == GPUFIT_OK)
        st = rd_uint(r, 4, &nd, err);
    if (st != GPUFIT_OK)
        return st;
    if (nd == 0 || nd > GGUF_DIMS_MAX)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                            "GGUF: tensor \"%s\" has %" PRIu64 " dimensions (1 to 4 allowed)",
                            shown(name, nl, d), nd);
    uint64_t elems = 1;
    for (uint64_t j = 0; j < nd; j++) {
        st = rd_uint(r, 8, &ne[j], err);
        if (st != GPUFIT_OK)
            return st;
        if (gpufit__mul(elems, ne[j], &elems) || elems > (uint64_t)INT64_MAX)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                                "GGUF: tensor \"%s\" has more than 2^63 elements",
                                shown(name, nl, d));
    }
    st = rd_uint(r, 4, &type, err);
    if (st == GPUFIT_OK)
        st = rd_uint(r, 8, &off, err);
    if (st != GPUFIT_OK)
        return st;
    if (type >= N_GGML_TYPES || ggml_types[type].elems == 0)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, at,
                            "GGUF: tensor \"%s\" has ggml type %" PRIu64
                            ", unknown or removed from ggml",
                            shown(name, nl, d), type);
    const ggml_type_info *ti = &ggml_types[type];
    if (ne[0] % ti->elems != 0)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                            "GGUF: tensor \"%s\" rows of %" PRIu64
                            " are not a multiple of the %s block (%u)",
                            shown(name, nl, d), ne[0], ti->name, (unsigned)ti->elems);
    if (off % m->alignment != 0)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, at,
                            "GGUF: tensor \"%s\" data offset %" PRIu64
                            " is not aligned to %" PRIu64,
                            shown(name, nl, d), off, m->alignment);
    uint64_t bytes; /* (ne0 / block) * block bytes * ne1 * ne2 * ne3, as ggml_nbytes */
    if (gpufit__mul(ne[0] / ti->elems, ti->bytes, &bytes) || gpufit__mul(bytes, ne[1], &bytes) ||
        gpufit__mul(bytes, ne[2], &bytes) || gpufit__mul(bytes, ne[3], &bytes))
        return gpufit__fail(err, GPUFIT_E_OVERFLOW, 0, at,
                            "GGUF: tensor \"%s\" bytes exceed 64 bits", shown(name, nl, d));

    /* where it goes: "blk.N." is layer N; T5 "enc.blk.N." layer N, "dec.blk.N." n_enc + N */
    uint64_t base = 0, limit = tb->n_layers, idx, sfx;
    const uint8_t *ln = name;
    uint64_t lnl = nl;
    if (nl > 4 && (memcmp(name, "enc.", 4) == 0 || memcmp(name, "dec.", 4) == 0)) {
        if (name[0] == 'd')
            base = tb->n_enc;
        else if (tb->n_enc > 0)
            limit = tb->n_enc;
        ln = name + 4;
        lnl = nl - 4;
    }
    if (layer_index(ln, lnl, &idx, &sfx)) {
        if (idx >= limit - base)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, 0, at,
                                "GGUF: tensor \"%s\" is past the %" PRIu64
                                " layers of the block count",
                                shown(name, nl, d), limit - base);
        idx += base;
        layer_flags(tb, ln + sfx, lnl - sfx, ne);
        if (idx < GPUFIT__GGUF_LAYERS_MAX - 1 || tb->n_layers <= GPUFIT__GGUF_LAYERS_MAX)
            return add_to(&tb->layer[idx], bytes, at, err);
        return add_to(&tb->tail, bytes, at, err);
    }
    if (key_is(name, nl, "token_embd.weight")) {
        tb->flags |= FL_TOKEN_EMBD;
        tb->embd_cols = ne[0];
        tb->vocab_rows = ne[1];
        return add_to(&tb->token_embd, bytes, at, err);
    }
    if (key_is(name, nl, "output.weight")) {
        tb->flags |= FL_OUTPUT;
        return add_to(&tb->output, bytes, at, err);
    }
    if (key_is(name, nl, "position_embd.weight"))
        tb->positions = ne[1];
    else if (key_is(name, nl, "token_types.weight"))
        tb->token_types = ne[1];
    else if (key_is(name, nl, "token_embd_norm.weight"))
        tb->flags |= FL_EMB_NORM;
    return add_to(&tb->global, bytes, at, err);
}

/* ---------------------------------------------------------------------------------------
 * Model
 * ------------------------------------------------------------------------------------- */
typedef struct arch_name {
    char s[40];
} arch_name;

/* A metadata count: required ones name "<arch>.<key>" when missing. */
static int32_t count(const meta *m,
                     const arch_name *an,
                     int a,
                     int required,
                     uint64_t def,
                     uint64_t *out,
                     gpufit_error *err)
{
    if (m->has[a] && m->bad[a])
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, m->at[a],
                            "GGUF: %s.%s is not a count (or varies per layer)", an->s,
                            arch_key_names[a]);
    if (!m->has[a]) {
        if (required)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "GGUF: missing key %s.%s",
                                an->s, arch_key_names[a]);
        *out = def;
        return GPUFIT_OK;
    }
    *out = m->val[a];
    return GPUFIT_OK;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int32_t st_ = (expr);                                                                      \
        if (st_ != GPUFIT_OK)                                                                      \
            return st_;                                                                            \
    } while (0)

/* Model parameter from a count, range-checked as by the setters. */
static int32_t
put(struct gpufit_model *mdl, int32_t id, uint64_t v, const char *what, gpufit_error *err)
{
    const gpufit__param_entry *e = gpufit__param_find(id);
    if (e == NULL || e->is_double)
        return gpufit__fail(err, GPUFIT_E_INTERNAL, id, UINT64_MAX, "no model parameter %d",
                            (int)id);
    if (v > (uint64_t)e->max_i || (int64_t)v < e->min_i)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, id, UINT64_MAX,
                            "GGUF: %s = %" PRIu64 " is out of range [%" PRId64 ", %" PRId64
                            "] (model parameter %s)",
                            what, v, e->min_i, e->max_i, e->name);
    int64_t x = (int64_t)v;
    memcpy((char *)mdl + e->offset, &x, sizeof x);
    return GPUFIT_OK;
}

static int arch_is(const arch_name *an, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(an->s, *list) == 0)
            return 1;
    return 0;
}

/* Fills the architecture fields from the metadata and the tensor flags. */
static int32_t build(const meta *m,
                     const arch_name *an,
                     const tables *tb,
                     struct gpufit_model *mdl,
                     gpufit_error *err)
{
    static const char *const encoders[] = {"bert", "nomic-bert", "jina-bert-v2", "roberta", NULL};
    static const char *const geglu[] = {"gemma", "gemma2", "gemma3", "t5", NULL};
    /* gate and up fused in one ffn_up of 2f rows (Phi-3): gated without an ffn_gate */
    static const char *const fused_gate[] = {"phi3", NULL};
    int t5 = strcmp(an->s, "t5") == 0;
    uint64_t L = 0, h = 0, nq = 0, nkv = 0, dh = 0, f = 0, V = 0, E = 0, k = 0, fm = 0, dense = 0,
             nsh = 0, fsh = 0;
    TRY(count(m, an, A_block_count, 1, 0, &L, err));
    TRY(count(m, an, A_embedding_length, 1, 0, &h, err));
    TRY(count(m, an, A_head_count, 1, 0, &nq, err));
    TRY(count(m, an, A_head_count_kv, 0, nq, &nkv, err));
    TRY(count(m, an, A_key_length, 0, 0, &dh, err));
    TRY(count(m, an, A_expert_count, 0, 0, &E, err));
    if (E > 0) {
        TRY(count(m, an, A_expert_used_count, 1, 0, &k, err));
        TRY(count(m, an, A_leading_dense, 0, 0, &dense, err));
    }
    TRY(count(m, an, A_feed_forward_length, E == 0 || dense > 0, 0, &f, err));
    if (E > 0)
        TRY(count(m, an, A_expert_ffn, f == 0, f, &fm, err));

    /* vocabulary: <arch>.vocab_size, the tokenizer's tokens, the token_embd rows */
    if (m->has[A_vocab_size])
        TRY(count(m, an, A_vocab_size, 1, 0, &V, err));
    else if (m->has_tokens)
        V = m->n_tokens;
    if ((tb->flags & FL_TOKEN_EMBD) && V != 0 && V != tb->vocab_rows)
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, 0, UINT64_MAX,
                            "GGUF: vocabulary of %" PRIu64 " tokens but token_embd has %" PRIu64
                            " rows",
                            V, tb->vocab_rows);
    if (V == 0)
        V = tb->vocab_rows;
    if (V == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "GGUF: missing key %s.vocab_size (no tokenizer.ggml.tokens and no "
                            "token_embd tensor)",
                            an->s);

    gpufit__model_defaults(mdl);
    mdl->o_bias = 0;
    mdl->emb_norm = 0;
    mdl->arch = arch_is(an, encoders) ? GPUFIT_ARCH_ENCODER
                : t5                  ? GPUFIT_ARCH_ENCODER_DECODER
                                      : GPUFIT_ARCH_DECODER;
    int gated = (tb->flags & FL_GATED) != 0 || arch_is(an, fused_gate);
    mdl->mlp = gated ? (arch_is(an, geglu) ? GPUFIT_MLP_GEGLU : GPUFIT_MLP_SWIGLU)
                     : (t5 ? GPUFIT_MLP_RELU : GPUFIT_MLP_GELU);
    mdl->norm = (tb->flags & FL_LAYERNORM) ? GPUFIT_NORM_LAYERNORM : GPUFIT_NORM_RMSNORM;
    TRY(put(mdl, GPUFIT_MODEL_N_LAYERS, L, "block_count", err));
    TRY(put(mdl, GPUFIT_MODEL_HIDDEN_SIZE, h, "embedding_length", err));
    TRY(put(mdl, GPUFIT_MODEL_N_HEADS, nq, "attention.head_count", err));
    TRY(put(mdl, GPUFIT_MODEL_N_KV_HEADS, nkv, "attention.head_count_kv", err));
    TRY(put(mdl, GPUFIT_MODEL_FFN_HIDDEN_SIZE, f, "feed_forward_length", err));
    TRY(put(mdl, GPUFIT_MODEL_VOCAB_SIZE, V, "vocab_size", err));
    mdl->tied_embeddings = (tb->flags & FL_OUTPUT) == 0;
    mdl->qkv_bias = (tb->flags & FL_QKV_BIAS) != 0;
    mdl->o_bias = (tb->flags & FL_O_BIAS) != 0;
    mdl->mlp_bias = (tb->flags & FL_MLP_BIAS) != 0;
    mdl->qk_norm = (tb->flags & FL_QK_NORM) != 0;
    mdl->emb_norm = (tb->flags & FL_EMB_NORM) != 0;
    TRY(put(mdl, GPUFIT_MODEL_MAX_POSITION, tb->positions, "position_embd rows", err));
    TRY(put(mdl, GPUFIT_MODEL_TYPE_VOCAB_SIZE, tb->token_types, "token_types rows", err));

    if (m->has[A_kv_lora_rank]) { /* DeepSeek MLA */
        uint64_t rq = 0, rkv = 0, dr = 0, dk = 0, dv = 0;
        TRY(count(m, an, A_kv_lora_rank, 1, 0, &rkv, err));
        TRY(count(m, an, A_q_lora_rank, 0, 0, &rq, err));
        TRY(count(m, an, A_rope_dims, 1, 0, &dr, err));
        TRY(count(m, an, m->has[A_key_length_mla] ? A_key_length_mla : A_key_length, 1, 0, &dk,
                  err));
        TRY(count(m, an, m->has[A_value_length_mla] ? A_value_length_mla : A_value_length, 1, 0,
                  &dv, err));
        if (dk <= dr)
            return gpufit__fail(err, GPUFIT_E_INCONSISTENT, 0, UINT64_MAX,
                                "GGUF: %s.attention.key_length (%" PRIu64
                                ") must exceed rope.dimension_count (%" PRIu64 ")",
                                an->s, dk, dr);
        TRY(put(mdl, GPUFIT_MODEL_Q_LORA_RANK, rq, "attention.q_lora_rank", err));
        TRY(put(mdl, GPUFIT_MODEL_KV_LORA_RANK, rkv, "attention.kv_lora_rank", err));
        TRY(put(mdl, GPUFIT_MODEL_QK_ROPE_HEAD_DIM, dr, "rope.dimension_count", err));
        TRY(put(mdl, GPUFIT_MODEL_QK_NOPE_HEAD_DIM, dk - dr, "attention.key_length", err));
        TRY(put(mdl, GPUFIT_MODEL_V_HEAD_DIM, dv, "attention.value_length", err));
        TRY(put(mdl, GPUFIT_MODEL_N_KV_HEADS, nq, "attention.head_count", err));
        dh = dk;
    } else if (dh == 0 && nq > 0 && h % nq == 0) {
        dh = h / nq;
    }
    TRY(put(mdl, GPUFIT_MODEL_HEAD_DIM, dh, "attention.key_length", err));

    if (E > 0) {
        TRY(put(mdl, GPUFIT_MODEL_N_EXPERTS, E, "expert_count", err));
        TRY(put(mdl, GPUFIT_MODEL_EXPERTS_PER_TOKEN, k, "expert_used_count", err));
        TRY(put(mdl, GPUFIT_MODEL_MOE_FFN_HIDDEN_SIZE, fm, "expert_feed_forward_length", err));
        TRY(put(mdl, GPUFIT_MODEL_N_DENSE_LAYERS, dense, "leading_dense_block_count", err));
        mdl->router_bias = (tb->flags & FL_ROUTER_BIAS) != 0;
        if (tb->flags & FL_SHEXP) {
            TRY(count(m, an, A_expert_shared_count, 0, 1, &nsh, err));
            TRY(count(m, an, A_expert_shared_ffn, 0, 0, &fsh, err));
            if (fsh == 0 && nsh > 0 && tb->shexp_width != fm * nsh)
                fsh = tb->shexp_width / nsh; /* one shared MLP of its own width */
            TRY(put(mdl, GPUFIT_MODEL_N_SHARED_EXPERTS, nsh, "expert_shared_count", err));
            TRY(put(mdl, GPUFIT_MODEL_SHARED_FFN_HIDDEN_SIZE, fsh,
                    "expert_shared_feed_forward_length", err));
            mdl->shared_expert_gate = (tb->flags & FL_SHEXP_GATE) != 0;
        }
    }
    if (t5) {
        uint64_t dec = 0, buckets = 0;
        TRY(count(m, an, A_decoder_block_count, 0, L, &dec, err));
        TRY(count(m, an, A_rel_buckets, 0, 32, &buckets, err));
        TRY(put(mdl, GPUFIT_MODEL_N_ENCODER_LAYERS, L, "block_count", err));
        TRY(put(mdl, GPUFIT_MODEL_N_DECODER_LAYERS, dec, "decoder_block_count", err));
        TRY(put(mdl, GPUFIT_MODEL_REL_POS_BUCKETS, buckets, "attention.relative_buckets_count",
                err));
    }
    gpufit__shape s;
    gpufit__counts c;
    TRY(gpufit__model_resolve(mdl, &s, err));
    return gpufit__model_count(&s, &c, err);
}

/* Display name: general.name, or the architecture. */
static void set_name(struct gpufit_model *mdl, const meta *m, const arch_name *an)
{
    const uint8_t *n = m->name != NULL && m->name_len > 0 ? m->name : (const uint8_t *)an->s;
    uint64_t nl = m->name != NULL && m->name_len > 0 ? m->name_len : strlen(an->s);
    size_t o = 0;
    for (uint64_t i = 0; i < nl && o < sizeof mdl->name - 1; i++)
        mdl->name[o++] = (n[i] < 0x20 || n[i] == 0x7F) ? '?' : (char)n[i];
    mdl->name[o] = '\0';
}

static int32_t too_small(const rd *r, uint64_t *needed_out, gpufit_error *err)
{
    if (needed_out != NULL)
        *needed_out = r->need;
    return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, r->len,
                        "GGUF: the header continues past the %" PRIu64
                        " bytes given: read at least %" PRIu64,
                        r->len, r->need);
}

int32_t gpufit_model_from_gguf(
    gpufit_model **out, const void *buf, size_t len, uint64_t *needed_out, gpufit_error *err)
{
    if (needed_out != NULL)
        *needed_out = 0;
    if (out == NULL || (buf == NULL && len > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out or buf is NULL");
    *out = NULL;
    rd r = {(const uint8_t *)buf, (uint64_t)len, 0, 0};
    uint64_t magic, version, n_tensors, n_kv;
    int32_t st = rd_uint(&r, 4, &magic, err);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL && (len == 0 || memcmp(buf, "GGUF", len) == 0)) {
        r.need = 24;
        return too_small(&r, needed_out, err);
    }
    if (st != GPUFIT_OK || magic != 0x46554747u) /* "GGUF" little-endian */
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, 0, "GGUF: not a GGUF file (bad magic)");
    st = rd_uint(&r, 4, &version, err);
    if (st == GPUFIT_OK && version != 2 && version != 3)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, 4,
                            "GGUF: version %" PRIu64 " is not supported (2 and 3 are%s)", version,
                            (version >> 16) != 0 ? "; a big-endian file?" : "");
    if (st == GPUFIT_OK)
        st = rd_uint(&r, 8, &n_tensors, err);
    if (st == GPUFIT_OK)
        st = rd_uint(&r, 8, &n_kv, err);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL) {
        r.need = 24;
        return too_small(&r, needed_out, err);
    }
    if (st != GPUFIT_OK)
        return st;
    if (n_tensors > GGUF_TENSORS_MAX || n_kv > GGUF_KV_MAX)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, n_tensors > GGUF_TENSORS_MAX ? 8 : 16,
                            "GGUF: %" PRIu64 " %s exceed the limit of 2^20",
                            n_tensors > GGUF_TENSORS_MAX ? n_tensors : n_kv,
                            n_tensors > GGUF_TENSORS_MAX ? "tensors" : "key/value pairs");

    /* metadata: pass 1 validates and finds the architecture, pass 2 keeps its values */
    meta m;
    memset(&m, 0, sizeof m);
    m.alignment = 32; /* GGUF_DEFAULT_ALIGNMENT */
    uint64_t kv_begin = r.pos;
    st = rd_kv(&r, n_kv, n_tensors, &m, 1, NULL, err);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL)
        return too_small(&r, needed_out, err);
    if (st != GPUFIT_OK)
        return st;
    if (m.arch == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "GGUF: missing key general.architecture");
    arch_name an;
    if (m.arch_len == 0 || m.arch_len >= sizeof an.s)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                            "GGUF: general.architecture of %" PRIu64 " bytes is not supported",
                            m.arch_len);
    for (uint64_t i = 0; i < m.arch_len; i++) {
        uint8_t ch = m.arch[i];
        if (ch < 0x20 || ch >= 0x7F)
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                                "GGUF: general.architecture has a non-printable byte");
        an.s[i] = (char)ch;
    }
    an.s[m.arch_len] = '\0';
    if (strcmp(an.s, "t5encoder") == 0)
        return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                            "GGUF: architecture \"%s\" is not supported", an.s);
    uint64_t kv_end = r.pos;
    r.pos = kv_begin;
    strset set;
    if ((st = strset_init(&set, n_kv, err)) != GPUFIT_OK)
        return st;
    st = rd_kv(&r, n_kv, n_tensors, &m, 2, &set, err);
    free(set.slot);
    if (st != GPUFIT_OK || r.pos != kv_end)
        return st != GPUFIT_OK ? st : gpufit__fail(err, GPUFIT_E_INTERNAL, 0, kv_end, "GGUF");

    /* tensors */
    static const tables zero_tables;
    tables tb = zero_tables;
    uint64_t L = 0, dec = 0;
    TRY(count(&m, &an, A_block_count, 1, 0, &L, err));
    if (L == 0 || L > ((uint64_t)1 << 20))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, m.at[A_block_count],
                            "GGUF: %s.block_count = %" PRIu64 " is out of range [1, 2^20]", an.s,
                            L);
    tb.n_layers = L;
    if (strcmp(an.s, "t5") == 0) {
        TRY(count(&m, &an, A_decoder_block_count, 0, L, &dec, err));
        if (dec > ((uint64_t)1 << 20))
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                                "GGUF: %s.decoder_block_count is too large", an.s);
        tb.n_enc = L;
        tb.n_layers = L + dec;
    }
    if ((st = strset_init(&set, n_tensors, err)) != GPUFIT_OK)
        return st;
    for (uint64_t i = 0; i < n_tensors; i++) {
        st = rd_tensor(&r, &m, &tb, &set, err);
        if (st != GPUFIT_OK)
            free(set.slot);
        if (st == GPUFIT_E_BUFFER_TOO_SMALL) {
            r.need += (n_tensors - i - 1) * MIN_TENSOR_BYTES;
            return too_small(&r, needed_out, err);
        }
        if (st != GPUFIT_OK)
            return st;
    }
    free(set.slot);

    struct gpufit_model mdl;
    /* every byte, so that the returned handle is the same for the same file (the defaults
     * leave a stale cache's bytes as they are) */
    memset(&mdl, 0, sizeof mdl);
    TRY(build(&m, &an, &tb, &mdl, err));
    set_name(&mdl, &m, &an);
    uint64_t nl = tb.n_layers < GPUFIT__GGUF_LAYERS_MAX ? tb.n_layers : GPUFIT__GGUF_LAYERS_MAX;
    for (uint64_t i = 0; i < nl; i++)
        mdl.gguf_layer_bytes[i] = tb.layer[i];
    if (tb.n_layers > GPUFIT__GGUF_LAYERS_MAX) { /* the last entry: mean of the rest, rounded up */
        uint64_t rest = tb.n_layers - (GPUFIT__GGUF_LAYERS_MAX - 1);
        mdl.gguf_layer_bytes[GPUFIT__GGUF_LAYERS_MAX - 1] = tb.tail / rest + (tb.tail % rest != 0);
    }
    mdl.gguf_layers = (uint32_t)nl;
    mdl.gguf_file_type = m.has_file_type ? file_type_dtype(m.file_type) : 0;
    mdl.gguf_token_embd_bytes = tb.token_embd;
    mdl.gguf_output_bytes = tb.output;
    mdl.gguf_global_bytes = tb.global;
    /* the model's bytes must add up without wrapping, whatever the tensor table claims */
    uint64_t total = 0;
    int wrap = gpufit__add(tb.token_embd, tb.output, &total) ||
               gpufit__add(total, tb.global, &total);
    for (uint64_t i = 0; i < nl && !wrap; i++)
        wrap = gpufit__add(total, mdl.gguf_layer_bytes[i], &total);
    if (tb.n_layers > GPUFIT__GGUF_LAYERS_MAX && !wrap)
        wrap = gpufit__add(total, tb.tail, &total);
    if (wrap)
        return gpufit__fail(err, GPUFIT_E_OVERFLOW, 0, UINT64_MAX,
                            "GGUF: the tensors' bytes add up past 2^64");

    gpufit_model *res = malloc(sizeof *res);
    if (res == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    *res = mdl;
    *out = res;
    gpufit__ok(err);
    return GPUFIT_OK;
}
