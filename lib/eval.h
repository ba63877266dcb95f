/* SPDX-License-Identifier: MIT */
/* Internal evaluation types: the resolved job (plan), one device role and the result. */
#ifndef GPUFIT_EVAL_H
#define GPUFIT_EVAL_H

#include "changes.h"
#include "internal.h"

#define GPUFIT__NCOMP 12 /* components are 1..11; index 0 unused */
#define GPUFIT__ROLES_MAX (GPUFIT_LIST_MAX + 1) /* a role per stage of a split, + host */
#define GPUFIT__NOTES_MAX 8

/* Notes are codes, turned into static text only when read (no strings on the hot path). */
enum gpufit__note {
    GPUFIT__NOTE_NO_GPU = 1,      /* no GPU given: verdict against nothing */
    GPUFIT__NOTE_BF16_UNSUPPORTED, /* bf16 chosen on a GPU without bf16 hardware */
    GPUFIT__NOTE_FP8_UNSUPPORTED,  /* fp8 chosen on a GPU without fp8 hardware */
    GPUFIT__NOTE_QUANT_V_NEEDS_FA, /* llama.cpp keeps V in f16 without flash attention */
    GPUFIT__NOTE_KV_TOO_SMALL,     /* server budget leaves less KV than one full sequence */
    GPUFIT__NOTE_HOST_OFFLOAD,     /* some memory is placed in host RAM */
    GPUFIT__NOTE_GENERIC_MODEL,    /* parameter-count-only model: activations approximate */
    GPUFIT__NOTE_HOST_TOO_SMALL,   /* the host role exceeds host_memory_bytes */
    GPUFIT__NOTE_VLLM_ASSUMED,     /* framework_version unset: the current vLLM release */
    GPUFIT__NOTE_SGLANG_ASSUMED,   /* framework_version unset: the current SGLang release */
    GPUFIT__NOTE_UNKNOWN_TYPE,     /* config.json model_type unknown: read as a Llama decoder */
    GPUFIT__NOTE_LORA_BASE16,      /* LoRA, precision auto: a 16-bit base (policy.c) */
    GPUFIT__NOTE_LAYOUT_DP,        /* gpus=N alone, training: data parallel over N */
    GPUFIT__NOTE_LAYOUT_TP,        /* gpus=N alone, vLLM/SGLang: tensor parallel over N */
    GPUFIT__NOTE_LAYOUT_LAYERS,    /* gpus=N alone, llama.cpp/Transformers: a layer split */
    GPUFIT__NOTE_OPTIMIZER_STEP,   /* torch.optim's step temporaries raise the peak */
};

/* A server's KV budget rule (policy.c picks it from framework and framework_version). */
enum gpufit__kv_rule {
    GPUFIT__KV_NONE = 0,      /* not a server */
    GPUFIT__KV_VLLM_ALL = 1,  /* vLLM <= 0.6.3: util x total - everything on the device */
    GPUFIT__KV_VLLM_PROF = 2, /* vLLM >= 0.6.4: util x total - (weights + peak + non-torch) */
    GPUFIT__KV_SGLANG = 3,    /* SGLang: f x free before loading - weights (no profile run) */
};

/* How vLLM's KV budget pays for its CUDA graph pool (docs/memory/vllm.md "CUDA graphs"). */
enum gpufit__graph_charge {
    GPUFIT__GRAPH_AFTER = 0,   /* captured after the budget: the pool comes on top (< 0.21) */
    GPUFIT__GRAPH_CHARGED = 1, /* the budget deducts vLLM's estimate (0.21, V1 model runner) */
    GPUFIT__GRAPH_V2_SOME = 2, /* 0.22-0.24: MoE charged; dense charged with a band down to
                                * "on top" (some families already on Model Runner V2) */
    GPUFIT__GRAPH_V2_DENSE = 3 /* >= 0.25: MoE charged; dense on Model Runner V2, on top */
};

