/* SPDX-License-Identifier: MIT */
/* libFuzzer target: every advice reproduces (issue 13, docs/advice.md). Built and run by
 * `make fuzz` / `make fuzz-replay` (corpus tests/fuzz/corpus/advice/).
 *
 * Input: the bytes drive advice_check.h's job builder (every byte string is a job; bytes past
 * the end read as 0): preset, task, framework, GPU, up to 12 edits of the fields the planner,
 * the recommender and the mitigations decide or reset (degrees, schedule, stage split, lists,
 * batch and context shapes, dtypes), then the cluster (GPUs per node, nodes), the recommend
 * limit and up to 3 candidate GPUs. A job that does not evaluate is skipped.
 *
 * Checks (abort on failure): gpufit_plan, gpufit_recommend and gpufit_evaluate succeed on a
 * valid job; every layout, every recommendation and every ranked mitigation, applied to the
 * job through its apply function, through its spec (gpufit_apply_spec) and through its JSON
 * (gpufit_apply_json), evaluates to exactly the peak bytes and verdict it printed, and its
 * spec is canonical (each key once, in parameter-id order); every gpufit_max_fitting answer
 * (OK or UNSUPPORTED only), set alone, fits. */
#include <stdio.h>
#include <stdlib.h>

#define ADV_FAIL(...)                                                                              \
    do {                                                                                           \
        fprintf(stderr, "fuzz_advice: ");                                                          \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        abort();                                                                                   \
    } while (0)
#include "advice_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adv_bytes b = {data, size > 256 ? 256 : size, 0};
    adv_case c;
    if (!adv_build(&b, &c))
        return 0;
    (void)adv_check(&c);
    adv_free(&c);
    return 0;
}
