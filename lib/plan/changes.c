/* SPDX-License-Identifier: MIT */
/* Change sets (changes.h): recorded sorted by parameter id, applied through the setters,
 * written as spec text and JSON. */
#include "changes.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gpufit__change *slot(gpufit__changes *cs, int32_t param)
{
    if ((cs->n == 0 || cs->ch[cs->n - 1].param < param) && cs->n < GPUFIT__CHANGES_MAX)
        return &cs->ch[cs->n++]; /* recorded in id order: appended */
    uint32_t at = 0;
    while (at < cs->n && cs->ch[at].param < param)
        at++;
    if (at < cs->n && cs->ch[at].param == param)
        return &cs->ch[at];
    if (cs->n == GPUFIT__CHANGES_MAX) {
        cs->overflow = 1;
        return NULL;
    }
    memmove(&cs->ch[at + 1], &cs->ch[at], (cs->n - at) * sizeof cs->ch[0]);
    cs->n++;
    return &cs->ch[at];
}

static void put(gpufit__changes *cs, int32_t param, const gpufit__param_entry *e, uint8_t type,
                int64_t i, double f, int keep)
{
    gpufit__change *c = slot(cs, param);
    if (c != NULL)
        *c = (gpufit__change){param, type, (uint8_t)(keep != 0), 0, i, f, e};
}

void gpufit__cs_int(gpufit__changes *cs, int32_t param, int64_t v, int keep)
{
    put(cs, param, gpufit__param_find(param), GPUFIT__CH_INT, v, 0.0, keep);
}

void gpufit__cs_int_e(gpufit__changes *cs, const gpufit__param_entry *e, int64_t v, int keep)
{
    put(cs, e->id, e, GPUFIT__CH_INT, v, 0.0, keep);
}

void gpufit__cs_float(gpufit__changes *cs, int32_t param, double v, int keep)
{
    put(cs, param, gpufit__param_find(param), GPUFIT__CH_FLOAT, 0, v, keep);
}

void gpufit__cs_clear(gpufit__changes *cs, int32_t param, int keep)
{
    put(cs, param, gpufit__param_find(param), GPUFIT__CH_CLEAR, 0, 0.0, keep);
}

void gpufit__cs_merge(gpufit__changes *cs, const gpufit__changes *src)
{
    for (uint32_t k = 0; k < src->n; k++) {
        const gpufit__change *c = &src->ch[k];
        put(cs, c->param, c->e, c->type, c->i, c->f, c->keep);
    }
    cs->overflow |= src->overflow;
}

int gpufit__cs_has(const gpufit__changes *cs, int32_t param)
{
    for (uint32_t k = 0; k < cs->n; k++)
        if (cs->ch[k].param == param)
            return 1;
    return 0;
}

static int32_t apply_one(const gpufit__change *c, struct gpufit_job *j, gpufit_error *err)
{
    const gpufit__param_entry *e = c->e;
    if (e == NULL || e->domain != GPUFIT_DOMAIN_JOB)
        return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, c->param, UINT64_MAX,
                            "unknown job parameter id %d", (int)c->param);
    if (c->type == GPUFIT__CH_CLEAR) {
        if (e->type != GPUFIT_TYPE_LIST)
            return gpufit__fail(err, GPUFIT_E_INTERNAL, c->param, UINT64_MAX,
                                "%s is not a list", e->name);
        memset((char *)j + e->offset, 0, sizeof(gpufit__list));
        j->plan_state = 0;
        return GPUFIT_OK;
    }
    return gpufit__set_entry(e, NULL, j, c->i, c->f, err);
}

int32_t gpufit__cs_apply(const gpufit__changes *cs, struct gpufit_job *j, gpufit_error *err)
{
    if (cs->overflow)
        return gpufit__fail(err, GPUFIT_E_INTERNAL, 0, UINT64_MAX,
                            "an advice has more than %d changes", GPUFIT__CHANGES_MAX);
    for (uint32_t k = 0; k < cs->n; k++) {
        int32_t st = apply_one(&cs->ch[k], j, err);
        if (st != GPUFIT_OK)
            return st;
    }
    return GPUFIT_OK;
}

