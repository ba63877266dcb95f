/* SPDX-License-Identifier: MIT */
/* libFuzzer target: random parameter values through the typed setters, then gpufit_evaluate()
 * (issue 7). Built and run by `make fuzz` / `make fuzz-replay` (corpus
 * tests/fuzz/corpus/evaluate/).
 *
 * Input layout (every byte string is valid):
 *   byte 0       starting model: preset (byte mod (presets + 1)); the last value = a custom
 *                model with every parameter at its default
 *   byte 1       starting job: one of the job templates below (byte mod count)
 *   then records of 10 bytes: [parameter index][operation][8-byte little-endian value]
 *     parameter index: position in the parameter table (mod its length);
 *     operation (mod 8): 0 set_int with an interesting value (bounds, bounds +- 1, 0, -1,
 *     powers of two: value byte 0 picks it), 1 set_int with the raw 64-bit value, 2 set_float
 *     with the raw bits, 3 set_float with an interesting value (NaN, +-inf, bounds, fractions),
 *     4 set a named value (gpufit_param_value_at), 5 set_int with a small signed value,
 *     6 the setter of the other domain (must be GPUFIT_E_UNKNOWN_PARAM), 7 set_float with a
 *     small value scaled by a power of two. On a list parameter (GPUFIT_TYPE_LIST) operations
 *     4 and 5 call gpufit_job_set_list instead: value byte 0 picks the count (0..17), the
 *     other 7 bytes the elements (see list_value); every other operation must be refused.
 *
 * Checks:
 * - each setter answers exactly as the parameter table says: GPUFIT_OK if and only if the value
 *   is finite, integral where needed, within [min, max] and a named value of an enum (a GPU id
 *   in the catalogue); otherwise GPUFIT_E_INVALID_ARG (GPUFIT_E_NOT_FOUND for an unknown GPU
 *   id) with err.param = the id, a message naming the parameter, and the handle unchanged;
 *   an accepted value reads back; the int and float setters refuse every list, and
 *   gpufit_job_set_list accepts a list if and only if it has at most GPUFIT_LIST_MAX finite
 *   entries in [min_float, max_float] (device_gpus: catalogue ids; tensor_split: a sum
 *   above 0), and it reads back bit for bit;
 * - gpufit_evaluate() is either OK or a precise error (never internal, never a crash), and an
 *   OK result satisfies every invariant of fuzz_check.h (components add up, levels nested,
 *   verdict, summary, valid JSON report);
 * - deep copies of the handles evaluate to the same numbers. */
#include "fuzz_check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "job_templates.h"

typedef struct pinfo {
    gpufit_param_info info;
    int64_t values[128]; /* named values (enum and bool) */
    uint32_t n_values;
} pinfo;

static pinfo params[FZ_MAX_PARAMS];
static size_t n_params;
static uint32_t n_presets;
static uint32_t n_gpus;

static void init_tables(void)
{
    if (n_params > 0)
        return;
    for (int32_t p = gpufit_param_next(0); p != 0 && n_params < FZ_MAX_PARAMS;
         p = gpufit_param_next(p)) {
        pinfo *pi = &params[n_params++];
        pi->info.struct_size = sizeof pi->info;
        FZ_CHECK(gpufit_param_get_info(p, &pi->info) == GPUFIT_OK);
        int64_t v = 0;
        while (pi->n_values < 128 && p != GPUFIT_JOB_GPU &&
               gpufit_param_value_at(p, pi->n_values, &v, NULL) == GPUFIT_OK)
            pi->values[pi->n_values++] = v;
    }
    gpufit_preset_info pr;
    memset(&pr, 0, sizeof pr);
    pr.struct_size = sizeof pr;
    while (gpufit_preset_at(n_presets, &pr) == GPUFIT_OK)
        n_presets++;
    gpufit_gpu_info g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    while (gpufit_gpu_at(n_gpus, &g) == GPUFIT_OK)
        n_gpus++;
}

/* 1 when id is a catalogue GPU id. */
static int is_gpu_id(int64_t id)
{
    gpufit_gpu_info g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    for (uint32_t i = 0; gpufit_gpu_at(i, &g) == GPUFIT_OK; i++, g.struct_size = sizeof g)
        if (g.id == id)
            return 1;
    return 0;
}

