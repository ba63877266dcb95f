/* SPDX-License-Identifier: MIT */
/* The temporaries of torch.optim's Adam/AdamW step (docs/memory/optimizer-step.md), bytes by
 * hand from PyTorch's code:
 * - foreach (_multi_tensor_adamw): one list the size of the second moments; PyTorch 2.0 two;
 * - for-loop (_single_tensor_adamw): two temporaries of the largest parameter at once;
 *   transformers' adamw_hf one;
 * - fused: none.
 * The step runs after backward, when the activations, the logits and autocast's copies are
 * freed: it raises the peak by what its temporaries exceed those by, counted in
 * optimizer_states. */
#include "run.h"

#include <stdio.h>
#include <string.h>

/* Llama-2-7B: 6,738,415,616 parameters; small activations (full checkpointing, 512 tokens),
 * so the step decides the peak */
static const uint64_t P = 6738415616ull;
/* one cuBLAS handle-stream's workspace on an H100 (32 MiB): training's second is banded */
static const uint64_t WS = 32ull << 20;
/* expandable_segments=1: no allocator block rests (test_block_slack.c), so that the bands
 * below are the step's and the gradients' alone */
#define SMALL                                                                                      \
    "model=llama-2-7b task=pretrain micro_batch=1 seq_len=512 checkpointing=full "                 \
    "expandable_segments=1 "

/* the bytes the step no longer holds: activations, logits (and the autocast copies, 2P) */
static uint64_t held(run_s *x)
{
    return bytes0(x, GPUFIT_MEM_ACTIVATIONS) + bytes0(x, GPUFIT_MEM_LOGITS);
}

Test(optimizer_step, fused_has_no_temporaries)
{
    run_s x;
    run_ok(&x, SMALL "precision=amp_bf16 optimizer_impl=fused gpu=h100");
    uint64_t lo, hi;
    band0(&x, GPUFIT_MEM_OPTIMIZER_STATES, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES), 8 * P); /* fp32 exp_avg, exp_avg_sq */
    cr_assert_eq(lo, 8 * P);
    cr_assert_eq(hi, 8 * P);
    done(&x);
}

/* amp_bf16: fp32 weights and states; the step's list is 4P, less the activations, logits and
 * the 2P autocast copies freed before it */
Test(optimizer_step, auto_is_foreach_with_a_band_from_fused_to_two_lists)
{
    run_s x;
    run_ok(&x, SMALL "precision=amp_bf16 gpu=h100 trainer=hf"); /* no logits held (test_held_logits.c) */
    uint64_t h = held(&x) + 2 * P, lo, hi;
    cr_assert_lt(h, 4 * P, "the step decides this case");
    band0(&x, GPUFIT_MEM_OPTIMIZER_STATES, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES), 8 * P + 4 * P - h);
    cr_assert_eq(lo, 8 * P);              /* fused (transformers with torch >= 2.8) */
    cr_assert_eq(hi, 8 * P + 8 * P - h); /* PyTorch 2.0's second list */
    /* the totals carry it: the allocated peak's band is the component's and the gradients'
     * (freed between steps, below; every other allocated term of this job is exact) */
    gpufit_role_info ro = role(&x, 0);
    uint64_t glo, ghi;
    band0(&x, GPUFIT_MEM_GRADIENTS, &glo, &ghi);
    /* ... and the cuBLAS workspaces' (one 32 MiB handle-stream fewer at the low end) */
    cr_assert_eq(ro.peak_allocated_high_bytes - ro.peak_allocated_low_bytes,
                 hi - lo + (ghi - glo) + WS);
    cr_assert_eq(ro.peak_allocated_bytes - ro.peak_allocated_low_bytes,
                 4 * P - h + (ghi - glo) + WS);
    char buf[1024];
    cr_assert_eq(gpufit_result_resolved(x.r, buf, sizeof buf, NULL), GPUFIT_OK);
    cr_assert_not_null(strstr(buf, " optimizer_impl=foreach "), "%s", buf);
    int noted = 0;
    const char *t;
    for (uint32_t i = 0; gpufit_result_note(x.r, i, &t) == GPUFIT_OK; i++)
        noted |= strstr(t, "torch.optim's step") != NULL;
    cr_assert(noted, "the report says why optimizer_states exceed the states");
    done(&x);
}

