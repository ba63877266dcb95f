/* SPDX-License-Identifier: MIT */
/* The jobs fuzz_evaluate starts from (input byte 1), one of each framework and task; also the
 * first jobs of tools/snapshot.c's scenarios. */
#ifndef GPUFIT_FUZZ_JOB_TEMPLATES_H
#define GPUFIT_FUZZ_JOB_TEMPLATES_H

static const char *const job_templates[] = {
    "task=inference",
    "task=pretrain",
    "task=finetune precision=bf16 framework=megatron tp=2 pp=2 dp=2",
    "task=lora gpu=a100-80gb",
    "task=qlora gpu=t4 precision=fp16",
    "task=inference framework=vllm gpu=h100",
    "task=inference framework=llamacpp weight_dtype=q4_k_m",
    "task=pretrain framework=deepspeed zero=3 dp=8 gpu=h100",
    "task=pretrain pp=4 vpp=2 framework=megatron checkpointing=selective",
    "task=pretrain pp=2 pp_schedule=gpipe global_batch=16",
    "task=inference framework=sglang gpu=h200 batch=64",
    "task=pretrain zero=2 dp=4 offload=optimizer host_memory_bytes=64GiB",
};
#define N_TEMPLATES (sizeof job_templates / sizeof job_templates[0])

#endif
