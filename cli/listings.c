/* SPDX-License-Identifier: MIT */
/* gpufit models, gpus, params: the catalogues. */
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

int cmd_models(void)
{
    printf("%-34s %16s %16s  %s\n", "name", "params", "active", "aliases");
    gpufit_preset_info p = {.struct_size = sizeof p};
    for (uint32_t i = 0; gpufit_preset_at(i, &p) == GPUFIT_OK; i++) {
        printf("%-34s %16llu %16llu  %s\n", p.name, (unsigned long long)p.n_params,
               (unsigned long long)p.n_active_params, p.aliases != NULL ? p.aliases : "");
        p.struct_size = sizeof p;
    }
    return EXIT_FITS;
}

int cmd_gpus(void)
{
    printf("%-18s %-28s %10s %6s %5s %5s  %s\n", "key", "name", "GiB", "TB/s", "bf16", "fp8",
           "aliases");
    gpufit_gpu_info g = {.struct_size = sizeof g};
    for (uint32_t i = 0; gpufit_gpu_at(i, &g) == GPUFIT_OK; i++) {
        printf("%-18s %-28s %10.2f %6.2f %5s %5s  %s\n", g.key, g.name, gib(g.memory_bytes),
               g.memory_bandwidth_gbs / 1000.0, g.supports_bf16 ? "yes" : "no",
               g.supports_fp8 ? "yes" : "no", g.aliases != NULL ? g.aliases : "");
        g.struct_size = sizeof g;
    }
    return EXIT_FITS;
}

int cmd_params(void)
{
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = {.struct_size = sizeof in};
        if (gpufit_param_get_info(p, &in) != GPUFIT_OK)
            continue;
        printf("%-26s %-5s ", in.name, in.domain == GPUFIT_DOMAIN_MODEL ? "model" : "job");
        if (in.type == GPUFIT_TYPE_FLOAT) {
            printf("float  default %g, range [%g, %g]", in.default_float, in.min_float,
                   in.max_float);
        } else if (in.type == GPUFIT_TYPE_LIST && p == GPUFIT_JOB_DEVICE_GPUS) {
            printf("list   up to %lld entries, each a name from 'gpufit gpus' or an id in "
                   "[%.0f, %.0f]",
                   (long long)in.max_int, in.min_float, in.max_float);
        } else if (in.type == GPUFIT_TYPE_LIST) { /* max_int: entries; *_float: each entry */
            printf("list   up to %lld entries, each in [%g, %g]", (long long)in.max_int,
                   in.min_float, in.max_float);
        } else if (in.type == GPUFIT_TYPE_ENUM || in.type == GPUFIT_TYPE_BOOL) {
            const char *dn = gpufit_param_value_name(p, in.default_int);
            printf("%s default %s, values:", in.type == GPUFIT_TYPE_BOOL ? "bool " : "enum ",
                   dn != NULL ? dn : "?");
            const char *name;
            int64_t v;
            for (uint32_t k = 0; gpufit_param_value_at(p, k, &v, &name) == GPUFIT_OK; k++)
                printf(" %s", name);
        } else if (in.flags & GPUFIT_PARAM_FLAG_UNSET_DEFAULT) {
            printf("int    required (no default), range [%lld, %lld]", (long long)in.min_int,
                   (long long)in.max_int);
        } else if (strcmp(in.unit, "version") == 0) { /* releases are written as text */
            printf("text   default current, a release such as 0.6.3 or 12.4 (stored as "
                   "major x 1000000 + minor x 1000 + patch)");
        } else {
            printf("int    default %lld, range [%lld, %lld]", (long long)in.default_int,
                   (long long)in.min_int, (long long)in.max_int);
            if (p == GPUFIT_JOB_GPU)
                printf(", or a name from 'gpufit gpus'");
        }
        if (in.unit[0] != '\0')
            printf(" (%s)", in.unit);
        printf("\n    %s\n", in.doc);
    }
    return EXIT_FITS;
}
