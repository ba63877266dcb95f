/* SPDX-License-Identifier: MIT */
/* FZ_CHECK: the fuzz targets' assertion; a failed check aborts, so that libFuzzer records the
 * input as a crash. */
#ifndef GPUFIT_FUZZ_ASSERT_H
#define GPUFIT_FUZZ_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define FZ_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
