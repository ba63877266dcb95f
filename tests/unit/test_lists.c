/* SPDX-License-Identifier: MIT */
/* List parameters (GPUFIT_TYPE_LIST): tensor_split and device_gpus, through
 * gpufit_job_set_list/get_list, spec strings ("tensor_split=3,1") and JSON (arrays of numbers
 * or GPU names, a "3,1" string). What the calls refuse is in test_bad_params.c. */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static gpufit_job *new_job(void)
{
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    return j;
}

/* The list p of j, into v (GPUFIT_LIST_MAX entries); returns its length. */
static uint32_t get(const gpufit_job *j, int32_t p, double *v)
{
    uint32_t n = UINT32_MAX;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_job_get_list(j, p, v, GPUFIT_LIST_MAX, &n, &err), GPUFIT_OK, "%s",
                 err.message);
    cr_assert(n <= GPUFIT_LIST_MAX);
    return n;
}

static void assert_list(const gpufit_job *j, int32_t p, const double *want, uint32_t n)
{
    double v[GPUFIT_LIST_MAX];
    uint32_t got = get(j, p, v);
    cr_assert_eq(got, n, "param %d: %u entries, want %u", p, got, n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert(v[i] == want[i], "param %d entry %u: %g, want %g", p, i, v[i], want[i]);
}

static double gpu_id(const char *name)
{
    gpufit_gpu_info g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    cr_assert_eq(gpufit_gpu_by_name(name, &g), GPUFIT_OK, "%s", name);
    return (double)g.id;
}

static void apply_spec_ok(gpufit_job *j, const char *spec)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_spec(NULL, j, spec, &err), GPUFIT_OK, "'%s': %s", spec, err.message);
}

static void apply_json_ok(gpufit_job *j, const char *doc)
{
    gpufit_model *m = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_apply_json(m, j, doc, strlen(doc), &err), GPUFIT_OK, "%s: %s", doc,
                 err.message);
    gpufit_model_free(m);
}

Test(lists, info)
{
    static const struct {
        int32_t id;
        const char *name;
        double max_float;
    } lists[] = {{GPUFIT_JOB_TENSOR_SPLIT, "tensor_split", 1e6},
                 {GPUFIT_JOB_DEVICE_GPUS, "device_gpus", 1048576.0}};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        gpufit_param_info in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        cr_assert_eq(gpufit_param_get_info(lists[k].id, &in), GPUFIT_OK);
        cr_assert_eq(in.struct_size, sizeof in);
        cr_assert_eq(in.id, lists[k].id);
        cr_assert_str_eq(in.name, lists[k].name);
        cr_assert_eq(in.type, GPUFIT_TYPE_LIST);
        cr_assert_eq(in.domain, GPUFIT_DOMAIN_JOB);
        /* min_int/max_int: the count; min_float/max_float: each element */
        cr_assert_eq(in.min_int, 0);
        cr_assert_eq(in.max_int, GPUFIT_LIST_MAX);
        cr_assert_eq(in.default_int, 0);
        cr_assert(in.min_float == 0.0);
        cr_assert(in.max_float == lists[k].max_float, "%s: max_float %g", in.name, in.max_float);
        cr_assert(in.default_float == 0.0);
        cr_assert_eq(in.flags, 0u);
        cr_assert_eq(in.since, 100u);
        cr_assert(in.doc != NULL && in.doc[0] != '\0');
        int32_t id = 0;
        cr_assert_eq(gpufit_param_by_name(lists[k].name, &id), GPUFIT_OK);
        cr_assert_eq(id, lists[k].id);
        /* no named values */
        int64_t v = 0;
        cr_assert_eq(gpufit_param_value_at(lists[k].id, 0, &v, NULL), GPUFIT_E_NOT_FOUND);
        cr_assert_null(gpufit_param_value_name(lists[k].id, 0));
    }
    cr_assert_eq(gpufit_param_get_info(GPUFIT_JOB_TENSOR_SPLIT, NULL), GPUFIT_E_INVALID_ARG);
}

Test(lists, new_job_has_empty_lists)
{
    gpufit_job *j = new_job();
    double v[GPUFIT_LIST_MAX];
    cr_assert_eq(get(j, GPUFIT_JOB_TENSOR_SPLIT, v), 0u);
    cr_assert_eq(get(j, GPUFIT_JOB_DEVICE_GPUS, v), 0u);
    uint32_t n = 7;
    cr_assert_eq(gpufit_job_get_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0, &n, NULL), GPUFIT_OK);
    cr_assert_eq(n, 0u);
    gpufit_job_free(j);
}

