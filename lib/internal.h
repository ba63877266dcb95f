/* SPDX-License-Identifier: MIT */
/* Internal declarations shared by lib/ files. Not installed; not API.
 * Every non-static symbol here is named gpufit__* and hidden by -fvisibility=hidden. */
#ifndef GPUFIT_INTERNAL_H
#define GPUFIT_INTERNAL_H

#include "gpufit.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#define GPUFIT__NAME_MAX 64
#define GPUFIT__GGUF_LAYERS_MAX 256
#define GPUFIT__LORA_BITS 7 /* gpufit_lora_module bits */

/* ---------------------------------------------------------------------------------------
 * Handles: flat structs (no pointers), so a copy by value is a deep copy. Setters work on a
 * copy and commit on success, which keeps every setter atomic.
 * ------------------------------------------------------------------------------------- */
/* struct gpufit_model is defined below, after the derived types it caches. */

/* Per layer class sums over its tensor groups, so that per-layer bytes under a layout are a
 * few multiplications (model_cache.c; used by gpufit__uniform_bytes when exact). */
typedef struct gpufit__class_agg {
    uint64_t lin_el, exp_el;     /* elements of 2-D linear tensors (not K/V), of experts */
    uint64_t kv_n, kv_cols;      /* standard K and V projections: count, input width */
    uint64_t other2d_el, oned_el; /* other 2-D tensors; 1-D tensors and the router (replicated) */
    uint64_t lin_rows, exp_rows; /* sums of rows x copies (per-row scales) */
    uint64_t lin_cols, exp_cols; /* sums of cols x copies (per-input-feature tables) */
    uint64_t rows_gcd;           /* gcd of the rows of every 2-D tensor but K/V (0: none) */
    uint64_t lora_rc[GPUFIT__LORA_BITS], lora_rc_exp[GPUFIT__LORA_BITS]; /* sums of
                                  (rows + cols) x copies, by LoRA module bit (gpufit__lora_bit) */
    uint32_t cols256, reserved;  /* 1 when every linear tensor's input width divides by 256 */
    /* PyTorch's caching-allocator block rests of the 2-D tensors, unsharded, at 1, 2 and 4 bytes
     * per element (gpufit__blocks, docs/memory/allocator.md): the most the weights loaded
     * into fresh segments add (bytes), and the tensors above 1 MiB */
    uint64_t blk_w[3], blk_t[3];
    /* blk_w apart for weights stored in two dtypes (nf4 linear layers, the rest in the dense
     * dtype: QLoRA's default, bitsandbytes inference): the linear 2-D tensors' rests in nf4 (36
     * B per 64 elements, as fp4), the other 2-D tensors' at 1, 2 and 4 bytes per element */
    uint64_t blk_nf4, blk_other[3];
    /* Megatron's wgrad dummies (mem_weights.c): sums of rows x cols, one tensor per group
     * whatever its copies, of the linear tensors by family: attention's but the standard K and
     * V; those K and V (and the sum of their cols); the others but the routed experts; the
     * routed experts */
    uint64_t dum_att, dum_kv_el, dum_kv_cols, dum_rest, dum_exp;
} gpufit__class_agg;

/* A list parameter's value (GPUFIT_TYPE_LIST): n elements of v. */
typedef struct gpufit__list {
    uint32_t n, reserved;
    double v[GPUFIT_LIST_MAX];
} gpufit__list;

/* The optimizer wrapper DeepSpeed's engine picks (engine.py _do_optimizer_sanity_check). */
enum gpufit__ds_opt {
    GPUFIT__DS_NONE = 0, /* not DeepSpeed, or fp32: the torch optimizer itself */
    GPUFIT__DS_FP16,     /* FP16_Optimizer (fp16, or bf16 without pipeline): nothing sharded */
    GPUFIT__DS_BF16,     /* BF16_Optimizer: fp32 master + states sharded over dp, grads not */
    GPUFIT__DS_ZERO      /* ZeRO stage 1-3 optimizer */
};

/* The most a tensor of `bytes` loaded into fresh segments of PyTorch's caching allocator adds
 * to memory_allocated (c10/cuda/CUDACachingAllocator.cpp; docs/memory/allocator.md, "Blocks
 * above 1 MiB"): rounded to 512 B (round_size); from 10 MiB (kMinLargeAlloc) its own segment
 * rounded up to 2 MiB (kRoundLarge), whose rest is split off only when above 1 MiB
 * (should_split); from 1 MiB (kSmallSize) a block of a shared 20 MiB segment (kLargeBuffer),
 * which may be the one that keeps the segment's last rest, up to 1 MiB. */
static inline uint64_t gpufit__block_rest(uint64_t bytes)
{
    const uint64_t mib = (uint64_t)1 << 20;
    uint64_t x = (bytes + 511) / 512 * 512, r = (2 * mib - x % (2 * mib)) % (2 * mib);
    if (x <= mib)
        return x - bytes;
    if (x < 10 * mib)
        return x - bytes + mib;
    return x - bytes + (r <= mib ? r : 0);
}

/* The most a tensor carved from a cached block above 1 MiB may hold beyond its bytes: the
 * rest that is not split off (at most kSmallSize) and the 512 B rounding. */
#define GPUFIT__BLOCK_REST_MAX (((uint64_t)1 << 20) + 511)

/* Whether a PyTorch training loop holds the logits through backward (gpufit__plan.held_logits). */
enum gpufit__held {
    GPUFIT__HELD_NONE = 0,  /* the Trainer, torchtune, and every other framework */
    GPUFIT__HELD_MAYBE = 1, /* trainer=auto: none at the point, the band reaches up to them */
    GPUFIT__HELD_YES = 2    /* trainer=loop: held in the model's output dtype */
};

