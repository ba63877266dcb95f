/* SPDX-License-Identifier: MIT */
/* LoRA adapter dropout (job key lora_dropout; docs/memory/lora.md, "Adapter dropout"): PEFT's
 * Linear.forward computes lora_B(lora_A(dropout(x))), so with lora_dropout > 0 each adapted
 * module keeps its own dropped copy of its input (saved by lora_A) and the dropout mask (1
 * byte), where without dropout the adapters share the input itself; a frozen module keeps
 * nothing for its weight's gradient. Bytes by hand. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#include <stdio.h>

/* Two layers, h 64, 4 heads of 16 (q width 64), SwiGLU 128, bf16 (2 B), 1 x 32 tokens, flash
 * attention: per layer and per module input, tok x h = 32 x 64 = 2,048 elements. */
#define TINY                                                                                   \
    "arch=decoder n_layers=2 hidden_size=64 n_heads=4 n_kv_heads=4 head_dim=16 "               \
    "ffn_hidden_size=128 mlp=swiglu norm=rmsnorm vocab_size=8 framework=pytorch "             \
    "precision=bf16 seq_len=32 micro_batch=1 gpu=h100 "

static uint64_t act(const char *modules, const char *attention, double dropout)
{
    char spec[512];
    snprintf(spec, sizeof spec, TINY "task=lora lora_modules=%s attention=%s lora_dropout=%g",
             modules, attention, dropout);
    return spec_bytes0(spec, GPUFIT_MEM_ACTIVATIONS);
}

Test(lora_dropout, q_and_v_each_keep_a_copy_and_a_mask)
{
    /* without dropout q's and v's lora_A share x: 2 B x 2,048 = 4,096; with it each keeps
     * (2 + 1) B x 2,048 = 6,144: 12,288, 8,192 more per layer */
    cr_assert_eq(act("q,v", "flash", 0.1) - act("q,v", "flash", 0.0), 2 * 8192);
}

Test(lora_dropout, every_linear_module)
{
    /* per layer: q, k, v 3 x 6,144 - 4,096 = 14,336; o (after flash attention, whose saved
     * output stays) 6,144; gate, up 2 x 6,144 - 4,096 = 8,192; down's mask 32 x 128 = 4,096:
     * 32,768 */
    cr_assert_eq(act("all-linear", "flash", 0.05) - act("all-linear", "flash", 0.0), 2 * 32768);
}

Test(lora_dropout, eager_o_copy_replaces_its_input)
{
    /* eager attention saves no output of its own: o's lora_A kept it (4,096 B); with dropout
     * its copy (4,096) and the mask (2,048) instead: 2,048 more per layer */
    cr_assert_eq(act("o", "eager", 0.1) - act("o", "eager", 0.0), 2 * 2048);
}

Test(lora_dropout, frozen_projections_keep_no_input)
{
    /* with no adapter on q, k or v nothing keeps their input for a gradient: adding q's
     * adapter (no dropout) keeps x, 4,096 B per layer */
    cr_assert_eq(act("q,o", "flash", 0.0) - act("o", "flash", 0.0), 2 * 4096);
}

Test(lora_dropout, full_fine_tuning_has_no_adapters)
{
    cr_assert_eq(spec_bytes0(TINY "task=finetune lora_dropout=0.1", GPUFIT_MEM_ACTIVATIONS),
                 spec_bytes0(TINY "task=finetune", GPUFIT_MEM_ACTIVATIONS));
}
