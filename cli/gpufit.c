/* SPDX-License-Identifier: MIT */
/* gpufit: the command-line front end. Reads files, calls the library, prints.
 *
 * Exit codes (documented in README.md and `gpufit --help`):
 *   0  the job fits (or no GPU was given, so there is no verdict)
 *   1  the job does not fit
 *   2  bad input: usage, unknown key, bad value, malformed spec or JSON
 *   3  a file could not be read
 *   4  internal error
 */
#define _POSIX_C_SOURCE 200809L /* opendir, stat: --model DIR lists its *.safetensors */

#include "gpufit.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    EXIT_FITS = 0,
    EXIT_OOM = 1,
    EXIT_BAD_INPUT = 2,
    EXIT_IO = 3,
    EXIT_INTERNAL = 4,
    EXIT_MARGINAL = 5
};

#define MAX_FILE_BYTES (16u << 20)

static const char *usage_text =
    "usage:\n"
    "  gpufit estimate [FILE.json] [--model PATH] [--spec \"key=value ...\"] [--json]\n"
    "                  [--max PARAM] [--strict] [--profile PROFILE.json]\n"
    "  gpufit recommend [FILE.json] [--spec ...] [--only gpu,gpu] [--max-gpus N] [--json]\n"
    "  gpufit plan [FILE.json] [--spec ...] [--gpus-per-node N] [--nodes N] [--top N] [--json]\n"
    "  gpufit calibrate RUNS.jsonl [-o PROFILE.json]   fit the stack constants to measured\n"
    "                           runs (docs/calibration.md); --profile applies the result\n"
    "  gpufit models            built-in model presets\n"
    "  gpufit gpus              GPU catalogue\n"
    "  gpufit params            every parameter with unit, default and range\n"
    "  gpufit version\n"
    "\n"
    "A scenario comes from a JSON file (docs/scenario.md), spec strings, or both (the specs\n"
    "apply after the file, in order). --model PATH takes the model from a Hugging Face model\n"
    "directory (config.json, checked against its *.safetensors headers) or a .gguf file (exact\n"
    "weight bytes; framework llamacpp unless the scenario names one); it replaces the\n"
    "scenario's model, and spec keys still override its fields. Only file headers are read.\n"
    "Example:\n"
    "  gpufit estimate --spec \"model=llama-3-8b task=inference gpu=rtx-4090 "
    "context_len=8192\"\n"
    "\n"
    "exit codes: 0 fits (or no GPU given), 1 does not fit, 2 bad input, 3 unreadable file,\n"
    "            4 internal error, 5 marginal (the capacity lies inside the estimate's band:\n"
    "            docs/band.md). estimate --strict: marginal exits 1 and a job without a GPU\n"
    "            exits 2 (a gate fails closed).\n"
    "gpufit COMMAND --help explains one command; man gpufit after make install.\n";

/* gpufit COMMAND --help */
static const struct {
    const char *cmd, *help;
} command_help[] = {
    {"estimate",
     "usage: gpufit estimate [FILE.json] [--model PATH] [--spec \"key=value ...\"]... [--json]\n"
     "                       [--max PARAM] [--strict] [--profile PROFILE.json]\n"
     "Per-device memory of one job by component, its band and the verdict (fits, marginal,\n"
     "does not fit), and ranked fixes when it does not fit.\n"
     "  FILE.json        a JSON scenario (docs/scenario.md; every key: docs/params.md)\n"
     "  --model PATH     a Hugging Face model directory, its config.json, or a .gguf file\n"
     "  --spec \"k=v\"     scenario keys; several --spec apply in order, after the file\n"
     "  --json           the JSON report (docs/report.md)\n"
     "  --max PARAM      the largest micro_batch, seq_len, batch, context_len, prompt_len or\n"
     "                   n_gpu_layers that is sure to fit (the band's high end)\n"
     "  --strict         a gate: marginal exits 1, no GPU exits 2\n"
     "  --profile FILE   a calibration profile (gpufit calibrate; docs/calibration.md)\n"
     "exit codes: 0 fits, 1 does not fit, 2 bad input, 3 unreadable file, 4 internal,\n"
     "            5 marginal\n"},
    {"recommend",
     "usage: gpufit recommend [FILE.json] [--model PATH] [--spec ...]... [--only gpu,gpu]\n"
     "                        [--max-gpus N] [--json] [--profile PROFILE.json]\n"
     "Every catalogue GPU (or those of --only) and the smallest count of it on which the job\n"
     "fits, ranked; each with the --spec that reproduces it. --max-gpus: at most N per job\n"
     "(1 to 4294967295, default 8). Exit 0 when some GPU fits, 1 when none does.\n"},
    {"plan",
     "usage: gpufit plan [FILE.json] [--model PATH] [--spec ...]... [--gpus-per-node N]\n"
     "                   [--nodes N] [--top N] [--json] [--profile PROFILE.json]\n"
     "Training: every valid (tp, pp, vpp, dp, cp, ep, zero, micro-batch, checkpointing) on N\n"
     "nodes of the scenario's GPU, the cheapest --top that fit (docs/planner.md); serving:\n"
     "the replica layouts with their KV room. Each layout prints the --spec that reproduces\n"
     "it. Defaults: --gpus-per-node 8, --nodes 1, --top 10 (each 1 to 4294967295); the\n"
     "plan says how many GPUs it assumed.\n"},
    {"models", "usage: gpufit models\nThe built-in presets with exact parameter counts.\n"},
    {"gpus", "usage: gpufit gpus\nThe GPU catalogue: names, aliases, usable capacities.\n"},
    {"params",
     "usage: gpufit params\nEvery scenario key with its unit, default and range or values\n"
     "(the same table as docs/params.md).\n"},
    {"version", "usage: gpufit version\nThe library's version.\n"},
};

