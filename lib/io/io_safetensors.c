/* SPDX-License-Identifier: MIT */
/* Safetensors headers and model.safetensors.index.json, and the cross-check of a model
 * against them.
 *
 * A .safetensors file starts with a u64 little-endian header length N and N bytes of JSON:
 * {"__metadata__": {string: string}, name: {"dtype": D, "shape": [..], "data_offsets":
 * [begin, end]}, ...}, offsets relative to the data that follows the header
 * (github.com/huggingface/safetensors, README "Format"). Checked here: N within the 16 MiB
 * limit of the JSON tokenizer (json.h), every tensor entry complete and well typed, a known
 * dtype, end >= begin, end - begin == elements x dtype size, and the entries together filling
 * the data exactly (the sum of their sizes equals the largest end: no gap, no overlap that
 * the sizes would show). Unknown members of a tensor entry are skipped. The index.json of a
 * sharded checkpoint gives metadata.total_size only.
 *
 * The buffer is told apart by its first bytes: JSON text never holds a NUL byte, and a
 * safetensors length below 2^56 always does. */
#include "eval.h"
#include "json.h"

#include <inttypes.h>
#include <string.h>

/* dtypes of safetensors (safetensors/src/tensor.rs Dtype) with their size in bits and the
 * byte group they count in (gpufit_safetensors_info). */
enum group { G_FP32, G_16BIT, G_8BIT, G_OTHER };

typedef struct st_dtype {
    const char *name;
    uint32_t bits;
    int32_t group;
} st_dtype;

static const st_dtype st_dtypes[] = {
    {"F64", 64, G_OTHER},   {"F32", 32, G_FP32},     {"F16", 16, G_16BIT},
    {"BF16", 16, G_16BIT},  {"I64", 64, G_OTHER},    {"U64", 64, G_OTHER},
    {"I32", 32, G_OTHER},   {"U32", 32, G_OTHER},    {"I16", 16, G_OTHER},
    {"U16", 16, G_OTHER},   {"I8", 8, G_8BIT},       {"U8", 8, G_8BIT},
    {"BOOL", 8, G_OTHER},   {"F8_E4M3", 8, G_8BIT},  {"F8_E5M2", 8, G_8BIT},
    {"F8_E8M0", 8, G_8BIT}, {"F6_E2M3", 6, G_OTHER}, {"F6_E3M2", 6, G_OTHER},
    {"F4", 4, G_OTHER},     {"C64", 64, G_OTHER},
};
#define N_ST_DTYPES (sizeof st_dtypes / sizeof st_dtypes[0])

#define NAME_SHOWN 64

