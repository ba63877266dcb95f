/* SPDX-License-Identifier: MIT */
/* gpufit_apply_json(): a JSON scenario (shared/reference/scenario.md, "JSON form") applied to a
 * model and a job.
 *
 * Semantics:
 * - The document must be one JSON object; it is checked completely before anything is applied.
 * - "model" is applied first, wherever it stands: a preset name (string), or an object. An
 *   object with "preset" loads that preset and applies every other member as an override; an
 *   object without "preset" starts from the default (custom) model and applies its members
 *   (architecture keys). "name" in a model object is a display name. "hf_config" and "path"
 *   are GPUFIT_E_UNSUPPORTED here ("path" is resolved by the command line and Python).
 *   Job keys inside the model object are errors.
 * - "gpu" is a catalogue name or alias, or an object {"memory_gib": N} / {"memory_bytes": N}
 *   with an optional "name": a catalogue name keeps that GPU (its properties) with the given
 *   capacity; any other name is a display name of a GPU with no catalogue id (gpu = none). An
 *   object with only "name" looks the name up in the catalogue.
 * - Every other top-level key goes through gpufit__apply_kv() in document order. Scalars are
 *   passed as their text: numbers as written, strings unescaped, true/false as "true"/"false".
 *   null, arrays and objects are errors naming the key.
 * - Ignored top-level keys: "id", "comment", "$schema" and any key starting with '_'.
 * - Duplicated keys are errors naming both byte offsets: a key given twice in one object, or a
 *   parameter given both in "model" and at the top level (by any alias); so are conflicting keys
 *   (gpu_memory_gib with gpu_memory_bytes, also as gpu.memory_gib / gpu.memory_bytes). Ignored
 *   keys may repeat.
 * - Atomic: the handles change only when the whole scenario applied without error.
 */
#include "json.h"

#include <string.h>

#define KEY_MAX 128 /* decoded key bytes */
#define VAL_MAX 1024 /* decoded scalar value bytes (a list: up to 16 GPU names) */

_Static_assert(GPUFIT__JSON_NUMBER_MAX <= VAL_MAX, "a number must fit in a value buffer");

/* A scalar's text: text/len, not NUL-terminated. It points into the document when the
 * value is written there as it reads (a number, a literal, a string without escapes: the
 * common case, not copied), and at buf otherwise (decoded escapes, a joined list). */
typedef struct scalar {
    const char *text;
    size_t len;
    char buf[VAL_MAX + 1];
} scalar;

/* A key's text, likewise: into the document, or buf when it had escapes. */
typedef struct key {
    const char *text;
    size_t len;
    size_t offset; /* of the key's opening quote */
    char buf[KEY_MAX + 1];
} key;

typedef struct ctx {
    struct gpufit_model m;
    struct gpufit_job *j;   /* the handle: restored from a copy on error */
    gpufit__doc_keys seen;  /* parameters set by the document, for duplicates and conflicts */
    int model_set, job_set; /* whether the document sets anything of the model, of the job */
    /* a preset named by "model" and not loaded yet: into m when a model key needs it, else
     * into the handle once the document applied (then m is not copied) */
    int preset_pending;
    size_t preset_row;
    const gpufit__json_token *preset_v;
} ctx;

/* The working model, with a pending preset loaded into it. */
static struct gpufit_model *model_of(ctx *c)
{
    if (c->preset_pending) {
        gpufit__preset_load_row(&c->m, c->preset_row, c->preset_v->text, c->preset_v->len);
        c->preset_pending = 0;
    }
    return &c->m;
}

static int key_is(const key *k, const char *lit)
{
    size_t n = strlen(lit);
    return k->len == n && memcmp(k->text, lit, n) == 0;
}

/* Copy of s for a one-line message: control bytes become '?', long names are cut with "...". */
static const char *shown(const char *s, size_t n, char out[72])
{
    size_t lim = 64, o = 0;
    for (size_t i = 0; i < n && i < lim; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (n > lim) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

/* When a callee reported no offset, points the error at the value. */
static void default_offset(gpufit_error *err, size_t off)
{
    if (err != NULL && err->struct_size >= sizeof(gpufit_error) && err->offset == UINT64_MAX)
        err->offset = (uint64_t)off;
}

static int32_t param_id(const char *name, size_t len)
{
    const gpufit__param_entry *e = gpufit__param_find_name(name, len);
    return e != NULL ? e->id : 0;
}

/* Decodes a key token; keys must be printable and at most KEY_MAX bytes. */
/* Whether string token t can be used in place: no escapes, at most max bytes and no DEL (the
 * one control byte the tokenizer lets through; the decoding path reports it). */
static int in_place(const gpufit__json_token *t, size_t max)
{
    return !t->escaped && t->len <= max && memchr(t->text, 0x7F, t->len) == NULL;
}

static int32_t read_key(const gpufit__json_token *t, const char *prefix, key *k, gpufit_error *err)
{
    char d[72];
    size_t n = 0;
    k->offset = t->offset;
    /* the common case: the raw span is the key (raw bytes below 0x20 were refused already) */
    if (in_place(t, KEY_MAX)) {
        k->text = t->text;
        k->len = t->len;
        return GPUFIT_OK;
    }
    k->text = k->buf;
    int32_t st = gpufit__json_decode(t, k->buf, sizeof k->buf, &n, NULL);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL)
        return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, (uint64_t)t->offset,
                            "unknown key '%s%s' (longer than %d bytes)", prefix,
                            shown(k->text, KEY_MAX, d), KEY_MAX);
    if (st != GPUFIT_OK)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)t->offset,
                            "JSON: malformed key at byte %zu", t->offset);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)k->text[i];
        if (c < 0x20 || c == 0x7F)
            return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, (uint64_t)t->offset,
                                "unknown key '%s%s' (it contains a control character)", prefix,
                                shown(k->text, n, d));
    }
    k->len = n;
    return GPUFIT_OK;
}

