/* SPDX-License-Identifier: MIT */
/* LoRA module sets (lora_modules) and the adapters' dtype (adapter_dtype): adapter parameters
 * by hand (memory-model.md §9: a pair A r x in + B out x r per adapted matrix) and the dtype
 * PEFT gives them (docs/memory/lora.md). */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdio.h>
#include <string.h>

typedef struct run {
    gpufit_model *m;
    gpufit_job *j;
    gpufit_result *r;
    gpufit_error err;
} run;

static void start(run *x, const char *spec)
{
    x->err = (gpufit_error)GPUFIT_ERROR_INIT;
    x->r = NULL;
    cr_assert_eq(gpufit_model_new(&x->m, &x->err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&x->j, &x->err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(x->m, x->j, spec, &x->err), GPUFIT_OK, "%s: %s", spec,
                 x->err.message);
    cr_assert_eq(gpufit_evaluate(&x->r, x->m, x->j, &x->err), GPUFIT_OK, "%s: %s", spec,
                 x->err.message);
}

static uint64_t comp(run *x, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(x->r, 0, c, &b), GPUFIT_OK);
    return b;
}

static void stop(run *x)
{
    gpufit_result_free(x->r);
    gpufit_job_free(x->j);
    gpufit_model_free(x->m);
}

static uint64_t grads_of(const char *spec)
{
    run x;
    start(&x, spec);
    uint64_t g = comp(&x, GPUFIT_MEM_GRADIENTS);
    stop(&x);
    return g;
}

/* Llama-3-8B: h 4096, q 4096, k/v 1024 (8 x 128), f 14336, 32 layers. Per layer, rows + cols:
 * q 8192, k 5120, v 5120, o 8192, gate 18432, up 18432, down 18432. */
#define BASE "model=llama-3-8b task=lora lora_rank=16 micro_batch=1 seq_len=2048 "
static const uint64_t QKVGUD = 8192 + 5120 + 5120 + 3 * 18432; /* 73728: no o_proj */
static const uint64_t ALL = 8192 + 5120 + 5120 + 8192 + 3 * 18432; /* 81920 */

Test(lora_modules, adapter_parameters_by_hand)
{
    /* q,k,v,gate,up,down at r = 16: 32 x 16 x 73728 = 37748736 parameters; PEFT upcasts the
     * adapters of a bf16 model to fp32, so their gradients are 4 bytes each */
    uint64_t n = 32ull * 16 * QKVGUD;
    cr_assert_eq(n, 37748736ull);
    cr_assert_eq(grads_of(BASE "precision=bf16 lora_modules=q,k,v,gate,up,down"), 4 * n);
    /* PEFT's names and a mixed, spaced list: the same set */
    cr_assert_eq(grads_of(BASE "precision=bf16 "
                               "lora_modules=q_proj,k_proj,v_proj,gate_proj,up_proj,down_proj"),
                 4 * n);
    /* the bit mask itself: 1 + 2 + 4 + 16 + 32 + 64 = 119 */
    cr_assert_eq(grads_of(BASE "precision=bf16 lora_modules=119"), 4 * n);
    /* all-linear = every module = lora_targets=all_linear */
    cr_assert_eq(grads_of(BASE "precision=bf16 lora_modules=all-linear"), 4 * 32ull * 16 * ALL);
    cr_assert_eq(grads_of(BASE "precision=bf16 lora_targets=all_linear"), 4 * 32ull * 16 * ALL);
    /* lora_modules overrides lora_targets */
    cr_assert_eq(grads_of(BASE "precision=bf16 lora_targets=all_linear lora_modules=q,v"),
                 4 * 32ull * 16 * (8192 + 5120));
}

Test(lora_modules, the_three_target_sets_are_masks)
{
    static const char *const pairs[][2] = {
        {"lora_targets=qv", "lora_modules=q,v"},
        {"lora_targets=attention", "lora_modules=q,k,v,o"},
        {"lora_targets=all_linear", "lora_modules=q,k,v,o,gate,up,down"},
    };
    static const char *const models[] = {"model=llama-3-8b", "model=mixtral-8x7b",
                                         "model=deepseek-v2-lite", "model=gpt2"};
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++)
        for (size_t i = 0; i < 3; i++) {
            char a[256], b[256];
            snprintf(a, sizeof a, "%s task=lora attention=eager %s", models[mi], pairs[i][0]);
            snprintf(b, sizeof b, "%s task=lora attention=eager %s", models[mi], pairs[i][1]);
            run x, y;
            start(&x, a);
            start(&y, b);
            for (int32_t c = 1; c <= GPUFIT_MEM_FRAGMENTATION; c++)
                cr_assert_eq(comp(&x, c), comp(&y, c), "%s vs %s: component %d", a, b, (int)c);
            stop(&x);
            stop(&y);
        }
}

Test(lora_modules, frozen_o_proj_saves_its_input)
{
    /* eager attention, o_proj without an adapter: its input (the attention output, b x s x q
     * in bf16) is not saved for a weight gradient: 32 x 2 x 2048 x 4096 bytes less */
    run x, y;
    start(&x, BASE "precision=bf16 attention=eager lora_modules=q,k,v,gate,up,down");
    start(&y, BASE "precision=bf16 attention=eager lora_modules=q,k,v,o,gate,up,down");
    cr_assert_eq(comp(&y, GPUFIT_MEM_ACTIVATIONS) - comp(&x, GPUFIT_MEM_ACTIVATIONS),
                 32ull * 2 * 2048 * 4096);
    stop(&x);
    stop(&y);
}

