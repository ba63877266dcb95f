/* SPDX-License-Identifier: MIT */
/* Result accessors: summary, roles, components and notes. */
#include "eval.h"

#include <stdlib.h>
#include <stddef.h>
#include <string.h>

static const char *const component_names[GPUFIT__NCOMP] = {
    NULL,           "weights",      "gradients", "optimizer_states", "master_weights",
    "activations",  "kv_cache",     "logits",    "comm_buffers",     "workspace",
    "runtime_context", "fragmentation"};

int32_t gpufit_component_next(int32_t prev)
{
    if (prev < 0 || prev >= GPUFIT__NCOMP - 1)
        return 0;
    return prev + 1;
}

const char *gpufit_component_name(int32_t c)
{
    if (c <= 0 || c >= GPUFIT__NCOMP)
        return NULL;
    return component_names[c];
}

void gpufit_result_free(gpufit_result *r)
{
    if (r != NULL)
        free(r->mitigations);
    free(r);
}

int32_t gpufit_result_summary(const gpufit_result *r, gpufit_summary *out)
{
    if (r == NULL || out == NULL)
        return GPUFIT_E_INVALID_ARG;
    return gpufit__summary_out(r, out);
}

int32_t gpufit__summary_out(const struct gpufit_result *r, gpufit_summary *out)
{
    /* gpufit__copy_out's rule: the fields up to n_mitigations are the smallest size accepted;
     * a caller built before the band fields gets the struct up to its own size. The full
     * struct is written in place (the fast path), a smaller one through a copy. */
    const size_t v1 = offsetof(gpufit_summary, verdict);
    if (out->struct_size < v1)
        return GPUFIT_E_STRUCT_SIZE;
    int full_size = out->struct_size >= sizeof *out;
    gpufit_summary part, *o = full_size ? out : &part; /* in place, or a copy cut to size */
    o->struct_size = sizeof *out;
    o->fits = r->fits;
    o->n_roles = r->n_roles;
    o->worst_role = r->worst;
    o->n_notes = r->n_notes;
    o->reserved0 = 0;
    o->capacity_bytes = r->capacity;
    o->peak_bytes = r->peak;
    o->headroom_bytes = r->capacity > 0 ? r->roles[r->worst].headroom : 0;
    o->n_params = r->n_params;
    o->n_active_params = r->n_active;
    o->host_bytes = r->host_bytes;
    o->n_mitigations = r->n_mitigations;
    o->reserved1 = 0;
    o->verdict = r->verdict;
    o->reserved2 = 0;
    o->peak_low_bytes = r->peak_b[0];
    o->peak_high_bytes = r->peak_b[1];
    return full_size ? GPUFIT_OK : gpufit__copy_out(out, &part, sizeof part, v1);
}