/* The job with every "auto" resolved. */
typedef struct gpufit__plan {
    int32_t task, training, lora, framework, attention, ckpt, optimizer;
    int32_t lora_mask; /* gpufit_lora_module bits adapted (lora_modules, or lora_targets') */
    int32_t schedule; /* gpufit_pp_schedule, resolved */
    uint32_t ckpt_every;  /* full checkpointing of every N-th layer of a stage (torchtitan) */
    uint32_t ckpt_layers; /* ... or of the first N layers of each stage chunk (Megatron block);
                           * 0 = every layer */
    int32_t amp;                                 /* autocast over fp32 weights */
    int64_t trainer; /* gpufit_trainer, resolved (hf unless torchtune; PyTorch training); 64
                      * bits: the plan has no padding (tests compare plans bytewise) */
    int64_t w_dt, c_dt, g_dt, m_dt, o_dt, kv_dt; /* resolved dtypes */
    uint64_t a_b;                                /* activation bytes per element */
    uint64_t resid_b;                            /* residual-stream bytes per element */
    uint64_t b, s;                               /* training micro-batch, sequence */
    uint64_t batch, ctx, prompt;                 /* inference */
    double dropout;
    double lora_dropout; /* LoRA jobs: each adapted module's own dropout (mem_activations.c) */
    uint64_t dp, tp, pp, vpp, cp, ep, sp, zero, offload;
    uint64_t etp; /* tensor parallelism inside each expert: the job's etp, else tp (Megatron's
                   * default), or 1 when a server spreads whole experts over its ranks (vLLM
                   * expert parallel) */
    uint64_t shard; /* ranks ZeRO/FSDP shard over: zero_shard_size, or dp */
    int32_t ds_opt;    /* DeepSpeed's optimizer wrapper (gpufit__ds_opt), GPUFIT__DS_NONE elsewhere */
    int32_t overlap;   /* DeepSpeed overlap_comm, resolved */
    uint64_t bucket;   /* DeepSpeed reduce_bucket_size, elements, resolved */
    int32_t nosync;    /* FSDP accumulates full unsharded gradients under no_sync */
    int32_t layout_auto; /* GPUFIT__LAYOUT_* (eval.h): how dp, tp, pp were chosen */
    int64_t n_gpu_layers;
    uint64_t lora_rank;
    uint64_t capacity; /* bytes; 0 = unknown */
    double margin;          /* safety margin: share of each device's capacity kept free */
    uint64_t margin_bytes;  /* ... or bytes (docs/band.md); both 0 = none */
    const struct gpufit__gpu *gpu;
    uint64_t ctx_bytes, ws_bytes; /* runtime context, workspaces */
    /* The band (docs/band.md): [0] the low and [1] the high end of each stack-dependent term,
     * the stack constants at their documented range (policy.c; equal to the point value when
     * the user gave it): CUDA context, workspaces, NCCL buffers (all communicators, and one),
     * allocator slack fraction, vLLM's default gpu_memory_utilization when its release is
     * assumed. */
    struct {
        uint64_t ctx[2], ws[2], comm[2], nccl[2];
        double frag[2];
        double util[2]; /* a server's budget fraction: [0] the most budget, [1] the least */
    } band;
    uint64_t comm_bytes;          /* NCCL buffers */
    double frag;                  /* allocator slack fraction */
    double util;                  /* server budget fraction; 0 = none */
    uint64_t max_num_seqs;        /* server: sequences the sampler is profiled with */
    int64_t fw_version;           /* serving engine release (major*1e6 + minor*1e3 + patch),
                                   * resolved: the current release when unset */
    int32_t fw_version_assumed;   /* 1 when fw_version is the default (a report note) */
    int32_t kv_rule;              /* enum gpufit__kv_rule (eval.h): the server's KV budget */
    uint64_t sampler_b;           /* server profile: bytes per logit of the sampler warm-up */
    int32_t mm_items;             /* images per prompt: -1 = framework default, 0 = text only */
    int32_t mm_v0;                /* vLLM V0's multimodal profile (else V1's; multimodal.md) */
    /* torch.optim's step (docs/memory/optimizer-step.md): the gpufit_optimizer_impl resolved,
     * -1 when the job's step is not torch.optim Adam/AdamW on the GPU; opt_auto: 1 when the
     * user left it to the trainer (the step's temporaries then carry a band) */
    int32_t opt_impl, opt_auto;
    uint64_t accum; /* micro-batches per optimizer step (gradient accumulation), >= 1 */
    /* whether the training loop keeps the model's outputs (the logits) alive through backward
     * (enum gpufit__held: a loop of one's own does, the Trainer and torchtune do not;
     * docs/memory/pytorch-transients.md); 64 bits: no padding */
    int64_t held_logits;
    /* PyTorch's caching allocator with expandable_segments:True: blocks split to 512 B, so the
     * rests of up to 1 MiB above kSmallSize (evaluate.c block_slack) do not arise */
    int64_t expandable;
    /* vLLM's CUDA graphs (policy.c vllm_graphs, docs/memory/vllm.md "CUDA graphs"): the batch
     * sizes captured (0 = none), the largest capture's tokens, and how the KV budget pays for
     * the pool (enum gpufit__graph_charge, eval.h); 64 bits: no padding */
    uint64_t graph_sizes, graph_tokens;
    int64_t graph_charge;
    uint64_t graph_per[3]; /* bytes per layer and captured size: point, low, high (a profile's
                            * or the stack table's GPUFIT__STACK_VLLM_GRAPH) */
} gpufit__plan;

/* A calibration profile (gpufit_job_apply_profile, calibrate.c): the user's own stack
 * constants, [0] point, [1] low, [2] high; a bit of `set` per GPUFIT__PROF_* present. */
typedef struct gpufit__profile {
    uint32_t set, reserved;
    uint64_t bytes[5][3]; /* GPUFIT__PROF_CTX, _NCCL, _NONTORCH, _GRAPH (not _SLACK) */
    double slack[3];      /* GPUFIT__PROF_SLACK */
    /* runs that constrained each constant ("runs"); UINT32_MAX when the profile does not say
     * (written by hand: taken as written). Fewer than GPUFIT__PROF_NARROW_RUNS keep the
     * documented range around the fitted point (policy.c, docs/calibration.md). */
    uint32_t runs[5];
} gpufit__profile;
#define GPUFIT__PROF_NARROW_RUNS 3

struct gpufit_job {
    int64_t task, micro_batch, seq_len, global_batch, batch, context_len, prompt_len;
    int64_t lora_rank, lora_targets, lora_modules, adapter_dtype, n_gpu_layers, max_num_seqs;
    int64_t mm_items_per_prompt;
    int64_t trainer; /* gpufit_trainer, -1 = auto (framework pytorch, training) */
    double gpu_memory_utilization;
    int64_t precision, weight_dtype, compute_dtype, grad_dtype, master_weights, optimizer_dtype;
    int64_t kv_dtype;
    int64_t optimizer, checkpointing, checkpoint_every, checkpoint_layers, attention;
    int64_t optimizer_impl; /* gpufit_optimizer_impl, -1 = auto (framework pytorch, training) */
    int64_t expandable_segments; /* PYTORCH_CUDA_ALLOC_CONF expandable_segments:True (0/1) */
    double dropout;
    double lora_dropout; /* LoRA adapters' dropout probability (PEFT lora_dropout) */
    int64_t dp, tp, pp, vpp, cp, ep, etp, sp, zero, offload, gpus, pp_schedule;
    int64_t pp_first_layers, pp_last_layers, zero_shard_size, host_memory_bytes;
    int64_t reduce_bucket_size, overlap_comm, sync_each_batch; /* DeepSpeed / FSDP (policy.c) */
    int64_t gpu, gpu_memory_bytes, framework, framework_version;
    double gpu_memory_gib;
    double margin;        /* safety margin, share of each device's capacity (docs/band.md) */
    int64_t margin_bytes; /* ... or bytes per device */
    int64_t cuda_context_bytes, cuda_version, workspace_bytes;
    double fragmentation;
    int64_t mitigations, allow_hardware; /* advice: how many fixes; hardware ones too */
    gpufit__profile profile; /* calibration (gpufit_job_apply_profile); set = 0: none */
    gpufit__list tensor_split, device_gpus; /* per pipeline stage; n = 0: not set */
    gpufit__list device_memory_gib;         /* GiB of each stage's device; n = 0: not set */
    char gpu_name[GPUFIT__NAME_MAX]; /* display name of a capacity-only GPU ("" = none) */
    /* Derived: the resolved plan, so that evaluation does not resolve the job again (policy.c).
     * Valid only while plan_state == 1. The setters mark it stale (0) and the public functions
     * that change a job refresh it (gpufit__job_refresh); code that edits a copy's fields
     * directly sets plan_state = 0, and evaluation then resolves the copy itself. */
    int32_t plan_state;
    gpufit__plan plan;
};
/* The constants a calibration profile sets (calibrate.c, docs/calibration.md). */
enum {
    GPUFIT__PROF_CTX = 0,
    GPUFIT__PROF_NCCL,
    GPUFIT__PROF_NONTORCH,
    GPUFIT__PROF_SLACK,
    GPUFIT__PROF_GRAPH /* vLLM's CUDA graphs per layer and captured size */
};
/* Resolves j's plan into j->plan (plan_state 1), or marks it stale (0) when it does not
 * resolve: evaluation then reports the error (policy.c). */