/* Release numbers as stored in framework_version / cuda_version. */
#define GPUFIT__VER(a, b, c) ((int64_t)(a) * 1000000 + (int64_t)(b) * 1000 + (int64_t)(c))
#define GPUFIT__VLLM_CURRENT GPUFIT__VER(0, 27, 0) /* the newest whose code gpufit follows */
#define GPUFIT__SGLANG_CURRENT GPUFIT__VER(0, 5, 15) /* the newest whose code gpufit follows */
#define GPUFIT__CUDA_CURRENT GPUFIT__VER(12, 8, 0)

/* Stack constants that depend on the user's software and hardware: a point value (what gpufit
 * uses) and a documented [low, high] range (docs/memory/runtime.md), in bytes. */
typedef struct gpufit__stack_const {
    uint64_t point, low, high;
} gpufit__stack_const;
enum gpufit__stack_id {
    GPUFIT__STACK_CTX_LAZY = 0,  /* CUDA context, lazy module loading */
    GPUFIT__STACK_CTX_EAGER,     /* CUDA context, every kernel image loaded at start */
    GPUFIT__STACK_CTX_GGML,      /* llama.cpp's context (ggml kernels only), lazy loading */
    GPUFIT__STACK_CUBLAS_WS,     /* cuBLAS workspace per handle-stream, cc < 9 */
    GPUFIT__STACK_CUBLAS_WS_SM90, /* cuBLAS workspace per handle-stream, cc >= 9 */
    GPUFIT__STACK_SERVER_NONTORCH, /* vLLM/SGLang non-torch + workspaces after the profile */
    GPUFIT__STACK_NCCL_COMM,     /* NCCL buffers per communicator */
    GPUFIT__STACK_DRIVER_RESERVE, /* nvidia-smi total - cudaMemGetInfo total, non-whole totals */
    GPUFIT__STACK_DRIVER_RESERVE_FULL, /* the same, floor, when nvidia-smi gives whole GiB */
    GPUFIT__STACK_VLLM_GRAPH,    /* vLLM CUDA graph memory per layer and captured batch size */
    GPUFIT__STACK_COUNT
};
extern const gpufit__stack_const gpufit__stack[GPUFIT__STACK_COUNT];
/* Caching-allocator slack as a fraction of the dynamic bytes: point and documented range
 * (docs/memory/allocator.md: memory-model.md §8.3 puts reserved - allocated at 0-20 % of all
 * allocated bytes; no source measures it for checkpointed pipelines). */
#define GPUFIT__FRAG_POINT 0.25
#define GPUFIT__FRAG_LOW 0.10
#define GPUFIT__FRAG_HIGH 0.35

typedef struct gpufit__role {
    const char *name;
    uint32_t n_devices, layers;
    uint64_t comp[GPUFIT__NCOMP];
    uint64_t alloc, reserved, used;
    int64_t headroom;
    uint64_t kv_cap_bytes, kv_cap_tokens;
    uint64_t capacity;      /* bytes of this role's GPU; 0 = unknown */
    const gpufit__gpu *gpu; /* its catalogue GPU (device_gpus), or NULL: the job's */
    int32_t fits;
    uint32_t extra_comms; /* communicators beyond the plan's (DeepSpeed pipeline send/recv) */
    /* The band (docs/band.md): [0] low, [1] high; fits_b: [0] at the optimistic end (the
     * stack constants low), [1] at the pessimistic end (high). band_lo/band_hi are set for
     * the stack terms only (gpufit__band_varies); every other component is exact: read
     * them through gpufit__comp_band. */
    uint64_t band_lo[GPUFIT__NCOMP], band_hi[GPUFIT__NCOMP];
    uint64_t alloc_b[2], reserved_b[2], used_b[2], kv_cap_b[2];
    int32_t fits_b[2];
    /* Bit c: component c is a modelled approximation with its own band in band_lo/band_hi
     * (set by eval_role: a GGUF recipe's weights, the optimizer step's temporaries in the
     * optimizer states); not used for servers' roles. */
    uint32_t approx;
    /* vLLM's CUDA graphs (in the workspaces; read only when the plan's graph_sizes > 0):
     * bytes at the point, the low and the high end, and the part of each that the KV budget
     * does not pay for (docs/memory/vllm.md "CUDA graphs") */
    uint64_t graph[3], graph_unch[3];
    /* a server's profiled bytes above the point at the pessimistic end (vLLM, release
     * assumed: a sorting sampler's warm-up); read only for servers */
    uint64_t prof_hi;
} gpufit__role;

