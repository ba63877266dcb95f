/* SPDX-License-Identifier: MIT */
/* Inference: KV cache (memory-model.md §6.1, §6.4), prefill transient and logits (§6.3),
 * llama.cpp compute buffer (§6.4) and the vLLM profile pass (§6.2). */
#include "eval.h"

static uint64_t max_u(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t layers_of(const gpufit__slice *sl)
{
    uint64_t n = 0;
    for (int w = GPUFIT__W_DENSE; w < GPUFIT__W_COUNT; w++)
        n += sl->layers[w];
    return n;
}

/* vLLM: RotaryEmbedding.__init__ (model_executor/layers/rotary_embedding/base.py) registers
 * cos_sin_cache, [max_position x rotary_dim] (cos and sin halves), cast to the model's dtype;
 * get_rope shares one table per distinct setting, so every rank holding attention layers keeps
 * one copy (not sharded by TP). SGLang (srt/layers/rotary_embedding.py) keeps it in fp32 on
 * CUDA ("cache needs to be in FP32 for numerical stability"). Allocated at model init, so in
 * "Loading model weights took" / SGLang's weight load. Transformers and llama.cpp compute
 * the angles per forward: none. */
int gpufit__rope_table_bytes(const gpufit__plan *p, const gpufit__shape *s, uint64_t *out)
{
    *out = 0;
    if ((p->framework != GPUFIT_FW_VLLM && p->framework != GPUFIT_FW_SGLANG) || s->rope_rows == 0)
        return 0;
    uint64_t n;
    if (gpufit__mul(s->rope_rows, s->rope_dim, &n))
        return 1;
    return gpufit__dtype_bytes(p->framework == GPUFIT_FW_SGLANG ? GPUFIT_DTYPE_FP32 : p->c_dt, n,
                               out);
}

int gpufit__kv_bytes_per_token(const gpufit__plan *p, const gpufit__shape *s,
                               const gpufit__slice *sl, uint64_t *out)
{
    uint64_t k_row, v_row; /* bytes of one token's K and V in one layer */
    uint64_t kv = p->kv_dt;
    int latent = s->mla && p->framework != GPUFIT_FW_PYTORCH;
    if (s->arch == GPUFIT_ARCH_GENERIC || s->arch == GPUFIT_ARCH_ENCODER) {
        *out = 0;
        return 0;
    }
    if (latent) { /* MLA: one latent + shared RoPE key per token per layer, no factor 2 */
        if (gpufit__dtype_bytes((int64_t)kv, s->r_kv + s->d_r, &k_row))
            return 1;
        v_row = 0;
    } else {
        uint64_t heads = s->nkv > p->tp ? gpufit__div(s->nkv, p->tp) : 1;
        uint64_t nq = gpufit__div(s->nq, p->tp);
        uint64_t kw = s->mla ? nq * (s->d_n + s->d_r) : heads * s->dh;
        uint64_t vw = s->mla ? nq * s->d_v : heads * s->dh;
        /* llama.cpp cannot quantise V without flash attention: V stays f16 */
        uint64_t vdt = kv;
        if (p->framework == GPUFIT_FW_LLAMACPP && p->attention != GPUFIT_ATTN_FLASH &&
            kv > GPUFIT_DTYPE_FP8)
            vdt = GPUFIT_DTYPE_FP16;
        if (gpufit__dtype_bytes((int64_t)kv, kw, &k_row) ||
            gpufit__dtype_bytes((int64_t)vdt, vw, &v_row))
            return 1;
    }
    /* decoder layers of an encoder-decoder model cache self-attention K/V only */
    uint64_t n = s->arch == GPUFIT_ARCH_ENCODER_DECODER ? sl->layers[GPUFIT__W_DEC]
                                                        : layers_of(sl);
    return gpufit__mul(k_row + v_row, n, out);
}

/* Local (sliding-window) layers among a slice's decoder layers: dense layers lead, so a MoE
 * layer's index is the dense count plus its index in its class. Layer i is global when
 * swa_period > 1 and (i + 1) % swa_period == 0 (transformers Gemma2/Gemma3/GptOss configs'
 * layer_types; llama.cpp llama_hparams::set_swa_pattern: il % n < n - 1 is local). */
static uint64_t local_layers(const gpufit__shape *s, const gpufit__slice *sl)
{
    uint64_t n = 0, P = s->swa_period;
    for (int w = GPUFIT__W_DENSE; w <= GPUFIT__W_MOE; w++) {
        uint64_t a = sl->layer_begin[w] + (w == GPUFIT__W_MOE ? s->layers[GPUFIT__W_DENSE] : 0);
        uint64_t b = a + sl->layers[w];
        n += sl->layers[w] - (P > 1 ? b / P - a / P : 0);
    }
    return n;
}

/* Cross-attention layers among a slice's layers, spread evenly over the n_layers: those in
 * [a, b) number floor(b C / L) - floor(a C / L). Totals are exact; a stage may differ by one
 * from a model whose cross layers sit elsewhere (Mllama: 3, 8, ..., 38). */
static uint64_t cross_layers(const gpufit__shape *s, const gpufit__slice *sl)
{
    uint64_t L = s->n_layers, C = s->n_cross;
    uint64_t a = sl->layer_begin[GPUFIT__W_DENSE], b = a + sl->layers[GPUFIT__W_DENSE];
    return b * C / L - a * C / L; /* C, L <= 2^20: no overflow */
}

int gpufit__kv_cache_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__slice *sl,
                           uint64_t per_tok, uint64_t tokens, uint64_t *out)
{
    uint64_t n = layers_of(sl);
    if ((s->swa_window == 0 && s->n_cross == 0) || n == 0 || s->arch != GPUFIT_ARCH_DECODER)
        return gpufit__mul(per_tok, tokens, out);
    uint64_t row = per_tok / n, W = s->swa_window, local = 0, cross = 0, swa = 0, xt = 0, t;
    if (s->n_cross > 0) {
        /* cross layers cache K/V of the image tokens, not of the text: transformers Mllama
         * (the cache layer of a cross layer holds cross_attention_states' K/V), vLLM V1
         * CrossAttentionSpec (encoder tokens in 16-token blocks) */
        cross = cross_layers(s, sl);
        t = s->cross_tokens;
        if (p->framework == GPUFIT_FW_VLLM || p->framework == GPUFIT_FW_SGLANG)
            t = (t + 15) / 16 * 16;
        xt = p->batch * t;
    } else if (p->framework == GPUFIT_FW_LLAMACPP) {
        local = local_layers(s, sl);
        /* llama_kv_cache_iswa: size_swa = GGML_PAD(min(size_base, n_swa * n_seq_max +
         * n_ubatch), 256) cells (src/llama-kv-cache-iswa.cpp; unified cache, no --swa-full) */
        swa = W * p->batch + p->prompt;
        swa = swa < tokens ? swa : tokens;
        swa = (swa + 255) / 256 * 256;
    } else if (p->framework == GPUFIT_FW_VLLM) {
        local = local_layers(s, sl);
        /* V1 SlidingWindowSpec.max_memory_usage_bytes (vllm/v1/kv_cache_interface.py): the
         * last window - 1 tokens plus a step's max_num_batched_tokens, at most max_model_len,
         * in 16-token blocks plus one for a window that starts inside a block */
        t = W - 1 + p->prompt;
        t = t < p->ctx ? t : p->ctx;
        swa = p->batch * ((t + 15) / 16 + 1) * 16;
    } else {
        local = local_layers(s, sl);
        /* transformers DynamicSlidingWindowLayer / HybridCache (cache_utils.py) keep at most
         * the window per sequence; SGLang's SWA pool frees tokens that left the window
         * (mem_cache/swa_memory_pool.py), paged like its full layers here */
        t = W < p->ctx ? W : p->ctx;
        swa = p->batch * (p->framework == GPUFIT_FW_SGLANG ? (t + 15) / 16 * 16 : t);
    }
    uint64_t full_b, local_b, cross_b;
    if (gpufit__mul(row * (n - local - cross), tokens, &full_b) ||
        gpufit__mul(row * local, swa, &local_b) || gpufit__mul(row * cross, xt, &cross_b) ||
        gpufit__add(full_b, local_b, &full_b))
        return 1;
    return gpufit__add(full_b, cross_b, out);
}

