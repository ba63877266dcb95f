/* Placeholders for the model-file readers until io_hf_config.c, io_gguf.c and
 * io_safetensors.c land (issue #5): each reports GPUFIT_E_UNSUPPORTED. */
#include "internal.h"

int32_t gpufit_model_from_hf_config(gpufit_model **out, const char *json, size_t len,
                                    gpufit_error *err)
{
    (void)json;
    (void)len;
    if (out != NULL)
        *out = NULL;
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                        "reading config.json is not available yet");
}

int32_t gpufit_model_from_gguf(gpufit_model **out, const void *buf, size_t len,
                               uint64_t *needed_out, gpufit_error *err)
{
    (void)buf;
    (void)len;
    (void)needed_out;
    if (out != NULL)
        *out = NULL;
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                        "reading GGUF files is not available yet");
}

int32_t gpufit_safetensors_read(gpufit_safetensors_info *out, const void *buf, size_t len,
                                uint64_t *needed_out, gpufit_error *err)
{
    (void)out;
    (void)buf;
    (void)len;
    (void)needed_out;
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                        "reading safetensors headers is not available yet");
}

int32_t gpufit_model_check_safetensors(const gpufit_model *m, const gpufit_safetensors_info *info,
                                       gpufit_error *err)
{
    (void)m;
    (void)info;
    return gpufit__fail(err, GPUFIT_E_UNSUPPORTED, 0, UINT64_MAX,
                        "reading safetensors headers is not available yet");
}