/* A role's three-way verdict (gpufit_verdict): oom when it does not fit at the optimistic
 * end of its band, marginal when not at the pessimistic end (or the point), else fits. */
static inline int32_t gpufit__role_verdict(const gpufit__role *ro)
{
    return ro->fits < 0 ? GPUFIT_VERDICT_UNKNOWN
           : ro->fits_b[0] == 0                 ? GPUFIT_VERDICT_OOM
           : ro->fits_b[1] == 0 || ro->fits == 0 ? GPUFIT_VERDICT_MARGINAL
                                                 : GPUFIT_VERDICT_FITS;
}

/* Whether component c has a band (the stack terms and a KV budget) in every role; others have
 * one only where the role marks them approximate (gpufit__role.approx). */
static inline int gpufit__band_varies(int c)
{
    return c == GPUFIT_MEM_WORKSPACE || c == GPUFIT_MEM_RUNTIME_CONTEXT ||
           c == GPUFIT_MEM_COMM_BUFFERS || c == GPUFIT_MEM_FRAGMENTATION ||
           c == GPUFIT_MEM_KV_CACHE;
}
/* The band of component c of a role: [lo, hi]. */
static inline void gpufit__comp_band(const gpufit__role *ro, int c, uint64_t *lo, uint64_t *hi)
{
    int v = gpufit__band_varies(c) || (ro->approx >> c & 1u);
    *lo = v ? ro->band_lo[c] : ro->comp[c];
    *hi = v ? ro->band_hi[c] : ro->comp[c];
}

#define GPUFIT__MITIGATIONS_MAX 12
/* One ranked mitigation: its edits (a canonical change set, changes.h) and their spec and
 * JSON, written once when it is ranked. */
typedef struct gpufit__mitigation {
    int32_t kind, fits_after;
    int32_t hardware, reserved; /* 1: it changes the GPU or adds GPUs (listed after) */
    double cost; /* what it costs the user: speed, quality or money (docs/mitigations.md) */
    uint64_t peak_after;
    gpufit__changes cs;
    char text[256];
    char spec[256];
    char json[384];
    char flags[384]; /* the change in the framework's own words (plan/flags.c) */
} gpufit__mitigation;

/* What every auto of the job resolved to (resolved.c): the plan's choices, kept small (the
 * evaluation copies it on every call). */
typedef struct gpufit__resolved {
    int16_t precision, framework, attention, layout; /* layout: GPUFIT__LAYOUT_* */
    int16_t w_dt, c_dt, g_dt, m_dt, o_dt, kv_dt;
    int16_t training, overlap, ds, server;
    int16_t trainer, opt_impl, reserved16[2]; /* opt_impl: -1 = no torch.optim step */
    uint32_t dp, tp, pp, cp;
    uint64_t bucket, prompt, max_num_seqs;
    double util;
    int64_t fw_version;
} gpufit__resolved;
/* The job keys its own flags are written from (job_flags.c); set = 0: none kept. */
typedef struct gpufit__flags_in {
    int64_t context_len, batch, prompt_len, kv_dtype, max_num_seqs, weight_dtype;
    int64_t n_gpu_layers, vpp, ep, sp, micro_batch, global_batch, zero, checkpointing;
    int64_t task, optimizer, offload, seq_len, lora_rank, trainer, optimizer_impl, set;
    double lora_dropout;
} gpufit__flags_in;
/* Keeps them (gpufit_evaluate); writes the flags, snprintf-style (the report, the accessor). */
void gpufit__flags_keep(gpufit__flags_in *in, const struct gpufit_job *j);
size_t gpufit__job_flags_write(const gpufit__flags_in *in, const gpufit__resolved *res,
                               char *buf, size_t cap);