Test(optimizer_step, explicit_foreach_keeps_only_the_release_band)
{
    run_s x;
    run_ok(&x, SMALL "precision=amp_bf16 optimizer_impl=foreach gpu=h100");
    uint64_t h = held(&x) + 2 * P, lo, hi;
    band0(&x, GPUFIT_MEM_OPTIMIZER_STATES, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES), 8 * P + 4 * P - h);
    cr_assert_eq(lo, 8 * P + 4 * P - h);
    cr_assert_eq(hi, 8 * P + 8 * P - h);
    done(&x);
}

/* fp32 (no autocast copies): the largest parameter is the embedding, 32,000 x 4,096 =
 * 131,072,000 elements of 4 B = 524,288,000 B; the loop holds two of it, adamw_hf one */
Test(optimizer_step, forloop_holds_two_of_the_largest_parameter)
{
    run_s x;
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=1 seq_len=128 checkpointing=full "
              "precision=fp32 optimizer_impl=forloop gpu=h100 expandable_segments=1");
    uint64_t h = held(&x), one = 524288000ull, lo, hi;
    cr_assert_lt(h, one, "the step decides this case");
    band0(&x, GPUFIT_MEM_OPTIMIZER_STATES, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES), 8 * P + 2 * one - h);
    cr_assert_eq(lo, 8 * P + one - h);
    cr_assert_eq(hi, 8 * P + 2 * one - h);
    done(&x);
}

/* FSDP (framework=pytorch, zero=3) over 8 GPUs: the step runs on each rank's shard, so the
 * list is one shard's second moment; no autocast copies under ZeRO-3 (the gathered units) */
Test(optimizer_step, sharded_states_shard_the_list)
{
    run_s x;
    run_ok(&x, SMALL "precision=amp_bf16 zero=3 dp=8 optimizer_impl=foreach gpu=h100");
    uint64_t states = 8 * P / 8, h = held(&x);
    cr_assert_lt(h, states / 2);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES), states + states / 2 - h);
    done(&x);
}

/* Large activations: the step's list fits in what backward freed, no change */
Test(optimizer_step, hidden_by_the_activations)
{
    run_s x;
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=8 seq_len=4096 precision=amp_bf16 "
              "gpu=h100 expandable_segments=1");
    cr_assert_gt(held(&x) + 2 * P, 8 * P, "activations larger than two lists");
    uint64_t lo, hi;
    band0(&x, GPUFIT_MEM_OPTIMIZER_STATES, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES), 8 * P);
    cr_assert_eq(hi, 8 * P);
    done(&x);
}

/* Not torch.optim's step: Megatron's and DeepSpeed's fused Adam, QLoRA's paged bitsandbytes
 * optimizer, 8-bit AdamW and SGD keep no such temporaries; torchtune's configs are fused */
Test(optimizer_step, other_steps_have_none)
{
    static const char *const specs[] = {
        SMALL "precision=amp_bf16 framework=megatron",
        SMALL "precision=amp_bf16 framework=deepspeed",
        SMALL "precision=amp_bf16 optimizer=adamw_8bit",
        SMALL "precision=amp_bf16 optimizer=sgd_momentum",
        ("model=llama-2-7b task=finetune micro_batch=1 seq_len=512 checkpointing=full "
         "trainer=torchtune expandable_segments=1"),
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        run_s x, f;
        run_ok(&x, specs[i]);
        char spec[512];
        snprintf(spec, sizeof spec, "%s optimizer_impl=fused", specs[i]);
        uint64_t lo, hi;
        band0(&x, GPUFIT_MEM_OPTIMIZER_STATES, &lo, &hi);
        cr_assert_eq(lo, hi, "%s", specs[i]);
        if (strstr(specs[i], "torchtune") != NULL) { /* the same as fused, set or not */
            run_ok(&f, spec);
            cr_assert_eq(bytes0(&x, GPUFIT_MEM_OPTIMIZER_STATES),
                         bytes0(&f, GPUFIT_MEM_OPTIMIZER_STATES));
            done(&f);
        }
        char buf[1024];
        cr_assert_eq(gpufit_result_resolved(x.r, buf, sizeof buf, NULL), GPUFIT_OK);
        cr_assert_eq(strstr(buf, "optimizer_impl=") != NULL, strstr(specs[i], "torchtune") != NULL,
                     "%s: %s", specs[i], buf);
        done(&x);
    }
}

