/* SPDX-License-Identifier: MIT */
/* Evaluation: exact KV-cache and weight bytes of real models, components adding up, the
 * parameter table, result accessors and a table-driven bad-input battery. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

typedef run_s scenario;

static uint64_t comp(scenario *s, uint32_t role, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(s->r, role, c, &b), GPUFIT_OK);
    return b;
}

/* KV cache per token, memory-model.md §6.1 (verified arithmetic there). */
Test(kv_cache, exact_bytes_per_token_of_real_models)
{
    static const struct {
        const char *spec;
        uint64_t bytes;
    } cases[] = {
        {"model=llama-2-7b", 524288},  /* 512 KiB */
        {"model=llama-3-8b", 131072},  /* 128 KiB */
        {"model=mixtral-8x7b", 131072},
        {"model=llama-3-70b", 327680}, /* 320 KiB */
        {"model=qwen2.5-7b", 57344},   /* 56 KiB */
        {"model=deepseek-r1 framework=vllm gpu_memory_utilization=0.9", 70272}, /* MLA latent */
        {"model=deepseek-r1", 61 * 81920}, /* HF caches decompressed K/V: 71x the latent */
        {"model=llama-3-8b kv_dtype=fp8", 65536},
        {"model=llama-3-8b framework=llamacpp kv_dtype=q8_0 attention=flash", 69632}, /* 34/32 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char spec[256];
        snprintf(spec, sizeof spec, "%s task=inference batch=1 context_len=4096 precision=bf16",
                 cases[i].spec);
        scenario s;
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        uint64_t pad = strstr(spec, "llamacpp") ? 4096 : 4096; /* 4096 is a multiple of 256 */
        cr_assert_eq(comp(&s, 0, GPUFIT_MEM_KV_CACHE), cases[i].bytes * pad, "%s", spec);
        done(&s);
    }
}

Test(kv_cache, llamacpp_keeps_v_in_f16_without_flash_attention)
{
    scenario s; /* K iq4_nl (18/32 bytes per element), V f16: validation case llama3.1-8b */
    cr_assert_eq(run(&s, "model=llama-3.1-8b task=inference framework=llamacpp batch=2 "
                         "context_len=512 kv_dtype=iq4_nl attention=eager"),
                 GPUFIT_OK);
    uint64_t k = 1024 * 18 / 32 * 32 * 1024, v = 1024 * 2 * 32 * 1024;
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_KV_CACHE), k + v);
    gpufit_summary sum = {.struct_size = sizeof sum};
    cr_assert_eq(gpufit_result_summary(s.r, &sum), GPUFIT_OK);
    cr_assert(sum.n_notes >= 1);
    done(&s);
}

/* Weights: exact bytes from the tensor table. */
Test(weights, bf16_llama3_8b_is_two_bytes_per_parameter)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference precision=bf16"), GPUFIT_OK);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WEIGHTS), 2ull * 8030261248ull);
    done(&s);
}

Test(weights, gguf_q4_k_m_llama31_8b_matches_llama_cpp_table)
{
    /* memory-model.md §7.2 / Appendix A.2: 4.894384 bpw = 4,912,898,048 bytes; llama.cpp keeps
     * the Q4_K token embedding (295,501,824 bytes) in host memory. */
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3.1-8b task=inference framework=llamacpp "
                         "weight_dtype=q4_k_m context_len=512"),
                 GPUFIT_OK);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WEIGHTS), 4617396224ull);
    cr_assert_eq(sum.host_bytes, 295501824ull);
    done(&s);
}

Test(weights, nf4_and_gptq_bits_per_weight)
{
    scenario s;
    /* NF4 without double quantisation: 4.5 bits for linear layers; bf16 elsewhere */
    cr_assert_eq(run(&s, "model=llama-2-7b task=inference weight_dtype=nf4 precision=bf16"),
                 GPUFIT_OK);
    uint64_t linear = 32ull * (4 * 4096 * 4096 + 3ull * 4096 * 11008);
    uint64_t other = 6738415616ull - linear;
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WEIGHTS), linear / 64 * 36 + other * 2);
    done(&s);
}