/* Fills out from the job and its plan (evaluate.c calls it on every evaluation). */
void gpufit__resolved_set(gpufit__resolved *out, const struct gpufit_job *j,
                          const gpufit__plan *p);
/* Writes it as spec text (key=value ...) or as a JSON object, snprintf-style. */
size_t gpufit__resolved_write(const gpufit__resolved *res, int json, char *buf, size_t cap);

/* The roles live outside the struct: gpufit__evaluate_into() fills up to GPUFIT__ROLES_MAX
 * of them into caller storage (a gpufit__result_buf on the stack), and gpufit_evaluate()
 * copies the n_roles used behind the header of the one block it allocates, which stays small
 * enough for the allocator's fast per-thread cache in the common cases. */
struct gpufit_result {
    gpufit__role *roles;
    uint32_t n_roles, worst, n_notes;
    int32_t fits;
    uint64_t capacity, peak, host_bytes;
    uint64_t peak_b[2];  /* the worst role's device_used band: [0] low, [1] high */
    int32_t verdict;     /* gpufit_verdict */
    int32_t lean;        /* 1: only the summary is read (gpufit_evaluate_summary): the names,
                            `resolved` and the roles' bands but the used total's (the
                            components', allocated, reserved, KV) are not written */
    uint64_t n_params, n_active;
    uint8_t notes[GPUFIT__NOTES_MAX];
    const gpufit__gpu *gpu; /* catalogue GPU, or NULL (then gpu_name) */
    char model_name[GPUFIT__NAME_MAX];
    char gpu_name[GPUFIT__NAME_MAX];
    /* Ranked by gpufit__mitigate() into a block of their own, so that the result stays small
     * (and cheap to allocate) when there are none: evaluate_into sets 0 and NULL. */
    uint32_t n_mitigations;
    gpufit__mitigation *mitigations; /* n_mitigations of them, freed with the result */
    gpufit__resolved resolved;       /* what every auto resolved to */
    gpufit__flags_in flags_in; /* the job's keys its own flags need; kept by gpufit_evaluate */
};

/* A result with room for every role, for gpufit__evaluate_into(); gpufit__result_init()
 * points the result at its roles and returns it. */
typedef struct gpufit__result_buf {
    struct gpufit_result r;
    gpufit__role roles[GPUFIT__ROLES_MAX];
} gpufit__result_buf;
static inline struct gpufit_result *gpufit__result_init(gpufit__result_buf *b)
{
    b->r.roles = b->roles;
    b->r.lean = 0;
    return &b->r;
}

/* Fills the size-prefixed out with the summary of r (gpufit_result_summary and
 * gpufit_evaluate_summary; result.c). */
int32_t gpufit__summary_out(const struct gpufit_result *r, gpufit_summary *out);

/* Candidate changes that make a job fit, evaluated and ranked; keeps the best
 * j->mitigations in r->mitigations, allocated (mitigate.c). GPUFIT_OK or GPUFIT_E_NOMEM. */
/* What each kind of change costs the user (lib/advise/costs.c, docs/mitigations.md): cost =
 * base + per x, x the row's measure (per_what: log2 of the micro-batch ratio, the ZeRO stage,
 * log2 of the GPU count), 0 when per is 0. */
