/* SPDX-License-Identifier: MIT */
/* What auto resolves to (issue 15): gpus=N alone takes the framework's default layout, and
 * LoRA with precision auto loads its base in 16 bit; both say so in a note. */
#include "run.h"

#define WEIGHTS(spec) spec_bytes0(spec, GPUFIT_MEM_WEIGHTS)

#include <stdio.h>
#include <string.h>

static uint64_t peak(const char *spec)
{
    run_s s;
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    cr_assert_eq(gpufit_result_summary(s.r, &sum), GPUFIT_OK);
    done(&s);
    return sum.peak_bytes;
}

/* 1 when a note of the result of spec contains text. */
static int has_note(const char *spec, const char *text)
{
    run_s s;
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    int found = 0;
    for (uint32_t i = 0; i < sum.n_notes; i++) {
        const char *t = NULL;
        cr_assert_eq(gpufit_result_note(s.r, i, &t), GPUFIT_OK);
        found |= strstr(t, text) != NULL;
    }
    done(&s);
    return found;
}

static const struct {
    const char *alone, *explicit_, *note;
} layouts[] = {
    {"model=llama-3-8b task=pretrain gpu=h100 zero=3 gpus=8",
     "model=llama-3-8b task=pretrain gpu=h100 zero=3 gpus=8 dp=8", "data parallelism"},
    {"model=llama-3-8b task=lora gpu=rtx-4090 gpus=2", "model=llama-3-8b task=lora gpu=rtx-4090 "
                                                       "gpus=2 dp=2",
     "data parallelism"},
    {"model=llama-3-70b task=inference framework=vllm gpu=h100 gpus=4",
     "model=llama-3-70b task=inference framework=vllm gpu=h100 gpus=4 tp=4",
     "tensor parallelism"},
    {"model=llama-3-70b task=inference framework=sglang gpu=h100 gpus=2",
     "model=llama-3-70b task=inference framework=sglang gpu=h100 gpus=2 tp=2",
     "tensor parallelism"},
    {"model=llama-3-70b task=inference framework=llamacpp weight_dtype=q4_k_m gpu=rtx-3090 "
     "gpus=2",
     "model=llama-3-70b task=inference framework=llamacpp weight_dtype=q4_k_m gpu=rtx-3090 "
     "gpus=2 pp=2",
     "layers split"},
    {"model=llama-3-8b task=inference gpu=rtx-3060 gpus=2",
     "model=llama-3-8b task=inference gpu=rtx-3060 gpus=2 pp=2", "layers split"},
};

Test(auto_defaults, gpus_alone_takes_the_framework_layout)
{
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        cr_assert_eq(peak(layouts[k].alone), peak(layouts[k].explicit_), "%s",
                     layouts[k].alone);
        cr_assert(has_note(layouts[k].alone, layouts[k].note), "%s", layouts[k].alone);
        cr_assert(!has_note(layouts[k].explicit_, "gpus alone"), "%s", layouts[k].explicit_);
    }
    /* a layout given that does not multiply to gpus is still an error naming gpus */
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b tp=2 gpus=3"), GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_GPUS);
    done(&s);
}

/* gpus=N alone with a global batch: the fix's gradient accumulation counts the N ranks */
Test(auto_defaults, gpus_alone_accumulation_counts_the_ranks)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=lora gpu=rtx-4090 gpus=4 seq_len=4096 "
                         "micro_batch=4 global_batch=64"),
                 GPUFIT_OK, "%s", s.err.message);
    /* the fixes with micro-batch 1 that keep dp = 4: 64 samples over 4 ranks at 1 each is
     * 16 accumulation steps */
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < sum.n_mitigations; i++) {
        gpufit_mitigation_info mi = {.struct_size = sizeof mi};
        cr_assert_eq(gpufit_result_mitigation(s.r, i, &mi), GPUFIT_OK);
        if (strstr(mi.changes, "micro_batch=1") == NULL || strstr(mi.changes, "dp=") != NULL)
            continue;
        seen++;
        cr_assert(strstr(mi.flags, "--gradient_accumulation_steps 16") != NULL, "%s", mi.flags);
    }
    cr_assert(seen > 0);
    done(&s);
}

/* LoRA, precision auto: a bf16 base (torchtune dtype: bf16, litgpt bf16-true), the same bytes
 * as a bf16 weight_dtype; amp_bf16 given keeps the fp32 base */
Test(auto_defaults, lora_base_in_16_bit)
{
    const char *job = "model=llama-3-8b task=lora gpu=rtx-4090 seq_len=1024 ";
    char a[160], b[160], c[160];
    snprintf(a, sizeof a, "%s", job);
    snprintf(b, sizeof b, "%sprecision=amp_bf16 weight_dtype=bf16", job);
    snprintf(c, sizeof c, "%sprecision=amp_bf16", job);
    uint64_t w16 = WEIGHTS(a);
    cr_assert_eq(w16, WEIGHTS(b));
    uint64_t w32 = WEIGHTS(c);
    cr_assert(w32 > w16 + w16 / 2, "fp32 base %llu, auto %llu", (unsigned long long)w32,
              (unsigned long long)w16);
    cr_assert(has_note(a, "precision auto for LoRA"));
    cr_assert(!has_note(c, "precision auto for LoRA"));
    /* QLoRA keeps its NF4 base; full fine-tuning keeps amp_bf16's fp32 weights */
    cr_assert(!has_note("model=llama-3-8b task=qlora gpu=rtx-4090", "precision auto for LoRA"));
    cr_assert(!has_note("model=llama-3-8b task=finetune gpu=h100", "precision auto for LoRA"));
}

