/* SPDX-License-Identifier: MIT */
/* Ready-to-paste flags: a change set written in the words of the job's framework
 * (docs/flags.md): vLLM and SGLang server arguments, llama.cpp options, Hugging Face Trainer /
 * PEFT / accelerate arguments or torchtune config keys (job key trainer), DeepSpeed config
 * keys, Megatron-LM arguments. A change with no
 * flag of its own in that framework is written as its scenario key (key=value). The names are
 * the frameworks' own: vLLM vllm/engine/arg_utils.py EngineArgs.add_cli_args; SGLang
 * python/sglang/srt/server_args.py ServerArgs.add_cli_args; llama.cpp common/arg.cpp
 * common_params_parser_init; transformers TrainingArguments (training_args.py) and PEFT
 * LoraConfig / transformers BitsAndBytesConfig; DeepSpeed's config keys
 * (deepspeed/runtime/config.py, zero/config.py); Megatron-LM megatron/training/arguments.py. */
#include "changes.h"
#include "eval.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef gpufit__text fbuf; /* bounded output (util.c) */

/* The value name of an enum change ("fp8", "full"), or NULL. */
static const char *vname(const gpufit__change *c)
{
    return c->e != NULL ? gpufit_param_value_name(c->param, c->i) : NULL;
}

/* The change of param in cs, or NULL. */
static const gpufit__change *find(const gpufit__changes *cs, int32_t param)
{
    for (uint32_t k = 0; k < cs->n; k++)
        if (cs->ch[k].param == param)
            return &cs->ch[k];
    return NULL;
}

/* One change as its scenario key (the fallback). */
static void as_key(fbuf *b, const gpufit__change *c)
{
    const char *v = vname(c);
    const char *name = c->e != NULL ? c->e->name : "?";
    if (c->type == GPUFIT__CH_CLEAR)
        gpufit__text_put(b, "%s=none", name);
    else if (c->type == GPUFIT__CH_FLOAT)
        gpufit__text_put(b, "%s=%g", name, c->f);
    else if (v != NULL)
        gpufit__text_put(b, "%s=%s", name, v);
    else
        gpufit__text_put(b, "%s=%lld", name, (long long)c->i);
}