/* An unknown key, reported at the key (gpufit__apply_kv would point at the value). */
static int32_t unknown_key(const key *k, const char *prefix, gpufit_error *err)
{
    char d[72], hint[96];
    hint[0] = '\0';
    if (prefix[0] == '\0') /* a top-level key: the parameter names */
        gpufit__suggest_key(k->text, k->len, hint, sizeof hint);
    return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, (uint64_t)k->offset,
                        "unknown key '%s%s' (see 'gpufit params' and scenario.md)%s", prefix,
                        shown(k->text, k->len, d), hint);
}

/* The text of a scalar value v of key `prefix``k` (strings unescaped). */
static int32_t scalar_text(
    const gpufit__json_token *v, const char *prefix, const key *k, scalar *out, gpufit_error *err)
{
    char d[72];
    int32_t pid = 0;
    out->len = 0;
    out->text = "";
    switch (v->type) {
    case GPUFIT__JSON_STRING: {
        size_t n = 0;
        if (in_place(v, VAL_MAX)) { /* the raw span is the value */
            out->text = v->text;
            out->len = v->len;
            return GPUFIT_OK;
        }
        out->text = out->buf;
        int32_t st = gpufit__json_decode(v, out->buf, sizeof out->buf, &n, NULL);
        if (st == GPUFIT_E_BUFFER_TOO_SMALL)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, param_id(k->text, k->len),
                                (uint64_t)v->offset, "value of '%s%s' is longer than %d bytes",
                                prefix, shown(k->text, k->len, d), VAL_MAX);
        if (st != GPUFIT_OK)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)v->offset,
                                "JSON: malformed string at byte %zu", v->offset);
        /* No parameter value, preset or GPU name has control characters; refusing them also
         * keeps every error message that quotes the value on one line. */
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)out->text[i];
            if (ch < 0x20 || ch == 0x7F)
                return gpufit__fail(err, GPUFIT_E_INVALID_ARG, param_id(k->text, k->len),
                                    (uint64_t)v->offset,
                                    "value of '%s%s' contains a control character", prefix, shown(k->text, k->len, d));
        }
        out->len = n;
        return GPUFIT_OK;
    }
    case GPUFIT__JSON_NUMBER:
    case GPUFIT__JSON_TRUE:
    case GPUFIT__JSON_FALSE:
        if (v->len > VAL_MAX) /* numbers are limited by the tokenizer; defensive */
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, param_id(k->text, k->len),
                                (uint64_t)v->offset, "value of '%s%s' is longer than %d bytes",
                                prefix, shown(k->text, k->len, d), VAL_MAX);
        out->text = v->text; /* checked by the tokenizer; not copied */
        out->len = v->len;
        return GPUFIT_OK;
    case GPUFIT__JSON_NULL:
        pid = param_id(k->text, k->len);
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, pid, (uint64_t)v->offset,
                            "'%s%s' is null: give it a value or leave the key out", prefix, shown(k->text, k->len, d));
    case GPUFIT__JSON_ARRAY:
    case GPUFIT__JSON_OBJECT:
        pid = param_id(k->text, k->len);
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, pid, (uint64_t)v->offset,
                            "'%s%s' takes a single value (number, string or boolean), not an %s",
                            prefix, shown(k->text, k->len, d), v->type == GPUFIT__JSON_ARRAY ? "array" : "object");
    default:
        return gpufit__fail(err, GPUFIT_E_INTERNAL, 0, (uint64_t)v->offset,
                            "JSON: unexpected token for '%s%s'", prefix, shown(k->text, k->len, d));
    }
}

/* The text of a list value: a JSON array of numbers or strings joined with commas (the
 * spec form "3,1"), or a scalar as scalar_text reads it. p is positioned after v. */