Test(lists, set_get_round_trip)
{
    gpufit_job *j = new_job();
    gpufit_error err = GPUFIT_ERROR_INIT;
    const double split[4] = {3.0, 1.0, 0.0, 0.25};
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_TENSOR_SPLIT, split, 4, &err), GPUFIT_OK, "%s",
                 err.message);
    cr_assert_eq(err.status, GPUFIT_OK);
    cr_assert_eq(err.message[0], '\0');
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, split, 4);
    /* a shorter list replaces it */
    const double two[2] = {1.0, 1.0};
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_TENSOR_SPLIT, two, 2, NULL), GPUFIT_OK);
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, two, 2);
    /* GPUFIT_LIST_MAX entries, each bound of the element range */
    double full[GPUFIT_LIST_MAX];
    for (uint32_t i = 0; i < GPUFIT_LIST_MAX; i++)
        full[i] = i % 2 == 0 ? 0.0 : 1e6;
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_TENSOR_SPLIT, full, GPUFIT_LIST_MAX, NULL),
                 GPUFIT_OK);
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, full, GPUFIT_LIST_MAX);
    /* GPU ids */
    const double gpus[3] = {gpu_id("h100"), gpu_id("rtx-4090"), gpu_id("h100")};
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_DEVICE_GPUS, gpus, 3, NULL), GPUFIT_OK);
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, gpus, 3);
    /* the two lists are independent */
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, full, GPUFIT_LIST_MAX);
    /* a copy carries both, and is independent */
    gpufit_job *c = NULL;
    cr_assert_eq(gpufit_job_copy(&c, j, NULL), GPUFIT_OK);
    assert_list(c, GPUFIT_JOB_DEVICE_GPUS, gpus, 3);
    assert_list(c, GPUFIT_JOB_TENSOR_SPLIT, full, GPUFIT_LIST_MAX);
    cr_assert_eq(gpufit_job_set_list(c, GPUFIT_JOB_DEVICE_GPUS, NULL, 0, NULL), GPUFIT_OK);
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, gpus, 3);
    /* n = 0 clears (values may be NULL) */
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0, &err), GPUFIT_OK);
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0);
    cr_assert_eq(gpufit_job_set_list(j, GPUFIT_JOB_DEVICE_GPUS, gpus, 0, &err), GPUFIT_OK);
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, NULL, 0);
    gpufit_job_free(c);
    gpufit_job_free(j);
}

Test(lists, spec_comma_lists)
{
    gpufit_job *j = new_job();
    /* a comma followed by a run without '=' continues the list; "tp=2,dp=1" is two pairs */
    apply_spec_ok(j, "tensor_split=3,1 pp=2 tp=2,dp=1");
    const double want[2] = {3.0, 1.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, want, 2);
    int64_t v = 0;
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_PP, &v, NULL), GPUFIT_OK);
    cr_assert_eq(v, 2);
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_TP, &v, NULL), GPUFIT_OK);
    cr_assert_eq(v, 2);
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_DP, &v, NULL), GPUFIT_OK);
    cr_assert_eq(v, 1);
    /* a list ends at a comma followed by key=: "...,pp=4" */
    apply_spec_ok(j, "tensor_split=1,2,3,pp=4");
    const double three[3] = {1.0, 2.0, 3.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, three, 3);
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_PP, &v, NULL), GPUFIT_OK);
    cr_assert_eq(v, 4);
    /* quoted; fractions and exponents; a trailing comma is a separator */
    apply_spec_ok(j, "tensor_split=\"0.5,1.5\"");
    const double halves[2] = {0.5, 1.5};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, halves, 2);
    apply_spec_ok(j, "tensor_split=1e2,0,");
    const double hundred[2] = {100.0, 0.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, hundred, 2);
    /* one entry */
    apply_spec_ok(j, "tensor_split=7");
    const double seven[1] = {7.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, seven, 1);
    /* 16 entries */
    apply_spec_ok(j, "tensor_split=1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2");
    double v16[GPUFIT_LIST_MAX];
    cr_assert_eq(get(j, GPUFIT_JOB_TENSOR_SPLIT, v16), 16u);
    cr_assert(v16[15] == 2.0);
    /* "none" (any case) clears */
    apply_spec_ok(j, "tensor_split=none");
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0);
    apply_spec_ok(j, "tensor_split=3,1");
    apply_spec_ok(j, "tensor_split=NONE");
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0);
    /* a later spec overrides (within one spec a key given twice is an error) */
    apply_spec_ok(j, "tensor_split=3,1");
    apply_spec_ok(j, "tensor_split=1,3");
    const double later[2] = {1.0, 3.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, later, 2);
    gpufit_job_free(j);
}

