/* SPDX-License-Identifier: MIT */
/* Serving engines: SGLang's KV budget, vLLM's profiler by release, the framework_version and
 * cuda_version keys (docs/memory/vllm.md, sglang.md, runtime.md). Bytes by hand below. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#include <stdio.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

static uint64_t comp(run_s *s, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(s->r, 0, c, &b), GPUFIT_OK);
    return b;
}

static gpufit_role_info role0(run_s *s)
{
    gpufit_role_info ro = {.struct_size = sizeof ro};
    cr_assert_eq(gpufit_result_role(s->r, 0, &ro), GPUFIT_OK);
    return ro;
}

static int has_note(run_s *s, const char *part)
{
    for (uint32_t i = 0;; i++) {
        const char *t = NULL;
        if (gpufit_result_note(s->r, i, &t) != GPUFIT_OK)
            return 0;
        if (strstr(t, part) != NULL)
            return 1;
    }
}

/* Llama-3-8B: 8,030,261,248 parameters -> 16,060,522,496 B in bf16; 32 layers x 8 KV heads x
 * 128 x K,V x 2 B = 131,072 B of KV per token. H100 SXM5: 85,520,809,984 B = 81,559 MiB. */
#define L3_WEIGHTS UINT64_C(16060522496)
/* + SGLang's fp32 RoPE table: 8,192 positions x 128 dims x 4 B = 4,194,304 B (test_rope.c) */
#define L3_WEIGHTS_SGLANG (L3_WEIGHTS + UINT64_C(4194304))
#define L3_KV_TOKEN UINT64_C(131072)
#define H100 UINT64_C(85520809984)

/* SGLang >= 0.5.4 (server_args.py _handle_gpu_memory_settings, model_runner.py
 * profile_max_num_token) on one H100: gpu_mem 81,559 MiB -> chunked_prefill_size 8192,
 * cuda_graph_max_bs 256 (tp < 4); reserved = 512 + 1.5 x 8192 + 2 x 256 + 1 x 1 / 8 x 1024 =
 * 13,440 MiB (above the 10,240 floor) -> mem_fraction_static = round(68,119 / 81,559, 3) =
 * 0.835. Free before loading = the CUDA-visible total (85,520,809,984 less the driver's 0.5 GiB
 * reserve, server_visible) - 0.5 GiB context = 84,447,068,160; KV = 0.835 x that
 * (70,513,301,913.6 -> 70,513,301,914) - weights and RoPE table 16,064,716,800 =
 * 54,448,585,114 B = 415,409 tokens of 131,072 B (page size 1: no rounding to pages). */
Test(sglang, kv_budget_on_h100)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=sglang gpu=h100 "
                         "context_len=4096 framework_version=0.5.4"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(comp(&s, GPUFIT_MEM_WEIGHTS), L3_WEIGHTS_SGLANG);
    gpufit_role_info ro = role0(&s);
    cr_assert_eq(ro.kv_capacity_bytes, UINT64_C(54448585114));
    cr_assert_eq(ro.kv_capacity_tokens, UINT64_C(415409));
    /* CUDA graphs come out of the (1 - f) reserve: 350 MiB non-torch + 256 x 2 MiB */
    cr_assert_eq(comp(&s, GPUFIT_MEM_WORKSPACE), 350 * MIB + 512 * MIB);
    /* no profile run: no sampler warm-up in the activations, no logits term */
    cr_assert_eq(comp(&s, GPUFIT_MEM_LOGITS), 0);
    cr_assert(!has_note(&s, "assumed SGLang"));
    done(&s);
}

