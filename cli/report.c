/* SPDX-License-Identifier: MIT */
/* The command's output: the text report, the JSON report, lists. */
#define _POSIX_C_SOURCE 200809L /* open, fstat, opendir: model directories */

#include "cli.h"

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

double gib(uint64_t b)
{
    return (double)b / 1073741824.0;
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
void print_file_error(const char *path, const gpufit_error *err)
{
    fprintf(stderr, "gpufit: %s: %s (%s)", path, err->message, gpufit_status_str(err->status));
    if (err->offset != UINT64_MAX && !says_offset(err->message, err->offset))
        fprintf(stderr, " at byte %llu", (unsigned long long)err->offset);
    fputc('\n', stderr);
}

void print_error(const char *what, const gpufit_error *err, const char *text)
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

void print_text(const gpufit_result *r, const gpufit_summary *s)
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
    char res[512]; /* what every auto resolved to (docs/report.md) */
    if (gpufit_result_resolved(r, res, sizeof res, NULL) == GPUFIT_OK)
        printf("resolved: %s\n", res);
    char flags[512]; /* the job's own flags in its framework's words */
    if (gpufit_result_flags(r, flags, sizeof flags, NULL) == GPUFIT_OK && flags[0] != '\0')
        printf("flags: %s\n", flags);
    if (s->n_mitigations > 0)
        printf("\nwhat would make it fit, best first (cost: speed, quality or money lost):\n");
    for (uint32_t i = 0; i < s->n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        if (gpufit_result_mitigation(r, i, &mi) != GPUFIT_OK)
            continue;
        printf("  %2u. %-4s %8.2f GiB  %s\n           --spec \"%s\"\n", i + 1,
               mi.fits_after ? "fits" : "oom", gib(mi.peak_bytes_after), mi.text, mi.changes);
        if (mi.struct_size > offsetof(gpufit_mitigation_info, flags) && mi.flags != NULL &&
            strcmp(mi.flags, mi.changes) != 0) /* the framework's own words, when they differ */
            printf("           flags: %s\n", mi.flags);
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

int print_json_report(const gpufit_result *r)
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

/* Prints a JSON string literal. */
void json_str(const char *s)
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

/* Prints the items of a list, as the elements of a JSON array closed with "]}" (the caller
 * opened it) or as text lines; returns how many. */
uint32_t print_items(const gpufit_list *l, int json, item_printer item)
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

/* recommend and plan: the scenario, its list, printed; exit 0 when the list has an item. */
int run_list_cmd(const char *cmd, int argc, char **argv, cli_opts *o, list_maker make,
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
