/* Internal evaluation types: the resolved job (plan), one device role and the result. */
#ifndef GPUFIT_EVAL_H
#define GPUFIT_EVAL_H

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
};

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
} gpufit__role;

#define GPUFIT__MITIGATIONS_MAX 12
#define GPUFIT__CHANGES_MAX 8

/* One parameter edit of a mitigation. */
typedef struct gpufit__change {
    int32_t param;
    int32_t is_float;
    int64_t i;
    double f;
} gpufit__change;

typedef struct gpufit__mitigation {
    int32_t kind, fits_after;
    uint32_t n_changes;
    double cost; /* what it costs the user: speed, quality or money (docs/mitigations.md) */
    uint64_t peak_after;
    gpufit__change changes[GPUFIT__CHANGES_MAX];
    char text[256];
    char spec[192];
} gpufit__mitigation;

/* The roles live outside the struct: gpufit__evaluate_into() fills up to GPUFIT__ROLES_MAX
 * of them into caller storage (a gpufit__result_buf on the stack), and gpufit_evaluate()
 * copies the n_roles used behind the header of the one block it allocates, which stays small
 * enough for the allocator's fast per-thread cache in the common cases. */
struct gpufit_result {
    gpufit__role *roles;
    uint32_t n_roles, worst, n_notes;
    int32_t fits;
    uint64_t capacity, peak, host_bytes;
    uint64_t n_params, n_active;
    uint8_t notes[GPUFIT__NOTES_MAX];
    const gpufit__gpu *gpu; /* catalogue GPU, or NULL (then gpu_name) */
    char model_name[GPUFIT__NAME_MAX];
    char gpu_name[GPUFIT__NAME_MAX];
    /* Ranked by gpufit__mitigate() into a block of their own, so that the result stays small
     * (and cheap to allocate) when there are none: evaluate_into sets 0 and NULL. */
    uint32_t n_mitigations;
    gpufit__mitigation *mitigations; /* n_mitigations of them, freed with the result */
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
    return &b->r;
}

/* Fills the size-prefixed out with the summary of r (gpufit_result_summary and
 * gpufit_evaluate_summary; result.c). */
int32_t gpufit__summary_out(const struct gpufit_result *r, gpufit_summary *out);

/* Candidate changes that make a job fit, evaluated and ranked; keeps the best
 * j->mitigations in r->mitigations, allocated (mitigate.c). GPUFIT_OK or GPUFIT_E_NOMEM. */
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
} gpufit__slice;

int32_t gpufit__plan_resolve(const struct gpufit_job *j, const gpufit__shape *s,
                             gpufit__plan *p, gpufit_error *err);

/* Weight bytes held by a slice (mem_weights.c); *host_out gets bytes kept in host memory. */
int gpufit__weights_bytes(const gpufit__plan *p, const gpufit__shape *s,
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
    uint64_t w_glob[3], t_glob[3], o_glob[3]; /* [0] embedding side, [1] output side,
                                                 [2] tied embedding copy on the last stage */
} gpufit__ubytes;
/* agg (optional: the model cache's) lets layer classes and the global tensors be summed in
 * closed form when that is exact. */
int gpufit__uniform_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__tgroup *g,
                          size_t ng, const gpufit__aggregates *agg, gpufit__ubytes *u);

/* What one layer of each class keeps for one micro-batch (after checkpointing) and its
 * backward transient: the same on every pipeline stage, so derived once per evaluation. */
typedef struct gpufit__act_terms {
    uint64_t tok; /* tokens of one micro-batch on one device */
    uint64_t keep[GPUFIT__W_COUNT], transient[GPUFIT__W_COUNT];
} gpufit__act_terms;
/* Fills at for training (mem_activations.c); 1 if a byte count could exceed 64 bits. */
int gpufit__train_layer_terms(const gpufit__plan *p, const gpufit__shape *s,
                              gpufit__act_terms *at);
/* Training activations and logits of a slice, from the layer terms (mem_activations.c). */
int gpufit__train_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__act_terms *at, const gpufit__slice *sl,
                              uint64_t *act_out, uint64_t *logits_out);

/* Inference KV bytes per token for the layers of a slice, and the prefill transient and
 * logits (mem_inference.c). */
int gpufit__kv_bytes_per_token(const gpufit__plan *p, const gpufit__shape *s,
                               const gpufit__slice *sl, uint64_t *out);
/* KV bytes of a slice whose full-attention layers hold `tokens` cells (the framework's padded
 * count) and whose sliding-window layers hold what their framework allocates (mem_inference.c;
 * docs/memory/attention.md). per_tok is gpufit__kv_bytes_per_token's. */
int gpufit__kv_cache_bytes(const gpufit__plan *p, const gpufit__shape *s, const gpufit__slice *sl,
                           uint64_t per_tok, uint64_t tokens, uint64_t *out);
int gpufit__infer_activations(const gpufit__plan *p, const gpufit__shape *s,
                              const gpufit__slice *sl, uint64_t *act_out, uint64_t *logits_out);

/* Fills r from a model and job: no allocation, no strings. r->roles must have room for
 * GPUFIT__ROLES_MAX roles (gpufit__result_init). */
int32_t gpufit__evaluate_into(struct gpufit_result *r, const struct gpufit_model *m,
                              const struct gpufit_job *j, gpufit_error *err);

#endif /* GPUFIT_EVAL_H */