uint64_t gpufit__llamacpp_kv_cells(const gpufit__plan *p)
{
    uint64_t pad = p->attention == GPUFIT_ATTN_FLASH ? 256 : 32; /* §6.4 */
    return (p->batch * p->ctx + pad - 1) / pad * pad;
}

/* One copy of the inputs of a device's split (ggml/src/ggml-backend.cpp
 * ggml_backend_sched_split_graph: a source on another backend is copied into the split's
 * backend; llama.cpp marks its graph inputs with ggml_set_input, and the scheduler places
 * them on the CPU backend, ggml_backend_sched_backend_id_from_cur "1.inp"). A device holding
 * layers reads, per ubatch of n_ubatch tokens (src/llama-graph.cpp, src/llama-kv-cache.cpp):
 *   the hidden state from the previous device (the first: from the CPU's get_rows on
 *   token_embd), f32 n_embd x n_ubatch;
 *   the KQ mask attn_inp_kq_mask, n_kv x n_ubatch, f16 with flash attention, else f32
 *   (build_attn_inp_kq_mask);
 *   the positions inp_pos, i32 n_ubatch (build_inp_pos);
 *   the KV row indices self_k_idxs, i64 n_ubatch, and self_v_idxs, i64 n_ubatch, or
 *   n_ubatch x n_embd_v_gqa when V is stored transposed, i.e. without flash attention
 *   (llama_kv_cache::build_input_k_idxs / build_input_v_idxs);
 *   out_ids, i32 n_outputs, on the device of the last layer (build_inp_out_ids; n_outputs =
 *   n_ubatch, the reservation the logits term assumes).
 * A device with the output head only reads the last hidden state, f32 n_embd x n_outputs.
 * set_rows: the part of *out that is self_k_idxs and self_v_idxs, which builds before the
 * ggml_set_rows KV path (mid-2025) do not have (the band's low end). */
