/* SPDX-License-Identifier: MIT */
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

/* The error struct is an input/output struct: a caller's struct_size below sizeof(gpufit_error)
 * (an older or a cut-down declaration) gets every field that fits whole and as much of the
 * message as fits, NUL-terminated; below 8 bytes (struct_size and status) nothing is written. */
#define HAS(err, field) ((err)->struct_size >= offsetof(gpufit_error, field) + sizeof((err)->field))

int32_t gpufit__fail(gpufit_error *err, int32_t status, int32_t param, uint64_t offset,
                     const char *fmt, ...)
{
    if (err == NULL || !HAS(err, status))
        return status;
    err->status = status;
    if (HAS(err, param))
        err->param = param;
    if (HAS(err, reserved0))
        err->reserved0 = 0;
    if (HAS(err, offset))
        err->offset = offset;
    size_t at = offsetof(gpufit_error, message), room = 0;
    if (err->struct_size > at)
        room = err->struct_size - at < sizeof err->message ? err->struct_size - at
                                                          : sizeof err->message;
    if (room > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, room, fmt, ap);
        va_end(ap);
    }
    return status;
}

void gpufit__ok(gpufit_error *err)
{
    if (err == NULL || !HAS(err, status))
        return;
    err->status = GPUFIT_OK;
    if (HAS(err, param))
        err->param = 0;
    if (HAS(err, reserved0))
        err->reserved0 = 0;
    if (HAS(err, offset))
        err->offset = UINT64_MAX;
    if (err->struct_size > offsetof(gpufit_error, message))
        err->message[0] = '\0';
}

int32_t gpufit__tail_zero(const void *in, size_t own_size)
{
    uint32_t caller = *(const uint32_t *)in;
    if (caller > GPUFIT__INPUT_STRUCT_MAX)
        return GPUFIT_E_STRUCT_SIZE;
    for (size_t i = own_size; i < caller; i++)
        if (((const unsigned char *)in)[i] != 0)
            return GPUFIT_E_STRUCT_SIZE;
    return GPUFIT_OK;
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