void gpufit__job_refresh(struct gpufit_job *j);
/* The same when j differs from the job whose resolved plan is *base in batch and sequence
 * sizes only (micro_batch, seq_len, global_batch, batch, context_len, prompt_len): *base with
 * the fields those decide re-derived, as gpufit__job_refresh would give (policy.c). */
void gpufit__job_resize(struct gpufit_job *j, const gpufit__plan *base);

/* ---------------------------------------------------------------------------------------
 * Errors (status.c)
 * ------------------------------------------------------------------------------------- */
/* Fills err (if non-NULL and large enough) and returns status. offset UINT64_MAX = none. */
int32_t gpufit__fail(gpufit_error *err, int32_t status, int32_t param, uint64_t offset,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Marks err as success (status 0, empty message) when non-NULL. */
void gpufit__ok(gpufit_error *err);
/* Input structs (size-prefixed, read by the library): a caller's struct larger than the
 * library's is accepted only when the bytes it does not know are zero (Linux
 * copy_struct_from_user, zstd and libgit2 alike); at most GPUFIT__INPUT_STRUCT_MAX bytes.
 * Returns GPUFIT_OK or GPUFIT_E_STRUCT_SIZE. */
#define GPUFIT__INPUT_STRUCT_MAX 4096u
int32_t gpufit__tail_zero(const void *in, size_t own_size);
/* Size-prefixed output copy: checks out->struct_size >= min_size, copies min(caller, own)
 * bytes of src into out and writes the filled size back. */
int32_t gpufit__copy_out(void *out, const void *src, size_t own_size, size_t min_size);

/* A function off the common path (an error report, a rare form): kept out of line, so that
 * its callers' fast paths save no registers for it. GPUFIT__NOINLINE: the same for a function
 * that is taken once per call, not per key (speed still counts there). GPUFIT__INLINE: a
 * small loop of a per-key fast path, inlined even where it has two callers. */
#if defined(__GNUC__)
#define GPUFIT__COLD __attribute__((noinline, cold))
#define GPUFIT__NOINLINE __attribute__((noinline))
#define GPUFIT__INLINE   inline __attribute__((always_inline))
#else
#define GPUFIT__COLD
#define GPUFIT__NOINLINE
#define GPUFIT__INLINE inline
#endif

/* ---------------------------------------------------------------------------------------
 * Checked arithmetic (uint64_t). Each returns 0 on success, 1 on overflow.
 * ------------------------------------------------------------------------------------- */
static inline int gpufit__mul(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}
static inline int gpufit__add(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* x / d and ceil(x / d) for a divisor d >= 1 that is usually 1 (a parallel degree, the
 * elements of a plain dtype's block): that case skips the 64-bit division. */
static inline uint64_t gpufit__div(uint64_t x, uint64_t d)
{
    return d == 1 ? x : x / d;
}
static inline uint64_t gpufit__div_up(uint64_t x, uint64_t d)
{
    return d == 1 ? x : x / d + (x % d != 0);
}

/* v GiB in bytes, rounded half away from zero (capacities given in GiB: v <= 2^20). */
static inline uint64_t gpufit__gib_bytes(double v)
{
    return (uint64_t)llround(v * 1073741824.0);
}

/* ---------------------------------------------------------------------------------------
 * Parameter table (params.c)
 * ------------------------------------------------------------------------------------- */
typedef struct gpufit__enum_value {
    const char *name;
    int64_t value;
    uint32_t len; /* strlen(name), from the literal: a lookup compares it first */
} gpufit__enum_value;
/* One value name (a string literal) and its value. */
#define GPUFIT__EV(name, v)                                                                        \
    {                                                                                              \
        name, v, sizeof("" name) - 1                                                               \
    }

typedef struct gpufit__param_entry {
    int32_t id;
    int32_t domain; /* GPUFIT_DOMAIN_MODEL / _JOB */
    int32_t type;   /* gpufit_param_type */
    int32_t is_double;
    size_t offset; /* into struct gpufit_model or struct gpufit_job */
    int64_t min_i, max_i, def_i;
    double min_f, max_f, def_f;
    const gpufit__enum_value *values; /* NULL-name terminated; enum and bool params */
    const char *name;
    const char *aliases; /* space-separated, or NULL */
    const char *unit;
    const char *doc;
    uint32_t name_len; /* strlen(name), from the literal: the lookup compares it first */
    uint32_t plain_int; /* 1: an integer without value names or a reader of its own (gpu,
                           lora_modules, the versions): decimal digits are its value */
} gpufit__param_entry;

/* Name indexes (sorted name lists with open-addressing hash tables over them) and id indexes,
 * generated by tools/gen_index.c (`make index`; `make check` fails when they are stale). A hit
 * is verified against the table it points into and a miss falls back to the linear scan, so a
 * stale index is slow, never wrong. */
typedef struct gpufit__name_row {
    const char *name; /* lower case for the preset index */
    uint16_t len;
    uint16_t row; /* index into the table */
} gpufit__name_row;
/* The index's order: by length, then memcmp order. */
int gpufit__name_cmp(const char *a, size_t alen, const char *b, size_t blen);
/* 1 when a[0..n) and b[0..n) hold the same bytes: for short names, without a call into memcmp
 * (8 bytes at a time, the last chunk overlapping; both spans must have n readable bytes). */
static inline int gpufit__bytes_eq(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    uint32_t u, v;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        memcpy(&u, a, 4);
        memcpy(&v, b, 4);
        if (u != v)
            return 0;
        memcpy(&u, a + n - 4, 4);
        memcpy(&v, b + n - 4, 4);
        return u == v;
    }
    /* 0 to 3 bytes: the first, middle and last cover them */
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}
/* x with its ASCII capitals A-Z in lower case, 8 bytes at a time (no carry crosses a byte:
 * each sum below stays under 0x100). */
static inline uint64_t gpufit__lower8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80, low7 = x & ~high;
    uint64_t from_a = low7 + ones * (0x80 - 'A'); /* bit 7: the low 7 bits are >= 'A' */
    uint64_t past_z = low7 + ones * (0x7F - 'Z'); /* bit 7: they are > 'Z' */
    return x | ((from_a & ~past_z & ~x & high) >> 2);
}
/* Copies in[0..n) to out with its capitals in lower case, 8 bytes at a time. */
static inline void gpufit__lower_copy(char *out, const char *in, size_t n)
{
    uint64_t x;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        memcpy(&x, in + i, 8);
        x = gpufit__lower8(x);
        memcpy(out + i, &x, 8);
    }
    if (i == n)
        return;
    if (n >= 8) { /* the last 8 bytes again, overlapping the chunks before */
        memcpy(&x, in + n - 8, 8);
        x = gpufit__lower8(x);
        memcpy(out + n - 8, &x, 8);
        return;
    }
    for (; i < n; i++)
        out[i] = (char)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] - 'A' + 'a' : in[i]);
}
/* 1 when a[0..n) with its capitals in lower case equals low[0..n), which has no capitals (both
 * spans must have n readable bytes; the chunks overlap as in gpufit__bytes_eq). */