/* gpufit_result_resolved: what every auto resolved to, as spec text, snprintf-style */
Test(auto_defaults, resolved_text)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=lora gpu=rtx-4090"), GPUFIT_OK);
    char buf[512];
    size_t need = 0;
    cr_assert_eq(gpufit_result_resolved(s.r, buf, sizeof buf, &need), GPUFIT_OK);
    cr_assert_str_eq(buf, "framework=pytorch precision=bf16 weight_dtype=bf16 "
                          "compute_dtype=bf16 grad_dtype=fp32 master_weights=none "
                          "optimizer_dtype=fp32 attention=sdpa trainer=hf optimizer_impl=foreach dp=1 "
                          "tp=1 pp=1 cp=1 "
                          "layout=given");
    cr_assert_eq(need, strlen(buf));
    char small[8];
    size_t need2 = 0;
    cr_assert_eq(gpufit_result_resolved(s.r, small, sizeof small, &need2),
                 GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(need2, need);
    cr_assert_eq(strlen(small), sizeof small - 1); /* truncated, NUL-terminated */
    cr_assert_eq(gpufit_result_resolved(s.r, NULL, 0, &need2), GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert_eq(need2, need);
    cr_assert_eq(gpufit_result_resolved(NULL, buf, sizeof buf, NULL), GPUFIT_E_INVALID_ARG);
    done(&s);
    /* a server with gpus alone: tp from gpus, the engine's defaults */
    cr_assert_eq(run(&s, "model=llama-3-70b task=inference framework=vllm gpu=h100 gpus=4"),
                 GPUFIT_OK);
    cr_assert_eq(gpufit_result_resolved(s.r, buf, sizeof buf, NULL), GPUFIT_OK);
    cr_assert_str_eq(buf, "framework=vllm precision=bf16 weight_dtype=bf16 compute_dtype=bf16 "
                          "kv_dtype=bf16 attention=flash dp=1 tp=4 pp=1 cp=1 layout=gpus_tp "
                          "prompt_len=8192 gpu_memory_utilization=0.920 max_num_seqs=1024 "
                          "framework_version=0.27.0");
    done(&s);
    /* DeepSpeed training: its ZeRO defaults */
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain framework=deepspeed zero=2 gpu=h100 "
                         "gpus=8"),
                 GPUFIT_OK);
    cr_assert_eq(gpufit_result_resolved(s.r, buf, sizeof buf, NULL), GPUFIT_OK);
    cr_assert(strstr(buf, " dp=8 tp=1 pp=1 cp=1 layout=gpus_dp overlap_comm=false "
                          "reduce_bucket_size=500000000") != NULL,
              "%s", buf);
    done(&s);
}

/* The job's own flags, in its framework's words, with the values the estimate used */
Test(auto_defaults, job_flags)
{
    static const struct {
        const char *spec, *flags;
    } cases[] = {
        {"model=llama-3-70b task=inference framework=vllm gpu=h100 gpus=4 context_len=32768",
         "--max-model-len 32768 --gpu-memory-utilization 0.92 --tensor-parallel-size 4"},
        {"model=llama-3-70b task=inference framework=llamacpp gpu=rtx-3090 gpus=2 "
         "weight_dtype=q4_k_m kv_dtype=q8_0 context_len=32768",
         "-c 32768 -ngl 999 -m MODEL-q4_k_m.gguf (a q4_k_m file) -ctk q8_0 -ctv q8_0 -fa on"},
        {"model=llama-3-8b task=lora gpu=rtx-4090 seq_len=4096 micro_batch=4",
         "LoraConfig(r=16) --per_device_train_batch_size 4 max_seq_length=4096 "
         "torch_dtype=torch.bfloat16 --bf16 "
         "attn_implementation=\"sdpa\""},
        {"model=llama-3-8b task=lora lora_dropout=0.05 gpu=rtx-4090 seq_len=4096 micro_batch=4",
         "LoraConfig(r=16, lora_dropout=0.05) --per_device_train_batch_size 4 "
         "max_seq_length=4096 torch_dtype=torch.bfloat16 --bf16 attn_implementation=\"sdpa\""},
        {"model=llama-3-8b task=lora trainer=torchtune lora_dropout=0.1 gpu=rtx-4090 "
         "seq_len=4096 micro_batch=4",
         "lora_finetune_single_device with model._component_=torchtune.models.FAMILY.lora_MODEL "
         "model.lora_rank=16 model.lora_dropout=0.1 batch_size=4 tokenizer.max_seq_len=4096 "
         "dtype=bf16 optimizer._component_=torch.optim.AdamW"},
        {"model=llama-3-70b task=pretrain framework=megatron gpu=h100 tp=8 pp=4 dp=2 gpus=64 "
         "global_batch=512 checkpointing=selective",
         "--micro-batch-size 1 --global-batch-size 512 --recompute-granularity selective "
         "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run_s s;
        cr_assert_eq(run(&s, cases[k].spec), GPUFIT_OK, "%s: %s", cases[k].spec,
                     s.err.message);
        char f[512];
        size_t need = 0;
        cr_assert_eq(gpufit_result_flags(s.r, f, sizeof f, &need), GPUFIT_OK);
        cr_assert_str_eq(f, cases[k].flags, "%s", cases[k].spec);
        cr_assert_eq(need, strlen(f));
        char small[4];
        cr_assert_eq(gpufit_result_flags(s.r, small, sizeof small, &need),
                     GPUFIT_E_BUFFER_TOO_SMALL);
        cr_assert_eq(need, strlen(f));
        done(&s);
    }
    cr_assert_eq(gpufit_result_flags(NULL, NULL, 0, NULL), GPUFIT_E_INVALID_ARG);
}
