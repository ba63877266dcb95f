/* SPDX-License-Identifier: MIT */
/* Activation checkpointing as frameworks do it: torchtitan's op-level selective recompute
 * (checkpointing=selective_op), full checkpointing of every N-th layer (checkpoint_every,
 * torchtitan) or of the first N layers of each stage chunk (checkpoint_layers, Megatron's
 * block method), and QLoRA's dequantisation buffers. Bytes by hand from the per-tensor recipe
 * (shared/reference/autograd-ledger.md, memory-model.md §4.5) and the frameworks' code
 * (docs/memory/checkpointing.md). */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdio.h>

/* A small Llama-style decoder: h 64, 4 query heads of 16, 2 KV heads, SwiGLU f 128, RMSNorm.
 * One micro-batch of 32 tokens in bf16 (a = 2 B, residual stream 2 B), flash attention,
 * Megatron's recipe (fused SwiGLU keeps 3 f-wide tensors, RMSNorm keeps its input + fp32
 * rstd). One layer saves, by the ledger:
 *   attention: norm 2·32·64 + 4·32 = 4224, QKV input 4096, Q K V 2·32·(64 + 32 + 32) = 8192,
 *              log-sum-exp 4·4·32 = 512, output-projection input 4096          -> 21120
 *   MLP:       norm 4224, FC1 input 4096, 3 x 2·32·128 = 24576                  -> 32896
 *   total 54016; layer input 4096; largest saved tensor 2·32·128 = 8192.
 * Backward transient: one re-materialised layer + 2 residual gradients under full
 * checkpointing (54016 + 8192 = 62208), else the largest tensor's gradient + 2 (16384). */
#define DENSE(L)                                                                                   \
    "arch=decoder n_layers=" #L " hidden_size=64 n_heads=4 n_kv_heads=2 vocab_size=8 "             \
    "ffn_hidden_size=128 mlp=swiglu norm=rmsnorm task=pretrain framework=megatron "                \
    "precision=bf16 seq_len=32 micro_batch=1 "
/* vocab_size 8: the loss's terms, 6 x 32 x 8 = 1,536 B, stay below every layer's backward
 * temporaries, which Megatron counts only by what they exceed the loss by
 * (test_megatron_loss_phase.c); these tests measure the layers' keeps */
#define TOTAL 54016u
#define INPUT 4096u

static uint64_t act(const char *spec, uint32_t role)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    uint64_t b = 0;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, spec, &err), GPUFIT_OK, "%s: %s", spec, err.message);
    cr_assert_eq(gpufit_evaluate(&r, m, j, &err), GPUFIT_OK, "%s: %s", spec, err.message);
    cr_assert_eq(gpufit_result_bytes(r, role, GPUFIT_MEM_ACTIVATIONS, &b), GPUFIT_OK);
    gpufit_result_free(r);
    gpufit_job_free(j);
    gpufit_model_free(m);
    return b;
}

static void expect_error(const char *spec, int32_t param)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_result *r = NULL;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    int32_t st = gpufit_apply_spec(m, j, spec, &err);
    if (st == GPUFIT_OK)
        st = gpufit_evaluate(&r, m, j, &err);
    cr_assert_eq(st, GPUFIT_E_INCONSISTENT, "%s", spec);
    cr_assert_eq(err.param, param, "%s: %s", spec, err.message);
    cr_assert(r == NULL);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* torchtitan _apply_op_sac: the block input, the outputs of the odd-numbered mms
 * (wq 1st, wv 3rd, w1 5th, w2 7th; wk, wo, w3 recomputed) and the flash kernel's output
 * and log-sum-exp:
 *   4096 + wq 2·32·64 = 4096 + wv 2·32·32 = 2048 + attention out 4096 + lse 512
 *        + w1 2·32·128 = 8192 + w2 2·32·64 = 4096                             = 27136
 * Backward re-materialises the layer less its cached outputs that autograd also saves
 * (Q 4096, V 2048, attention out + lse 4608, gate 8192 = 18944): 62208 - 18944 = 43264.
 * Against full checkpointing, over 4 layers: 4 x (27136 - 4096) + (43264 - 62208) = 73216. */
Test(selective_op, keeps_every_other_matmul_output)
{
    uint64_t full = act(DENSE(4) "checkpointing=full", 0);
    uint64_t op = act(DENSE(4) "checkpointing=selective_op", 0);
    cr_assert_eq(op - full, 4 * (27136 - INPUT) - 18944);
    cr_assert_eq(op - full, 73216);
}

/* With tp=2 and sequence parallelism (torchtitan's TP plan) each rank keeps per layer:
 * input 2·32·64 / 2 = 2048, wq 2·32·32 = 2048, wv 2·32·16 = 1024 (one KV head per rank),
 * attention out 2·32·32 + lse 4·2·32 = 2304, the two reduce_scatter outputs 2 x 2048,
 * w1 2·32·64 = 4096, w2 2·32·64 = 4096: 19712; cached 2048 + 1024 + 2304 + 4096 = 9472.
 * 4 x (19712 - 2048) - 9472 = 61184. */
