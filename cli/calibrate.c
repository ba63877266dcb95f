/* SPDX-License-Identifier: MIT */
/* gpufit calibrate RUNS.jsonl [-o PROFILE.json]: fits the stack constants that measured runs
 * constrain (gpufit_calibrate, docs/calibration.md) and writes the profile that
 * `gpufit estimate --profile PROFILE.json` applies. */
#include "cli.h"
#include "gpufit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* exit codes of the command (gpufit --help) */
enum { CAL_OK = 0, CAL_BAD_INPUT = 2, CAL_IO = 3, CAL_INTERNAL = 4 };

static int cal_usage(FILE *f, int code)
{
    fprintf(f, "usage: gpufit calibrate RUNS.jsonl [-o PROFILE.json]\n"
               "  RUNS.jsonl: measured runs, one JSON object per line (docs/runs.md).\n"
               "  Fits the constants the runs constrain (allocator slack from peak_reserved,\n"
               "  CUDA context from device_used, vLLM non-torch memory from kv_capacity), keeps\n"
               "  the rest at their defaults, prints what it fitted and writes the profile to\n"
               "  PROFILE.json (else stdout). Apply it with gpufit estimate --profile FILE.\n");
    return code;
}

int cmd_calibrate(int argc, char **argv)
{
    const char *runs_path = NULL, *out_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return cal_usage(stdout, CAL_OK);
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gpufit calibrate: %s needs a file name\n", argv[i]);
                return CAL_BAD_INPUT;
            }
            out_path = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "gpufit calibrate: unknown option '%s'\n", argv[i]);
            return cal_usage(stderr, CAL_BAD_INPUT);
        } else if (runs_path == NULL) {
            runs_path = argv[i];
        } else {
            fprintf(stderr, "gpufit calibrate: one RUNS.jsonl file, not also '%s'\n", argv[i]);
            return CAL_BAD_INPUT;
        }
    }
    if (runs_path == NULL)
        return cal_usage(stderr, CAL_BAD_INPUT);
    char *runs = NULL;
    size_t len = 0;
    int code = read_file(runs_path, "measured runs", &runs, &len);
    if (code >= 0)
        return code;
    gpufit_error err = GPUFIT_ERROR_INIT;
    size_t need = 0;
    char *prof = NULL;
    int32_t st = gpufit_calibrate(runs, len, NULL, 0, &need, &err);
    if (st == GPUFIT_E_BUFFER_TOO_SMALL && (prof = malloc(need + 1)) != NULL)
        st = gpufit_calibrate(runs, len, prof, need + 1, NULL, &err);
    free(runs);
    if (st != GPUFIT_OK) {
        if (err.offset != UINT64_MAX && strstr(err.message, "byte") == NULL)
            fprintf(stderr, "gpufit calibrate: %s: at byte %llu: %s\n", runs_path,
                    (unsigned long long)err.offset, err.message);
        else
            fprintf(stderr, "gpufit calibrate: %s: %s\n", runs_path, err.message);
        free(prof);
        return st == GPUFIT_E_NOMEM || st == GPUFIT_E_INTERNAL ? CAL_INTERNAL : CAL_BAD_INPUT;
    }
    if (prof == NULL) {
        fprintf(stderr, "gpufit calibrate: out of memory\n");
        return CAL_INTERNAL;
    }
    if (out_path == NULL) {
        fputs(prof, stdout);
    } else {
        FILE *f = fopen(out_path, "wb");
        if (f == NULL || fputs(prof, f) == EOF || fclose(f) != 0) {
            fprintf(stderr, "gpufit calibrate: cannot write '%s'\n", out_path);
            free(prof);
            return CAL_IO;
        }
        fprintf(stderr, "gpufit calibrate: profile written to %s\n", out_path);
    }
    free(prof);
    return CAL_OK;
}