/* A tensor name (raw JSON span) for messages: printable bytes, cut at NAME_SHOWN. */
static const char *shown(const gpufit__json_token *t, char out[NAME_SHOWN + 8])
{
    size_t o = 0;
    for (size_t i = 0; i < t->len && i < NAME_SHOWN; i++) {
        unsigned char c = (unsigned char)t->text[i];
        out[o++] = (c < 0x20 || c >= 0x7F || c == '"') ? '?' : (char)c;
    }
    if (t->len > NAME_SHOWN) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

/* A non-negative integer JSON number (digits only; "N.0" accepted); 0 when not one. */
static int parse_count(const gpufit__json_token *t, uint64_t *out)
{
    if (t->type != GPUFIT__JSON_NUMBER || t->len == 0)
        return 0;
    uint64_t v = 0;
    size_t i = 0;
    for (; i < t->len && t->text[i] >= '0' && t->text[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(t->text[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (i == 0)
        return 0;
    if (i < t->len) {
        if (t->text[i] != '.')
            return 0;
        for (i++; i < t->len; i++)
            if (t->text[i] != '0')
                return 0;
    }
    *out = v;
    return 1;
}

typedef struct sums {
    uint64_t n_tensors, n_params, bytes, max_end;
    uint64_t group[4];
} sums;

static int32_t bad(gpufit_error *err,
                   uint64_t base,
                   const gpufit__json_token *at,
                   const gpufit__json_token *name,
                   const char *what)
{
    char d[NAME_SHOWN + 8];
    return gpufit__fail(err, GPUFIT_E_PARSE, 0, base + (uint64_t)at->offset,
                        "safetensors: tensor \"%s\": %s", shown(name, d), what);
}

/* Reads an array of counts (its '[' consumed): up to `cap` values into v (the rest are
 * checked and counted); *n gets the element count. */
static int32_t read_counts(gpufit__json *p,
                           uint64_t base,
                           const gpufit__json_token *name,
                           uint64_t *v,
                           size_t cap,
                           uint64_t *n,
                           gpufit_error *err)
{
    *n = 0;
    for (;;) {
        gpufit__json_token e;
        int32_t st = gpufit__json_next(p, &e, err);
        if (st != GPUFIT_OK)
            return st;
        if (e.type == GPUFIT__JSON_ARRAY_END)
            return GPUFIT_OK;
        uint64_t x;
        if (!parse_count(&e, &x))
            return bad(err, base, &e, name, "shape and data_offsets hold non-negative integers");
        if (*n < cap)
            v[*n] = x;
        (*n)++;
    }
}

/* One tensor entry (its '{' consumed): validates it and adds it to the sums. */
static int32_t read_tensor(
    gpufit__json *p, uint64_t base, const gpufit__json_token *name, sums *s, gpufit_error *err)
{
    const st_dtype *dt = NULL;
    uint64_t numel = 1, offs[2] = {0, 0}, n_offs = 0;
    int has_shape = 0, has_offs = 0;
    for (;;) {
        gpufit__json_token k, v;
        int32_t st = gpufit__json_member(p, &k, &v, err);
        if (st <= 0) {
            if (st < 0)
                return st;
            break;
        }
        if (gpufit__json_equals(&k, "dtype")) {
            dt = NULL;
            for (size_t i = 0; i < N_ST_DTYPES && v.type == GPUFIT__JSON_STRING; i++)
                if (gpufit__json_equals(&v, st_dtypes[i].name))
                    dt = &st_dtypes[i];
            if (dt == NULL)
                return bad(err, base, &v, name, "unknown dtype");
        } else if (gpufit__json_equals(&k, "shape")) {
            if (v.type != GPUFIT__JSON_ARRAY)
                return bad(err, base, &v, name, "shape is not an array");
            uint64_t dims[64], nd = 0;
            st = read_counts(p, base, name, dims, 64, &nd, err);
            if (st != GPUFIT_OK)
                return st;
            if (nd > 64)
                return bad(err, base, &v, name, "shape has more than 64 dimensions");
            numel = 1;
            for (uint64_t i = 0; i < nd; i++)
                if (gpufit__mul(numel, dims[i], &numel))
                    return bad(err, base, &v, name, "element count exceeds 64 bits");
            has_shape = 1;
        } else if (gpufit__json_equals(&k, "data_offsets")) {
            if (v.type != GPUFIT__JSON_ARRAY)
                return bad(err, base, &v, name, "data_offsets is not an array");
            st = read_counts(p, base, name, offs, 2, &n_offs, err);
            if (st != GPUFIT_OK)
                return st;
            if (n_offs != 2)
                return bad(err, base, &v, name, "data_offsets needs [begin, end]");
            if (offs[1] < offs[0])
                return bad(err, base, &v, name, "data_offsets end before they begin");
            has_offs = 1;
        } else {
            st = gpufit__json_skip(p, &v, err);
            if (st != GPUFIT_OK)
                return st;
        }
    }
    if (dt == NULL || !has_shape || !has_offs)
        return bad(err, base, name, name,
                   dt == NULL   ? "missing dtype"
                   : !has_shape ? "missing shape"
                                : "missing data_offsets");
    uint64_t bits, bytes;
    if (gpufit__mul(numel, dt->bits, &bits))
        return bad(err, base, name, name, "byte count exceeds 64 bits");
    if (bits % 8 != 0)
        return bad(err, base, name, name, "sub-byte dtype with a partial last byte");
    bytes = bits / 8;
    if (offs[1] - offs[0] != bytes) {
        char d[NAME_SHOWN + 8];
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, base + (uint64_t)name->offset,
                            "safetensors: tensor \"%s\": data_offsets span %" PRIu64
                            " bytes, shape and %s need %" PRIu64,
                            shown(name, d), offs[1] - offs[0], dt->name, bytes);
    }
    if (gpufit__add(s->n_params, numel, &s->n_params) || gpufit__add(s->bytes, bytes, &s->bytes) ||
        gpufit__add(s->group[dt->group], bytes, &s->group[dt->group]))
        return bad(err, base, name, name, "totals exceed 64 bits");
    if (offs[1] > s->max_end)
        s->max_end = offs[1];
    s->n_tensors++;
    return GPUFIT_OK;
}

/* The JSON header of a .safetensors file (base: its offset in the file, for messages). */
static int32_t read_header(const char *json, size_t len, uint64_t base, sums *s, gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token t;
    int32_t st = gpufit__json_init(&p, json, len, err);
    if (st == GPUFIT_OK)
        st = gpufit__json_next(&p, &t, err);
    if (st != GPUFIT_OK)
        return st;
    if (t.type != GPUFIT__JSON_OBJECT)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, base + (uint64_t)t.offset,
                            "safetensors: the header must be a JSON object");
    for (;;) {
        gpufit__json_token k, v;
        st = gpufit__json_member(&p, &k, &v, err);
        if (st <= 0) {
            if (st < 0)
                return st;
            break;
        }
        if (gpufit__json_equals(&k, "__metadata__")) {
            if (v.type != GPUFIT__JSON_OBJECT)
                return gpufit__fail(err, GPUFIT_E_PARSE, 0, base + (uint64_t)v.offset,
                                    "safetensors: __metadata__ must be an object");
            st = gpufit__json_skip(&p, &v, err);
        } else if (v.type != GPUFIT__JSON_OBJECT) {
            return bad(err, base, &v, &k, "entry is not an object");
        } else {
            st = read_tensor(&p, base, &k, s, err);
        }
        if (st != GPUFIT_OK)
            return st;
    }
    st = gpufit__json_next(&p, &t, err); /* END: nothing after the object but spaces */
    if (st != GPUFIT_OK)
        return st;
    if (s->bytes != s->max_end)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, base,
                            "safetensors: tensors list %" PRIu64
                            " bytes but their data ends at byte %" PRIu64 " (gaps or overlaps)",
                            s->bytes, s->max_end);
    if (s->n_tensors > UINT32_MAX)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, base, "safetensors: too many tensors");
    return GPUFIT_OK;
}

/* model.safetensors.index.json: metadata.total_size. */
static int32_t read_index(const char *json, size_t len, uint64_t *total, gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token t;
    int found = 0;
    int32_t st = gpufit__json_init(&p, json, len, err);
    if (st == GPUFIT_OK)
        st = gpufit__json_next(&p, &t, err);
    if (st != GPUFIT_OK)
        return st;
    if (t.type != GPUFIT__JSON_OBJECT)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, t.offset,
                            "safetensors index: the document must be a JSON object");
    for (;;) {
        gpufit__json_token k, v;
        st = gpufit__json_member(&p, &k, &v, err);
        if (st <= 0) {
            if (st < 0)
                return st;
            break;
        }
        if (!gpufit__json_equals(&k, "metadata") || v.type != GPUFIT__JSON_OBJECT) {
            st = gpufit__json_skip(&p, &v, err);
            if (st != GPUFIT_OK)
                return st;
            continue;
        }
        for (;;) { /* members of "metadata" (deeper containers skipped) */
            gpufit__json_token mk, mv;
            st = gpufit__json_member(&p, &mk, &mv, err);
            if (st <= 0) {
                if (st < 0)
                    return st;
                break;
            }
            if (gpufit__json_equals(&mk, "total_size")) {
                if (!parse_count(&mv, total))
                    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, mv.offset,
                                        "safetensors index: metadata.total_size must be a "
                                        "non-negative integer");
                found = 1;
            } else {
                st = gpufit__json_skip(&p, &mv, err);
                if (st != GPUFIT_OK)
                    return st;
            }
        }
    }
    st = gpufit__json_next(&p, &t, err);
    if (st != GPUFIT_OK)
        return st;
    if (!found)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "safetensors index: missing key metadata.total_size");
    return GPUFIT_OK;
}