static int32_t list_text(gpufit__json *p, const gpufit__json_token *v, const key *k,
                         scalar *out, gpufit_error *err)
{
    if (v->type != GPUFIT__JSON_ARRAY)
        return scalar_text(v, "", k, out, err);
    char d[72];
    const char *kn = shown(k->text, k->len, d);
    int32_t pid = param_id(k->text, k->len);
    out->len = 0;
    out->text = out->buf;
    out->buf[0] = '\0';
    for (uint32_t n = 0;; n++) {
        gpufit__json_token el;
        scalar one;
        int32_t st = gpufit__json_next(p, &el, err);
        if (st != GPUFIT_OK)
            return st;
        if (el.type == GPUFIT__JSON_ARRAY_END)
            break;
        if (el.type != GPUFIT__JSON_NUMBER && el.type != GPUFIT__JSON_STRING)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, pid, (uint64_t)el.offset,
                                "'%s' takes an array of numbers or names", kn);
        if ((st = scalar_text(&el, "", k, &one, err)) != GPUFIT_OK)
            return st;
        if (memchr(one.text, ',', one.len) != NULL || one.len == 0 ||
            out->len + one.len + 1 > VAL_MAX)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, pid, (uint64_t)el.offset,
                                "'%s' entry %u is empty, holds a comma or is too long", kn,
                                n + 1);
        if (out->len > 0)
            out->buf[out->len++] = ',';
        memcpy(out->buf + out->len, one.text, one.len);
        out->len += one.len;
        out->buf[out->len] = '\0';
    }
    if (out->len == 0) { /* [] clears the list */
        memcpy(out->buf, "none", 5);
        out->len = 4;
    }
    return GPUFIT_OK;
}

/* Reads the next token and requires a key or the object's end. */
static int32_t next_member(gpufit__json *p, gpufit__json_token *k, gpufit_error *err)
{
    int32_t st = gpufit__json_next(p, k, err);
    if (st == GPUFIT_OK && k->type != GPUFIT__JSON_KEY && k->type != GPUFIT__JSON_OBJECT_END)
        return gpufit__fail(err, GPUFIT_E_INTERNAL, 0, (uint64_t)k->offset,
                            "JSON: expected a key at byte %zu", k->offset);
    return st;
}

/* Loads a preset named by string token v into c->m. */
static int32_t load_preset(ctx *c, const gpufit__json_token *v, const char *what, gpufit_error *err)
{
    scalar s;
    key k;
    size_t wl = strlen(what);
    if (wl > KEY_MAX)
        wl = KEY_MAX;
    memcpy(k.buf, what, wl);
    k.buf[wl] = '\0';
    k.text = k.buf;
    k.len = wl;
    k.offset = v->offset;
    if (v->type != GPUFIT__JSON_STRING && v->type != GPUFIT__JSON_NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)v->offset,
                            "'%s' must be a preset name (a string)", what);
    int32_t st = scalar_text(v, "", &k, &s, err);
    if (st != GPUFIT_OK)
        return st;
    st = gpufit__preset_load(&c->m, s.text, s.len, err);
    if (st != GPUFIT_OK)
        default_offset(err, v->offset);
    return st;
}

