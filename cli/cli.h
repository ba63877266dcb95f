/* SPDX-License-Identifier: MIT */
/* Shared by the command's source files (cli/). */
#ifndef GPUFIT_CLI_H
#define GPUFIT_CLI_H

#include "gpufit.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    EXIT_FITS = 0,
    EXIT_OOM = 1,
    EXIT_BAD_INPUT = 2,
    EXIT_IO = 3,
    EXIT_INTERNAL = 4,
    EXIT_MARGINAL = 5
};

#define MAX_FILE_BYTES (16u << 20)

/* Options shared by estimate, recommend and plan. */
typedef struct cli_opts {
    const char *file, *spec, *max_param, *only, *model, *profile;
    const char *specs[16]; /* every --spec, in order (spec is the last) */
    int n_specs;
    int json, strict, allow_hardware;
    long gpus_per_node, nodes, top, max_gpus;
} cli_opts;

/* One option of the scenario commands (cli/options.def, the table shared with Python). */
enum { OPT_FLAG, OPT_STRING, OPT_SPEC, OPT_COUNT };
enum { OPT_E = 1, OPT_R = 2, OPT_P = 4 };
typedef struct cli_option {
    const char *name;
    size_t offset; /* of its field in cli_opts */
    int kind, cmds;
    const char *metavar;
    long def;
    const char *help;
} cli_option;

/* Prints the option lines of `gpufit CMD --help` from the table (options.c). */
void print_options(FILE *f, const char *cmd);

/* Prints item i of a list: a JSON object, or a text line. */
typedef void (*item_printer)(const gpufit_list *l, uint32_t i, int json);

/* Builds the list of a subcommand; returns -1 or an exit code (the error printed). */
typedef int (*list_maker)(gpufit_list **l, const gpufit_model *m, const gpufit_job *j,
                          const cli_opts *o);

/* Prints the list of a subcommand (items through print_items). */
typedef void (*list_printer)(const gpufit_list *l, const cli_opts *o);

/* Reads a whole file (at most 16 MiB) into *out (malloc'd; kind names such files in the
 * message when it is larger). Returns -1 or an exit code, the error printed (files.c). */
int read_file(const char *path, const char *kind, char **out, size_t *len);

/* gpufit calibrate RUNS.jsonl [-o PROFILE.json] (calibrate.c); returns the exit code. */
int cmd_calibrate(int argc, char **argv);

/* One file per subcommand: estimate.c, recommend.c, plan.c, calibrate.c, listings.c (models,
 * gpus, params); main and the usage text in gpufit.c. */
int cmd_estimate(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_models(void);
int cmd_gpus(void);
int cmd_params(void);
int usage(FILE *f, int code);

/* Shared helpers: options.c (parse_opts), files.c (read_file, load_scenario), report.c (the
 * rest). */
double gib(uint64_t b);
void json_str(const char *s);
int load_scenario(const cli_opts *o, gpufit_model **m, gpufit_job **j);
int parse_opts(const char *cmd, int argc, char **argv, cli_opts *o);
void print_error(const char *what, const gpufit_error *err, const char *text);
void print_file_error(const char *path, const gpufit_error *err);
uint32_t print_items(const gpufit_list *l, int json, item_printer item);
int print_json_report(const gpufit_result *r);
void print_text(const gpufit_result *r, const gpufit_summary *s);
int run_list_cmd(const char *cmd, int argc, char **argv, cli_opts *o, list_maker make,
                 list_printer print);

#endif
