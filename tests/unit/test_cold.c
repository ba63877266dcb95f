/* SPDX-License-Identifier: MIT */
/* The cold path (issue 16): new handles, gpufit_apply_json, free. Its shortcuts must give what
 * the reference paths give: the generated default initialisers what the table walk writes. */
#include <criterion/criterion.h>

#include "internal.h"

#include <stddef.h>
#include <string.h>

Test(cold, model_defaults_equal_the_table_walk)
{
    static struct gpufit_model a, b;
    memset(&a, 0xA5, sizeof a); /* the copy must write every parameter byte */
    gpufit__model_defaults(&a);
    gpufit__model_defaults_walk(&b);
    cr_assert_eq(memcmp(&a, &b, offsetof(struct gpufit_model, gguf_layer_bytes)), 0);
    cr_assert_eq(a.cache_state, 0);
    cr_assert_eq(a.cache_ng, 0);
    cr_assert_eq(a.from_unknown_type, 0);
    cr_assert_str_eq(a.name, "custom");
}

Test(cold, job_defaults_equal_the_table_walk)
{
    static struct gpufit_job a, b;
    memset(&a, 0xA5, sizeof a);
    gpufit__job_defaults(&a);
    gpufit__job_defaults_walk(&b);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    cr_assert_eq(a.plan_state, 0);
}

Test(cold, every_default_reads_back_as_the_table_says)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info info = {.struct_size = sizeof info};
        cr_assert_eq(gpufit_param_get_info(p, &info), GPUFIT_OK);
        if (info.type == GPUFIT_TYPE_LIST)
            continue;
        double d = 0.0;
        int32_t st = info.domain == GPUFIT_DOMAIN_MODEL ? gpufit_model_get_float(m, p, &d, NULL)
                                                        : gpufit_job_get_float(j, p, &d, NULL);
        cr_assert_eq(st, GPUFIT_OK, "%s", info.name);
        cr_assert_eq(d, info.default_float, "%s: %g, the table says %g", info.name, d,
                     info.default_float);
    }
    gpufit_model_free(m);
    gpufit_job_free(j);
}
