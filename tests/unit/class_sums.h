/* SPDX-License-Identifier: MIT */
/* Comparing a model cache's class sums (gpufit__aggregates) as the evaluation reads them: the
 * layer classes in [w_first, w_end) and the global sides, the vision side only with a vision
 * encoder. A preset's record leaves the other sums unwritten (gpufit__preset_record_fill). */
#ifndef GPUFIT_TEST_CLASS_SUMS_H
#define GPUFIT_TEST_CLASS_SUMS_H

#include "internal.h"

#include <string.h>

/* -1 when the read sums of a and b are equal; else the differing slot (class w, or
 * GPUFIT__W_COUNT + side), GPUFIT__W_COUNT + 4 for glob_dense. */
static inline int class_sums_differ(const gpufit__shape *s, const gpufit__aggregates *a,
                                    const gpufit__aggregates *b)
{
    for (int w = s->w_first; w < s->w_end; w++)
        if (memcmp(&a->layer[w], &b->layer[w], sizeof a->layer[w]) != 0)
            return w;
    for (int k = 0; k < (s->v_layers > 0 ? 4 : 3); k++)
        if (memcmp(&a->glob[k], &b->glob[k], sizeof a->glob[k]) != 0)
            return GPUFIT__W_COUNT + k;
    return a->glob_dense != b->glob_dense ? GPUFIT__W_COUNT + 4 : -1;
}

#endif