/* The advice: a job that the step's list pushes over the margin fits with a fused step, the
 * cheapest change, and its flag is transformers' optim name */
Test(optimizer_step, fused_step_is_the_first_fix)
{
    run_s x;
    run_ok(&x, "model=llama-3-8b task=finetune gpu=h100 micro_batch=1 seq_len=512 precision=bf16 "
              "margin=0.1");
    gpufit_mitigation_info mi = {.struct_size = sizeof mi};
    cr_assert_eq(gpufit_result_mitigation(x.r, 0, &mi), GPUFIT_OK);
    cr_assert_eq(mi.kind, GPUFIT_MIT_OPTIMIZER, "%s", mi.text);
    cr_assert_str_eq(mi.changes, "optimizer_impl=fused");
    cr_assert_eq(mi.fits_after, 1);
    cr_assert_not_null(strstr(mi.flags, "--optim adamw_torch_fused"), "%s", mi.flags);
    done(&x);
}

/* PyTorch >= 2.0 frees .grad between steps (set_to_none=True): without accumulation the
 * gradients appear during backward as the activations go, so the low end holds the larger of
 * (activations + logits) and (gradients + one layer's activations); the point keeps both
 * (PyTorch < 2.0, or accumulation). Pure bf16 (no autocast copies), a fused step. */
Test(optimizer_step, gradients_freed_between_steps_lower_the_band)
{
    run_s x;
    run_ok(&x, SMALL "precision=bf16 optimizer_impl=fused gpu=h100 trainer=hf");
    uint64_t g = bytes0(&x, GPUFIT_MEM_GRADIENTS), a = bytes0(&x, GPUFIT_MEM_ACTIVATIONS);
    uint64_t l = bytes0(&x, GPUFIT_MEM_LOGITS), lo, hi;
    cr_assert_eq(g, 2 * P); /* bf16 .grad */
    uint64_t x1 = a + l, x2 = g + a / 32, one = x1 > x2 ? x1 : x2, both = a + l + g;
    band0(&x, GPUFIT_MEM_GRADIENTS, &lo, &hi);
    cr_assert_eq(hi, g);
    cr_assert_eq(lo, g - (both - one));
    gpufit_role_info ro = role(&x, 0);
    cr_assert_eq(ro.peak_allocated_bytes - ro.peak_allocated_low_bytes, both - one + WS);
    cr_assert_eq(ro.peak_allocated_high_bytes, ro.peak_allocated_bytes);
    done(&x);
    /* accumulation keeps the gradients between micro-batches; Megatron's and FSDP's
     * gradient buffers persist: no band */
    static const char *const kept[] = {
        SMALL "precision=bf16 optimizer_impl=fused gpu=h100 global_batch=2",
        SMALL "precision=bf16 framework=megatron gpu=h100",
        SMALL "precision=bf16 optimizer_impl=fused gpu=h100 dp=2 zero=3",
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        run_ok(&x, kept[i]);
        band0(&x, GPUFIT_MEM_GRADIENTS, &lo, &hi);
        cr_assert_eq(lo, bytes0(&x, GPUFIT_MEM_GRADIENTS), "%s", kept[i]); /* no low end */
        done(&x);
    }
    /* DDP: the buckets (half of the gradients component) stay; .grad is freed */
    run_ok(&x, SMALL "precision=bf16 optimizer_impl=fused gpu=h100 dp=2");
    g = bytes0(&x, GPUFIT_MEM_GRADIENTS);
    a = bytes0(&x, GPUFIT_MEM_ACTIVATIONS);
    l = bytes0(&x, GPUFIT_MEM_LOGITS);
    cr_assert_eq(g, 2 * 2 * P);
    x1 = a + l;
    x2 = g / 2 + a / 32;
    one = x1 > x2 ? x1 : x2;
    both = a + l + g / 2;
    band0(&x, GPUFIT_MEM_GRADIENTS, &lo, &hi);
    cr_assert_eq(lo, g - (both - one));
    done(&x);
}
