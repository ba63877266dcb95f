/* SPDX-License-Identifier: MIT */
/* Fixes that keep the user's GPU come first (issue 15; docs/mitigations.md): when no single
 * change fits, a search combines software changes; hardware changes are listed only when software
 * cannot make the job fit, or when the job asks (allow_hardware). */
#include "run.h"

#include <string.h>

static int hardware(int32_t kind)
{
    return kind == GPUFIT_MIT_LARGER_GPU || kind == GPUFIT_MIT_MORE_GPUS;
}

static gpufit_mitigation_info mitigation(const run_s *s, uint32_t i)
{
    gpufit_mitigation_info mi = {.struct_size = sizeof mi};
    cr_assert_eq(gpufit_result_mitigation(s->r, i, &mi), GPUFIT_OK);
    return mi;
}

#define LORA "model=llama-3-8b task=lora gpu=rtx-4090 seq_len=4096 micro_batch=4 "

Test(keep_gpu, software_chain_first_and_no_hardware)
{
    run_s s;
    cr_assert_eq(run(&s, LORA), GPUFIT_OK, "%s", s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.fits, 0);
    cr_assert(sum.n_mitigations > 0);
    gpufit_mitigation_info first = mitigation(&s, 0);
    cr_assert_eq(first.fits_after, 1, "%s", first.text);
    cr_assert(!hardware(first.kind), "%s", first.text);
    for (uint32_t i = 0; i < sum.n_mitigations; i++)
        cr_assert(!hardware(mitigation(&s, i).kind), "%s", mitigation(&s, i).text);
    /* applied, the first one fits on the same GPU (sure to: the band's high end) */
    gpufit_job *j = NULL;
    gpufit_job_copy(&j, s.j, NULL);
    cr_assert_eq(gpufit_job_apply_mitigation(j, s.r, 0, NULL), GPUFIT_OK);
    gpufit_summary after = {.struct_size = sizeof after};
    cr_assert_eq(gpufit_evaluate_summary(s.m, j, &after, NULL), GPUFIT_OK);
    cr_assert_eq(after.verdict, GPUFIT_VERDICT_FITS);
    cr_assert_eq(after.capacity_bytes, sum.capacity_bytes);
    gpufit_job_free(j);
    done(&s);
}

Test(keep_gpu, hardware_when_asked_and_after_software)
{
    run_s s;
    cr_assert_eq(run(&s, LORA "allow_hardware=1"), GPUFIT_OK, "%s", s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    int seen_hw = 0;
    for (uint32_t i = 0; i < sum.n_mitigations; i++) {
        gpufit_mitigation_info mi = mitigation(&s, i);
        if (hardware(mi.kind))
            seen_hw = 1;
        else if (mi.fits_after == 1)
            cr_assert(!seen_hw, "a fitting software fix after a hardware one: %s", mi.text);
    }
    cr_assert(seen_hw);
    done(&s);
}

/* Software cannot make a 70B pre-training fit one GPU: hardware is listed without asking. */
Test(keep_gpu, hardware_when_software_cannot)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-70b task=pretrain gpu=rtx-4090 seq_len=4096"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    int any_hw = 0;
    for (uint32_t i = 0; i < sum.n_mitigations; i++)
        any_hw |= hardware(mitigation(&s, i).kind);
    cr_assert(any_hw);
    done(&s);
}

/* Ready-to-paste flags in the framework's words (advise/flags.c, docs/flags.md). */
static const char *flags_of_first(run_s *s, const char *spec)
{
    cr_assert_eq(run(s, spec), GPUFIT_OK, "%s", s->err.message);
    static gpufit_mitigation_info mi;
    mi = (gpufit_mitigation_info){.struct_size = sizeof mi};
    cr_assert_eq(gpufit_result_mitigation(s->r, 0, &mi), GPUFIT_OK);
    cr_assert(mi.flags != NULL);
    return mi.flags;
}