/* SGLang 0.5.15 (the release assumed when unset): prefill CUDA graphs are on by default from
 * 0.5.10 (c64274c7), and their reserve of 8 MiB per prefill size (server_args.py
 * reserve_for_graph_mb) joins the 2 MiB x cuda_graph_max_bs of decode. One H100, context_len
 * 4096 caps the chunk's 8192: sizes 4..32 by 4 (8), 48..256 by 16 (14), 288..512 by 32 (8),
 * 576..1024 by 64 (8), 1280..4096 by 256 (12) = 50 -> 400 MiB. reserved = 512 + 1.5 x 8192 +
 * 512 + 400 + 1 / 8 x 1024 = 13,840 MiB -> round(67,719 / 81,559, 3) = 0.830; KV = round(0.83 x
 * 84,447,068,160) - 16,064,716,800 = 70,091,066,573 - 16,064,716,800 = 54,026,349,773 B =
 * 412,188 tokens; workspace 350 + 512 + 400 MiB. Under MLA the prefill graphs reserve 1.5 GiB:
 * (81,559 - 14,976) / 81,559 -> 0.816. A vision encoder turns the prefill graphs off and
 * scales the fraction by 0.95 x clamp(1 - 0.1 x (layers x width^2 / (24 x 1024^2) - 1), 0.8,
 * 1.05): LLaVA-1.5's ViT-L/14 (24 x 1024) gives 0.835 x 0.95 = 0.79325. */
Test(sglang, defaults_follow_release_and_model)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=sglang gpu=h100 "
                         "context_len=4096"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(role0(&s).kv_capacity_bytes, UINT64_C(54026349773));
    cr_assert_eq(role0(&s).kv_capacity_tokens, UINT64_C(412188));
    cr_assert_eq(comp(&s, GPUFIT_MEM_WORKSPACE), (350 + 512 + 400) * MIB);
    cr_assert(has_note(&s, "assumed SGLang 0.5.15"));
    done(&s);
    static const struct {
        const char *spec;
        double util;
    } cases[] = {
        {"model=deepseek-v2-lite gpu=h100", 0.816},
        {"model=deepseek-v2-lite gpu=h100 framework_version=0.5.9", 0.835},
        {"model=llava-1.5-7b-hf gpu=h100", 0.79325},
        /* 20-35 GiB at tp < 4: cuda_graph_max_bs 16 in 0.5.4, 24 from 0.5.4.post1; RTX 4090
         * (24,564 MiB): (24,564 - 3,744) / 24,564 -> 0.848, then 0.847 (prefill graphs from
         * 0.5.10: + 8 x 42 sizes up to 2048 -> 0.833) */
        {"model=llama-3-8b gpu=rtx-4090 framework_version=0.5.4", 0.848},
        {"model=llama-3-8b gpu=rtx-4090 framework_version=0.5.9", 0.847},
        {"model=llama-3-8b gpu=rtx-4090", 0.833},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char spec[256];
        snprintf(spec, sizeof spec, "task=inference framework=sglang %s", cases[i].spec);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        char flags[512], want[64];
        cr_assert_eq(gpufit_result_flags(s.r, flags, sizeof flags, NULL), GPUFIT_OK);
        snprintf(want, sizeof want, "--mem-fraction-static %g", cases[i].util);
        const char *at = strstr(flags, want);
        cr_assert(at != NULL && (at[strlen(want)] == ' ' || at[strlen(want)] == '\0'), "%s: %s",
                  spec, flags);
        done(&s);
    }
}

/* SGLang before 0.5.4: mem_fraction_static 0.88 at tp 1: round(84,447,068,160 x 0.88) =
 * 74,313,419,981 - 16,064,716,800 = 58,248,703,181 B. A user fraction (0.8) wins:
 * 67,557,654,528 - 16,064,716,800 = 51,492,937,728 B. */
Test(sglang, older_release_and_user_fraction)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=sglang gpu=h100 "
                         "framework_version=0.4.0"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(role0(&s).kv_capacity_bytes, UINT64_C(58248703181));
    cr_assert(!has_note(&s, "framework_version not set"));
    done(&s);
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=sglang gpu=h100 "
                         "gpu_memory_utilization=0.8"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(role0(&s).kv_capacity_bytes, UINT64_C(51492937728));
    done(&s);
}

/* vLLM on one H100, same model and step (prompt 8192 tokens):
 * - 0.6.3 and 0.6.4 profile the same forward and sampler (V0: max_num_seqs 256; sampler 256 x
 *   128,256 x 38 + (8192 + 512) x 4096 x 2 = 1,318,977,536 B, above the forward layer's
 *   2 x 8192 x 3 x 14336 + 3 x 2 x 8192 x 4096 = 905,969,664 B); 0.6.3 also subtracts the
 *   CUDA context (worker.py determine_num_available_blocks): exactly 0.5 GiB less KV.
 * - 0.19: max_num_seqs 1024 and 6 B per logit (no top-k/top-p in the profile):
 *   1024 x 128,256 x 6 + (8192 + 2048) x 4096 x 2 = 871,911,424 B < 905,969,664, so the
 *   forward layer is the peak: 1,318,977,536 - 905,969,664 = 413,007,872 B more KV than 0.6.4. */
