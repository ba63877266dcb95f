/* SPDX-License-Identifier: MIT */
/* Weight bytes held by a device, tensor by tensor, and the trainable parameters with their
 * optimizer states. Formats: memory-model.md §7 (GGUF recipes §7.2 from llama.cpp
 * src/llama-quant.cpp; GPTQ/AWQ §7.3; bitsandbytes §7.4); optimizer states §2.3. */
#include "eval.h"
#include <string.h>

static int is_gguf(int64_t dt)
{
    return dt >= GPUFIT_DTYPE_Q4_0 && dt <= GPUFIT_DTYPE_F16_GGUF;
}

static int is_1d(const gpufit__tgroup *g)
{
    return g->rows == 1;
}

/* llama.cpp use_more_bits(i, n): memory-model.md §7.2 */
static int more_bits(uint64_t i, uint64_t n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* Base tensor type of a GGUF file type. */
static int64_t gguf_base(int64_t ft)
{
    switch (ft) {
    case GPUFIT_DTYPE_Q3_K_S:
    case GPUFIT_DTYPE_Q3_K_M:
    case GPUFIT_DTYPE_Q3_K_L: return GPUFIT_DTYPE_Q3_K;
    case GPUFIT_DTYPE_Q4_K_S:
    case GPUFIT_DTYPE_Q4_K_M: return GPUFIT_DTYPE_Q4_K;
    case GPUFIT_DTYPE_Q5_K_S:
    case GPUFIT_DTYPE_Q5_K_M: return GPUFIT_DTYPE_Q5_K;
    case GPUFIT_DTYPE_F16_GGUF: return GPUFIT_DTYPE_FP16;
    default: return ft;
    }
}

/* k-quants need rows of 256: llama.cpp falls back per tensor (llama-quant.cpp). */
static int64_t gguf_fallback(int64_t t, uint64_t row_len)
{
    const gpufit__dtype_info *d = gpufit__dtype(t);
    if (d == NULL || row_len % d->block_elems == 0)
        return t;
    switch (t) {
    case GPUFIT_DTYPE_Q4_K: return GPUFIT_DTYPE_Q5_0;
    case GPUFIT_DTYPE_Q5_K: return GPUFIT_DTYPE_Q5_1;
    case GPUFIT_DTYPE_Q6_K: return GPUFIT_DTYPE_Q8_0;
    default: return GPUFIT_DTYPE_IQ4_NL;
    }
}

/* Tensor type llama.cpp gives a 2-D tensor of `kind` in layer i of n (llama-quant.cpp
 * llama_tensor_get_type_impl, the branches that do not depend on an importance matrix).
 * lo: the low end of the recipe's band instead (docs/band.md): the file type names the mix,
 * not its tensors (imatrix builds, --output-tensor-type / --tensor-type overrides, forks and
 * custom mixes move the per-tensor bumps), so every 2-D tensor at the mix's base type. */
static int64_t gguf_type(int64_t ft, const gpufit__shape *s, int kind, uint64_t i, uint64_t n,
                         int lo)
{
    int64_t base = gguf_base(ft);
    if (kind == GPUFIT__T_ROUTER) {
        /* llama-quant.cpp never quantises ffn_gate_inp.weight, so the router keeps the
         * converter's type: F32 from convert_hf_to_gguf.py (prepare_tensors: "Some tensor
         * types are always in float32", FFN_GATE_INP); the old convert.py
         * (GGMLFileType.type_for_tensor) gave every 2-D tensor the outtype, f16 or q8_0 */
        if (!lo || ft == GPUFIT_DTYPE_FP32)
            return GPUFIT_DTYPE_FP32;
        return ft == GPUFIT_DTYPE_Q8_0 ? GPUFIT_DTYPE_Q8_0 : GPUFIT_DTYPE_FP16;
    }
    if (lo && kind != GPUFIT__T_SHEXP_ROUTER_GATE)
        return base;
    int plain = ft == GPUFIT_DTYPE_FP16 || ft == GPUFIT_DTYPE_BF16 || ft == GPUFIT_DTYPE_FP32 ||
                ft == GPUFIT_DTYPE_F16_GGUF;
    if (plain)
        return base;
    int k_mix = ft >= GPUFIT_DTYPE_Q3_K_S && ft <= GPUFIT_DTYPE_Q5_K_M;
    switch (kind) {
    case GPUFIT__T_OUTPUT:
    case GPUFIT__T_TOKEN_EMBD: /* token_embd only when it doubles as the output (tied) */
        if (ft == GPUFIT_DTYPE_Q8_0)
            return ft;
        if (ft >= GPUFIT_DTYPE_IQ1_S && ft <= GPUFIT_DTYPE_IQ2_S)
            return GPUFIT_DTYPE_Q5_K;
        return GPUFIT_DTYPE_Q6_K;
    case GPUFIT__T_SHEXP_ROUTER_GATE: return GPUFIT_DTYPE_FP32; /* never quantised */
    case GPUFIT__T_ATTN_V:
        if (s->E == 8 && k_mix)
            return GPUFIT_DTYPE_Q8_0; /* 8-expert models bump attn_v to Q8_0 */
        if ((ft == GPUFIT_DTYPE_Q4_K_M || ft == GPUFIT_DTYPE_Q5_K_M) && more_bits(i, n))
            return GPUFIT_DTYPE_Q6_K;
        if (ft == GPUFIT_DTYPE_Q4_K_S && i < 4)
            return GPUFIT_DTYPE_Q5_K;
        if (ft == GPUFIT_DTYPE_Q3_K_M)
            return i < 2 ? GPUFIT_DTYPE_Q5_K : GPUFIT_DTYPE_Q4_K;
        if (ft == GPUFIT_DTYPE_Q3_K_L)
            return GPUFIT_DTYPE_Q5_K;
        if (ft == GPUFIT_DTYPE_Q2_K)
            return s->nq >= 4 * s->nkv ? GPUFIT_DTYPE_Q4_K : GPUFIT_DTYPE_Q3_K;
        return base;
    case GPUFIT__T_ATTN_K:
        return s->E == 8 && k_mix ? GPUFIT_DTYPE_Q8_0 : base;
    case GPUFIT__T_ATTN_O:
        if (s->E == 8 && k_mix)
            return GPUFIT_DTYPE_Q5_K;
        if (ft == GPUFIT_DTYPE_Q3_K_M)
            return GPUFIT_DTYPE_Q4_K;
        if (ft == GPUFIT_DTYPE_Q3_K_L)
            return GPUFIT_DTYPE_Q5_K;
        return base;
    case GPUFIT__T_FFN_DOWN:
    case GPUFIT__T_EXP_DOWN:
    case GPUFIT__T_SHEXP_DOWN:
        if ((ft == GPUFIT_DTYPE_Q4_K_M || ft == GPUFIT_DTYPE_Q5_K_M) && more_bits(i, n))
            return GPUFIT_DTYPE_Q6_K;
        if (ft == GPUFIT_DTYPE_Q4_K_S && i < n / 8)
            return GPUFIT_DTYPE_Q5_K;
        if (ft == GPUFIT_DTYPE_Q3_K_S && i < n / 8)
            return GPUFIT_DTYPE_Q4_K;
        if (ft == GPUFIT_DTYPE_Q3_K_M)
            return i < n / 16 ? GPUFIT_DTYPE_Q5_K : GPUFIT_DTYPE_Q4_K;
        if (ft == GPUFIT_DTYPE_Q3_K_L)
            return GPUFIT_DTYPE_Q5_K;
        if (ft == GPUFIT_DTYPE_Q2_K)
            return GPUFIT_DTYPE_Q3_K;
        if ((ft == GPUFIT_DTYPE_IQ4_NL || ft == GPUFIT_DTYPE_IQ4_XS) && i < n / 8)
            return GPUFIT_DTYPE_Q5_K;
        return base;
    default: return base;
    }
}

/* Shards of a tensor group on one device: 2-D tensors split over TP, routed experts over
 * EP (whole experts) x ETP (each expert's matrices; Megatron-Core MoE parallel folding);
 * K/V heads are replicated when TP exceeds them; 1-D tensors are replicated. */
static inline void shard_dims(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__tgroup *g, uint64_t *rows, uint64_t *copies)
{
    *rows = g->rows;
    *copies = g->copies;
    if (p->tp == 1 && p->ep == 1 && p->etp == 1)
        return;
    if (gpufit__is_expert(g->kind)) {
        if (p->ep > 1)
            *copies = (g->copies + p->ep - 1) / p->ep;
        if (!is_1d(g) && p->etp > 1)
            *rows = (g->rows + p->etp - 1) / p->etp;
        return;
    }
    /* the router is replicated over tp: Megatron-Core TopKRouter.weight [E, h], vLLM's
     * ReplicatedLinear gate, DeepSpeed TopKGate */
    if (is_1d(g) || p->tp == 1 || g->kind == GPUFIT__T_ROUTER)
        return;
    if ((g->kind == GPUFIT__T_ATTN_K || g->kind == GPUFIT__T_ATTN_V) && !s->mla) {
        uint64_t heads = s->nkv > p->tp ? s->nkv / p->tp : 1; /* §4.5: replicated KV heads */
        *rows = heads * s->dh;
    } else {
        *rows = (g->rows + p->tp - 1) / p->tp;
    }
}

/* Bytes of one tensor of rows x cols in dtype dt, with the per-tensor extras of GPTQ (g_idx,
 * int32 per input feature) and LLM.int8 (fp32 scale per row). */
static inline int tensor_bytes(int64_t dt, uint64_t rows, uint64_t cols, uint64_t *out)
{
    uint64_t n, b;
    if (gpufit__mul(rows, cols, &n))
        return 1;
    if (dt == GPUFIT_DTYPE_INT8) { /* bitsandbytes: row-wise blocks of cols int8 + fp32 */
        if (gpufit__mul(rows, cols + 4, out))
            return 1;
        return 0;
    }
    if (dt >= GPUFIT_DTYPE_FP32 && dt <= GPUFIT_DTYPE_FP8) { /* one element per block */
        static const uint8_t elem[] = {0, 4, 4, 2, 2, 1};
        return gpufit__mul(n, elem[dt], out);
    }
    if (gpufit__dtype_bytes(dt, n, &b))
        return 1;
    if (dt == GPUFIT_DTYPE_GPTQ4 && gpufit__add(b, 4 * cols, &b))
        return 1;
    *out = b;
    return 0;
}

/* Dtype for a tensor that is not a quantised linear layer (embeddings, output, norms). */
static int64_t dense_dtype(const gpufit__plan *p)
{
    if (p->w_dt <= GPUFIT_DTYPE_BF16)
        return p->w_dt;
    /* QLoRA: peft prepare_model_for_kbit_training casts the rest to fp32 (§7.4); recipes that
     * train bf16 adapters cast them back (qlora.py --bf16): they follow the adapters' dtype */
    if (p->task == GPUFIT_TASK_QLORA)
        return p->g_dt;
    return p->c_dt == GPUFIT_DTYPE_FP8 || p->c_dt == GPUFIT_DTYPE_INT8 ? GPUFIT_DTYPE_BF16
                                                                       : p->c_dt;
}

/* QLoRA recasts the checkpoint's unquantised floats (peft utils/other.py
 * prepare_model_for_kbit_training: every non-int8 parameter to fp32): they follow the job. */
static inline int float_cast(const gpufit__plan *p, int64_t dt)
{
    return p->task == GPUFIT_TASK_QLORA && dt <= GPUFIT_DTYPE_BF16;
}

/* Storage dtype of a tensor group: the checkpoint's per-module dtype when the model sets one
 * (a pre-quantised checkpoint keeps e.g. embedding and lm_head in 16-bit:
 * docs/memory/quantisation.md), else the job's: weight_dtype on the linear layers, the dense
 * dtype on the rest (bitsandbytes replaces nn.Linear only and skips lm_head:
 * transformers integrations/bitsandbytes.py get_keys_to_not_convert). */
static inline int64_t group_dtype(const gpufit__plan *p, const gpufit__shape *s,
                                  const gpufit__tgroup *g, int64_t dense_dt)
{
    if (is_1d(g))
        return dense_dt;
    if (s->quant) {
        int m = gpufit__module_of(g->kind);
        if (m >= 0 && s->mod_dt[m] >= 0 && !float_cast(p, s->mod_dt[m]))
            return s->mod_dt[m];
    }
    return p->w_dt > GPUFIT_DTYPE_BF16 && gpufit__is_linear(g->kind) ? p->w_dt : dense_dt;
}

/* Bytes of one tensor group over layers [first, first + count) of a GGUF mix. The recipe's
 * type is constant between the breakpoints 0, 2, 4, n/16, n/8, 7n/8 and n, and inside
 * [n/8, 7n/8) depends only on (i - n/8) mod 3 (use_more_bits): each piece is counted in closed
 * form, so the cost does not grow with the number of layers. */
static int gguf_layers_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                             uint64_t rows, uint64_t copies, uint64_t first, uint64_t count,
                             int low_end, uint64_t *out)
{
    uint64_t n = s->n_layers, lo8 = n / 8, hi8 = 7 * n / 8, end = first + count;
    uint64_t cuts[9] = {0, 2, 4, n / 16, n / 8, 7 * n / 8, n, first, end};
    uint64_t total = 0;
    /* sort the breakpoints (9 values, insertion sort) */
    for (int a = 1; a < 9; a++)
        for (int b = a; b > 0 && cuts[b] < cuts[b - 1]; b--) {
            uint64_t t = cuts[b];
            cuts[b] = cuts[b - 1];
            cuts[b - 1] = t;
        }
    for (int c = 0; c + 1 < 9; c++) {
        uint64_t lo = cuts[c] > first ? cuts[c] : first;
        uint64_t hi = cuts[c + 1] < end ? cuts[c + 1] : end;
        if (hi <= lo)
            continue;
        int periodic = lo >= lo8 && hi <= hi8;
        for (uint64_t r = 0; r < (periodic ? 3 : 1); r++) {
            /* the first index of this residue class in [lo, hi), and how many there are */
            uint64_t i0 = periodic ? lo + (r + 3 - (lo - lo8) % 3) % 3 : lo;
            if (i0 >= hi)
                continue;
            uint64_t k = periodic ? (hi - i0 + 2) / 3 : hi - lo, one, b;
            int64_t t = gguf_fallback(gguf_type(p->w_dt, s, g->kind, i0, n, low_end), g->cols);
            if (tensor_bytes(t, rows, g->cols, &one) || gpufit__mul(one, copies, &b) ||
                gpufit__mul(b, k, &b) || gpufit__add(total, b, &total))
                return 1;
        }
    }
    *out = total;
    return 0;
}

