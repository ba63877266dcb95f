/* SPDX-License-Identifier: MIT */
/* Calibration to the user's own stack (docs/calibration.md): measured runs (docs/runs.md) fit
 * the stack constants they constrain, and a profile carries the fitted values into later
 * estimates. The core parses buffers only (no I/O); the command and Python read the files.
 *
 * Rules, one per constant, each a median over the runs that constrain it, the range their
 * minimum and maximum:
 *   allocator slack    a peak_reserved_bytes run: (measured - predicted peak_allocated) /
 *                      the role's dynamic bytes (what the slack is a fraction of);
 *   CUDA context       a device_used_bytes run of a non-server job: measured - predicted
 *                      peak_reserved - NCCL buffers (at their point value);
 *   server non-torch   a kv_capacity run of vLLM >= 0.6.4: the point value + (predicted -
 *                      measured KV budget) (the budget is what the non-torch bytes leave).
 * A run measured at other levels constrains none of them and is counted as unused. */
#include "eval.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAL_RUNS_MAX 4096 /* runs one calibration reads */

static const char *const prof_names[] = {"cuda_context", "nccl_per_comm", "server_nontorch",
                                         "allocator_slack", "vllm_cuda_graph"};
enum { PROF_N = 5 };

/* ---- profiles ------------------------------------------------------------------------ */

static int32_t number_of(const gpufit__json_token *t, double *out)
{
    char buf[GPUFIT__JSON_NUMBER_MAX + 1];
    if (t->type != GPUFIT__JSON_NUMBER || t->len > GPUFIT__JSON_NUMBER_MAX)
        return 1;
    memcpy(buf, t->text, t->len);
    buf[t->len] = '\0';
    char *end = NULL;
    *out = strtod(buf, &end);
    return end != buf + t->len || !(*out >= 0.0) || *out > 1.8e19;
}

int32_t gpufit_job_apply_profile(gpufit_job *j, const char *json, size_t len, gpufit_error *err)
{
    if (j == NULL || (json == NULL && len > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "job or json is NULL");
    gpufit__json p;
    gpufit__json_token k, v;
    int32_t st = gpufit__json_init(&p, json, len, err);
    if (st != GPUFIT_OK)
        return st;
    if ((st = gpufit__json_next(&p, &v, err)) != GPUFIT_OK)
        return st;
    if (v.type != GPUFIT__JSON_OBJECT)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, v.offset,
                            "a profile is a JSON object (gpufit calibrate writes one)");
    gpufit__profile prof;
    memset(&prof, 0, sizeof prof);
    int version = 0;
    for (;;) {
        int32_t m = gpufit__json_member(&p, &k, &v, err);
        if (m < 0)
            return m;
        if (m == 0)
            break;
        if (gpufit__json_equals(&k, "gpufit_profile")) {
            double x;
            if (number_of(&v, &x) || x != 1.0)
                return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, v.offset,
                                    "gpufit_profile: version 1 is the one this library reads");
            version = 1;
        } else if (gpufit__json_equals(&k, "constants") && v.type == GPUFIT__JSON_OBJECT) {
            gpufit__json_token ck, cv;
            for (;;) {
                m = gpufit__json_member(&p, &ck, &cv, err);
                if (m < 0)
                    return m;
                if (m == 0)
                    break;
                int id = -1;
                for (int i = 0; i < PROF_N; i++)
                    if (gpufit__json_equals(&ck, prof_names[i]))
                        id = i;
                if (id < 0 || cv.type != GPUFIT__JSON_OBJECT)
                    return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, ck.offset,
                                        "constants.%.*s: not a constant a profile sets "
                                        "(cuda_context, nccl_per_comm, server_nontorch, "
                                        "allocator_slack, vllm_cuda_graph), or not an object",
                                        (int)(ck.len > 40 ? 40 : ck.len), ck.text);
                if (prof.set & (1u << id))
                    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, ck.offset,
                                        "constants.%s appears twice", prof_names[id]);
                double val[3] = {-1.0, -1.0, -1.0}, runs = -1.0;
                gpufit__json_token fk, fv;
                for (;;) {
                    m = gpufit__json_member(&p, &fk, &fv, err);
                    if (m < 0)
                        return m;
                    if (m == 0)
                        break;
                    int f = gpufit__json_equals(&fk, "point") ? 0
                            : gpufit__json_equals(&fk, "low") ? 1
                            : gpufit__json_equals(&fk, "high") ? 2
                                                                : -1;
                    if (f < 0 && gpufit__json_equals(&fk, "runs")) {
                        if (number_of(&fv, &runs) || runs > 4e9 || runs != (double)(uint32_t)runs)
                            return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, fv.offset,
                                                "constants.%s.runs: a count of runs is needed",
                                                prof_names[id]);
                        continue;
                    }
                    if (f < 0) { /* comments: read, not used */
                        if ((st = gpufit__json_skip(&p, &fv, err)) != GPUFIT_OK)
                            return st;
                        continue;
                    }
                    if (number_of(&fv, &val[f]))
                        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, fv.offset,
                                            "constants.%s: a non-negative number is needed",
                                            prof_names[id]);
                }
                if (val[0] < 0.0 || val[1] < 0.0 || val[2] < 0.0 || val[1] > val[0] ||
                    val[0] > val[2] || (id == GPUFIT__PROF_SLACK && val[2] > 4.0))
                    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, ck.offset,
                                        "constants.%s needs point, low and high with low <= "
                                        "point <= high%s",
                                        prof_names[id],
                                        id == GPUFIT__PROF_SLACK ? " (a fraction, at most 4)"
                                                                 : " (bytes)");
                prof.set |= 1u << id;
                prof.runs[id] = runs < 0.0 ? UINT32_MAX : (uint32_t)runs;
                for (int f = 0; f < 3; f++) {
                    if (id == GPUFIT__PROF_SLACK)
                        prof.slack[f] = val[f];
                    else
                        prof.bytes[id][f] = (uint64_t)(val[f] + 0.5);
                }
            }
        } else if (gpufit__json_equals(&k, "runs") || gpufit__json_equals(&k, "runs_used")) {
            if ((st = gpufit__json_skip(&p, &v, err)) != GPUFIT_OK) /* informational */
                return st;
        } else {
            return gpufit__fail(err, GPUFIT_E_UNKNOWN_PARAM, 0, k.offset,
                                "unknown profile member '%.*s' (gpufit_profile, runs, "
                                "runs_used, constants)",
                                (int)(k.len > 40 ? 40 : k.len), k.text);
        }
    }
    if ((st = gpufit__json_next(&p, &v, err)) != GPUFIT_OK)
        return st;
    if (version != 1)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, 0,
                            "not a gpufit profile: \"gpufit_profile\": 1 is missing");
    j->profile = prof; /* all or nothing */
    gpufit__job_refresh(j);
    gpufit__ok(err);
    return GPUFIT_OK;
}

