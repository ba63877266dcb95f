/* SPDX-License-Identifier: MIT */
/* The training run of the library's profile-guided build (Makefile, PGO; docs/architecture.md,
 * "Build"): linked against the instrumented library, it makes the calls that
 * the library's users make, in proportions like theirs, so that gcc learns which branches are
 * taken and which code is hot. Deterministic (a fixed pseudo-random sequence): the same source
 * gives the same profile, and so the same library, on any machine.
 *
 * Scenario i is a preset and one of fuzz_evaluate's job templates (tests/fuzz/job_templates.h;
 * never the bench's jobs, tests/bench/scenarios.h), with half of them with 1-3 parameters of the
 * table changed to values the table names. Each is read the way a scheduler reads a submitted job
 * (new handles, the scenario as JSON, gpufit_apply_json, gpufit_evaluate_summary, free) and then
 * evaluated again as a planner or a notebook does (the summary a few times, the full report and its
 * JSON every fourth, a small gpufit_sweep every 16th, gpufit_recommend every 64th, gpufit_plan on
 * a GPU every 128th). Invalid combinations are kept: their error paths are part of the workload.
 *
 *   pgo_train [N]      N scenarios (default 20,000); prints one line of counts */
#include "gpufit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_templates.h"
#include "scenario_tables.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull; /* xorshift64 */
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char json[4096];
static char report[1 << 20];

/* Appends `"key": value` to json at *len (value typed by the parameter table: numbers as
 * numbers, booleans as true/false, the rest as strings). 1 if it does not fit. */
static int member(size_t *len, const char *key, const char *value)
{
    int32_t id = 0;
    gpufit_param_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    int type =
        gpufit_param_by_name(key, &id) == GPUFIT_OK && gpufit_param_get_info(id, &info) == GPUFIT_OK
            ? info.type
            : 0;
    char *end = NULL;
    (void)strtod(value, &end);
    int number =
        (type == GPUFIT_TYPE_INT || type == GPUFIT_TYPE_FLOAT) && end != value && *end == '\0';
    int n;
    if (type == GPUFIT_TYPE_BOOL)
        n = snprintf(json + *len, sizeof json - *len, "%s\"%s\": %s", *len > 1 ? ", " : "", key,
                     strcmp(value, "0") != 0 && strcmp(value, "false") != 0 ? "true" : "false");
    else
        n = snprintf(json + *len, sizeof json - *len, number ? "%s\"%s\": %s" : "%s\"%s\": \"%s\"",
                     *len > 1 ? ", " : "", key, value);
    if (n < 0 || (size_t)n >= sizeof json - *len)
        return 1;
    *len += (size_t)n;
    return 0;
}

/* The scenario as JSON: the preset, the template's key=value tokens, then `changes` random
 * parameters (0 on success). */
