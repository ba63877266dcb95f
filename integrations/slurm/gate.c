/* SPDX-License-Identifier: MIT */
/* The Slurm plugin's decision without Slurm (gate.h): arguments, GPU requests, verdict. */
#include "gate.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufit.h>

#define GIB 1073741824.0

uint64_t gate_mul(uint64_t a, uint64_t b)
{
    return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

void gate_conf_init(gate_conf *c)
{
    memset(c, 0, sizeof *c);
    c->marginal = GATE_MARGINAL_WARN;
    c->enforce = GATE_ENFORCE_LOCAL | GATE_ENFORCE_REMOTE;
}

static int copy_word(char *dst, size_t cap, const char *src, size_t n)
{
    if (n == 0 || n >= cap)
        return -1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

int gate_parse_args(gate_conf *c, int ac, char *const *av, char *msg, size_t cap)
{
    for (int i = 0; i < ac; i++) {
        const char *a = av[i], *eq = strchr(a, '=');
        const char *v = eq != NULL ? eq + 1 : "";
        size_t klen = eq != NULL ? (size_t)(eq - a) : strlen(a);
        if (klen == 3 && strncmp(a, "gpu", 3) == 0) {
            if (copy_word(c->gpu, sizeof c->gpu, v, strlen(v)) != 0) {
                snprintf(msg, cap, "argument gpu= needs a GPU name of 1-63 characters");
                return -1;
            }
        } else if (klen == 6 && strncmp(a, "margin", 6) == 0) {
            char *end = NULL;
            errno = 0;
            double m = strtod(v, &end);
            if (*v == '\0' || *end != '\0' || errno != 0 || !(m >= 0.0 && m <= 0.5)) {
                snprintf(msg, cap, "argument margin='%s': a fraction in [0, 0.5], e.g. 0.05", v);
                return -1;
            }
            c->margin = m;
        } else if (klen == 8 && strncmp(a, "marginal", 8) == 0) {
            if (strcmp(v, "allow") == 0)
                c->marginal = GATE_MARGINAL_ALLOW;
            else if (strcmp(v, "warn") == 0)
                c->marginal = GATE_MARGINAL_WARN;
            else if (strcmp(v, "refuse") == 0)
                c->marginal = GATE_MARGINAL_REFUSE;
            else {
                snprintf(msg, cap, "argument marginal='%s': one of allow, warn, refuse", v);
                return -1;
            }
        } else if (klen == 7 && strncmp(a, "enforce", 7) == 0) {
            if (strcmp(v, "local") == 0)
                c->enforce = GATE_ENFORCE_LOCAL;
            else if (strcmp(v, "remote") == 0)
                c->enforce = GATE_ENFORCE_REMOTE;
            else if (strcmp(v, "both") == 0)
                c->enforce = GATE_ENFORCE_LOCAL | GATE_ENFORCE_REMOTE;
            else {
                snprintf(msg, cap, "argument enforce='%s': one of local, remote, both", v);
                return -1;
            }
        } else {
            snprintf(msg, cap,
                     "unknown argument '%s' (known: gpu=NAME margin=F "
                     "marginal=allow|warn|refuse enforce=local|remote|both)",
                     a);
            return -1;
        }
    }
    return 0;
}

/* A decimal count of 1..2^32 spanning [s, s + n); 0 if it is not one. */
static uint64_t count_of(const char *s, size_t n)
{
    uint64_t v = 0;
    if (n == 0 || n > 10)
        return 0;
    for (size_t k = 0; k < n; k++) {
        if (!isdigit((unsigned char)s[k]))
            return 0;
        v = v * 10 + (uint64_t)(s[k] - '0');
    }
    return v <= 4294967296ull ? v : 0;
}

/* One "gpu[:TYPE][:N]" item (Slurm's --gres syntax; also ":N" suffix forms). */
static int gres_item(gate_gpus *g, const char *s, size_t n)
{
    /* drop a "(S:0-1)" socket suffix and a "gres/" prefix */
    const char *paren = memchr(s, '(', n);
    if (paren != NULL)
        n = (size_t)(paren - s);
    if (n > 5 && strncmp(s, "gres/", 5) == 0)
        s += 5, n -= 5;
    if (n < 3 || strncmp(s, "gpu", 3) != 0 || (n > 3 && s[3] != ':'))
        return 0; /* another GRES (not a GPU) */
    const char *p = s + 3, *end = s + n;
    uint64_t count = 1;
    if (p < end) { /* ":TYPE", ":N" or ":TYPE:N" */
        p++;
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (colon == NULL) {
            uint64_t c = count_of(p, (size_t)(end - p));
            if (c > 0)
                count = c;
            else if (copy_word(g->type, sizeof g->type, p, (size_t)(end - p)) != 0)
                return -1;
        } else {
            if (copy_word(g->type, sizeof g->type, p, (size_t)(colon - p)) != 0)
                return -1;
            count = count_of(colon + 1, (size_t)(end - colon - 1));
            if (count == 0)
                return -1;
        }
    }
    g->per_node = count;
    return 0;
}

int gate_parse_gres(gate_gpus *g, const char *list)
{
    const char *p = list;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        /* commas inside "(S:0,1)" belong to the item */
        const char *open = memchr(p, '(', n);
        if (open != NULL) {
            const char *close = strchr(open, ')');
            if (close != NULL)
                n = (size_t)(close - p) + 1 + strcspn(close + 1, ",");
        }
        if (gres_item(g, p, n) != 0)
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

int gate_parse_gpus(gate_gpus *g, const char *value, int total)
{
    const char *colon = strrchr(value, ':');
    const char *num = colon != NULL ? colon + 1 : value;
    uint64_t c = count_of(num, strlen(num));
    if (c == 0)
        return -1;
    if (colon != NULL && copy_word(g->type, sizeof g->type, value, (size_t)(colon - value)) != 0)
        return -1;
    if (total)
        g->total = c;
    else
        g->per_node = c;
    return 0;
}

/* A decimal number (0 allowed) spanning [s, s + n) into *v; -1 if it is not one. */
static int dec_of(const char *s, size_t n, uint64_t *v)
{
    *v = 0;
    if (n == 0 || n > 9)
        return -1;
    for (size_t k = 0; k < n; k++) {
        if (!isdigit((unsigned char)s[k]))
            return -1;
        *v = *v * 10 + (uint64_t)(s[k] - '0');
    }
    return 0;
}

uint64_t gate_count_list(const char *list)
{
    uint64_t n = 0;
    if (list == NULL)
        return 0;
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *dash = memchr(p, '-', len);
        uint64_t lo, hi;
        if (len == 0)
            return 0;
        if (dash != NULL && dec_of(p, (size_t)(dash - p), &lo) == 0 &&
            dec_of(dash + 1, (size_t)(p + len - dash - 1), &hi) == 0) {
            if (hi < lo)
                return 0;
            n += hi - lo + 1; /* "0-3": SLURM_JOB_GPUS ranges */
        } else {
            n++; /* an index, a UUID ("GPU-8f3...") or a MIG name: one device */
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return n;
}

/* The options of srun/sbatch/salloc the gate reads; value: the option takes a value. */
static int read_option(gate_gpus *g, const char *name, const char *value)
{
    if (value == NULL)
        return 0;
    if (strcmp(name, "--gres") == 0)
        return gate_parse_gres(g, value);
    if (strcmp(name, "--gpus") == 0 || strcmp(name, "-G") == 0)
        return gate_parse_gpus(g, value, 1);
    if (strcmp(name, "--gpus-per-node") == 0)
        return gate_parse_gpus(g, value, 0);
    if (strcmp(name, "--nodes") == 0 || strcmp(name, "-N") == 0) {
        /* "-N 2" or "-N 2-4": the minimum */
        uint64_t n = count_of(value, strcspn(value, "-"));
        if (n > 0)
            g->nodes = n;
    }
    return 0;
}

static void scan_one(gate_gpus *g, const char *a, const char *next, int *used_next)
{
    *used_next = 0;
    if (a[0] == '-' && a[1] == '-') {
        const char *eq = strchr(a, '=');
        char name[32];
        if (eq != NULL) {
            if (copy_word(name, sizeof name, a, (size_t)(eq - a)) == 0)
                (void)read_option(g, name, eq + 1);
        } else if (next != NULL) {
            (void)read_option(g, a, next);
            *used_next = -1; /* it may take the next word: neither is the program */
        }
    } else if (a[0] == '-' && (a[1] == 'G' || a[1] == 'N')) {
        char name[3] = {'-', a[1], '\0'};
        if (a[2] != '\0') {
            (void)read_option(g, name, a[2] == '=' ? a + 3 : a + 2);
        } else if (next != NULL) {
            (void)read_option(g, name, next);
            *used_next = 1;
        }
    } else if (a[0] == '-' && a[1] != '\0' && a[2] == '\0') {
        *used_next = -1; /* a short option that may take the next word */
    }
}

void gate_scan_argv(gate_gpus *g, int argc, char *const *argv, int *script_out)
{
    int maybe_value = 0;
    *script_out = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            *script_out = i + 1 < argc ? i + 1 : -1;
            return;
        }
        if (a[0] != '-') {
            if (maybe_value) { /* the value of the option before it */
                maybe_value = 0;
                continue;
            }
            *script_out = i;
            return;
        }
        int used = 0;
        scan_one(g, a, i + 1 < argc ? argv[i + 1] : NULL, &used);
        if (used == 1)
            i++;
        maybe_value = used == -1;
    }
}

void gate_scan_script(gate_gpus *g, const char *text)
{
    const char *p = text;
    if (strncmp(p, "#!", 2) == 0)
        p += strcspn(p, "\n");
    while (*p != '\0') {
        if (*p == '\n') {
            p++;
            continue;
        }
        size_t n = strcspn(p, "\n");
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        if (q < p + n && *q != '#')
            return; /* sbatch stops reading #SBATCH at the first command */
        if ((size_t)(p + n - q) > 7 && strncmp(q, "#SBATCH", 7) == 0) {
            char line[512], *words[8];
            int nw = 0;
            if (copy_word(line, sizeof line, q + 7, (size_t)(p + n - q - 7)) == 0) {
                for (char *w = strtok(line, " \t\r"); w != NULL && nw < 8;
                     w = strtok(NULL, " \t\r")) {
                    if (*w == '#')
                        break; /* a comment after the options */
                    words[nw++] = w;
                }
                for (int i = 0; i < nw; i++) {
                    int used = 0;
                    scan_one(g, words[i], i + 1 < nw ? words[i + 1] : NULL, &used);
                    if (used != 0)
                        i++;
                }
            }
        }
        p += n;
    }
}

/* Appends printf text to msg (cut at cap). */
static void add(char *msg, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(msg);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, cap - len, fmt, ap);
    va_end(ap);
}

/* A parse error as the command prints it: message, status, and the text with a caret. */
static void add_error(char *msg, size_t cap, const char *what, const gpufit_error *e,
                      const char *text)
{
    add(msg, cap, "gpufit: %s: %s (%s)", what, e->message, gpufit_status_str(e->status));
    if (e->offset != UINT64_MAX)
        add(msg, cap, " at byte %llu", (unsigned long long)e->offset);
    add(msg, cap, "\n");
    if (text != NULL && e->offset != UINT64_MAX && e->offset <= strlen(text) &&
        strlen(text) < 200 && strchr(text, '\n') == NULL)
        add(msg, cap, "gpufit:   %s\ngpufit:   %*s^\n", text, (int)e->offset, "");
}

static int64_t job_int(const gpufit_job *j, int32_t p)
{
    int64_t v = 0;
    return gpufit_job_get_int(j, p, &v, NULL) == GPUFIT_OK ? v : 0;
}

/* The fix to print: the first ranked one that makes it fit and keeps the GPU (not another
 * GPU, not more GPUs); else the first one that keeps the GPU; else none (-1). */
static int64_t first_fix(const gpufit_result *r, uint32_t n)
{
    int64_t keep = -1;
    for (uint32_t i = 0; i < n; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        if (gpufit_result_mitigation(r, i, &mi) != GPUFIT_OK)
            continue;
        if (mi.kind == GPUFIT_MIT_LARGER_GPU || mi.kind == GPUFIT_MIT_MORE_GPUS)
            continue;
        if (mi.fits_after)
            return i;
        if (keep < 0)
            keep = i;
    }
    return keep;
}

/* " of 80.00 GiB" or, with a margin, " of 76.00 GiB (80.00 GiB less a 5 % margin)" */
static void add_capacity(char *msg, size_t cap, const gpufit_job *j, uint64_t capacity)
{
    double m = 0.0, usable = (double)capacity;
    int64_t mb = job_int(j, GPUFIT_JOB_MARGIN_BYTES);
    if (gpufit_job_get_float(j, GPUFIT_JOB_MARGIN, &m, NULL) != GPUFIT_OK)
        m = 0.0;
    if (mb > 0)
        usable -= (double)mb;
    else
        usable *= 1.0 - m;
    if (usable < (double)capacity)
        add(msg, cap, " of %.2f GiB (%.2f GiB less a %.2f GiB margin)", usable / GIB,
            capacity / GIB, (capacity - usable) / GIB);
    else
        add(msg, cap, " of %.2f GiB", capacity / GIB);
}

static int verdict_message(const gate_conf *conf, const gpufit_result *r, const gpufit_job *j,
                           const char *gpu_name, char *msg, size_t cap)
{
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_role_info ro = {.struct_size = sizeof ro};
    if (gpufit_result_summary(r, &s) != GPUFIT_OK ||
        gpufit_result_role(r, s.worst_role, &ro) != GPUFIT_OK) {
        add(msg, cap, "gpufit: internal error reading the result; not checked\n");
        return GATE_PASS;
    }
    const char *gpu = ro.gpu != NULL && *ro.gpu != '\0' ? ro.gpu : gpu_name;
    int out;
    const char *word;
    switch (s.verdict) {
    case GPUFIT_VERDICT_FITS:
        add(msg, cap, "gpufit: FITS: %.2f-%.2f GiB", ro.device_used_low_bytes / GIB,
            ro.device_used_high_bytes / GIB);
        add_capacity(msg, cap, j, ro.capacity_bytes);
        add(msg, cap, " on %s (role %s)\n", gpu, ro.name);
        return GATE_PASS;
    case GPUFIT_VERDICT_MARGINAL:
        out = conf->marginal == GATE_MARGINAL_REFUSE ? GATE_REFUSE
              : conf->marginal == GATE_MARGINAL_WARN ? GATE_WARN
                                                     : GATE_PASS;
        word = out == GATE_REFUSE ? "job refused: MARGINAL (marginal=refuse)"
                                  : "MARGINAL (the GPU's capacity lies inside the band)";
        break;
    case GPUFIT_VERDICT_OOM:
        out = GATE_REFUSE;
        word = "job refused: DOES NOT FIT";
        break;
    default:
        add(msg, cap, "gpufit: no GPU known (give gpu= in the spec, --gres=gpu:TYPE:N or "
                      "the plugin's gpu=); not checked\n");
        return GATE_PASS;
    }
    add(msg, cap, "gpufit: %s: role %s needs %.2f GiB (band %.2f-%.2f GiB)", word, ro.name,
        ro.device_used_bytes / GIB, ro.device_used_low_bytes / GIB,
        ro.device_used_high_bytes / GIB);
    add_capacity(msg, cap, j, ro.capacity_bytes);
    add(msg, cap, " on %s\n", gpu);
    int64_t f = first_fix(r, s.n_mitigations);
    gpufit_mitigation_info mi = {.struct_size = sizeof mi};
    if (f >= 0 && gpufit_result_mitigation(r, (uint32_t)f, &mi) == GPUFIT_OK) {
        add(msg, cap, "gpufit: fix (keeps the GPU): %s -> %.2f GiB (%s)\n", mi.text,
            mi.peak_bytes_after / GIB, mi.fits_after ? "fits" : "still too large");
        add(msg, cap, "gpufit:   --gpufit-spec: add %s\n", mi.changes);
        if (mi.flags != NULL && *mi.flags != '\0' && strcmp(mi.flags, mi.changes) != 0)
            add(msg, cap, "gpufit:   flags: %s\n", mi.flags);
    } else if (s.n_mitigations > 0) {
        add(msg, cap, "gpufit: no change that keeps the GPU makes it fit; see "
                      "'gpufit estimate' for larger GPUs and more GPUs\n");
    } else if (s.verdict == GPUFIT_VERDICT_OOM) {
        add(msg, cap, "gpufit: no fix found; see 'gpufit estimate'\n");
    } /* a marginal job with no fix ranked: measure it (docs/band.md) */
    return out;
}

int gate_check(const gate_conf *conf, const char *json, size_t len, const char *spec,
               const char *gpu, uint64_t n_gpus, char *msg, size_t cap)
{
    gpufit_error e = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    int out = GATE_REFUSE;
    if (cap == 0)
        return GATE_REFUSE;
    msg[0] = '\0';
    if (gpufit_model_new(&m, &e) != GPUFIT_OK || gpufit_job_new(&j, &e) != GPUFIT_OK) {
        add_error(msg, cap, "out of memory", &e, NULL);
        goto done;
    }
    if (json != NULL && gpufit_apply_json(m, j, json, len, &e) != GPUFIT_OK) {
        add(msg, cap, "gpufit: job refused: the --gpufit scenario is malformed\n");
        add_error(msg, cap, "scenario", &e, NULL);
        goto done;
    }
    if (spec != NULL && gpufit_apply_spec(m, j, spec, &e) != GPUFIT_OK) {
        add(msg, cap, "gpufit: job refused: the --gpufit-spec is malformed\n");
        add_error(msg, cap, "spec", &e, spec);
        goto done;
    }
    /* the GPU the job holds replaces the one its scenario names, and its capacity */
    if (gpu != NULL && *gpu != '\0') {
        char set[96];
        snprintf(set, sizeof set, "gpu=%s", gpu);
        if (strpbrk(gpu, " \t\"'=,") != NULL || gpufit_apply_spec(NULL, j, set, &e) != GPUFIT_OK) {
            add(msg, cap, "gpufit: the GPU type '%s' is not in gpufit's catalogue (%s); "
                          "not checked: set the plugin's gpu= to a catalogue name\n",
                gpu, e.message);
            out = GATE_PASS;
            goto done;
        }
        if (gpufit_job_set_int(j, GPUFIT_JOB_GPU_MEMORY_BYTES, 0, &e) != GPUFIT_OK) {
            add_error(msg, cap, "capacity", &e, NULL);
            goto done;
        }
    }
    /* margin: the library's own (docs/band.md: the verdict and the fixes check against
     * capacity x (1 - margin)); the plugin's is a floor under the job's margin/margin_bytes */
    if (conf->margin > 0.0) {
        double jm = 0.0;
        int64_t jb = job_int(j, GPUFIT_JOB_MARGIN_BYTES);
        gpufit_summary s = {.struct_size = sizeof s};
        int rc = gpufit_job_get_float(j, GPUFIT_JOB_MARGIN, &jm, &e);
        if (rc == GPUFIT_OK && jb > 0) { /* the job gave bytes: raise them to the floor */
            rc = gpufit_evaluate_summary(m, j, &s, &e);
            uint64_t floor = (uint64_t)((double)s.capacity_bytes * conf->margin);
            if (rc == GPUFIT_OK && floor > (uint64_t)jb)
                rc = gpufit_job_set_int(j, GPUFIT_JOB_MARGIN_BYTES, (int64_t)floor, &e);
        } else if (rc == GPUFIT_OK && jm < conf->margin) {
            rc = gpufit_job_set_float(j, GPUFIT_JOB_MARGIN, conf->margin, &e);
        }
        if (rc != GPUFIT_OK) {
            add(msg, cap, "gpufit: job refused: the job cannot be evaluated\n");
            add_error(msg, cap, "margin", &e, NULL);
            goto done;
        }
    }
    /* the job's layout must fit in the GPUs it holds */
    uint64_t layout = (uint64_t)job_int(j, GPUFIT_JOB_GPUS);
    if (layout == 0)
        layout = gate_mul(gate_mul((uint64_t)job_int(j, GPUFIT_JOB_DP),
                                   (uint64_t)job_int(j, GPUFIT_JOB_TP)),
                          gate_mul((uint64_t)job_int(j, GPUFIT_JOB_PP),
                                   (uint64_t)job_int(j, GPUFIT_JOB_CP)));
    if (n_gpus > 0 && layout > n_gpus) {
        add(msg, cap,
            "gpufit: job refused: the job's layout uses %llu GPUs (dp x tp x pp x cp) but it "
            "holds %llu\n",
            (unsigned long long)layout, (unsigned long long)n_gpus);
        goto done;
    }
    if (gpufit_evaluate(&r, m, j, &e) != GPUFIT_OK) {
        add(msg, cap, "gpufit: job refused: the job cannot be evaluated\n");
        add_error(msg, cap, "evaluate", &e, NULL);
        goto done;
    }
    out = verdict_message(conf, r, j, gpu, msg, cap);
done:
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return out;
}
