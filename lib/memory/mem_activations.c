/* SPDX-License-Identifier: MIT */
/* Training activations: the per-tensor recipe of memory-model.md §4.5, checked tensor by
 * tensor against shared/reference/autograd-ledger.md; checkpointing §4.7; pipeline in-flight
 * micro-batches §4.3; embedding, logits and loss §4.4. */
#include "eval.h"

typedef struct layer_terms {
    uint64_t total;   /* bytes saved by one layer for one micro-batch */
    uint64_t s2;      /* of which s x s attention terms (dropped by selective recompute) */
    uint64_t input;   /* the layer input (all that full checkpointing keeps) */
    uint64_t largest; /* the largest single saved tensor */
    uint64_t op_keep;   /* selective_op: the op outputs kept, layer input included */
    uint64_t op_cached; /* ... of which tensors that autograd also saves (in total) */
    uint32_t n_mm;      /* selective_op: matmuls counted so far in the layer */
} layer_terms;

static uint64_t max_u(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Per-norm bytes: LayerNorm saves its input and fp32 mean/rstd (ledger (a), S = 4 on CUDA);
 * HF RMSNorm upcasts: fp32 copy of x + fp32 rstd instead of the 16-bit input (ledger (b)). */
static uint64_t norm_bytes(const gpufit__plan *p, const gpufit__shape *s, uint64_t tok,
                           uint64_t width)
{
    if (s->norm == GPUFIT_NORM_LAYERNORM) /* autocast runs layer_norm in fp32 */
        return (p->amp ? 4 : p->a_b) * tok * width + 8 * tok;
    if (p->framework == GPUFIT_FW_PYTORCH && p->a_b < 4)
        return 4 * tok * width + 4 * tok;
    return p->a_b * tok * width + 4 * tok;
}

/* torchtitan op-level selective activation checkpointing (selective_ac_option = "op";
 * torchtitan distributed/activation_checkpoint.py _apply_op_sac and _save_list /
 * _op_sac_save_list): inside a checkpointed block every aten.mm is counted in forward order
 * and the outputs of the odd-numbered ones (1st, 3rd, ...) are saved (MUST_SAVE), the
 * even-numbered ones recomputed; the router's mm is forced to recompute and not counted
 * (per_op_sac_force_recompute_mm_shapes_by_fqns = moe.router.gate); the routed experts run
 * grouped GEMMs, which are not in the list. bytes: the mm's output; cached: autograd saves
 * the same tensor in the no-checkpointing ledger (a projection's output is the next op's
 * saved input; an output projection's is not). */
static void op_mm(layer_terms *t, uint64_t bytes, int cached)
{
    if (++t->n_mm % 2 == 1) {
        t->op_keep += bytes;
        t->op_cached += cached ? bytes : 0;
    }
}

/* Bytes per element that the LoRA adapters of the modules in `set` keep of the input they
 * share (docs/memory/lora.md, "Adapter dropout"): their frozen base layers keep nothing for
 * the weights' gradient, each adapter's lora_A its own input (peft/tuners/lora/layer.py
 * Linear.forward: lora_B(lora_A(dropout(x))); torchtune/modules/peft/lora.py
 * LoRALinear.forward the same). Without lora_dropout that is the shared input itself, once
 * (a bytes); with it, each adapter's dropped copy (a bytes) and its mask (torch's
 * native_dropout saves it, 1 byte). No adapter in the set: nothing. */
static uint64_t lora_input(const gpufit__plan *p, int32_t set)
{
    uint64_t n = (uint64_t)__builtin_popcount((unsigned)(p->lora_mask & set));
    if (n == 0)
        return 0;
    return p->lora_dropout > 0.0 ? n * (p->a_b + 1) : p->a_b;
}

/* One attention block (self or cross) over tok tokens attending to sq positions; norm: its
 * norm's bytes, norm_bytes(p, s, tok, s->h). */
static void attention(const gpufit__plan *p, const gpufit__shape *s, uint64_t tok, uint64_t sq,
                      uint64_t norm, layer_terms *t)
{
    uint64_t a = p->a_b, tp = p->tp, hs = p->sp ? tp : 1;
    uint64_t nq = gpufit__div_up(s->nq, tp);
    uint64_t q = s->mla ? nq * (s->d_n + s->d_r) : nq * s->dh;
    uint64_t c = s->mla ? q : (s->nkv > tp ? s->nkv / tp : 1) * s->dh;
    uint64_t cv = s->mla ? nq * s->d_v : c;
    int eager = p->attention == GPUFIT_ATTN_EAGER;
    int frozen_o = p->lora && !(p->lora_mask & GPUFIT_LORA_MODULE_O) && eager;
    if (eager && p->framework == GPUFIT_FW_PYTORCH && !s->mla) /* repeat_kv saves expanded K/V */
        c = cv = q;
    uint64_t bytes = gpufit__div(norm, hs); /* norm input (+stats) */
    bytes += gpufit__div(a * tok * s->h, hs);                      /* QKV-projection input */
    if (p->lora && !s->mla) /* LoRA: what the adapters' lora_A keep of that input (below) */
        bytes = bytes - gpufit__div(a * tok * s->h, hs) +
                gpufit__div(lora_input(p, GPUFIT_LORA_MODULE_Q | GPUFIT_LORA_MODULE_K |
                                                  GPUFIT_LORA_MODULE_V) *
                                tok * s->h,
                            hs);
    if (p->amp && !s->mla) /* autocast: q, k and v each save their own 16-bit cast */
        bytes += gpufit__div(2 * a * tok * s->h, hs);
    if (s->mla)                                        /* compressed latents (§1.3 shapes) */
        bytes += a * tok * (s->r_q + s->r_kv + s->d_r);
    bytes += a * tok * (q + c + cv); /* Q, K, V */
    /* selective_op: projections in torchtitan's order (Llama: wq, wk, wv, wo; DeepSeek MLA:
     * [wq_a, wq_b | wq], wkv_a, wkv_b, wo); the attention kernel's output and fp32
     * log-sum-exp are saved (_scaled_dot_product_flash/efficient_attention in the list),
     * eager attention's bmm/softmax are not */
    int op = p->ckpt == GPUFIT_CKPT_SELECTIVE_OP;
    if (op && s->mla) {
        if (s->r_q > 0)
            op_mm(t, a * tok * s->r_q, 1);
        op_mm(t, a * tok * q, 1);
        op_mm(t, a * tok * (s->r_kv + s->d_r), 1);
        op_mm(t, a * tok * nq * (s->d_n + s->d_v), 1);
    } else if (op) {
        uint64_t kv = (s->nkv > tp ? s->nkv / tp : 1) * s->dh; /* before any repeat_kv */
        op_mm(t, a * tok * q, 1);
        op_mm(t, a * tok * kv, 1);
        op_mm(t, a * tok * kv, 1);
    }
    if (op && !eager) {
        uint64_t out = a * tok * (s->mla ? nq * s->d_v : q) + 4 * nq * tok;
        t->op_keep += out;
        t->op_cached += out;
    }
    if (op)
        op_mm(t, a * tok * s->h, 0); /* output projection (a partial sum of h under tp) */
    if (op && p->sp && tp > 1)       /* torchtitan's sequence parallel: reduce_scatter output */
        t->op_keep += a * tok * s->h / tp;
    uint64_t s2 = 0;
    if (eager) { /* scores: softmax output (HF upcasts to fp32), dropout mask and output */
        uint64_t soft = p->framework == GPUFIT_FW_PYTORCH && a < 4 ? 4 : a;
        uint64_t coef = soft + (a < 4 || p->dropout > 0.0 ? a : 0) + (p->dropout > 0.0 ? 1 : 0);
        if (p->framework != GPUFIT_FW_PYTORCH) /* Megatron fused softmax: 2a + 1 (§4.1) */
            coef = a + (p->dropout > 0.0 ? a + 1 : 0);
        s2 = coef * nq * sq * tok;
        t->largest = max_u(t->largest, soft * nq * sq * tok);
    } else {
        bytes += 4 * nq * tok; /* flash / SDPA log-sum-exp (fp32) */
    }
    if (!frozen_o)
        bytes += a * tok * (s->mla ? cv : q); /* output-projection input */
    if (p->lora_dropout > 0.0 && (p->lora_mask & GPUFIT_LORA_MODULE_O))
        /* o's adapter keeps its dropped copy and mask; eager's copy replaces the input its
         * lora_A kept, a kernel's saved output stays */
        bytes += (eager ? 1 : a + 1) * tok * (s->mla ? cv : q);
    if (p->dropout > 0.0)
        bytes += gpufit__div(tok * s->h, hs); /* residual-dropout mask */
    t->total += bytes + s2;
    t->s2 += s2;
}

/* One MLP of width f over `tok` tokens (dense, shared expert or routed experts). */
static uint64_t mlp(const gpufit__plan *p, const gpufit__shape *s, uint64_t tok, uint64_t f,
                    uint64_t shard, layer_terms *t)
{
    uint64_t a = p->a_b;
    uint64_t fs = gpufit__div_up(f, shard);
    /* a frozen weight's input is not saved for its gradient: the down projection's when down
     * has no adapter, the gate/up input when neither has one */
    int frozen_down = p->lora && !(p->lora_mask & GPUFIT_LORA_MODULE_DOWN);
    int frozen_in = p->lora && !(p->lora_mask & (GPUFIT_LORA_MODULE_GATE | GPUFIT_LORA_MODULE_UP));
    uint64_t k_mlp = s->gated ? (p->framework == GPUFIT_FW_PYTORCH ? 4 : 3) : 2;
    if (frozen_down)
        k_mlp -= 1;
    uint64_t bytes = a * tok * s->h; /* FC1 / gate+up input */
    if (frozen_in)
        bytes = 0;
    else if (p->lora_dropout > 0.0)
        bytes = lora_input(p, s->gated ? GPUFIT_LORA_MODULE_GATE | GPUFIT_LORA_MODULE_UP
                                       : GPUFIT_LORA_MODULE_UP) *
                tok * s->h;
    bytes += k_mlp * a * tok * fs;
    if (p->lora_dropout > 0.0 && (p->lora_mask & GPUFIT_LORA_MODULE_DOWN))
        bytes += tok * fs; /* down's adapter: its dropped copy replaces the input, + the mask */
    t->largest = max_u(t->largest, a * tok * fs);
    return bytes;
}

/* selective_op: a dense MLP's or shared expert's matmuls in torchtitan's order (FeedForward:
 * w2(silu(w1(x)) * w3(x)), i.e. w1, w3, w2; GELU MLPs fc1, fc2). */
static void op_mlp(const gpufit__plan *p, const gpufit__shape *s, uint64_t tok, uint64_t f,
                   uint64_t shard, layer_terms *t)
{
    if (p->ckpt != GPUFIT_CKPT_SELECTIVE_OP)
        return;
    uint64_t fs = gpufit__div_up(f, shard);
    op_mm(t, p->a_b * tok * fs, 1);
    if (s->gated)
        op_mm(t, p->a_b * tok * fs, 1);
    op_mm(t, p->a_b * tok * s->h, 0);
}

static void ffn_block(const gpufit__plan *p, const gpufit__shape *s, uint64_t tok, int moe,
                      uint64_t norm, layer_terms *t)
{
    uint64_t hs = p->sp ? p->tp : 1;
    uint64_t bytes = gpufit__div(norm, hs);
    if (!moe) {
        bytes += mlp(p, s, tok, s->f, p->tp, t);
        op_mlp(p, s, tok, s->f, p->tp, t);
    } else { /* §4.6: router logits + probs (fp32), k-fold dispatched tokens, shared experts */
        bytes += 8 * tok * s->E;
        bytes += p->a_b * s->k * tok * s->h;
        /* Each rank's experts see etp x the tokens of one attention rank (tok / tp with
         * sequence parallelism), k-fold: the all-to-all over ep keeps the count, the
         * all-gather over the expert tp group multiplies it by etp (Megatron-Core
         * moe/token_dispatcher.py MoEAlltoAllTokenDispatcher.dispatch_postprocess), and each
         * expert's FC1/FC2 is split over etp: k tok etp / tp tokens at width f_moe / etp
         * (= k tok at f_moe / tp when etp = tp). */
        uint64_t te = gpufit__div(s->k * tok * p->etp, p->tp);
        bytes += mlp(p, s, te, s->f_moe, p->etp, t);
        if (s->n_shared > 0) {
            bytes += s->n_shared * mlp(p, s, tok, s->f_sh, p->tp, t);
            op_mlp(p, s, tok, s->n_shared * s->f_sh, p->tp, t);
        }
    }
    if (p->ckpt == GPUFIT_CKPT_SELECTIVE_OP && p->sp && p->tp > 1) /* its reduce_scatter */
        t->op_keep += p->a_b * tok * s->h / p->tp;
    if (p->dropout > 0.0)
        bytes += gpufit__div(tok * s->h, hs);
    t->total += bytes;
}

static void layer(const gpufit__plan *p, const gpufit__shape *s, int where, layer_terms *t)
{
    uint64_t seq = gpufit__div(p->s, p->cp);
    uint64_t tok = seq * p->b;
    uint64_t norm = norm_bytes(p, s, tok, s->h); /* every norm of the layer: one width */
    *t = (layer_terms){0};
    attention(p, s, tok, seq, norm, t);
    if (where == GPUFIT__W_DEC)
        attention(p, s, tok, seq, norm, t); /* cross-attention over the encoder output */
    ffn_block(p, s, tok, where == GPUFIT__W_MOE, norm, t);
    t->input = gpufit__div(p->resid_b * tok * s->h, p->sp ? p->tp : 1);
    t->op_keep += t->input; /* the checkpoint wrapper keeps the block's input */
}

int gpufit__train_layer_terms(const gpufit__plan *p, const gpufit__shape *s,
                              gpufit__act_terms *at)
{
    uint64_t seq = gpufit__div(p->s, p->cp), tok = seq * p->b, x, transient;
    at->tok = tok; /* keep and transient are read only for the classes the model has */
    if (s->arch == GPUFIT_ARCH_GENERIC)
        return 0;
    /* Overflow guard: every per-layer term is at most 64 bytes per token per width element
     * (h, q, the widest MLP, k MLP fan-out, E) plus 16 bytes per score; with that bound checked,
     * the unchecked sums of one layer below cannot wrap, and the totals are checked. */
    uint64_t width = s->h + s->q + 2 * s->c + s->f + s->k * (s->f_moe + s->h) +
                     s->n_shared * s->f_sh + s->E + s->r_q + s->r_kv, wide;
    /* experts split over more ranks than the attention (etp > tp) see etp / tp x the tokens */
    if (p->etp > p->tp && (gpufit__mul(s->k * s->h, (p->etp + p->tp - 1) / p->tp, &wide) ||
                           gpufit__add(width, wide, &width)))
        return 1;
    if (gpufit__mul(width, 64, &x) || gpufit__mul(x, tok, &x) ||
        gpufit__mul(s->nq * 16, seq, &transient) || gpufit__mul(transient, tok, &transient) ||
        gpufit__add(x, transient, &x) || gpufit__mul(x, 4, &x))
        return 1;
    for (int w = s->w_first; w < s->w_end; w++) {
        if (s->layers[w] == 0)
            continue;
        layer_terms t;
        layer(p, s, w, &t);
        at->keep[w] = p->ckpt == GPUFIT_CKPT_FULL           ? t.input
                      : p->ckpt == GPUFIT_CKPT_SELECTIVE    ? t.total - t.s2
                      : p->ckpt == GPUFIT_CKPT_SELECTIVE_OP ? t.op_keep
                                                            : t.total;
        /* backward: full recompute re-materialises one layer (§4.7); otherwise the gradients
         * of the largest saved tensor and of two residual-stream tensors are live. Op-level
         * recompute re-materialises what it did not keep: the layer less its cached outputs
         * (derived). */
        uint64_t none = t.largest + 2 * t.input, full = t.total + 2 * t.input;
        at->transient[w] = p->ckpt == GPUFIT_CKPT_FULL ? full : none;
        if (p->ckpt == GPUFIT_CKPT_FULL) { /* for checkpoint_every / checkpoint_layers */
            at->keep_none[w] = t.total;
            at->transient_none[w] = none;
        } else if (p->ckpt == GPUFIT_CKPT_SELECTIVE_OP) {
            at->transient[w] =
                max_u(full - (t.op_cached < t.total ? t.op_cached : t.total), none);
        }
    }
    return 0;
}

/* Checkpointed layers among stage positions [0, x) (positions count the stage's layers in
 * order; a class of the slice takes a contiguous run). torchtitan's layer option
 * (_apply_layer_sac: a global counter, `_layer_sac_count % ac_freq == 0`) wraps positions
 * N-1, 2N-1, ...; Megatron's block method (core/recompute.py: recompute_method 'block')
 * the first N of each model chunk (num_layers_per_pipeline_rank, chunk = stage / vpp). */
static uint64_t ckpt_before(const gpufit__plan *p, uint64_t x, uint64_t chunk)
{
    if (p->ckpt_layers > 0) {
        uint64_t m = p->ckpt_layers < chunk ? p->ckpt_layers : chunk;
        return x / chunk * m + (x % chunk < m ? x % chunk : m);
    }
    return x / p->ckpt_every;
}

/* Full checkpointing of some layers only (checkpoint_every / checkpoint_layers): the others
 * keep what no checkpointing keeps; positions run over the stage's layers in class order.
 * Out of line, returning by value: the common path stays small. */
typedef struct some_t {
    uint64_t stored, transient;
    int ovf;
} some_t;

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static some_t some_layers(const gpufit__plan *p, const gpufit__shape *s,
                          const gpufit__act_terms *at, const gpufit__slice *sl)
{
    some_t r = {0, 0, 0};
    uint64_t count = 0, pos = 0, chunk, x;
    for (int w = s->w_first; w < s->w_end; w++)
        count += sl->layers[w];
    chunk = p->vpp > 1 && count % p->vpp == 0 ? count / p->vpp : count;
    for (int w = s->w_first; w < s->w_end; w++) {
        uint64_t n = sl->layers[w], ck;
        if (n == 0)
            continue;
        ck = ckpt_before(p, pos + n, chunk) - ckpt_before(p, pos, chunk);
        pos += n;
        r.ovf |= gpufit__mul(at->keep_none[w], n - ck, &x) || gpufit__add(r.stored, x, &r.stored) ||
                 gpufit__mul(at->keep[w], ck, &x) || gpufit__add(r.stored, x, &r.stored);
        if (ck < n)
            r.transient = max_u(r.transient, at->transient_none[w]);
        if (ck > 0)
            r.transient = max_u(r.transient, at->transient[w]);
    }
    return r;
}

int gpufit__train_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__act_terms *at, const gpufit__slice *sl,
                              uint64_t *act_out, uint64_t *logits_out)
{
    uint64_t tok = at->tok;
    uint64_t stored = 0, transient = 0, x;
    if (s->arch == GPUFIT_ARCH_GENERIC) {
        double per_tok = s->act_bytes_per_token;
        double v = per_tok * (double)tok * (double)sl->inflight / (double)sl->inflight_den;
        if (!(v < 1.8e19))
            return 1;
        *act_out = (uint64_t)(v + 0.5);
        *logits_out = 0;
        return 0;
    }
    if (p->ckpt == GPUFIT_CKPT_FULL && (p->ckpt_every > 1 || p->ckpt_layers > 0)) {
        some_t r = some_layers(p, s, at, sl);
        if (r.ovf)
            return 1;
        stored = r.stored;
        transient = r.transient;
    } else {
        for (int w = s->w_first; w < s->w_end; w++) {
            if (sl->layers[w] == 0)
                continue;
            if (gpufit__mul(at->keep[w], sl->layers[w], &x) || gpufit__add(stored, x, &stored))
                return 1;
            transient = max_u(transient, at->transient[w]);
        }
    }
    if (gpufit__mul(stored, sl->inflight, &stored))
        return 1;
    stored = gpufit__div(stored, sl->inflight_den);
    if (sl->embedding) { /* token ids (int64) and the embedding-dropout mask (§4.4) */
        uint64_t mb = gpufit__div_up(sl->inflight, sl->inflight_den);
        uint64_t per = 8 + (p->dropout > 0.0 ? s->h / (p->sp ? p->tp : 1) : 0);
        if (gpufit__mul(per * tok, mb, &x) || gpufit__add(stored, x, &stored))
            return 1;
    }
    uint64_t logits = 0;
    if (sl->output && s->arch != GPUFIT_ARCH_ENCODER) {
        /* final-norm and LM-head inputs, then the loss: eager HF keeps fp32 log-probs and, at
         * the start of backward, their gradient and the logits gradient (ledger (c): 4sbV
         * saved; §4.4: ~10-12 sbV live); Megatron's vocab-parallel CE turns the 16-bit
         * logits into fp32 softmax in place (4sbV/t kept) and casts its gradient back to
         * 16 bit: 6sbV/t at either peak. torchtune's CEWithChunkedOutputLoss
         * (torchtune/modules/loss/ce_chunked_output_loss.py; the model emits 8 chunks of
         * logits, TransformerDecoder.chunked_output) upcasts one chunk at a time and saves its
         * fp32 log-probs: at the end of the forward the chunks (a sbV), the saved log-probs
         * (4sbV) and the last chunk's fp32 copy (4sbV/8, none when the chunks are fp32); the
         * recipes then `del logits` before backward, so that is the peak. */
        stored += norm_bytes(p, s, tok, s->h) + p->a_b * tok * s->h;
        uint64_t v = gpufit__div_up(s->V, p->tp);
        if (p->trainer == GPUFIT_TRAINER_TORCHTUNE) {
            uint64_t chunks, copy = 0;
            if (gpufit__mul((p->a_b + 4) * tok, v, &chunks) ||
                (p->a_b < 4 && gpufit__mul(4 * tok, v, &copy)) ||
                gpufit__add(chunks, gpufit__div_up(copy, 8), &logits))
                return 1;
        } else {
            uint64_t coef = p->framework == GPUFIT_FW_PYTORCH ? 12 : 4 + p->a_b;
            if (gpufit__mul(coef * tok, v, &logits))
                return 1;
        }
    }
    if (p->framework == GPUFIT_FW_MEGATRON) {
        /* the loss's terms (megatron/core/tensor_parallel/cross_entropy.py
         * vocab_parallel_cross_entropy: 6sbV/t) live from the output layer's forward to its
         * backward, a layer's temporaries inside that layer's forward or backward (its
         * recompute under full checkpointing): autograd runs the output layer's backward
         * before any layer's, so the peak holds the larger, not both (docs/memory/megatron.md,
         * "The loss and a layer's temporaries") */
        transient = transient > logits ? transient - logits : 0;
    }
    if (gpufit__add(stored, transient, act_out))
        return 1;
    *logits_out = logits;
    return 0;
}