/* ---- fitting ------------------------------------------------------------------------- */

typedef struct cal_set {
    double v[CAL_RUNS_MAX];
    uint32_t n;
} cal_set;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void add(cal_set *c, double x)
{
    if (c->n < CAL_RUNS_MAX)
        c->v[c->n++] = x;
}

/* The role a measurement names: all / worst = the fullest; else by name (NULL if absent). */
static const gpufit__role *role_named(const struct gpufit_result *r, const char *name)
{
    if (strcmp(name, "all") == 0 || strcmp(name, "worst") == 0)
        return &r->roles[r->worst];
    for (uint32_t i = 0; i < r->n_roles; i++)
        if (strcmp(r->roles[i].name, name) == 0)
            return &r->roles[i];
    return NULL;
}

/* One measurement of a run: what it says about the constants. */
static void use_measurement(const struct gpufit_result *r, const gpufit__plan *p,
                            const char *level, const char *role, double bytes, cal_set *sets,
                            int *used)
{
    const gpufit__role *ro = role_named(r, role);
    if (ro == NULL)
        return;
    const uint64_t *m = ro->comp;
    int server = !p->training && p->util > 0.0;
    if (strcmp(level, "peak_reserved_bytes") == 0 && !server && p->frag > 0.0 &&
        m[GPUFIT_MEM_FRAGMENTATION] > 0) {
        double dynamic = (double)m[GPUFIT_MEM_FRAGMENTATION] / p->frag;
        add(&sets[GPUFIT__PROF_SLACK], (bytes - (double)ro->alloc) / dynamic);
        *used = 1;
    } else if (strcmp(level, "device_used_bytes") == 0 && !server) {
        add(&sets[GPUFIT__PROF_CTX],
            bytes - (double)ro->reserved - (double)m[GPUFIT_MEM_COMM_BUFFERS]);
        *used = 1;
    } else if (strcmp(level, "device_used_bytes") == 0 && server && p->graph_sizes > 0 &&
               ro->graph_unch[0] > 0 && ro->layers > 0) {
        /* vLLM's CUDA graphs on top of its budget (docs/memory/vllm.md): the device's rest
         * over the prediction, per layer and captured size */
        double units = (double)ro->layers * (double)p->graph_sizes;
        add(&sets[GPUFIT__PROF_GRAPH],
            (double)p->graph_per[0] + (bytes - (double)ro->used) / units);
        *used = 1;
    } else if (strcmp(level, "kv_capacity") == 0 && server &&
               p->kv_rule == GPUFIT__KV_VLLM_PROF) {
        double nt = (double)gpufit__stack[GPUFIT__STACK_SERVER_NONTORCH].point;
        add(&sets[GPUFIT__PROF_NONTORCH], nt + ((double)ro->kv_cap_bytes - bytes));
        *used = 1;
    }
}