Test(selective_op, tensor_parallel_keeps_reduce_scatter_outputs)
{
    uint64_t full = act(DENSE(4) "tp=2 sp=1 checkpointing=full", 0);
    uint64_t op = act(DENSE(4) "tp=2 sp=1 checkpointing=selective_op", 0);
    cr_assert_eq(op - full, 61184);
}

/* torchtitan selective_ac_option "2": _layer_sac_count % 2 == 0 wraps the 2nd and 4th of 4
 * layers; the 1st and 3rd keep everything: 2 x 4096 + 2 x 54016 against 4 x 4096, the
 * transient is the full one either way: 2 x (54016 - 4096) = 99840 more. Every 4th: one
 * layer, 3 x 49920. Every 8th of 4 layers: none, as no checkpointing. */
Test(checkpoint_every, every_nth_layer_keeps_the_others)
{
    uint64_t full = act(DENSE(4) "checkpointing=full", 0);
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_every=1", 0), full);
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_every=2", 0) - full,
                 2 * (TOTAL - INPUT));
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_every=4", 0) - full,
                 3 * (TOTAL - INPUT));
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_every=8", 0),
                 act(DENSE(4) "checkpointing=none", 0));
}

/* Megatron --recompute-method block --recompute-num-layers N (core/recompute.py): the first N
 * layers of the stage are checkpointed. N = 1 of 4: 3 layers keep everything; N = 4: all. */
Test(checkpoint_layers, megatron_block_method)
{
    uint64_t full = act(DENSE(4) "checkpointing=full", 0);
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_layers=1", 0) - full,
                 3 * (TOTAL - INPUT));
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_layers=4", 0), full);
    cr_assert_eq(act(DENSE(4) "checkpointing=full checkpoint_layers=9", 0), full);
}

/* Interleaved pipeline, pp 2 x vpp 2 over 8 layers: each stage holds 2 chunks of 2 layers and
 * the block method checkpoints the first layer of each chunk (num_layers_per_pipeline_rank is
 * the chunk's). Stage 0 keeps min(2(p-1) + (v-1)p + 1, m v) = 5 chunks in flight (m = 8): per
 * stage 2 x 4096 + 2 x 54016 against 4 x 4096, times 5/2: 5 x 2 x 49920 / 2 = 249600. */
Test(checkpoint_layers, per_chunk_under_interleaving)
{
    uint64_t full = act(DENSE(8) "pp=2 vpp=2 global_batch=8 checkpointing=full", 0);
    uint64_t block =
        act(DENSE(8) "pp=2 vpp=2 global_batch=8 checkpointing=full checkpoint_layers=1", 0);
    cr_assert_eq(block - full, 249600);
}

Test(checkpoint_every, needs_full_checkpointing)
{
    expect_error(DENSE(4) "checkpoint_every=2", GPUFIT_JOB_CHECKPOINT_EVERY);
    expect_error(DENSE(4) "checkpointing=selective checkpoint_every=2",
                 GPUFIT_JOB_CHECKPOINT_EVERY);
    expect_error(DENSE(4) "checkpointing=selective_op checkpoint_layers=2",
                 GPUFIT_JOB_CHECKPOINT_LAYERS);
    expect_error(DENSE(4) "checkpointing=full checkpoint_every=2 checkpoint_layers=2",
                 GPUFIT_JOB_CHECKPOINT_LAYERS);
}

/* bitsandbytes MatMul4Bit dequantises each 4-bit weight into a 16-bit temporary for F.linear
 * (forward) and again for grad_A (backward). Llama-3-8B's largest linear is a 14336 x 4096
 * MLP matrix: 58,720,256 x 2 B = 117,440,512 B live at the backward peak. Double
 * quantisation first restores the fp32 absmax of every 64 weights: + 917,504 x 4 B. An 8-bit
 * base (weight_dtype=int8, not a 4-bit MatMul4Bit) has no such buffer. */
Test(qlora, dequantised_weight_transient)
{
#define QLORA "model=llama-3-8b task=qlora seq_len=512 micro_batch=1 "
    uint64_t int8 = act(QLORA "weight_dtype=int8", 0);
    cr_assert_eq(act(QLORA "weight_dtype=nf4", 0) - int8, 117440512);
    cr_assert_eq(act(QLORA "weight_dtype=fp4", 0) - int8, 117440512);
    cr_assert_eq(act(QLORA "weight_dtype=nf4_dq", 0) - int8, 117440512 + 917504 * 4);
    cr_assert_eq(act(QLORA, 0) - int8, 117440512); /* QLoRA's default base: nf4 */
#undef QLORA
}
