/* SPDX-License-Identifier: MIT */
/* The logits a PyTorch training loop holds through backward (docs/memory/pytorch-transients.md,
 * "Logits held by the loop"), bytes by hand. Llama-3-8B LoRA, micro-batch 4 x 2048 tokens:
 * N = 8192 tokens, V = 128,256, so N x V = 1,050,673,152 logits.
 * - the loss's own terms (mem_activations.c): 12 bytes per logit, 12,608,077,824 B;
 * - trainer=hf (Trainer.compute_loss returns the loss alone) and torchtune (`del logits`):
 *   nothing held, no band;
 * - trainer=loop (`outputs = model(**batch); outputs.loss.backward()`): the bf16 logits,
 *   2 bytes each, held at the point; up to fp32 (transformers 4.36-4.44) at the high end;
 * - trainer=auto: the Trainer at the point, a loop's fp32 logits at the high end. */
#include "run.h"

static const uint64_t NV = 8192ull * 128256ull;
#define JOB "model=llama-3-8b task=lora micro_batch=4 seq_len=2048 gpu=h100 "

Test(held_logits, trainer_hf_and_torchtune_hold_none)
{
    static const char *const specs[] = {JOB "trainer=hf", JOB "trainer=torchtune"};
    for (int i = 0; i < 2; i++) {
        run_s x;
        run_ok(&x, specs[i]);
        uint64_t lo, hi, point = bytes0(&x, GPUFIT_MEM_LOGITS);
        band0(&x, GPUFIT_MEM_LOGITS, &lo, &hi);
        if (i == 0)
            cr_assert_eq(point, 12 * NV);
        cr_assert_eq(lo, point, "%s", specs[i]);
        cr_assert_eq(hi, point, "%s", specs[i]);
        done(&x);
    }
}

Test(held_logits, auto_reaches_up_to_fp32_logits)
{
    run_s x;
    run_ok(&x, JOB);
    uint64_t lo, hi;
    band0(&x, GPUFIT_MEM_LOGITS, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_LOGITS), 12 * NV);
    cr_assert_eq(lo, 12 * NV);
    cr_assert_eq(hi, 12 * NV + 4 * NV);
    /* the allocated peak's high end carries it */
    gpufit_role_info ro = role(&x, 0);
    run_s h;
    run_ok(&h, JOB "trainer=hf");
    gpufit_role_info rh = role(&h, 0);
    cr_assert_eq(ro.peak_allocated_bytes, rh.peak_allocated_bytes);
    cr_assert_eq(ro.peak_allocated_high_bytes - rh.peak_allocated_high_bytes, 4 * NV);
    done(&h);
    done(&x);
}

Test(held_logits, loop_holds_bf16_logits)
{
    run_s x;
    run_ok(&x, JOB "trainer=loop");
    uint64_t lo, hi;
    band0(&x, GPUFIT_MEM_LOGITS, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_LOGITS), 12 * NV + 2 * NV);
    cr_assert_eq(lo, 12 * NV + 2 * NV);
    cr_assert_eq(hi, 12 * NV + 4 * NV);
    done(&x);
    /* an fp32 model's logits are fp32 already: no band */
    run_ok(&x, JOB "trainer=loop precision=fp32");
    band0(&x, GPUFIT_MEM_LOGITS, &lo, &hi);
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_LOGITS), 16 * NV);
    cr_assert_eq(lo, 16 * NV);
    cr_assert_eq(hi, 16 * NV);
    done(&x);
}

Test(held_logits, other_frameworks_and_inference_hold_none)
{
    static const char *const specs[] = {
        "model=llama-3-8b task=pretrain micro_batch=1 seq_len=2048 gpu=h100 framework=megatron",
        "model=llama-3-8b task=pretrain micro_batch=1 seq_len=2048 gpu=h100 framework=deepspeed",
    };
    for (int i = 0; i < 2; i++) {
        run_s x;
        run_ok(&x, specs[i]);
        uint64_t lo, hi;
        band0(&x, GPUFIT_MEM_LOGITS, &lo, &hi);
        cr_assert_eq(lo, hi, "%s", specs[i]);
        done(&x);
    }
}
