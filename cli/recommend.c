/* SPDX-License-Identifier: MIT */
/* gpufit recommend: the GPUs (and counts) on which the job fits. */
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

/* gpufit recommend: which catalogue GPUs (and how many) fit the job, best first. */
static int make_recommendations(gpufit_list **l, const gpufit_model *m, const gpufit_job *j,
                                const cli_opts *o)
{
    int32_t ids[64];
    uint32_t n_ids = 0;
    for (const char *p = o->only; p != NULL && *p != '\0' && n_ids < 64;) {
        char name[64];
        size_t n = strcspn(p, ",");
        gpufit_gpu_info g = {.struct_size = sizeof g};
        snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), p);
        if (gpufit_gpu_by_name(name, &g) != GPUFIT_OK) {
            fprintf(stderr, "gpufit: --only: '%s' is not in the catalogue (gpufit gpus)\n", name);
            return EXIT_BAD_INPUT;
        }
        ids[n_ids++] = g.id;
        p += n + (p[n] == ',');
    }
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (gpufit_recommend(l, m, j, ids, n_ids, (uint32_t)o->max_gpus, &err) != GPUFIT_OK) {
        print_error("recommend", &err, NULL);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

static void print_recommendation(const gpufit_list *l, uint32_t i, int json)
{
    gpufit_recommendation x = {.struct_size = sizeof x};
    gpufit_list_recommendation(l, i, &x);
    if (json) {
        printf("{\"gpu\": ");
        json_str(x.gpu_name);
        printf(", \"count\": %u, \"peak_bytes\": %llu, \"headroom_bytes\": %lld, "
               "\"price_usd\": %.0f, \"tflops\": %.1f, \"nvlink\": %s, \"reason\": ",
               x.count, (unsigned long long)x.peak_bytes, (long long)x.headroom_bytes,
               x.price_usd, x.tflops, x.has_nvlink ? "true" : "false");
        json_str(x.reason);
        printf(", \"spec\": "); /* the changes that reproduce it (docs/advice.md) */
        json_str(x.spec);
        printf(", \"changes\": %s}", x.spec_json);
        return;
    }
    printf("%2u. %s", i + 1, x.reason);
    if (x.price_usd > 0)
        printf(", about $%.0f, %.1f TFLOPS per $1000", x.price_usd, x.tflops_per_kusd);
    printf("\n    --spec \"%s\"\n", x.spec);
}

static void print_recommendations(const gpufit_list *l, const cli_opts *o)
{
    if (o->json)
        printf("{\"recommendations\": [");
    if (print_items(l, o->json, print_recommendation) == 0 && !o->json)
        printf("no catalogue GPU fits this job with up to %ld GPUs\n", o->max_gpus);
}

int cmd_recommend(int argc, char **argv)
{
    cli_opts o = {0}; /* --max-gpus defaults to 8 (cli/options.def) */
    return run_list_cmd("recommend", argc, argv, &o, make_recommendations,
                        print_recommendations);
}
