/* SPDX-License-Identifier: MIT */
/* The JSON report of shared/reference/scenario.md, written snprintf-style. */
#include "eval.h"

#include <stdarg.h>
#include <stdio.h>

typedef gpufit__text jw; /* bounded output (util.c) */

static void put_str(jw *w, const char *s)
{
    gpufit__text_put(w, "\"");
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            gpufit__text_put(w, "\\%c", ch);
        else if (ch < 0x20)
            gpufit__text_put(w, "\\u%04x", ch);
        else
            gpufit__text_put(w, "%c", ch);
    }
    gpufit__text_put(w, "\"");
}

static const char *fits_text(int32_t fits)
{
    return fits > 0 ? "true" : fits == 0 ? "false" : "null";
}

/* gpufit_verdict as the report writes it (a JSON value: a string, or null) */
static const char *verdict_text(int32_t v)
{
    return v == GPUFIT_VERDICT_FITS       ? "\"fits\""
           : v == GPUFIT_VERDICT_MARGINAL ? "\"marginal\""
           : v == GPUFIT_VERDICT_OOM      ? "\"oom\""
                                          : "null";
}

/* "name": {component: bytes, ...} of a role: end 0 the band's low end, 1 the high end,
 * -1 the point values */
static void put_components(jw *w, const char *name, const gpufit__role *ro, int end)
{
    gpufit__text_put(w, "\"%s\": {", name);
    for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
        uint64_t b[2] = {ro->comp[c], ro->comp[c]};
        if (end >= 0)
            gpufit__comp_band(ro, c, &b[0], &b[1]);
        gpufit__text_put(w, "%s\"%s\": %llu", c > 1 ? ", " : "", gpufit_component_name(c),
                         (unsigned long long)b[end > 0]);
    }
    gpufit__text_put(w, "}");
}

