/* SPDX-License-Identifier: MIT */
/* Unit tests of the GPU catalogue (lib/core/gpu_catalog.c, lib/core/gpu_catalog.inc).
 * Expected values: data/gpus.csv (a copy of shared/reference/gpus.csv) and memory-model.md section 8.5. */
#include <criterion/criterion.h>

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)

/* Every gpus.csv row, in CSV order (so id = position + 1), with its marketed memory_gib. */
static const struct {
    const char *name;
    uint64_t gib;
} csv_rows[] = {
    {"GeForce RTX 3060 12GB", 12},
    {"GeForce RTX 3070", 8},
    {"GeForce RTX 3080 10GB", 10},
    {"GeForce RTX 3090", 24},
    {"GeForce RTX 4090", 24},
    {"GeForce RTX 5090", 32},
    {"RTX A6000", 48},
    {"RTX 6000 Ada Generation", 48},
    {"L4", 24},
    {"L40S", 48},
    {"T4", 16},
    {"Tesla V100 SXM2 16GB", 16},
    {"Tesla V100 SXM2 32GB", 32},
    {"A10", 24},
    {"A100 40GB PCIe", 40},
    {"A100 80GB PCIe", 80},
    {"A100 40GB SXM4", 40},
    {"A100 80GB SXM4", 80},
    {"H100 PCIe", 80},
    {"H100 SXM5", 80},
    {"H100 NVL", 94},
    {"H200 SXM", 141},
    {"B200 (HGX)", 180},
    {"GB200 (per B200 GPU)", 186},
    {"Instinct MI250X", 128},
    {"Instinct MI300X", 192},
    {"Instinct MI325X", 256},
    {"Gaudi 2", 96},
    {"Gaudi 3", 128},
    {"GeForce RTX 4080", 16},
    {"GeForce RTX 4080 SUPER", 16},
    {"GeForce RTX 4070 Ti", 12},
    {"GeForce RTX 4070 Ti SUPER", 16},
    {"GeForce RTX 4070", 12},
    {"GeForce RTX 4060 Ti 16GB", 16},
    {"GeForce RTX 4060 Ti 8GB", 8},
    {"GeForce RTX 5080", 16},
    {"GeForce RTX 5070 Ti", 16},
    {"GeForce RTX 5070", 12},
    {"H20", 96},
};
#define N_CSV (sizeof csv_rows / sizeof csv_rows[0])

static gpufit_gpu_info info_init(void)
{
    gpufit_gpu_info g;
    memset(&g, 0, sizeof g);
    g.struct_size = (uint32_t)sizeof g;
    return g;
}

static gpufit_gpu_info must_find(const char *name)
{
    gpufit_gpu_info g = info_init();
    int32_t st = gpufit_gpu_by_name(name, &g);
    cr_assert_eq(st, GPUFIT_OK, "gpufit_gpu_by_name(\"%s\") = %d", name, (int)st);
    return g;
}

