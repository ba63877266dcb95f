/* SPDX-License-Identifier: MIT */
/* Spec strings: "model=llama-3-8b task=pretrain tp=8" — space- or comma-separated key=value
 * pairs; a value may be double-quoted to hold spaces; list values are comma-separated
 * ("tensor_split=3,1"). A key given twice (also under an alias) and gpu_memory_gib with
 * gpu_memory_bytes are errors naming both byte offsets; a second spec applied on top of a
 * first one overrides it. Errors carry the byte offset. */
#include "internal.h"

#include <string.h>

typedef struct spec_token {
    size_t key, klen, val, vlen; /* offsets into the spec */
} spec_token;

static int is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

/* Reads the token starting at or after *pos; returns 1 when one was read, 0 at the end, or a
 * negative status on a syntax error. */
static int next_token(const char *s, size_t n, size_t *pos, spec_token *t, gpufit_error *err)
{
    size_t i = *pos;
    while (i < n && is_sep(s[i]))
        i++;
    if (i >= n)
        return 0;
    t->key = i;
    while (i < n && s[i] != '=' && !is_sep(s[i]))
        i++;
    t->klen = i - t->key;
    if (t->klen == 0)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, i, "expected a key before '='");
    if (i >= n || s[i] != '=')
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, t->key, "'%.*s' has no '=value'",
                            (int)(t->klen > 64 ? 64 : t->klen), s + t->key);
    i++;
    if (i < n && s[i] == '"') {
        t->val = ++i;
        while (i < n && s[i] != '"')
            i++;
        if (i >= n)
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, t->val - 1, "unterminated quote");
        t->vlen = i - t->val;
        i++;
        if (i < n && !is_sep(s[i]))
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, i, "expected a separator after quote");
    } else {
        t->val = i;
        for (;;) {
            while (i < n && !is_sep(s[i]))
                i++;
            if (i >= n || s[i] != ',')
                break;
            /* "tensor_split=3,1 pp=2": a comma followed by a run without '=' continues the
             * value (a list); "tp=2,pp=4" still separates pairs */
            size_t k = i + 1;
            while (k < n && s[k] == ',')
                k++; /* "3,,1": the empty entry stays in the value, for the list to name */
            size_t run = k;
            while (k < n && !is_sep(s[k]) && s[k] != '=')
                k++;
            if (k == run || (k < n && s[k] == '='))
                break;
            i = k;
        }
        t->vlen = i - t->val;
    }
    if (t->vlen == 0)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, t->val, "'%.*s' has an empty value",
                            (int)(t->klen > 64 ? 64 : t->klen), s + t->key);
    /* control bytes (a CR or LF inside quotes, NUL-free binary) never belong in a key or a
     * value, and must not reach the one-line error messages */
    for (size_t k = t->key; k < t->val + t->vlen; k++) {
        unsigned char ch = (unsigned char)s[k];
        if ((ch < 0x20 || ch == 0x7f) && !(k >= t->key + t->klen && k < t->val))
            return gpufit__fail(err, GPUFIT_E_PARSE, 0, k, "control character 0x%02x in the spec",
                                ch);
    }
    *pos = i;
    return 1;
}

#define SPEC_MAX_LEN (1u << 20)

int32_t gpufit_apply_spec(gpufit_model *m, gpufit_job *j, const char *spec, gpufit_error *err)
{
    if (spec == NULL)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "spec is NULL");
    size_t n = 0; /* strnlen is POSIX, not C11 */
    while (n <= SPEC_MAX_LEN && spec[n] != '\0')
        n++;
    if (n > SPEC_MAX_LEN)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "spec longer than 1 MiB");
    struct gpufit_model mc;
    struct gpufit_job jc;
    if (m != NULL)
        mc = *m;
    if (j != NULL)
        jc = *j;
    /* Two passes: "model=" and "gpu=" first, wherever they stand, so that the other keys
     * override the preset's values and the GPU's capacity whatever their order
     * ("gpu_memory_gib=40 gpu=h100" = "gpu=h100 gpu_memory_gib=40"). The first pass also
     * refuses a key given twice (by any alias) and conflicting keys: within one spec the last
     * one would win silently. */
    gpufit__doc_keys seen;
    gpufit__doc_keys_init(&seen);
    for (int pass = 0; pass < 2; pass++) {
        size_t pos = 0;
        spec_token t = {0, 0, 0, 0};
        int r;
        while ((r = next_token(spec, n, &pos, &t, err)) == 1) {
            int is_model = t.klen == 5 && memcmp(spec + t.key, "model", 5) == 0;
            int first = is_model || (t.klen == 3 && memcmp(spec + t.key, "gpu", 3) == 0);
            if (pass == 0) {
                int32_t st = gpufit__doc_key(&seen, spec + t.key, t.klen, t.key, err);
                if (st != GPUFIT_OK)
                    return st;
            }
            if (first != (pass == 0))
                continue;
            int32_t st =
                !is_model ? gpufit__apply_kv(m != NULL ? &mc : NULL, j != NULL ? &jc : NULL,
                                             spec + t.key, t.klen, spec + t.val, t.vlen, t.val, err)
                : m != NULL
                    ? gpufit__preset_load(&mc, spec + t.val, t.vlen, err)
                    : gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, t.val, "model: no model handle");
            if (st != GPUFIT_OK) {
                if (err != NULL && err->struct_size >= sizeof(gpufit_error))
                    err->offset = t.key; /* point at the pair, not only the value */
                return st;
            }
        }
        if (r < 0)
            return r;
    }
    if (m != NULL) {
        gpufit__model_refresh(&mc);
        *m = mc;
    }
    if (j != NULL) {
        gpufit__job_refresh(&jc);
        *j = jc;
    }
    gpufit__ok(err);
    return GPUFIT_OK;
}