/* Applies the model object whose '{' was just read from p; reads through its '}'. */
static int32_t apply_model_object(ctx *c, gpufit__json *p, gpufit_error *err)
{
    gpufit__json_token k, v;
    gpufit__json q = *p, preset_at = *p;
    int has_preset = 0, has_name = 0;
    size_t preset_off = 0, name_off = 0;
    int32_t st;

    /* Pre-scan: unsupported forms, and the (last) preset, which is loaded before overrides. */
    for (;;) {
        if ((st = next_member(&q, &k, err)) != GPUFIT_OK)
            return st;
        if (k.type == GPUFIT__JSON_OBJECT_END)
            break;
        if (gpufit__json_equals(&k, "hf_config"))
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, (uint64_t)k.offset,
                                "'model.hf_config' is not available yet: give a preset or the "
                                "architecture keys");
        if (gpufit__json_equals(&k, "path"))
            return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, (uint64_t)k.offset,
                                "'model.path' is handled by the command line and the Python "
                                "binding, not by gpufit_apply_json()");
        if (gpufit__json_equals(&k, "preset") || gpufit__json_equals(&k, "name")) {
            int pre = gpufit__json_equals(&k, "preset");
            if (pre ? has_preset : has_name)
                return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)k.offset,
                                    "duplicate key 'model.%s' (at bytes %zu and %zu): give "
                                    "each key once",
                                    pre ? "preset" : "name", pre ? preset_off : name_off,
                                    k.offset);
            if (pre) {
                preset_at = q;
                has_preset = 1;
                preset_off = k.offset;
            } else {
                has_name = 1;
                name_off = k.offset;
            }
        }
        if ((st = gpufit__json_next(&q, &v, err)) != GPUFIT_OK ||
            (st = gpufit__json_skip(&q, &v, err)) != GPUFIT_OK)
            return st;
    }
    if (has_preset) {
        if ((st = gpufit__json_next(&preset_at, &v, err)) != GPUFIT_OK)
            return st;
        if ((st = load_preset(c, &v, "model.preset", err)) != GPUFIT_OK)
            return st;
    } else {
        gpufit__model_defaults(&c->m);
    }

    for (;;) {
        key kk;
        scalar s;
        char d[72];
        if ((st = next_member(p, &k, err)) != GPUFIT_OK)
            return st;
        if (k.type == GPUFIT__JSON_OBJECT_END)
            return GPUFIT_OK;
        if ((st = read_key(&k, "model.", &kk, err)) != GPUFIT_OK)
            return st;
        if ((st = gpufit__json_next(p, &v, err)) != GPUFIT_OK)
            return st;
        if (key_is(&kk, "preset")) {
            if ((st = gpufit__json_skip(p, &v, err)) != GPUFIT_OK)
                return st;
            continue;
        }
        if (key_is(&kk, "name")) {
            if ((st = scalar_text(&v, "model.", &kk, &s, err)) != GPUFIT_OK)
                return st;
            if (v.type != GPUFIT__JSON_STRING || s.len == 0 || s.len >= sizeof c->m.name)
                return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)v.offset,
                                    "'model.name' must be a string of 1 to %zu bytes",
                                    sizeof c->m.name - 1);
            memcpy(c->m.name, s.text, s.len);
            c->m.name[s.len] = '\0';
            continue;
        }
        if (key_is(&kk, "model") || key_is(&kk, "gpu"))
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)k.offset,
                                "'model.%.*s' is not a model key: put it at the top level", (int)kk.len,
                                kk.text);
        const gpufit__param_entry *e = gpufit__param_find_name(kk.text, kk.len);
        if (e == NULL)
            return unknown_key(&kk, "model.", err);
        if (e->domain == GPUFIT_DOMAIN_JOB)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, e->id, (uint64_t)k.offset,
                                "'model.%s' is a job key: put it at the top level of the "
                                "scenario",
                                shown(kk.text, kk.len, d));
        if ((st = gpufit__doc_entry(&c->seen, e, kk.text, kk.len, k.offset, err)) != GPUFIT_OK ||
            (st = scalar_text(&v, "model.", &kk, &s, err)) != GPUFIT_OK)
            return st;
        st = gpufit__apply_entry(&c->m, c->j, e, s.text, s.len, (uint64_t)v.offset, err);
        if (st != GPUFIT_OK) {
            default_offset(err, v.offset);
            return st;
        }
    }
}

/* Applies the value v of "model" (an object's members are read from p, after its '{'). */
static int32_t apply_model_value(ctx *c, gpufit__json *p, const gpufit__json_token *v,
                                 gpufit_error *err)
{
    switch (v->type) {
    case GPUFIT__JSON_STRING:
    case GPUFIT__JSON_NULL:
        return load_preset(c, v, "model", err);
    case GPUFIT__JSON_OBJECT:
        return apply_model_object(c, p, err);
    default:
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)v->offset,
                            "'model' must be a preset name or an object");
    }
}

/* Applies the value of "model" (the next token of p). */
static int32_t apply_model(ctx *c, gpufit__json *p, gpufit_error *err)
{
    gpufit__json_token v;
    int32_t st = gpufit__json_next(p, &v, err);
    if (st != GPUFIT_OK)
        return st;
    return apply_model_value(c, p, &v, err);
}

/* Applies the value of parameter id (a job key the gpu object stands for), found by id. */
static int32_t
kv(ctx *c, int32_t id, const char *val, size_t vlen, size_t off, gpufit_error *err)
{
    int32_t st =
        gpufit__apply_entry(&c->m, c->j, gpufit__param_find(id), val, vlen, (uint64_t)off, err);
    if (st != GPUFIT_OK)
        default_offset(err, off);
    return st;
}

/* Copies a display name into gpu_name, cut at a UTF-8 character boundary. */
static void set_gpu_name(ctx *c, const char *s, size_t n)
{
    size_t cap = sizeof c->j->gpu_name - 1;
    if (n > cap) {
        n = cap;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--; /* s[n] is a continuation byte: cut before its lead byte */
    }
    memcpy(c->j->gpu_name, s, n);
    c->j->gpu_name[n] = '\0';
}

