/* The derived data a model handle caches (shape, exact counts, tensor groups), so that an
 * evaluation — millions of them inside a planner — does not re-derive the model each time. */
#include "internal.h"

void gpufit__model_refresh(struct gpufit_model *m)
{
    m->cache_state = 0;
    if (gpufit__model_resolve(m, &m->cache_shape, NULL) != GPUFIT_OK ||
        gpufit__model_count(&m->cache_shape, &m->cache_counts, NULL) != GPUFIT_OK)
        return;
    m->cache_ng = (uint32_t)gpufit__model_tensors(&m->cache_shape, m->cache_groups);
    m->cache_state = 1;
}
