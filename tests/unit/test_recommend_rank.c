/* recommend ranking (issue 15): fit margin first, then known price; unknown prices after known
 * ones, the smallest capacity first, so an 80 GB card beats B200/GB200/MI300X for a job of a
 * few tens of GiB (before: unknown prices tied and fell to raw TFLOPS, B200 first). */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <string.h>

static int32_t rank_of(gpufit_list *l, const char *gpu_name)
{
    for (uint32_t i = 0; i < gpufit_list_count(l); i++) {
        gpufit_recommendation x = {.struct_size = sizeof x};
        cr_assert_eq(gpufit_list_recommendation(l, i, &x), GPUFIT_OK);
        if (x.count == 1 && strcmp(x.gpu_name, gpu_name) == 0)
            return (int32_t)i;
    }
    cr_assert_fail("%s is not recommended", gpu_name);
    return -1;
}

Test(recommend_rank, eighty_gb_before_the_largest_cards)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_from_preset(&m, "qwen2.5-32b", NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(NULL, j, "task=inference weight_dtype=fp8 context_len=8192",
                                   &err),
                 GPUFIT_OK, "%s", err.message);
    gpufit_list *l = NULL;
    cr_assert_eq(gpufit_recommend(&l, m, j, NULL, 0, 64, &err), GPUFIT_OK, "%s", err.message);
    static const char *const mid[] = {"H100 SXM5", "H100 PCIe", "A100 80GB PCIe",
                                      "A100 80GB SXM4"};
    static const char *const big[] = {"B200 (HGX)", "GB200 (per B200 GPU)", "Instinct MI300X",
                                      "Instinct MI325X", "H200 SXM"};
    for (size_t a = 0; a < sizeof mid / sizeof mid[0]; a++)
        for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
            cr_assert_lt(rank_of(l, mid[a]), rank_of(l, big[b]), "%s vs %s", mid[a], big[b]);
    /* a known price (RTX A6000, 48 GB, fits with room) ranks first */
    gpufit_recommendation x = {.struct_size = sizeof x};
    cr_assert_eq(gpufit_list_recommendation(l, 0, &x), GPUFIT_OK);
    cr_assert_str_eq(x.gpu_name, "RTX A6000");
    gpufit_list_free(l);
    gpufit_job_free(j);
    gpufit_model_free(m);
}