Test(gpus, every_csv_row_in_order)
{
    cr_assert_eq(gpufit__gpu_count(), N_CSV);
    for (size_t i = 0; i < N_CSV; i++) {
        gpufit_gpu_info g = info_init();
        cr_assert_eq(gpufit_gpu_at((uint32_t)i, &g), GPUFIT_OK);
        cr_assert_str_eq(g.name, csv_rows[i].name);
        cr_assert_eq(g.id, (int32_t)(i + 1), "%s: id %d", g.name, (int)g.id);
        cr_assert_eq(g.marketed_bytes, csv_rows[i].gib * GIB, "%s", g.name);
        cr_assert(g.memory_bytes > 0 && g.memory_bytes <= g.marketed_bytes, "%s", g.name);
        if (!g.usable_known)
            cr_assert_eq(g.memory_bytes, g.marketed_bytes, "%s", g.name);
        cr_assert(g.bf16_tflops > 0.0, "%s", g.name);
        cr_assert(g.memory_bandwidth_gbs > 0.0, "%s", g.name);
        cr_assert(g.launch_year >= 2017 && g.launch_year <= 2025, "%s", g.name);
        cr_assert(g.key != NULL && g.aliases != NULL && g.vendor != NULL && g.architecture != NULL);
        for (const char *p = g.key; *p; p++)
            cr_assert((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-',
                      "key %s is not a lowercase slug", g.key);

        gpufit_gpu_info by_name = must_find(csv_rows[i].name);
        cr_assert_eq(by_name.id, g.id);
        const gpufit__gpu *row = gpufit__gpu_by_id(g.id);
        cr_assert_not_null(row);
        cr_assert_eq(row, gpufit__gpu_at(i));
        cr_assert_str_eq(row->name, g.name);
    }
    cr_assert_null(gpufit__gpu_at(N_CSV));
    cr_assert_null(gpufit__gpu_by_id(0));
    cr_assert_null(gpufit__gpu_by_id(-1));
    cr_assert_null(gpufit__gpu_by_id((int64_t)N_CSV + 1));
}

/* Cross-checks the table against the CSV itself when it is readable (first field of each
 * row; no row quotes its name). GPUFIT_GPUS_CSV overrides the path. */
Test(gpus, csv_file_rows_present)
{
    const char *path = getenv("GPUFIT_GPUS_CSV");
    FILE *f = fopen(path ? path : "data/gpus.csv", "r");
    if (f == NULL)
        cr_skip_test("gpus.csv not readable from here; set GPUFIT_GPUS_CSV");
    char line[4096];
    size_t rows = 0;
    cr_assert_not_null(fgets(line, sizeof line, f), "empty CSV");
    cr_assert_eq(strncmp(line, "name,", 5), 0);
    while (fgets(line, sizeof line, f) != NULL) {
        char *comma = strchr(line, ',');
        if (comma == NULL)
            continue;
        *comma = '\0';
        const gpufit__gpu *g = gpufit__gpu_find(line, strlen(line));
        cr_assert_not_null(g, "CSV row %s missing from the catalogue", line);
        cr_assert_str_eq(g->name, line);
        cr_assert_eq(g->id, (int32_t)(rows + 1), "%s: ids follow CSV order", line);
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, gpufit__gpu_count());
}

/* memory-model.md section 8.5 nvidia-smi totals. */
Test(gpus, exact_capacities)
{
    static const struct {
        const char *name;
        uint64_t bytes;
    } want[] = {
        {"H100 SXM5", UINT64_C(85520809984)},
        {"A100 80GB SXM4", UINT64_C(85899345920)},
        {"GeForce RTX 4090", UINT64_C(25757220864)},
        {"GeForce RTX 3090", UINT64_C(25769803776)},
        {"T4", UINT64_C(16106127360)},
        {"A100 40GB SXM4", 40960 * MIB},
        {"A10", 23028 * MIB},
        {"L4", 23034 * MIB},
        {"L40S", 46068 * MIB},
        {"GeForce RTX 5090", 32607 * MIB},
        {"B200 (HGX)", 183359 * MIB},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gpufit_gpu_info g = must_find(want[i].name);
        cr_assert_eq(g.memory_bytes, want[i].bytes, "%s: %llu", want[i].name,
                     (unsigned long long)g.memory_bytes);
        cr_assert_eq(g.usable_known, 1, "%s", want[i].name);
    }
    gpufit_gpu_info h100 = must_find("h100");
    cr_assert_eq(h100.marketed_bytes, 80 * GIB);
    gpufit_gpu_info v100 = must_find("v100");
    cr_assert_eq(v100.usable_known, 0);
    cr_assert_eq(v100.memory_bytes, 16 * GIB);
}

Test(gpus, aliases_resolve)
{
    static const struct {
        const char *alias, *name;
    } want[] = {
        {"a100-80gb", "A100 80GB SXM4"},
        {"a100-40gb", "A100 40GB SXM4"},
        {"a100-80gb-pcie", "A100 80GB PCIe"},
        {"a100-40gb-pcie", "A100 40GB PCIe"},
        {"a100-80gb-sxm4", "A100 80GB SXM4"},
        {"h100-sxm-80gb", "H100 SXM5"},
        {"h100", "H100 SXM5"},
        {"h100-sxm", "H100 SXM5"},
        {"h100-sxm5", "H100 SXM5"},
        {"h100-pcie", "H100 PCIe"},
        {"h100-nvl", "H100 NVL"},
        {"h200", "H200 SXM"},
        {"b200", "B200 (HGX)"},
        {"gb200", "GB200 (per B200 GPU)"},
        {"rtx-4090", "GeForce RTX 4090"},
        {"4090", "GeForce RTX 4090"},
        {"rtx-3090", "GeForce RTX 3090"},
        {"rtx-3080", "GeForce RTX 3080 10GB"},
        {"rtx-3070", "GeForce RTX 3070"},
        {"rtx-3060-12gb", "GeForce RTX 3060 12GB"},
        {"rtx-3060", "GeForce RTX 3060 12GB"},
        {"rtx-5090", "GeForce RTX 5090"},
        {"rtx-a6000", "RTX A6000"},
        {"a6000", "RTX A6000"},
        {"rtx-6000-ada", "RTX 6000 Ada Generation"},
        {"l4", "L4"},
        {"l40s", "L40S"},
        {"t4", "T4"},
        {"a10", "A10"},
        {"v100-16gb", "Tesla V100 SXM2 16GB"},
        {"v100", "Tesla V100 SXM2 16GB"},
        {"v100-32gb", "Tesla V100 SXM2 32GB"},
        {"mi250x", "Instinct MI250X"},
        {"mi300x", "Instinct MI300X"},
        {"mi325x", "Instinct MI325X"},
        {"gaudi2", "Gaudi 2"},
        {"gaudi3", "Gaudi 3"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gpufit_gpu_info g = must_find(want[i].alias);
        cr_assert_str_eq(g.name, want[i].name, "%s -> %s", want[i].alias, g.name);
    }
}

/* Case and separator folding: '_' and ' ' match '-'. */
Test(gpus, lookup_folding)
{
    static const char *const h100[] = {"H100 SXM5", "h100_sxm5", "H100-SXM5",
                                       "h100 sxm5", "H100",      "H100_SXM_80GB"};
    for (size_t i = 0; i < sizeof h100 / sizeof h100[0]; i++)
        cr_assert_str_eq(must_find(h100[i]).name, "H100 SXM5", "%s", h100[i]);
    cr_assert_str_eq(must_find("RTX 4090").name, "GeForce RTX 4090");
    cr_assert_str_eq(must_find("geforce_rtx_4090").name, "GeForce RTX 4090");
    cr_assert_str_eq(must_find("GEFORCE RTX 4090").name, "GeForce RTX 4090");
    cr_assert_str_eq(must_find("b200 (hgx)").name, "B200 (HGX)");
    cr_assert_str_eq(must_find("Tesla V100 SXM2 32GB").name, "Tesla V100 SXM2 32GB");
    cr_assert_str_eq(must_find("instinct-mi300x").name, "Instinct MI300X");
    cr_assert_str_eq(must_find("Gaudi 2").name, "Gaudi 2");
    cr_assert_str_eq(must_find("gaudi-3").name, "Gaudi 3");

    /* Counted strings: only len bytes are compared. */
    const gpufit__gpu *g = gpufit__gpu_find("h100xyz", 4);
    cr_assert_not_null(g);
    cr_assert_str_eq(g->name, "H100 SXM5");
    cr_assert_null(gpufit__gpu_find("h100", 3));
    cr_assert_null(gpufit__gpu_find("h100", 0));
    cr_assert_null(gpufit__gpu_find(NULL, 4));
}

/* Every name, key and alias resolves to its own row, so no lookup name is ambiguous. */
Test(gpus, lookup_names_unambiguous)
{
    for (size_t i = 0; i < gpufit__gpu_count(); i++) {
        const gpufit__gpu *row = gpufit__gpu_at(i);
        cr_assert_eq(gpufit__gpu_find(row->name, strlen(row->name)), row, "%s", row->name);
        cr_assert_eq(gpufit__gpu_find(row->key, strlen(row->key)), row, "%s", row->key);
        const char *p = row->aliases;
        while (*p) {
            size_t n = strcspn(p, " ");
            cr_assert(n > 0, "%s: empty alias", row->name);
            cr_assert_eq(gpufit__gpu_find(p, n), row, "%s: alias %.*s", row->name, (int)n, p);
            p += n;
            if (*p == ' ')
                p++;
        }
    }
}

static int arch_is(const gpufit__gpu *g, const char *prefix)
{
    return strncmp(g->architecture, prefix, strlen(prefix)) == 0;
}

Test(gpus, precision_support)
{
    cr_assert_eq(must_find("v100-16gb").supports_bf16, 0);
    cr_assert_eq(must_find("v100-32gb").supports_bf16, 0);
    cr_assert_eq(must_find("t4").supports_bf16, 0);
    cr_assert_eq(must_find("a100-80gb").supports_bf16, 1);
    cr_assert_eq(must_find("h100").supports_fp8, 1);
    cr_assert_eq(must_find("rtx-4090").supports_fp8, 1);
    cr_assert_eq(must_find("a100-80gb").supports_fp8, 0);

    for (size_t i = 0; i < gpufit__gpu_count(); i++) {
        const gpufit__gpu *g = gpufit__gpu_at(i);
        int pre_ada = arch_is(g, "Volta") || arch_is(g, "Turing") || arch_is(g, "Ampere");
        int post_ampere = arch_is(g, "Ada") || arch_is(g, "Hopper") || arch_is(g, "Blackwell");
        if (pre_ada) {
            cr_assert_eq(g->supports_fp8, 0, "%s: fp8 before Ada", g->name);
            cr_assert(g->cc_major >= 7 && g->cc_major <= 8, "%s", g->name);
        }
        if (post_ampere)
            cr_assert_eq(g->supports_fp8, 1, "%s", g->name);
        if (!g->supports_fp8)
            cr_assert(g->fp8_tflops == 0.0, "%s: fp8 TFLOPS without fp8", g->name);
        else
            cr_assert(g->fp8_tflops > 0.0, "%s", g->name);
        if (strcmp(g->vendor, "NVIDIA") != 0)
            cr_assert_eq(g->cc_major, 0, "%s", g->name);
        else
            cr_assert(g->cc_major >= 7, "%s", g->name);
    }
}

/* CUDA compute capability majors (Volta 7.0, Turing 7.5, Ampere 8.x, Ada 8.9, Hopper 9.0,
 * B200 10.0, RTX 5090 12.0). */
Test(gpus, compute_capability)
{
    static const struct {
        const char *name;
        int32_t cc;
    } want[] = {
        {"v100", 7},      {"t4", 7},     {"a100-80gb", 8}, {"rtx-3090", 8}, {"rtx-4090", 8},
        {"l40s", 8},      {"h100", 9},   {"h200", 9},      {"h20", 9},      {"b200", 10},    {"gb200", 10},
        {"rtx-5090", 12}, {"mi300x", 0}, {"gaudi3", 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const gpufit__gpu *g = gpufit__gpu_find(want[i].name, strlen(want[i].name));
        cr_assert_not_null(g, "%s", want[i].name);
        cr_assert_eq(g->cc_major, want[i].cc, "%s: %d", want[i].name, (int)g->cc_major);
    }
}

Test(gpus, spot_values)
{
    gpufit_gpu_info h = must_find("h100");
    cr_assert_str_eq(h.key, "h100-sxm5");
    cr_assert_str_eq(h.vendor, "NVIDIA");
    cr_assert_str_eq(h.architecture, "Hopper (GH100)");
    cr_assert(h.memory_bandwidth_gbs == 3350.0);
    cr_assert(h.bf16_tflops == 989.4);
    cr_assert(h.fp8_tflops == 1978.9);
    cr_assert(h.nvlink_gbs == 900.0);
    cr_assert(h.msrp_usd == 0.0);
    cr_assert_eq(h.launch_year, 2022);
    gpufit_gpu_info r = must_find("4090");
    cr_assert(r.bf16_tflops == 165.2); /* fp32 accumulate, memory-model.md section 10 */
    cr_assert(r.nvlink_gbs == 0.0);
    cr_assert(r.msrp_usd == 1599.0);
    cr_assert(must_find("rtx-3090").nvlink_gbs == 112.5);
    cr_assert(must_find("mi300x").nvlink_gbs == 0.0); /* Infinity Fabric, not NVLink */
    cr_assert_str_eq(must_find("a100-80gb").key, "a100-80gb-sxm4");
    /* Strings are static: the same pointers on every call. */
    cr_assert_eq(must_find("h100-sxm5").name, h.name);
}

Test(gpus, bad_inputs)
{
    gpufit_gpu_info g = info_init();
    cr_assert_eq(gpufit_gpu_by_name(NULL, &g), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_gpu_by_name("h100", NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_gpu_by_name(NULL, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_gpu_at(0, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_gpu_at((uint32_t)N_CSV, &g), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_gpu_at(UINT32_MAX, &g), GPUFIT_E_NOT_FOUND);
    static const char *const unknown[] = {
        "", "h100x", "h10", "rtx-4090-ti", "a100", "nvidia", " - "};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        cr_assert_eq(gpufit_gpu_by_name(unknown[i], &g), GPUFIT_E_NOT_FOUND, "\"%s\"", unknown[i]);
    /* separators and leading vendor words do not matter (docs/gpus.md) */
    static const char *const same[] = {"h100 ", " h100", "h100--sxm5", "nvidia h100"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        cr_assert_eq(gpufit_gpu_by_name(same[i], &g), GPUFIT_OK, "\"%s\"", same[i]);
        cr_assert_str_eq(g.key, "h100-sxm5", "\"%s\"", same[i]);
    }
}

Test(gpus, struct_size_handling)
{
    /* Smaller than v1: rejected, nothing written. */
    static const uint32_t small[] = {0, 4, (uint32_t)sizeof(gpufit_gpu_info) - 1};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        gpufit_gpu_info g;
        memset(&g, 0x5A, sizeof g);
        g.struct_size = small[i];
        cr_assert_eq(gpufit_gpu_by_name("h100", &g), GPUFIT_E_STRUCT_SIZE);
        cr_assert_eq(g.struct_size, small[i]);
        cr_assert_eq(g.id, (int32_t)0x5A5A5A5A);
        cr_assert_eq(gpufit_gpu_at(0, &g), GPUFIT_E_STRUCT_SIZE);
        /* Also before the lookup fails. */
        cr_assert_eq(gpufit_gpu_at(UINT32_MAX, &g), GPUFIT_E_STRUCT_SIZE);
    }

    /* Larger (a newer caller): the v1 size is written back and the tail is left alone. */
    struct {
        gpufit_gpu_info info;
        unsigned char tail[64];
    } big;
    memset(&big, 0xA5, sizeof big);
    big.info.struct_size = (uint32_t)sizeof big;
    cr_assert_eq(gpufit_gpu_by_name("H100 SXM5", &big.info), GPUFIT_OK);
    cr_assert_eq(big.info.struct_size, (uint32_t)sizeof(gpufit_gpu_info));
    cr_assert_eq(big.info.memory_bytes, UINT64_C(85520809984));
    cr_assert(GPUFIT_HAS_FIELD(&big.info, gpufit_gpu_info, architecture));
    for (size_t i = 0; i < sizeof big.tail; i++)
        cr_assert_eq(big.tail[i], 0xA5, "tail byte %zu written", i);

    memset(&big, 0xA5, sizeof big);
    big.info.struct_size = (uint32_t)sizeof big;
    cr_assert_eq(gpufit_gpu_at(19, &big.info), GPUFIT_OK);
    cr_assert_eq(big.info.struct_size, (uint32_t)sizeof(gpufit_gpu_info));
    cr_assert_str_eq(big.info.name, "H100 SXM5");

    /* Exact size. */
    gpufit_gpu_info g = info_init();
    cr_assert_eq(gpufit_gpu_at(0, &g), GPUFIT_OK);
    cr_assert_eq(g.struct_size, (uint32_t)sizeof g);
}

/* The generated lookup index (gpu_index.inc) answers as the scan in row order it replaces:
 * every row's name, key and aliases, as typed in other cases and with vendor words and
 * separators, and names that are no GPU. */
Test(gpus, index_answers_as_the_row_scan)
{
    char q[128];
    size_t n_checked = 0;
    for (size_t i = 0; i < gpufit__gpu_count(); i++) {
        const gpufit__gpu *g = gpufit__gpu_at(i);
        const char *names[64];
        size_t k = 0;
        names[k++] = g->name;
        names[k++] = g->key;
        char al[512];
        snprintf(al, sizeof al, "%s", g->aliases);
        for (char *t = strtok(al, " "); t != NULL && k < 64; t = strtok(NULL, " "))
            names[k++] = t;
        for (size_t a = 0; a < k; a++) {
            static const char *const prefix[] = {"", "NVIDIA ", "nvidia-geforce-", ""};
            for (size_t f = 0; f < sizeof prefix / sizeof prefix[0]; f++) {
                snprintf(q, sizeof q, "%s%s%s", prefix[f], names[a], f == 3 ? " " : "");
                for (char *c = q; *c != '\0'; c++) /* upper case, '_' for '-' */
                    *c = *c == '-' ? '_' : (*c >= 'a' && *c <= 'z') ? (char)(*c - 32) : *c;
                const gpufit__gpu *want = gpufit__gpu_find_scan(q, strlen(q));
                cr_assert_not_null(want, "%s", q);
                cr_assert_eq(gpufit__gpu_find(q, strlen(q)), want, "%s", q);
                n_checked++;
            }
        }
    }
    cr_assert_gt(n_checked, 100);
    static const char *const none[] = {"", " ", "nvidia", "a100x", "h10", "rtx", "zz9", "4090ti",
                                       "NVIDIA GeForce"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        cr_assert_eq(gpufit__gpu_find(none[i], strlen(none[i])),
                     gpufit__gpu_find_scan(none[i], strlen(none[i])), "%s", none[i]);
    }
    cr_assert_null(gpufit__gpu_find("a100x", 5));
}