static const char *const command_names = "estimate, recommend, plan, calibrate, models, gpus, "
                                         "params, version";

static int usage(FILE *f, int code)
{
    fputs(usage_text, f);
    return code;
}

static double gib(uint64_t b)
{
    return (double)b / 1073741824.0;
}

/* Says why path could not be read (errno); returns EXIT_IO. */
static int cannot_read(const char *path)
{
    fprintf(stderr, "gpufit: cannot read '%s': %s\n", path, strerror(errno));
    return EXIT_IO;
}

/* Opens path for reading if it is a regular file: a FIFO, a device or a socket named like a
 * model file would block or never end (O_NONBLOCK: the open itself does not wait). NULL with
 * the error printed otherwise (*code = EXIT_IO). */
static FILE *open_regular(const char *path, int *code)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    *code = EXIT_IO;
    if (fd < 0) {
        cannot_read(path);
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fprintf(stderr, "gpufit: cannot read '%s': %s\n", path,
                S_ISDIR(sb.st_mode) ? strerror(EISDIR) : "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        cannot_read(path);
        close(fd);
    }
    return f;
}

/* Reads a whole file of at most MAX_FILE_BYTES into *out (malloc'd; kind names such files in
 * the message when it is larger). Returns -1 or an exit code, the error printed. */
int read_file(const char *path, const char *kind, char **out, size_t *len)
{
    int open_code;
    FILE *f = open_regular(path, &open_code);
    *out = NULL;
    *len = 0;
    if (f == NULL)
        return open_code;
    size_t cap = 0, n = 0, got = 1;
    char *buf = NULL;
    int code = -1;
    while (code < 0 && got > 0 && n <= MAX_FILE_BYTES) {
        if (n == cap) { /* reading one byte past the limit tells a larger file */
            size_t nc = cap == 0 ? 4096 : cap < MAX_FILE_BYTES / 2 ? cap * 2 : MAX_FILE_BYTES + 1;
            char *nb = realloc(buf, nc);
            if (nb == NULL) {
                fprintf(stderr, "gpufit: out of memory reading '%s'\n", path);
                code = EXIT_INTERNAL;
                break;
            }
            buf = nb;
            cap = nc;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0 && ferror(f))
            code = cannot_read(path);
    }
    if (code < 0 && n > MAX_FILE_BYTES) {
        fprintf(stderr, "gpufit: '%s' is larger than the %u MiB limit for %s\n", path,
                MAX_FILE_BYTES >> 20, kind);
        code = EXIT_IO;
    }
    fclose(f);
    if (code >= 0)
        free(buf);
    *out = code < 0 ? buf : NULL;
    *len = n;
    return code;
}

/* Whether an error message already says "at byte OFF" (the parsers' messages do). */
static int says_offset(const char *msg, uint64_t off)
{
    char at[40];
    int n = snprintf(at, sizeof at, "at byte %llu", (unsigned long long)off);
    for (const char *p = strstr(msg, at); p != NULL; p = strstr(p + 1, at))
        if (p[n] < '0' || p[n] > '9')
            return 1;
    return 0;
}

/* An error in a file: its path, the message and, unless the message says it, the offset. */
static void print_file_error(const char *path, const gpufit_error *err)
{
    fprintf(stderr, "gpufit: %s: %s (%s)", path, err->message, gpufit_status_str(err->status));
    if (err->offset != UINT64_MAX && !says_offset(err->message, err->offset))
        fprintf(stderr, " at byte %llu", (unsigned long long)err->offset);
    fputc('\n', stderr);
}

static void print_error(const char *what, const gpufit_error *err, const char *text)
{
    fprintf(stderr, "gpufit: %s: %s (%s)\n", what, err->message,
            gpufit_status_str(err->status));
    if (text != NULL && err->offset != UINT64_MAX) {
        size_t len = strlen(text);
        int printable = 1;
        for (size_t k = 0; k < len; k++)
            printable &= (unsigned char)text[k] >= 0x20 && text[k] != 0x7f;
        if (err->offset <= len && len < 200 && printable) {
            fprintf(stderr, "  %s\n  %*s^\n", text, (int)err->offset, "");
        } else if (!says_offset(err->message, err->offset)) {
            fprintf(stderr, "  at byte offset %llu\n", (unsigned long long)err->offset);
        }
    }
}

static void bar(double frac, int width)
{
    int n = (int)(frac * width + 0.5);
    if (n > width)
        n = width;
    if (frac > 0.0 && n == 0)
        n = 1;
    for (int i = 0; i < width; i++)
        fputc(i < n ? '#' : '.', stdout);
}

