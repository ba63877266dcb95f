/* The derived data a model handle caches (shape, exact counts, tensor groups), so that an
 * evaluation — millions of them inside a planner — does not re-derive the model each time. */
#include "internal.h"

#include <string.h>

void gpufit__model_refresh(struct gpufit_model *m)
{
    m->cache_state = 0;
    if (gpufit__model_resolve(m, &m->cache_shape, NULL) != GPUFIT_OK ||
        gpufit__model_count(&m->cache_shape, &m->cache_counts, NULL) != GPUFIT_OK)
        return;
    m->cache_ng = (uint32_t)gpufit__model_tensors(&m->cache_shape, m->cache_groups);
    gpufit__class_aggregates(&m->cache_shape, m->cache_groups, m->cache_ng, m->cache_agg);
    m->cache_state = 1;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void gpufit__class_aggregates(const gpufit__shape *s, const gpufit__tgroup *g, size_t ng,
                              gpufit__class_agg *agg)
{
    memset(agg, 0, sizeof(gpufit__class_agg) * GPUFIT__W_COUNT);
    for (int w = 0; w < GPUFIT__W_COUNT; w++)
        agg[w].cols256 = 1;
    for (size_t i = 0; i < ng; i++) {
        if (g[i].where == GPUFIT__W_GLOBAL)
            continue; /* global tensors are few: the caller sums them group by group */
        gpufit__class_agg *a = &agg[g[i].where];
        uint64_t el = g[i].rows * g[i].cols * g[i].copies; /* counts fit: model_count checked */
        int oned = g[i].rows == 1, lin = gpufit__is_linear(g[i].kind) && !oned;
        int exp = gpufit__is_expert(g[i].kind);
        int kv = (g[i].kind == GPUFIT__T_ATTN_K || g[i].kind == GPUFIT__T_ATTN_V) && !s->mla;
        if (oned) {
            a->oned_el += el;
            continue;
        }
        if (kv) {
            a->kv_n += g[i].copies;
            a->kv_cols = g[i].cols;
        } else {
            a->rows_gcd = gcd(a->rows_gcd, g[i].rows);
            if (!lin)
                a->other2d_el += el;
            else if (exp)
                a->exp_el += el;
            else
                a->lin_el += el;
        }
        if (lin && !kv) {
            *(exp ? &a->exp_rows : &a->lin_rows) += g[i].rows * g[i].copies;
            *(exp ? &a->exp_cols : &a->lin_cols) += g[i].cols * g[i].copies;
        }
        if (lin && g[i].cols % 256 != 0)
            a->cols256 = 0;
        for (int t = 0; t < 3; t++)
            if (gpufit__lora_adapted(t, g[i].kind))
                *(exp ? &a->lora_rc_exp[t] : &a->lora_rc[t]) +=
                    (g[i].rows + g[i].cols) * g[i].copies;
    }
}