static uint64_t class_begin(const gpufit__shape *s, int where)
{
    /* index of the first layer of a class in llama.cpp order (dense layers come first) */
    return where == GPUFIT__W_MOE ? s->layers[GPUFIT__W_DENSE] : 0;
}

static int weights_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                         size_t ng, const gpufit__slice *sl, int lo, uint64_t *dev_out,
                         uint64_t *host_out)
{
    int gguf = is_gguf(p->w_dt) || p->framework == GPUFIT_FW_LLAMACPP;
    uint64_t dev = 0, host = 0;
    for (size_t i = 0; i < ng; i++) {
        uint64_t rows, copies, one, bytes, n_layers;
        shard_dims(p, s, &g[i], &rows, &copies);
        int global = g[i].where == GPUFIT__W_GLOBAL;
        n_layers = global ? 1 : sl->layers[g[i].where];
        if (n_layers == 0 && !global)
            continue;
        int on_device = 1;
        if (global && g[i].kind == GPUFIT__T_VISION) {
            /* the vision tower: 16-bit in every format (GGUF keeps it in a separate f16
             * mmproj file; quantisers leave it unquantised: multimodal.md) */
            if (!gpufit__vision_on(p, s, sl))
                continue;
            if (tensor_bytes(gguf ? GPUFIT_DTYPE_FP16 : dense_dtype(p), rows, g[i].cols, &one) ||
                gpufit__mul(one, copies, &bytes) || gpufit__add(dev, bytes, &dev))
                return 1;
            continue;
        }
        if (global) {
            int emb = gpufit__glob_side(g[i].kind) == 0;
            int tied_out = g[i].kind == GPUFIT__T_TOKEN_EMBD && s->tied;
            if (emb && !sl->embedding && !(tied_out && sl->output))
                continue;
            if (!emb && !sl->output)
                continue; /* output head and final norms sit with the last layer */
            /* llama.cpp keeps token_embd in host memory (memory-model.md §6.4 / validation) */
            if (gguf && g[i].kind == GPUFIT__T_TOKEN_EMBD && !(tied_out && sl->output))
                on_device = 0;
        }
        if (gguf) {
            if (is_1d(&g[i])) {
                if (gpufit__mul(rows * g[i].cols, 4 * copies * n_layers, &bytes))
                    return 1;
            } else if (global) {
                int kind = g[i].kind == GPUFIT__T_TOKEN_EMBD && s->tied ? GPUFIT__T_OUTPUT
                           : g[i].kind == GPUFIT__T_TOKEN_EMBD ? GPUFIT__T_FFN_UP /* base */
                                                               : (int)g[i].kind;
                int64_t t = gguf_fallback(gguf_type(p->w_dt, s, kind, 0, 1, lo), g[i].cols);
                if (tensor_bytes(t, rows, g[i].cols, &one) || gpufit__mul(one, copies, &bytes))
                    return 1;
            } else {
                uint64_t first = class_begin(s, g[i].where) + sl->layer_begin[g[i].where];
                if (gguf_layers_bytes(p, s, &g[i], rows, copies, first, n_layers, lo, &bytes))
                    return 1;
            }
        } else {
            int64_t dt = group_dtype(p, s, &g[i], dense_dtype(p));
            if (tensor_bytes(dt, rows, g[i].cols, &one) || gpufit__mul(one, copies, &one) ||
                gpufit__mul(one, n_layers, &bytes))
                return 1;
        }
        if (gpufit__add(on_device ? dev : host, bytes, on_device ? &dev : &host))
            return 1;
    }
    *dev_out = dev;
    *host_out = host;
    return 0;
}