/* JSON text (an index) rather than a binary header: starts like JSON and has no NUL byte in
 * its first 8 bytes (a safetensors header length below 2^56 always has one). */
static int looks_like_json(const unsigned char *b, size_t len)
{
    if (len == 0)
        return 0;
    unsigned char c = b[0];
    if (c != '{' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != 0xEF)
        return 0;
    for (size_t i = 1; i < len && i < 8; i++)
        if (b[i] == 0)
            return 0;
    return 1;
}

int32_t gpufit_safetensors_read(gpufit_safetensors_info *out,
                                const void *buf,
                                size_t len,
                                uint64_t *needed_out,
                                gpufit_error *err)
{
    if (needed_out != NULL)
        *needed_out = 0;
    if (out == NULL || (buf == NULL && len > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "out or buf is NULL");
    if (out->struct_size < sizeof(gpufit_safetensors_info))
        return gpufit__fail(err, GPUFIT_E_STRUCT_SIZE, 0, UINT64_MAX,
                            "gpufit_safetensors_info.struct_size %u is smaller than %zu",
                            (unsigned)out->struct_size, sizeof(gpufit_safetensors_info));
    const unsigned char *b = buf;
    gpufit_safetensors_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = (uint32_t)sizeof info;
    int32_t st;
    if (looks_like_json(b, len)) {
        st = read_index(buf, len, &info.total_bytes, err);
    } else {
        if (len < 8) {
            if (needed_out != NULL)
                *needed_out = 8;
            return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, len,
                                "safetensors: %zu bytes given, the header length needs 8", len);
        }
        uint64_t n = 0;
        for (int i = 7; i >= 0; i--)
            n = n << 8 | b[i];
        if (n > GPUFIT__JSON_LEN_MAX)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, 0,
                                "safetensors: header of %" PRIu64
                                " bytes exceeds the %zu-byte limit",
                                n, (size_t)GPUFIT__JSON_LEN_MAX);
        if (n + 8 > len) {
            if (needed_out != NULL)
                *needed_out = n + 8;
            return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, len,
                                "safetensors: the header continues past the %zu bytes given: "
                                "read %" PRIu64,
                                len, n + 8);
        }
        sums s;
        memset(&s, 0, sizeof s);
        st = read_header((const char *)b + 8, (size_t)n, 8, &s, err);
        info.n_tensors = (uint32_t)s.n_tensors;
        info.n_params = s.n_params;
        info.total_bytes = s.bytes;
        info.header_bytes = n + 8;
        info.bytes_fp32 = s.group[G_FP32];
        info.bytes_16bit = s.group[G_16BIT];
        info.bytes_8bit = s.group[G_8BIT];
        info.bytes_other = s.group[G_OTHER];
    }
    if (st != GPUFIT_OK)
        return st;
    st = gpufit__copy_out(out, &info, sizeof info, sizeof(gpufit_safetensors_info));
    if (st != GPUFIT_OK)
        return gpufit__fail(err, st, 0, UINT64_MAX, "gpufit_safetensors_info: bad struct_size");
    gpufit__ok(err);
    return GPUFIT_OK;
}

