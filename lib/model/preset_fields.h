/* SPDX-License-Identifier: MIT */
/* The architecture fields a preset sets (model_presets.c); every other field keeps its default.
 * Shared with tools/gen_index.c, which writes each preset's derived record from them
 * (preset_record.inc). */
#ifndef GPUFIT_PRESET_FIELDS_H
#define GPUFIT_PRESET_FIELDS_H

/* clang-format off */
#define PRESET_FIELDS(X)                                                                           \
    X(arch) X(n_layers) X(hidden_size) X(n_heads) X(n_kv_heads) X(head_dim) X(ffn_hidden_size)    \
    X(mlp) X(vocab_size) X(tied_embeddings) X(norm) X(qkv_bias) X(mlp_bias) X(max_position)       \
    X(o_bias) X(emb_norm) X(qk_norm) X(type_vocab_size) X(pooler) X(n_experts) X(rope_positions)  \
    X(rotary_dim)                                                                                  \
    X(n_shared_experts) X(experts_per_token) X(moe_ffn_hidden_size) X(n_dense_layers)             \
    X(shared_ffn_hidden_size) X(router_bias) X(shared_expert_gate) X(q_lora_rank)                 \
    X(kv_lora_rank) X(qk_nope_head_dim) X(qk_rope_head_dim) X(v_head_dim) X(n_encoder_layers)     \
    X(n_decoder_layers) X(rel_pos_buckets) X(sliding_window) X(sliding_window_pattern)          \
    X(vision_layers) X(vision_hidden_size) X(vision_heads) X(vision_ffn_hidden_size)              \
    X(vision_patch_size) X(vision_image_size) X(vision_merge) X(vision_style) X(vision_projector) \
    X(vision_tiles)
/* clang-format on */

/* Fields left out of an initialiser are 0, which for a preset means "absent" (o_bias and
 * emb_norm included: presets never use their -1 "auto" value). */
typedef struct gpufit__arch_values {
#define X(f) int32_t f;
    PRESET_FIELDS(X)
#undef X
} gpufit__arch_values;

/* The architecture preset row sets, as written in the table (NULL past the end). */
const gpufit__arch_values *gpufit__preset_arch(size_t row);

#endif /* GPUFIT_PRESET_FIELDS_H */