int gpufit__weights_bytes(const gpufit__plan *p, const gpufit__shape *s,
                          const gpufit__tgroup *g, size_t ng, const gpufit__slice *sl,
                          uint64_t *dev_out, uint64_t *host_out)
{
    return weights_bytes(p, s, g, ng, sl, 0, dev_out, host_out);
}

/* Megatron's wgrad dummies (docs/memory/megatron.md, "Wgrad dummies"): with gradient
 * accumulation fusion the wgrad GEMM adds into main_grad, and backward hands autograd a dummy
 * tensor of the weight's shape instead: Transformer Engine's get_dummy_wgrad
 * (transformer_engine/pytorch/module/base.py), cached per (shape, dtype) for the process, which
 * TE's linears (Linear, LayerNormLinear, GroupedLinear) and Megatron's own
 * (core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication.backward,
 * when TE is installed) return. One buffer per distinct shape on a device, in the parameters'
 * dtype: each linear kind of a class once at its per-device shape (one expert of a grouped
 * GEMM; Megatron fuses q, k, v into one linear_qkv and gate, up into one linear_fc1, whose
 * sums are the shapes'), and the output head's [V / tp, h]. Each group's rows x cols is at
 * most 2^54 (model_shape.c's ranges) and a class has at most GPUFIT__TGROUPS_MAX groups, so
 * the sums do not wrap before the checked multiplication by the element size. 1 on overflow. */