/* Training model states: memory-model.md §2.2 */
Test(training, mixed_precision_adam_is_sixteen_bytes_plus_autocast_copy)
{
    scenario s;
    /* a fused step: no step temporaries (test_optimizer_step.c) */
    cr_assert_eq(run(&s, "model=llama-2-7b task=pretrain precision=amp_bf16 optimizer=adamw "
                         "optimizer_impl=fused"),
                 GPUFIT_OK);
    uint64_t P = 6738415616ull;
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WEIGHTS), 4 * P + 2 * P); /* fp32 + autocast bf16 */
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_GRADIENTS), 4 * P);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_OPTIMIZER_STATES), 8 * P);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_MASTER_WEIGHTS), 0);
    done(&s);
}

Test(training, megatron_bf16_is_eighteen_bytes_per_parameter)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-2-7b task=pretrain precision=bf16 framework=megatron"),
                 GPUFIT_OK);
    uint64_t P = 6738415616ull, states = 0;
    for (int32_t c = GPUFIT_MEM_WEIGHTS; c <= GPUFIT_MEM_MASTER_WEIGHTS; c++)
        states += comp(&s, 0, c);
    cr_assert_eq(states, 18 * P);
    done(&s);
}

Test(training, zero_paper_example_stage_by_stage)
{
    /* ZeRO paper (arXiv:1910.02054) Figure 1: Psi = 7.5B, N_d = 64, K = 12:
     * 120 / 31.4 / 16.6 / 1.9 GB for stages 0-3 (fp16 params and grads, fp32 master + Adam).
     * A generic model of 7.5e9 parameters carries no layer structure, so stage 3's gathered
     * layer buffer is 0 and the figure is reproduced exactly. */
    static const uint64_t want[4] = {120000000000ull, 31406250000ull, 16640625000ull,
                                     1875000000ull};
    for (int z = 0; z < 4; z++) {
        char spec[256];
        snprintf(spec, sizeof spec,
                 "arch=generic n_params=7500000000 task=pretrain precision=fp16 "
                 "master_weights=fp32 optimizer_dtype=fp32 grad_dtype=fp16 dp=64 zero=%d "
                 "framework=megatron", /* the paper's accounting: no DDP buckets, no fp32 grads */
                 z);
        scenario s;
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
        uint64_t states = 0;
        for (int32_t c = GPUFIT_MEM_WEIGHTS; c <= GPUFIT_MEM_MASTER_WEIGHTS; c++)
            states += comp(&s, 0, c);
        cr_assert_eq(states, want[z], "stage %d: %llu", z, (unsigned long long)states);
        done(&s);
    }
}

/* Components add up to device_used_bytes; levels are nested. */
Test(invariants, components_add_up_for_every_preset_and_task)
{
    static const char *const tasks[] = {
        "task=inference", "task=pretrain checkpointing=selective", "task=lora",
        "task=qlora checkpointing=full", "task=inference framework=vllm",
        "task=inference framework=llamacpp weight_dtype=q4_k_m"};
    gpufit_preset_info p = {.struct_size = sizeof p};
    for (uint32_t i = 0; gpufit_preset_at(i, &p) == GPUFIT_OK; i++, p.struct_size = sizeof p) {
        for (size_t t = 0; t < sizeof tasks / sizeof tasks[0]; t++) {
            char spec[256];
            snprintf(spec, sizeof spec, "model=%s %s gpu=h100 seq_len=1024 context_len=2048",
                     p.name, tasks[t]);
            scenario s;
            int32_t st = run(&s, spec);
            if (st == GPUFIT_E_UNSUPPORTED) { /* e.g. llama.cpp has no encoder models */
                done(&s);
                continue;
            }
            cr_assert_eq(st, GPUFIT_OK, "%s: %s", spec, s.err.message);
            gpufit_summary sum = {.struct_size = sizeof sum};
            cr_assert_eq(gpufit_result_summary(s.r, &sum), GPUFIT_OK);
            for (uint32_t r = 0; r < sum.n_roles; r++) {
                gpufit_role_info ro = {.struct_size = sizeof ro};
                cr_assert_eq(gpufit_result_role(s.r, r, &ro), GPUFIT_OK);
                uint64_t total = 0;
                for (int32_t c = gpufit_component_next(0); c; c = gpufit_component_next(c))
                    total += comp(&s, r, c);
                cr_assert_eq(total, ro.device_used_bytes, "%s role %s", spec, ro.name);
                cr_assert(ro.peak_allocated_bytes <= ro.peak_reserved_bytes);
                cr_assert(ro.peak_reserved_bytes <= ro.device_used_bytes);
            }
            cr_assert_eq(sum.n_params, p.n_params);
            done(&s);
        }
    }
}

