/* SPDX-License-Identifier: MIT */
/* The four jobs every bench program evaluates in turn: inference on one consumer GPU, Megatron
 * pre-training over 128 H100s, QLoRA on a T4, vLLM serving on an H100. */
#ifndef GPUFIT_BENCH_SCENARIOS_H
#define GPUFIT_BENCH_SCENARIOS_H

static const char *const scenarios[] = {
    "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192",
    ("model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=4 zero=1 precision=bf16 "
     "framework=megatron seq_len=8192 global_batch=256 sp=1 checkpointing=selective"),
    "model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024 checkpointing=full",
    ("model=mixtral-8x7b task=inference gpu=h100 weight_dtype=fp8 framework=vllm "
     "context_len=32768"),
};
#define N_SCEN (sizeof scenarios / sizeof scenarios[0])

#endif
