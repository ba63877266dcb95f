/* SPDX-License-Identifier: MIT */
/* trainer=torchtune (docs/memory/torchtune.md), bytes by hand from torchtune's code:
 * - adapters in the model's dtype (recipes/lora_finetune_single_device.py _setup_model builds
 *   the model under training.set_default_dtype), AdamW states in the parameter's dtype;
 * - precision auto = one dtype, bf16, no autocast;
 * - CEWithChunkedOutputLoss: 8 chunks of logits, one fp32 copy at a time, fp32 log-probs kept;
 * - config-key flags. */
#include "run.h"

#include <string.h>

/* Llama-3-8B, LoRA r 16 on q and v (lora_targets' default): per layer r x (rows + cols) =
 * 16 x (8192 + 5120), 32 layers: 6,815,744 adapter parameters. */
#define LORA "model=llama-3-8b task=lora lora_rank=16 micro_batch=4 seq_len=4096 gpu=h100 "
static const uint64_t ADAPTERS = 16ull * (8192 + 5120) * 32;

Test(torchtune, adapters_and_their_states_in_the_model_dtype)
{
    run_s hf, tt;
    run_ok(&hf, LORA "trainer=hf");
    run_ok(&tt, LORA "trainer=torchtune");
    /* PEFT: fp32 adapters, fp32 grads, fp32 AdamW states; torchtune: all bf16 */
    cr_assert_eq(bytes0(&hf, GPUFIT_MEM_GRADIENTS), ADAPTERS * 4);
    cr_assert_eq(bytes0(&tt, GPUFIT_MEM_GRADIENTS), ADAPTERS * 2);
    cr_assert_eq(bytes0(&hf, GPUFIT_MEM_OPTIMIZER_STATES), ADAPTERS * 8);
    cr_assert_eq(bytes0(&tt, GPUFIT_MEM_OPTIMIZER_STATES), ADAPTERS * 4);
    /* the frozen bf16 base is the same; the adapters themselves differ by 2 bytes each */
    cr_assert_eq(bytes0(&hf, GPUFIT_MEM_WEIGHTS) - bytes0(&tt, GPUFIT_MEM_WEIGHTS), ADAPTERS * 2);
    done(&hf);
    done(&tt);
}

Test(torchtune, chunked_cross_entropy_by_hand)
{
    run_s hf, tt;
    run_ok(&hf, LORA "trainer=hf");
    run_ok(&tt, LORA "trainer=torchtune");
    const uint64_t sbv = 4ull * 4096 * 128256; /* b x s x V */
    /* eager HF: 12 sbV at the start of backward (autograd ledger (c)) */
    cr_assert_eq(bytes0(&hf, GPUFIT_MEM_LOGITS), 12 * sbv);
    /* torchtune: bf16 chunks 2 sbV + fp32 log-probs 4 sbV + one fp32 chunk copy 4 sbV / 8 */
    cr_assert_eq(bytes0(&tt, GPUFIT_MEM_LOGITS), 6 * sbv + 4 * sbv / 8);
    done(&hf);
    done(&tt);
    /* fp32 recipes: the chunks are fp32 already (.float() copies nothing): 4 + 4 sbV */
    run_ok(&tt, LORA "trainer=torchtune precision=fp32");
    cr_assert_eq(bytes0(&tt, GPUFIT_MEM_LOGITS), 8 * sbv);
    done(&tt);
}

Test(torchtune, precision_auto_is_bf16_without_autocast)
{
    run_s tt, hf;
    run_ok(&tt, "model=llama-3-8b task=finetune micro_batch=1 seq_len=1024 gpu=h100 "
               "trainer=torchtune");
    run_ok(&hf, "model=llama-3-8b task=finetune micro_batch=1 seq_len=1024 gpu=h100 "
               "trainer=hf precision=bf16 optimizer_impl=fused");
    /* the same plan as HF's pure bf16: bf16 weights, grads and AdamW states, no master; the
     * recipes' configs step with fused=True (docs/memory/optimizer-step.md) */
    for (int32_t c = GPUFIT_MEM_WEIGHTS; c <= GPUFIT_MEM_MASTER_WEIGHTS; c++)
        cr_assert_eq(bytes0(&tt, c), bytes0(&hf, c), "component %d", (int)c);
    char buf[512];
    cr_assert_eq(gpufit_result_resolved(tt.r, buf, sizeof buf, NULL), GPUFIT_OK);
    cr_assert_not_null(strstr(buf, "precision=bf16 "), "%s", buf);
    cr_assert_not_null(strstr(buf, " trainer=torchtune "), "%s", buf);
    cr_assert_eq(gpufit_result_resolved(hf.r, buf, sizeof buf, NULL), GPUFIT_OK);
    cr_assert_not_null(strstr(buf, " trainer=hf "), "%s", buf);
    done(&tt);
    done(&hf);
}

Test(torchtune, config_key_flags)
{
    run_s tt;
    run_ok(&tt, LORA "trainer=torchtune global_batch=32 checkpointing=full");
    char buf[1024];
    cr_assert_eq(gpufit_result_flags(tt.r, buf, sizeof buf, NULL), GPUFIT_OK);
    cr_assert_not_null(strstr(buf, "batch_size=4 "), "%s", buf);
    cr_assert_not_null(strstr(buf, "gradient_accumulation_steps=8 "), "%s", buf);
    cr_assert_not_null(strstr(buf, "enable_activation_checkpointing=True"), "%s", buf);
    cr_assert_not_null(strstr(buf, "dtype=bf16"), "%s", buf);
    cr_assert_not_null(strstr(buf, "tokenizer.max_seq_len=4096"), "%s", buf);
    cr_assert_null(strstr(buf, "--"), "no Trainer arguments: %s", buf);
    done(&tt);
}

Test(torchtune, applies_to_pytorch_training_only)
{
    static const char *const bad[] = {
        "model=llama-3-8b task=inference trainer=torchtune",
        "model=llama-3-8b task=lora framework=deepspeed trainer=torchtune",
        "model=llama-3-8b task=pretrain framework=megatron trainer=hf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_s x;
        cr_assert_eq(run(&x, bad[i]), GPUFIT_E_INCONSISTENT, "%s", bad[i]);
        cr_assert_eq(x.err.param, GPUFIT_JOB_TRAINER, "%s: %s", bad[i], x.err.message);
        cr_assert_not_null(strstr(x.err.message, "trainer"), "%s", x.err.message);
        done(&x);
    }
}