/* What the table says set_int(v) must answer. */
static int32_t expect_int(const pinfo *pi, int64_t v)
{
    const gpufit_param_info *in = &pi->info;
    if (in->type == GPUFIT_TYPE_LIST) /* min_int..max_int is a list's count, not a value */
        return GPUFIT_E_INVALID_ARG;
    if (in->type == GPUFIT_TYPE_FLOAT || v < in->min_int || v > in->max_int)
        return GPUFIT_E_INVALID_ARG;
    if (in->type == GPUFIT_TYPE_ENUM) {
        for (uint32_t i = 0; i < pi->n_values; i++)
            if (pi->values[i] == v)
                return GPUFIT_OK;
        return GPUFIT_E_INVALID_ARG;
    }
    if (in->id == GPUFIT_JOB_GPU && v >= 0)
        return is_gpu_id(v) ? GPUFIT_OK : GPUFIT_E_NOT_FOUND;
    return GPUFIT_OK;
}

/* What the table says set_float(d) must answer. */
static int32_t expect_float(const pinfo *pi, double d)
{
    const gpufit_param_info *in = &pi->info;
    if (!isfinite(d) || in->type == GPUFIT_TYPE_LIST)
        return GPUFIT_E_INVALID_ARG;
    /* a positive capacity that rounds to 0 bytes would read as "unset" (docs/inputs.md) */
    if (in->id == GPUFIT_JOB_GPU_MEMORY_GIB && d > 0.0 && llround(d * 1073741824.0) == 0)
        return GPUFIT_E_INVALID_ARG;
    if (in->type == GPUFIT_TYPE_FLOAT)
        return d < in->min_float || d > in->max_float ? GPUFIT_E_INVALID_ARG : GPUFIT_OK;
    if (d != floor(d) || fabs(d) > 9.0e15)
        return GPUFIT_E_INVALID_ARG;
    return expect_int(pi, (int64_t)d);
}

static int64_t interesting_int(const gpufit_param_info *in, uint8_t k)
{
    switch (k % 16) {
    case 0:
        return in->min_int;
    case 1:
        return in->max_int;
    case 2:
        return in->min_int - 1;
    case 3:
        return in->max_int == INT64_MAX ? INT64_MAX : in->max_int + 1;
    case 4:
        return in->default_int;
    case 5:
        return 0;
    case 6:
        return -1;
    case 7:
        return 1;
    case 8:
        return INT64_MIN;
    case 9:
        return INT64_MAX;
    case 10:
        return in->max_int / 2;
    case 11:
        return in->min_int + 1;
    case 12:
        return in->max_int - 1;
    default:
        return (int64_t)1 << (k % 63);
    }
}

static double interesting_float(const gpufit_param_info *in, uint8_t k)
{
    switch (k % 16) {
    case 0:
        return NAN;
    case 1:
        return INFINITY;
    case 2:
        return -INFINITY;
    case 3:
        return in->min_float;
    case 4:
        return in->max_float;
    case 5:
        return nextafter(in->min_float, -INFINITY);
    case 6:
        return nextafter(in->max_float, INFINITY);
    case 7:
        return 0.5;
    case 8:
        return -0.0;
    case 9:
        return 1e-300;
    case 10:
        return in->default_float;
    case 11:
        return 0.25;
    case 12:
        return 1e300;
    case 13:
        return -1.0;
    case 14:
        return 4.0;
    default:
        return (in->min_float + in->max_float) / 2.0;
    }
}

/* Element i of a fuzzed list from byte b: interesting values of the element range, catalogue
 * ids (device_gpus), near misses (fractions, unknown ids, just outside the range). */
