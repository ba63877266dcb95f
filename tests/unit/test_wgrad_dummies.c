/* SPDX-License-Identifier: MIT */
/* Megatron's wgrad dummies (docs/memory/megatron.md, "Wgrad dummies"): with gradient
 * accumulation fusion, backward hands autograd a dummy of each weight's shape from Transformer
 * Engine's get_dummy_wgrad, cached per (shape, dtype): one buffer of the parameters' dtype per
 * distinct linear shape and the output head's, at the gradients' high end. Bytes by hand. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

/* Megatron's CI "small" GPT: h 512, 8 heads of 64, GeLU MLP 2048, vocab 50304, tied, 12 layers,
 * bf16 (2 B). Per distinct shape, elements:
 *   linear_qkv [3 x 512, 512]   786,432  (q, k and v counted as one fused weight)
 *   linear_proj [512, 512]      262,144
 *   linear_fc1 [2048, 512]    1,048,576
 *   linear_fc2 [512, 2048]    1,048,576
 *   output head [50304, 512] 25,755,648  (the tied embedding, on the last stage)
 *                            28,901,376 x 2 B = 57,802,752 B, whatever the layer count */
#define SMALL                                                                                  \
    "arch=decoder n_layers=12 hidden_size=512 n_heads=8 n_kv_heads=8 head_dim=64 "             \
    "ffn_hidden_size=2048 mlp=gelu vocab_size=50304 tied_embeddings=true norm=layernorm "      \
    "qkv_bias=true mlp_bias=true task=pretrain framework=megatron "                            \
    "micro_batch=4 seq_len=1024 gpu=h100 "

static uint64_t dummies(const char *spec)
{
    run_s s;
    uint64_t lo, hi;
    run_ok(&s, spec);
    band0(&s, GPUFIT_MEM_GRADIENTS, &lo, &hi);
    uint64_t point = bytes0(&s, GPUFIT_MEM_GRADIENTS);
    cr_assert_eq(lo, point); /* the point leaves them out */
    done(&s);
    return hi - point;
}

Test(wgrad_dummies, one_buffer_per_distinct_shape)
{
    cr_assert_eq(dummies(SMALL "precision=bf16"), 57802752ull);
}

Test(wgrad_dummies, fp8_keeps_16_bit_dummies)
{
    /* fp8 recipes keep bf16 parameters: TE's dummy takes weight.dtype, not the fp8 compute */
    cr_assert_eq(dummies(SMALL "precision=fp8"), 57802752ull);
}

Test(wgrad_dummies, tensor_parallel_shards_every_shape)
{
    /* every linear and the vocabulary-parallel head split over tp 2: half the bytes */
    cr_assert_eq(dummies(SMALL "precision=bf16 tp=2"), 57802752ull / 2);
}

Test(wgrad_dummies, only_the_last_stage_holds_the_head)
{
    /* pp 2: stage 0 holds the layers' four shapes only: 3,145,728 x 2 B = 6,291,456 */
    run_s s;
    uint64_t lo, hi;
    run_ok(&s, SMALL "precision=bf16 pp=2");
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_GRADIENTS, &lo, &hi), GPUFIT_OK);
    cr_assert_eq(hi - lo, 6291456ull);
    gpufit_role_info last = role(&s, 1);
    cr_assert(last.layers > 0);
    cr_assert_eq(gpufit_result_bytes_band(s.r, 1, GPUFIT_MEM_GRADIENTS, &lo, &hi), GPUFIT_OK);
    cr_assert_eq(hi - lo, 57802752ull);
    done(&s);
}

Test(wgrad_dummies, other_frameworks_have_none)
{
    run_s s;
    uint64_t lo, hi;
    run_ok(&s, "arch=decoder n_layers=12 hidden_size=512 n_heads=8 n_kv_heads=8 head_dim=64 "
               "ffn_hidden_size=2048 mlp=gelu vocab_size=50304 tied_embeddings=true "
               "task=pretrain framework=deepspeed zero=1 dp=8 precision=bf16 micro_batch=4 "
               "seq_len=1024 gpu=h100");
    band0(&s, GPUFIT_MEM_GRADIENTS, &lo, &hi);
    cr_assert_eq(hi, lo);
    done(&s);
}
