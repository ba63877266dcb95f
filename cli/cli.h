/* SPDX-License-Identifier: MIT */
/* Shared by the command's source files (cli/). */
#ifndef GPUFIT_CLI_H
#define GPUFIT_CLI_H

#include <stddef.h>

/* Reads a whole file (at most 16 MiB) into *out (malloc'd; kind names such files in the
 * message when it is larger). Returns -1 or an exit code, the error printed (gpufit.c). */
int read_file(const char *path, const char *kind, char **out, size_t *len);

/* gpufit calibrate RUNS.jsonl [-o PROFILE.json] (calibrate.c); returns the exit code. */
int cmd_calibrate(int argc, char **argv);

#endif