/* Decodes a string token into buf (cap bytes); "" when it is not a string. */
static void str_of(const gpufit__json_token *t, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (t->type == GPUFIT__JSON_STRING)
        gpufit__json_decode(t, buf, cap, NULL, NULL);
}

/* Reads one measurement object (its '{' read) into level, role and bytes. */
static int32_t read_measurement(gpufit__json *p, char *level, char *role, double *bytes,
                                gpufit_error *err)
{
    gpufit__json_token k, v;
    level[0] = role[0] = '\0';
    *bytes = -1.0;
    for (;;) {
        int32_t m = gpufit__json_member(p, &k, &v, err);
        if (m < 0)
            return m;
        if (m == 0)
            return GPUFIT_OK;
        if (gpufit__json_equals(&k, "level"))
            str_of(&v, level, 48);
        else if (gpufit__json_equals(&k, "role"))
            str_of(&v, role, 32);
        else if (gpufit__json_equals(&k, "bytes") && number_of(&v, bytes) != 0)
            *bytes = -1.0; /* not a byte count: the measurement is not used */
        int32_t st = gpufit__json_skip(p, &v, err);
        if (st != GPUFIT_OK)
            return st;
    }
}

/* One run (a line): evaluates its scenario and adds what its measurements constrain. */
static int32_t one_run(const char *line, size_t len, uint64_t line_off, cal_set *sets, int *used,
                       gpufit_error *err)
{
    gpufit__json p;
    gpufit__json_token k, v;
    int32_t st = gpufit__json_init(&p, line, len, err);
    if (st == GPUFIT_OK)
        st = gpufit__json_next(&p, &v, err);
    if (st != GPUFIT_OK) {
        err->offset += line_off; /* err is the caller's local error: never NULL here */
        return st;
    }
    if (v.type != GPUFIT__JSON_OBJECT)
        return gpufit__fail(err, GPUFIT_E_PARSE, 0, line_off,
                            "a run is a JSON object per line (docs/runs.md)");
    const char *scen = NULL;
    size_t scen_len = 0;
    gpufit__json meas_at; /* the measurements array, parsed after the scenario */
    int have_meas = 0;
    for (;;) {
        int32_t m = gpufit__json_member(&p, &k, &v, err);
        if (m < 0) {
            err->offset += line_off;
            return m;
        }
        if (m == 0)
            break;
        if (gpufit__json_equals(&k, "scenario") && v.type == GPUFIT__JSON_OBJECT) {
            size_t from = v.offset;
            if ((st = gpufit__json_skip(&p, &v, err)) != GPUFIT_OK) {
                err->offset += line_off;
                return st;
            }
            scen = line + from;
            scen_len = p.pos - from;
            continue;
        }
        if (gpufit__json_equals(&k, "measurements") && v.type == GPUFIT__JSON_ARRAY) {
            meas_at = p;
            have_meas = 1;
        }
        if ((st = gpufit__json_skip(&p, &v, err)) != GPUFIT_OK)
            return st;
    }
    if (scen == NULL || !have_meas)
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, line_off,
                            "a run needs \"scenario\" and \"measurements\" (docs/runs.md)");
    gpufit_model *mdl = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    st = gpufit_model_new(&mdl, err);
    if (st == GPUFIT_OK)
        st = gpufit_job_new(&j, err);
    if (st == GPUFIT_OK)
        st = gpufit_apply_json(mdl, j, scen, scen_len, err);
    if (st == GPUFIT_OK)
        st = gpufit_evaluate(&r, mdl, j, err);
    if (st != GPUFIT_OK) {
        if (err->offset != UINT64_MAX)
            err->offset += line_off + (uint64_t)(scen - line);
    } else {
        gpufit__json_token t;
        for (;;) {
            st = gpufit__json_next(&meas_at, &t, err);
            if (st != GPUFIT_OK || t.type == GPUFIT__JSON_ARRAY_END)
                break;
            if (t.type != GPUFIT__JSON_OBJECT) {
                st = gpufit__json_skip(&meas_at, &t, err);
                if (st != GPUFIT_OK)
                    break;
                continue;
            }
            char level[48], role[32];
            double bytes;
            st = read_measurement(&meas_at, level, role, &bytes, err);
            if (st != GPUFIT_OK)
                break;
            if (bytes >= 0.0)
                use_measurement(r, &j->plan, level, role, bytes, sets, used);
        }
    }
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(mdl);
    return st;
}

