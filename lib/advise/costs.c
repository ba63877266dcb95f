/* SPDX-License-Identifier: MIT */
/* What each kind of change costs the user: the one table the mitigation search ranks by
 * (mitigate.c) and that docs/mitigations.md prints, row for row (tests/unit/test_costs.c
 * compares them). The costs are ordinal judgements, not measurements: a cost is base + per x,
 * where x is the row's own measure of the change (per_what), 0 when per is 0. */
#include "eval.h"

static const gpufit__cost_row rows[GPUFIT__COST_COUNT] = {
    [GPUFIT__COST_FLASH] = {"flash attention instead of eager", 0.1, 0.0, "0.1",
                            "no quality change; usually faster"},
    [GPUFIT__COST_FUSED_STEP] = {"fused AdamW step (`optimizer_impl=fused`)", 0.1, 0.0, "0.1",
                                 "the same update; usually faster"},
    [GPUFIT__COST_AMP] = {"mixed precision (autocast) instead of fp32", 0.3, 0.0, "0.3",
                          "standard practice; faster on tensor cores"},
    [GPUFIT__COST_SELECTIVE] = {"selective checkpointing (eager attention)", 0.5, 0.0, "0.5",
                                "recomputes only the attention scores"},
    [GPUFIT__COST_UTIL] = {"larger `gpu_memory_utilization` (servers)", 0.5, 0.0, "0.5",
                           "less slack for other processes"},
    [GPUFIT__COST_ZERO] = {"ZeRO stage +1 (dp > 1)", 1.0, 0.5, "1.0 + 0.5 x stage",
                           "more communication per step"},
    [GPUFIT__COST_ADAM8] = {"8-bit AdamW", 1.0, 0.0, "1.0",
                            "small quality risk (bitsandbytes block-wise states)"},
    [GPUFIT__COST_KV8] = {"fp8 / q8_0 KV cache", 1.0, 0.0, "1.0", "small quality risk"},
    [GPUFIT__COST_MICRO_BATCH] = {"smaller micro-batch, same global batch", 1.0, 0.5,
                                  "1 + 0.5 log2(ratio)",
                                  "lower GPU utilisation; more accumulation steps"},
    [GPUFIT__COST_PURE16] = {"16-bit weights and states without fp32 master", 1.5, 0.0, "1.5",
                             "quality risk of pure bf16/fp16 training"},
    [GPUFIT__COST_SEQS] = {"fewer concurrent sequences", 2.0, 0.0, "2.0", "throughput"},
    [GPUFIT__COST_W8] = {"8-bit weights (fp8 on Ada/Hopper, else int8)", 2.0, 0.0, "2.0",
                         "small quality loss"},
    [GPUFIT__COST_MORE_TP_PP] = {"more TP or PP on the same GPUs", 2.0, 0.0, "2.0",
                                 "communication, pipeline bubbles"},
    [GPUFIT__COST_FULL_CKPT] = {"full checkpointing", 2.5, 0.0, "2.5", "about 30 % more compute"},
    [GPUFIT__COST_W4] = {"4-bit weights (AWQ, Q4_K_M)", 3.0, 0.0, "3.0", "quality loss"},
    [GPUFIT__COST_QLORA_FROM_LORA] = {"QLoRA instead of LoRA", 3.0, 0.0, "3.0",
                                      "quality of a 4-bit base"},
    [GPUFIT__COST_OFFLOAD] = {"CPU offload of optimizer states", 4.0, 0.0, "4.0",
                              "host-device traffic every step"},
    [GPUFIT__COST_CONTEXT] = {"shorter context", 4.0, 0.0, "4.0", "changes what the job can do"},
    [GPUFIT__COST_GPU] = {"a larger catalogue GPU", 5.0, 0.0, "5.0", "money"},
    [GPUFIT__COST_NGL] = {"fewer layers on the GPU (llama.cpp)", 5.0, 0.0, "5.0",
                          "CPU layers are much slower"},
    [GPUFIT__COST_FSDP] = {"FSDP over n GPUs", 5.0, 1.0, "5 + log2 n",
                           "money and communication"},
    [GPUFIT__COST_LORA] = {"LoRA instead of full fine-tuning", 6.0, 0.0, "6.0",
                           "a different training method"},
    [GPUFIT__COST_TP_GPUS] = {"tensor parallelism over more GPUs (inference)", 6.0, 0.0, "6.0",
                              "money"},
    [GPUFIT__COST_QLORA] = {"QLoRA instead of full fine-tuning", 7.0, 0.0, "7.0",
                            "a different training method, 4-bit base"},
};

const gpufit__cost_row *gpufit__cost_row_at(int32_t id)
{
    return id >= 0 && id < GPUFIT__COST_COUNT ? &rows[id] : NULL;
}

double gpufit__cost(int32_t id, double x)
{
    const gpufit__cost_row *r = gpufit__cost_row_at(id);
    return r != NULL ? r->base + r->per * x : 0.0;
}