static double list_value(const gpufit_param_info *in, uint8_t b, uint32_t i)
{
    if (in->id == GPUFIT_JOB_DEVICE_GPUS && b < 160) { /* mostly catalogue GPUs */
        gpufit_gpu_info g;
        memset(&g, 0, sizeof g);
        g.struct_size = sizeof g;
        if (n_gpus > 0 && gpufit_gpu_at((b + i) % n_gpus, &g) == GPUFIT_OK)
            return (double)g.id;
    }
    switch (b % 16) {
    case 0:
        return 0.0;
    case 1:
        return 1.0;
    case 2:
        return 3.0;
    case 3:
        return 0.5;
    case 4:
        return in->max_float;
    case 5:
        return nextafter(in->max_float, INFINITY);
    case 6:
        return nextafter(in->min_float, -INFINITY);
    case 7:
        return -0.0;
    case 8:
        return NAN;
    case 9:
        return b & 0x10 ? INFINITY : -INFINITY;
    case 10:
        return (double)(b >> 4) + 2.0;
    case 11:
        return 1e-300;
    case 12:
        return -1.0;
    case 13:
        return ldexp((double)(b >> 4), (int)i);
    default:
        return (double)(b >> 4) * 0.25;
    }
}

/* What gpufit_job_set_list must answer for v[0..n). */
static int32_t expect_list(const gpufit_param_info *in, const double *v, uint32_t n)
{
    if (n > GPUFIT_LIST_MAX)
        return GPUFIT_E_INVALID_ARG;
    double sum = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        if (!isfinite(v[i]) || v[i] < in->min_float || v[i] > in->max_float)
            return GPUFIT_E_INVALID_ARG;
        if (in->id == GPUFIT_JOB_DEVICE_GPUS && (v[i] != floor(v[i]) || !is_gpu_id((int64_t)v[i])))
            return GPUFIT_E_NOT_FOUND;
        sum += v[i];
    }
    if (in->id == GPUFIT_JOB_TENSOR_SPLIT && n > 0 && !(sum > 0.0))
        return GPUFIT_E_INVALID_ARG;
    return GPUFIT_OK;
}

/* gpufit_job_set_list with a fuzzed list, and its oracle. */
static void
apply_list_record(gpufit_model *m, gpufit_job *j, const gpufit_param_info *in, const uint8_t *rec)
{
    uint32_t n = rec[2] % (GPUFIT_LIST_MAX + 2); /* 0..17 */
    double v[GPUFIT_LIST_MAX + 1];
    for (uint32_t i = 0; i < n; i++)
        v[i] = list_value(in, (uint8_t)(rec[3 + i % 7] + 37 * (i / 7)), i);
    int32_t want = expect_list(in, v, n);
    uint64_t before[FZ_MAX_PARAMS], after[FZ_MAX_PARAMS];
    size_t nb = want != GPUFIT_OK ? fz_snapshot(m, j, before) : 0;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st = gpufit_job_set_list(j, in->id, v, n, &err);
    if (st != want)
        fprintf(stderr, "%s: set_list of %u entries: status %d, table says %d (%s)\n", in->name, n,
                st, want, err.message);
    FZ_CHECK(st == want);
    fz_check_error(st, &err);
    if (st != GPUFIT_OK) {
        FZ_CHECK(err.param == in->id);
        FZ_CHECK(strstr(err.message, in->name) != NULL);
        FZ_CHECK(err.offset == UINT64_MAX);
        size_t na = fz_snapshot(m, j, after);
        FZ_CHECK(na == nb && memcmp(before, after, nb * sizeof before[0]) == 0);
        return;
    }
    double back[GPUFIT_LIST_MAX];
    uint32_t nback = UINT32_MAX;
    FZ_CHECK(gpufit_job_get_list(j, in->id, back, GPUFIT_LIST_MAX, &nback, NULL) == GPUFIT_OK);
    FZ_CHECK(nback == n && memcmp(back, v, n * sizeof v[0]) == 0);
    if (n > 0) { /* one entry short: BUFFER_TOO_SMALL, the length still given */
        nback = 0;
        FZ_CHECK(gpufit_job_get_list(j, in->id, back, n - 1, &nback, NULL) ==
                 GPUFIT_E_BUFFER_TOO_SMALL);
        FZ_CHECK(nback == n);
    }
}

