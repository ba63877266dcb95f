/* SPDX-License-Identifier: MIT */
/* gpufit estimate: one job's memory, band, verdict and fixes; --max. */
#define _POSIX_C_SOURCE 200809L /* open, fstat, opendir: model directories */

#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --max PARAM: the largest value that fits, with the accumulation that keeps the batch. */
static int print_max(const gpufit_model *m, const gpufit_job *j, const char *name, int json)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t p = 0;
    int64_t v = 0;
    if (gpufit_param_by_name(name, &p) != GPUFIT_OK) {
        fprintf(stderr, "gpufit: --max: unknown parameter '%s'\n", name);
        return EXIT_BAD_INPUT;
    }
    if (gpufit_max_fitting(m, j, p, &v, &err) != GPUFIT_OK) {
        print_error("--max", &err, NULL);
        return EXIT_BAD_INPUT;
    }
    int64_t gbs = 0, dp = 1;
    gpufit_job_get_int(j, GPUFIT_JOB_GLOBAL_BATCH, &gbs, NULL);
    gpufit_job_get_int(j, GPUFIT_JOB_DP, &dp, NULL);
    if (json) {
        printf("{\"param\": \"%s\", \"max\": %lld", name, (long long)v);
        if (p == GPUFIT_JOB_MICRO_BATCH && v > 0 && gbs > 0)
            printf(", \"gradient_accumulation\": %lld",
                   (long long)((gbs + v * dp - 1) / (v * dp)));
        printf("}\n");
    } else if (v == 0) {
        printf("%s: even the smallest value does not fit\n", name);
    } else {
        printf("largest %s that fits: %lld", name, (long long)v);
        if (p == GPUFIT_JOB_MICRO_BATCH && gbs > 0)
            printf(" (gradient accumulation %lld keeps the global batch of %lld)",
                   (long long)((gbs + v * dp - 1) / (v * dp)), (long long)gbs);
        putchar('\n');
    }
    return v > 0 ? EXIT_FITS : EXIT_OOM;
}

int cmd_estimate(int argc, char **argv)
{
    cli_opts o = {0};
    int code = parse_opts("estimate", argc, argv, &o);
    if (code >= 0)
        return code;
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    code = load_scenario(&o, &m, &j);
    if (code >= 0)
        goto out;
    if (o.max_param != NULL) {
        code = print_max(m, j, o.max_param, o.json);
        goto out;
    }
    code = EXIT_INTERNAL;
    if (gpufit_evaluate(&r, m, j, &err) != GPUFIT_OK) {
        print_error("estimate", &err, NULL);
        code = err.status == GPUFIT_E_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
        goto out;
    }
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_result_summary(r, &s);
    if (o.json) {
        if (print_json_report(r))
            goto out;
    } else {
        printf("gpufit %s: %s, task ", gpufit_version_string(), gpufit_model_name(m));
        int64_t task = 0;
        gpufit_job_get_int(j, GPUFIT_JOB_TASK, &task, NULL);
        printf("%s\n", gpufit_param_value_name(GPUFIT_JOB_TASK, task));
        print_text(r, &s);
    }
    /* the three-way verdict (docs/band.md); --strict fails closed */
    if (s.verdict == GPUFIT_VERDICT_UNKNOWN && o.strict) {
        fprintf(stderr, "gpufit estimate: --strict needs a GPU (gpu=NAME or a capacity)\n");
        code = EXIT_BAD_INPUT;
    } else {
        code = s.verdict == GPUFIT_VERDICT_OOM        ? EXIT_OOM
               : s.verdict == GPUFIT_VERDICT_MARGINAL ? (o.strict ? EXIT_OOM : EXIT_MARGINAL)
                                                      : EXIT_FITS;
    }
out:
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return code;
}
