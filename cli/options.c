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

/* The table (cli/options.def): shared with python3 -m gpufit. */
#define OPT(name, field, kind, cmds, metavar, def, help)                                          \
    {name, offsetof(cli_opts, field), kind, cmds, metavar, def, help},
static const cli_option options[] = {
#include "options.def"
};
#undef OPT
enum { N_OPTIONS = sizeof options / sizeof options[0] };

/* The subcommand's bit (OPT_E, OPT_R, OPT_P). */
static int cmd_bit(const char *cmd)
{
    return strcmp(cmd, "estimate") == 0    ? OPT_E
           : strcmp(cmd, "recommend") == 0 ? OPT_R
           : strcmp(cmd, "plan") == 0      ? OPT_P
                                           : 0;
}

/* The option a names ("--name" or "--name=value"), or NULL. */
static const cli_option *find_opt(const char *a)
{
    for (int k = 0; k < N_OPTIONS; k++) {
        size_t n = strlen(options[k].name);
        if (strncmp(a, options[k].name, n) == 0 &&
            (a[n] == '\0' || (a[n] == '=' && options[k].kind != OPT_FLAG)))
            return &options[k];
    }
    return NULL;
}

/* Stores the value v of option op; returns -1 or an exit code (the error printed). */
static int set_opt(const char *cmd, cli_opts *o, const cli_option *op, const char *v)
{
    char *field = (char *)o + op->offset;
    switch (op->kind) {
    case OPT_SPEC:
        if (o->n_specs == (int)(sizeof o->specs / sizeof o->specs[0])) {
            fprintf(stderr, "gpufit %s: more than %d --spec options\n", cmd,
                    (int)(sizeof o->specs / sizeof o->specs[0]));
            return EXIT_BAD_INPUT;
        }
        o->specs[o->n_specs++] = v; /* applied in order: a later one overrides */
        *(const char **)field = v;
        return -1;
    case OPT_STRING:
        *(const char **)field = v;
        return -1;
    case OPT_COUNT:
        if (parse_long(v, (long *)field)) {
            fprintf(stderr, "gpufit %s: %s needs an integer in [1, %u], not '%s'\n", cmd,
                    op->name, (unsigned)UINT32_MAX, v);
            return EXIT_BAD_INPUT;
        }
        return -1;
    default:
        *(int *)field = 1;
        return -1;
    }
}

void print_options(FILE *f, const char *cmd)
{
    int bit = cmd_bit(cmd);
    for (int k = 0; k < N_OPTIONS; k++) {
        if (!(options[k].cmds & bit))
            continue;
        char head[40];
        snprintf(head, sizeof head, "%s%s%s", options[k].name, options[k].metavar[0] ? " " : "",
                 options[k].metavar);
        fprintf(f, "  %-18s ", head);
        /* the help, wrapped at 90 columns under its first line */
        const char *h = options[k].help;
        size_t col = 21;
        for (int first = 1; *h != '\0'; first = 0) {
            size_t w = strcspn(h, " ");
            if (!first && col + 1 + w > 90) {
                fprintf(f, "\n%21s", "");
                col = 21;
            } else if (!first) {
                fputc(' ', f);
                col++;
            }
            fprintf(f, "%.*s", (int)w, h);
            col += w;
            h += w;
            h += strspn(h, " ");
        }
        if (options[k].kind == OPT_COUNT && options[k].def > 0)
            fprintf(f, " (default %ld)", options[k].def);
        fputc('\n', f);
    }
}

/* Parses the options of subcommand cmd; returns -1 on success or an exit code. */
int parse_opts(const char *cmd, int argc, char **argv, cli_opts *o)
{
    int bit = cmd_bit(cmd);
    for (int k = 0; k < N_OPTIONS; k++) /* defaults of the counts */
        if (options[k].kind == OPT_COUNT && (options[k].cmds & bit))
            *(long *)((char *)o + options[k].offset) = options[k].def;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const cli_option *op = find_opt(a);
        if (op != NULL && !(op->cmds & bit)) {
            fprintf(stderr, "gpufit %s: %s is not an option of %s (see gpufit %s --help)\n", cmd,
                    op->name, cmd, cmd);
            return EXIT_BAD_INPUT;
        }
        if (op != NULL && op->kind == OPT_FLAG) {
            set_opt(cmd, o, op, NULL);
        } else if (op != NULL) {
            const char *eq = strchr(a, '=');
            const char *v = eq != NULL ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (v == NULL) {
                fprintf(stderr, "gpufit %s: %s needs a value (see gpufit %s --help)\n", cmd, a,
                        cmd);
                return EXIT_BAD_INPUT;
            }
            int code = set_opt(cmd, o, op, v);
            if (code >= 0)
                return code;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "gpufit %s: unknown option '%s' (see gpufit %s --help)\n", cmd, a,
                    cmd);
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