Test(vllm, budget_by_release)
{
    static const char *base = "model=llama-3-8b task=inference framework=vllm gpu=h100 ";
    char spec[256];
    uint64_t kv[3], act[3];
    static const char *const ver[3] = {"0.6.3", "0.6.4", "0.19"};
    for (int i = 0; i < 3; i++) {
        run_s s;
        snprintf(spec, sizeof spec, "%sframework_version=%s", base, ver[i]);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
        kv[i] = role0(&s).kv_capacity_bytes;
        act[i] = comp(&s, GPUFIT_MEM_ACTIVATIONS);
        cr_assert_eq(has_note(&s, "assumed vLLM"), 0, "%s", ver[i]);
        done(&s);
    }
    cr_assert_eq(act[0], UINT64_C(1318977536));
    cr_assert_eq(act[1], UINT64_C(1318977536));
    cr_assert_eq(act[2], UINT64_C(905969664));
    cr_assert_eq(kv[1] - kv[0], GIB / 2);
    cr_assert_eq(kv[2] - kv[1], UINT64_C(413007872));
}

/* Text releases: major x 1000000 + minor x 1000 + patch. */
Test(version_text, parse_and_reject)
{
    static const struct {
        const char *text;
        int64_t v;
    } ok[] = {{"0.6.3", 6003}, {"0.19", 19000}, {"v1.2.3", 1002003}, {"12", 12000000},
              {"current", 0},  {"auto", 0},     {"999.999.999", 999999999}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        gpufit_job *j = NULL;
        gpufit_model *m = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        char spec[64];
        int64_t got = -1;
        cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
        cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
        snprintf(spec, sizeof spec, "framework_version=%s", ok[i].text);
        cr_assert_eq(gpufit_apply_spec(NULL, j, spec, &err), GPUFIT_OK, "%s: %s", spec,
                     err.message);
        cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_FRAMEWORK_VERSION, &got, NULL), GPUFIT_OK);
        cr_assert_eq(got, ok[i].v, "%s -> %lld", ok[i].text, (long long)got);
        snprintf(spec, sizeof spec, "{\"cuda_version\": \"%s\"}", ok[i].text);
        cr_assert_eq(gpufit_apply_json(m, j, spec, strlen(spec), &err), GPUFIT_OK, "%s: %s",
                     spec, err.message);
        cr_assert_eq(gpufit_job_get_int(j, GPUFIT_JOB_CUDA_VERSION, &got, NULL), GPUFIT_OK);
        cr_assert_eq(got, ok[i].v);
        gpufit_job_free(j);
        gpufit_model_free(m);
    }
    static const char *const bad[] = {"framework_version=0.x",     "framework_version=1.2.3.4",
                                      "framework_version=0.1234",
                                      "framework_version=1.",      "framework_version=.5",
                                      "cuda_version=12.x",         "cuda_version=-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpufit_job *j = NULL;
        gpufit_error err = GPUFIT_ERROR_INIT;
        cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
        int32_t st = gpufit_apply_spec(NULL, j, bad[i], &err);
        cr_assert_eq(st, GPUFIT_E_INVALID_ARG, "%s: %d", bad[i], st);
        cr_assert(err.param == GPUFIT_JOB_FRAMEWORK_VERSION || err.param == GPUFIT_JOB_CUDA_VERSION,
                  "%s names param %d", bad[i], err.param);
        gpufit_job_free(j);
    }
    /* empty text: a spec's "key=" is a syntax error (GPUFIT_E_PARSE); JSON's "" has no value */
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    gpufit_error err = GPUFIT_ERROR_INIT;
    static const char empty[] = "{\"framework_version\": \"\"}";
    cr_assert_eq(gpufit_model_new(&m, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, NULL), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_json(m, j, empty, strlen(empty), &err), GPUFIT_E_INVALID_ARG,
                 "%s", err.message);
    cr_assert_eq(err.param, GPUFIT_JOB_FRAMEWORK_VERSION);
    cr_assert_eq(gpufit_apply_spec(m, j, "framework_version=", &err), GPUFIT_E_PARSE);
    gpufit_job_free(j);
    gpufit_model_free(m);
}