int32_t gpufit_result_to_json(
    const gpufit_result *r, char *buf, size_t cap, size_t *len_out, gpufit_error *err)
{
    if (r == NULL || (buf == NULL && cap > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "result or buf is NULL");
    jw w = {buf, cap, 0};
    /* schema 2 (docs/report.md): the band and the three-way verdict */
    gpufit__text_put(
        &w,
        "{\n  \"schema\": 2,\n  \"verdict\": %s,\n  \"fits\": %s,\n  \"capacity_bytes\": %llu,\n"
        "  \"gpu\": ",
        verdict_text(r->verdict), fits_text(r->fits), (unsigned long long)r->capacity);
    put_str(&w, r->gpu != NULL ? r->gpu->name : r->gpu_name);
    gpufit__text_put(&w, ",\n  \"model\": {\"name\": ");
    put_str(&w, r->model_name);
    gpufit__text_put(&w, ", \"n_params\": %llu, \"n_active_params\": %llu},\n",
                     (unsigned long long)r->n_params, (unsigned long long)r->n_active);
    gpufit__text_put(
        &w,
        "  \"peak_bytes\": %llu,\n  \"peak_low_bytes\": %llu,\n  \"peak_high_bytes\": %llu,\n"
        "  \"host_bytes\": %llu,\n  \"roles\": [",
        (unsigned long long)r->peak, (unsigned long long)r->peak_b[0],
        (unsigned long long)r->peak_b[1], (unsigned long long)r->host_bytes);
    for (uint32_t i = 0; i < r->n_roles; i++) {
        const gpufit__role *ro = &r->roles[i];
        gpufit__text_put(&w, "%s\n    {\"name\": ", i ? "," : "");
        put_str(&w, ro->name);
        gpufit__text_put(&w, ", \"devices\": %u, \"layers\": %u, \"gpu\": ", ro->n_devices,
                         ro->layers);
        put_str(&w, ro->gpu != NULL ? ro->gpu->name : r->gpu != NULL ? r->gpu->name : r->gpu_name);
        gpufit__text_put(&w, ", \"capacity_bytes\": %llu,\n     ",
                         (unsigned long long)ro->capacity);
        put_components(&w, "components", ro, -1);
        gpufit__text_put(&w, ",\n     ");
        put_components(&w, "components_low", ro, 0);
        gpufit__text_put(&w, ",\n     ");
        put_components(&w, "components_high", ro, 1);
        gpufit__text_put(
            &w,
            ",\n     \"peak_allocated_bytes\": %llu, \"peak_reserved_bytes\": %llu, "
            "\"device_used_bytes\": %llu, \"headroom_bytes\": %lld, \"fits\": %s, "
            "\"verdict\": %s,\n"
            "     \"peak_allocated_low_bytes\": %llu, \"peak_allocated_high_bytes\": %llu, "
            "\"peak_reserved_low_bytes\": %llu, \"peak_reserved_high_bytes\": %llu,\n"
            "     \"device_used_low_bytes\": %llu, \"device_used_high_bytes\": %llu,\n"
            "     \"kv_capacity_bytes\": %llu, \"kv_capacity_tokens\": %llu, "
            "\"kv_capacity_low_bytes\": %llu, \"kv_capacity_high_bytes\": %llu}",
            (unsigned long long)ro->alloc, (unsigned long long)ro->reserved,
            (unsigned long long)ro->used, (long long)ro->headroom, fits_text(ro->fits),
            verdict_text(gpufit__role_verdict(ro)), (unsigned long long)ro->alloc_b[0],
            (unsigned long long)ro->alloc_b[1], (unsigned long long)ro->reserved_b[0],
            (unsigned long long)ro->reserved_b[1], (unsigned long long)ro->used_b[0],
            (unsigned long long)ro->used_b[1], (unsigned long long)ro->kv_cap_bytes,
            (unsigned long long)ro->kv_cap_tokens, (unsigned long long)ro->kv_cap_b[0],
            (unsigned long long)ro->kv_cap_b[1]);
    }
    gpufit__text_put(&w, "\n  ],\n  \"notes\": [");
    for (uint32_t i = 0; i < r->n_notes; i++) {
        const char *t = NULL;
        gpufit_result_note(r, i, &t);
        gpufit__text_put(&w, "%s", i ? ", " : "");
        put_str(&w, t);
    }
    gpufit__text_put(&w, "],\n  \"mitigations\": [");
    for (uint32_t i = 0; i < r->n_mitigations; i++) {
        const gpufit__mitigation *mt = &r->mitigations[i];
        gpufit__text_put(&w, "%s\n    {\"text\": ", i ? "," : "");
        put_str(&w, mt->text);
        gpufit__text_put(&w, ", \"changes\": %s, \"spec\": ", mt->json); /* canonical (changes.h) */
        put_str(&w, mt->spec);
        gpufit__text_put(&w, ", \"flags\": ");
        put_str(&w, mt->flags);
        gpufit__text_put(&w, ", \"peak_bytes_after\": %llu, \"fits_after\": %s, \"cost\": %.2f}",
                         (unsigned long long)mt->peak_after, fits_text(mt->fits_after), mt->cost);
    }
    gpufit__text_put(&w, "%s],\n  \"resolved\": ", r->n_mitigations ? "\n  " : "");
    size_t room = w.len < w.cap ? w.cap - w.len : 0; /* what every auto resolved to */
    w.len += gpufit__resolved_write(&r->resolved, 1, room > 0 ? w.buf + w.len : NULL, room);
    char flags[512]; /* the job's own flags in its framework's words (they fit in 512) */
    gpufit__job_flags_write(&r->flags_in, &r->resolved, flags, sizeof flags);
    gpufit__text_put(&w, ",\n  \"flags\": ");
    put_str(&w, flags);
    gpufit__text_put(&w, "\n}\n");
    if (len_out != NULL)
        *len_out = w.len;
    if (w.len >= cap)
        return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, UINT64_MAX,
                            "the report needs %zu bytes", w.len + 1);
    gpufit__ok(err);
    return GPUFIT_OK;
}