static inline int gpufit__bytes_eq_lower(const char *a, const char *low, size_t n)
{
    uint64_t x = 0, y = 0;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, low + i, 8);
            if (gpufit__lower8(x) != y)
                return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, low + n - 8, 8);
        return gpufit__lower8(x) == y;
    }
    if (n >= 4) {
        uint32_t u, v;
        memcpy(&u, a, 4);
        memcpy(&v, low, 4);
        x = (uint64_t)u << 32;
        y = (uint64_t)v << 32;
        memcpy(&u, a + n - 4, 4);
        memcpy(&v, low + n - 4, 4);
        return gpufit__lower8(x | u) == (y | v);
    }
    for (size_t i = 0; i < n; i++) {
        x = x << 8 | (unsigned char)a[i];
        y = y << 8 | (unsigned char)low[i];
    }
    return gpufit__lower8(x) == y;
}
/* x * k mod 2^32, computed in 64 bits (32 x 32 bits never wrap there): the same value as a
 * 32-bit multiplication, without the unsigned wrap the overflow-checking fuzz build rejects */
static inline uint32_t gpufit__mul32(uint32_t x, uint32_t k)
{
    return (uint32_t)(((uint64_t)x * k) & 0xFFFFFFFFu);
}
/* A hash of name[0..len) from its length and three of its bytes (first, middle, last): what
 * the generated open-addressing tables are built with (tools/gen_index.c). Inline: every key
 * of a document is looked up. */
static inline uint32_t gpufit__name_hash(const char *name, size_t len)
{
    uint32_t h = gpufit__mul32((uint32_t)len, 0x9E3779B1u);
    if (len > 0) {
        h ^= gpufit__mul32((unsigned char)name[0], 0x85EBCA6Bu);
        h ^= gpufit__mul32((unsigned char)name[len / 2], 0xC2B2AE35u);
        h ^= gpufit__mul32((unsigned char)name[len - 1], 0x27D4EB2Fu);
    }
    return h ^ (h >> 15);
}
/* The row of name[0..len) through an open-addressing table: slots (n_slots, a power of two)
 * hold 1 + an index into rows (n of them), 0 = empty, filled by linear probing from
 * gpufit__name_hash. The name is compared exactly (case-sensitive). -1 when absent. */
int32_t gpufit__name_hash_find(const gpufit__name_row *rows, size_t n, const uint16_t *slots,
                               size_t n_slots, const char *name, size_t len);
/* The linear reference lookups the indexes must agree with (tests, tools/gen_index.c). */
const gpufit__param_entry *gpufit__param_find_linear(int32_t id);
const gpufit__param_entry *gpufit__param_find_name_linear(const char *name, size_t len);
size_t gpufit__param_count(void);
const gpufit__param_entry *gpufit__param_find(int32_t id);
const gpufit__param_entry *gpufit__param_find_name(const char *name, size_t len);
const gpufit__param_entry *gpufit__param_at(size_t i); /* NULL past the end */
/* The defaults of a new handle: the parameters' table defaults, the model named "custom",
 * its cache stale (cache_state 0; the cache's other bytes are left as they are) and the job's
 * plan stale (plan_state 0; the plan's bytes are left as they are). Copied from initialisers
 * generated by `make index`. */
void gpufit__model_defaults(struct gpufit_model *m);
void gpufit__job_defaults(struct gpufit_job *j);
/* The same by walking the parameter table over all-zero bytes (the reference the unit tests
 * compare the copies with). */
void gpufit__model_defaults_walk(struct gpufit_model *m);
void gpufit__job_defaults_walk(struct gpufit_job *j);

/* Sets one parameter by id (iv for int/enum/bool parameters, fv for float ones), checked as by
 * the public setters. */
int32_t gpufit__set_param(struct gpufit_model *m, struct gpufit_job *j, int32_t id, int64_t iv,
                          double fv, gpufit_error *err);
/* The same for a table entry already found (callers that set the same parameters often). */
/* In a public setter or getter: a NULL handle is GPUFIT_E_INVALID_ARG naming parameter p. */
#define GPUFIT__NULL_CHECK(h, p)                                                                   \
    if ((h) == NULL)                                                                               \
    return gpufit__fail(err, GPUFIT_E_INVALID_ARG, p, UINT64_MAX, "handle is NULL")

/* The entry of parameter p if it belongs to `domain` (else the error, in *status). */
const gpufit__param_entry *gpufit__param_checked(int32_t p, int32_t domain, gpufit_error *err,
                                                int32_t *status);
/* Typed setters of one entry, without refreshing derived state (params.c). */
int32_t gpufit__param_set_int(const gpufit__param_entry *e, struct gpufit_model *m,
                              struct gpufit_job *j, int64_t v, gpufit_error *err);
int32_t gpufit__param_set_float(const gpufit__param_entry *e, struct gpufit_model *m,
                                struct gpufit_job *j, double v, gpufit_error *err);
int32_t gpufit__param_set_list(const gpufit__param_entry *e, struct gpufit_job *j,
                               const double *v, uint32_t n, gpufit_error *err);
int32_t gpufit__set_entry(const gpufit__param_entry *e, struct gpufit_model *m,
                          struct gpufit_job *j, int64_t iv, double fv, gpufit_error *err);

/* Sets one parameter from its text value (a spec token or a JSON scalar's text; JSON strings
 * are passed without quotes). Handles the special keys "model" (preset) and "gpu" (catalogue
 * name or capacity such as "24GiB"). m or j may be NULL when the key does not need it.
 * offset is the byte offset of the value, reported on error. */
int32_t gpufit__apply_kv(struct gpufit_model *m, struct gpufit_job *j, const char *key,
                         size_t klen, const char *val, size_t vlen, uint64_t offset,
                         gpufit_error *err);