Test(adapter_dtype, peft_upcasts_and_pure_bf16_does_not)
{
    uint64_t n = 32ull * 16 * QKVGUD;
    const char *mods = "lora_modules=q,k,v,gate,up,down ";
    char spec[256];
    /* auto under framework=pytorch: fp32 (peft BaseTuner._cast_adapter_dtype) */
    snprintf(spec, sizeof spec, BASE "%s precision=bf16", mods);
    cr_assert_eq(grads_of(spec), 4 * n);
    /* a pure-bf16 recipe: bf16 adapters, 2 bytes of gradient each */
    snprintf(spec, sizeof spec, BASE "%s precision=bf16 adapter_dtype=bf16", mods);
    cr_assert_eq(grads_of(spec), 2 * n);
    /* grad_dtype given (qlora.py --bf16 casts the adapters): auto follows it */
    snprintf(spec, sizeof spec, BASE "%s precision=bf16 grad_dtype=bf16", mods);
    cr_assert_eq(grads_of(spec), 2 * n);
    /* DeepSpeed casts the whole module to bf16 (engine.py _configure_distributed_model:
     * module.bfloat16()), adapters included, and its optimizer wrapper decides the rest
     * (docs/memory/deepspeed.md): without ZeRO and with bf16 gradients FP16_Optimizer (the
     * bf16 .grad, 2 B, plus the step's fp32 copy listed and flattened, 8 B); with fp32
     * gradient accumulation BF16_Optimizer (the bf16 .grad, 2 B, plus the fp32 accumulation
     * buffer, 4 B) */
    snprintf(spec, sizeof spec, BASE "%s precision=bf16 framework=deepspeed", mods);
    cr_assert_eq(grads_of(spec), 2 * n + 8 * n);
    snprintf(spec, sizeof spec, BASE "%s precision=bf16 framework=deepspeed grad_dtype=fp32",
             mods);
    cr_assert_eq(grads_of(spec), 2 * n + 4 * n);
    /* the adapter weights themselves: fp32 vs bf16 differ by 2 bytes per adapter parameter */
    run x, y;
    snprintf(spec, sizeof spec, BASE "%s precision=bf16 adapter_dtype=fp32", mods);
    start(&x, spec);
    snprintf(spec, sizeof spec, BASE "%s precision=bf16 adapter_dtype=bf16", mods);
    start(&y, spec);
    cr_assert_eq(comp(&x, GPUFIT_MEM_WEIGHTS) - comp(&y, GPUFIT_MEM_WEIGHTS), 2 * n);
    stop(&x);
    stop(&y);
}

Test(lora_modules, json_and_bad_inputs)
{
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    int64_t v = 0;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    const char *ok[] = {"{\"lora_modules\": [\"q_proj\", \"v_proj\", \"down\"]}",
                        "{\"lora_modules\": \"q, v ,down_proj\"}", "{\"lora_modules\": 69}"};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(gpufit_apply_json(m, j, ok[i], strlen(ok[i]), &err), GPUFIT_OK, "%s: %s",
                     ok[i], err.message);
        cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_LORA_MODULES, &v, NULL), GPUFIT_OK);
        cr_assert_eq(v, 1 + 4 + 64, "%s: %lld", ok[i], (long long)v);
    }
    static const char *const bad_json[] = {
        "{\"lora_modules\": [\"q\", \"lm_head\"]}", /* not a block projection */
        "{\"lora_modules\": [1, 2]}",                /* numbers are one mask, not a list */
        "{\"lora_modules\": 128}",                   /* beyond the seven bits */
        "{\"lora_modules\": \"q,,v\"}",              /* an empty name */
    };
    for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++) {
        cr_assert_neq(gpufit_apply_json(m, j, bad_json[i], strlen(bad_json[i]), &err), GPUFIT_OK,
                      "%s accepted", bad_json[i]);
        cr_assert_eq(err.param, GPUFIT_JOB_LORA_MODULES, "%s: %s", bad_json[i], err.message);
        cr_assert(strstr(err.message, "lora_modules") != NULL, "%s", err.message);
        cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_LORA_MODULES, &v, NULL), GPUFIT_OK);
        cr_assert_eq(v, 69, "%s changed the job", bad_json[i]);
    }
    cr_assert_eq(gpufit_apply_spec(m, j, "lora_modules=q,foo", &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.param, GPUFIT_JOB_LORA_MODULES);
    cr_assert(strstr(err.message, "foo") != NULL, "%s", err.message);
    cr_assert_eq(gpufit_apply_spec(m, j, "lora_modules=none", &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_LORA_MODULES, &v, NULL), GPUFIT_OK);
    cr_assert_eq(v, 0);
    gpufit_job_free(j);
    gpufit_model_free(m);

    /* an adapter dtype that is not a float type is refused when the plan resolves */
    run x;
    x.err = (gpufit_error)GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_model_new(&x.m, &x.err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&x.j, &x.err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(x.m, x.j, BASE "adapter_dtype=nf4", &x.err), GPUFIT_OK);
    x.r = NULL;
    cr_assert_eq(gpufit_evaluate(&x.r, x.m, x.j, &x.err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(x.err.param, GPUFIT_JOB_ADAPTER_DTYPE, "%s", x.err.message);
    stop(&x);
}