/* Several roles: one column per role, then a bar of each role's device use. */
static void print_roles_side_by_side(const gpufit_result *r, const gpufit_summary *s)
{
    enum { ROLES = GPUFIT_LIST_MAX + 1 }; /* a stage per split entry, and the host */
    gpufit_role_info ro[ROLES];
    uint32_t n = s->n_roles < ROLES ? s->n_roles : ROLES;
    for (uint32_t i = 0; i < n; i++) {
        ro[i] = (gpufit_role_info){.struct_size = sizeof ro[i]};
        gpufit_result_role(r, i, &ro[i]);
    }
    printf("\n%-18s", "GiB per device");
    for (uint32_t i = 0; i < n; i++)
        printf(" %12s", ro[i].name);
    printf("\n%-18s", "");
    for (uint32_t i = 0; i < n; i++) {
        char d[32];
        snprintf(d, sizeof d, "%u dev, %u L", ro[i].n_devices, ro[i].layers);
        printf(" %12s", d);
    }
    /* GPUs of different kinds or sizes (device_gpus, device_memory_gib): name each role's
     * GPU, or give its capacity when it has no catalogue name */
    int mixed = 0;
    for (uint32_t i = 1; i < n; i++)
        mixed |= strcmp(ro[i].name, "host") != 0 && (strcmp(ro[i].gpu, ro[0].gpu) != 0 ||
                                                     ro[i].capacity_bytes != ro[0].capacity_bytes);
    if (mixed) {
        printf("\n%-18s", "");
        for (uint32_t i = 0; i < n; i++) {
            char cap[32];
            const char *g = strcmp(ro[i].name, "host") == 0 ? "" : ro[i].gpu;
            if (strncmp(g, "GeForce ", 8) == 0) /* keep the model number in the column */
                g += 8;
            if (g[0] == '\0' && strcmp(ro[i].name, "host") != 0 && ro[i].capacity_bytes > 0) {
                snprintf(cap, sizeof cap, "%.2f GiB", gib(ro[i].capacity_bytes));
                g = cap;
            }
            printf(" %12.12s", g);
        }
    }
    putchar('\n');
    for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
        uint64_t b[ROLES] = {0}, any = 0;
        for (uint32_t i = 0; i < n; i++) {
            gpufit_result_bytes(r, i, c, &b[i]);
            any |= b[i];
        }
        if (any == 0)
            continue;
        printf("  %-16s", gpufit_component_name(c));
        for (uint32_t i = 0; i < n; i++)
            printf(" %12.2f", gib(b[i]));
        putchar('\n');
    }
    static const char *const levels[] = {"peak allocated", "peak reserved", "device used"};
    for (int l = 0; l < 3; l++) {
        printf("%-18s", levels[l]);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = l == 0 ? ro[i].peak_allocated_bytes
                         : l == 1 ? ro[i].peak_reserved_bytes
                                  : ro[i].device_used_bytes;
            printf(" %12.2f", gib(v));
        }
        putchar('\n');
    }
    printf("%-18s", "fits");
    for (uint32_t i = 0; i < n; i++)
        printf(" %12s", ro[i].fits > 0 ? "yes" : ro[i].fits == 0 ? "NO" : "-");
    printf("\n\n");
    for (uint32_t i = 0; i < n; i++) {
        uint64_t cap = ro[i].capacity_bytes; /* the host role: host_memory_bytes */
        uint64_t scale = cap > ro[i].device_used_bytes ? cap : ro[i].device_used_bytes;
        printf("  %-10s ", ro[i].name);
        bar(scale ? (double)ro[i].device_used_bytes / (double)scale : 0.0, 40);
        if (cap > 0)
            printf(" %5.1f %% of %.2f GiB\n", 100.0 * (double)ro[i].device_used_bytes / (double)cap,
                   gib(cap));
        else
            printf(" %.2f GiB\n", gib(ro[i].device_used_bytes));
    }
}

static void print_text(const gpufit_result *r, const gpufit_summary *s)
{
    char line[2][64];
    const char *gpu_note = s->capacity_bytes > 0 ? line[0] : "no GPU";
    snprintf(line[0], sizeof line[0], "%.2f GiB", gib(s->capacity_bytes));
    printf("parameters: %.3f B total, %.3f B active   capacity: %s\n",
           (double)s->n_params / 1e9, (double)s->n_active_params / 1e9, gpu_note);
    for (uint32_t i = 0; i < s->n_roles && s->n_roles == 1; i++) {
        gpufit_role_info ro = {.struct_size = sizeof ro};
        if (gpufit_result_role(r, i, &ro) != GPUFIT_OK)
            continue;
        printf("\nrole %s (%u device%s, %u layers)\n", ro.name, ro.n_devices,
               ro.n_devices == 1 ? "" : "s", ro.layers);
        uint64_t scale = s->capacity_bytes > ro.device_used_bytes ? s->capacity_bytes
                                                                  : ro.device_used_bytes;
        for (int32_t c = gpufit_component_next(0); c != 0; c = gpufit_component_next(c)) {
            uint64_t b = 0;
            gpufit_result_bytes(r, i, c, &b);
            if (b == 0)
                continue;
            printf("  %-17s %10.2f GiB  ", gpufit_component_name(c), gib(b));
            bar(scale ? (double)b / (double)scale : 0.0, 40);
            putchar('\n');
        }
        printf("  %-17s %10.2f GiB  (%.2f-%.2f)\n", "peak allocated",
               gib(ro.peak_allocated_bytes), gib(ro.peak_allocated_low_bytes),
               gib(ro.peak_allocated_high_bytes));
        printf("  %-17s %10.2f GiB  (%.2f-%.2f)\n", "peak reserved", gib(ro.peak_reserved_bytes),
               gib(ro.peak_reserved_low_bytes), gib(ro.peak_reserved_high_bytes));
        printf("  %-17s %10.2f GiB  (%.2f-%.2f)", "device used", gib(ro.device_used_bytes),
               gib(ro.device_used_low_bytes), gib(ro.device_used_high_bytes));
        if (s->capacity_bytes > 0)
            printf("  of %.2f GiB (%.1f %%)", gib(s->capacity_bytes),
                   100.0 * (double)ro.device_used_bytes / (double)s->capacity_bytes);
        putchar('\n');
        if (ro.kv_capacity_tokens > 0)
            printf("  %-17s %10.2f GiB  (%.2f-%.2f) = %llu tokens\n", "kv capacity",
                   gib(ro.kv_capacity_bytes), gib(ro.kv_capacity_low_bytes),
                   gib(ro.kv_capacity_high_bytes), (unsigned long long)ro.kv_capacity_tokens);
    }
    if (s->n_roles > 1)
        print_roles_side_by_side(r, s);
    for (uint32_t i = 0; i < s->n_notes; i++) {
        const char *t = NULL;
        if (gpufit_result_note(r, i, &t) == GPUFIT_OK)
            printf("note: %s\n", t);
    }
    if (s->n_mitigations > 0)
        printf("\nwhat would make it fit, best first (cost: speed, quality or money lost):\n");
    for (uint32_t i = 0; i < s->n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        if (gpufit_result_mitigation(r, i, &mi) != GPUFIT_OK)
            continue;
        printf("  %2u. %-4s %8.2f GiB  %s\n           --spec \"%s\"\n", i + 1,
               mi.fits_after ? "fits" : "oom", gib(mi.peak_bytes_after), mi.text, mi.changes);
    }
    /* the three-way verdict with the band of the fullest device (docs/band.md) */
    double lo = gib(s->peak_low_bytes), hi = gib(s->peak_high_bytes), cap = gib(s->capacity_bytes);
    if (s->verdict == GPUFIT_VERDICT_UNKNOWN)
        printf("\nverdict: no GPU given (%.2f-%.2f GiB on the fullest device)\n", lo, hi);
    else if (s->verdict == GPUFIT_VERDICT_FITS)
        printf("\nverdict: FITS: %.2f-%.2f GiB of %.2f GiB (headroom %.2f GiB at the point "
               "estimate)\n",
               lo, hi, cap, gib((uint64_t)s->headroom_bytes));
    else if (s->verdict == GPUFIT_VERDICT_MARGINAL)
        printf("\nverdict: MARGINAL: %.2f-%.2f GiB of %.2f GiB (the capacity lies inside the "
               "band: measure, or add margin)\n",
               lo, hi, cap);
    else if (s->headroom_bytes >= 0) /* the device holds it, a server's KV budget does not */
        printf("\nverdict: DOES NOT FIT: the KV-cache budget is smaller than the job needs "
               "(%.2f-%.2f GiB of %.2f GiB used)\n",
               lo, hi, cap);
    else
        printf("\nverdict: DOES NOT FIT: %.2f-%.2f GiB of %.2f GiB (short by %.2f GiB at the "
               "point estimate)\n",
               lo, hi, cap, gib((uint64_t)(-s->headroom_bytes)));
}

