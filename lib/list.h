/* SPDX-License-Identifier: MIT */
/* Lists returned by gpufit_recommend() and gpufit_plan() (internal layout). */
#ifndef GPUFIT_LIST_H
#define GPUFIT_LIST_H

#include "eval.h"

/* Each entry keeps the canonical change set it was evaluated with (changes.h) and its text:
 * gpufit_job_apply_list_entry() applies the set, the spec and JSON print it. */
typedef struct gpufit__rec {
    gpufit_recommendation info; /* strings point into reason[] / the catalogue */
    gpufit__changes cs;
    char reason[192];
    char spec[192];
    char json[256];
} gpufit__rec;

typedef struct gpufit__lay {
    gpufit_layout info;
    gpufit__changes cs;
    char spec[448];
    char json[640];
    char placement[320];
    char flags[512]; /* the layout's job in its framework's flags (gpufit__job_flags_write) */
} gpufit__lay;

struct gpufit_list {
    int32_t kind; /* 1 recommendations, 2 layouts */
    uint32_t n, cap;
    uint64_t evaluated;
    union {
        gpufit__rec *rec;
        gpufit__lay *lay;
    } u;
};

/* Allocates a list of cap entries of the given kind (NULL on allocation failure). */
struct gpufit_list *gpufit__list_new(int32_t kind, uint32_t cap);

#endif /* GPUFIT_LIST_H */