int32_t gpufit_result_role(const gpufit_result *r, uint32_t i, gpufit_role_info *out)
{
    if (r == NULL || out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (i >= r->n_roles)
        return GPUFIT_E_NOT_FOUND;
    const gpufit__role *ro = &r->roles[i];
    gpufit_role_info info;
    memset(&info, 0, sizeof info);
    info.n_devices = ro->n_devices;
    info.peak_allocated_bytes = ro->alloc;
    info.peak_reserved_bytes = ro->reserved;
    info.device_used_bytes = ro->used;
    info.headroom_bytes = ro->headroom;
    info.kv_capacity_bytes = ro->kv_cap_bytes;
    info.kv_capacity_tokens = ro->kv_cap_tokens;
    info.fits = ro->fits;
    info.layers = ro->layers;
    info.name = ro->name;
    info.capacity_bytes = ro->capacity;
    info.gpu = ro->gpu != NULL ? ro->gpu->name : r->gpu != NULL ? r->gpu->name : r->gpu_name;
    info.peak_allocated_low_bytes = ro->alloc_b[0];
    info.peak_allocated_high_bytes = ro->alloc_b[1];
    info.peak_reserved_low_bytes = ro->reserved_b[0];
    info.peak_reserved_high_bytes = ro->reserved_b[1];
    info.device_used_low_bytes = ro->used_b[0];
    info.device_used_high_bytes = ro->used_b[1];
    info.kv_capacity_low_bytes = ro->kv_cap_b[0];
    info.kv_capacity_high_bytes = ro->kv_cap_b[1];
    info.verdict = gpufit__role_verdict(ro);
    /* the band fields were added later: a caller's older, smaller struct stops before them */
    return gpufit__copy_out(out, &info, sizeof info,
                            offsetof(gpufit_role_info, peak_allocated_low_bytes));
}

int32_t gpufit_result_bytes_band(const gpufit_result *r, uint32_t role, int32_t c,
                                 uint64_t *low_out, uint64_t *high_out)
{
    if (r == NULL || low_out == NULL || high_out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (role >= r->n_roles || c <= 0 || c >= GPUFIT__NCOMP)
        return GPUFIT_E_NOT_FOUND;
    gpufit__comp_band(&r->roles[role], c, low_out, high_out);
    return GPUFIT_OK;
}

int32_t gpufit_result_bytes(const gpufit_result *r, uint32_t role, int32_t c, uint64_t *out_bytes)
{
    if (r == NULL || out_bytes == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (role >= r->n_roles || c <= 0 || c >= GPUFIT__NCOMP)
        return GPUFIT_E_NOT_FOUND;
    *out_bytes = r->roles[role].comp[c];
    return GPUFIT_OK;
}

static const char *note_text(int note)
{
    switch (note) {
    case GPUFIT__NOTE_NO_GPU: return "no GPU given: set gpu= (see 'gpufit gpus') for a verdict";
    case GPUFIT__NOTE_BF16_UNSUPPORTED:
        return "this GPU has no hardware bf16 support: use fp16 or fp32";
    case GPUFIT__NOTE_FP8_UNSUPPORTED:
        return "this GPU has no hardware fp8 support (needs Ada, Hopper or newer)";
    case GPUFIT__NOTE_QUANT_V_NEEDS_FA:
        return "llama.cpp keeps the V cache in f16 without flash attention";
    case GPUFIT__NOTE_KV_TOO_SMALL:
        return "the server's memory budget leaves too little KV cache for batch x context_len";
    case GPUFIT__NOTE_HOST_OFFLOAD: return "part of the job is placed in host memory (host_bytes)";
    case GPUFIT__NOTE_HOST_TOO_SMALL:
        return "the host memory this job places in CPU RAM exceeds host_memory_bytes";
    case GPUFIT__NOTE_GENERIC_MODEL:
        return "generic model: weights and states from n_params, activations from "
               "activation_bytes_per_token";
    case GPUFIT__NOTE_VLLM_ASSUMED:
        return "framework_version not set: assumed vLLM 0.27 (the newest release whose code "
               "gpufit follows: its KV budget and CUDA graph rules)";
    case GPUFIT__NOTE_SGLANG_ASSUMED:
        return "framework_version not set: assumed SGLang 0.5.15 (the newest release whose code "
               "gpufit follows; mem_fraction_static from GPU memory and the model)";
    case GPUFIT__NOTE_UNKNOWN_TYPE:
        return "config.json model_type is not known: read as a Llama-style decoder from its "
               "standard keys (hidden_size, num_hidden_layers, num_attention_heads, "
               "intermediate_size, vocab_size)";
    case GPUFIT__NOTE_LORA_BASE16:
        return "precision auto for LoRA: the frozen base weights load in bf16 (no fp32 "
               "copy) and the adapters keep adapter_dtype, as PEFT, litgpt and torchtune "
               "recipes do; precision=amp_bf16 keeps an fp32 base";
    case GPUFIT__NOTE_LAYOUT_DP:
        return "gpus alone: data parallelism over every GPU (dp = gpus; torchrun's default)";
    case GPUFIT__NOTE_LAYOUT_TP:
        return "gpus alone: tensor parallelism over every GPU (tp = gpus; "
               "--tensor-parallel-size / --tp-size)";
    case GPUFIT__NOTE_LAYOUT_LAYERS:
        return "gpus alone: the layers split over the GPUs (pp = gpus; llama.cpp's default "
               "--split-mode layer, Transformers' device_map=\"auto\")";
    case GPUFIT__NOTE_OPTIMIZER_STEP:
        return "optimizer_states include the temporaries of torch.optim's step where they "
               "exceed the activations freed before it (foreach: one list the size of a "
               "moment); optimizer_impl=fused has none (docs/memory/optimizer-step.md)";
    default: return "";
    }
}

int32_t gpufit_result_flags(const gpufit_result *r, char *buf, size_t cap, size_t *len_out)
{
    if (r == NULL || (buf == NULL && cap > 0))
        return GPUFIT_E_INVALID_ARG;
    size_t need = gpufit__job_flags_write(&r->flags_in, &r->resolved, buf, cap);
    if (len_out != NULL)
        *len_out = need;
    return need < cap ? GPUFIT_OK : GPUFIT_E_BUFFER_TOO_SMALL;
}

int32_t gpufit_result_note(const gpufit_result *r, uint32_t i, const char **text_out)
{
    if (r == NULL || text_out == NULL)
        return GPUFIT_E_INVALID_ARG;
    if (i >= r->n_notes)
        return GPUFIT_E_NOT_FOUND;
    *text_out = note_text(r->notes[i]);
    return GPUFIT_OK;
}