enum gpufit__cost_id {
    GPUFIT__COST_FLASH,
    GPUFIT__COST_FUSED_STEP,
    GPUFIT__COST_AMP,
    GPUFIT__COST_SELECTIVE,
    GPUFIT__COST_UTIL,
    GPUFIT__COST_ZERO,
    GPUFIT__COST_ADAM8,
    GPUFIT__COST_KV8,
    GPUFIT__COST_MICRO_BATCH,
    GPUFIT__COST_PURE16,
    GPUFIT__COST_SEQS,
    GPUFIT__COST_W8,
    GPUFIT__COST_MORE_TP_PP,
    GPUFIT__COST_FULL_CKPT,
    GPUFIT__COST_W4,
    GPUFIT__COST_QLORA_FROM_LORA,
    GPUFIT__COST_OFFLOAD,
    GPUFIT__COST_CONTEXT,
    GPUFIT__COST_GPU,
    GPUFIT__COST_NGL,
    GPUFIT__COST_FSDP,
    GPUFIT__COST_LORA,
    GPUFIT__COST_TP_GPUS,
    GPUFIT__COST_QLORA,
    GPUFIT__COST_COUNT
};
typedef struct gpufit__cost_row {
    const char *change; /* as docs/mitigations.md names it */
    double base, per;
    const char *cost_text; /* the cost column of the docs table */
    const char *why;
} gpufit__cost_row;
const gpufit__cost_row *gpufit__cost_row_at(int32_t id); /* NULL past the end */
double gpufit__cost(int32_t id, double x);

int32_t gpufit__mitigate(struct gpufit_result *r, const struct gpufit_model *m,
                         const struct gpufit_job *j);
/* Largest value of a monotone parameter that still fits (search.c); 0 if none does. */
int32_t gpufit__max_fitting(const struct gpufit_model *m, const struct gpufit_job *j,
                            int32_t param, int64_t *out, gpufit_error *err);

/* What a role holds of the model. */
typedef struct gpufit__slice {
    uint64_t layers[GPUFIT__W_COUNT];      /* layers of each class on this device */
    uint64_t layer_begin[GPUFIT__W_COUNT]; /* index of its first layer within the class */
    int32_t embedding, output;         /* holds the token embedding / the output head */
    uint64_t inflight;     /* micro-batches in flight (pipeline schedule), times inflight_den */
    uint64_t inflight_den; /* 1, or vpp for interleaved schedules (chunks of L/(p v) layers) */
    int32_t last_layer;    /* holds the model's last layer (llama.cpp: its out_ids input) */
    uint32_t sched_copies; /* llama.cpp: copies ggml's scheduler keeps of each graph input of
                            * the device's split (4 under pipeline parallelism, else 1) */
} gpufit__slice;

/* The linear-layer dtype of a pre-quantised checkpoint (model mlp_dtype, else expert_dtype;
 * docs/memory/quantisation.md), or p->w_dt when the model sets none or a 16-bit one. */
int64_t gpufit__plan_checkpoint(const gpufit__shape *s, const gpufit__plan *p);
/* SGLang's default mem_fraction_static for plan p and model s (NULL: a text model without MLA);
 * *graph_mib: the CUDA graph memory it reserves for, MiB (policy.c; docs/memory/sglang.md). */
double gpufit__sglang_fraction(const gpufit__plan *p, const gpufit__shape *s, uint64_t *graph_mib);
/* Re-resolves an SGLang plan's default fraction and graph workspace for model s, which the
 * plan resolved without (MLA, a vision encoder: policy.c). */
void gpufit__sglang_model(const struct gpufit_job *j, const gpufit__shape *s, gpufit__plan *p);
/* Makes that dtype the plan's weight dtype when the job's weight_dtype is auto (kernels,
 * mitigations and checks then see it); GPUFIT_E_UNSUPPORTED for full training of it. */
int32_t gpufit__plan_apply_checkpoint(const struct gpufit_job *j, const gpufit__shape *s,
                                      gpufit__plan *p, gpufit_error *err);
/* Bytes of the whole checkpoint under the model's per-module dtypes (mem_weights.c). */
int gpufit__checkpoint_bytes(const gpufit__shape *s, const gpufit__tgroup *g, size_t ng,
                             uint64_t *out);
/* The job's dp, tp and pp; with gpus=N alone (dp, tp, pp and cp all 1) the framework's
 * default layout over the N GPUs (docs/scenario.md). Returns a GPUFIT__LAYOUT_*. */