/* The layer classes' dummy elements (el->att, el->rest) from the model cache's sums, as the
 * walk below sums them, when every sharded tensor splits evenly (tp, etp divide the rows: each
 * shard is rows / tp, so the shards' sum is the sum / tp); 1 when filled, else 0. The sums are
 * at most 64 groups of 2^54 elements; K and V's heads x dh is at most their rows. */
static int dummies_summed(const gpufit__plan *p, const gpufit__shape *s,
                          const gpufit__aggregates *agg, gpufit__dummies *el)
{
    uint64_t tp = p->tp, etp = p->etp;
    if (agg == NULL)
        return 0;
    for (int w = s->w_first; w < s->w_end; w++) {
        uint64_t gcd = agg->layer[w].rows_gcd; /* of every 2-D tensor but K and V */
        if ((tp > 1 && gcd % tp != 0) || (etp > 1 && gcd % etp != 0))
            return 0;
    }
    /* shard_dims: standard K and V keep max(nkv / tp, 1) heads of dh rows under tp > 1 */
    uint64_t kv_rows = (s->nkv > tp ? s->nkv / tp : 1) * s->dh;
    for (int w = s->w_first; w < s->w_end; w++) {
        const gpufit__class_agg *a = &agg->layer[w];
        el->att[w] = gpufit__div(a->dum_att, tp) +
                     (tp == 1 ? a->dum_kv_el : kv_rows * a->dum_kv_cols);
        el->rest[w] = gpufit__div(a->dum_rest, tp) + gpufit__div(a->dum_exp, etp > 1 ? etp : 1);
    }
    return 1;
}

int gpufit__megatron_wgrad_dummies(const gpufit__plan *p, const gpufit__shape *s,
                                   const gpufit__tgroup *g, size_t ng,
                                   const gpufit__aggregates *agg, gpufit__dummies *d)
{
    gpufit__dummies el = {{0}, {0}, 0};
    /* the global groups come first (gpufit__model_tensors): with the layers summed, the walk
     * stops after them */
    int summed = dummies_summed(p, s, agg, &el);
    for (size_t i = 0; i < ng; i++) {
        int kind = g[i].kind, w = g[i].where;
        if (summed && w != GPUFIT__W_GLOBAL)
            break;
        if (w == GPUFIT__W_GLOBAL) {
            if ((kind == GPUFIT__T_OUTPUT || (kind == GPUFIT__T_TOKEN_EMBD && s->tied)) &&
                !is_1d(&g[i])) /* the vocabulary-parallel head */
                el.head = gpufit__div_up(g[i].rows, p->tp) * g[i].cols;
            continue;
        }
        if (!gpufit__is_linear(kind) || is_1d(&g[i]))
            continue;
        uint64_t rows, copies;
        shard_dims(p, s, &g[i], &rows, &copies);
        int att = kind <= GPUFIT__T_MLA_KV_B; /* ATTN_Q .. MLA_KV_B (internal.h order) */
        if (att)
            el.att[w] += rows * g[i].cols;
        else
            el.rest[w] += rows * g[i].cols;
    }
    /* TE's dummies take weight.dtype, Megatron's input.dtype: the parameters' 16-bit type
     * (fp8 recipes keep bf16 parameters), fp32 for fp32 training */
    uint64_t e = (uint64_t)1 << gpufit__dtype_log2_bytes(p->w_dt);
    for (int w = 0; w < GPUFIT__W_COUNT; w++)
        if (gpufit__mul(el.att[w], e, &d->att[w]) || gpufit__mul(el.rest[w], e, &d->rest[w]))
            return 1;
    return gpufit__mul(el.head, e, &d->head);
}

int gpufit__gguf_recipe_band(const gpufit__plan *p, const gpufit__shape *s)
{
    int64_t ft = p->w_dt;
    int mix = is_gguf(ft) && ft != GPUFIT_DTYPE_F16_GGUF && ft != GPUFIT_DTYPE_Q8_0;
    /* MoE routers: F32 from today's converter, the file's type from the old one */
    int router = s->E > 0 && s->layers[GPUFIT__W_MOE] > 0 && ft != GPUFIT_DTYPE_FP32 &&
                 (is_gguf(ft) || p->framework == GPUFIT_FW_LLAMACPP);
    return mix || router;
}

int gpufit__weights_bytes_low(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__tgroup *g, size_t ng, const gpufit__slice *sl,
                              uint64_t *dev_out, uint64_t *host_out)
{
    return weights_bytes(p, s, g, ng, sl, 1, dev_out, host_out);
}

/* Weight bytes of a slice from the exact bytes of a GGUF file (io_gguf.c, m->gguf_layers > 0):
 * the layers the slice holds, in the file's layer order (classes in slice order: dense before
 * MoE, encoder before decoder), plus the output tensor and the other global tensors (final
 * norms) when it holds the output. llama.cpp keeps token_embd in host memory (its input
 * layer is always on the CPU, memory-model.md §6.4), so it goes to *host_out when the slice
 * holds the embedding; a tied model has no output tensor and llama.cpp loads a copy of
 * token_embd as the output (TENSOR_DUPLICATED), which sits with the output. Tensor parallelism
 * divides the device bytes by tp. Layers past the file's (a spec that raised n_layers) cost
 * as much as its last layer. Returns 1 on overflow. */