/* Parameters that a checkpoint may hold beyond the model (memory-model.md §1.4, §1.7): a
 * second copy of the token embedding (tied weights saved twice, or DeepSeek's MTP module with
 * its own embed_tokens and shared_head.head), and up to four extra layers, either plain
 * copies of the last layer class or DeepSeek-V3 multi-token-prediction modules (a layer +
 * enorm, hnorm, shared_head.norm + eh_proj 2h x h). */
static int allowed_extra(const gpufit__shape *s, const gpufit__counts *c, uint64_t extra)
{
    uint64_t layer = 0;
    for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++)
        if (s->layers[w] > 0)
            layer = c->per_layer[w]; /* the last class: MoE after dense, decoder after encoder */
    uint64_t norm = s->norm == GPUFIT_NORM_LAYERNORM ? 2 * s->h : s->h;
    uint64_t mtp = layer + 3 * norm + 2 * s->h * s->h;
    const uint64_t units[2] = {layer, mtp};
    for (uint64_t emb = 0; emb <= 2; emb++) {
        uint64_t e = emb * c->embedding;
        if (e > extra)
            break;
        for (int u = 0; u < 2; u++)
            for (uint64_t k = 0; k <= 4; k++)
                if (e + k * units[u] == extra)
                    return 1;
    }
    return 0;
}