int gpufit__llamacpp_split_inputs(const gpufit__plan *p, const gpufit__shape *s,
                                  const gpufit__slice *sl, uint64_t *out, uint64_t *set_rows)
{
    uint64_t n_kv = gpufit__llamacpp_kv_cells(p), ub = p->prompt < n_kv ? p->prompt : n_kv, t;
    int fa = p->attention == GPUFIT_ATTN_FLASH;
    *out = *set_rows = 0;
    if (s->arch == GPUFIT_ARCH_GENERIC || (layers_of(sl) == 0 && !sl->output))
        return 0;
    if (gpufit__mul(4 * s->h, ub, out)) /* the hidden state */
        return 1;
    if (layers_of(sl) == 0)
        return 0;
    uint64_t v_width = fa ? 1 : s->mla ? s->r_kv : s->nkv * s->dh;
    if (gpufit__mul(n_kv, ub, &t) || gpufit__mul(t, fa ? 2 : 4, &t) || gpufit__add(*out, t, out))
        return 1; /* the KQ mask */
    if (gpufit__mul(8 * ub, v_width, &t) || gpufit__add(t, 8 * ub, set_rows))
        return 1; /* self_v_idxs and self_k_idxs (8 bytes per token) */
    /* inp_pos (4 bytes) and out_ids (4) per token */
    return gpufit__add(*out, *set_rows, out) ||
           gpufit__add(*out, ub * (4 + (sl->last_layer ? 4 : 0)), out);
}

