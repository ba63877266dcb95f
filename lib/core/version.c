/* SPDX-License-Identifier: MIT */
/* Run-time version of the library (the header is the single source). */
#include "internal.h"

uint32_t gpufit_version_number(void)
{
    return GPUFIT_VERSION_NUMBER;
}

const char *gpufit_version_string(void)
{
    return GPUFIT_VERSION_STRING;
}