/* framework_version does not apply to frameworks without modelled releases. */
Test(version_text, framework_version_needs_a_server)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=pytorch framework_version=0.6.3"),
                 GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_FRAMEWORK_VERSION);
    cr_assert(strstr(s.err.message, "framework_version") != NULL);
    done(&s);
}

/* CUDA context by era: PyTorch loads lazily from CUDA 11.7 (it sets CUDA_MODULE_LOADING=LAZY
 * since 1.13): 0.5 GiB; 11.6 loads every kernel image: 1 GiB. llama.cpp relies on CUDA's own
 * default, lazy from 12.2: 300 MiB at 12.2, 1 GiB at 12.1. An explicit size wins. */
Test(cuda_version, context_follows_the_era)
{
    static const struct {
        const char *spec;
        uint64_t ctx;
    } cases[] = {
        {"framework=pytorch", GIB / 2},
        {"framework=pytorch cuda_version=11.7", GIB / 2},
        {"framework=pytorch cuda_version=11.6", GIB},
        {"framework=vllm cuda_version=11.8", GIB / 2},
        {"framework=llamacpp cuda_version=12.2", 300 * MIB},
        {"framework=llamacpp cuda_version=12.1", GIB},
        {"framework=llamacpp", 300 * MIB},
        {"framework=pytorch cuda_version=11.0 cuda_context_bytes=123456", 123456},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_s s;
        char spec[256];
        snprintf(spec, sizeof spec, "model=llama-3-8b task=inference gpu=h100 %s",
                 cases[i].spec);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        cr_assert_eq(comp(&s, GPUFIT_MEM_RUNTIME_CONTEXT), cases[i].ctx, "%s", spec);
        done(&s);
    }
}

/* vLLM <= 0.6.3 counts the context in its budget, so an older CUDA lowers its KV too. */
Test(cuda_version, old_vllm_budget_sees_the_context)
{
    run_s a, b;
    cr_assert_eq(run(&a, "model=llama-3-8b task=inference framework=vllm gpu=h100 "
                         "framework_version=0.5.0"),
                 GPUFIT_OK);
    cr_assert_eq(run(&b, "model=llama-3-8b task=inference framework=vllm gpu=h100 "
                         "framework_version=0.5.0 cuda_version=11.6"),
                 GPUFIT_OK);
    cr_assert_eq(role0(&a).kv_capacity_bytes - role0(&b).kv_capacity_bytes, GIB / 2);
    done(&a);
    done(&b);
}

/* The CUDA-visible total a server budgets from (server_visible, docs/memory/vllm.md): the same
 * vLLM 0.19 job (util 0.9) on an H100 (nvidia-smi 85,520,809,984 B, not a whole number of GiB:
 * a 0.5 GiB reserve, 84,983,939,072 visible) and on a device that reports a whole 80 GiB (1 % reserve:
 * 85,899,345,920 - 858,993,459 = 85,040,352,461 visible). Every other term is the same, so the
 * budgets differ by round(0.9 x 85,040,352,461) - round(0.9 x 84,983,939,072) =
 * 76,536,317,215 - 76,485,545,165 = 50,772,050 B. At the band's optimistic end the H100's
 * reserve is 0 (the KV budget grows by round(0.9 x 2^29) = 483,183,821 B with that term alone),
 * at the pessimistic end 0.75 GiB (0.25 GiB more than the point: 241,591,910 B less). */