/* The same for a parameter already looked up (the readers find each key once). */
int32_t gpufit__apply_entry(struct gpufit_model *m, struct gpufit_job *j,
                            const gpufit__param_entry *e, const char *val, size_t vlen,
                            uint64_t offset, gpufit_error *err);

/* Keys seen in one document (a spec string or a JSON scenario), for gpufit__doc_key: each
 * parameter (by any alias), "model" and "gpu" may appear once; gpu_memory_gib and
 * gpu_memory_bytes exclude each other. Slot k was seen when bit k of `seen` is set; at[k] then
 * holds its offset + 1 (other slots are not read, so only `seen` is zeroed:
 * gpufit__doc_keys_init). */
#define GPUFIT__DOC_KEYS_MAX 192
typedef struct gpufit__doc_keys {
    uint64_t seen[(GPUFIT__DOC_KEYS_MAX + 63) / 64];
    uint64_t at[GPUFIT__DOC_KEYS_MAX];
} gpufit__doc_keys;
/* No key seen yet. */
void gpufit__doc_keys_init(gpufit__doc_keys *d);
/* Records key (klen bytes) found at byte `offset` of a document; an error naming both
 * occurrences when the key (or an alias of it) was seen before, or when it conflicts with a key
 * seen before. Unknown keys pass (the caller reports them). */
int32_t gpufit__doc_key(gpufit__doc_keys *d, const char *key, size_t klen, uint64_t offset,
                        gpufit_error *err);
/* gpufit__param_find_name and gpufit__doc_entry in one step: *out is key's parameter (NULL,
 * and nothing recorded, when there is none). */
int32_t gpufit__doc_find(gpufit__doc_keys *d,
                         const char *key,
                         size_t klen,
                         uint64_t offset,
                         const gpufit__param_entry **out,
                         gpufit_error *err);
/* The same for a parameter already looked up (e), or for "model" (e NULL). */
int32_t gpufit__doc_entry(gpufit__doc_keys *d, const gpufit__param_entry *e, const char *key,
                          size_t klen, uint64_t offset, gpufit_error *err);

/* Where a key applies (params.c applicability table, docs/inputs.md): a key set to a value
 * other than its default where it does not apply is GPUFIT_E_INCONSISTENT naming it. The
 * model's kind is checked when a model resolves, the job's when its plan resolves (both
 * cached: never per evaluation). */
enum {
    GPUFIT__AP_MOE = 1u,     /* a mixture-of-experts model (n_experts > 0) */
    GPUFIT__AP_ENCDEC = 2u,  /* an encoder-decoder model */
    GPUFIT__AP_MLA = 4u,     /* multi-head latent attention (kv_lora_rank > 0) */
    GPUFIT__AP_OFFLOAD = 8u, /* inference outside vLLM / SGLang (layer offload) */
    GPUFIT__AP_PT_TRAIN = 16u, /* training with framework pytorch (the trainer front end) */
    GPUFIT__AP_TORCH = 32u     /* PyTorch's caching allocator: every framework but llama.cpp */
};
/* 1 when every row of the applicability table names its parameter's domain and int64_t
 * field offset (the check compares fields by offset; tests/unit/test_cold.c). */
int gpufit__applies_consistent(void);
/* Checks the keys of `domain` in handle h (a struct gpufit_model or gpufit_job) against what
 * the model or job is (`have`, GPUFIT__AP_* bits). */
int32_t gpufit__check_applies(int32_t domain, const void *h, uint32_t have, gpufit_error *err);

/* ---------------------------------------------------------------------------------------
 * Models (model.c, model_count.c, model_presets.c)
 * ------------------------------------------------------------------------------------- */
/* Where a tensor group lives: outside the layers, or once per layer of a class. */
enum gpufit__where {
    GPUFIT__W_GLOBAL = 0, /* embeddings, output head, final norms */
    GPUFIT__W_DENSE = 1,  /* each dense decoder layer (or encoder layer of an encoder model) */
    GPUFIT__W_MOE = 2,    /* each MoE decoder layer */
    GPUFIT__W_ENC = 3,    /* each encoder layer of an encoder-decoder model */
    GPUFIT__W_DEC = 4,    /* each decoder layer of an encoder-decoder model (with cross-attn) */
    GPUFIT__W_COUNT = 5
};

/* What a tensor is (drives quantisation recipes and activation rules). */
enum gpufit__tkind {
    GPUFIT__T_TOKEN_EMBD = 0, /* V x h token embedding */
    GPUFIT__T_POS_EMBD,       /* learned positions */
    GPUFIT__T_TYPE_EMBD,      /* token types (BERT) */
    GPUFIT__T_OUTPUT,         /* untied output head V x h */
    GPUFIT__T_NORM,           /* any norm weight/bias (1-D) */
    GPUFIT__T_BIAS,           /* any bias (1-D) */
    GPUFIT__T_ATTN_Q,         /* h -> q (or MLA wq / wq_b) */
    GPUFIT__T_ATTN_K,         /* h -> c */
    GPUFIT__T_ATTN_V,         /* h -> c */
    GPUFIT__T_ATTN_QKV,       /* fused q,k,v (unused by the walk; reserved) */
    GPUFIT__T_ATTN_O,         /* q -> h */
    GPUFIT__T_MLA_Q_A,        /* MLA wq_a h -> r_q */
    GPUFIT__T_MLA_KV_A,       /* MLA wkv_a h -> r_kv + d_r */
    GPUFIT__T_MLA_KV_B,       /* MLA wkv_b r_kv -> n_q (d_n + d_v) */
    GPUFIT__T_CROSS_Q,        /* enc-dec cross attention */
    GPUFIT__T_CROSS_K,
    GPUFIT__T_CROSS_V,
    GPUFIT__T_CROSS_O,
    GPUFIT__T_FFN_GATE, /* dense MLP */
    GPUFIT__T_FFN_UP,
    GPUFIT__T_FFN_DOWN,
    GPUFIT__T_EXP_GATE, /* routed experts: copies = n_experts */
    GPUFIT__T_EXP_UP,
    GPUFIT__T_EXP_DOWN,
    GPUFIT__T_SHEXP_GATE, /* shared experts: copies = n_shared_experts */
    GPUFIT__T_SHEXP_UP,
    GPUFIT__T_SHEXP_DOWN,
    GPUFIT__T_ROUTER,      /* h x E */
    GPUFIT__T_SHEXP_ROUTER_GATE, /* Qwen2-MoE shared-expert gate: 1 x h */
    GPUFIT__T_REL_POS,     /* T5 relative attention bias */
    GPUFIT__T_POOLER,      /* BERT pooler */
    GPUFIT__T_GENERIC,     /* generic model: all parameters */
    GPUFIT__T_VISION,      /* vision encoder and projector (replicated ones as 1-D groups) */
    GPUFIT__T_COUNT
};

/* Linear layers (quantisable, LoRA-adaptable), routed experts, and the LoRA target rule
 * (PEFT target_modules, memory-model.md §9), shared by the weight walk and the model cache. */