/* The job's parameters (everything before the derived plan): equal when every field is. Jobs
 * compared here are copies of one job edited by the setters, so their bytes compare. */
static int same_job(const struct gpufit_job *a, const struct gpufit_job *b)
{
    return memcmp(a, b, offsetof(struct gpufit_job, plan_state)) == 0;
}

void gpufit__cs_canon(gpufit__changes *cs, const struct gpufit_job *j)
{
    struct gpufit_job *cur = malloc(2 * sizeof *cur); /* two jobs: not on the stack */
    if (cur == NULL)
        return; /* still correct, only not minimal */
    struct gpufit_job *next = cur + 1;
    *cur = *j;
    uint32_t o = 0;
    for (uint32_t k = 0; k < cs->n; k++) {
        *next = *cur;
        int applied = apply_one(&cs->ch[k], next, NULL) == GPUFIT_OK;
        if (applied && !cs->ch[k].keep && same_job(cur, next))
            continue; /* a no-op on this job */
        cs->ch[o++] = cs->ch[k];
        if (applied)
            *cur = *next;
    }
    cs->n = o;
    free(cur);
}

/* Shortest text of v that reads back as v. */
static void fmt_double(double v, char *out, size_t cap)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* The value of c as text: names for enums and GPUs, releases as major.minor.patch. quote:
 * 1 when it is a string (JSON quotes it). */
static void value_text(const gpufit__change *c, const gpufit__param_entry *e, int json,
                       char *out, size_t cap, int *quote)
{
    *quote = 0;
    if (c->type == GPUFIT__CH_CLEAR) {
        snprintf(out, cap, "%s", json ? "[]" : "none");
        return;
    }
    if (c->type == GPUFIT__CH_FLOAT) {
        fmt_double(c->f, out, cap);
        return;
    }
    const char *name = NULL;
    if (c->param == GPUFIT_JOB_GPU)
        name = c->i < 0 ? "none" : gpufit_param_value_name(c->param, c->i);
    else if (e->type == GPUFIT_TYPE_ENUM)
        name = gpufit_param_value_name(c->param, c->i);
    if (name != NULL) {
        snprintf(out, cap, "%s", name);
        *quote = 1;
    } else if ((c->param == GPUFIT_JOB_FRAMEWORK_VERSION ||
                c->param == GPUFIT_JOB_CUDA_VERSION) && c->i >= 0) {
        if (c->i == 0)
            snprintf(out, cap, "current");
        else
            snprintf(out, cap, "%lld.%lld.%lld", (long long)(c->i / 1000000),
                     (long long)(c->i / 1000 % 1000), (long long)(c->i % 1000));
        *quote = 1;
    } else {
        snprintf(out, cap, "%lld", (long long)c->i);
    }
}

static size_t write_set(const gpufit__changes *cs, int json, char *buf, size_t cap)
{
    size_t len = 0;
    char val[64];
    if (cap > 0)
        buf[0] = '\0';
#define OUT(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, __VA_ARGS__);   \
        len += w_ > 0 ? (size_t)w_ : 0;                                                            \
    } while (0)
    if (json)
        OUT("{");
    for (uint32_t k = 0; k < cs->n; k++) {
        const gpufit__change *c = &cs->ch[k];
        const gpufit__param_entry *e = c->e;
        if (e == NULL)
            continue;
        int quote;
        value_text(c, e, json, val, sizeof val, &quote);
        if (json)
            OUT("%s\"%s\": %s%s%s", k ? ", " : "", e->name, quote ? "\"" : "", val,
                quote ? "\"" : "");
        else
            OUT("%s%s=%s", k ? " " : "", e->name, val);
    }
    if (json)
        OUT("}");
#undef OUT
    return len;
}

size_t gpufit__cs_spec(const gpufit__changes *cs, char *buf, size_t cap)
{
    return write_set(cs, 0, buf, cap);
}

size_t gpufit__cs_json(const gpufit__changes *cs, char *buf, size_t cap)
{
    return write_set(cs, 1, buf, cap);
}