Test(invariants, memory_grows_with_batch_and_sequence)
{
    uint64_t last = 0;
    for (int b = 1; b <= 8; b *= 2) {
        char spec[128];
        snprintf(spec, sizeof spec, "model=llama-3-8b task=pretrain micro_batch=%d gpu=h100", b);
        scenario s;
        cr_assert_eq(run(&s, spec), GPUFIT_OK);
        gpufit_summary sum = {.struct_size = sizeof sum};
        gpufit_result_summary(s.r, &sum);
        cr_assert(sum.peak_bytes > last);
        last = sum.peak_bytes;
        done(&s);
    }
}

/* The verdict and hardware notes. */
Test(verdict, fits_and_oom)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192"),
                 GPUFIT_OK);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.fits, 1);
    cr_assert_eq(sum.capacity_bytes, 25757220864ull);
    cr_assert(sum.headroom_bytes > 0);
    done(&s);
    cr_assert_eq(run(&s, "model=llama-3-70b task=inference gpu=rtx-4090"), GPUFIT_OK);
    sum.struct_size = sizeof sum;
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.fits, 0);
    cr_assert(sum.headroom_bytes < 0);
    done(&s);
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference"), GPUFIT_OK); /* no GPU */
    sum.struct_size = sizeof sum;
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.fits, -1);
    done(&s);
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference gpu=24GiB"), GPUFIT_OK);
    sum.struct_size = sizeof sum;
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.capacity_bytes, 24ull << 30);
    done(&s);
}

Test(verdict, bf16_on_v100_and_fp8_on_a100_are_flagged)
{
    static const char *const specs[] = {
        "model=llama-3-8b task=inference gpu=v100-32gb",
        "model=llama-3-8b task=pretrain precision=fp8 gpu=a100-80gb"};
    for (int i = 0; i < 2; i++) {
        scenario s;
        cr_assert_eq(run(&s, specs[i]), GPUFIT_OK);
        gpufit_summary sum = {.struct_size = sizeof sum};
        gpufit_result_summary(s.r, &sum);
        int found = 0;
        for (uint32_t n = 0; n < sum.n_notes; n++) {
            const char *t = NULL;
            gpufit_result_note(s.r, n, &t);
            found |= strstr(t, i == 0 ? "bf16" : "fp8") != NULL;
        }
        cr_assert(found, "%s", specs[i]);
        done(&s);
    }
}

/* The JSON report. */
Test(report, json_buffer_protocol)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference gpu=rtx-4090"), GPUFIT_OK);
    size_t need = 0;
    char small[16];
    cr_assert_eq(gpufit_result_to_json(s.r, small, sizeof small, &need, NULL),
                 GPUFIT_E_BUFFER_TOO_SMALL);
    cr_assert(need > 100);
    char *buf = malloc(need + 1);
    size_t len = 0;
    cr_assert_eq(gpufit_result_to_json(s.r, buf, need + 1, &len, NULL), GPUFIT_OK);
    cr_assert_eq(len, need);
    cr_assert(strstr(buf, "\"n_params\": 8030261248") != NULL);
    cr_assert(strstr(buf, "\"schema\": 2") != NULL);
    free(buf);
    done(&s);
}