/* llama.cpp compute buffer: the graph allocator's peak over one ubatch of fp32 intermediates,
 * plus the graph inputs copied into the device (§6.4). Without pipeline parallelism the
 * scheduler keeps one copy of each, allocated at the start of the split and freed after its
 * last use: the KQ mask, the positions, the KV row indices and out_ids are read up to the last
 * layer, so they sit under the peak (docs/memory/llamacpp.md). With pipeline parallelism
 * (sched_copies = GGML_SCHED_MAX_COPIES) every input has that many copies, flagged input and
 * output so that ggml-alloc never frees or reuses them, and allocated first as leafs of the
 * graph (ggml_backend_sched_split_graph), on top of the peak. *low, the band's low end (older
 * builds, docs/memory/llamacpp.md "Older builds"): no KV row indices (before the ggml_set_rows
 * KV path); MoE experts one slot at a time (llama.cpp's llm_build_context::build_moe_ffn
 * before b266290ee, PR #6505: one ggml_mul_mat_id per slot); and at the output head only what
 * its matmul reads and writes, the logits and the final norm's output, as the single copy of
 * the inputs is freed after the last layer (ggml-alloc.c ggml_gallocr_free_node) and builds
 * differ in what they leave below the logits. */
static int llamacpp_compute(const gpufit__plan *p, const gpufit__shape *s,
                            const gpufit__slice *sl, uint64_t *out, uint64_t *low)
{
    uint64_t n_kv = gpufit__llamacpp_kv_cells(p);
    uint64_t ub = p->prompt < n_kv ? p->prompt : n_kv;
    int fa = p->attention == GPUFIT_ATTN_FLASH;
    uint64_t io = 4 * ub * s->h; /* one residual-stream tensor */
    uint64_t mask = layers_of(sl) > 0 ? n_kv * ub * (fa ? 2 : 4) : 0;
    uint64_t attn = 6 * io + (fa ? 0 : 4 * n_kv * s->nq * ub); /* KQ scores without FA */
    uint64_t ffn = s->E > 0 ? 8 * ub * s->k * s->f_moe + 4 * ub * s->E + io
                            : 4 * ub * s->f * (s->gated ? 2 : 1) + 3 * io;
    uint64_t peak = max_u(attn, ffn), out_lo = 0;
    /* the low end's FFN: one expert slot's up and gate at a time (k = 1) */
    uint64_t ffn_lo = s->E > 0 ? 8 * ub * s->f_moe + 4 * ub * s->E + io : ffn;
    uint64_t peak_lo = max_u(attn, ffn_lo < ffn ? ffn_lo : ffn);
    *out = *low = 0;
    if (sl->output) { /* the ubatch's fp32 logits share the buffer */
        peak = max_u(peak, 4 * ub * s->V + 3 * io);
        out_lo = 4 * ub * s->V + io; /* the logits and the normed hidden state they come from */
    }
    if (layers_of(sl) == 0 && !sl->output)
        return 0;
    uint64_t in, set_rows;
    if (gpufit__llamacpp_split_inputs(p, s, sl, &in, &set_rows))
        return 1;
    if (sl->sched_copies > 1) { /* the copies are never freed: under every phase */
        if (gpufit__mul(in, sl->sched_copies, &in) ||
            gpufit__mul(set_rows, sl->sched_copies, &set_rows) || gpufit__add(in, peak, out))
            return 1;
        *low = in - set_rows + max_u(peak_lo, out_lo);
        return 0;
    }
    /* one copy: the hidden state is the first layer's input, under the peak already */
    uint64_t small = layers_of(sl) > 0 ? in - io - mask : 0;
    *out = mask + peak + small;
    *low = max_u(layers_of(sl) > 0 ? mask + peak_lo + small - set_rows : peak_lo, out_lo);
    return 0;
}

/* Images vLLM's profile runs through the vision encoder at once (docs/memory/multimodal.md).
 * V1 (vllm/multimodal/encoder_budget.py MultiModalBudget._get_max_items, from
 * vllm/v1/core/encoder_cache_manager.py compute_mm_encoder_budget): the encoder budget is
 * min(compute budget, cache size), both max(max_num_batched_tokens, tokens per item) by
 * default; items = max(1, min(budget / item, max_num_seqs x items per prompt)), items per
 * prompt = max(1, min(limit, max_model_len / item)), limit 999 unless set (chunked prefill,
 * V1's default, leaves max_num_seqs uncapped). V0 (vllm/worker/model_runner.py profile_run):
 * min(max_num_seqs, max_num_batched_tokens / (limit x item)) sequences (at least 1), each
 * with `limit` items (default 1). */