int32_t gpufit_model_check_safetensors(const gpufit_model *m,
                                       const gpufit_safetensors_info *info,
                                       gpufit_error *err)
{
    if (m == NULL || info == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "model or info is NULL");
    if (!GPUFIT_HAS_FIELD(info, gpufit_safetensors_info, n_params))
        return gpufit__fail(err, GPUFIT_E_STRUCT_SIZE, 0, UINT64_MAX,
                            "gpufit_safetensors_info.struct_size %u is too small",
                            (unsigned)info->struct_size);
    if (gpufit__tail_zero(info, sizeof *info) != GPUFIT_OK)
        return gpufit__fail(err, GPUFIT_E_STRUCT_SIZE, 0, UINT64_MAX,
                            "gpufit_safetensors_info.struct_size %u: the %u bytes this library "
                            "does not know must be zero (and struct_size at most %u)",
                            (unsigned)info->struct_size,
                            info->struct_size > sizeof *info
                                ? (unsigned)(info->struct_size - sizeof *info)
                                : 0u,
                            GPUFIT__INPUT_STRUCT_MAX);
    if (info->n_params == 0)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "safetensors: no parameter count to check (an index.json gives only "
                            "total_size: read the shard headers)");
    gpufit__shape s;
    gpufit__counts c;
    int32_t st = gpufit__model_resolve(m, &s, err);
    if (st == GPUFIT_OK)
        st = gpufit__model_count(&s, &c, err);
    if (st != GPUFIT_OK)
        return st;
    uint64_t have = info->n_params;
    if (have == c.total || (have > c.total && s.arch != GPUFIT_ARCH_GENERIC &&
                            allowed_extra(&s, &c, have - c.total))) {
        gpufit__ok(err);
        return GPUFIT_OK;
    }
    if (info->total_bytes > 0 &&
        gpufit__plan_checkpoint(&s, &(gpufit__plan){.w_dt = GPUFIT_DTYPE_BF16}) >
            GPUFIT_DTYPE_BF16) {
        /* packed formats (int32 words, uint8 pairs) hold fewer elements than parameters, and
         * fp8 / int8 add scale tensors:
         * compare bytes instead, within 3 % for per-tensor metadata (quant_state, scales of
         * fp8 / int8 per channel, GPTQ g_idx): docs/memory/quantisation.md */
        gpufit__tgroup g[GPUFIT__TGROUPS_MAX];
        size_t ng = gpufit__model_tensors(&s, g);
        uint64_t want, tb = info->total_bytes;
        if (gpufit__checkpoint_bytes(&s, g, ng, &want))
            return gpufit__fail(err, GPUFIT_E_OVERFLOW, 0, UINT64_MAX, "checkpoint bytes overflow");
        if (tb >= want - want / 33 && tb <= want + want / 33 + c.embedding * 2) {
            gpufit__ok(err);
            return GPUFIT_OK;
        }
        return gpufit__fail(err, GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_MLP_DTYPE, UINT64_MAX,
                            "safetensors hold %" PRIu64 " bytes, the quantised model %s %" PRIu64,
                            tb, m->name, want);
    }
    return gpufit__fail(err, GPUFIT_E_INCONSISTENT, 0, UINT64_MAX,
                        "safetensors hold %" PRIu64 " parameters, the model %s has %" PRIu64
                        " (%s %" PRIu64 ")",
                        have, m->name, c.total, have > c.total ? "+" : "-",
                        have > c.total ? have - c.total : c.total - have);
}