/* Options shared by estimate, recommend and plan. */
typedef struct cli_opts {
    const char *file, *spec, *max_param, *only, *model, *profile;
    const char *specs[16]; /* every --spec, in order (spec is the last) */
    int n_specs;
    int json, strict;
    long gpus_per_node, nodes, top, max_gpus;
} cli_opts;

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
static int parse_opts(const char *cmd, int argc, char **argv, cli_opts *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int k = value_opt(a);
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
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

/* ---- --model PATH: model files, of which only the headers are read --------------------- */
#define HEADER_CHUNK ((size_t)1 << 20)     /* first read of a large file */
#define HEADER_LIMIT ((uint64_t)1 << 30)   /* the readers refuse larger headers */

/* A reader of a file's beginning: GPUFIT_E_BUFFER_TOO_SMALL with *need when len is short. */
typedef int32_t (*header_reader)(void *ctx, const void *buf, size_t len, uint64_t *need,
                                 gpufit_error *err);

static int32_t gguf_reader(void *ctx, const void *buf, size_t len, uint64_t *need,
                           gpufit_error *err)
{
    return gpufit_model_from_gguf((gpufit_model **)ctx, buf, len, need, err);
}

static int32_t safetensors_reader(void *ctx, const void *buf, size_t len, uint64_t *need,
                                  gpufit_error *err)
{
    gpufit_safetensors_info *info = ctx;
    info->struct_size = sizeof *info;
    return gpufit_safetensors_read(info, buf, len, need, err);
}

/* Runs `fn` on the first HEADER_CHUNK bytes of path and, while it answers
 * GPUFIT_E_BUFFER_TOO_SMALL, on the first `need` bytes (at least half as many again, so that
 * a long tokenizer takes few rounds); never reads past what the header needs by more than
 * that. Returns -1 on success or an exit code (the error printed). */
static int read_header(const char *path, header_reader fn, void *ctx)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int open_code;
    FILE *f = open_regular(path, &open_code);
    if (f == NULL)
        return open_code;
    unsigned char *buf = NULL;
    size_t have = 0, want = HEADER_CHUNK;
    int code = EXIT_BAD_INPUT;
    for (int round = 0; round < 64; round++) {
        if (want > have) {
            unsigned char *nb = realloc(buf, want);
            if (nb == NULL) {
                code = EXIT_INTERNAL;
                break;
            }
            buf = nb;
            have += fread(buf + have, 1, want - have, f);
            if (ferror(f)) {
                code = cannot_read(path);
                break;
            }
        }
        uint64_t need = 0;
        int32_t st = fn(ctx, buf, have, &need, &err);
        if (st == GPUFIT_OK) {
            code = -1;
            break;
        }
        if (st != GPUFIT_E_BUFFER_TOO_SMALL || have < want || need <= have ||
            need > HEADER_LIMIT) {
            if (st == GPUFIT_E_BUFFER_TOO_SMALL)
                fprintf(stderr, "gpufit: %s: truncated: the header needs %llu bytes, the file "
                                "has %zu\n",
                        path, (unsigned long long)need, have);
            else
                print_file_error(path, &err);
            code = st == GPUFIT_E_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
            break;
        }
        want = need > have + have / 2 ? (size_t)need : have + have / 2;
        if (want > HEADER_LIMIT)
            want = (size_t)HEADER_LIMIT;
    }
    free(buf);
    fclose(f);
    return code;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A Hugging Face config.json file. */
static int load_hf_config(const char *path, gpufit_model **out)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    size_t len = 0;
    char *text = NULL;
    int code = read_file(path, "config.json files", &text, &len);
    if (code >= 0)
        return code;
    int32_t st = gpufit_model_from_hf_config(out, text, len, &err);
    free(text);
    if (st != GPUFIT_OK) {
        print_file_error(path, &err);
        return st == GPUFIT_E_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
    }
    return -1;
}

