/* SPDX-License-Identifier: MIT */
/* Blocks above 1 MiB in PyTorch's caching allocator (docs/memory/allocator.md, "Blocks above
 * 1 MiB"): c10/cuda/CUDACachingAllocator.cpp splits a large-pool block only when more than
 * 1 MiB (kSmallSize) would remain, and memory_allocated counts whole blocks. Bytes by hand:
 * - weights, loaded into fresh segments: from 10 MiB a segment of the size rounded up to
 *   2 MiB, whose rest stays in the block when it is at most 1 MiB; 1-10 MiB requests share
 *   20 MiB segments, whose last block keeps a rest of up to 1 MiB; below, 512 B blocks;
 * - .grad, fp32 master copies and optimizer states, carved from cached blocks during the
 *   first step: up to 1 MiB + 511 B per tensor above 1 MiB.
 * The point is the tensors' bytes; the band's high end carries the rests;
 * expandable_segments=1 (blocks split to 512 B) has none. */
#include "run.h"

static const uint64_t MIB = 1ull << 20;
static const uint64_t PER = (1ull << 20) + 511; /* a cached block's rest and its rounding */

static uint64_t high_minus_point(run_s *x, int32_t c)
{
    uint64_t lo, hi;
    band0(x, c, &lo, &hi);
    return hi - bytes0(x, c);
}

/* bert-base-cased in fp32 (the accelerate validation case):
 *   word embeddings 28996 x 768 x 4 = 89,075,712 B: its 86 MiB segment's rest 1,101,824 B is
 *     above 1 MiB and split off: 0;
 *   position embeddings 512 x 768 x 4 = 1.5 MiB, a 1-10 MiB request: up to 1 MiB;
 *   token types 2 x 768 x 4 = 6,144 B (small pool, a multiple of 512): 0;
 *   per layer q, k, v, o 768 x 768 x 4 = 2.25 MiB and the two FFN matrices 9 MiB: 6 MiB;
 *   the pooler 2.25 MiB: 1 MiB;
 * 1 + 12 x 6 + 1 = 74 MiB. */
#define BERT_BASE                                                                                  \
    "arch=encoder n_layers=12 hidden_size=768 n_heads=12 n_kv_heads=12 head_dim=64 "              \
    "ffn_hidden_size=3072 mlp=gelu vocab_size=28996 tied_embeddings=true norm=layernorm "          \
    "qkv_bias=true mlp_bias=true max_position=512 type_vocab_size=2 pooler=true "

Test(block_slack, weights_loaded_into_fresh_segments)
{
    run_s x;
    run_ok(&x, BERT_BASE "task=inference precision=fp32 batch=1 context_len=1 prompt_len=1 "
                         "gpu=rtx-4090");
    cr_assert_eq(bytes0(&x, GPUFIT_MEM_WEIGHTS), 433241088ull);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_WEIGHTS), 74 * MIB);
    done(&x);
    run_ok(&x, BERT_BASE "task=inference precision=fp32 batch=1 context_len=1 prompt_len=1 "
                         "gpu=rtx-4090 expandable_segments=1");
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_WEIGHTS), 0);
    done(&x);
}

/* Llama-2-7B in pure bf16: every 2-D tensor is a multiple of 2 MiB (4096 x 4096 x 2 = 32 MiB,
 * 11008 x 4096 x 2 = 86 MiB, 32000 x 4096 x 2 = 250 MiB): the weights keep no rest. Its
 * 32 x 7 + 2 = 226 matrices each get a bf16 .grad and two bf16 AdamW states from cached blocks:
 * 226 and 452 x (1 MiB + 511 B). A fused step, so that the states' band is this alone. */
Test(block_slack, grads_and_states_from_cached_blocks)
{
    run_s x;
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=1 seq_len=512 precision=bf16 "
               "optimizer_impl=fused trainer=hf gpu=h100");
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_WEIGHTS), 0);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_GRADIENTS), 226 * PER);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_OPTIMIZER_STATES), 452 * PER);
    done(&x);
}

/* Where the framework flattens them into a few buffers, nothing: DeepSpeed, FSDP (zero under
 * framework=pytorch), Megatron's grad buffer; Megatron's fp32 main copies and Adam states are
 * per parameter (distrib_optimizer.py clones each shard): 226 and 452 rests. llama.cpp, vLLM
 * and SGLang have none. */
Test(block_slack, only_per_tensor_families)
{
    run_s x;
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=1 seq_len=512 precision=bf16 "
               "gpu=h100 dp=8 zero=1 framework=deepspeed");
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_GRADIENTS), 0);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_MASTER_WEIGHTS), 0);
    done(&x);
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=1 seq_len=512 precision=bf16 "
               "gpu=h100 dp=8 zero=3");
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_WEIGHTS), 0);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_GRADIENTS), 0);
    done(&x);
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=1 seq_len=512 precision=bf16 "
               "gpu=h100 dp=8 zero=1 framework=megatron");
    /* Megatron's grads live in one buffer; the gradients' high end is TE's wgrad dummies
     * (test_wgrad_dummies.c): q, k, v, o 4 x 4096 x 4096, gate, up, down 3 x 11008 x 4096 and
     * the head 32000 x 4096 = 333,447,168 elements x 2 B */
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_GRADIENTS), 666894336ull);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_MASTER_WEIGHTS), 226 * PER);
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_OPTIMIZER_STATES), 452 * PER);
    done(&x);
    run_ok(&x, "model=llama-2-7b task=inference framework=vllm gpu=h100");
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_WEIGHTS), 0);
    done(&x);
}

/* Under tensor parallelism a rank's weights are one shard of each matrix; their rests are
 * bounded by the matrices' count, 1 MiB + 511 B each: Llama-2-7B's 226 bf16 matrices on one
 * rank of tp=2 (Megatron without the distributed optimizer, so the weights are per tensor). */
Test(block_slack, tensor_parallel_shards_bounded_by_count)
{
    run_s x;
    run_ok(&x, "model=llama-2-7b task=pretrain micro_batch=1 seq_len=512 precision=bf16 "
               "gpu=h100 tp=2 framework=megatron");
    cr_assert_eq(high_minus_point(&x, GPUFIT_MEM_WEIGHTS), 226 * PER);
    done(&x);
}