int gpufit__weights_bytes_gguf(const struct gpufit_model *m, const gpufit__plan *p,
                               const gpufit__shape *s, const gpufit__slice *sl,
                               uint64_t *dev_out, uint64_t *host_out)
{
    uint64_t dev = 0, host = 0, before = 0, n = m->gguf_layers;
    if (n == 0 || n > GPUFIT__GGUF_LAYERS_MAX)
        return 1;
    for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++) {
        uint64_t a = before + sl->layer_begin[w], b = a + sl->layers[w], x;
        before += s->layers[w];
        if (sl->layers[w] == 0)
            continue;
        for (uint64_t i = a; i < b && i < n; i++)
            if (gpufit__add(dev, m->gguf_layer_bytes[i], &dev))
                return 1;
        if (b > n) { /* layers past the file's: as its last layer */
            uint64_t extra = b - (a > n ? a : n);
            if (gpufit__mul(extra, m->gguf_layer_bytes[n - 1], &x) || gpufit__add(dev, x, &dev))
                return 1;
        }
    }
    if (sl->output) {
        uint64_t out = m->gguf_output_bytes;
        if (out == 0 && s->tied)
            out = m->gguf_token_embd_bytes;
        if (gpufit__add(dev, out, &dev) || gpufit__add(dev, m->gguf_global_bytes, &dev))
            return 1;
    }
    if (sl->embedding)
        host = m->gguf_token_embd_bytes;
    if (p->tp > 1)
        dev = dev / p->tp + (dev % p->tp != 0);
    *dev_out = dev;
    *host_out = host;
    return 0;
}

/* Bytes of a whole checkpoint stored with the model's per-module dtypes (1-D tensors and auto
 * modules in 16-bit), for the safetensors cross-check of a pre-quantised model; tied
 * embeddings once. Returns 1 on overflow or a module without a dtype. */
int gpufit__checkpoint_bytes(const gpufit__shape *s, const gpufit__tgroup *g, size_t ng,
                             uint64_t *out)
{
    uint64_t total = 0;
    for (size_t i = 0; i < ng; i++) {
        int m = is_1d(&g[i]) ? -1 : gpufit__module_of(g[i].kind);
        int64_t dt = m >= 0 && s->mod_dt[m] >= 0 ? s->mod_dt[m] : GPUFIT_DTYPE_BF16;
        uint64_t one, n = g[i].where == GPUFIT__W_GLOBAL ? 1 : s->layers[g[i].where];
        if (tensor_bytes(dt, g[i].rows, g[i].cols, &one) || gpufit__mul(one, g[i].copies, &one) ||
            gpufit__mul(one, n, &one) || gpufit__add(total, one, &total))
            return 1;
    }
    *out = total;
    return 0;
}

/* Optimizer-state bytes of `n` parameters in tensors of rows x cols (memory-model.md §2.3). */
static int opt_bytes(const gpufit__plan *p, uint64_t rows, uint64_t cols, uint64_t n,
                     uint64_t *out)
{
    const gpufit__dtype_info *od = gpufit__dtype(p->o_dt);
    uint64_t e = od != NULL && od->block_bytes > 0 ? od->block_bytes : 4;
    switch (p->optimizer) {
    case GPUFIT_OPT_ADAMW:
    case GPUFIT_OPT_ADAM: return gpufit__mul(n, 2 * e, out); /* exp_avg + exp_avg_sq */
    case GPUFIT_OPT_SGD_MOMENTUM:
    case GPUFIT_OPT_LION: return gpufit__mul(n, e, out); /* one momentum buffer */
    case GPUFIT_OPT_ADAFACTOR: {                         /* factored second moment, fp32 */
        uint64_t per = rows == 1 ? cols : rows + cols, tensors = n / (rows * cols);
        return gpufit__mul(per * 4, tensors, out);
    }
    case GPUFIT_OPT_ADAMW_8BIT: /* bnb: 2 uint8 states + fp32 absmax per 256; fp32 if small */
        if (rows * cols < 4096)
            return gpufit__mul(n, 8, out);
        return gpufit__mul(n / 256 + 1, 2 * 256 + 8, out);
    default: *out = 0; return 0;
    }
}

int gpufit__trainable(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                      size_t ng, const gpufit__slice *sl, uint64_t *params_out,
                      uint64_t *opt_bytes_out)
{
    uint64_t params = 0, opt = 0;
    for (size_t i = 0; i < ng; i++) {
        uint64_t rows, copies, n_layers, n, ob;
        shard_dims(p, s, &g[i], &rows, &copies);
        int global = g[i].where == GPUFIT__W_GLOBAL;
        n_layers = global ? 1 : sl->layers[g[i].where];
        if (n_layers == 0)
            continue;
        if (global) {
            int side = gpufit__glob_side(g[i].kind), emb = side == 0;
            /* a tied embedding is also a full (trained) copy on the last pipeline stage */
            int tied_out = g[i].kind == GPUFIT__T_TOKEN_EMBD && s->tied && sl->output;
            if (side == 3 ? !gpufit__vision_on(p, s, sl)
                          : (emb && !sl->embedding && !tied_out) || (!emb && !sl->output))
                continue;
        }
        if (p->lora) {
            if (global || is_1d(&g[i]) || !gpufit__lora_adapted(p->lora_mask, g[i].kind))
                continue;
            /* LoRA pair: A (r x in) + B (out x r), memory-model.md §9 */
            uint64_t per = p->lora_rank * (g[i].rows + g[i].cols);
            if (gpufit__mul(per, copies * n_layers, &n))
                return 1;
            if (opt_bytes(p, p->lora_rank, g[i].cols + g[i].rows, n, &ob))
                return 1;
        } else {
            if (gpufit__mul(rows * g[i].cols, copies * n_layers, &n))
                return 1;
            if (opt_bytes(p, rows, g[i].cols, n, &ob))
                return 1;
        }
        if (gpufit__add(params, n, &params) || gpufit__add(opt, ob, &opt))
            return 1;
    }
    *params_out = params;
    *opt_bytes_out = opt;
    return 0;
}

/* Counts n tensors of el elements in t[e * stride] for each e (0, 1, 2) at which el x 2^e
 * bytes exceed 1 MiB (kSmallSize). */
static inline void add_big(uint64_t *t, size_t stride, uint64_t el, uint64_t n)
{
    if (el > (uint64_t)1 << 18) {
        t[2 * stride] += n;
        if (el > (uint64_t)1 << 19) {
            t[stride] += n;
            if (el > (uint64_t)1 << 20)
                t[0] += n;
        }
    }
}

/* Fills b->w and b->w_glob (zeroed) from the model cache's sums, as the walk of
 * gpufit__blocks_build would sum them, and returns 1; 0 (nothing written) when the sums do not
 * apply: a sharded layout, per-module checkpoint dtypes, a linear dtype other than the dense
 * one, nf4 or fp4 (which packs as nf4: 36 bytes per 64 elements, lib/core/dtype.c), or linear
 * tensors among the globals. */