/* A model directory: config.json, cross-checked against the headers of its *.safetensors
 * files (a mismatch is a warning: the config defines the model). */
static int load_model_dir(const char *dir, gpufit_model **out)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        fprintf(stderr, "gpufit: '%s' has no config.json (--model takes a Hugging Face model "
                        "directory, its config.json or a .gguf file)\n",
                dir);
        return EXIT_IO;
    }
    int code = load_hf_config(path, out);
    if (code >= 0)
        return code;
    gpufit_safetensors_info sum;
    memset(&sum, 0, sizeof sum);
    sum.struct_size = sizeof sum;
    int files = 0, bad = -1; /* bad: the exit code of the first shard that failed */
    DIR *d = opendir(dir);
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        if (!ends_with(e->d_name, ".safetensors"))
            continue;
        gpufit_safetensors_info info;
        memset(&info, 0, sizeof info);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int rc = read_header(path, safetensors_reader, &info);
        if (rc >= 0) { /* the error is printed; a corrupt shard is the model's error */
            bad = bad < 0 ? rc : bad;
            continue;
        }
        files++;
        /* shard totals, each checked: a sum past 2^64 is no checkpoint */
        uint64_t *acc[] = {&sum.n_params,   &sum.total_bytes, &sum.header_bytes, &sum.bytes_fp32,
                           &sum.bytes_16bit, &sum.bytes_8bit,  &sum.bytes_other};
        const uint64_t add[] = {info.n_params,   info.total_bytes, info.header_bytes,
                                info.bytes_fp32, info.bytes_16bit, info.bytes_8bit,
                                info.bytes_other};
        for (size_t k = 0; k < sizeof add / sizeof add[0]; k++) {
            if (*acc[k] > UINT64_MAX - add[k]) {
                fprintf(stderr, "gpufit: %s: the shards' totals exceed 64 bits (%s)\n", dir,
                        e->d_name);
                bad = bad < 0 ? EXIT_BAD_INPUT : bad;
                break;
            }
            *acc[k] += add[k];
        }
        sum.n_tensors = sum.n_tensors > UINT32_MAX - info.n_tensors ? UINT32_MAX
                                                                     : sum.n_tensors + info.n_tensors;
    }
    if (d != NULL)
        closedir(d);
    if (bad >= 0) {
        fprintf(stderr, "gpufit: %s: a safetensors shard could not be read (above): the model "
                        "directory is not used\n",
                dir);
        gpufit_model_free(*out);
        *out = NULL;
        return bad;
    }
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (files > 0 && gpufit_model_check_safetensors(*out, &sum, &err) != GPUFIT_OK)
        fprintf(stderr, "gpufit: warning: %s: %s\n", dir, err.message);
    return -1;
}

/* --model PATH: a directory, a config.json or a .gguf file. *gguf is set for GGUF files. */
static int load_model_path(const char *path, gpufit_model **out, int *gguf)
{
    struct stat sb;
    *out = NULL;
    *gguf = 0;
    if (stat(path, &sb) != 0)
        return cannot_read(path);
    if (S_ISDIR(sb.st_mode))
        return load_model_dir(path, out);
    if (ends_with(path, ".json"))
        return load_hf_config(path, out);
    if (ends_with(path, ".safetensors")) {
        fprintf(stderr, "gpufit: %s: a safetensors file has no architecture; pass its "
                        "directory (with config.json)\n",
                path);
        return EXIT_BAD_INPUT;
    }
    *gguf = 1;
    return read_header(path, gguf_reader, out);
}

/* Builds the model and job of a scenario file and/or spec; returns -1 or an exit code. */
static int load_scenario(const cli_opts *o, gpufit_model **m, gpufit_job **j)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    *m = NULL;
    *j = NULL;
    if (gpufit_model_new(m, &err) != GPUFIT_OK || gpufit_job_new(j, &err) != GPUFIT_OK) {
        print_error("setup", &err, NULL);
        return EXIT_INTERNAL;
    }
    if (o->file != NULL) {
        size_t len = 0;
        char *text = NULL;
        int code = read_file(o->file, "scenario files", &text, &len);
        if (code >= 0)
            return code;
        int32_t st = gpufit_apply_json(*m, *j, text, len, &err);
        free(text);
        if (st != GPUFIT_OK) {
            print_file_error(o->file, &err);
            return EXIT_BAD_INPUT;
        }
    }
    if (o->model != NULL) { /* replaces the scenario's model; the spec still overrides */
        gpufit_model *fm = NULL;
        int gguf = 0;
        int code = load_model_path(o->model, &fm, &gguf);
        if (code >= 0)
            return code;
        gpufit_model_free(*m);
        *m = fm;
        int64_t fw = -1;
        if (gguf && gpufit_job_get_int(*j, GPUFIT_JOB_FRAMEWORK, &fw, NULL) == GPUFIT_OK &&
            fw == GPUFIT_FW_PYTORCH) /* the default: a GGUF file runs under llama.cpp */
            gpufit_job_set_int(*j, GPUFIT_JOB_FRAMEWORK, GPUFIT_FW_LLAMACPP, NULL);
    }
    if (o->profile != NULL) { /* a calibration profile (gpufit calibrate, docs/calibration.md) */
        size_t len = 0;
        char *text = NULL;
        int code = read_file(o->profile, "profiles", &text, &len);
        if (code >= 0)
            return code;
        int32_t st = gpufit_job_apply_profile(*j, text, len, &err);
        free(text);
        if (st != GPUFIT_OK) {
            print_file_error(o->profile, &err);
            return EXIT_BAD_INPUT;
        }
    }
    for (int i = 0; i < o->n_specs; i++) /* each --spec in order, a later one overriding */
        if (gpufit_apply_spec(*m, *j, o->specs[i], &err) != GPUFIT_OK) {
            print_error("spec", &err, o->specs[i]);
            return EXIT_BAD_INPUT;
        }
    return -1;
}

