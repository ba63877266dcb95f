/* Status strings, error filling and size-prefixed output copies. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *gpufit_status_str(int32_t status)
{
    switch (status) {
    case GPUFIT_OK: return "ok";
    case GPUFIT_E_INVALID_ARG: return "invalid argument";
    case GPUFIT_E_INCONSISTENT: return "inconsistent parameters";
    case GPUFIT_E_OVERFLOW: return "byte count overflows 64 bits";
    case GPUFIT_E_UNKNOWN_PARAM: return "unknown parameter";
    case GPUFIT_E_UNSUPPORTED: return "unsupported combination";
    case GPUFIT_E_PARSE: return "parse error";
    case GPUFIT_E_NOT_FOUND: return "not found";
    case GPUFIT_E_BUFFER_TOO_SMALL: return "buffer too small";
    case GPUFIT_E_STRUCT_SIZE: return "bad struct_size";
    case GPUFIT_E_NOMEM: return "out of memory";
    case GPUFIT_E_INTERNAL: return "internal error";
    default: return "unknown status";
    }
}

/* The error struct is an input/output struct: fields up to message[] exist in every version. */
#define GPUFIT__ERROR_SIZE_V1 sizeof(gpufit_error)

int32_t gpufit__fail(gpufit_error *err, int32_t status, int32_t param, uint64_t offset,
                     const char *fmt, ...)
{
    if (err == NULL || err->struct_size < GPUFIT__ERROR_SIZE_V1)
        return status;
    err->status = status;
    err->param = param;
    err->reserved0 = 0;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

void gpufit__ok(gpufit_error *err)
{
    if (err == NULL || err->struct_size < GPUFIT__ERROR_SIZE_V1)
        return;
    err->status = GPUFIT_OK;
    err->param = 0;
    err->reserved0 = 0;
    err->offset = UINT64_MAX;
    err->message[0] = '\0';
}

int32_t gpufit__copy_out(void *out, const void *src, size_t own_size, size_t min_size)
{
    if (out == NULL)
        return GPUFIT_E_INVALID_ARG;
    uint32_t caller = *(const uint32_t *)out;
    if (caller < min_size)
        return GPUFIT_E_STRUCT_SIZE;
    size_t n = caller < own_size ? caller : own_size;
    memcpy(out, src, n);
    *(uint32_t *)out = (uint32_t)n;
    return GPUFIT_OK;
}