Test(lists, spec_device_gpus_names_and_ids)
{
    gpufit_job *j = new_job();
    apply_spec_ok(j, "device_gpus=rtx-4090,h100 pp=2");
    const double want[2] = {gpu_id("rtx-4090"), gpu_id("h100")};
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, want, 2);
    /* names are case-insensitive, ids are accepted, and both mix */
    char spec[128];
    snprintf(spec, sizeof spec, "device_gpus=RTX-4090,%d,h100", (int)gpu_id("a100-80gb"));
    apply_spec_ok(j, spec);
    const double mixed[3] = {gpu_id("rtx-4090"), gpu_id("a100-80gb"), gpu_id("h100")};
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, mixed, 3);
    /* the gpu key is untouched by device_gpus */
    int64_t g = 0;
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_GPU, &g, NULL), GPUFIT_OK);
    cr_assert_eq(g, -1);
    apply_spec_ok(j, "device_gpus=none");
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, NULL, 0);
    gpufit_job_free(j);
}

Test(lists, json_arrays_strings_and_clearing)
{
    gpufit_job *j = new_job();
    apply_json_ok(j, "{\"tensor_split\": [3, 1.5, 0]}");
    const double nums[3] = {3.0, 1.5, 0.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, nums, 3);
    /* numbers as strings in an array, the spec form in a string, a single number */
    apply_json_ok(j, "{\"tensor_split\": [\"2\", 2]}");
    const double twos[2] = {2.0, 2.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, twos, 2);
    apply_json_ok(j, "{\"tensor_split\": \"3,1\"}");
    const double s31[2] = {3.0, 1.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, s31, 2);
    apply_json_ok(j, "{\"tensor_split\": 5}");
    const double five[1] = {5.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, five, 1);
    /* [] and "none" clear */
    apply_json_ok(j, "{\"tensor_split\": []}");
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0);
    apply_json_ok(j, "{\"tensor_split\": [1, 1], \"tp\": 2}");
    const double ones[2] = {1.0, 1.0};
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, ones, 2);
    apply_json_ok(j, "{\"tensor_split\": \"none\"}");
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0);
    apply_json_ok(j, "{\"tensor_split\": [ ]}");
    assert_list(j, GPUFIT_JOB_TENSOR_SPLIT, NULL, 0);
    /* GPU names, case-insensitive, and ids, resolved to catalogue ids */
    apply_json_ok(j, "{\"device_gpus\": [\"rtx-4090\", \"H100\"], \"pp\": 2}");
    const double gpus[2] = {gpu_id("rtx-4090"), gpu_id("h100")};
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, gpus, 2);
    char doc[128];
    snprintf(doc, sizeof doc, "{\"device_gpus\": [%d, \"rtx-4090\"]}", (int)gpu_id("h100"));
    apply_json_ok(j, doc);
    const double back[2] = {gpu_id("h100"), gpu_id("rtx-4090")};
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, back, 2);
    apply_json_ok(j, "{\"device_gpus\": \"h100,rtx-4090\"}");
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, back, 2);
    /* 16 names fit */
    apply_json_ok(j, "{\"device_gpus\": [\"a100-80gb\", \"a100-80gb\", \"a100-80gb\", "
                     "\"a100-80gb\", \"a100-80gb\", \"a100-80gb\", \"a100-80gb\", \"a100-80gb\", "
                     "\"a100-80gb\", \"a100-80gb\", \"a100-80gb\", \"a100-80gb\", \"a100-80gb\", "
                     "\"a100-80gb\", \"a100-80gb\", \"rtx-4090\"]}");
    double v[GPUFIT_LIST_MAX];
    cr_assert_eq(get(j, GPUFIT_JOB_DEVICE_GPUS, v), 16u);
    cr_assert(v[0] == gpu_id("a100-80gb") && v[15] == gpu_id("rtx-4090"));
    apply_json_ok(j, "{\"device_gpus\": []}");
    assert_list(j, GPUFIT_JOB_DEVICE_GPUS, NULL, 0);
    gpufit_job_free(j);
}

Test(lists, json_and_spec_agree)
{
    gpufit_job *a = new_job(), *b = new_job();
    apply_spec_ok(a, "tensor_split=3,1 device_gpus=h100,rtx-4090");
    apply_json_ok(b, "{\"tensor_split\": [3, 1], \"device_gpus\": [\"h100\", \"rtx-4090\"]}");
    double va[GPUFIT_LIST_MAX], vb[GPUFIT_LIST_MAX];
    static const int32_t lists[] = {GPUFIT_JOB_TENSOR_SPLIT, GPUFIT_JOB_DEVICE_GPUS};
    for (size_t k = 0; k < 2; k++) {
        uint32_t na = get(a, lists[k], va), nb = get(b, lists[k], vb);
        cr_assert_eq(na, 2u);
        cr_assert_eq(na, nb);
        cr_assert(memcmp(va, vb, na * sizeof va[0]) == 0);
    }
    gpufit_job_free(a);
    gpufit_job_free(b);
}