/* Reads one parameter's raw bits. */
static uint64_t read_bits(const gpufit_model *m, const gpufit_job *j, const gpufit_param_info *in)
{
    int model = in->domain == GPUFIT_DOMAIN_MODEL;
    if (in->type == GPUFIT_TYPE_FLOAT) {
        double d = 0.0;
        FZ_CHECK((model ? gpufit_model_get_float(m, in->id, &d, NULL)
                        : gpufit_job_get_float(j, in->id, &d, NULL)) == GPUFIT_OK);
        uint64_t b;
        memcpy(&b, &d, sizeof b);
        return b;
    }
    int64_t v = 0;
    FZ_CHECK((model ? gpufit_model_get_int(m, in->id, &v, NULL)
                    : gpufit_job_get_int(j, in->id, &v, NULL)) == GPUFIT_OK);
    return (uint64_t)v;
}

/* One setter call and its oracle. */
static void apply_record(gpufit_model *m, gpufit_job *j, const uint8_t *rec)
{
    const pinfo *pi = &params[rec[0] % n_params];
    const gpufit_param_info *in = &pi->info;
    int model = in->domain == GPUFIT_DOMAIN_MODEL;
    uint8_t op = rec[1] % 8;
    if (in->type == GPUFIT_TYPE_LIST && (op == 4 || op == 5)) {
        apply_list_record(m, j, in, rec);
        return;
    }
    uint64_t raw = 0;
    for (int i = 7; i >= 0; i--)
        raw = raw << 8 | rec[2 + i];
    int64_t iv = 0;
    double dv = 0.0;
    int use_float = 0;
    switch (op) {
    case 0:
        iv = interesting_int(in, rec[2]);
        break;
    case 1:
        memcpy(&iv, &raw, sizeof iv);
        break;
    case 2:
        memcpy(&dv, &raw, sizeof dv);
        use_float = 1;
        break;
    case 3:
        dv = interesting_float(in, rec[2]);
        use_float = 1;
        break;
    case 4:
        if (pi->n_values > 0)
            iv = pi->values[rec[2] % pi->n_values];
        else if (in->id == GPUFIT_JOB_GPU) {
            gpufit_gpu_info g;
            memset(&g, 0, sizeof g);
            g.struct_size = sizeof g;
            iv = gpufit_gpu_at(rec[2], &g) == GPUFIT_OK ? g.id : rec[2];
        } else
            iv = (int8_t)rec[2];
        break;
    case 5:
        iv = (int8_t)rec[2] * (int64_t)(1 + rec[3] % 4);
        break;
    case 6: {
        gpufit_error err = GPUFIT_ERROR_INIT;
        int32_t st = model ? gpufit_job_set_int(j, in->id, 1, &err)
                           : gpufit_model_set_int(m, in->id, 1, &err);
        FZ_CHECK(st == GPUFIT_E_UNKNOWN_PARAM);
        fz_check_error(st, &err);
        FZ_CHECK(err.param == in->id);
        return;
    }
    default:
        dv = ldexp((double)(int8_t)rec[2], (int)(rec[3] % 64) - 16);
        use_float = 1;
        break;
    }
    uint64_t before[FZ_MAX_PARAMS], after[FZ_MAX_PARAMS];
    int32_t want = use_float ? expect_float(pi, dv) : expect_int(pi, iv);
    size_t nb = want != GPUFIT_OK ? fz_snapshot(m, j, before) : 0; /* for atomicity */
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t st;
    if (use_float)
        st = model ? gpufit_model_set_float(m, in->id, dv, &err)
                   : gpufit_job_set_float(j, in->id, dv, &err);
    else
        st = model ? gpufit_model_set_int(m, in->id, iv, &err)
                   : gpufit_job_set_int(j, in->id, iv, &err);
    if (st != want)
        fprintf(stderr, "%s: set %s %lld / %g: status %d, table says %d (%s)\n", in->name,
                use_float ? "float" : "int", (long long)iv, dv, st, want, err.message);
    FZ_CHECK(st == want);
    fz_check_error(st, &err);
    if (st != GPUFIT_OK) {
        FZ_CHECK(err.param == in->id);
        FZ_CHECK(strstr(err.message, in->name) != NULL);
        size_t na = fz_snapshot(m, j, after);
        FZ_CHECK(na == nb && memcmp(before, after, nb * sizeof before[0]) == 0);
        return;
    }
    uint64_t bits = read_bits(m, j, in);
    if (in->type == GPUFIT_TYPE_FLOAT) {
        double back;
        memcpy(&back, &bits, sizeof back);
        FZ_CHECK(back == dv);
    } else {
        FZ_CHECK((int64_t)bits == (use_float ? (int64_t)dv : iv));
    }
}