enum {
    GPUFIT__LAYOUT_GIVEN = 0,  /* dp, tp, pp as the job gives them */
    GPUFIT__LAYOUT_DP = 1,     /* training: data parallel */
    GPUFIT__LAYOUT_TP = 2,     /* vLLM, SGLang: tensor parallel */
    GPUFIT__LAYOUT_LAYERS = 3, /* llama.cpp, Transformers inference: a layer split (pp) */
};
int32_t gpufit__job_layout(const struct gpufit_job *j, uint64_t *dp, uint64_t *tp, uint64_t *pp);
int32_t gpufit__plan_resolve(const struct gpufit_job *j, const gpufit__shape *s,
                             gpufit__plan *p, gpufit_error *err);

/* Whether a slice holds the vision encoder (docs/memory/multimodal.md): vLLM builds it on
 * every pipeline stage (the model classes create their vision tower unconditionally, e.g.
 * vllm/model_executor/models/qwen2_vl.py Qwen2VLForConditionalGeneration.__init__) unless
 * every modality's limit_mm_per_prompt is 0 (then self.visual = None); elsewhere it sits with
 * the token embedding (first stage). */
static inline int gpufit__vision_on(const gpufit__plan *p, const gpufit__shape *s,
                                    const gpufit__slice *sl)
{
    if (s->v_layers == 0)
        return 0;
    if (p->framework == GPUFIT_FW_VLLM)
        return p->mm_items != 0;
    return sl->embedding;
}

/* Weight bytes held by a slice (mem_weights.c); *host_out gets bytes kept in host memory. */
int gpufit__weights_bytes(const gpufit__plan *p, const gpufit__shape *s,
                          const gpufit__tgroup *g, size_t ng, const gpufit__slice *sl,
                          uint64_t *dev_out, uint64_t *host_out);
/* Megatron's wgrad dummies (mem_weights.c): one buffer of the parameters' dtype per distinct linear
 * weight shape on a device, bytes, by layer class: the attention's shapes (the same in every
 * class that has them: a device counts the largest once), the class's other linears, and
 * the output head's. */
typedef struct gpufit__dummies {
    uint64_t att[GPUFIT__W_COUNT], rest[GPUFIT__W_COUNT], head;
} gpufit__dummies;
int gpufit__megatron_wgrad_dummies(const gpufit__plan *p, const gpufit__shape *s,
                                   const gpufit__tgroup *g, size_t ng,
                                   const gpufit__aggregates *agg, gpufit__dummies *d);
/* Whether the weights of a GGUF file type named without its file have a band: a recipe's
 * per-tensor bumps vary by quantiser (not f16, not Q8_0, whose tensors are all of one type),
 * and MoE routers are F32 or the file's type by converter (mem_weights.c gguf_type). */
int gpufit__gguf_recipe_band(const gpufit__plan *p, const gpufit__shape *s);
/* The low end of that band: every 2-D tensor at the mix's base type, routers at the old
 * converter's type (mem_weights.c). */
int gpufit__weights_bytes_low(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__tgroup *g, size_t ng, const gpufit__slice *sl,
                              uint64_t *dev_out, uint64_t *host_out);
/* Weight bytes of a slice from a GGUF file's exact per-tensor bytes (m->gguf_layers > 0). */
int gpufit__weights_bytes_gguf(const struct gpufit_model *m, const gpufit__plan *p,
                               const gpufit__shape *s, const gpufit__slice *sl,
                               uint64_t *dev_out, uint64_t *host_out);
/* Trainable parameters of a slice (all for full training, adapters for LoRA) and the
 * optimizer-state bytes for them (mem_weights.c). */
int gpufit__trainable(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                      size_t ng, const gpufit__slice *sl, uint64_t *params_out,
                      uint64_t *opt_bytes_out);

/* Per-layer and global bytes for models whose layers of a class share their types. Only the
 * classes in the shape's [w_first, w_end) are set. */
