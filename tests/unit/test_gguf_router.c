/* SPDX-License-Identifier: MIT */
/* The type of a GGUF file's MoE router (ffn_gate_inp) when only the file type is named:
 * llama-quant.cpp never quantises it, so it keeps the converter's type. Today's
 * convert_hf_to_gguf.py writes it in F32 (prepare_tensors, "Some tensor types are always in
 * float32"): the point. The old convert.py (GGMLFileType.type_for_tensor) gave every 2-D
 * tensor the outtype, f16 or q8_0: the weights band's low end (docs/memory/llamacpp.md). */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

/* Mixtral-8x7B: 32 layers, each with a router of h 4096 x E 8 = 32,768 weights:
 *   F32  4 B each                         = 131,072 B per layer
 *   F16  2 B each                         =  65,536 B
 *   Q8_0 34 B per block of 32 (1,024)     =  34,816 B */
#define MIX "model=mixtral-8x7b task=inference framework=llamacpp context_len=512 "

/* How far the weights' band reaches below its top, which must be the point. */
static uint64_t below_point(const char *spec)
{
    run_s s;
    uint64_t lo, hi;
    run_ok(&s, spec);
    band0(&s, GPUFIT_MEM_WEIGHTS, &lo, &hi);
    cr_assert_eq(hi, bytes0(&s, GPUFIT_MEM_WEIGHTS), "%s", spec);
    done(&s);
    return hi - lo;
}

Test(gguf_router, q8_0_file_low_end_has_q8_0_routers)
{
    /* every other tensor of a Q8_0 file is Q8_0 either way: 32 x (131,072 - 34,816) */
    cr_assert_eq(below_point(MIX "weight_dtype=q8_0"), 3080192ull);
}

Test(gguf_router, f16_file_point_has_f32_routers)
{
    cr_assert_eq(below_point(MIX "weight_dtype=f16"), 32ull * (131072 - 65536)); /* 2,097,152 */
}

Test(gguf_router, partial_offload_counts_the_offloaded_layers)
{
    cr_assert_eq(below_point(MIX "weight_dtype=q8_0 n_gpu_layers=22"), 22ull * (131072 - 34816));
}

Test(gguf_router, dense_and_fp32_files_have_no_router_band)
{
    cr_assert_eq(
        below_point("model=llama-3-8b task=inference framework=llamacpp weight_dtype=q8_0"), 0);
    cr_assert_eq(below_point(MIX "weight_dtype=fp32"), 0);
}