Test(report, struct_size_rules)
{
    scenario s;
    cr_assert_eq(run(&s, "model=gpt2 task=inference gpu=t4"), GPUFIT_OK);
    gpufit_summary sum = {.struct_size = 8};
    cr_assert_eq(gpufit_result_summary(s.r, &sum), GPUFIT_E_STRUCT_SIZE);
    struct {
        gpufit_role_info info;
        char tail[32];
    } big;
    memset(&big, 0x5a, sizeof big);
    big.info.struct_size = sizeof big;
    cr_assert_eq(gpufit_result_role(s.r, 0, &big.info), GPUFIT_OK);
    cr_assert_eq(big.info.struct_size, sizeof(gpufit_role_info));
    cr_assert_eq(big.tail[0], 0x5a);
    cr_assert_eq(gpufit_result_role(s.r, 7, &big.info), GPUFIT_E_NOT_FOUND);
    done(&s);
}

/* gpufit_evaluate_summary: the allocation-free path gives gpufit_evaluate's summary (no
 * mitigations ranked) and its errors. */
Test(report, evaluate_summary_equals_evaluate_then_summary)
{
    static const char *const specs[] = {
        "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192",
        "model=llama-3-70b task=inference gpu=rtx-4090", /* does not fit: mitigations */
        "model=llama-3-8b task=inference",                /* no GPU: no verdict */
        "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=4 zero=1 precision=bf16 "
        "framework=megatron seq_len=8192 global_batch=256 sp=1 checkpointing=selective",
        "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 vpp=2 dp=2 framework=megatron",
        "model=mixtral-8x7b task=inference gpu=h100 weight_dtype=fp8 framework=vllm "
        "context_len=32768",
        "model=qwen2.5-7b task=inference gpu=a10 framework=sglang batch=16",
        "model=llama-3.1-8b task=inference gpu=rtx-4090 framework=llamacpp weight_dtype=q4_k_m "
        "n_gpu_layers=20",
        "model=llama-3-8b pp=2 device_gpus=rtx-4090,rtx-3060 task=inference framework=llamacpp",
        "model=llama-3-8b task=pretrain tp=2 pp=2 tensor_split=3,1 device_gpus=h100,rtx-4090",
        "model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024 checkpointing=full",
        "model=deepseek-v2-lite task=finetune gpu=a100-80gb ep=2 dp=2 zero=3 offload=optimizer",
        "model=llama-3-8b task=pretrain gpu=h100 tp=3",           /* error: tp | n_heads */
        "model=llama-3-8b task=inference gpu=h100 pp=2 tensor_split=1,1,1", /* error: list */
        "model=llama-3-8b task=pretrain gpu=h100 ep=2",           /* error: dense model */
    };
    int n_errors = 0, n_mitigated = 0;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        scenario s;
        int32_t st = run(&s, specs[i]);
        gpufit_error err = GPUFIT_ERROR_INIT;
        gpufit_summary fast;
        memset(&fast, 0x5a, sizeof fast);
        fast.struct_size = sizeof fast;
        cr_assert_eq(gpufit_evaluate_summary(s.m, s.j, &fast, &err), st, "%s", specs[i]);
        if (st != GPUFIT_OK) { /* the same error, and nothing written */
            n_errors++;
            cr_assert_eq(err.status, s.err.status, "%s", specs[i]);
            cr_assert_eq(err.param, s.err.param, "%s", specs[i]);
            cr_assert_str_eq(err.message, s.err.message, "%s", specs[i]);
            cr_assert_eq(fast.fits, (int32_t)0x5a5a5a5a, "%s", specs[i]);
            done(&s);
            continue;
        }
        cr_assert_eq(err.status, GPUFIT_OK, "%s", specs[i]);
        gpufit_summary full = {.struct_size = sizeof full};
        cr_assert_eq(gpufit_result_summary(s.r, &full), GPUFIT_OK);
        n_mitigated += full.n_mitigations > 0;
        cr_assert_eq(fast.struct_size, full.struct_size, "%s", specs[i]);
        cr_assert_eq(fast.fits, full.fits, "%s", specs[i]);
        cr_assert_eq(fast.n_roles, full.n_roles, "%s", specs[i]);
        cr_assert_eq(fast.worst_role, full.worst_role, "%s", specs[i]);
        cr_assert_eq(fast.n_notes, full.n_notes, "%s", specs[i]);
        cr_assert_eq(fast.reserved0, 0, "%s", specs[i]);
        cr_assert_eq(fast.capacity_bytes, full.capacity_bytes, "%s", specs[i]);
        cr_assert_eq(fast.peak_bytes, full.peak_bytes, "%s", specs[i]);
        cr_assert_eq(fast.headroom_bytes, full.headroom_bytes, "%s", specs[i]);
        cr_assert_eq(fast.n_params, full.n_params, "%s", specs[i]);
        cr_assert_eq(fast.n_active_params, full.n_active_params, "%s", specs[i]);
        cr_assert_eq(fast.host_bytes, full.host_bytes, "%s", specs[i]);
        cr_assert_eq(fast.n_mitigations, 0, "%s", specs[i]);
        cr_assert_eq(fast.reserved1, 0, "%s", specs[i]);
        done(&s);
    }
    cr_assert_eq(n_errors, 3);
    cr_assert(n_mitigated > 0, "some case should rank mitigations on the allocating path");

    /* NULL arguments; struct_size: too small is refused before evaluating (nothing written),
     * larger gets the library's size back and its tail left alone */
    scenario s;
    cr_assert_eq(run(&s, "model=gpt2 task=inference gpu=t4"), GPUFIT_OK);
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_summary sum = {.struct_size = sizeof sum};
    cr_assert_eq(gpufit_evaluate_summary(NULL, s.j, &sum, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.status, GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_evaluate_summary(s.m, NULL, &sum, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_evaluate_summary(s.m, s.j, NULL, &err), GPUFIT_E_INVALID_ARG);
    static const uint32_t small[] = {0, 4, 8, (uint32_t)offsetof(gpufit_summary, verdict) - 1};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        memset(&sum, 0x5a, sizeof sum);
        sum.struct_size = small[i];
        err = (gpufit_error)GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_evaluate_summary(s.m, s.j, &sum, &err), GPUFIT_E_STRUCT_SIZE);
        cr_assert_eq(err.status, GPUFIT_E_STRUCT_SIZE);
        cr_assert_eq(sum.struct_size, small[i]);
        cr_assert_eq(sum.fits, (int32_t)0x5a5a5a5a);
    }
    struct {
        gpufit_summary sum;
        unsigned char tail[32];
    } big;
    memset(&big, 0xa5, sizeof big);
    big.sum.struct_size = (uint32_t)sizeof big;
    cr_assert_eq(gpufit_evaluate_summary(s.m, s.j, &big.sum, NULL), GPUFIT_OK);
    cr_assert_eq(big.sum.struct_size, (uint32_t)sizeof(gpufit_summary));
    cr_assert_eq(big.sum.fits, 1);
    for (size_t i = 0; i < sizeof big.tail; i++)
        cr_assert_eq(big.tail[i], 0xa5, "tail byte %zu written", i);
    done(&s);
}