static inline int gpufit__is_linear(int kind)
{
    return kind >= GPUFIT__T_ATTN_Q && kind <= GPUFIT__T_SHEXP_DOWN;
}
static inline int gpufit__is_expert(int kind)
{
    return kind >= GPUFIT__T_EXP_GATE && kind <= GPUFIT__T_EXP_DOWN;
}
/* The gpufit_lora_module bit index (0..6) of a linear tensor kind, -1 for others. MLA's q_a and
 * kv_a down-projections sit with k: the attention set adapts them and qv does not, as before
 * module lists existed (memory-model.md §9). */
static inline int gpufit__lora_bit(int kind)
{
    switch (kind) {
    case GPUFIT__T_ATTN_Q:
    case GPUFIT__T_CROSS_Q: return 0;
    case GPUFIT__T_ATTN_K:
    case GPUFIT__T_CROSS_K:
    case GPUFIT__T_MLA_Q_A:
    case GPUFIT__T_MLA_KV_A: return 1;
    case GPUFIT__T_ATTN_V:
    case GPUFIT__T_CROSS_V:
    case GPUFIT__T_MLA_KV_B: return 2;
    case GPUFIT__T_ATTN_O:
    case GPUFIT__T_CROSS_O: return 3;
    case GPUFIT__T_FFN_GATE:
    case GPUFIT__T_EXP_GATE:
    case GPUFIT__T_SHEXP_GATE: return 4;
    case GPUFIT__T_FFN_UP:
    case GPUFIT__T_EXP_UP:
    case GPUFIT__T_SHEXP_UP: return 5;
    case GPUFIT__T_FFN_DOWN:
    case GPUFIT__T_EXP_DOWN:
    case GPUFIT__T_SHEXP_DOWN: return 6;
    default: return -1;
    }
}
/* The module bits of a gpufit_lora_targets value (PEFT target_modules, memory-model.md §9). */
static inline int32_t gpufit__lora_targets_mask(int64_t targets)
{
    return targets == GPUFIT_LORA_QV          ? GPUFIT_LORA_MODULE_Q | GPUFIT_LORA_MODULE_V
           : targets == GPUFIT_LORA_ATTENTION ? GPUFIT_LORA_MODULE_Q | GPUFIT_LORA_MODULE_K |
                                                    GPUFIT_LORA_MODULE_V | GPUFIT_LORA_MODULE_O
                                              : (1 << GPUFIT__LORA_BITS) - 1;
}
/* Whether a tensor of this kind gets adapters under the module bits `mask`. */
static inline int gpufit__lora_adapted(int32_t mask, int kind)
{
    int b = gpufit__lora_bit(kind);
    return b >= 0 && ((mask >> b) & 1);
}

/* Where a global tensor sits in a split (gpufit__aggregates.glob): 0 with the token embedding
 * (first stage), 1 with the output head (last stage), 3 the vision encoder and projector
 * (first stage; every stage under vLLM, multimodal.md). */
static inline int gpufit__glob_side(int kind)
{
    return kind == GPUFIT__T_VISION ? 3
           : kind == GPUFIT__T_TOKEN_EMBD || kind == GPUFIT__T_POS_EMBD ||
                   kind == GPUFIT__T_TYPE_EMBD
               ? 0
               : 1;
}

typedef struct gpufit__tgroup {
    uint16_t kind;   /* enum gpufit__tkind */
    uint16_t where;  /* enum gpufit__where */
    uint32_t copies; /* instances per layer (experts) or per model (global) */
    uint64_t rows;   /* output features (1 for 1-D tensors) */
    uint64_t cols;   /* input features (elements for 1-D tensors) */
} gpufit__tgroup;

/* Resolved, validated geometry of a model. */
typedef struct gpufit__shape {
    int32_t arch, mlp, norm, gated;
    uint64_t h, nq, nkv, dh;     /* dh = head dim of q/k/v for standard attention */
    uint64_t q, c;               /* q = nq*dh, c = nkv*dh (MLA: c = r_kv + d_r latent) */
    uint64_t f, f_moe, f_sh;     /* dense, routed-expert, shared-expert intermediate */
    uint64_t V;                  /* vocabulary */
    uint64_t E, k, n_shared;     /* experts, top-k, shared experts */
    uint64_t mla;                /* 1 when MLA */
    uint64_t r_q, r_kv, d_n, d_r, d_v;
    uint64_t layers[GPUFIT__W_COUNT]; /* layers per class; [GLOBAL] unused */
    int32_t w_first, w_end;      /* classes with layers lie in [w_first, w_end): loops over
                                    the classes of a slice stop there */
    uint64_t n_layers;           /* all transformer layers */
    uint64_t tied, max_position;
    uint64_t rope_rows, rope_dim; /* RoPE cos/sin tables: rows, rotated dims per head */
    uint64_t n_params_generic;
    double act_bytes_per_token;
    /* Optional tensors: resolved 0/1 flags (o_bias and emb_norm with their -1 defaults applied)
     * and the sizes of BERT token types and T5 relative-position buckets. */
    int32_t qkv_bias, o_bias, mlp_bias, emb_norm;
    int32_t qk_norm, pooler, router_bias, shexp_gate;
    uint64_t type_vocab, rel_buckets;
    /* Checkpoint storage by module (GPUFIT__M_*), -1 = auto; quant = 1 when any is set. */
    int64_t mod_dt[5];
    int32_t quant, reserved_q;
    /* Vision encoder (v_layers = 0: none), multimodal.md: style and projector
     * (gpufit_vision_style / _projector), width, heads, MLP, patch side, patches per tile side
     * (v_grid = image / patch), merge per side, tiles per image; derived: encoder positions
     * per tile (v_grid² + class token), input elements per patch (3·p²·temporal), the tokens
     * one image becomes in the text sequence, and the projector's widest intermediate. */
    int32_t v_style, v_proj;
    uint64_t v_layers, v_h, v_heads, v_f, v_patch, v_grid, v_merge, v_tiles;
    uint64_t v_pos, v_pix, v_tokens, v_proj_mid;
    /* Sliding-window attention: window in tokens (0 = none) and the period of global layers
     * (layer i is global when swa_period > 1 and (i + 1) % swa_period == 0; else local). */
    uint64_t swa_window, swa_period;
    /* Cross-attention layers among the decoder layers (Mllama) and the vision tokens their
     * K/V cache holds per sequence (0: text-only requests, whose cross layers are skipped) */
    uint64_t n_cross, cross_tokens;
} gpufit__shape;

/* Module groups of the per-module checkpoint dtypes (shape mod_dt). */
enum { GPUFIT__M_EMBD = 0, GPUFIT__M_ATTN, GPUFIT__M_MLP, GPUFIT__M_OUT, GPUFIT__M_EXP };
/* The module group of a tensor kind, or -1 (norms, biases, routers: never quantised). */
static inline int gpufit__module_of(int kind)
{
    if (kind <= GPUFIT__T_TYPE_EMBD)
        return GPUFIT__M_EMBD;
    if (kind == GPUFIT__T_OUTPUT)
        return GPUFIT__M_OUT;
    if (kind >= GPUFIT__T_ATTN_Q && kind <= GPUFIT__T_CROSS_O)
        return GPUFIT__M_ATTN;
    if (gpufit__is_expert(kind))
        return GPUFIT__M_EXP;
    if (gpufit__is_linear(kind))
        return GPUFIT__M_MLP;
    return -1;
}

