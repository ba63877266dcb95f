/* SPDX-License-Identifier: MIT */
/* Change sets: the job edits an advice consists of (a plan layout, a GPU recommendation, a
 * mitigation; docs/advice.md). The same set is applied to the original job to evaluate the
 * advice and is printed as its spec and JSON, so that what is printed reproduces what was
 * evaluated. A set is kept canonical while it is built: sorted by parameter id, each parameter
 * once (a later value replaces an earlier one). */
#ifndef GPUFIT_CHANGES_H
#define GPUFIT_CHANGES_H

#include "internal.h"

#define GPUFIT__CHANGES_MAX 24

enum {
    GPUFIT__CH_INT = 0,   /* int, enum or bool parameter: value i */
    GPUFIT__CH_FLOAT = 1, /* float parameter: value f */
    GPUFIT__CH_CLEAR = 2, /* list parameter emptied (written "none" / []) */
};

/* One parameter edit. */
typedef struct gpufit__change {
    int32_t param;
    uint8_t type; /* GPUFIT__CH_* */
    uint8_t keep; /* 1: named even where the job already has the value (what the advice
                     decides, e.g. a layout's degrees); 0: named only when it changes the job
                     (a field the advice resets) */
    uint16_t reserved;
    int64_t i;
    double f;
    const gpufit__param_entry *e; /* the parameter's table entry (NULL: unknown) */
} gpufit__change;

typedef struct gpufit__changes {
    uint32_t n;
    uint32_t overflow; /* 1 when an edit did not fit: the set is unusable (a bug) */
    gpufit__change ch[GPUFIT__CHANGES_MAX];
} gpufit__changes;

/* Writes cs as the framework's own flags or config keys (ready to paste; docs/flags.md) into
 * buf (capacity cap, NUL-terminated, truncated if need be); returns the length it needs. */
size_t gpufit__cs_flags(const gpufit__changes *cs, const struct gpufit_job *j, int32_t framework,
                        char *buf, size_t cap);

/* The same, leaving out the changes that have no flag of their own in that framework (the
 * job's own flags, job_flags.c). */
size_t gpufit__cs_flags_only(const gpufit__changes *cs, const struct gpufit_job *j,
                             int32_t framework, char *buf, size_t cap);

/* Records param = v, replacing an earlier edit of param. */
void gpufit__cs_int(gpufit__changes *cs, int32_t param, int64_t v, int keep);
void gpufit__cs_float(gpufit__changes *cs, int32_t param, double v, int keep);
/* The same with the parameter's table entry already found (e != NULL): loops that record the
 * same parameters many times look each up once. */
void gpufit__cs_int_e(gpufit__changes *cs, const gpufit__param_entry *e, int64_t v, int keep);
/* Records that list parameter param is emptied. */
void gpufit__cs_clear(gpufit__changes *cs, int32_t param, int keep);
/* Records every edit of src (in its order), replacing edits of the same parameters. */
void gpufit__cs_merge(gpufit__changes *cs, const gpufit__changes *src);
/* 1 when cs edits param. */
int gpufit__cs_has(const gpufit__changes *cs, int32_t param);

/* Applies cs to j, in order, with the setters' checks (j is left stale: plan_state 0).
 * Job parameters only. */
int32_t gpufit__cs_apply(const gpufit__changes *cs, struct gpufit_job *j, gpufit_error *err);
/* Drops the edits without keep that leave j (the original job) unchanged, so that the set
 * names what the advice changes; applying it gives the same job as before. */
void gpufit__cs_canon(gpufit__changes *cs, const struct gpufit_job *j);

/* The set as a spec string ("tp=2 pp=4 pp_schedule=auto") and as a JSON object
 * ({"tp": 2, "pp": 4, "pp_schedule": "auto"}), each key once, in parameter-id order; both
 * apply with gpufit_apply_spec / gpufit_apply_json. Like snprintf: the length needed. */
size_t gpufit__cs_spec(const gpufit__changes *cs, char *buf, size_t cap);
size_t gpufit__cs_json(const gpufit__changes *cs, char *buf, size_t cap);

#endif /* GPUFIT_CHANGES_H */