static int print_json_report(const gpufit_result *r)
{
    size_t need = 0;
    gpufit_result_to_json(r, NULL, 0, &need, NULL);
    char *buf = malloc(need + 1);
    if (buf == NULL || gpufit_result_to_json(r, buf, need + 1, NULL, NULL) != GPUFIT_OK) {
        free(buf);
        return 1;
    }
    fputs(buf, stdout);
    free(buf);
    return 0;
}

/* --max PARAM: the largest value that fits, with the accumulation that keeps the batch. */
static int print_max(const gpufit_model *m, const gpufit_job *j, const char *name, int json)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    int32_t p = 0;
    int64_t v = 0;
    if (gpufit_param_by_name(name, &p) != GPUFIT_OK) {
        fprintf(stderr, "gpufit: --max: unknown parameter '%s'\n", name);
        return EXIT_BAD_INPUT;
    }
    if (gpufit_max_fitting(m, j, p, &v, &err) != GPUFIT_OK) {
        print_error("--max", &err, NULL);
        return EXIT_BAD_INPUT;
    }
    int64_t gbs = 0, dp = 1;
    gpufit_job_get_int(j, GPUFIT_JOB_GLOBAL_BATCH, &gbs, NULL);
    gpufit_job_get_int(j, GPUFIT_JOB_DP, &dp, NULL);
    if (json) {
        printf("{\"param\": \"%s\", \"max\": %lld", name, (long long)v);
        if (p == GPUFIT_JOB_MICRO_BATCH && v > 0 && gbs > 0)
            printf(", \"gradient_accumulation\": %lld",
                   (long long)((gbs + v * dp - 1) / (v * dp)));
        printf("}\n");
    } else if (v == 0) {
        printf("%s: even the smallest value does not fit\n", name);
    } else {
        printf("largest %s that fits: %lld", name, (long long)v);
        if (p == GPUFIT_JOB_MICRO_BATCH && gbs > 0)
            printf(" (gradient accumulation %lld keeps the global batch of %lld)",
                   (long long)((gbs + v * dp - 1) / (v * dp)), (long long)gbs);
        putchar('\n');
    }
    return v > 0 ? EXIT_FITS : EXIT_OOM;
}

static int cmd_estimate(int argc, char **argv)
{
    cli_opts o = {0};
    int code = parse_opts("estimate", argc, argv, &o);
    if (code >= 0)
        return code;
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    code = load_scenario(&o, &m, &j);
    if (code >= 0)
        goto out;
    if (o.max_param != NULL) {
        code = print_max(m, j, o.max_param, o.json);
        goto out;
    }
    code = EXIT_INTERNAL;
    if (gpufit_evaluate(&r, m, j, &err) != GPUFIT_OK) {
        print_error("estimate", &err, NULL);
        code = err.status == GPUFIT_E_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
        goto out;
    }
    gpufit_summary s = {.struct_size = sizeof s};
    gpufit_result_summary(r, &s);
    if (o.json) {
        if (print_json_report(r))
            goto out;
    } else {
        printf("gpufit %s: %s, task ", gpufit_version_string(), gpufit_model_name(m));
        int64_t task = 0;
        gpufit_job_get_int(j, GPUFIT_JOB_TASK, &task, NULL);
        printf("%s\n", gpufit_param_value_name(GPUFIT_JOB_TASK, task));
        print_text(r, &s);
    }
    /* the three-way verdict (docs/band.md); --strict fails closed */
    if (s.verdict == GPUFIT_VERDICT_UNKNOWN && o.strict) {
        fprintf(stderr, "gpufit estimate: --strict needs a GPU (gpu=NAME or a capacity)\n");
        code = EXIT_BAD_INPUT;
    } else {
        code = s.verdict == GPUFIT_VERDICT_OOM        ? EXIT_OOM
               : s.verdict == GPUFIT_VERDICT_MARGINAL ? (o.strict ? EXIT_OOM : EXIT_MARGINAL)
                                                      : EXIT_FITS;
    }
out:
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return code;
}