static int blocks_weights_summed(const gpufit__plan *p, const gpufit__shape *s,
                                 const gpufit__aggregates *agg, int64_t dense_dt,
                                 gpufit__blocks *b)
{
    const gpufit__dtype_info *dd = gpufit__dtype(dense_dt);
    int64_t lin_dt = p->w_dt > GPUFIT_DTYPE_BF16 ? p->w_dt : dense_dt; /* as group_dtype */
    const gpufit__dtype_info *n4 = &gpufit__dtypes[GPUFIT_DTYPE_NF4], *ld = gpufit__dtype(lin_dt);
    int nf4 = (lin_dt == GPUFIT_DTYPE_NF4 || lin_dt == GPUFIT_DTYPE_FP4) &&
              ld->block_bytes == n4->block_bytes && ld->block_elems == n4->block_elems;
    if (agg == NULL || !agg->glob_dense || s->quant || p->tp != 1 || p->ep != 1 || p->etp != 1 ||
        dd == NULL || dd->block_elems != 1 || dense_dt == GPUFIT_DTYPE_INT8 ||
        (lin_dt != dense_dt && !nf4))
        return 0;
    int ed = gpufit__dtype_log2_bytes(dense_dt);
    for (int c = s->w_first; c < s->w_end; c++) {
        const gpufit__class_agg *a = &agg->layer[c];
        /* < 2^62: block rests below 2^21 bytes, 2^32 copies, 64 groups */
        b->w[c] = nf4 ? a->blk_nf4 + a->blk_other[ed] : a->blk_w[ed];
    }
    for (int k = 0; k < 4; k++) /* no linear tensors there (glob_dense): all dense */
        b->w_glob[k] = agg->glob[k].blk_w[ed];
    return 1;
}

int gpufit__blocks_build(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                         size_t ng, const gpufit__aggregates *agg, gpufit__blocks *b)
{
    int64_t dense_dt = dense_dtype(p);
    const gpufit__dtype_info *d = gpufit__dtype(p->w_dt);
    if (agg != NULL && (s->E == 0 || (p->ep == 1 && p->etp == 1)) && !p->lora && !s->quant &&
        p->w_dt <= GPUFIT_DTYPE_BF16 && d != NULL && d->block_elems == 1) {
        /* every 2-D tensor in the weights' plain dtype: the model cache's sums. Under tensor
         * parallelism each rank holds one shard of every such tensor: counted as the whole
         * tensor (at most 1 MiB + 511 B each), an upper bound that skips the walk */
        b->agg = agg;
        b->ew = gpufit__dtype_log2_bytes(p->w_dt);
        b->bound = p->tp > 1;
        return 0;
    }
    b->agg = NULL;
    /* every slot of the classes and the four global sides, a fixed count that gcc writes as
     * stores: a loop over the classes with layers became four calls of libc's memset (the
     * library's -mstringop-strategy=libcall), on every evaluation that walks */
    for (int c = 0; c < GPUFIT__W_COUNT; c++)
        b->w[c] = b->t[0][c] = b->t[1][c] = b->t[2][c] = 0;
    for (int k = 0; k < 4; k++)
        b->w_glob[k] = b->t_glob[0][k] = b->t_glob[1][k] = b->t_glob[2][k] = 0;
    /* the weights' rests from the model cache's sums when every tensor is whole and stored in
     * the dense dtype or, for the linear layers, nf4 (QLoRA): the walk below then counts the
     * trainable tensors only */
    int summed = blocks_weights_summed(p, s, agg, dense_dt, b);
    int count = p->training;
    if (summed && !count)
        return 0;
    if (summed && p->lora) { /* LoRA's A and B of the adapted layer tensors, whole */
        for (size_t i = 0; i < ng; i++) {
            const gpufit__tgroup *gi = &g[i];
            if (gi->where == GPUFIT__W_GLOBAL || is_1d(gi) ||
                !gpufit__lora_adapted(p->lora_mask, gi->kind))
                continue;
            uint64_t *t = &b->t[0][gi->where]; /* products < 2^44: rank 2^16, rows 2^28 */
            add_big(t, GPUFIT__W_COUNT, p->lora_rank * gi->cols, gi->copies);
            add_big(t, GPUFIT__W_COUNT, p->lora_rank * gi->rows, gi->copies);
        }
        return 0;
    }
    for (size_t i = 0; i < ng; i++) {
        uint64_t rows, copies, one;
        if (is_1d(&g[i])) /* norms and biases: far below 1 MiB (2^18 fp32 elements) */
            continue;
        shard_dims(p, s, &g[i], &rows, &copies);
        int global = g[i].where == GPUFIT__W_GLOBAL, k = global ? gpufit__glob_side(g[i].kind) : 0;
        /* a tied embedding is also the last stage's output copy (as gpufit__uniform_bytes) */
        int tied = global && g[i].kind == GPUFIT__T_TOKEN_EMBD && s->tied;
        uint64_t *w = global ? &b->w_glob[k] : &b->w[g[i].where];
        if (!summed &&
            (tensor_bytes(group_dtype(p, s, &g[i], dense_dt), rows, g[i].cols, &one) ||
             gpufit__mul(gpufit__block_rest(one), copies, &one) || gpufit__add(*w, one, w) ||
             (tied && gpufit__add(b->w_glob[2], one, &b->w_glob[2]))))
            return 1;
        if (!count)
            continue;
        /* each trainable tensor: the tensor, or LoRA's A (r x in) and B (out x r) */
        uint64_t *t = global ? &b->t_glob[0][k] : &b->t[0][g[i].where];
        size_t stride = global ? 4 : GPUFIT__W_COUNT;
        if (!p->lora) {
            add_big(t, stride, rows * g[i].cols, copies); /* < 2^64: tensor_bytes multiplied */
            if (tied)
                add_big(&b->t_glob[0][2], 4, rows * g[i].cols, copies);
        } else if (!global && gpufit__lora_adapted(p->lora_mask, g[i].kind)) {
            add_big(t, stride, p->lora_rank * g[i].cols, copies);
            add_big(t, stride, p->lora_rank * g[i].rows, copies);
        }
    }
    return 0;
}

/* One pass over the tensor groups for models whose layers of a class all store the same types
 * (everything but llama.cpp recipes): bytes and trainable parameters of one layer of each class
 * and of the global tensors, split by where they live. Same rules as the two walks above. */