typedef struct gpufit__ubytes {
    uint64_t w[GPUFIT__W_COUNT], t[GPUFIT__W_COUNT], o[GPUFIT__W_COUNT]; /* one layer */
    uint64_t we[GPUFIT__W_COUNT], te[GPUFIT__W_COUNT], oe[GPUFIT__W_COUNT]; /* its experts */
    uint64_t w_glob[4], t_glob[4], o_glob[4]; /* [0] embedding side, [1] output side,
                                                 [2] tied embedding copy on the last stage,
                                                 [3] vision encoder (gpufit__vision_on) */
} gpufit__ubytes;
/* agg (optional: the model cache's) lets layer classes and the global tensors be summed in
 * closed form when that is exact. */
int gpufit__uniform_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                          size_t ng, const gpufit__aggregates *agg, gpufit__ubytes *u);

/* PyTorch's caching allocator splits a block of its large pool (above kSmallSize, 1 MiB) only
 * when more than 1 MiB would remain, and memory_allocated counts whole blocks
 * (docs/memory/allocator.md, "Blocks above 1 MiB"). Per layer of each class and per global
 * side (as gpufit__ubytes): w, the most the 2-D weights loaded into fresh segments add
 * (bytes); t[e], the trainable tensors (LoRA: its A and B) whose elements at 2^e bytes exceed
 * 1 MiB, each of which may add up to 1 MiB when carved from a cached block. */
typedef struct gpufit__blocks {
    uint64_t w[GPUFIT__W_COUNT], t[3][GPUFIT__W_COUNT];
    uint64_t w_glob[4], t_glob[3][4];
    /* when the model cache's sums apply: read there (agg->layer[c].blk_*[e]) instead */
    const gpufit__aggregates *agg;
    int ew;    /* their index of the weights' bytes per element */
    int bound; /* tensor parallelism: the weights' rests bounded by the tensors' count */
} gpufit__blocks;
/* Fills b once per evaluation (mem_weights.c): from the model cache's sums (agg, optional)
 * when the layout shards nothing and the weights have one plain dtype, else by a walk over
 * the groups; 1 on overflow. */
int gpufit__blocks_build(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                         size_t ng, const gpufit__aggregates *agg, gpufit__blocks *b);

/* What one layer of each class keeps for one micro-batch (after checkpointing) and its
 * backward transient: the same on every pipeline stage, so derived once per evaluation. */
typedef struct gpufit__act_terms {
    uint64_t tok; /* tokens of one micro-batch on one device */
    uint64_t keep[GPUFIT__W_COUNT], transient[GPUFIT__W_COUNT];
    /* one layer without checkpointing: for full checkpointing of only some layers */
    uint64_t keep_none[GPUFIT__W_COUNT], transient_none[GPUFIT__W_COUNT];
} gpufit__act_terms;
/* Fills at for training (mem_activations.c); 1 if a byte count could exceed 64 bits. */
int gpufit__train_layer_terms(const gpufit__plan *p, const gpufit__shape *s,
                              gpufit__act_terms *at);
/* Training activations and logits of a slice, from the layer terms (mem_activations.c). */
int gpufit__train_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__act_terms *at, const gpufit__slice *sl,
                              uint64_t *act_out, uint64_t *logits_out);

/* The temporaries of torch.optim's Adam/AdamW step on a device whose states hold `moment`
 * bytes per moment: [0] point, [1] low, [2] high (mem_optimizer.c); 1 on overflow. */
int gpufit__optimizer_step_bytes(const gpufit__plan *p, const gpufit__shape *s,
                                 const gpufit__counts *c, const gpufit__slice *sl,
                                 uint64_t moment, uint64_t out[3]);

/* The RoPE cos/sin tables vLLM and SGLang build at model init, counted with the weights
 * (mem_inference.c); 0 for other frameworks. 1 on overflow. */
int gpufit__rope_table_bytes(const gpufit__plan *p, const gpufit__shape *s, uint64_t *out);

/* Inference KV bytes per token for the layers of a slice, and the prefill transient and
 * logits (mem_inference.c). */
int gpufit__kv_bytes_per_token(const gpufit__plan *p, const gpufit__shape *s,
                               const gpufit__slice *sl, uint64_t *out);