/* Applies the gpu object whose '{' (at obj_off) was just read from p; reads through its '}'. */
static int32_t apply_gpu_object(ctx *c, gpufit__json *p, size_t obj_off, gpufit_error *err)
{
    gpufit__json_token k, v;
    gpufit__json q = *p;
    int has_capacity = 0, has_name = 0;
    size_t first_name = 0;
    scalar name;
    size_t name_off = obj_off;
    int32_t st;
    char d[72];

    /* Pre-scan: keys, and the (last) name. */
    for (;;) {
        key kk;
        if ((st = next_member(&q, &k, err)) != GPUFIT_OK)
            return st;
        if (k.type == GPUFIT__JSON_OBJECT_END)
            break;
        if ((st = read_key(&k, "gpu.", &kk, err)) != GPUFIT_OK)
            return st;
        if ((st = gpufit__json_next(&q, &v, err)) != GPUFIT_OK)
            return st;
        if (key_is(&kk, "memory_gib") || key_is(&kk, "memory_bytes")) {
            const char *param = key_is(&kk, "memory_gib") ? "gpu_memory_gib" : "gpu_memory_bytes";
            if ((st = gpufit__doc_key(&c->seen, param, strlen(param), k.offset, err)) != GPUFIT_OK)
                return st;
            has_capacity = 1;
        } else if (key_is(&kk, "name")) {
            if (has_name)
                return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)k.offset,
                                    "duplicate key 'gpu.name' (at bytes %zu and %zu): give "
                                    "each key once",
                                    first_name, k.offset);
            first_name = k.offset;
            if ((st = scalar_text(&v, "gpu.", &kk, &name, err)) != GPUFIT_OK)
                return st;
            if (v.type != GPUFIT__JSON_STRING)
                return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)v.offset,
                                    "'gpu.name' must be a string");
            has_name = 1;
            name_off = v.offset;
        } else {
            return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, (uint64_t)k.offset,
                                "unknown key 'gpu.%s': a gpu object takes memory_gib, "
                                "memory_bytes and name",
                                shown(kk.text, kk.len, d));
        }
        if ((st = gpufit__json_skip(&q, &v, err)) != GPUFIT_OK)
            return st;
    }

    c->j->gpu_name[0] = '\0';
    if (!has_capacity) {
        if (!has_name)
            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPU, (uint64_t)obj_off,
                                "'gpu' object needs memory_gib or memory_bytes (or a catalogue "
                                "name)");
        if ((st = kv(c, GPUFIT_JOB_GPU, name.text, name.len, name_off, err)) != GPUFIT_OK)
            return st;
        c->j->gpu_name[0] = '\0';
        *p = q; /* the object is consumed */
        return GPUFIT_OK;
    }
    /* A capacity with a catalogue name keeps the GPU's properties (compute capability,
     * bf16/fp8 support) and overrides its capacity; otherwise no catalogue GPU. Then the
     * capacity keys in document order. */
    if (has_name && gpufit__gpu_find(name.text, name.len) != NULL)
        st = kv(c, GPUFIT_JOB_GPU, name.text, name.len, name_off, err);
    else
        st = kv(c, GPUFIT_JOB_GPU, "none", 4, obj_off, err);
    if (st != GPUFIT_OK)
        return st;
    for (;;) {
        key kk;
        scalar s;
        if ((st = next_member(p, &k, err)) != GPUFIT_OK)
            return st;
        if (k.type == GPUFIT__JSON_OBJECT_END)
            break;
        if ((st = read_key(&k, "gpu.", &kk, err)) != GPUFIT_OK)
            return st;
        if ((st = gpufit__json_next(p, &v, err)) != GPUFIT_OK)
            return st;
        if (key_is(&kk, "name")) {
            if ((st = gpufit__json_skip(p, &v, err)) != GPUFIT_OK)
                return st;
            continue;
        }
        if ((st = scalar_text(&v, "gpu.", &kk, &s, err)) != GPUFIT_OK)
            return st;
        int32_t param =
            key_is(&kk, "memory_gib") ? GPUFIT_JOB_GPU_MEMORY_GIB : GPUFIT_JOB_GPU_MEMORY_BYTES;
        if ((st = kv(c, param, s.text, s.len, v.offset, err)) != GPUFIT_OK)
            return st;
    }
    if (has_name)
        set_gpu_name(c, name.text, name.len);
    return GPUFIT_OK;
}

/* Applies the value v of "gpu" (already read from p). */
static int32_t
apply_gpu(ctx *c, gpufit__json *p, const gpufit__json_token *v, const key *k, gpufit_error *err)
{
    scalar s;
    int32_t st;
    switch (v->type) {
    case GPUFIT__JSON_STRING:
        if ((st = scalar_text(v, "", k, &s, err)) != GPUFIT_OK)
            return st;
        c->j->gpu_name[0] = '\0';
        return kv(c, GPUFIT_JOB_GPU, s.text, s.len, v->offset, err);
    case GPUFIT__JSON_OBJECT:
        return apply_gpu_object(c, p, v->offset, err);
    case GPUFIT__JSON_NULL:
        return scalar_text(v, "", k, &s, err); /* the null error */
    default:
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, GPUFIT_JOB_GPU, (uint64_t)v->offset,
                            "'gpu' must be a catalogue name or an object such as "
                            "{\"memory_gib\": 24}");
    }
}

static int ignored_key(const key *k)
{
    return key_is(k, "id") || key_is(k, "comment") || key_is(k, "$schema") ||
           (k->len > 0 && k->text[0] == '_');
}