int32_t gpufit_calibrate(const char *runs, size_t len, char *buf, size_t cap, size_t *len_out,
                         gpufit_error *err)
{
    if ((runs == NULL && len > 0) || (buf == NULL && cap > 0))
        return gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, UINT64_MAX, "runs or buf is NULL");
    cal_set *sets = calloc(PROF_N, sizeof *sets);
    if (sets == NULL)
        return gpufit__fail(err, GPUFIT_E_NOMEM, 0, UINT64_MAX, "out of memory");
    uint32_t n_runs = 0, n_used = 0;
    int32_t st = GPUFIT_OK;
    gpufit_error le = GPUFIT_ERROR_INIT; /* a run's error, its offset made file-relative */
    for (size_t at = 0; at < len && st == GPUFIT_OK;) {
        const char *nl = memchr(runs + at, '\n', len - at);
        size_t end = nl != NULL ? (size_t)(nl - runs) : len, b = at;
        while (b < end && (runs[b] == ' ' || runs[b] == '\t' || runs[b] == '\r'))
            b++;
        if (b < end) { /* a non-blank line */
            int used = 0;
            if (++n_runs > CAL_RUNS_MAX)
                st = gpufit__fail(err, GPUFIT_E_INVALID_ARG, 0, (uint64_t)at,
                                  "more than %d runs", CAL_RUNS_MAX);
            else if ((st = one_run(runs + at, end - at, (uint64_t)at, sets, &used, &le)) !=
                         GPUFIT_OK &&
                     err != NULL)
                gpufit__copy_out(err, &le, sizeof le, 0);
            n_used += (uint32_t)used;
        }
        at = end + 1;
    }
    /* the profile: every constant some run constrained */
    size_t n = 0;
    char *w = buf;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(w != NULL && n < cap ? w + n : NULL, w != NULL && n < cap ? cap - n : 0, \
                          __VA_ARGS__);                                                            \
        n += k_ > 0 ? (size_t)k_ : 0;                                                              \
    } while (0)
    if (st == GPUFIT_OK) {
        PUT("{\n  \"gpufit_profile\": 1,\n  \"runs\": %u,\n  \"runs_used\": %u,\n"
            "  \"constants\": {",
            n_runs, n_used);
        int first = 1;
        for (int id = 0; id < PROF_N; id++) {
            cal_set *c = &sets[id];
            if (c->n == 0)
                continue;
            qsort(c->v, c->n, sizeof c->v[0], cmp_d);
            double med = c->n % 2 ? c->v[c->n / 2] : (c->v[c->n / 2 - 1] + c->v[c->n / 2]) / 2;
            double lo = c->v[0], hi = c->v[c->n - 1];
            double floor_v = 0.0; /* no constant is negative */
            med = med < floor_v ? floor_v : med;
            lo = lo < floor_v ? floor_v : lo;
            hi = hi < med ? med : hi;
            if (id == GPUFIT__PROF_SLACK)
                PUT("%s\n    \"%s\": {\"point\": %.6f, \"low\": %.6f, \"high\": %.6f, "
                    "\"runs\": %u}",
                    first ? "" : ",", prof_names[id], med, lo, hi, c->n);
            else
                PUT("%s\n    \"%s\": {\"point\": %.0f, \"low\": %.0f, \"high\": %.0f, "
                    "\"runs\": %u}",
                    first ? "" : ",", prof_names[id], med, lo, hi, c->n);
            first = 0;
        }
        PUT("%s}\n}\n", first ? "" : "\n  ");
    }
#undef PUT
    free(sets);
    if (st != GPUFIT_OK)
        return st;
    if (len_out != NULL)
        *len_out = n;
    if (n >= cap)
        return gpufit__fail(err, GPUFIT_E_BUFFER_TOO_SMALL, 0, UINT64_MAX,
                            "the profile needs %zu bytes", n + 1);
    gpufit__ok(err);
    return GPUFIT_OK;
}