/* Multimodal items vLLM's profile runs through the vision encoder at once (mem_inference.c). */
uint64_t gpufit__vision_items(const gpufit__plan *p, const gpufit__shape *s);
/* KV bytes of a slice whose full-attention layers hold `tokens` cells (the framework's padded
 * count) and whose sliding-window layers hold what their framework allocates (mem_inference.c;
 * docs/memory/attention.md). per_tok is gpufit__kv_bytes_per_token's. */
int gpufit__kv_cache_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__slice *sl,
                           uint64_t per_tok, uint64_t tokens, uint64_t *out);
/* act_low: the activations' low end where the release decides them (llama.cpp's graph
 * inputs), UINT64_MAX where they have no band; act_high: vLLM's profiled peak under a sorting
 * sampler (<= 0.16) when the release is assumed, else 0. */
int gpufit__infer_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__slice *sl, uint64_t *act_out, uint64_t *act_low,
                              uint64_t *act_high, uint64_t *logits_out);
/* vLLM's CUDA graph memory on a device holding `layers` layers (the pool of the largest
 * capture and the graphs): [0] point, [1] low, [2] high; all 0 without graphs (plan
 * graph_sizes 0). 1 on overflow (mem_inference.c; docs/memory/vllm.md "CUDA graphs"). */
int gpufit__vllm_graph_bytes(const gpufit__plan *p, const gpufit__shape *s, uint64_t layers,
                             uint64_t out[3]);
/* llama.cpp: cells of the unified KV cache (n_ctx of all sequences, padded), also the n_kv
 * of the graph it reserves (mem_inference.c). */
uint64_t gpufit__llamacpp_kv_cells(const gpufit__plan *p);
/* llama.cpp: bytes of one copy of the graph inputs a device's split copies in (the hidden
 * state, KQ mask, positions, KV row indices, out_ids), 0 for a device without a split;
 * *set_rows: the KV row indices' part, absent before the ggml_set_rows KV path; 1 on
 * overflow (mem_inference.c). */
int gpufit__llamacpp_split_inputs(const gpufit__plan *p, const gpufit__shape *s,
                                  const gpufit__slice *sl, uint64_t *out, uint64_t *set_rows);

/* Bytes of the model's tensors that a slice holds, from one layer of each class and the
 * global tensors, so that each role costs a few multiplications instead of a walk over every
 * tensor group (evaluate.c). Valid when every layer of a class stores the same types (not for
 * llama.cpp recipes, whose types vary by layer index). It depends on the model and the
 * layout's dtypes and degrees, not on batch or sequence sizes: a sweep over those reuses it
 * (gpufit__evaluate_reuse). */
typedef struct gpufit__wcache {
    int filled;                      /* set by an evaluation that built it (reuse) */
    int valid;
    const struct gpufit_model *gguf; /* a model read from a GGUF file: its exact bytes */
    gpufit__ubytes u;                /* one layer of each class (and its experts), globals */
    uint64_t w_g[4], t_g[4], o_g[4]; /* globals by slice: index = embedding + 2 * output */
    int blocks;                      /* the allocator's block rests apply (block_slack) */
    gpufit__blocks blk;
    int dummies;                     /* Megatron training: its wgrad dummies (dum) apply */
    gpufit__dummies dum;
} gpufit__wcache;

/* Fills r from a model and job: no allocation, no strings. r->roles must have room for
 * GPUFIT__ROLES_MAX roles (gpufit__result_init). */
int32_t gpufit__evaluate_into(struct gpufit_result *r, const struct gpufit_model *m,
                              const struct gpufit_job *j, gpufit_error *err);
/* The same, with the weights' cache of an earlier evaluation of the same model and layout
 * (reuse->filled), else building it there: for evaluations that differ only in batch and
 * sequence sizes (lib/api/sweep.c). */
int32_t gpufit__evaluate_reuse(struct gpufit_result *r, const struct gpufit_model *m,
                               const struct gpufit_job *j, gpufit__wcache *reuse,
                               gpufit_error *err);

#endif /* GPUFIT_EVAL_H */