uint64_t gpufit__vision_items(const gpufit__plan *p, const gpufit__shape *s)
{
    uint64_t item = s->v_tokens, T = p->prompt;
    if (p->mm_v0) {
        uint64_t limit = p->mm_items > 0 ? (uint64_t)p->mm_items : 1;
        uint64_t seqs = T / (limit * item);
        seqs = seqs < p->max_num_seqs ? seqs : p->max_num_seqs;
        return (seqs > 0 ? seqs : 1) * limit;
    }
    uint64_t limit = p->mm_items > 0 ? (uint64_t)p->mm_items : 999;
    uint64_t budget = T > item ? T : item;
    uint64_t per_prompt = p->ctx / item < limit ? p->ctx / item : limit;
    per_prompt = per_prompt > 0 ? per_prompt : 1;
    uint64_t by_budget = budget / item, by_seqs = p->max_num_seqs * per_prompt;
    uint64_t n = by_budget < by_seqs ? by_budget : by_seqs;
    return n > 0 ? n : 1;
}

/* vLLM's profile with the vision encoder (docs/memory/multimodal.md; V1 gpu_model_runner.py
 * profile_run, V0 model_runner.py profile_run): the dummy images' pixels stay referenced
 * through the whole profile (batched_dummy_mm_inputs); the encoder runs over every patch of
 * them first, its outputs (items x tokens x h in the model dtype) are then held (V1: the
 * encoder cache; V0: the forward's vision embeddings) while the text forward and the sampler
 * run. Peak = pixels + max(encoder peak, outputs + the text profile `text`). The encoder's
 * layer peak follows the text forward's rule (§6.3): max(q, k, v; the MLP's intermediates;
 * eager scores per image in (a + 4) bytes) + 3 a P h_v, over P patches, split over tp as
 * vLLM's parallel linears are; the projector's widest intermediate (twice: its linear and
 * activation) and output join the encoder's output P x h_v. */
static int vision_profile(const gpufit__plan *p, const gpufit__shape *s, uint64_t text,
                          uint64_t *out)
{
    uint64_t a = p->a_b, tp = p->tp;
    uint64_t items = gpufit__vision_items(p, s), imgs, P, tok, g;
    /* overflow guard: items <= 2^20 x 999, patches per item <= 64 x (2^16)^2 */
    if (gpufit__mul(items, s->v_tiles * s->v_pos, &P) || gpufit__mul(items, s->v_tokens, &tok) ||
        gpufit__mul(P, 16 * (s->v_pix + 4 * s->v_h + 3 * s->v_f + s->v_heads * s->v_pos), &g) ||
        gpufit__mul(tok, 16 * (2 * s->v_proj_mid + 2 * s->h), &g))
        return 1;
    imgs = items * s->v_tiles;
    uint64_t pix = a * items * s->v_tiles * s->v_grid * s->v_grid * s->v_pix;
    uint64_t qkv = a * P * 3 * gpufit__div(s->v_h, tp);
    uint64_t mlp = a * P * (s->v_style == GPUFIT_VISION_QWEN2_5_VL ||
                                    s->v_style == GPUFIT_VISION_PIXTRAL
                                ? 3
                                : 2) *
                   gpufit__div_up(s->v_f, tp);
    uint64_t scores = 0;
    if (p->attention == GPUFIT_ATTN_EAGER)
        scores = (a + 4) * gpufit__div_up(s->v_heads, tp) * imgs * s->v_pos * s->v_pos;
    uint64_t layer = max_u(max_u(qkv, mlp), scores) + 3 * a * P * s->v_h;
    uint64_t proj = a * P * s->v_h + a * tok * (2 * gpufit__div_up(s->v_proj_mid, tp) + s->h);
    uint64_t cache = a * tok * s->h, after;
    if (gpufit__add(cache, text, &after))
        return 1;
    return gpufit__add(pix, max_u(max_u(layer, proj), after), out);
}