/* A raw key token equal to lit (n bytes); escaped keys are decoded first. */
static int key_tok_is(const gpufit__json_token *t, const char *lit, size_t n)
{
    return t->escaped ? gpufit__json_equals(t, lit)
                      : t->len == n && memcmp(t->text, lit, n) == 0;
}

/* The top-level members, recorded by the checking pass so that the applying pass does not
 * tokenize the document again; past MEMBERS_MAX the applying pass reads on from `rest`. */
#define MEMBERS_MAX 64
typedef struct top {
    gpufit__json_token k[MEMBERS_MAX], v[MEMBERS_MAX];
    unsigned char plain[MEMBERS_MAX]; /* 1: read by gpufit__json_members_scalar, and its key
                                         and value fit their buffers (apply_plain) */
    size_t n;
    int more;          /* members past MEMBERS_MAX: read them from rest */
    gpufit__json rest; /* positioned before member MEMBERS_MAX's key */
    gpufit__json model_at, gpu_at;
    int has_model, has_gpu;
    size_t gpu_off;
    /* a scalar "model" / "gpu" read by the fast path: its value token (then no cursor) */
    int model_scalar, gpu_scalar;
    gpufit__json_token model_v, gpu_v;
} top;

/* Pass 1: checks the whole document, records its members and finds the last "model" value
 * and "gpu" key. */
static int32_t scan_top(const char *json, size_t len, top *t, gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token k, v;
    int32_t st = gpufit__json_init(&p, json, len, err);
    if (st != GPUFIT_OK)
        return st;
    if (!gpufit__json_begin_top_object(&p)) { /* the usual '{', else the full path's report */
        if ((st = gpufit__json_next(&p, &k, err)) != GPUFIT_OK)
            return st;
        if (k.type != GPUFIT__JSON_OBJECT)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, (uint64_t)k.offset,
                                "JSON: a scenario is a JSON object: expected '{' at byte %zu",
                                k.offset);
    }
    t->n = 0;
    t->more = 0;
    t->has_model = t->has_gpu = 0;
    t->model_scalar = t->gpu_scalar = 0;
    for (;;) {
        if (t->n == MEMBERS_MAX && !t->more)
            t->rest = p;
        /* members are read into their record slots (past MEMBERS_MAX, into k and v) */
        int slot = t->n < MEMBERS_MAX;
        gpufit__json_token *kp = slot ? &t->k[t->n] : &k, *vp = slot ? &t->v[t->n] : &v;
        size_t want = slot ? MEMBERS_MAX - t->n : 1;
        size_t got = gpufit__json_members_scalar(&p, kp, vp, want); /* the usual members */
        for (size_t i = 0; i < got; i++) {                          /* (keys without escapes) */
            if (slot) /* (a longer key or value: apply_member reports it) */
                t->plain[t->n + i] = kp[i].len <= KEY_MAX && vp[i].len <= VAL_MAX;
            if (kp[i].len == 5 && memcmp(kp[i].text, "model", 5) == 0) {
                t->model_v = vp[i];
                t->model_scalar = t->has_model = 1;
            } else if (kp[i].len == 3 && memcmp(kp[i].text, "gpu", 3) == 0) {
                t->gpu_off = kp[i].offset;
                t->gpu_v = vp[i];
                t->gpu_scalar = t->has_gpu = 1;
            }
        }
        if (slot) {
            t->n += got;
        } else if (got > 0) {
            t->more = 1;
        }
        if (got == want)
            continue; /* more may follow */
        /* the next member (or the end) takes the full path */
        if (slot) { /* (got < want: a slot is left) */
            kp = &t->k[t->n];
            vp = &t->v[t->n];
        }
        if (gpufit__json_end_top_object(&p))
            return GPUFIT_OK; /* the '}' and nothing after it */
        if ((st = next_member(&p, kp, err)) != GPUFIT_OK)
            return st;
        if (kp->type == GPUFIT__JSON_OBJECT_END)
            break;
        if (key_tok_is(kp, "model", 5)) {
            t->model_at = p;
            t->has_model = 1;
            t->model_scalar = 0;
        } else if (key_tok_is(kp, "gpu", 3)) {
            t->gpu_off = kp->offset;
            t->gpu_at = p;
            t->has_gpu = 1;
            t->gpu_scalar = 0;
        }
        if ((st = gpufit__json_next(&p, vp, err)) != GPUFIT_OK ||
            (st = gpufit__json_skip(&p, vp, err)) != GPUFIT_OK)
            return st;
        if (slot) {
            t->plain[t->n] = 0;
            t->n++;
        } else {
            t->more = 1;
        }
    }
    if ((st = gpufit__json_next(&p, &k, err)) != GPUFIT_OK) /* trailing bytes */
        return st;
    return GPUFIT_OK;
}