/* What the closed forms need of the plan, derived once per evaluation. */
typedef struct closed_plan {
    int64_t lin_dt;                   /* dtype of the linear (2-D) tensors */
    const gpufit__dtype_info *lin_d;  /* and its block */
    uint64_t dense_b;                 /* bytes per element of every other tensor */
    uint64_t k_opt;                   /* optimizer bytes per trainable parameter */
    int lin_blocks;                   /* lin_dt packs several elements per block */
    int layers_ok;                    /* attention, MLP and experts share lin_dt */
    int glob_ok;                      /* the global 2-D tensors' dtypes are plain */
    uint64_t glob_b[4];               /* bytes per element of the 2-D globals, by side ([3] vision: dense) */
} closed_plan;

/* 1 when the closed forms can be exact under this plan (plain dense dtype, optimizer states
 * linear in the parameters), cp filled; else 0 and the walk below is used. */
static int closed_setup(const gpufit__plan *p, const gpufit__shape *s, int64_t dense_dt,
                        closed_plan *cp)
{
    const gpufit__dtype_info *qd = gpufit__dtype(p->w_dt), *dd = gpufit__dtype(dense_dt);
    if (qd == NULL || dd == NULL || dense_dt > GPUFIT_DTYPE_FP8) /* FP8 and below: 1 elem */
        return 0;
    cp->lin_dt = p->w_dt > GPUFIT_DTYPE_BF16 ? p->w_dt : dense_dt;
    cp->dense_b = dd->block_bytes;
    cp->layers_ok = cp->glob_ok = 1;
    cp->glob_b[0] = cp->glob_b[1] = cp->glob_b[2] = cp->glob_b[3] = cp->dense_b;
    if (s->quant) { /* per-module checkpoint dtypes: one multiply per side, as before */
        const int64_t *md = s->mod_dt;
        int64_t r[5]; /* resolved as group_dtype does */
        for (int i = 0; i < 5; i++)
            r[i] = md[i] >= 0 && !float_cast(p, md[i]) ? md[i]
                   : i == GPUFIT__M_EMBD || i == GPUFIT__M_OUT ? dense_dt
                                                               : cp->lin_dt;
        cp->lin_dt = r[GPUFIT__M_MLP];
        cp->layers_ok = r[GPUFIT__M_ATTN] == cp->lin_dt && r[GPUFIT__M_EXP] == cp->lin_dt;
        int64_t emb = r[GPUFIT__M_EMBD], out = r[GPUFIT__M_OUT];
        /* plain dtypes only; the output side also holds BERT's pooler and T5's buckets */
        cp->glob_ok = emb <= GPUFIT_DTYPE_FP8 && out <= GPUFIT_DTYPE_FP8 &&
                      s->arch == GPUFIT_ARCH_DECODER && !s->pooler;
        cp->glob_b[0] = cp->glob_b[2] = gpufit__dtypes[emb].block_bytes;
        cp->glob_b[1] = gpufit__dtypes[out].block_bytes;
    }
    cp->lin_d = gpufit__dtype(cp->lin_dt);
    cp->lin_blocks = !(cp->lin_dt <= GPUFIT_DTYPE_FP8 || cp->lin_dt == GPUFIT_DTYPE_INT8);
    const gpufit__dtype_info *od = gpufit__dtype(p->o_dt);
    uint64_t e = od != NULL && od->block_bytes > 0 ? od->block_bytes : 4;
    switch (p->optimizer) { /* optimizers whose states are linear in the parameters */
    case GPUFIT_OPT_ADAMW:
    case GPUFIT_OPT_ADAM: cp->k_opt = 2 * e; break;
    case GPUFIT_OPT_SGD_MOMENTUM:
    case GPUFIT_OPT_LION: cp->k_opt = e; break;
    case GPUFIT_OPT_SGD:
    case GPUFIT_OPT_NONE: cp->k_opt = 0; break;
    default: return 0;
    }
    return 1;
}

/* Bytes of `el` elements of the linear dtype spread over tensors whose sums of rows and of
 * cols are given, when every tensor's element count is a multiple of the block
 * (cols % 256 == 0). */
static int agg_bytes(const closed_plan *cp, uint64_t el, uint64_t rows, uint64_t cols,
                     uint64_t *out)
{
    uint64_t b;
    if (el == 0) { /* no such tensors: no bytes, no per-tensor extras */
        *out = 0;
        return 0;
    }
    if (cp->lin_dt == GPUFIT_DTYPE_INT8) /* int8 + an fp32 scale per row */
        return gpufit__mul(rows, 4, &b) || gpufit__add(el, b, out);
    if (gpufit__mul(gpufit__div(el, cp->lin_d->block_elems), cp->lin_d->block_bytes, out))
        return 1;
    if (cp->lin_dt == GPUFIT_DTYPE_GPTQ4) /* + g_idx, int32 per input feature */
        return gpufit__mul(cols, 4, &b) || gpufit__add(*out, b, out);
    return 0;
}

/* A layer class the walk below sums from 0. */
static void clear_class(gpufit__ubytes *u, int w)
{
    u->w[w] = u->t[w] = u->o[w] = u->we[w] = u->te[w] = u->oe[w] = 0;
}

/* Closed form of layer class w, summed in a, under the plan (the loop below, summed): its
 * weights, trainable parameters, optimizer states and the routed experts' share of each into
 * u; 0 if the closed form would not be exact for this class (u untouched), 1 when u was
 * filled, -1 on overflow. */
static int closed_form(const gpufit__plan *p, const gpufit__shape *s, const closed_plan *cp,
                       const gpufit__class_agg *a, gpufit__ubytes *u, int w)
{
    uint64_t tp = p->tp, ep = p->ep;
    if (!cp->layers_ok || (tp > 1 && a->rows_gcd % tp != 0) ||
        (p->etp > 1 && a->rows_gcd % p->etp != 0))
        return 0;
    if (cp->lin_blocks && !(a->cols256 && 256 % cp->lin_d->block_elems == 0))
        return 0;
    uint64_t kv_rows = (tp == 1 ? s->nkv : s->nkv > tp ? s->nkv / tp : 1) * s->dh;
    uint64_t lin = gpufit__div(a->lin_el, tp) + a->kv_n * kv_rows * a->kv_cols;
    uint64_t lin_rows = gpufit__div(a->lin_rows, tp) + a->kv_n * kv_rows;
    uint64_t lin_cols = a->lin_cols + a->kv_n * a->kv_cols;
    uint64_t exp = 0, exp_rows = 0, exp_cols = 0, bl, be, bd;
    if (a->exp_el > 0) {
        exp = gpufit__div(a->exp_el, p->etp * ep);
        exp_rows = gpufit__div(a->exp_rows, p->etp * ep);
        exp_cols = gpufit__div(a->exp_cols, ep);
    }
    uint64_t dense = gpufit__div(a->other2d_el, tp) + a->oned_el;
    if (agg_bytes(cp, lin, lin_rows, lin_cols, &bl) || agg_bytes(cp, exp, exp_rows, exp_cols, &be) ||
        gpufit__mul(dense, cp->dense_b, &bd))
        return -1;
    uint64_t t = 0, te = 0;
    if (p->training && p->lora) {
        uint64_t rc = 0, rce = 0; /* the module sums of the adapted bits */
        for (int b = 0; b < GPUFIT__LORA_BITS; b++)
            if ((p->lora_mask >> b) & 1) {
                rc += a->lora_rc[b];
                rce += a->lora_rc_exp[b];
            }
        t = p->lora_rank * (rc + rce);
        te = p->lora_rank * rce;
    } else if (p->training) {
        t = lin + exp + dense;
        te = exp;
    }
    if (gpufit__mul(t, cp->k_opt, &u->o[w]) || gpufit__mul(te, cp->k_opt, &u->oe[w]))
        return -1;
    u->w[w] = bl + be + bd;
    u->we[w] = be;
    u->t[w] = t;
    u->te[w] = te;
    return 1;
}

