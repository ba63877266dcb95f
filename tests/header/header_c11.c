/* SPDX-License-Identifier: MIT */
/* Compile-only test: include/gpufit.h on its own, as C11 (and C99: the Makefile compiles this
 * file twice), under -Wall -Wextra -Wpedantic -Werror -Wpadded. -Wpadded proves that no public
 * struct has implicit padding; the table below fixes the exact type of every public function,
 * so a silent signature change (int64_t -> double, a new parameter) fails to compile here.
 * Nothing is linked or run. */
#include "gpufit.h"

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
/* Every enum is forced to 32 bits by its *_MAX_ = 0x7FFFFFFF sentinel. */
_Static_assert(sizeof(gpufit_status) == 4, "gpufit_status is 32-bit");
_Static_assert(sizeof(gpufit_arch) == 4, "gpufit_arch is 32-bit");
_Static_assert(sizeof(gpufit_mlp) == 4, "gpufit_mlp is 32-bit");
_Static_assert(sizeof(gpufit_norm) == 4, "gpufit_norm is 32-bit");
_Static_assert(sizeof(gpufit_task) == 4, "gpufit_task is 32-bit");
_Static_assert(sizeof(gpufit_dtype) == 4, "gpufit_dtype is 32-bit");
_Static_assert(sizeof(gpufit_precision) == 4, "gpufit_precision is 32-bit");
_Static_assert(sizeof(gpufit_optimizer) == 4, "gpufit_optimizer is 32-bit");
_Static_assert(sizeof(gpufit_checkpointing) == 4, "gpufit_checkpointing is 32-bit");
_Static_assert(sizeof(gpufit_attention) == 4, "gpufit_attention is 32-bit");
_Static_assert(sizeof(gpufit_framework) == 4, "gpufit_framework is 32-bit");
_Static_assert(sizeof(gpufit_offload) == 4, "gpufit_offload is 32-bit");
_Static_assert(sizeof(gpufit_lora_targets) == 4, "gpufit_lora_targets is 32-bit");
_Static_assert(sizeof(gpufit_param) == 4, "gpufit_param is 32-bit");
_Static_assert(sizeof(gpufit_param_type) == 4, "gpufit_param_type is 32-bit");
_Static_assert(sizeof(gpufit_component) == 4, "gpufit_component is 32-bit");

