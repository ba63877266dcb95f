/* SPDX-License-Identifier: MIT */
/* Megatron: the loss's terms and a layer's backward temporaries never coexist (autograd runs the
 * output layer's backward before any layer's), so the peak holds the larger of the two
 * (docs/memory/megatron.md, "The loss and a layer's temporaries"). Bytes by hand. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

/* Megatron's CI small GPT, full recompute: h 512, 12 layers, vocab 50304, micro-batch 4 x 1024
 * = 4096 tokens, bf16, dropout 0.1 (Megatron's default). */
#define SMALL                                                                                  \
    "arch=decoder n_layers=12 hidden_size=512 n_heads=8 n_kv_heads=8 head_dim=64 "             \
    "ffn_hidden_size=2048 mlp=gelu tied_embeddings=true norm=layernorm dropout=0.1 "         \
    "qkv_bias=true mlp_bias=true task=pretrain framework=megatron precision=bf16 "             \
    "micro_batch=4 seq_len=1024 gpu=h100 checkpointing=full "

Test(megatron_loss_phase, the_loss_outweighs_one_layers_recompute)
{
    run_s s;
    run_ok(&s, SMALL "vocab_size=50304");
    /* logits: bf16 logits and the fp32 softmax, 6 x 4096 x 50304 = 1,236,271,104 */
    cr_assert_eq(bytes0(&s, GPUFIT_MEM_LOGITS), 1236271104ull);
    /* activations: only what is stored, the recompute of one layer (smaller than the loss's
     * terms) adding nothing:
     *   12 layer inputs, 2 x 4096 x 512             50,331,648
     *   token ids (8 B) and embedding dropout mask (1 B x 512) per token: 520 x 4096
     *                                                 2,129,920
     *   final layernorm input and its mean/rstd (2 x 4096 x 512 + 8 x 4096)
     *                                                 4,227,072
     *   output layer input, 2 x 4096 x 512           4,194,304
     *                                                60,882,944 */
    cr_assert_eq(bytes0(&s, GPUFIT_MEM_ACTIVATIONS), 60882944ull);
    done(&s);
}

Test(megatron_loss_phase, a_larger_layer_adds_what_it_exceeds_the_loss_by)
{
    /* a 512-entry vocabulary: the loss, 6 x 4096 x 512 = 12,582,912, is smaller than one
     * layer's recompute, so activations + logits = stored + the recompute: the stored
     * 60,882,944 above and the recompute, one layer's activations and two residual-stream
     * gradients, 79,888,384, whatever the vocabulary */
    run_s a, b;
    run_ok(&a, SMALL "vocab_size=512");
    cr_assert_eq(bytes0(&a, GPUFIT_MEM_LOGITS), 12582912ull);
    cr_assert_eq(bytes0(&a, GPUFIT_MEM_ACTIVATIONS) + bytes0(&a, GPUFIT_MEM_LOGITS),
                 60882944ull + 79888384ull);
    /* one entry more adds 6 x 4096 B to the logits and takes as much from the activations */
    run_ok(&b, SMALL "vocab_size=513");
    cr_assert_eq(bytes0(&b, GPUFIT_MEM_LOGITS) - bytes0(&a, GPUFIT_MEM_LOGITS), 6ull * 4096);
    cr_assert_eq(bytes0(&a, GPUFIT_MEM_ACTIVATIONS) - bytes0(&b, GPUFIT_MEM_ACTIVATIONS),
                 6ull * 4096);
    done(&a);
    done(&b);
}