Test(vllm, visible_total_and_driver_reserve)
{
    run_s s;
    const char *job = "model=llama-3-8b task=inference framework=vllm context_len=4096 gpu=h100 "
                      "framework_version=0.19";
    char spec[256];
    cr_assert_eq(run(&s, job), GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info h = role0(&s);
    done(&s);
    snprintf(spec, sizeof spec, "%s gpu_memory_bytes=%llu", job, (unsigned long long)(80 * GIB));
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info w = role0(&s);
    done(&s);
    cr_assert_eq(w.kv_capacity_bytes - h.kv_capacity_bytes, UINT64_C(50772050));
    cr_assert_geq(h.kv_capacity_high_bytes - h.kv_capacity_bytes, UINT64_C(483183821));
    cr_assert_geq(h.kv_capacity_bytes - h.kv_capacity_low_bytes, UINT64_C(241591910));
}

/* vLLM's CUDA graphs (policy.c vllm_graphs, mem_inference.c gpufit__vllm_graph_bytes;
 * docs/memory/vllm.md "CUDA graphs"), Llama-3-8B on one H100, prompt (max_num_batched_tokens)
 * 8192, max_num_seqs 1024 (>= 70 GiB). One layer's transients over T tokens (bf16, tp 1):
 * max(QKV 2T(4096 + 2 x 1024), FFN 2T x 3 x 14336) + 3 x 2T x 4096 = 110,592 T B. The graphs
 * themselves: 280 KiB (286,720 B; low 96 KiB, high 450 KiB) per layer and captured size.
 * - 0.19: T = min(2 x 1024, 512) = 512; sizes 1, 2, 4, 8..248 by 8, 256..512 by 16 = 51
 *   piecewise and 51 full (all <= max_num_seqs): 32 x 102 x 286,720 = 935,854,080 + 56,623,104
 *   = 992,477,184 B, in the workspaces beside the 350 MiB non-torch point; captured after the
 *   budget, so they leave the KV cache as it was (budget_by_release) and the device holds
 *   util x total + the context + them:
 *   round(0.9 x 84,983,939,072) + 992,477,184 + 2^29 = 78,014,893,261 B.
 * - 0.21: the budget pays for them (PR #38284) at util 0.92: round(0.92 x 84,983,939,072) =
 *   78,185,223,946, 1,699,678,781 B more than 0.9's, less 992,477,184 = 707,201,597 B more KV
 *   than 0.19; the device holds the budget + the context = 78,722,094,858 B.
 * - 0.27: a dense model runs on Model Runner V2, whose budget pays for none: 1,699,678,781 B
 *   more KV than 0.19.
 * - 0.6.4 (V0, max_num_seqs 256): decode graphs of 1, 2, 4, 8..256 = 35 sizes at T = 256:
 *   32 x 35 x 286,720 + 28,311,552 = 349,437,952 B.
 * - 0.2.5: none (graphs came with 0.2.6, PR #1926).
 * - 0.19 with prompt_len 300: T = 300; sizes 1, 2, 4, 8..248, 256, 272, 288 and 300 itself
 *   (max_num_batched_tokens is captured) = 38, twice: 32 x 76 x 286,720 + 33,177,600 =
 *   730,480,640 B. */
Test(vllm, cuda_graphs_by_release)
{
    static const struct {
        const char *ver;
        uint64_t graphs;
    } cases[] = {{"0.2.5", 0},
                 {"0.6.4", UINT64_C(349437952)},
                 {"0.19", UINT64_C(992477184)},
                 {"0.21", UINT64_C(992477184)},
                 {"0.27", UINT64_C(992477184)},
                 {"0.19 prompt_len=300", UINT64_C(730480640)}};
    uint64_t kv[6], used[6];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_s s;
        char spec[256];
        snprintf(spec, sizeof spec,
                 "model=llama-3-8b task=inference framework=vllm gpu=h100 framework_version=%s",
                 cases[i].ver);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        cr_assert_eq(comp(&s, GPUFIT_MEM_WORKSPACE), 350 * MIB + cases[i].graphs, "%s", spec);
        gpufit_role_info ro = role0(&s);
        kv[i] = ro.kv_capacity_bytes;
        used[i] = ro.device_used_bytes;
        done(&s);
    }
    cr_assert_eq(used[2], UINT64_C(78014893261));
    cr_assert_eq(kv[3] - kv[2], UINT64_C(707201597));
    /* workspace_bytes of the user's (enforce_eager's non-torch memory, say) holds them all */
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=vllm gpu=h100 "
                         "workspace_bytes=123456789"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(comp(&s, GPUFIT_MEM_WORKSPACE), UINT64_C(123456789));
    done(&s);
    cr_assert_eq(used[3], UINT64_C(78722094858));
    cr_assert_eq(kv[4] - kv[2], UINT64_C(1699678781));
}

