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

/* llama.cpp compute buffer: the graph allocator's peak over one ubatch of fp32 intermediates,
 * plus the KQ mask that lives through the whole graph (§6.4). */
static uint64_t llamacpp_compute(const gpufit__plan *p, const gpufit__shape *s,
                                 const gpufit__slice *sl, uint64_t n_ctx)
{
    uint64_t ub = p->prompt < n_ctx ? p->prompt : n_ctx;
    int fa = p->attention == GPUFIT_ATTN_FLASH;
    uint64_t io = 4 * ub * s->h; /* one residual-stream tensor */
    uint64_t mask = n_ctx * ub * (fa ? 2 : 4);
    uint64_t attn = 6 * io + (fa ? 0 : 4 * n_ctx * s->nq * ub); /* KQ scores without FA */
    uint64_t ffn = s->E > 0 ? 8 * ub * s->k * s->f_moe + 4 * ub * s->E + io
                            : 4 * ub * s->f * (s->gated ? 2 : 1) + 3 * io;
    uint64_t peak = max_u(attn, ffn);
    if (sl->output) /* the ubatch's fp32 logits share the buffer */
        peak = max_u(peak, 4 * ub * s->V + 3 * io);
    if (layers_of(sl) == 0 && !sl->output)
        return 0;
    return mask + peak;
}

int gpufit__infer_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__slice *sl, uint64_t *act_out, uint64_t *logits_out)
{
    uint64_t a = p->a_b, tp = p->tp;
    if (s->arch == GPUFIT_ARCH_GENERIC) {
        *act_out = 0;
        *logits_out = 0;
        return 0;
    }
    if (p->framework == GPUFIT_FW_LLAMACPP) {
        uint64_t n_ctx, ub = p->prompt, g1, g2;
        uint64_t width = s->h + s->f + s->k * s->f_moe + s->E + s->V;
        if (gpufit__mul(p->batch, p->ctx, &n_ctx) || gpufit__mul(ub, width * 16, &g1) ||
            gpufit__mul(n_ctx, (s->nq + 1) * 8, &g2) || gpufit__mul(g2, ub, &g2) ||
            gpufit__add(g1, g2, &g1))
            return 1; /* overflow guard for llamacpp_compute's products */
        *act_out = llamacpp_compute(p, s, sl, n_ctx);
        *logits_out = 0;
        return 0;
    }
    int server = p->framework == GPUFIT_FW_VLLM || p->framework == GPUFIT_FW_SGLANG;
    /* tokens in one forward: the profiling pass of a server, else the whole prompt batch */
    uint64_t T = server ? p->prompt : p->batch * p->prompt;
    /* overflow guard for the products below (each term is at most 16 bytes x T x a width or
     * the context); the terms are then summed without wrapping */
    uint64_t g1, g2;
    uint64_t width = s->h + s->q + 2 * s->c + s->f + s->k * (s->f_moe + s->h) + s->V;
    if (gpufit__mul(T, width * 16, &g1) || gpufit__mul(T, s->nq * 8, &g2) ||
        gpufit__mul(g2, p->ctx > p->prompt ? p->ctx : p->prompt, &g2) ||
        gpufit__add(g1, g2, &g1) || gpufit__mul(g1, 4, &g1) ||
        gpufit__mul(p->max_num_seqs * 48, s->V, &g2))
        return 1;
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
    uint64_t per_layer = max_u(max_u(qkv, ffn), scores) + 3 * a * T * s->h;
    uint64_t logits = 0;
    uint64_t act = layers_of(sl) > 0 ? per_layer : 0;
    if (sl->output && server) {
        /* vLLM V1's profile then warms the sampler up on R = min(max_num_seqs, T) rows of
         * full-vocabulary logits (gpu_model_runner _dummy_sampler_run). The PyTorch-native
         * top-k/top-p path peaks inside torch.sort: gathered logits 2 (4 if fp32) + fp32 copy
         * 4 + sorted values 4 + int64 indices 8 + the sort's int64 reverse index 8 + CUB's
         * spare key/value buffers 12 = 38 bytes per logit (vllm v1/sample/ops/
         * topk_topp_sampler.py; pytorch SortStable.cu; cub DispatchSegmentedRadixSort), while
         * the step's hidden states (T x h) and the R sampled rows with their random copy stay
         * alive. The forward's transients are freed by then, so the profiled peak is the
         * larger of the two (vllm gpu_worker determine_available_memory). */
        uint64_t R = p->max_num_seqs < T ? p->max_num_seqs : T;
        uint64_t sampler = R * s->V * (a >= 4 ? 40 : 38) + (T + 2 * R) * s->h * a;
        act = act > sampler ? act : sampler;
    } else if (sl->output) {
        /* HF generate keeps the last position only (logits_to_keep = 1): 16-bit logits and
         * their fp32 copy per sequence (transformers generation utils). */
        logits = p->batch * gpufit__div_up(s->V, tp) * (a + 4);
    }
    *act_out = act;
    *logits_out = logits;
    return 0;
}