/* Validates m and fills s (derived defaults applied). */
int32_t gpufit__model_resolve(const struct gpufit_model *m, gpufit__shape *s, gpufit_error *err);

#define GPUFIT__TGROUPS_MAX 64
/* Fills out[] with the model's tensor groups, the global ones first; returns the number of
 * groups (<= MAX). */
size_t gpufit__model_tensors(const gpufit__shape *s, gpufit__tgroup *out);

typedef struct gpufit__counts {
    uint64_t total;              /* every parameter once (tied embeddings once) */
    uint64_t active;             /* per token: shared + top-k experts */
    uint64_t per_layer[GPUFIT__W_COUNT]; /* parameters of one layer of each class */
    uint64_t global;             /* parameters outside the layers */
    uint64_t embedding;          /* token embedding (V x h) */
    uint64_t output;             /* untied output head (0 when tied) */
    uint64_t largest_layer;      /* parameters of the largest layer */
    uint64_t largest_matrix;     /* elements of the largest linear weight inside a layer */
    uint64_t vision;             /* vision encoder and projector (in total and active) */
} gpufit__counts;
/* Exact counts (model-memory §1); GPUFIT_E_OVERFLOW if they do not fit in uint64_t. */
int32_t gpufit__model_count(const gpufit__shape *s, gpufit__counts *out, gpufit_error *err);
/* The same from the tensor groups gpufit__model_tensors(s) gave (groups[0..n)), without
 * walking the model again (the cache's refresh). */
int32_t gpufit__model_count_groups(const gpufit__shape *s, const gpufit__tgroup *groups, size_t n,
                                   gpufit__counts *out, gpufit_error *err);

/* The sums of every part of a model: one layer of each class and the global tensors by where
 * they sit (no LoRA sums for globals: adapters go on layers only). */
typedef struct gpufit__aggregates {
    gpufit__class_agg layer[GPUFIT__W_COUNT]; /* by class; [GPUFIT__W_GLOBAL] unused */
    gpufit__class_agg glob[4]; /* [0] embedding side (token, position, type embeddings),
                                  [1] output side (head, final norms ...), [2] the tied token
                                  embedding's copy on the last stage (empty when untied),
                                  [3] the vision encoder and projector (gpufit__glob_side) */
    uint32_t glob_dense; /* 1 when no global tensor is a linear layer, an expert or K/V */
    uint32_t reserved;
} gpufit__aggregates;

struct gpufit_model {
    char name[GPUFIT__NAME_MAX];
    int64_t arch, n_layers, hidden_size, n_heads, n_kv_heads, head_dim, ffn_hidden_size, mlp;
    int64_t vocab_size, tied_embeddings, norm, qkv_bias, mlp_bias, max_position, o_bias;
    int64_t emb_norm, qk_norm, type_vocab_size, pooler;
    int64_t rope_positions, rotary_dim; /* RoPE tables' rows; rotated dims (0 = head_dim) */
    int64_t n_experts, n_shared_experts, experts_per_token, moe_ffn_hidden_size, n_dense_layers;
    int64_t shared_ffn_hidden_size, router_bias, shared_expert_gate;
    int64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    int64_t n_encoder_layers, n_decoder_layers, rel_pos_buckets;
    int64_t vision_layers, vision_hidden_size, vision_heads, vision_ffn_hidden_size;
    int64_t vision_patch_size, vision_image_size, vision_merge, vision_style, vision_projector;
    int64_t vision_tiles;
    int64_t sliding_window, sliding_window_pattern, n_cross_attn_layers, cross_attn_tokens;
    int64_t n_params;
    double activation_bytes_per_token;
    /* Per-module storage of a (pre-quantised) checkpoint, gpufit_dtype or -1 (auto: the job's
     * weight_dtype / precision decides); docs/memory/quantisation.md. */
    int64_t embedding_dtype, attention_dtype, mlp_dtype, output_dtype, expert_dtype;
    /* Exact weight bytes read from a GGUF file (io_gguf.c); gguf_layers == 0 when absent.
     * Layers beyond GPUFIT__GGUF_LAYERS_MAX are folded into the last entry's average. */
    uint32_t gguf_layers;
    uint32_t gguf_file_type; /* gpufit_dtype of the file's ftype, 0 = unknown */
    uint64_t gguf_token_embd_bytes, gguf_output_bytes, gguf_global_bytes;
    uint64_t gguf_layer_bytes[GPUFIT__GGUF_LAYERS_MAX];
    /* Derived data, so that evaluation does not re-derive the model (model_cache.c). Valid
     * only while cache_state == 1: every writer of the fields above either goes through
     * gpufit__model_defaults() / the setters, which mark it stale, or refreshes it. */
    int32_t cache_state; /* 0 stale, 1 valid, 2 stale but a preset as loaded (below), 3 the
                            fields do not resolve (a refresh failed; a new handle's defaults) */
    uint32_t cache_ng;   /* state 2: the preset's row */
    gpufit__shape cache_shape;
    gpufit__counts cache_counts;
    gpufit__tgroup cache_groups[GPUFIT__TGROUPS_MAX];
    gpufit__aggregates cache_agg;
    /* 1: read from a config.json whose model_type gpufit does not know, as a Llama-style
     * decoder from its standard keys (io_hf_config.c); the report notes it */
    int32_t from_unknown_type;
};

/* A class sum with nothing added: all zero, cols256 1 (model_cache.c). */
extern const gpufit__class_agg gpufit__class_agg_empty;
/* Sums with nothing added: every class sum gpufit__class_agg_empty, the rest zero. */
void gpufit__aggregates_clear(gpufit__aggregates *agg);
/* Fills agg from the tensor groups (model_cache.c). */
void gpufit__aggregates_build(const gpufit__shape *s, const gpufit__tgroup *g, size_t ng,
                              gpufit__aggregates *agg);

/* Re-derives the cached shape, counts and tensor groups of m (cache_state 1 on success, 3 if
 * the model does not resolve: evaluation then reports the error). A model in cache_state 2 (a
 * preset just loaded: gpufit__preset_load; any setter makes it 0) copies its preset's
 * generated record instead. */
void gpufit__model_refresh(struct gpufit_model *m);

/* *dst = *src for every byte that is in use: the unused tails of gguf_layer_bytes and
 * cache_groups are left as they were (nothing reads past gguf_layers and cache_ng), and so is
 * dst's cache past cache_state and cache_ng when src's is stale (nothing reads it then). */
void gpufit__model_assign(struct gpufit_model *dst, const struct gpufit_model *src);