/* One layer's forward transients over T tokens (§6.3): the larger of the QKV projection, the
 * FFN's up/gate/act (a MoE layer's k routed experts) and eager attention's scores, with three
 * hidden states beside it. T x every width is checked against overflow by the callers. */
static uint64_t layer_transients(const gpufit__plan *p, const gpufit__shape *s, uint64_t T)
{
    uint64_t a = p->a_b, tp = p->tp;
    uint64_t f = gpufit__div_up(s->f, tp);
    uint64_t q = gpufit__div(s->mla ? s->nq * (s->d_n + s->d_r) : s->nq * s->dh, tp);
    uint64_t c = s->mla ? q : (s->nkv > tp ? gpufit__div(s->nkv, tp) : 1) * s->dh;
    uint64_t qkv = a * T * (q + 2 * c);
    uint64_t ffn = s->E > 0 ? a * T * s->k * (3 * gpufit__div_up(s->f_moe, tp) + s->h)
                            : a * T * (s->gated ? 3 : 2) * f;
    uint64_t scores = 0;
    if (p->attention == GPUFIT_ATTN_EAGER) /* HF eager: fp32 softmax + cast (§6.3) */
        scores = (a + 4) * gpufit__div_up(s->nq, tp) * T *
                 (p->prompt < p->ctx ? p->ctx : p->prompt);
    return max_u(max_u(qkv, ffn), scores) + 3 * a * T * s->h;
}

/* 1 when layer_transients' products over T tokens could wrap (each term is at most 16 bytes x
 * T x a width, `extra` widths more, or the scores over the context); they are then summed
 * without wrapping. */
static int transients_overflow(const gpufit__plan *p, const gpufit__shape *s, uint64_t T,
                               uint64_t extra)
{
    uint64_t g1, g2;
    uint64_t width = s->h + s->q + 2 * s->c + s->f + s->k * (s->f_moe + s->h) + extra;
    return gpufit__mul(T, width * 16, &g1) || gpufit__mul(T, s->nq * 8, &g2) ||
           gpufit__mul(g2, p->ctx > p->prompt ? p->ctx : p->prompt, &g2) ||
           gpufit__add(g1, g2, &g1) || gpufit__mul(g1, 4, &g1);
}

int gpufit__vllm_graph_bytes(const gpufit__plan *p, const gpufit__shape *s, uint64_t layers,
                             uint64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    if (p->graph_sizes == 0 || layers == 0 || s->arch == GPUFIT_ARCH_GENERIC)
        return 0;
    /* the pool: one layer's transients at the largest capture, whose blocks every smaller
     * capture reuses (vllm/compilation/cuda_graph.py CUDAGraphWrapper: one global pool, the
     * outputs weakly referenced; gpu_model_runner.py capture_model: largest size first) */
    uint64_t T = p->graph_tokens, units;
    if (transients_overflow(p, s, T, 0) || gpufit__mul(layers, p->graph_sizes, &units))
        return 1;
    uint64_t pool = layer_transients(p, s, T);
    /* and the graphs themselves: per layer and captured size (the driver's memory per node;
     * the plan's constant: GPUFIT__STACK_VLLM_GRAPH or a calibration profile's) */
    for (int e = 0; e < 3; e++)
        if (gpufit__mul(units, p->graph_per[e], &out[e]) || gpufit__add(out[e], pool, &out[e]))
            return 1;
    return 0;
}