/* Prints a JSON string literal. */
static void json_str(const char *s)
{
    putchar('"');
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* Prints item i of a list: a JSON object, or a text line. */
typedef void (*item_printer)(const gpufit_list *l, uint32_t i, int json);

/* Prints the items of a list, as the elements of a JSON array closed with "]}" (the caller
 * opened it) or as text lines; returns how many. */
static uint32_t print_items(const gpufit_list *l, int json, item_printer item)
{
    uint32_t n = gpufit_list_count(l);
    for (uint32_t i = 0; i < n; i++) {
        if (json)
            printf("%s\n  ", i ? "," : "");
        item(l, i, json);
    }
    if (json)
        printf("%s]}\n", n ? "\n" : "");
    return n;
}

/* Builds the list of a subcommand; returns -1 or an exit code (the error printed). */
typedef int (*list_maker)(gpufit_list **l, const gpufit_model *m, const gpufit_job *j,
                          const cli_opts *o);
/* Prints the list of a subcommand (items through print_items). */
typedef void (*list_printer)(const gpufit_list *l, const cli_opts *o);

/* recommend and plan: the scenario, its list, printed; exit 0 when the list has an item. */
static int run_list_cmd(const char *cmd, int argc, char **argv, cli_opts *o, list_maker make,
                        list_printer print)
{
    int code = parse_opts(cmd, argc, argv, o);
    if (code >= 0)
        return code;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_list *l = NULL;
    code = load_scenario(o, &m, &j);
    if (code < 0)
        code = make(&l, m, j, o);
    if (code < 0) {
        print(l, o);
        code = gpufit_list_count(l) > 0 ? EXIT_FITS : EXIT_OOM;
    }
    gpufit_list_free(l);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return code;
}

/* gpufit recommend: which catalogue GPUs (and how many) fit the job, best first. */
static int make_recommendations(gpufit_list **l, const gpufit_model *m, const gpufit_job *j,
                                const cli_opts *o)
{
    int32_t ids[64];
    uint32_t n_ids = 0;
    for (const char *p = o->only; p != NULL && *p != '\0' && n_ids < 64;) {
        char name[64];
        size_t n = strcspn(p, ",");
        gpufit_gpu_info g = {.struct_size = sizeof g};
        snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), p);
        if (gpufit_gpu_by_name(name, &g) != GPUFIT_OK) {
            fprintf(stderr, "gpufit: --only: '%s' is not in the catalogue (gpufit gpus)\n", name);
            return EXIT_BAD_INPUT;
        }
        ids[n_ids++] = g.id;
        p += n + (p[n] == ',');
    }
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (gpufit_recommend(l, m, j, ids, n_ids, (uint32_t)o->max_gpus, &err) != GPUFIT_OK) {
        print_error("recommend", &err, NULL);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

static void print_recommendation(const gpufit_list *l, uint32_t i, int json)
{
    gpufit_recommendation x = {.struct_size = sizeof x};
    gpufit_list_recommendation(l, i, &x);
    if (json) {
        printf("{\"gpu\": ");
        json_str(x.gpu_name);
        printf(", \"count\": %u, \"peak_bytes\": %llu, \"headroom_bytes\": %lld, "
               "\"price_usd\": %.0f, \"tflops\": %.1f, \"nvlink\": %s, \"reason\": ",
               x.count, (unsigned long long)x.peak_bytes, (long long)x.headroom_bytes,
               x.price_usd, x.tflops, x.has_nvlink ? "true" : "false");
        json_str(x.reason);
        printf(", \"spec\": "); /* the changes that reproduce it (docs/advice.md) */
        json_str(x.spec);
        printf(", \"changes\": %s}", x.spec_json);
        return;
    }
    printf("%2u. %s", i + 1, x.reason);
    if (x.price_usd > 0)
        printf(", about $%.0f, %.1f TFLOPS per $1000", x.price_usd, x.tflops_per_kusd);
    printf("\n    --spec \"%s\"\n", x.spec);
}

static void print_recommendations(const gpufit_list *l, const cli_opts *o)
{
    if (o->json)
        printf("{\"recommendations\": [");
    if (print_items(l, o->json, print_recommendation) == 0 && !o->json)
        printf("no catalogue GPU fits this job with up to %ld GPUs\n", o->max_gpus);
}

static int cmd_recommend(int argc, char **argv)
{
    cli_opts o = {0};
    o.max_gpus = 64;
    return run_list_cmd("recommend", argc, argv, &o, make_recommendations,
                        print_recommendations);
}

/* gpufit plan: the cheapest layouts that fit a cluster. */
static int make_plan(gpufit_list **l, const gpufit_model *m, const gpufit_job *j,
                     const cli_opts *o)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    if (gpufit_plan(l, m, j, (uint32_t)o->gpus_per_node, (uint32_t)o->nodes, (uint32_t)o->top,
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
               "\"headroom_bytes\": %lld, \"kv_capacity_tokens\": %llu}",
               y.spec_json, y.cost, (unsigned long long)y.peak_bytes,
               (long long)y.headroom_bytes, (unsigned long long)y.kv_capacity_tokens);
        return;
    }
    printf("%3u. cost %.3f  %7.2f GiB  %s", i + 1, y.cost, gib(y.peak_bytes), y.spec);
    if (y.kv_capacity_tokens > 0) /* serving: the room left for more sequences */
        printf("  (KV room %llu tokens per replica)", (unsigned long long)y.kv_capacity_tokens);
    putchar('\n');
}

