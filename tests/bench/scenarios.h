/* SPDX-License-Identifier: MIT */
/* The four jobs every bench program evaluates in turn: inference on one consumer GPU, Megatron
 * pre-training over 128 H100s, QLoRA on a T4, vLLM serving on an H100. */
#ifndef GPUFIT_BENCH_SCENARIOS_H
#define GPUFIT_BENCH_SCENARIOS_H

#include "gpufit.h"

#include <stdio.h>

static const char *const scenarios[] = {
    "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192",
    ("model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=4 zero=1 precision=bf16 "
     "framework=megatron seq_len=8192 global_batch=256 sp=1 checkpointing=selective"),
    "model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024 checkpointing=full",
    ("model=mixtral-8x7b task=inference gpu=h100 weight_dtype=fp8 framework=vllm "
     "context_len=32768"),
};
#define N_SCEN (sizeof scenarios / sizeof scenarios[0])

/* The cold path's job (issue 16): what a scheduler gets per submitted job, as JSON (the second
 * job above, with its preset and 11 more keys). */
static const char cold_json[] =
    "{\"model\": \"llama-3-70b\", \"task\": \"pretrain\", \"gpu\": \"h100\", \"tp\": 8, "
    "\"pp\": 4, \"dp\": 4, \"zero\": 1, \"precision\": \"bf16\", \"framework\": \"megatron\", "
    "\"seq_len\": 8192, \"global_batch\": 256, \"sp\": true, \"checkpointing\": \"selective\"}";

/* New handles for every job in m and j; 0, or 1 with the parser's message on stderr. */
static int bench_setup(const char *who, gpufit_model **m, gpufit_job **j)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    for (size_t i = 0; i < N_SCEN; i++) {
        if (gpufit_model_new(&m[i], &err) || gpufit_job_new(&j[i], &err) ||
            gpufit_apply_spec(m[i], j[i], scenarios[i], &err)) {
            fprintf(stderr, "%s: %s: %s\n", who, scenarios[i], err.message);
            return 1;
        }
    }
    return 0;
}

#endif
