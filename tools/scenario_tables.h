/* SPDX-License-Identifier: MIT */
/* The parameter table and the preset names, read through the public API once: what
 * tools/snapshot.c and tools/pgo_train.c draw their random scenarios from. */
#ifndef GPUFIT_TOOLS_SCENARIO_TABLES_H
#define GPUFIT_TOOLS_SCENARIO_TABLES_H

#include "gpufit.h"

#include <stdio.h>
#include <string.h>

#define MAX_PARAMS  512
#define MAX_PRESETS 1024

typedef struct param {
    gpufit_param_info info;
    int64_t values[128]; /* the named values of an enum or bool */
    uint32_t n_values;
} param;

static param params[MAX_PARAMS];
static char presets[MAX_PRESETS][64];

/* Fills params and presets; *n_params and *n_presets receive their counts (0 when the library
 * has none). */
static void load_scenario_tables(size_t *n_params, uint32_t *n_presets)
{
    *n_params = 0;
    *n_presets = 0;
    for (int32_t p = gpufit_param_next(0); p != 0 && *n_params < MAX_PARAMS;
         p = gpufit_param_next(p)) {
        param *pi = &params[(*n_params)++];
        pi->info.struct_size = sizeof pi->info;
        gpufit_param_get_info(p, &pi->info);
        int64_t v;
        while (pi->n_values < 128 && gpufit_param_value_at(p, pi->n_values, &v, NULL) == GPUFIT_OK)
            pi->values[pi->n_values++] = v;
    }
    gpufit_preset_info pr;
    memset(&pr, 0, sizeof pr);
    pr.struct_size = sizeof pr;
    while (*n_presets < MAX_PRESETS && gpufit_preset_at(*n_presets, &pr) == GPUFIT_OK) {
        snprintf(presets[(*n_presets)++], sizeof presets[0], "%s", pr.name);
        pr.struct_size = sizeof pr;
    }
}

#endif
