/* SPDX-License-Identifier: MIT */
/* Shared by the unit tests that evaluate a spec string: a model, a job and the result of
 * gpufit_evaluate, created by run() and freed by done(). */
#ifndef GPUFIT_TEST_RUN_H
#define GPUFIT_TEST_RUN_H

#include <criterion/criterion.h>

#include "gpufit.h"

typedef struct run_s {
    gpufit_model *m;
    gpufit_job *j;
    gpufit_result *r;
    gpufit_error err;
} run_s;

/* Applies spec to a new model and job and evaluates them: GPUFIT_OK, or the first error
 * (s->err says which). Call done() either way. */
static inline int32_t run(run_s *s, const char *spec)
{
    s->err = (gpufit_error)GPUFIT_ERROR_INIT;
    s->m = NULL;
    s->j = NULL;
    s->r = NULL;
    cr_assert_eq(gpufit_model_new(&s->m, &s->err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&s->j, &s->err), GPUFIT_OK);
    int32_t st = gpufit_apply_spec(s->m, s->j, spec, &s->err);
    return st != GPUFIT_OK ? st : gpufit_evaluate(&s->r, s->m, s->j, &s->err);
}

static inline void done(run_s *s)
{
    gpufit_result_free(s->r);
    gpufit_job_free(s->j);
    gpufit_model_free(s->m);
}

/* run() that must succeed (the spec and the library's message on failure). */
static inline void run_ok(run_s *s, const char *spec)
{
    cr_assert_eq(run(s, spec), GPUFIT_OK, "%s: %s", spec, s->err.message);
}

/* Component c of role 0, bytes. */
static inline uint64_t bytes0(const run_s *s, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(s->r, 0, c, &b), GPUFIT_OK);
    return b;
}

/* Role i of the result. */
static inline gpufit_role_info role(const run_s *s, uint32_t i)
{
    gpufit_role_info ro = {.struct_size = sizeof ro};
    cr_assert_eq(gpufit_result_role(s->r, i, &ro), GPUFIT_OK);
    return ro;
}

/* The band [lo, hi] of component c of role 0. */
static inline void band0(const run_s *s, int32_t c, uint64_t *lo, uint64_t *hi)
{
    cr_assert_eq(gpufit_result_bytes_band(s->r, 0, c, lo, hi), GPUFIT_OK);
}

/* Component c of role 0 of the job a spec string describes (evaluated, then freed). */
static inline uint64_t spec_bytes0(const char *spec, int32_t c)
{
    run_s s;
    run_ok(&s, spec);
    uint64_t b = bytes0(&s, c);
    done(&s);
    return b;
}

#endif