/* The parameter table. */
Test(params, table_is_complete_and_round_trips)
{
    int n = 0;
    for (int32_t p = gpufit_param_next(0); p != 0; p = gpufit_param_next(p), n++) {
        gpufit_param_info in = {.struct_size = sizeof in};
        cr_assert_eq(gpufit_param_get_info(p, &in), GPUFIT_OK);
        cr_assert(in.name != NULL && in.name[0] != '\0');
        cr_assert(in.doc != NULL && strlen(in.doc) > 5, "%s", in.name);
        int32_t back = 0;
        cr_assert_eq(gpufit_param_by_name(in.name, &back), GPUFIT_OK);
        cr_assert_eq(back, p, "%s", in.name);
        if (in.type == GPUFIT_TYPE_ENUM || in.type == GPUFIT_TYPE_BOOL) {
            const char *vn = NULL;
            int64_t v = 0;
            cr_assert_eq(gpufit_param_value_at(p, 0, &v, &vn), GPUFIT_OK, "%s", in.name);
            int64_t again = 0;
            cr_assert_eq(gpufit_param_value_by_name(p, vn, &again), GPUFIT_OK);
            cr_assert_eq(again, v);
        }
    }
    cr_assert(n >= 70);
    cr_assert_eq(gpufit_version_number(), GPUFIT_VERSION_NUMBER);
    cr_assert_str_eq(gpufit_version_string(), GPUFIT_VERSION_STRING);
}