/* The graphs' band: 250 MiB + 3,264 x 96 KiB + 56,623,104 = 639,631,360 B low, 700 MiB + 3,264
 * x 450 KiB + 56,623,104 = 2,294,677,504 B high (0.19 above). A MoE model keeps the V1 runner,
 * whose budget pays for them, in 0.27 as in 0.21; 0.22-0.24 run some dense families on V2: the
 * optimistic end of the KV cache leaves them unpaid, so its band reaches higher than 0.21's. */
Test(vllm, cuda_graphs_band_and_runner)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=vllm gpu=h100 "
                         "framework_version=0.19"),
                 GPUFIT_OK, "%s", s.err.message);
    uint64_t lo = 0, hi = 0;
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_WORKSPACE, &lo, &hi), GPUFIT_OK);
    cr_assert_eq(lo, UINT64_C(639631360));
    cr_assert_eq(hi, UINT64_C(2294677504));
    done(&s);
    uint64_t kv[2], band[2];
    static const char *const moe[2] = {"0.21", "0.27"};
    for (int i = 0; i < 2; i++) {
        char spec[256];
        snprintf(spec, sizeof spec,
                 "model=mixtral-8x7b task=inference framework=vllm gpu=h100 weight_dtype=fp8 "
                 "framework_version=%s",
                 moe[i]);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        kv[i] = role0(&s).kv_capacity_bytes;
        done(&s);
    }
    cr_assert_eq(kv[0], kv[1]);
    static const char *const dense[2] = {"0.21", "0.23"};
    for (int i = 0; i < 2; i++) {
        char spec[256];
        snprintf(spec, sizeof spec,
                 "model=llama-3-8b task=inference framework=vllm gpu=h100 framework_version=%s",
                 dense[i]);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        gpufit_role_info ro = role0(&s);
        kv[i] = ro.kv_capacity_bytes;
        band[i] = ro.kv_capacity_high_bytes;
        done(&s);
    }
    cr_assert_eq(kv[0], kv[1]);
    cr_assert_gt(band[1], band[0]);
    /* B200 (compute capability 10) from 0.28: up to 1024 tokens, 3 + 31 + 49 = 83 sizes twice:
     * 32 x 166 x 286,720 + 110,592 x 1024 = 1,636,302,848 B; 0.27 there: 0.19's H100 figure */
    static const struct {
        const char *ver;
        uint64_t graphs;
    } b200[2] = {{"0.27", UINT64_C(992477184)}, {"0.28", UINT64_C(1636302848)}};
    for (int i = 0; i < 2; i++) {
        char spec[256];
        snprintf(spec, sizeof spec,
                 "model=llama-3-8b task=inference framework=vllm gpu=b200 framework_version=%s",
                 b200[i].ver);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        cr_assert_eq(comp(&s, GPUFIT_MEM_WORKSPACE), 350 * MIB + b200[i].graphs, "%s", spec);
        done(&s);
    }
}

/* With the release unset (0.27 assumed), the KV budget's pessimistic end also profiles the
 * sorting sampler of releases before 0.17: Llama-3-8B on one H100, 1024 rows x 128,256 x 38 B
 * + (8192 + 2048) x 4096 x 2 B = 5,074,583,552 B, 4,168,613,888 above the point's profile
 * (the forward layer's 905,969,664 B), the largest single change; a named release has none. */
Test(vllm, assumed_release_profiles_the_older_sampler_too)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=vllm gpu=h100"), GPUFIT_OK,
                 "%s", s.err.message);
    gpufit_role_info ro = role0(&s);
    cr_assert_eq(comp(&s, GPUFIT_MEM_ACTIVATIONS), UINT64_C(905969664));
    cr_assert_eq(ro.kv_capacity_bytes - ro.kv_capacity_low_bytes, UINT64_C(4168613888));
    done(&s);
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=vllm gpu=h100 "
                         "framework_version=0.27"),
                 GPUFIT_OK, "%s", s.err.message);
    ro = role0(&s);
    cr_assert_eq(ro.kv_capacity_bytes - ro.kv_capacity_low_bytes, 350 * MIB);
    done(&s);
}
