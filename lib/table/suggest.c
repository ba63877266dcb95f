/* "Did you mean": the nearest known name to an unknown one (docs/errors in docs/params.md).
 * gpufit__edit_distance is pure; the gpufit__suggest_* wrappers walk one list of names (keys,
 * enum values, catalogue GPUs, presets) and format the hint an error message appends. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define SUGGEST_MAX 64 /* longer names are not compared */

static char fold(char c)
{
    if (c >= 'A' && c <= 'Z')
        return (char)(c - 'A' + 'a');
    return c == '_' || c == ' ' ? '-' : c;
}

/* Optimal-string-alignment (restricted Damerau-Levenshtein) distance between a and b, folding
 * case and treating '_' and ' ' as '-'; SIZE_MAX when either is longer than SUGGEST_MAX. */
size_t gpufit__edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char d[SUGGEST_MAX + 1][SUGGEST_MAX + 1]; /* every distance <= SUGGEST_MAX */
    if (alen > SUGGEST_MAX || blen > SUGGEST_MAX)
        return SIZE_MAX;
    for (size_t i = 0; i <= alen; i++)
        d[i][0] = (unsigned char)i;
    for (size_t k = 0; k <= blen; k++)
        d[0][k] = (unsigned char)k;
    for (size_t i = 1; i <= alen; i++) {
        for (size_t k = 1; k <= blen; k++) {
            size_t cost = fold(a[i - 1]) != fold(b[k - 1]);
            size_t up = d[i - 1][k], left = d[i][k - 1], diag = d[i - 1][k - 1];
            size_t v = up + 1;
            if (left + 1 < v)
                v = left + 1;
            if (diag + cost < v)
                v = diag + cost;
            if (i > 1 && k > 1 && fold(a[i - 1]) == fold(b[k - 2]) &&
                fold(a[i - 2]) == fold(b[k - 1]) && (size_t)d[i - 2][k - 2] + 1 < v)
                v = (size_t)d[i - 2][k - 2] + 1;
            d[i][k] = (unsigned char)v;
        }
    }
    return d[alen][blen];
}

/* The running best candidate: close enough is distance <= 2 and at most a third of the
 * longer name (so "tp" does not suggest "dp", but "rtx-4900" suggests "rtx-4090"). */
typedef struct best {
    const char *q;
    size_t qlen;
    const char *name; /* shown to the user */
    size_t name_len;
    size_t d;
} best;

int gpufit__suggest_close(size_t d, size_t qlen, size_t clen)
{
    size_t longer = qlen > clen ? qlen : clen;
    return d > 0 && d <= 2 && 3 * d <= longer;
}

static void consider(best *b, const char *cand, size_t clen, const char *shown, size_t slen)
{
    size_t d = gpufit__edit_distance(b->q, b->qlen, cand, clen);
    if (!gpufit__suggest_close(d, b->qlen, clen) || d >= b->d)
        return;
    b->d = d;
    b->name = shown;
    b->name_len = slen;
}

/* Each space-separated word of list, shown as itself. */
static void consider_words(best *b, const char *list)
{
    for (const char *p = list; p != NULL && *p != '\0';) {
        size_t n = strcspn(p, " ");
        if (n > 0)
            consider(b, p, n, p, n);
        p += n;
        p += strspn(p, " ");
    }
}

static size_t finish(const best *b, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    out[0] = '\0';
    if (b->name == NULL)
        return 0;
    int n = snprintf(out, cap, "; did you mean '%.*s'?", (int)b->name_len, b->name);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static best start(const char *q, size_t qlen)
{
    best b = {q, qlen, NULL, 0, SIZE_MAX};
    return b;
}

size_t gpufit__suggest_key(const char *q, size_t qlen, char *out, size_t cap)
{
    best b = start(q, qlen);
    consider_words(&b, "model gpu lora_modules");
    for (size_t i = 0;; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        if (e == NULL)
            break;
        consider(&b, e->name, strlen(e->name), e->name, strlen(e->name));
        consider_words(&b, e->aliases);
    }
    return finish(&b, out, cap);
}

size_t gpufit__suggest_value(const gpufit__param_entry *e, const char *q, size_t qlen, char *out,
                             size_t cap)
{
    best b = start(q, qlen);
    for (const gpufit__enum_value *v = e != NULL ? e->values : NULL; v != NULL && v->name != NULL;
         v++)
        consider(&b, v->name, strlen(v->name), v->name, strlen(v->name));
    return finish(&b, out, cap);
}

/* GPUs compare by their lookup normalisation (gpufit__gpu_norm) and show the key. */
size_t gpufit__suggest_gpu(const char *q, size_t qlen, char *out, size_t cap)
{
    char nq[GPUFIT__GPU_NAME_MAX], nc[GPUFIT__GPU_NAME_MAX];
    size_t nqlen = gpufit__gpu_norm(q, qlen, nq, sizeof nq);
    best b = start(nq, nqlen);
    for (size_t i = 0; nqlen > 0 && i < gpufit__gpu_count(); i++) {
        const gpufit__gpu *g = gpufit__gpu_at(i);
        size_t kl = strlen(g->key);
        size_t n = gpufit__gpu_norm(g->key, kl, nc, sizeof nc);
        consider(&b, nc, n, g->key, kl);
        n = gpufit__gpu_norm(g->name, strlen(g->name), nc, sizeof nc);
        consider(&b, nc, n, g->key, kl);
        for (const char *p = g->aliases; *p != '\0';) {
            size_t w = strcspn(p, " ");
            n = w > 0 ? gpufit__gpu_norm(p, w, nc, sizeof nc) : 0;
            if (n > 0)
                consider(&b, nc, n, g->key, kl);
            p += w;
            p += strspn(p, " ");
        }
    }
    return finish(&b, out, cap);
}