/* apply_member for a member read by gpufit__json_members_scalar whose key and value fit
 * their buffers: both are used as they stand in the document (what read_key and scalar_text
 * give them), and its value is a scalar. */
static int32_t
apply_plain(ctx *c, const gpufit__json_token *k, const gpufit__json_token *v, gpufit_error *err)
{
    const char *kt = k->text;
    size_t kl = k->len;
    const gpufit__param_entry *pe;
    int32_t st;
    if (kl == 5 && memcmp(kt, "model", 5) == 0) /* applied before the loop */
        return gpufit__doc_entry(&c->seen, NULL, kt, kl, k->offset, err);
    /* the parameters first: no ignored key is one of their names (test_cold) */
    if ((st = gpufit__doc_find(&c->seen, kt, kl, k->offset, &pe, err)) != GPUFIT_OK)
        return st;
    if (pe == NULL) {
        key kk;
        kk.text = kt;
        kk.len = kl;
        kk.offset = k->offset;
        return ignored_key(&kk) ? GPUFIT_OK : unknown_key(&kk, "", err);
    }
    if (pe->id == GPUFIT_JOB_GPU) /* applied before the loop */
        return GPUFIT_OK;
    *(pe->domain == GPUFIT_DOMAIN_MODEL ? &c->model_set : &c->job_set) = 1;
    /* a list's single value and any scalar are the value's text (list_text, scalar_text) */
    st = gpufit__apply_entry(pe->domain == GPUFIT_DOMAIN_MODEL ? model_of(c) : &c->m, c->j, pe,
                             v->text, v->len, (uint64_t)v->offset, err);
    if (st != GPUFIT_OK)
        default_offset(err, v->offset);
    return st;
}

/* Applies one top-level member: key k, value v. live is the parser right after v when the
 * member is read live, NULL for a recorded one (a container value is then walked again from
 * its offset). */
static int32_t apply_member(ctx *c, const char *json, size_t len, gpufit__json *live,
                            const gpufit__json_token *k, const gpufit__json_token *v,
                            gpufit_error *err)
{
    key kk;
    scalar s;
    int32_t st;
    if ((st = read_key(k, "", &kk, err)) != GPUFIT_OK)
        return st;
    if (ignored_key(&kk))
        return live != NULL ? gpufit__json_skip(live, v, err) : GPUFIT_OK;
    int is_model = key_is(&kk, "model");
    const gpufit__param_entry *pe =
        is_model ? NULL : gpufit__param_find_name(kk.text, kk.len); /* found once */
    if ((is_model || pe != NULL) &&
        (st = gpufit__doc_entry(&c->seen, pe, kk.text, kk.len, k->offset, err)) != GPUFIT_OK)
        return st;
    if (is_model || (pe != NULL && pe->id == GPUFIT_JOB_GPU)) /* applied before the loop */
        return live != NULL ? gpufit__json_skip(live, v, err) : GPUFIT_OK;
    if (pe == NULL)
        return unknown_key(&kk, "", err);
    *(pe->domain == GPUFIT_DOMAIN_MODEL ? &c->model_set : &c->job_set) = 1;
    /* lora_modules also takes an array of module names (names only: a number is the
     * bit mask, a single value) */
    int names = pe->id == GPUFIT_JOB_LORA_MODULES && v->type == GPUFIT__JSON_ARRAY;
    if (pe->type == GPUFIT_TYPE_LIST || names) {
        gpufit__json again;
        gpufit__json_token open;
        gpufit__json *p = live;
        if (p == NULL && v->type == GPUFIT__JSON_ARRAY) { /* walk the recorded array again */
            if ((st = gpufit__json_at(&again, json, len, v->offset, err)) != GPUFIT_OK ||
                (st = gpufit__json_next(&again, &open, err)) != GPUFIT_OK)
                return st;
            p = &again;
        }
        st = list_text(p, v, &kk, &s, err);
    } else {
        st = scalar_text(v, "", &kk, &s, err);
    }
    if (st == GPUFIT_OK && names && s.text[0] >= '0' && s.text[0] <= '9')
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, pe->id, (uint64_t)v->offset,
                            "'lora_modules' takes an array of module names or one value");
    if (st != GPUFIT_OK)
        return st;
    st = gpufit__apply_entry(pe->domain == GPUFIT_DOMAIN_MODEL ? model_of(c) : &c->m, c->j, pe,
                             s.text, s.len, (uint64_t)v->offset, err);
    if (st != GPUFIT_OK)
        default_offset(err, v->offset);
    return st;
}

/* The members of the document scan_top recorded in t, applied to c: "model", then "gpu",
 * then the others in document order. */
