/* SPDX-License-Identifier: MIT */
/* Inputs that cannot be misread (issue 13 item 2): duplicate keys in one document, conflicting
 * capacity keys, a capacity that rounds to nothing, non-zero unknown tails of input structs. */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

typedef struct handles {
    gpufit_model *m;
    gpufit_job *j;
    gpufit_error err;
} handles;

static void open_h(handles *h)
{
    h->err = (gpufit_error)GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&h->m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&h->j, NULL), GPUFIT_OK);
}

static void close_h(handles *h)
{
    gpufit_job_free(h->j);
    gpufit_model_free(h->m);
}

static int32_t spec(handles *h, const char *s)
{
    return gpufit_apply_spec(h->m, h->j, s, &h->err);
}

static int32_t json(handles *h, const char *s)
{
    return gpufit_apply_json(h->m, h->j, s, strlen(s), &h->err);
}

static int64_t job_int(handles *h, int32_t p)
{
    int64_t v = -99;
    cr_assert_eq(gpufit_job_get_int(h->j, p, &v, NULL), GPUFIT_OK);
    return v;
}

/* ---- spec strings ---------------------------------------------------------------------- */
Test(inputs, spec_duplicate_key_names_both_offsets)
{
    handles h;
    open_h(&h);
    cr_assert_eq(spec(&h, "pp=2 pp=4"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_PP);
    cr_assert_eq(h.err.offset, 5);
    cr_assert(strstr(h.err.message, "duplicate key 'pp'") != NULL, "%s", h.err.message);
    cr_assert(strstr(h.err.message, "bytes 0 and 5") != NULL, "%s", h.err.message);
    cr_assert_eq(job_int(&h, GPUFIT_JOB_PP), 1); /* nothing applied */
    close_h(&h);
}

Test(inputs, spec_duplicate_through_an_alias)
{
    handles h;
    open_h(&h);
    cr_assert_eq(spec(&h, "micro_batch=2 tp=2 mbs=4"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_MICRO_BATCH);
    cr_assert_eq(h.err.offset, 19);
    cr_assert(strstr(h.err.message, "'mbs'") != NULL, "%s", h.err.message);
    close_h(&h);
}

Test(inputs, spec_duplicate_model_and_gpu)
{
    handles h;
    open_h(&h);
    cr_assert_eq(spec(&h, "model=llama-3-8b gpu=h100 model=llama-3-70b"), GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(h.err.message, "duplicate key 'model'") != NULL, "%s", h.err.message);
    cr_assert_eq(h.err.offset, 26);
    cr_assert_eq(spec(&h, "gpu=h100 gpu=a100-80gb"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU);
    close_h(&h);
}

Test(inputs, spec_override_across_documents_is_allowed)
{
    handles h;
    open_h(&h);
    cr_assert_eq(spec(&h, "pp=2"), GPUFIT_OK);
    cr_assert_eq(spec(&h, "pp=4"), GPUFIT_OK);
    cr_assert_eq(job_int(&h, GPUFIT_JOB_PP), 4);
    close_h(&h);
}

Test(inputs, spec_capacity_keys_conflict_in_either_order)
{
    handles h;
    open_h(&h);
    cr_assert_eq(spec(&h, "gpu_memory_gib=40 gpu_memory_bytes=1000000"), GPUFIT_E_INCONSISTENT);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU_MEMORY_BYTES);
    cr_assert_eq(h.err.offset, 18);
    cr_assert(strstr(h.err.message, "gpu_memory_gib") != NULL, "%s", h.err.message);
    cr_assert(strstr(h.err.message, "gpu_memory_bytes") != NULL, "%s", h.err.message);
    cr_assert_eq(spec(&h, "gpu_memory_bytes=1000000 gpu_memory_gib=40"), GPUFIT_E_INCONSISTENT);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU_MEMORY_GIB);
    cr_assert_eq(job_int(&h, GPUFIT_JOB_GPU_MEMORY_BYTES), 0);
    close_h(&h);
}

/* ---- a capacity that rounds to nothing --------------------------------------------------- */
/* "gpu" applies first wherever it stands: a capacity key overrides a catalogue GPU's capacity
 * in either order (it used to be reset when gpu came second: 80 GiB instead of 40). */
Test(inputs, gpu_and_capacity_are_order_free)
{
    static const char *const docs[] = {
        "gpu=h100 gpu_memory_gib=40",
        "gpu_memory_gib=40 gpu=h100",
        "gpu_memory_bytes=40GiB gpu=h100",
        "{\"gpu\": \"h100\", \"gpu_memory_gib\": 40}",
        "{\"gpu_memory_gib\": 40, \"gpu\": \"h100\"}",
        "{\"gpu_memory_bytes\": 42949672960, \"gpu\": \"h100\"}",
        "gpu=24GiB gpu_memory_gib=40",
        "gpu_memory_gib=40 gpu=24GiB",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        handles h;
        open_h(&h);
        int32_t st = docs[i][0] == '{' ? json(&h, docs[i]) : spec(&h, docs[i]);
        cr_assert_eq(st, GPUFIT_OK, "%s: %s", docs[i], h.err.message);
        cr_expect_eq(job_int(&h, GPUFIT_JOB_GPU_MEMORY_BYTES), (int64_t)40 << 30, "%s",
                     docs[i]);
        if (strstr(docs[i], "h100") != NULL)
            cr_expect(job_int(&h, GPUFIT_JOB_GPU) >= 0, "%s: the catalogue GPU is kept", docs[i]);
        close_h(&h);
    }
}

Test(inputs, tiny_capacity_is_an_error)
{
    handles h;
    open_h(&h);
    cr_assert_eq(spec(&h, "gpu=h100 gpu_memory_gib=1e-300"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU_MEMORY_GIB);
    cr_assert(strstr(h.err.message, "gpu_memory_gib") != NULL, "%s", h.err.message);
    cr_assert_eq(gpufit_job_set_float(h.j, GPUFIT_JOB_GPU_MEMORY_GIB, 1e-300, &h.err),
                 GPUFIT_E_INVALID_ARG);
    double g = -1.0;
    cr_assert_eq(gpufit_job_get_float(h.j, GPUFIT_JOB_GPU_MEMORY_GIB, &g, NULL), GPUFIT_OK);
    cr_assert_eq(g, 0.0); /* unchanged */
    cr_assert_eq(spec(&h, "gpu=1e-300GiB"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU);
    /* one byte and 0 (the GPU's own) still work */
    cr_assert_eq(spec(&h, "gpu_memory_gib=0"), GPUFIT_OK);
    cr_assert_eq(spec(&h, "gpu_memory_gib=1e-9"), GPUFIT_OK);
    cr_assert_eq(job_int(&h, GPUFIT_JOB_GPU_MEMORY_BYTES), 1);
    close_h(&h);
}

/* ---- JSON scenarios ----------------------------------------------------------------------- */
Test(inputs, json_duplicate_top_level_key)
{
    handles h;
    open_h(&h);
    const char *doc = "{\"pp\": 2, \"pp\": 4}";
    cr_assert_eq(json(&h, doc), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_PP);
    cr_assert_eq(h.err.offset, 10);
    cr_assert(strstr(h.err.message, "bytes 1 and 10") != NULL, "%s", h.err.message);
    cr_assert_eq(job_int(&h, GPUFIT_JOB_PP), 1);
    close_h(&h);
}

Test(inputs, json_duplicate_model_gpu_and_nested)
{
    handles h;
    open_h(&h);
    cr_assert_eq(json(&h, "{\"model\": \"llama-3-8b\", \"model\": \"llama-3-70b\"}"),
                 GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(h.err.message, "duplicate key 'model'") != NULL, "%s", h.err.message);
    cr_assert_eq(json(&h, "{\"gpu\": \"h100\", \"tp\": 1, \"gpu\": \"a100-80gb\"}"),
                 GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU);
    /* a model key in the model object and again at the top level */
    cr_assert_eq(json(&h, "{\"model\": {\"preset\": \"llama-3-8b\", \"n_layers\": 4}, "
                          "\"n_layers\": 8}"),
                 GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_MODEL_N_LAYERS);
    cr_assert_eq(json(&h, "{\"model\": {\"preset\": \"llama-3-8b\", \"preset\": \"llama-3-70b\"}}"),
                 GPUFIT_E_INVALID_ARG);
    cr_assert(strstr(h.err.message, "model.preset") != NULL, "%s", h.err.message);
    cr_assert_eq(json(&h, "{\"gpu\": {\"memory_gib\": 24, \"memory_gib\": 48}}"),
                 GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU_MEMORY_GIB);
    /* ignored keys may repeat */
    cr_assert_eq(json(&h, "{\"comment\": \"a\", \"comment\": \"b\", \"_x\": 1, \"_x\": 2}"),
                 GPUFIT_OK);
    close_h(&h);
}

Test(inputs, json_capacity_keys_conflict)
{
    handles h;
    open_h(&h);
    cr_assert_eq(json(&h, "{\"gpu_memory_gib\": 40, \"gpu_memory_bytes\": 1000000}"),
                 GPUFIT_E_INCONSISTENT);
    cr_assert(strstr(h.err.message, "gpu_memory_gib") != NULL, "%s", h.err.message);
    cr_assert_eq(json(&h, "{\"gpu\": {\"memory_gib\": 24, \"memory_bytes\": 1000000}}"),
                 GPUFIT_E_INCONSISTENT);
    cr_assert_eq(json(&h, "{\"gpu\": {\"memory_gib\": 24}, \"gpu_memory_bytes\": 1000000}"),
                 GPUFIT_E_INCONSISTENT);
    cr_assert_eq(json(&h, "{\"gpu\": {\"name\": \"h100\", \"memory_gib\": 70}}"), GPUFIT_OK);
    cr_assert_eq(json(&h, "{\"gpu_memory_gib\": 1e-300}"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(h.err.param, GPUFIT_JOB_GPU_MEMORY_GIB);
    close_h(&h);
}

/* ---- API deviations ------------------------------------------------------------------------ */
Test(inputs, input_struct_unknown_tail_must_be_zero)
{
    gpufit_model *m = NULL;
    cr_assert_eq(gpufit_model_from_preset(&m, "llama-3-8b", NULL), GPUFIT_OK);
    uint64_t total = 0;
    cr_assert_eq(gpufit_model_param_count(m, &total, NULL, NULL), GPUFIT_OK);
    struct {
        gpufit_safetensors_info info;
        uint64_t tail[2];
    } big;
    memset(&big, 0, sizeof big);
    big.info.struct_size = sizeof big;
    big.info.n_params = total;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_check_safetensors(m, &big.info, &err), GPUFIT_OK, "%s",
                 err.message); /* a zero tail is fine */
    big.tail[1] = 1;
    cr_assert_eq(gpufit_model_check_safetensors(m, &big.info, &err), GPUFIT_E_STRUCT_SIZE);
    cr_assert(strstr(err.message, "must be zero") != NULL, "%s", err.message);
    gpufit_model_free(m);
}

Test(inputs, small_error_struct_gets_what_fits)
{
    /* an error struct cut after 16 bytes of message */
    struct {
        gpufit_error e;
    } box;
    memset(&box, 0x55, sizeof box);
    box.e.struct_size = (uint32_t)(offsetof(gpufit_error, message) + 16);
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, "tp=2 pp=x", &box.e), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(box.e.status, GPUFIT_E_INVALID_ARG);
    cr_assert_eq(box.e.param, GPUFIT_JOB_PP);
    cr_assert_eq(strlen(box.e.message), 15);
    cr_assert_eq((unsigned char)box.e.message[16], 0x55); /* nothing past struct_size */
    /* only struct_size and status */
    gpufit_error tiny;
    memset(&tiny, 0x55, sizeof tiny);
    tiny.struct_size = 8;
    cr_assert_eq(gpufit_apply_spec(m, j, "tp=x", &tiny), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(tiny.status, GPUFIT_E_INVALID_ARG);
    cr_assert_eq((uint32_t)tiny.param, 0x55555555u);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* ---- keys that do not apply ----------------------------------------------------------------- */
static int32_t eval_status(const char *s, gpufit_error *err)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    int32_t st = gpufit_apply_spec(m, j, s, err);
    if (st == GPUFIT_OK)
        st = gpufit_evaluate(&r, m, j, err);
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return st;
}

Test(inputs, keys_that_do_not_apply_are_errors)
{
    static const struct {
        const char *spec;
        int32_t param;
    } cases[] = {
        {"model=llama-3-8b experts_per_token=2", GPUFIT_MODEL_EXPERTS_PER_TOKEN},
        {"model=llama-3-8b n_shared_experts=1", GPUFIT_MODEL_N_SHARED_EXPERTS},
        {"model=llama-3-8b n_encoder_layers=4", GPUFIT_MODEL_N_ENCODER_LAYERS},
        {"model=llama-3-8b qk_rope_head_dim=64", GPUFIT_MODEL_QK_ROPE_HEAD_DIM},
        {"model=llama-3-8b task=inference framework=vllm n_gpu_layers=4",
         GPUFIT_JOB_N_GPU_LAYERS},
        {"model=llama-3-8b task=inference framework=sglang n_gpu_layers=4",
         GPUFIT_JOB_N_GPU_LAYERS},
        {"model=llama-3-8b task=finetune n_gpu_layers=4", GPUFIT_JOB_N_GPU_LAYERS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpufit_error err = GPUFIT_ERROR_INIT;
        char s[256];
        snprintf(s, sizeof s, "%s gpu=h100", cases[i].spec);
        cr_assert_eq(eval_status(s, &err), GPUFIT_E_INCONSISTENT, "%s: %s", s, err.message);
        cr_assert_eq(err.param, cases[i].param, "%s: %s", s, err.message);
        cr_assert(strstr(err.message, "does not apply") != NULL, "%s", err.message);
    }
    /* where they apply, and at their defaults, they are fine */
    static const char *const ok[] = {
        "model=mixtral-8x7b experts_per_token=1",
        "model=llama-3-8b task=inference framework=llamacpp n_gpu_layers=4",
        "model=llama-3-8b task=inference framework=pytorch n_gpu_layers=4",
        "model=llama-3-8b task=inference framework=vllm n_gpu_layers=-1",
        "model=llama-3-8b experts_per_token=0",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        gpufit_error err = GPUFIT_ERROR_INIT;
        char s[256];
        snprintf(s, sizeof s, "%s gpu=h100", ok[i]);
        cr_assert_eq(eval_status(s, &err), GPUFIT_OK, "%s: %s", s, err.message);
    }
}