static void print_layouts(const gpufit_list *l, const cli_opts *o)
{
    unsigned long long evaluated = (unsigned long long)gpufit_list_evaluated(l);
    if (o->json)
        printf("{\"evaluated\": %llu, \"layouts\": [", evaluated);
    else
        printf("%llu layouts evaluated on %ld x %ld GPUs; %u cheapest that fit (cost: "
               "docs/planner.md):\n",
               evaluated, o->nodes, o->gpus_per_node, gpufit_list_count(l));
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

static int cmd_plan(int argc, char **argv)
{
    cli_opts o = {0};
    o.gpus_per_node = 8;
    o.nodes = 1;
    o.top = 10;
    return run_list_cmd("plan", argc, argv, &o, make_plan, print_layouts);
}

static int cmd_models(void)
{
    printf("%-34s %16s %16s  %s\n", "name", "params", "active", "aliases");
    gpufit_preset_info p = {.struct_size = sizeof p};
    for (uint32_t i = 0; gpufit_preset_at(i, &p) == GPUFIT_OK; i++) {
        printf("%-34s %16llu %16llu  %s\n", p.name, (unsigned long long)p.n_params,
               (unsigned long long)p.n_active_params, p.aliases != NULL ? p.aliases : "");
        p.struct_size = sizeof p;
    }
    return EXIT_FITS;
}

static int cmd_gpus(void)
{
    printf("%-18s %-28s %10s %6s %5s %5s  %s\n", "key", "name", "GiB", "TB/s", "bf16", "fp8",
           "aliases");
    gpufit_gpu_info g = {.struct_size = sizeof g};
    for (uint32_t i = 0; gpufit_gpu_at(i, &g) == GPUFIT_OK; i++) {
        printf("%-18s %-28s %10.2f %6.2f %5s %5s  %s\n", g.key, g.name, gib(g.memory_bytes),
               g.memory_bandwidth_gbs / 1000.0, g.supports_bf16 ? "yes" : "no",
               g.supports_fp8 ? "yes" : "no", g.aliases != NULL ? g.aliases : "");
        g.struct_size = sizeof g;
    }
    return EXIT_FITS;
}

static int cmd_params(void)
{
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p)) {
        gpufit_param_info in = {.struct_size = sizeof in};
        if (gpufit_param_get_info(p, &in) != GPUFIT_OK)
            continue;
        printf("%-26s %-5s ", in.name, in.domain == GPUFIT_DOMAIN_MODEL ? "model" : "job");
        if (in.type == GPUFIT_TYPE_FLOAT) {
            printf("float  default %g, range [%g, %g]", in.default_float, in.min_float,
                   in.max_float);
        } else if (in.type == GPUFIT_TYPE_LIST && p == GPUFIT_JOB_DEVICE_GPUS) {
            printf("list   up to %lld entries, each a name from 'gpufit gpus' or an id in "
                   "[%.0f, %.0f]",
                   (long long)in.max_int, in.min_float, in.max_float);
        } else if (in.type == GPUFIT_TYPE_LIST) { /* max_int: entries; *_float: each entry */
            printf("list   up to %lld entries, each in [%g, %g]", (long long)in.max_int,
                   in.min_float, in.max_float);
        } else if (in.type == GPUFIT_TYPE_ENUM || in.type == GPUFIT_TYPE_BOOL) {
            const char *dn = gpufit_param_value_name(p, in.default_int);
            printf("%s default %s, values:", in.type == GPUFIT_TYPE_BOOL ? "bool " : "enum ",
                   dn != NULL ? dn : "?");
            const char *name;
            int64_t v;
            for (uint32_t k = 0; gpufit_param_value_at(p, k, &v, &name) == GPUFIT_OK; k++)
                printf(" %s", name);
        } else if (in.flags & GPUFIT_PARAM_FLAG_UNSET_DEFAULT) {
            printf("int    required (no default), range [%lld, %lld]", (long long)in.min_int,
                   (long long)in.max_int);
        } else if (strcmp(in.unit, "version") == 0) { /* releases are written as text */
            printf("text   default current, a release such as 0.6.3 or 12.4 (stored as "
                   "major x 1000000 + minor x 1000 + patch)");
        } else {
            printf("int    default %lld, range [%lld, %lld]", (long long)in.default_int,
                   (long long)in.min_int, (long long)in.max_int);
            if (p == GPUFIT_JOB_GPU)
                printf(", or a name from 'gpufit gpus'");
        }
        if (in.unit[0] != '\0')
            printf(" (%s)", in.unit);
        printf("\n    %s\n", in.doc);
    }
    return EXIT_FITS;
}

int main(int argc, char **argv)
{
    if (gpufit_version_number() != GPUFIT_VERSION_NUMBER) {
        fprintf(stderr, "gpufit: library version %s does not match the header\n",
                gpufit_version_string());
        return EXIT_INTERNAL;
    }
    if (argc < 2)
        return usage(stderr, EXIT_BAD_INPUT);
    const char *cmd = argv[1];
    for (int i = 2; i < argc; i++) /* COMMAND --help / -h, before any other argument */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            for (size_t k = 0; k < sizeof command_help / sizeof command_help[0]; k++)
                if (strcmp(cmd, command_help[k].cmd) == 0) {
                    fputs(command_help[k].help, stdout);
                    return EXIT_FITS;
                }
    if (strcmp(cmd, "estimate") == 0)
        return cmd_estimate(argc - 2, argv + 2);
    if (strcmp(cmd, "recommend") == 0)
        return cmd_recommend(argc - 2, argv + 2);
    if (strcmp(cmd, "plan") == 0)
        return cmd_plan(argc - 2, argv + 2);
    if (strcmp(cmd, "calibrate") == 0)
        return cmd_calibrate(argc - 2, argv + 2);
    if (strcmp(cmd, "models") == 0)
        return cmd_models();
    if (strcmp(cmd, "gpus") == 0)
        return cmd_gpus();
    if (strcmp(cmd, "params") == 0)
        return cmd_params();
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("gpufit %s\n", gpufit_version_string());
        return EXIT_FITS;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return usage(stdout, EXIT_FITS);
    fprintf(stderr, "gpufit: unknown %s '%s' (commands: %s; see gpufit --help)\n",
            cmd[0] == '-' ? "option" : "command", cmd, command_names);
    return EXIT_BAD_INPUT;
}