/* Size-prefixed structs start with a uint32_t struct_size. */
#define GPUFIT_TEST_SIZED(type)                                                                    \
    _Static_assert(offsetof(type, struct_size) == 0 &&                                             \
                       sizeof(((type *)0)->struct_size) == sizeof(uint32_t),                       \
                   #type " starts with uint32_t struct_size")
GPUFIT_TEST_SIZED(gpufit_error);
GPUFIT_TEST_SIZED(gpufit_param_info);
GPUFIT_TEST_SIZED(gpufit_preset_info);
GPUFIT_TEST_SIZED(gpufit_gpu_info);
GPUFIT_TEST_SIZED(gpufit_summary);
GPUFIT_TEST_SIZED(gpufit_role_info);

/* The packed version number must be unambiguous. */
_Static_assert(GPUFIT_VERSION_MINOR < 100 && GPUFIT_VERSION_PATCH < 100,
               "MINOR and PATCH fit in two decimal digits of GPUFIT_VERSION_NUMBER");
_Static_assert(GPUFIT_VERSION_NUMBER ==
                   GPUFIT_VERSION_MAJOR * 10000 + GPUFIT_VERSION_MINOR * 100 + GPUFIT_VERSION_PATCH,
               "GPUFIT_VERSION_NUMBER is MAJOR*10000 + MINOR*100 + PATCH");
#endif

/* Every GPUFIT_API function, with its exact type. */
struct header_test_api {
    uint32_t (*version_number)(void);
    const char *(*version_string)(void);
    const char *(*status_str)(int32_t status);
    int32_t (*model_new)(gpufit_model **out, gpufit_error *err);
    int32_t (*model_from_preset)(gpufit_model **out, const char *name, gpufit_error *err);
    int32_t (*model_copy)(gpufit_model **out, const gpufit_model *m, gpufit_error *err);
    void (*model_free)(gpufit_model *m);
    const char *(*model_name)(const gpufit_model *m);
    int32_t (*model_param_count)(const gpufit_model *m,
                                 uint64_t *total_out,
                                 uint64_t *active_out,
                                 gpufit_error *err);
    int32_t (*job_new)(gpufit_job **out, gpufit_error *err);
    int32_t (*job_copy)(gpufit_job **out, const gpufit_job *j, gpufit_error *err);
    void (*job_free)(gpufit_job *j);
    int32_t (*param_get_info)(int32_t p, gpufit_param_info *out);
    int32_t (*param_by_name)(const char *name, int32_t *out);
    int32_t (*param_next)(int32_t prev);
    int32_t (*param_value_at)(int32_t p, uint32_t index, int64_t *value_out, const char **name_out);
    const char *(*param_value_name)(int32_t p, int64_t v);
    int32_t (*param_value_by_name)(int32_t p, const char *name, int64_t *out);
    int32_t (*model_set_int)(gpufit_model *m, int32_t p, int64_t v, gpufit_error *err);
    int32_t (*model_set_float)(gpufit_model *m, int32_t p, double v, gpufit_error *err);
    int32_t (*model_get_int)(const gpufit_model *m, int32_t p, int64_t *out, gpufit_error *err);
    int32_t (*model_get_float)(const gpufit_model *m, int32_t p, double *out, gpufit_error *err);
    int32_t (*job_set_int)(gpufit_job *j, int32_t p, int64_t v, gpufit_error *err);
    int32_t (*job_set_float)(gpufit_job *j, int32_t p, double v, gpufit_error *err);
    int32_t (*job_get_int)(const gpufit_job *j, int32_t p, int64_t *out, gpufit_error *err);
    int32_t (*job_get_float)(const gpufit_job *j, int32_t p, double *out, gpufit_error *err);
    int32_t (*apply_spec)(gpufit_model *m, gpufit_job *j, const char *spec, gpufit_error *err);
    int32_t (*apply_json)(
        gpufit_model *m, gpufit_job *j, const char *json, size_t len, gpufit_error *err);
    int32_t (*preset_at)(uint32_t index, gpufit_preset_info *out);
    int32_t (*gpu_at)(uint32_t index, gpufit_gpu_info *out);
    int32_t (*gpu_by_name)(const char *name, gpufit_gpu_info *out);
    int32_t (*component_next)(int32_t prev);
    const char *(*component_name)(int32_t c);
    int32_t (*evaluate)(gpufit_result **out,
                        const gpufit_model *m,
                        const gpufit_job *j,
                        gpufit_error *err);
    void (*result_free)(gpufit_result *r);
    int32_t (*result_summary)(const gpufit_result *r, gpufit_summary *out);
    int32_t (*result_role)(const gpufit_result *r, uint32_t i, gpufit_role_info *out);
    int32_t (*result_bytes)(const gpufit_result *r, uint32_t role, int32_t c, uint64_t *out_bytes);
    int32_t (*calibrate)(const char *runs, size_t len, char *buf, size_t cap, size_t *len_out,
                         gpufit_error *err);
    int32_t (*job_apply_profile)(gpufit_job *j, const char *json, size_t len, gpufit_error *err);
    int32_t (*result_bytes_band)(const gpufit_result *r, uint32_t role, int32_t c, uint64_t *lo,
                                 uint64_t *hi);
    int32_t (*result_note)(const gpufit_result *r, uint32_t i, const char **text_out);
    int32_t (*result_to_json)(
        const gpufit_result *r, char *buf, size_t cap, size_t *len_out, gpufit_error *err);
};

const struct header_test_api *header_test_c_api(void);
const struct header_test_api *header_test_c_api(void)
{
    static const struct header_test_api api = {
        .version_number = gpufit_version_number,
        .version_string = gpufit_version_string,
        .status_str = gpufit_status_str,
        .model_new = gpufit_model_new,
        .model_from_preset = gpufit_model_from_preset,
        .model_copy = gpufit_model_copy,
        .model_free = gpufit_model_free,
        .model_name = gpufit_model_name,
        .model_param_count = gpufit_model_param_count,
        .job_new = gpufit_job_new,
        .job_copy = gpufit_job_copy,
        .job_free = gpufit_job_free,
        .param_get_info = gpufit_param_get_info,
        .param_by_name = gpufit_param_by_name,
        .param_next = gpufit_param_next,
        .param_value_at = gpufit_param_value_at,
        .param_value_name = gpufit_param_value_name,
        .param_value_by_name = gpufit_param_value_by_name,
        .model_set_int = gpufit_model_set_int,
        .model_set_float = gpufit_model_set_float,
        .model_get_int = gpufit_model_get_int,
        .model_get_float = gpufit_model_get_float,
        .job_set_int = gpufit_job_set_int,
        .job_set_float = gpufit_job_set_float,
        .job_get_int = gpufit_job_get_int,
        .job_get_float = gpufit_job_get_float,
        .apply_spec = gpufit_apply_spec,
        .apply_json = gpufit_apply_json,
        .preset_at = gpufit_preset_at,
        .gpu_at = gpufit_gpu_at,
        .gpu_by_name = gpufit_gpu_by_name,
        .component_next = gpufit_component_next,
        .component_name = gpufit_component_name,
        .evaluate = gpufit_evaluate,
        .result_free = gpufit_result_free,
        .result_summary = gpufit_result_summary,
        .result_role = gpufit_result_role,
        .result_bytes = gpufit_result_bytes,
        .result_bytes_band = gpufit_result_bytes_band,
        .calibrate = gpufit_calibrate,
        .job_apply_profile = gpufit_job_apply_profile,
        .result_note = gpufit_result_note,
        .result_to_json = gpufit_result_to_json,
    };
    return &api;
}

/* The macros expand to valid C. */
int header_test_c_macros(void);
int header_test_c_macros(void)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_summary summary = {0};
    summary.struct_size = (uint32_t)sizeof summary;
    return GPUFIT_HAS_FIELD(&summary, gpufit_summary, host_bytes) && err.offset == UINT64_MAX &&
           GPUFIT_OK == 0 && GPUFIT_DOMAIN_MODEL != GPUFIT_DOMAIN_JOB;
}
