/* SPDX-License-Identifier: MIT */
/* Small string helpers shared by the parsers and catalogues (no allocation). */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

int gpufit__streq_ci(const char *a, size_t alen, const char *b)
{
    size_t i = 0;
    for (; i < alen; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x == y && y != '\0') /* the usual case: the same byte, no case to fold */
            continue;
        if (y == '\0' || lower(x) != lower(y))
            return 0;
    }
    return b[i] == '\0';
}

void gpufit__text_put(gpufit__text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->len < t->cap ? t->cap - t->len : 0;
    int n = vsnprintf(room > 0 ? t->buf + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

int gpufit__name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen) /* by length first: most probes end on one integer compare */
        return alen < blen ? -1 : 1;
    for (size_t i = 0; i < alen; i++) /* names are short: no call into memcmp */
        if (a[i] != b[i])
            return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
    return 0;
}

int32_t gpufit__name_hash_find(const gpufit__name_row *rows, size_t n, const uint16_t *slots,
                               size_t n_slots, const char *name, size_t len)
{
    if (n_slots == 0 || (n_slots & (n_slots - 1)) != 0)
        return -1;
    size_t mask = n_slots - 1;
    size_t h = gpufit__name_hash(name, len) & mask;
    for (size_t probes = 0; probes < n_slots; probes++, h = (h + 1) & mask) {
        size_t s = slots[h];
        if (s == 0 || s > n)
            return -1; /* an empty slot ends the probe sequence */
        const gpufit__name_row *r = &rows[s - 1];
        if (r->len == len && gpufit__bytes_eq(r->name, name, len))
            return r->row;
    }
    return -1;
}