/* Servers: vllm serve / python -m sglang.launch_server arguments. */
static int server_flag(fbuf *b, const gpufit__change *c, int sglang)
{
    const char *v = vname(c);
    switch (c->param) {
    case GPUFIT_JOB_CONTEXT_LEN:
        gpufit__text_put(b, sglang ? "--context-length %lld" : "--max-model-len %lld",
                         (long long)c->i);
        return 1;
    case GPUFIT_JOB_GPU_MEMORY_UTILIZATION:
        gpufit__text_put(b, sglang ? "--mem-fraction-static %g" : "--gpu-memory-utilization %g",
                         c->f);
        return 1;
    case GPUFIT_JOB_KV_DTYPE:
        gpufit__text_put(b, "--kv-cache-dtype %s",
                         v != NULL && strncmp(v, "fp8", 3) == 0 ? "fp8" : "auto");
        return 1;
    case GPUFIT_JOB_TP:
        gpufit__text_put(b, sglang ? "--tp %lld" : "--tensor-parallel-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_PP:
        gpufit__text_put(b, sglang ? "--pp %lld" : "--pipeline-parallel-size %lld",
                         (long long)c->i);
        return 1;
    case GPUFIT_JOB_BATCH:
    case GPUFIT_JOB_MAX_NUM_SEQS:
        gpufit__text_put(b, sglang ? "--max-running-requests %lld" : "--max-num-seqs %lld",
                         (long long)c->i);
        return 1;
    case GPUFIT_JOB_PROMPT_LEN:
        gpufit__text_put(b,
                         sglang ? "--chunked-prefill-size %lld" : "--max-num-batched-tokens %lld",
                         (long long)c->i);
        return 1;
    case GPUFIT_JOB_WEIGHT_DTYPE:
        if (v != NULL && strcmp(v, "fp8") == 0)
            gpufit__text_put(b, "--quantization fp8");
        else if (v != NULL && (strcmp(v, "awq4") == 0 || strcmp(v, "gptq4") == 0))
            gpufit__text_put(b, "--quantization %s (an %s checkpoint)",
                             v[0] == 'a' ? "awq" : "gptq", v[0] == 'a' ? "AWQ" : "GPTQ");
        else
            return 0;
        return 1;
    default:
        return 0;
    }
}

/* llama.cpp: llama-server / llama-cli options. */
static int llamacpp_flag(fbuf *b, const gpufit__change *c, const struct gpufit_job *j)
{
    const char *v = vname(c);
    switch (c->param) {
    case GPUFIT_JOB_N_GPU_LAYERS:
        gpufit__text_put(b, "-ngl %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_CONTEXT_LEN: /* -c is the whole cache: every parallel sequence's context */
        gpufit__text_put(b, "-c %lld", (long long)(c->i * (j->batch > 0 ? j->batch : 1)));
        return 1;
    case GPUFIT_JOB_BATCH:
        gpufit__text_put(b, "-np %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_PROMPT_LEN:
        gpufit__text_put(b, "-ub %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_KV_DTYPE:
        gpufit__text_put(b, "-ctk %s -ctv %s", v ? v : "f16", v ? v : "f16");
        return 1;
    case GPUFIT_JOB_ATTENTION:
        gpufit__text_put(b, "-fa %s", v != NULL && strcmp(v, "flash") == 0 ? "on" : "off");
        return 1;
    case GPUFIT_JOB_WEIGHT_DTYPE:
        if (v == NULL)
            return 0;
        gpufit__text_put(b, "-m MODEL-%s.gguf (a %s file)", v, v);
        return 1;
    default:
        return 0;
    }
}

/* Megatron-LM (pretrain_gpt.py) arguments. */
static int megatron_flag(fbuf *b, const gpufit__change *c)
{
    const char *v = vname(c);
    switch (c->param) {
    case GPUFIT_JOB_TP:
        gpufit__text_put(b, "--tensor-model-parallel-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_PP:
        gpufit__text_put(b, "--pipeline-model-parallel-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_VPP:
        gpufit__text_put(b, "--virtual-pipeline-model-parallel-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_CP:
        gpufit__text_put(b, "--context-parallel-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_EP:
        gpufit__text_put(b, "--expert-model-parallel-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_SP:
        gpufit__text_put(b, "%s", c->i ? "--sequence-parallel" : "(no --sequence-parallel)");
        return 1;
    case GPUFIT_JOB_MICRO_BATCH:
        gpufit__text_put(b, "--micro-batch-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_GLOBAL_BATCH:
        gpufit__text_put(b, "--global-batch-size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_ZERO:
        gpufit__text_put(b, "%s",
                         c->i >= 1 ? "--use-distributed-optimizer"
                                   : "(no --use-distributed-optimizer)");
        return 1;
    case GPUFIT_JOB_CHECKPOINTING:
        if (v != NULL && strcmp(v, "full") == 0)
            gpufit__text_put(b, "--recompute-granularity full --recompute-method uniform");
        else if (v != NULL && strcmp(v, "selective") == 0)
            gpufit__text_put(b, "--recompute-granularity selective");
        else
            return 0;
        return 1;
    default:
        return 0;
    }
}

/* DeepSpeed config (ds_config.json) fragments. */
static int deepspeed_flag(fbuf *b, const gpufit__change *c)
{
    const char *v = vname(c);
    switch (c->param) {
    case GPUFIT_JOB_ZERO:
        gpufit__text_put(b, "\"zero_optimization\": {\"stage\": %lld}", (long long)c->i);
        return 1;
    case GPUFIT_JOB_OFFLOAD:
        gpufit__text_put(b, "\"zero_optimization\": {\"offload_optimizer\": {\"device\": \"%s\"}}",
                         v != NULL && strcmp(v, "none") == 0 ? "none" : "cpu");
        return 1;
    case GPUFIT_JOB_MICRO_BATCH:
        gpufit__text_put(b, "\"train_micro_batch_size_per_gpu\": %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_GLOBAL_BATCH:
        gpufit__text_put(b, "\"train_batch_size\": %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_PRECISION:
        if (v != NULL && strstr(v, "bf16") != NULL)
            gpufit__text_put(b, "\"bf16\": {\"enabled\": true}");
        else if (v != NULL && strstr(v, "fp16") != NULL)
            gpufit__text_put(b, "\"fp16\": {\"enabled\": true}");
        else
            return 0;
        return 1;
    default:
        return 0;
    }
}

/* A global-batch change as gradient accumulation steps = global / (micro x dp): a Trainer
 * argument, or a torchtune config key (tune); 0 when the micro-batch is unknown. */
static int accumulation(fbuf *b, int tune, const gpufit__change *c, const gpufit__changes *cs,
                        const struct gpufit_job *j)
{
    const gpufit__change *mb = find(cs, GPUFIT_JOB_MICRO_BATCH);
    const gpufit__change *dc = find(cs, GPUFIT_JOB_DP);
    uint64_t ldp, ltp, lpp; /* gpus=N alone: the default layout's dp (policy.c) */
    gpufit__job_layout(j, &ldp, &ltp, &lpp);
    int64_t micro = mb != NULL ? mb->i : j->micro_batch;
    int64_t dp = dc != NULL && dc->i > 0 ? dc->i : (int64_t)ldp;
    if (micro <= 0)
        return 0;
    long long steps = (long long)(c->i / (micro * dp));
    if (tune)
        gpufit__text_put(b, "gradient_accumulation_steps=%lld", steps);
    else
        gpufit__text_put(b, "--gradient_accumulation_steps %lld", steps);
    return 1;
}

/* Hugging Face Trainer / PEFT / accelerate. */
static int trainer_flag(fbuf *b,
                        const gpufit__change *c,
                        const gpufit__changes *cs,
                        const struct gpufit_job *j)
{
    const char *v = vname(c);
    switch (c->param) {
    case GPUFIT_JOB_MICRO_BATCH:
        gpufit__text_put(b, "--per_device_train_batch_size %lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_GLOBAL_BATCH:
        return accumulation(b, 0, c, cs, j);
    case GPUFIT_JOB_CHECKPOINTING:
        if (v != NULL && strcmp(v, "none") != 0)
            gpufit__text_put(b, "--gradient_checkpointing");
        else
            gpufit__text_put(b, "(no --gradient_checkpointing)");
        return 1;
    case GPUFIT_JOB_PRECISION: /* pure 16-bit weights load so (from_pretrained torch_dtype);
                                * --bf16 / --fp16 is the Trainer's autocast */
        if (v != NULL && strcmp(v, "bf16") == 0)
            gpufit__text_put(b, "torch_dtype=torch.bfloat16 --bf16");
        else if (v != NULL && strcmp(v, "fp16") == 0)
            gpufit__text_put(b, "torch_dtype=torch.float16 --fp16");
        else if (v != NULL && strstr(v, "bf16") != NULL)
            gpufit__text_put(b, "--bf16");
        else if (v != NULL && strstr(v, "fp16") != NULL)
            gpufit__text_put(b, "--fp16");
        else
            return 0;
        return 1;
    case GPUFIT_JOB_OPTIMIZER:
        if (v != NULL && strcmp(v, "adamw_8bit") == 0)
            gpufit__text_put(b, "--optim adamw_bnb_8bit");
        else if (v != NULL && strcmp(v, "adafactor") == 0)
            gpufit__text_put(b, "--optim adafactor");
        else
            return 0;
        return 1;
    case GPUFIT_JOB_OPTIMIZER_IMPL: /* transformers OptimizerNames: adamw_torch(_fused) */
        if (v != NULL && strcmp(v, "fused") == 0)
            gpufit__text_put(b, "--optim adamw_torch_fused");
        else if (v != NULL && strcmp(v, "foreach") == 0)
            gpufit__text_put(b, "--optim adamw_torch");
        else
            return 0;
        return 1;
    case GPUFIT_JOB_ATTENTION:
        if (v == NULL)
            return 0;
        gpufit__text_put(b, "attn_implementation=\"%s\"",
                         strcmp(v, "flash") == 0  ? "flash_attention_2"
                         : strcmp(v, "sdpa") == 0 ? "sdpa"
                                                  : "eager");
        return 1;
    case GPUFIT_JOB_TASK:
        if (v != NULL && strcmp(v, "qlora") == 0)
            gpufit__text_put(b,
                             "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\") + "
                             "LoraConfig(r=%lld",
                             (long long)(j->lora_rank > 0 ? j->lora_rank : 16));
        else if (v != NULL && strcmp(v, "lora") == 0)
            gpufit__text_put(b, "LoraConfig(r=%lld",
                             (long long)(j->lora_rank > 0 ? j->lora_rank : 16));
        else
            return 0;
        if (j->lora_dropout > 0.0) /* peft LoraConfig.lora_dropout (default 0.0) */
            gpufit__text_put(b, ", lora_dropout=%g", j->lora_dropout);
        gpufit__text_put(b, ")");
        return 1;
    case GPUFIT_JOB_LORA_RANK:
        gpufit__text_put(b, "LoraConfig(r=%lld)", (long long)c->i);
        return 1;
    case GPUFIT_JOB_ZERO:
        if (c->i == 3)
            gpufit__text_put(b, "--fsdp \"full_shard auto_wrap\"");
        else if (c->i == 2)
            gpufit__text_put(b, "--fsdp \"shard_grad_op auto_wrap\"");
        else
            return 0;
        return 1;
    case GPUFIT_JOB_OFFLOAD:
        gpufit__text_put(b, "--fsdp \"full_shard offload auto_wrap\"");
        return 1;
    case GPUFIT_JOB_SEQ_LEN:
        gpufit__text_put(b, "max_seq_length=%lld", (long long)c->i);
        return 1;
    default:
        return 0;
    }
}

/* torchtune: config overrides of `tune run RECIPE --config CONFIG key=value ...`, named as the
 * recipes' configs name them (recipes/configs/llama3/8B_lora_single_device.yaml: batch_size,
 * gradient_accumulation_steps, enable_activation_checkpointing, dtype, optimizer, model.*,
 * tokenizer.max_seq_len; the distributed recipes' fsdp_reshard_after_forward and
 * fsdp_cpu_offload). */
static int torchtune_flag(fbuf *b,
                          const gpufit__change *c,
                          const gpufit__changes *cs,
                          const struct gpufit_job *j)
{
    const char *v = vname(c);
    switch (c->param) {
    case GPUFIT_JOB_MICRO_BATCH:
        gpufit__text_put(b, "batch_size=%lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_GLOBAL_BATCH:
        return accumulation(b, 1, c, cs, j);
    case GPUFIT_JOB_CHECKPOINTING: /* whole-layer checkpointing; selective is not a config key */
        if (v == NULL || (strcmp(v, "full") != 0 && strcmp(v, "none") != 0))
            return 0;
        gpufit__text_put(b, "enable_activation_checkpointing=%s",
                         strcmp(v, "full") == 0 ? "True" : "False");
        return 1;
    case GPUFIT_JOB_PRECISION: /* one dtype, no autocast; the recipes refuse fp16 */
        if (v == NULL || (strcmp(v, "bf16") != 0 && strcmp(v, "fp32") != 0))
            return 0;
        gpufit__text_put(b, "dtype=%s", v);
        return 1;
    case GPUFIT_JOB_OPTIMIZER:
        if (v != NULL && strcmp(v, "adamw_8bit") == 0)
            gpufit__text_put(b, "optimizer._component_=bitsandbytes.optim.PagedAdamW8bit");
        else if (v != NULL && (strcmp(v, "adamw") == 0 || strcmp(v, "adam") == 0))
            gpufit__text_put(b, "optimizer._component_=torch.optim.%s",
                             strcmp(v, "adamw") == 0 ? "AdamW" : "Adam");
        else
            return 0;
        return 1;
    case GPUFIT_JOB_OPTIMIZER_IMPL: /* torch.optim.AdamW(fused=..., foreach=...) */
        if (v != NULL && (strcmp(v, "fused") == 0 || strcmp(v, "foreach") == 0))
            gpufit__text_put(b, "optimizer.%s=True", v);
        else
            return 0;
        return 1;
    case GPUFIT_JOB_TASK: /* the recipe and the model builder's family (lora_* / qlora_*) */
        if (v == NULL || (strcmp(v, "lora") != 0 && strcmp(v, "qlora") != 0))
            return 0;
        gpufit__text_put(b,
                         "lora_finetune_single_device with model._component_=torchtune.models."
                         "FAMILY.%s_MODEL model.lora_rank=%lld",
                         v, (long long)(j->lora_rank > 0 ? j->lora_rank : 16));
        if (j->lora_dropout > 0.0) /* the lora_* model builders' lora_dropout argument */
            gpufit__text_put(b, " model.lora_dropout=%g", j->lora_dropout);
        return 1;
    case GPUFIT_JOB_LORA_RANK:
        gpufit__text_put(b, "model.lora_rank=%lld", (long long)c->i);
        return 1;
    case GPUFIT_JOB_ZERO: /* FSDP2 in the distributed recipes: full shard, or keep the
                           * parameters gathered between forward and backward */
        if (c->i != 2 && c->i != 3)
            return 0;
        gpufit__text_put(b, "fsdp_reshard_after_forward=%s", c->i == 3 ? "True" : "False");
        return 1;
    case GPUFIT_JOB_OFFLOAD:
        if (v != NULL && strcmp(v, "optimizer") == 0)
            gpufit__text_put(b,
                             "optimizer._component_=torchao.prototype.low_bit_optim."
                             "CPUOffloadOptimizer");
        else if (v != NULL && strcmp(v, "optimizer_params") == 0)
            gpufit__text_put(b, "fsdp_cpu_offload=True");
        else
            return 0;
        return 1;
    case GPUFIT_JOB_SEQ_LEN:
        gpufit__text_put(b, "tokenizer.max_seq_len=%lld", (long long)c->i);
        return 1;
    default:
        return 0;
    }
}

/* keys: 1 writes a change with no flag of its own as key=value, 0 leaves it out */
static size_t write_flags(const gpufit__changes *cs,
                          const struct gpufit_job *j,
                          int32_t framework,
                          char *buf,
                          size_t cap,
                          int keys)
{
    fbuf b = {buf, cap, 0};
    if (cap > 0)
        buf[0] = '\0';
    for (uint32_t k = 0; k < cs->n; k++) {
        const gpufit__change *c = &cs->ch[k];
        size_t before = b.len;
        if (b.len > 0)
            gpufit__text_put(&b, " ");
        size_t at = b.len;
        int done;
        switch (framework) {
        case GPUFIT_FW_VLLM:
            done = server_flag(&b, c, 0);
            break;
        case GPUFIT_FW_SGLANG:
            done = server_flag(&b, c, 1);
            break;
        case GPUFIT_FW_LLAMACPP:
            done = llamacpp_flag(&b, c, j);
            break;
        case GPUFIT_FW_MEGATRON:
            done = megatron_flag(&b, c);
            break;
        case GPUFIT_FW_DEEPSPEED:
            done = deepspeed_flag(&b, c) || trainer_flag(&b, c, cs, j);
            break;
        default:
            done = j->trainer == GPUFIT_TRAINER_TORCHTUNE ? torchtune_flag(&b, c, cs, j)
                                                          : trainer_flag(&b, c, cs, j);
            break;
        }
        if (!done) {
            b.len = keys ? at : before;
            if (keys)
                as_key(&b, c);
            else if (b.len < b.cap)
                b.buf[b.len] = '\0';
        }
    }
    if (cap > 0 && b.len >= cap)
        buf[cap - 1] = '\0';
    return b.len;
}

size_t gpufit__cs_flags(
    const gpufit__changes *cs, const struct gpufit_job *j, int32_t framework, char *buf, size_t cap)
{
    return write_flags(cs, j, framework, buf, cap, 1);
}

size_t gpufit__cs_flags_only(
    const gpufit__changes *cs, const struct gpufit_job *j, int32_t framework, char *buf, size_t cap)
{
    return write_flags(cs, j, framework, buf, cap, 0);
}