/* Presets (model_presets.c). Loads preset `name` (len bytes; case-insensitive, aliases
 * accepted) into m (every field set, name copied, cache_state 2: a refresh copies the
 * preset's record). Returns GPUFIT_E_NOT_FOUND if unknown. */
int32_t gpufit__preset_load(struct gpufit_model *m, const char *name, size_t len,
                            gpufit_error *err);
/* gpufit__preset_load in two steps: the preset's row (or the same error), then its load. */
int32_t gpufit__preset_lookup(const char *name, size_t len, size_t *row, gpufit_error *err);
void gpufit__preset_load_row(struct gpufit_model *m, size_t row, const char *name, size_t len);
/* Fills m's cache from preset row's generated record (preset_record.inc); 0 when there is no
 * current record for that row (then the cache is to be derived: gpufit__model_refresh). Of the
 * class sums it writes those the evaluation reads: the layer classes in [w_first, w_end) and
 * the global sides, the vision side only with a vision encoder (the cold path copies less). */
int gpufit__preset_record_fill(struct gpufit_model *m, size_t row);
/* Number of presets and the i-th preset (name, aliases, hf repo; m loaded as by
 * gpufit__preset_load, cache_state 2). */
size_t gpufit__preset_count(void);
int32_t gpufit__preset_get(size_t i, struct gpufit_model *m, const char **name,
                           const char **aliases, const char **hf_repo);

/* ---------------------------------------------------------------------------------------
 * GPU catalogue (gpu_catalog.c, generated gpu_catalog.inc)
 * ------------------------------------------------------------------------------------- */
typedef struct gpufit__gpu {
    int32_t id; /* stable */
    const char *name, *key, *aliases, *vendor, *architecture;
    uint64_t memory_bytes;   /* usable if known, else marketed GiB x 2^30 */
    uint64_t marketed_bytes;
    double bandwidth_gbs, bf16_tflops, fp8_tflops, nvlink_gbs, msrp_usd;
    int32_t supports_bf16, supports_fp8, usable_known, launch_year;
    int32_t cc_major; /* CUDA compute capability major (0 = not NVIDIA) */
} gpufit__gpu;
size_t gpufit__gpu_count(void);
const gpufit__gpu *gpufit__gpu_at(size_t i);
const gpufit__gpu *gpufit__gpu_by_id(int64_t id);
const gpufit__gpu *gpufit__gpu_find(const char *name, size_t len); /* docs/gpus.md */
/* The same answer by normalising every row in order (what the generated index replaces): the
 * unit tests compare the two over every catalogue name. */
const gpufit__gpu *gpufit__gpu_find_scan(const char *name, size_t len);
#define GPUFIT__GPU_NAME_MAX 96
size_t gpufit__gpu_norm(const char *s, size_t len, char *out, size_t cap);
const char *gpufit__gpu_ambiguous(const char *name, size_t len); /* keys, or NULL */

/* ---------------------------------------------------------------------------------------
 * Dtypes (dtype.c)
 * ------------------------------------------------------------------------------------- */
typedef struct gpufit__dtype_info {
    const char *name;
    uint32_t block_bytes; /* bytes per block */
    uint32_t block_elems; /* elements per block */
} gpufit__dtype_info;
#define GPUFIT__DTYPE_COUNT (GPUFIT_DTYPE_F16_GGUF + 1)
/* Indexed by gpufit_dtype; unused values have a NULL name and are all zero (designated
 * initialisers: block_elems 0), so block_elems == 1 alone marks a plain, known dtype. Inline
 * lookups below: evaluation asks for them a few dozen times. */
extern const gpufit__dtype_info gpufit__dtypes[GPUFIT__DTYPE_COUNT];
static inline const gpufit__dtype_info *gpufit__dtype(int64_t dt) /* NULL if unknown */
{
    if ((uint64_t)dt >= GPUFIT__DTYPE_COUNT || gpufit__dtypes[dt].name == NULL)
        return NULL;
    return &gpufit__dtypes[dt];
}
/* log2 of the bytes per element of a plain dtype (fp32 2, bf16/fp16 1, 8-bit 0); 0 for a
 * dtype that packs elements into blocks (or an unknown one). */
static inline int gpufit__dtype_log2_bytes(int64_t dt)
{
    if ((uint64_t)dt >= GPUFIT__DTYPE_COUNT || gpufit__dtypes[dt].block_elems != 1)
        return 0;
    uint32_t b = gpufit__dtypes[dt].block_bytes;
    return b >= 4 ? 2 : b >= 2 ? 1 : 0;
}
/* Bytes of n elements stored as dt (blocks rounded up per tensor of n elements). */
static inline int gpufit__dtype_bytes(int64_t dt, uint64_t n, uint64_t *out)
{
    if ((uint64_t)dt < GPUFIT__DTYPE_COUNT && gpufit__dtypes[dt].block_elems == 1)
        return gpufit__mul(n, gpufit__dtypes[dt].block_bytes, out); /* plain element types */
    const gpufit__dtype_info *d = gpufit__dtype(dt);
    if (d == NULL)
        return 1;
    uint64_t blocks = n / d->block_elems + (n % d->block_elems != 0);
    return gpufit__mul(blocks, d->block_bytes, out);
}
extern const gpufit__enum_value gpufit__dtype_names[];

/* ---------------------------------------------------------------------------------------
 * Case-insensitive comparison of a counted string with a C string.
 * ------------------------------------------------------------------------------------- */
int gpufit__streq_ci(const char *a, size_t alen, const char *b);

/* Bounded text output (util.c): printf-appends into buf[cap], always NUL-terminated when cap >
 * 0; len counts every byte wanted, even past cap, so a caller learns the size it needs. */
typedef struct gpufit__text {
    char *buf;
    size_t cap, len;
} gpufit__text;
void gpufit__text_put(gpufit__text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "Did you mean" (suggest.c): each writes "; did you mean 'x'?" or "" to out and returns its
 * length. */
const char *gpufit__preset_hf_variant(const char *id, size_t len); /* model_hf_ids.c */
/* The i-th Hugging Face variant id and the preset it names; 0 past the end (tools/gen_index.c). */
int gpufit__preset_hf_variant_at(size_t i, const char **hf_id, const char **preset);
/* The preset row for a name, alias or Hugging Face id by the linear scan (the reference the
 * generated index must agree with), or -1. */
int32_t gpufit__preset_find_linear(const char *name, size_t len);
size_t gpufit__edit_distance(const char *a, size_t alen, const char *b, size_t blen);
int gpufit__suggest_close(size_t d, size_t qlen, size_t clen); /* the threshold */
size_t gpufit__suggest_key(const char *q, size_t qlen, char *out, size_t cap);
size_t gpufit__suggest_value(const gpufit__param_entry *e, const char *q, size_t qlen, char *out,
                             size_t cap);
size_t gpufit__suggest_gpu(const char *q, size_t qlen, char *out, size_t cap);
size_t gpufit__suggest_preset(const char *q, size_t qlen, char *out, size_t cap);

#endif /* GPUFIT_INTERNAL_H */
