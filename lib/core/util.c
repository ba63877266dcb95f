/* SPDX-License-Identifier: MIT */
/* Small string helpers shared by the parsers and catalogues (no allocation). */
#include "internal.h"

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

int gpufit__streq_ci(const char *a, size_t alen, const char *b)
{
    size_t i = 0;
    for (; i < alen; i++) {
        if (b[i] == '\0' || lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return 0;
    }
    return b[i] == '\0';
}