static int
scenario_json(const char *preset, const char *tmpl, size_t n_params, int changes, size_t *len)
{
    static const int64_t ints[] = {0,  1,   2,   3,    4,    8,    16,    32,
                                   64, 128, 512, 1024, 4096, 8192, 32768, -1};
    *len = 1;
    json[0] = '{';
    if (member(len, "model", preset))
        return 1;
    char tok[256];
    for (const char *s = tmpl; *s != '\0';) {
        size_t n = strcspn(s, " ");
        if (n > 0 && n < sizeof tok) {
            memcpy(tok, s, n);
            tok[n] = '\0';
            char *eq = strchr(tok, '=');
            if (eq != NULL) {
                *eq = '\0';
                if (member(len, tok, eq + 1))
                    return 1;
            }
        }
        s += n + (s[n] == ' ');
    }
    for (int k = 0; k < changes; k++) {
        const param *pi = &params[next() % n_params];
        char v[64];
        if (pi->info.type == GPUFIT_TYPE_LIST)
            continue;
        if (pi->info.type == GPUFIT_TYPE_FLOAT) {
            double d = pi->info.min_float +
                       (pi->info.max_float - pi->info.min_float) * (double)(next() % 1000) / 1000.0;
            snprintf(v, sizeof v, "%.17g", isfinite(d) ? d : 0.5);
        } else if (pi->n_values > 0) {
            int64_t x = pi->values[next() % pi->n_values];
            const char *name = gpufit_param_value_name(pi->info.id, x);
            snprintf(v, sizeof v, "%s", name != NULL ? name : "0");
        } else {
            int64_t x = ints[next() % (sizeof ints / sizeof ints[0])];
            x = x < pi->info.min_int   ? pi->info.min_int
                : x > pi->info.max_int ? pi->info.max_int
                                       : x;
            snprintf(v, sizeof v, "%lld", (long long)x);
        }
        if (member(len, pi->info.name, v))
            return 1;
    }
    if (*len + 2 > sizeof json)
        return 1;
    json[(*len)++] = '}';
    json[*len] = '\0';
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    size_t n_params = 0;
    uint32_t n_presets = 0;
    load_scenario_tables(&n_params, &n_presets);
    int32_t mb = 0, seq = 0;
    if (n_params == 0 || n_presets == 0 || gpufit_param_by_name("micro_batch", &mb) != GPUFIT_OK ||
        gpufit_param_by_name("seq_len", &seq) != GPUFIT_OK) {
        fprintf(stderr, "pgo_train: no parameters, presets, micro_batch or seq_len\n");
        return 1;
    }
    const int32_t axes[2] = {mb, seq};
    const uint32_t counts[2] = {8, 4};
    const double values[12] = {1, 2, 3, 4, 6, 8, 12, 16, 1024, 2048, 4096, 8192};
    static gpufit_summary grid[32];
    static int32_t grid_status[32];
    long read = 0, evaluated = 0, reports = 0;
    uint64_t sink = 0;
    for (long i = 0; i < n; i++) {
        const char *preset = presets[next() % n_presets];
        const char *tmpl = job_templates[next() % N_TEMPLATES];
        size_t len = 0;
        int changes = next() % 2 == 0 ? 0 : 1 + (int)(next() % 3);
        if (scenario_json(preset, tmpl, n_params, changes, &len))
            continue;
        gpufit_model *m = NULL;
        gpufit_job *j = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        if (gpufit_model_new(&m, NULL) != GPUFIT_OK || gpufit_job_new(&j, NULL) != GPUFIT_OK) {
            fprintf(stderr, "pgo_train: out of memory\n");
            return 1;
        }
        if (gpufit_apply_json(m, j, json, len, &err) == GPUFIT_OK) {
            read++;
            uint64_t cap = 0;
            for (int k = 0; k < 4; k++) {
                gpufit_summary sum;
                memset(&sum, 0, sizeof sum);
                sum.struct_size = sizeof sum;
                if (gpufit_evaluate_summary(m, j, &sum, &err) != GPUFIT_OK)
                    break;
                evaluated++;
                sink += sum.peak_bytes;
                cap = sum.capacity_bytes;
            }
            if (i % 4 == 0) {
                gpufit_result *r = NULL;
                size_t out = 0;
                if (gpufit_evaluate(&r, m, j, &err) == GPUFIT_OK &&
                    gpufit_result_to_json(r, report, sizeof report, &out, NULL) == GPUFIT_OK)
                    reports++;
                gpufit_result_free(r);
            }
            if (i % 16 == 0) {
                grid[0].struct_size = sizeof grid[0];
                if (gpufit_sweep(m, j, axes, counts, values, 2, grid, grid_status, 32, NULL) ==
                    GPUFIT_OK)
                    sink += grid[31].peak_bytes;
            }
            gpufit_list *l = NULL;
            if (i % 64 == 0 && gpufit_recommend(&l, m, j, NULL, 0, 8, NULL) == GPUFIT_OK)
                sink += gpufit_list_count(l);
            gpufit_list_free(l);
            l = NULL;
            if (i % 128 == 0 && cap > 0 && gpufit_plan(&l, m, j, 8, 2, 4, NULL) == GPUFIT_OK)
                sink += gpufit_list_count(l);
            gpufit_list_free(l);
        }
        gpufit_model_free(m);
        gpufit_job_free(j);
    }
    printf("pgo_train: %ld scenarios, %ld read, %ld summaries, %ld reports\n", n, read, evaluated,
           reports);
    return sink == 0 && evaluated > 0;
}