Test(flags, per_framework)
{
    run_s s;
    /* vLLM: the KV budget is short at 128k context: an fp8 KV cache and int8 weights (cost
     * 1 + 2) keep the context, cheaper than --max-model-len (cost 4), which comes second */
    const char *f = flags_of_first(&s, "model=llama-3.1-8b task=inference framework=vllm "
                                       "gpu=rtx-3090 context_len=131072");
    cr_assert(strstr(f, "--kv-cache-dtype fp8") != NULL, "%s", f);
    gpufit_mitigation_info second = mitigation(&s, 1);
    cr_assert_eq(second.fits_after, 1);
    cr_assert(strncmp(second.flags, "--max-model-len ", 16) == 0, "%s", second.flags);
    done(&s);
    /* llama.cpp: quantised KV cache as -ctk/-ctv */
    f = flags_of_first(&s, "model=llama-3-70b task=inference gpu=rtx-3090 gpus=2 pp=2 "
                           "framework=llamacpp context_len=32768");
    cr_assert(strstr(f, "-ctk q8_0 -ctv q8_0") != NULL, "%s", f);
    done(&s);
    /* HF Trainer / PEFT: QLoRA, micro-batch 1 with accumulation 4, checkpointing */
    f = flags_of_first(&s, LORA);
    cr_assert(strstr(f, "load_in_4bit=True") != NULL, "%s", f);
    cr_assert(strstr(f, "--per_device_train_batch_size 1") != NULL, "%s", f);
    cr_assert(strstr(f, "--gradient_accumulation_steps 4") != NULL, "%s", f);
    cr_assert(strstr(f, "--gradient_checkpointing") != NULL, "%s", f);
    done(&s);
}

/* The search is best-first by cost (docs/mitigations.md): the first fix is the cheapest that
 * fits, and a combination lists no step it fits without. */
Test(keep_gpu, cheapest_combination_first)
{
    run_s s;
    cr_assert_eq(run(&s, LORA), GPUFIT_OK, "%s", s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    gpufit_mitigation_info first = mitigation(&s, 0);
    cr_assert_eq(first.kind, GPUFIT_MIT_COMBINED, "%s", first.text);
    /* micro-batch 4 -> 1 (1 + 0.5 log2 4), full checkpointing (2.5), QLoRA (3) */
    cr_assert_float_eq(first.cost, 7.5, 1e-9, "%g %s", first.cost, first.text);
    cr_assert_str_eq(first.changes, "task=qlora micro_batch=1 global_batch=4 checkpointing=full");
    for (uint32_t i = 1; i < sum.n_mitigations; i++) {
        gpufit_mitigation_info mi = mitigation(&s, i);
        cr_assert(!mi.fits_after || mi.cost >= first.cost, "%s", mi.text);
    }
    /* each step left out: it does not fit */
    static const char *const without[] = {"micro_batch=1 global_batch=4 checkpointing=full",
                                          "task=qlora checkpointing=full",
                                          "task=qlora micro_batch=1 global_batch=4"};
    for (size_t k = 0; k < 3; k++) {
        gpufit_job *j = NULL;
        gpufit_job_copy(&j, s.j, NULL);
        cr_assert_eq(gpufit_apply_spec(s.m, j, without[k], NULL), GPUFIT_OK);
        gpufit_summary w = {.struct_size = sizeof w};
        cr_assert_eq(gpufit_evaluate_summary(s.m, j, &w, NULL), GPUFIT_OK);
        cr_assert_neq(w.verdict, GPUFIT_VERDICT_FITS, "%s fits", without[k]);
        gpufit_job_free(j);
    }
    done(&s);
}

/* A value that depends on the other steps (here the context) is searched on top of them: an
 * 8B model at 32k context on a 12 GB card gets a fix that keeps the card, not "RTX 5090". */
Test(keep_gpu, last_step_searched_on_top)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference gpu=rtx-3060 context_len=32768"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_mitigation_info first = mitigation(&s, 0);
    cr_assert_eq(first.fits_after, 1, "%s", first.text);
    cr_assert_eq(first.kind, GPUFIT_MIT_COMBINED, "%s", first.text);
    cr_assert(!hardware(first.kind) && strstr(first.changes, "gpu=") == NULL, "%s",
              first.changes);
    cr_assert(strstr(first.changes, "context_len=") != NULL, "%s", first.changes);
    gpufit_job *j = NULL;
    gpufit_job_copy(&j, s.j, NULL);
    cr_assert_eq(gpufit_job_apply_mitigation(j, s.r, 0, NULL), GPUFIT_OK);
    gpufit_summary after = {.struct_size = sizeof after};
    cr_assert_eq(gpufit_evaluate_summary(s.m, j, &after, NULL), GPUFIT_OK);
    cr_assert_eq(after.verdict, GPUFIT_VERDICT_FITS);
    gpufit_job_free(j);
    done(&s);
}