static int32_t apply_top(ctx *c, top *t, const char *json, size_t len, gpufit_error *err)
{
    int32_t st;
    const gpufit__json_token *mv = &t->model_v, *gv0 = &t->gpu_v;
    if (t->has_model && t->model_scalar && mv->type == GPUFIT__JSON_STRING &&
        mv->len <= VAL_MAX) { /* a preset name read by the fast path: its text as it stands */
        if ((st = gpufit__preset_lookup(mv->text, mv->len, &c->preset_row, err)) != GPUFIT_OK) {
            default_offset(err, mv->offset);
            return st;
        }
        c->preset_pending = 1;
        c->preset_v = mv;
    } else if (t->has_model &&
               (st = t->model_scalar ? apply_model_value(c, NULL, mv, err)
                                     : apply_model(c, &t->model_at, err)) != GPUFIT_OK) {
        return st;
    }
    /* "gpu" right after "model", wherever it stands: gpu_memory_gib/_bytes then override the
     * GPU's capacity whatever the key order (they reset nothing). */
    if (t->has_gpu && t->gpu_scalar && gv0->type == GPUFIT__JSON_STRING && gv0->len <= VAL_MAX) {
        c->j->gpu_name[0] = '\0'; /* a catalogue name read by the fast path (apply_gpu) */
        if ((st = kv(c, GPUFIT_JOB_GPU, gv0->text, gv0->len, gv0->offset, err)) != GPUFIT_OK)
            return st;
    } else if (t->has_gpu) {
        gpufit__json_token gv;
        key gk;
        gk.text = "gpu";
        gk.len = 3;
        gk.offset = t->gpu_off;
        if (t->gpu_scalar)
            gv = t->gpu_v;
        else if ((st = gpufit__json_next(&t->gpu_at, &gv, err)) != GPUFIT_OK)
            return st;
        if ((st = apply_gpu(c, t->gpu_scalar ? NULL : &t->gpu_at, &gv, &gk, err)) != GPUFIT_OK)
            return st;
    }
    for (size_t i = 0; i < t->n; i++)
        if ((st = t->plain[i] ? apply_plain(c, &t->k[i], &t->v[i], err)
                              : apply_member(c, json, len, NULL, &t->k[i], &t->v[i], err)) !=
             GPUFIT_OK)
            return st;
    for (gpufit__json *p = t->more ? &t->rest : NULL; p != NULL;) { /* past MEMBERS_MAX */
        gpufit__json_token k, v;
        if ((st = next_member(p, &k, err)) != GPUFIT_OK)
            return st;
        if (k.type == GPUFIT__JSON_OBJECT_END)
            break;
        if ((st = gpufit__json_next(p, &v, err)) != GPUFIT_OK ||
            (st = apply_member(c, json, len, p, &k, &v, err)) != GPUFIT_OK)
            return st;
    }
    return GPUFIT_OK;
}

int32_t
gpufit_apply_json(gpufit_model *m, gpufit_job *j, const char *json, size_t len, gpufit_error *err)
{
    if (m == NULL || j == NULL || json == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX,
                            "gpufit_apply_json: %s is NULL",
                            m == NULL   ? "the model"
                            : j == NULL ? "the job"
                                        : "the JSON text");
    ctx c;
    top t;
    int32_t st = scan_top(json, len, &t, err);
    if (st != GPUFIT_OK)
        return st;
    /* the model is applied to a working copy, the job in place over a saved copy of its
     * parameters (what changes: its plan is resolved below): the handles change only on
     * success, and the job's bytes are copied once. A "model" key rewrites every parameter of
     * the model (a preset, or the defaults before an object's keys), so its copy would be
     * dead. */
    struct gpufit_job saved;
    if (!t.has_model)
        gpufit__model_assign(&c.m, m);
    memcpy(&saved, j, offsetof(struct gpufit_job, plan));
    c.j = j;
    gpufit__doc_keys_init(&c.seen);
    c.model_set = t.has_model;
    c.job_set = t.has_gpu;
    c.preset_pending = 0;
    if ((st = apply_top(&c, &t, json, len, err)) != GPUFIT_OK) {
        memcpy(j, &saved, offsetof(struct gpufit_job, plan));
        return st;
    }
    /* the model cache and the job's plan are derived in the handles themselves: copying them
     * from the working copies would move 3 KiB more per call (refreshes cannot fail, so the
     * handles still change only here). A handle the document leaves alone keeps its derived
     * state when that is current: valid (1), or known not to resolve (3). */
    if (c.model_set || (m->cache_state != 1 && m->cache_state != 3)) {
        if (c.preset_pending) { /* the preset alone: loaded into the handle */
            gpufit__preset_load_row(m, c.preset_row, c.preset_v->text, c.preset_v->len);
        } else {
            if (c.m.cache_state != 2) /* 2: a preset as loaded, whose refresh is a copy */
                c.m.cache_state = 0;
            gpufit__model_assign(m, &c.m);
        }
        gpufit__model_refresh(m);
    }
    if (c.job_set || j->plan_state != 1)
        gpufit__job_refresh(j);
    gpufit__ok(err);
    return GPUFIT_OK;
}
