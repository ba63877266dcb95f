/* SPDX-License-Identifier: MIT */
/* gpufit plan: parallel layouts that fit, cheapest first. */
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

/* The GPUs per node planned over: --gpus-per-node, else the job's gpus= (one node), else 8,
 * assumed (the report says which). The command runs one plan per process. */
static long gpn_used;
static const char *gpn_from;

/* gpufit plan: the cheapest layouts that fit a cluster. */
static int make_plan(gpufit_list **l, const gpufit_model *m, const gpufit_job *j,
                     const cli_opts *o)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int64_t gpus = 0;
    gpn_used = o->gpus_per_node;
    gpn_from = "--gpus-per-node";
    if (gpn_used == 0 && gpufit_job_get_int(j, GPUFIT_JOB_GPUS, &gpus, NULL) == GPUFIT_OK &&
        gpus > 0 && o->nodes == 1 && gpus <= 4294967295) {
        gpn_used = (long)gpus;
        gpn_from = "the job's gpus";
    } else if (gpn_used == 0) {
        gpn_used = 8;
        gpn_from = "assumed: no gpus= or --gpus-per-node given";
    }
    if (gpufit_plan(l, m, j, (uint32_t)gpn_used, (uint32_t)o->nodes, (uint32_t)o->top,
                    &err) != GPUFIT_OK) {
        print_error("plan", &err, NULL);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

static void print_layout(const gpufit_list *l, uint32_t i, int json)
{
    gpufit_layout y = {.struct_size = sizeof y};
    gpufit_list_layout(l, i, &y);
    if (json) {
        printf("{\"spec\": ");
        json_str(y.spec);
        printf(", \"changes\": %s, \"cost\": %.3f, \"peak_bytes\": %llu, "
               "\"headroom_bytes\": %lld, \"kv_capacity_tokens\": %llu, \"flags\": ",
               y.spec_json, y.cost, (unsigned long long)y.peak_bytes,
               (long long)y.headroom_bytes, (unsigned long long)y.kv_capacity_tokens);
        json_str(y.flags);
        putchar('}');
        return;
    }
    printf("%3u. cost %.3f  %7.2f GiB  %s", i + 1, y.cost, gib(y.peak_bytes), y.spec);
    if (y.kv_capacity_tokens > 0) /* serving: the room left for more sequences */
        printf("  (KV room %llu tokens per replica)", (unsigned long long)y.kv_capacity_tokens);
    putchar('\n');
    if (y.flags[0] != '\0') /* the layout in its framework's own flags (docs/flags.md) */
        printf("       flags: %s\n", y.flags);
}

static void print_layouts(const gpufit_list *l, const cli_opts *o)
{
    unsigned long long evaluated = (unsigned long long)gpufit_list_evaluated(l);
    if (o->json)
        printf("{\"evaluated\": %llu, \"nodes\": %ld, \"gpus_per_node\": %ld, "
               "\"gpus_assumed\": %s, \"layouts\": [",
               evaluated, o->nodes, gpn_used, gpn_from[0] == 'a' ? "true" : "false");
    else
        printf("%llu layouts evaluated on %ld x %ld GPUs (%s); %u cheapest that fit (cost: "
               "docs/planner.md):\n",
               evaluated, o->nodes, gpn_used, gpn_from, gpufit_list_count(l));
    uint32_t n = print_items(l, o->json, print_layout);
    gpufit_layout y = {.struct_size = sizeof y};
    if (o->json)
        return;
    if (n == 0) {
        printf("no layout fits\n");
        return;
    }
    gpufit_list_layout(l, 0, &y);
    printf("\nplacement of layout 1: %s\n", y.placement);
}

int cmd_plan(int argc, char **argv)
{
    cli_opts o = {0}; /* defaults from cli/options.def; --gpus-per-node 0 = the job's gpus,
                       * else 8 (make_plan) */
    return run_list_cmd("plan", argc, argv, &o, make_plan, print_layouts);
}