/* GPUFIT_FUZZ_PRINT=1 build-fuzz/fuzz_evaluate FILE prints the scenario of FILE as a spec of
 * every parameter that differs from its default, to turn a finding into a
 * `gpufit estimate --spec "..."` reproducer. */
static void print_spec(const gpufit_model *m, const gpufit_job *j)
{
    fprintf(stderr, "spec (from %s):", gpufit_model_name(m));
    for (size_t i = 0; i < n_params; i++) {
        const gpufit_param_info *in = &params[i].info;
        if (in->type == GPUFIT_TYPE_LIST) {
            double v[GPUFIT_LIST_MAX];
            uint32_t n = 0;
            FZ_CHECK(gpufit_job_get_list(j, in->id, v, GPUFIT_LIST_MAX, &n, NULL) == GPUFIT_OK);
            for (uint32_t k = 0; k < n; k++) {
                if (k == 0)
                    fprintf(stderr, " %s=", in->name);
                fprintf(stderr, "%s%.17g", k == 0 ? "" : ",", v[k]);
            }
            continue;
        }
        uint64_t b = read_bits(m, j, in);
        if (in->type == GPUFIT_TYPE_FLOAT) {
            double d;
            memcpy(&d, &b, sizeof d);
            if (d != in->default_float)
                fprintf(stderr, " %s=%.17g", in->name, d);
            continue;
        }
        int64_t v = (int64_t)b;
        if (v == in->default_int)
            continue;
        const char *name = gpufit_param_value_name(in->id, v);
        if (in->id == GPUFIT_JOB_GPU && v < 0)
            fprintf(stderr, " gpu=none");
        else if (name != NULL)
            fprintf(stderr, " %s=%s", in->name, name);
        else
            fprintf(stderr, " %s=%lld", in->name, (long long)v);
    }
    fprintf(stderr, "\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_tables();
    if (size < 2)
        return 0;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    uint32_t pick = data[0] % (n_presets + 1);
    if (pick < n_presets) {
        gpufit_preset_info pr;
        memset(&pr, 0, sizeof pr);
        pr.struct_size = sizeof pr;
        FZ_CHECK(gpufit_preset_at(pick, &pr) == GPUFIT_OK);
        FZ_CHECK(gpufit_model_from_preset(&m, pr.name, NULL) == GPUFIT_OK);
    } else {
        FZ_CHECK(gpufit_model_new(&m, NULL) == GPUFIT_OK);
    }
    FZ_CHECK(gpufit_job_new(&j, NULL) == GPUFIT_OK);
    FZ_CHECK(gpufit_apply_spec(NULL, j, job_templates[data[1] % N_TEMPLATES], NULL) == GPUFIT_OK);
    for (size_t off = 2; off + 10 <= size; off += 10)
        apply_record(m, j, data + off);
    if (getenv("GPUFIT_FUZZ_PRINT") != NULL)
        print_spec(m, j);

    gpufit_result *r = NULL;
    int32_t st = fz_evaluate(m, j, &r);
    /* deep copies are independent and evaluate the same */
    gpufit_model *mc = NULL;
    gpufit_job *jc = NULL;
    FZ_CHECK(gpufit_model_copy(&mc, m, NULL) == GPUFIT_OK);
    FZ_CHECK(gpufit_job_copy(&jc, j, NULL) == GPUFIT_OK);
    FZ_CHECK(strcmp(gpufit_model_name(mc), gpufit_model_name(m)) == 0);
    gpufit_model_free(m);
    gpufit_job_free(j);
    gpufit_result *rc = NULL;
    int32_t stc = fz_evaluate(mc, jc, &rc);
    FZ_CHECK(st == stc);
    if (st == GPUFIT_OK)
        fz_check_same(r, rc);
    gpufit_result_free(r);
    gpufit_result_free(rc);
    gpufit_model_free(mc);
    gpufit_job_free(jc);
    return 0;
}