int gpufit__uniform_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                          size_t ng, const gpufit__aggregates *agg, gpufit__ubytes *u)
{
    int64_t dense_dt = dense_dtype(p);
    /* closed[where]: 1 when that part is summed in closed form (GLOBAL: all three sides) */
    int closed[GPUFIT__W_COUNT] = {0}, n_open = 0;
    closed_plan cp = {0}; /* (set by closed_setup before any read; gcc -O3 cannot tell) */
    if (agg != NULL && !closed_setup(p, s, dense_dt, &cp))
        agg = NULL;
    /* Every field read later is set here (no memset of the whole struct: it runs on every
     * evaluation): a class in closed form, else 0 for the walk below to add to. Classes outside
     * [w_first, w_end) have no layers and no tensor groups: nothing reads them. */
    for (int w = s->w_first; w < s->w_end; w++) {
        if (agg != NULL && s->layers[w] > 0) {
            closed[w] = closed_form(p, s, &cp, &agg->layer[w], u, w);
            if (closed[w] < 0)
                return 1;
            n_open += closed[w] == 0;
        }
        if (closed[w] == 0)
            clear_class(u, w);
    }
    /* The global tensors (embeddings, output head, final norms) are, for every built-in
     * architecture, no linear layers, experts or K/V (glob_dense): each side is its 2-D
     * elements split over tp (exact when tp divides their rows) and its replicated 1-D
     * elements, all in the dense dtype; adapters never sit on them. */
    int all = agg != NULL && agg->glob_dense && cp.glob_ok, trained = p->training && !p->lora;
    int sides = s->v_layers > 0 ? 4 : 3; /* [3], the vision side, is read only when present */
    for (int k = 0; k < sides && all; k++) {
        const gpufit__class_agg *a = &agg->glob[k];
        all = p->tp == 1 || a->rows_gcd % p->tp == 0;
        /* <= the model's parameters */
        uint64_t el2 = gpufit__div(a->other2d_el, p->tp), el = el2 + a->oned_el, b2;
        u->t_glob[k] = trained ? el : 0;
        if (gpufit__mul(el2, cp.glob_b[k], &b2) || gpufit__mul(a->oned_el, cp.dense_b, &u->w_glob[k]) ||
            gpufit__add(u->w_glob[k], b2, &u->w_glob[k]) ||
            gpufit__mul(u->t_glob[k], cp.k_opt, &u->o_glob[k]))
            return 1;
    }
    closed[GPUFIT__W_GLOBAL] = all;
    for (int k = 0; k < sides && !all; k++) /* 0 for the walk */
        u->w_glob[k] = u->t_glob[k] = u->o_glob[k] = 0;
    int layers_closed = agg != NULL && n_open == 0;
    if (layers_closed && closed[GPUFIT__W_GLOBAL] > 0)
        return 0; /* every part is summed: no walk */
    for (size_t i = 0; i < ng; i++) {
        uint64_t rows, copies, one, w, t = 0, o = 0;
        if (g[i].where != GPUFIT__W_GLOBAL && layers_closed)
            break; /* every layer class is summed, and the global groups come first */
        if (closed[g[i].where] > 0)
            continue; /* that part is already summed */
        shard_dims(p, s, &g[i], &rows, &copies);
        if (tensor_bytes(group_dtype(p, s, &g[i], dense_dt), rows, g[i].cols, &one) ||
            gpufit__mul(one, copies, &w))
            return 1;
        int global = g[i].where == GPUFIT__W_GLOBAL;
        if (p->training) {
            if (p->lora) {
                if (!global && !is_1d(&g[i]) && gpufit__lora_adapted(p->lora_mask, g[i].kind)) {
                    uint64_t per = p->lora_rank * (g[i].rows + g[i].cols);
                    if (gpufit__mul(per, copies, &t) ||
                        opt_bytes(p, p->lora_rank, g[i].cols + g[i].rows, t, &o))
                        return 1;
                }
            } else if (gpufit__mul(rows * g[i].cols, copies, &t) ||
                       opt_bytes(p, rows, g[i].cols, t, &o)) {
                return 1;
            }
        }
        uint64_t *dw, *dt, *dopt;
        if (!global && gpufit__is_expert(g[i].kind) &&
            (gpufit__add(u->we[g[i].where], w, &u->we[g[i].where]) ||
             gpufit__add(u->te[g[i].where], t, &u->te[g[i].where]) ||
             gpufit__add(u->oe[g[i].where], o, &u->oe[g[i].where])))
            return 1;
        if (!global) {
            dw = &u->w[g[i].where];
            dt = &u->t[g[i].where];
            dopt = &u->o[g[i].where];
        } else {
            int k = gpufit__glob_side(g[i].kind);
            dw = &u->w_glob[k];
            dt = &u->t_glob[k];
            dopt = &u->o_glob[k];
            if (g[i].kind == GPUFIT__T_TOKEN_EMBD && s->tied) { /* the last stage's copy */
                u->w_glob[2] += w;
                u->t_glob[2] += t;
                u->o_glob[2] += o;
            }
        }
        if (gpufit__add(*dw, w, dw) || gpufit__add(*dt, t, dt) || gpufit__add(*dopt, o, dopt))
            return 1;
    }
    return 0;
}
