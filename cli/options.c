/* SPDX-License-Identifier: MIT */
/* The command's options: parsing and checking (counts never wrap). */
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

/* A count in [1, UINT32_MAX] (what the C API takes): parsed as 64 bits, never wrapped. */
static int parse_long(const char *s, long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v <= 0 || v > (long long)UINT32_MAX)
        return 1;
    *out = (long)v;
    return 0;
}

/* The options that take a value (as the next argument or after '='): the first four are
 * strings, the rest positive counts. */
static const char *const value_opts[] = {"--spec",  "--model", "--max",           "--only",
                                         "--profile", "--nodes", "--gpus-per-node", "--top",
                                         "--max-gpus"};

enum { N_VALUE_OPTS = sizeof value_opts / sizeof value_opts[0], N_STRING_OPTS = 5 };

/* Stores the value v of value_opts[k]; returns -1 or an exit code (the error printed). */
static int set_opt(const char *cmd, cli_opts *o, int k, const char *v)
{
    const char **str[N_STRING_OPTS] = {&o->spec, &o->model, &o->max_param, &o->only,
                                       &o->profile};
    long *num[N_VALUE_OPTS - N_STRING_OPTS] = {&o->nodes, &o->gpus_per_node, &o->top, &o->max_gpus};
    if (k == 0 && o->n_specs == (int)(sizeof o->specs / sizeof o->specs[0])) {
        fprintf(stderr, "gpufit %s: more than %d --spec options\n", cmd,
                (int)(sizeof o->specs / sizeof o->specs[0]));
        return EXIT_BAD_INPUT;
    }
    if (k == 0)
        o->specs[o->n_specs++] = v; /* applied in order: a later one overrides */
    if (k < N_STRING_OPTS) {
        *str[k] = v;
    } else if (parse_long(v, num[k - N_STRING_OPTS])) {
        fprintf(stderr, "gpufit %s: %s needs an integer in [1, %u], not '%s'\n", cmd,
                value_opts[k], (unsigned)UINT32_MAX, v);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

/* The index in value_opts of option a ("--name" or "--name=value"), or -1. */
static int value_opt(const char *a)
{
    for (int k = 0; k < N_VALUE_OPTS; k++) {
        size_t n = strlen(value_opts[k]);
        if (strncmp(a, value_opts[k], n) == 0 && (a[n] == '\0' || a[n] == '='))
            return k;
    }
    return -1;
}

/* Parses the options of subcommand cmd; returns -1 on success or an exit code. */
int parse_opts(const char *cmd, int argc, char **argv, cli_opts *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int k = value_opt(a);
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--allow-hardware") == 0) {
            o->allow_hardware = 1;
        } else if (strcmp(a, "--strict") == 0) {
            o->strict = 1;
        } else if (k >= 0) {
            const char *eq = strchr(a, '=');
            const char *v = eq != NULL ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (v == NULL) {
                fprintf(stderr, "gpufit %s: %s needs a value (see gpufit --help)\n", cmd, a);
                return EXIT_BAD_INPUT;
            }
            int code = set_opt(cmd, o, k, v);
            if (code >= 0)
                return code;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "gpufit %s: unknown option '%s' (see gpufit --help)\n", cmd, a);
            return EXIT_BAD_INPUT;
        } else if (o->file == NULL) {
            o->file = a;
        } else {
            fprintf(stderr, "gpufit %s: unexpected argument '%s': one scenario file at most\n",
                    cmd, a);
            return EXIT_BAD_INPUT;
        }
    }
    if (o->file != NULL || o->spec != NULL || o->model != NULL)
        return -1;
    fprintf(stderr, "gpufit %s: no scenario: give FILE.json, --spec or --model\n", cmd);
    return usage(stderr, EXIT_BAD_INPUT);
}