Test(params, typed_setters)
{
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_set_int(j, GPUFIT_JOB_TP, 8, &err), GPUFIT_OK);
    int64_t v = 0;
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_TP, &v, &err), GPUFIT_OK);
    cr_assert_eq(v, 8);
    cr_assert_eq(gpufit_job_set_int(j, GPUFIT_JOB_TP, 0, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(err.param, GPUFIT_JOB_TP);
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_TP, &v, &err), GPUFIT_OK);
    cr_assert_eq(v, 8, "a failed set leaves the value unchanged");
    cr_assert_eq(gpufit_job_set_float(j, GPUFIT_JOB_DROPOUT, NAN, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_job_set_float(j, GPUFIT_JOB_DROPOUT, 0.1, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_set_int(j, GPUFIT_MODEL_N_LAYERS, 2, &err), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(gpufit_job_set_int(j, 99999, 2, &err), GPUFIT_E_UNKNOWN_PARAM);
    cr_assert_eq(gpufit_job_set_float(j, GPUFIT_JOB_GPU_MEMORY_GIB, 24.0, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_GPU_MEMORY_BYTES, &v, &err), GPUFIT_OK);
    cr_assert_eq(v, 24ll << 30);
    gpufit_job_free(j);
}

/* Table-driven bad input: each rejected input gets its status, its parameter and a message
 * naming the key. */
Test(bad_input, every_rejection_is_precise)
{
    static const struct {
        const char *spec;
        int32_t status;
        int32_t param;
        const char *word; /* must appear in the message */
    } cases[] = {
        {"model=llama-3-8b tp=0", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_TP, "tp"},
        {"model=llama-3-8b tp=-2", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_TP, "tp"},
        {"model=llama-3-8b tp=banana", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_TP, "tp"},
        {"model=llama-3-8b tp=2.5", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_TP, "tp"},
        {"model=llama-3-8b micro_batch=0", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_MICRO_BATCH,
         "micro_batch"},
        {"model=llama-3-8b seq_len=1e30", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_SEQ_LEN, "seq_len"},
        {"model=llama-3-8b dropout=nan", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_DROPOUT, "dropout"},
        {"model=llama-3-8b dropout=inf", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_DROPOUT, "dropout"},
        {"model=llama-3-8b dropout=1.5", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_DROPOUT, "dropout"},
        {"model=llama-3-8b gpu_memory_utilization=2", GPUFIT_E_INVALID_ARG,
         GPUFIT_JOB_GPU_MEMORY_UTILIZATION, "gpu_memory_utilization"},
        {"model=llama-3-8b task=dance", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_TASK, "task"},
        {"model=llama-3-8b precision=fp64", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_PRECISION,
         "precision"},
        {"model=llama-3-8b kv_dtype=q9_9", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_KV_DTYPE, "kv_dtype"},
        {"model=llama-3-8b gpu=nope-9000", GPUFIT_E_NOT_FOUND, GPUFIT_JOB_GPU, "gpu"},
        {"model=llama-3-8b frobnicate=1", GPUFIT_E_UNKNOWN_PARAM, 0, "frobnicate"},
        {"model=not-a-model", GPUFIT_E_NOT_FOUND, 0, "not-a-model"},
        {"model=llama-3-8b n_heads=0", GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_HEADS, "n_heads"},
        {"model=llama-3-8b hidden_size=-1", GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_HIDDEN_SIZE,
         "hidden_size"},
        {"model=llama-3-8b cuda_context_bytes=1x", GPUFIT_E_INVALID_ARG,
         GPUFIT_JOB_CUDA_CONTEXT_BYTES, "cuda_context_bytes"},
        {"model=llama-3-8b seq_len=4KiB", GPUFIT_E_INVALID_ARG, GPUFIT_JOB_SEQ_LEN, "seq_len"},
        /* inconsistent combinations, found at evaluation */
        {"model=llama-3-8b tp=3", GPUFIT_E_INCONSISTENT, GPUFIT_JOB_TP, "tp"},
        {"model=llama-3-8b n_kv_heads=5", GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_KV_HEADS,
         "n_kv_heads"},
        {"model=gpt2 head_dim=0 n_kv_heads=0 n_heads=7", GPUFIT_E_INCONSISTENT, GPUFIT_MODEL_N_HEADS,
         "n_heads"},
        {"model=llama-3-8b pp=64", GPUFIT_E_INCONSISTENT, GPUFIT_JOB_PP, "pp"},
        {"model=llama-3-8b dp=2 gpus=3", GPUFIT_E_INCONSISTENT, GPUFIT_JOB_GPUS, "gpus"},
        {"model=mixtral-8x7b ep=3", GPUFIT_E_INCONSISTENT, GPUFIT_JOB_EP, "ep"},
        {"model=llama-3-8b task=pretrain weight_dtype=q4_k_m", GPUFIT_E_UNSUPPORTED,
         GPUFIT_JOB_WEIGHT_DTYPE, "qlora"},
        {"model=llama-3-8b task=pretrain grad_dtype=none", GPUFIT_E_INVALID_ARG,
         GPUFIT_JOB_GRAD_DTYPE, "grad_dtype"},
        {"arch=decoder hidden_size=4096 n_heads=32 vocab_size=100 ffn_hidden_size=64", GPUFIT_E_INVALID_ARG, GPUFIT_MODEL_N_LAYERS,
         "n_layers is not set"},
        /* issue #7 F3: the global batch is a whole number of micro-batches on every rank */
        {"model=llama-3-8b task=pretrain micro_batch=4 dp=2 global_batch=12",
         GPUFIT_E_INCONSISTENT, GPUFIT_JOB_GLOBAL_BATCH, "multiple of micro_batch x dp"},
        {"model=llama-3-8b task=pretrain micro_batch=4 global_batch=2", GPUFIT_E_INCONSISTENT,
         GPUFIT_JOB_GLOBAL_BATCH, "global_batch (2)"},
        /* interleaved stages hold vpp equal chunks */
        {"model=llama-3-8b task=pretrain pp=4 vpp=3", GPUFIT_E_INCONSISTENT, GPUFIT_JOB_VPP,
         "pp x vpp"},
        {"model=llama-3-8b task=pretrain pp=4 vpp=2 pp_first_layers=7", GPUFIT_E_INCONSISTENT,
         GPUFIT_JOB_VPP, "vpp"},
        /* the error names the parameter that was set */
        {"model=llama-3-8b task=pretrain pp=4 pp_last_layers=40", GPUFIT_E_INCONSISTENT,
         GPUFIT_JOB_PP_LAST_LAYERS, "pp_last_layers (40)"},
        {"model=llama-3-8b task=inference kv_dtype=none", GPUFIT_E_INVALID_ARG,
         GPUFIT_JOB_KV_DTYPE, "kv_dtype cannot be none"},
        {"model=llama-3-8b task=pretrain optimizer_dtype=none", GPUFIT_E_INCONSISTENT,
         GPUFIT_JOB_OPTIMIZER_DTYPE, "optimizer=none"},
        {"model=llama-3-8b task=inference context_len=1024 prompt_len=2048",
         GPUFIT_E_INCONSISTENT, GPUFIT_JOB_PROMPT_LEN, "exceeds context_len"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scenario s;
        int32_t st = run(&s, cases[i].spec);
        cr_assert_eq(st, cases[i].status, "%s: got %d (%s)", cases[i].spec, st, s.err.message);
        cr_assert_eq(s.err.status, cases[i].status, "%s", cases[i].spec);
        cr_assert_eq(s.err.param, cases[i].param, "%s: param %d", cases[i].spec, s.err.param);
        cr_assert(strstr(s.err.message, cases[i].word) != NULL, "%s: message '%s'",
                  cases[i].spec, s.err.message);
        cr_assert_null(s.r);
        done(&s);
    }
}

Test(bad_input, spec_syntax_errors_carry_offsets)
{
    static const struct {
        const char *spec;
        uint64_t offset;
    } cases[] = {
        {"task=pretrain tp", 14},        /* no '=value' */
        {"task=pretrain =8", 14},        /* no key */
        {"task=pretrain tp=", 17},       /* empty value */
        {"gpu=\"h100 sxm5", 4},          /* unterminated quote */
        {"task=pretrain tp=banana", 14}, /* a bad value points at its pair */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scenario s;
        int32_t st = run(&s, cases[i].spec);
        cr_assert_neq(st, GPUFIT_OK, "%s", cases[i].spec);
        cr_assert_eq(s.err.offset, cases[i].offset, "%s: offset %llu", cases[i].spec,
                     (unsigned long long)s.err.offset);
        done(&s);
    }
}

Test(bad_input, null_handles_and_failed_specs_change_nothing)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_result *r = NULL;
    cr_assert_eq(gpufit_evaluate(&r, NULL, NULL, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_evaluate(NULL, NULL, NULL, NULL), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_apply_spec(NULL, NULL, NULL, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_model_new(NULL, &err), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(gpufit_result_summary(NULL, NULL), GPUFIT_E_INVALID_ARG);
    gpufit_model_free(NULL);
    gpufit_job_free(NULL);
    gpufit_result_free(NULL);

    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b tp=2"), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(s.m, s.j, "tp=4 pp=banana", &err), GPUFIT_E_INVALID_ARG);
    int64_t tp = 0;
    gpufit_job_get_int(s.j, GPUFIT_JOB_TP, &tp, NULL);
    cr_assert_eq(tp, 2, "a failed spec must not change the job");
    done(&s);
}

Test(bad_input, absurd_sizes_give_overflow_or_a_number_never_a_wrap)
{
    scenario s;
    int32_t st = run(&s, "arch=decoder n_layers=1048576 hidden_size=16777216 n_heads=65536 "
                         "ffn_hidden_size=67108864 vocab_size=268435456 task=pretrain "
                         "micro_batch=1048576 seq_len=67108864");
    cr_assert(st == GPUFIT_E_OVERFLOW || st == GPUFIT_OK, "status %d: %s", st, s.err.message);
    if (st == GPUFIT_E_OVERFLOW)
        cr_assert_eq(s.err.status, GPUFIT_E_OVERFLOW);
    done(&s);
    /* 10 trillion parameters with a million-token context: a right number or overflow */
    st = run(&s, "arch=generic n_params=10000000000000 task=inference context_len=1000000");
    cr_assert(st == GPUFIT_E_OVERFLOW || st == GPUFIT_OK);
    if (st == GPUFIT_OK)
        cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WEIGHTS), 20000000000000ull);
    done(&s);
}