int gpufit__infer_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__slice *sl, uint64_t *act_out, uint64_t *act_low,
                              uint64_t *act_high, uint64_t *logits_out)
{
    uint64_t a = p->a_b, tp = p->tp;
    *act_low = UINT64_MAX; /* no band unless set */
    *act_high = 0;
    if (s->arch == GPUFIT_ARCH_GENERIC) {
        *act_out = 0;
        *logits_out = 0;
        return 0;
    }
    if (p->framework == GPUFIT_FW_LLAMACPP) {
        uint64_t n_ctx, ub = p->prompt, g1, g2;
        uint64_t width = s->h + s->f + s->k * s->f_moe + s->E + s->V;
        if (gpufit__mul(p->batch, p->ctx, &n_ctx) || n_ctx > UINT64_MAX - 256 ||
            gpufit__mul(ub, width * 16, &g1) ||
            gpufit__mul(n_ctx + 256, (s->nq + 1) * 8, &g2) || gpufit__mul(g2, ub, &g2) ||
            gpufit__add(g1, g2, &g1))
            return 1; /* overflow guard for llamacpp_compute's products (n_kv <= n_ctx + 255) */
        *logits_out = 0;
        return llamacpp_compute(p, s, sl, act_out, act_low);
    }
    int server = p->framework == GPUFIT_FW_VLLM || p->framework == GPUFIT_FW_SGLANG;
    /* tokens in one forward: the profiling pass of a server, else the whole prompt batch */
    uint64_t T = server ? p->prompt : p->batch * p->prompt;
    /* overflow guard for the products below: a layer's, and the sampler's over the
     * vocabulary */
    uint64_t g2;
    if (transients_overflow(p, s, T, s->V) || gpufit__mul(p->max_num_seqs * 48, s->V, &g2))
        return 1;
    uint64_t per_layer = layer_transients(p, s, T);
    uint64_t logits = 0;
    uint64_t act = layers_of(sl) > 0 ? per_layer : 0;
    if (sl->output && p->framework == GPUFIT_FW_VLLM) {
        /* vLLM V1's profile then warms the sampler up on R = min(max_num_seqs, T) rows of
         * full-vocabulary logits (gpu_model_runner _dummy_sampler_run). The PyTorch-native
         * top-k/top-p path peaks inside torch.sort: gathered logits 2 (4 if fp32) + fp32 copy
         * 4 + sorted values 4 + int64 indices 8 + the sort's int64 reverse index 8 + CUB's
         * spare key/value buffers 12 = 38 bytes per logit (vllm v1/sample/ops/
         * topk_topp_sampler.py; pytorch SortStable.cu; cub DispatchSegmentedRadixSort), while
         * the step's hidden states (T x h) and the R sampled rows with their random copy stay
         * alive. The forward's transients are freed by then, so the profiled peak is the
         * larger of the two (vllm gpu_worker determine_available_memory). From 0.17 the
         * profile's sampler skips top-k/top-p: p->sampler_b per logit (policy.c). */
        uint64_t R = p->max_num_seqs < T ? p->max_num_seqs : T;
        uint64_t sampler = R * s->V * p->sampler_b + (T + 2 * R) * s->h * a;
        /* an assumed release may be one that still sorts (<= 0.16): the profile's high end */
        uint64_t sort_b = a >= 4 ? 40 : 38;
        if (p->fw_version_assumed && p->sampler_b < sort_b) {
            uint64_t old = R * s->V * sort_b + (T + 2 * R) * s->h * a;
            *act_high = act > old ? act : old;
        }
        act = act > sampler ? act : sampler;
    } else if (sl->output && !server) { /* SGLang runs no profile (sglang.md) */
        /* HF generate keeps the last position only (logits_to_keep = 1): 16-bit logits and
         * their fp32 copy per sequence (transformers generation utils). */
        logits = p->batch * gpufit__div_up(s->V, tp) * (a + 4);
    }
    /* vLLM profiles the vision encoder on every stage that builds it (gpufit__vision_on) */
    if (p->framework == GPUFIT_FW_VLLM && gpufit__vision_on(p, s, sl) &&
        (vision_profile(p, s, act, &act) ||
         (*act_high > 0 && vision_profile(p, s, *act_high, act_high))))
        return 1;
    *act_out = act;
    *logits_out = logits;
    return 0;
}
