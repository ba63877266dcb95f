/* SPDX-License-Identifier: MIT */
/* The band and the three-way verdict (docs/band.md): exact terms have no width, the stack
 * terms span their documented ranges (lib/plan/policy.c gpufit__stack, GPUFIT__FRAG_*), bytes by
 * hand; the verdict at each side of the band; older struct sizes. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

/* round-half-up of v x f, as the library rounds a fraction of bytes */
static uint64_t frac(uint64_t v, double f)
{
    double x = (double)v * f;
    uint64_t t = (uint64_t)x;
    return t + (x - (double)t >= 0.5);
}

/* expandable_segments=1: the allocator's block rests are out of these tests
 * (test_block_slack.c: Llama-3-8B's 8 MiB K and V matrices may each keep up to 1 MiB) */
#define INFER "model=llama-3-8b task=inference context_len=8192 expandable_segments=1 "

Test(band, exact_terms_have_no_width)
{
    run_s s;
    /* accumulation (global_batch 2): the gradients are held from the first micro-batch, so
     * they have no band either (test_optimizer_step.c: without it, PyTorch >= 2.0 frees them);
     * the Trainer holds no logits through backward (test_held_logits.c: auto has a band);
     * expandable segments keep no block rests (test_block_slack.c) */
    cr_assert_eq(run(&s, "model=llama-3-8b task=lora gpu=rtx-4090 micro_batch=1 seq_len=2048 "
                         "precision=bf16 global_batch=2 trainer=hf expandable_segments=1"),
                 GPUFIT_OK, "%s", s.err.message);
    static const int32_t exact[] = {GPUFIT_MEM_WEIGHTS, GPUFIT_MEM_GRADIENTS,
                                    GPUFIT_MEM_OPTIMIZER_STATES, GPUFIT_MEM_MASTER_WEIGHTS,
                                    GPUFIT_MEM_ACTIVATIONS, GPUFIT_MEM_LOGITS};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        uint64_t lo, hi, b = bytes0(&s, exact[i]);
        band0(&s, exact[i], &lo, &hi);
        cr_assert(lo == b && hi == b, "component %d", (int)exact[i]);
    }
    /* cuBLAS workspaces (PyTorch's CublasHandlePool sizes): 8,519,680 B per handle-stream
     * before compute capability 9; training counts the backward's second one, which PyTorch
     * 2.2-2.3 builds with CUDA >= 12.2 do not: the low end holds one */
    uint64_t lo, hi;
    band0(&s, GPUFIT_MEM_WORKSPACE, &lo, &hi);
    cr_assert_eq(bytes0(&s, GPUFIT_MEM_WORKSPACE), 2 * 8519680ull);
    cr_assert_eq(hi, 2 * 8519680ull);
    cr_assert_eq(lo, 8519680ull);
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, 0, &lo, &hi), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_result_bytes_band(s.r, 9, 1, &lo, &hi), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, 1, NULL, &hi), GPUFIT_E_INVALID_ARG);
    done(&s);
}

/* The workspaces are exact where the handle count does not depend on the release: inference
 * (one), Megatron (three, as its CUBLAS_WORKSPACE_CONFIG gives), or given by the user. */
Test(band, workspaces_exact_outside_pytorch_training)
{
    static const char *const specs[] = {
        INFER "gpu=h100",
        "model=llama-3-8b task=pretrain gpu=h100 micro_batch=1 seq_len=2048 framework=megatron",
        "model=llama-3-8b task=lora gpu=h100 micro_batch=1 seq_len=2048 workspace_bytes=1000000",
    };
    static const uint64_t want[] = {32ull << 20, 3 * (32ull << 20), 1000000};
    for (int i = 0; i < 3; i++) {
        run_s s;
        cr_assert_eq(run(&s, specs[i]), GPUFIT_OK, "%s", s.err.message);
        uint64_t lo, hi;
        band0(&s, GPUFIT_MEM_WORKSPACE, &lo, &hi);
        cr_assert_eq(bytes0(&s, GPUFIT_MEM_WORKSPACE), want[i], "%s", specs[i]);
        cr_assert(lo == want[i] && hi == want[i], "%s", specs[i]);
        done(&s);
    }
}

/* PyTorch inference: CUDA context 300-600 MiB around 512 MiB (lazy loading), allocator slack
 * 0.10-0.35 of the dynamic bytes (activations, logits, KV cache) around 0.25. */
Test(band, stack_terms_by_hand)
{
    run_s s;
    cr_assert_eq(run(&s, INFER "gpu=rtx-4090"), GPUFIT_OK, "%s", s.err.message);
    uint64_t lo, hi;
    band0(&s, GPUFIT_MEM_RUNTIME_CONTEXT, &lo, &hi);
    cr_assert_eq(bytes0(&s, GPUFIT_MEM_RUNTIME_CONTEXT), 512 * MIB);
    cr_assert_eq(lo, 300 * MIB);
    cr_assert_eq(hi, 600 * MIB);
    uint64_t dynamic = bytes0(&s, GPUFIT_MEM_ACTIVATIONS) + bytes0(&s, GPUFIT_MEM_LOGITS) +
                       bytes0(&s, GPUFIT_MEM_KV_CACHE);
    band0(&s, GPUFIT_MEM_FRAGMENTATION, &lo, &hi);
    cr_assert_eq(bytes0(&s, GPUFIT_MEM_FRAGMENTATION), frac(dynamic, 0.25));
    cr_assert_eq(lo, frac(dynamic, 0.10));
    cr_assert_eq(hi, frac(dynamic, 0.35));
    /* the totals move by exactly those differences */
    gpufit_role_info ro = role(&s, 0);
    cr_assert_eq(ro.peak_allocated_low_bytes, ro.peak_allocated_bytes);
    cr_assert_eq(ro.peak_allocated_high_bytes, ro.peak_allocated_bytes);
    cr_assert_eq(ro.peak_reserved_low_bytes, ro.peak_allocated_bytes + frac(dynamic, 0.10));
    cr_assert_eq(ro.peak_reserved_high_bytes, ro.peak_allocated_bytes + frac(dynamic, 0.35));
    cr_assert_eq(ro.device_used_low_bytes, ro.peak_reserved_low_bytes + 300 * MIB);
    cr_assert_eq(ro.device_used_high_bytes, ro.peak_reserved_high_bytes + 600 * MIB);
    /* the KV room left on the card shrinks as the rest grows */
    cr_assert_eq(ro.kv_capacity_high_bytes - ro.kv_capacity_bytes,
                 ro.device_used_bytes - ro.device_used_low_bytes);
    cr_assert_eq(ro.kv_capacity_bytes - ro.kv_capacity_low_bytes,
                 ro.device_used_high_bytes - ro.device_used_bytes);
    done(&s);
}

/* Values the user gives are their stack's own: no band. */
Test(band, given_values_have_no_width)
{
    run_s s;
    cr_assert_eq(run(&s, INFER "gpu=rtx-4090 cuda_context_bytes=400MiB fragmentation=0.2"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info ro = role(&s, 0);
    cr_assert_eq(ro.device_used_low_bytes, ro.device_used_bytes);
    cr_assert_eq(ro.device_used_high_bytes, ro.device_used_bytes);
    done(&s);
}

/* NCCL: one communicator per parallel group (Megatron tp, pp, dp: 3), 256 MiB-1 GiB each
 * around 0.6 GiB (NVIDIA/nccl issue #964; docs/memory/runtime.md). */
Test(band, nccl_per_communicator)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=4 zero=1 "
                         "precision=bf16 framework=megatron micro_batch=1 seq_len=4096 "
                         "global_batch=64"),
                 GPUFIT_OK, "%s", s.err.message);
    uint64_t lo, hi;
    band0(&s, GPUFIT_MEM_COMM_BUFFERS, &lo, &hi);
    cr_assert_eq(bytes0(&s, GPUFIT_MEM_COMM_BUFFERS), 3 * (GIB * 6 / 10));
    cr_assert_eq(lo, 3 * 256 * MIB);
    /* H100 (NVSwitch): NVLS buffers at the high end, 192 MiB for each GPU of the tp group (8)
     * and of the data-parallel group (4); pipeline send/recv has none (test_nvls.c) */
    cr_assert_eq(hi, 3 * GIB + 12 * 192 * MIB);
    done(&s);
}

/* vLLM: the KV budget is what the rest leaves; the non-torch term spans 250-700 MiB around
 * 350 MiB, so the budget spans 350 MiB less to 100 MiB more (no NCCL at tp = 1; a dense model's
 * CUDA graphs come on top of the budget in 0.27). */
Test(band, server_kv_budget)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3.1-8b task=inference framework=vllm gpu=rtx-3090 "
                         "context_len=20000 framework_version=0.27"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info ro = role(&s, 0);
    cr_assert_eq(ro.kv_capacity_high_bytes - ro.kv_capacity_bytes, 100 * MIB);
    cr_assert_eq(ro.kv_capacity_bytes - ro.kv_capacity_low_bytes, 350 * MIB);
    uint64_t lo, hi;
    band0(&s, GPUFIT_MEM_KV_CACHE, &lo, &hi);
    cr_assert(lo == ro.kv_capacity_low_bytes && hi == ro.kv_capacity_high_bytes);
    /* the device holds context + budget either way */
    cr_assert(ro.device_used_low_bytes <= ro.device_used_bytes);
    cr_assert(ro.device_used_bytes <= ro.device_used_high_bytes);
    done(&s);
}

/* With the release unset, gpufit assumes 0.27, and the KV budget's pessimistic end takes, one
 * term at a time, what older releases did (the band is the point less the largest change):
 * - gpu_memory_utilization 0.9 before 0.21 (0.92 since). RTX 3090: 25,769,803,776 B, a whole
 *   number of GiB: the reserve is max(0.4 GiB, 1 %) = 429,496,729 B at the point
 *   (25,340,307,047 visible) and max(0.5 GiB, 1.1 %) = 536,870,912 at the high end
 *   (25,232,932,864 visible): round(0.92 x 25,340,307,047) - round(0.9 x 25,232,932,864) =
 *   23,313,082,483 - 22,709,639,578 = 603,442,905 B less KV;
 * - the sorting sampler of releases before 0.17: 256 rows x 128,256 x (38 - 6) B =
 *   1,050,673,152 more, of which 413,020,160 above the forward layer's 905,969,664 B peak;
 * - the CUDA graphs paid by the budget in 0.21-0.24 (a dense model; 0.27 runs it on Model
 *   Runner V2, which pays none), at their high end with the non-torch term's: 350 MiB + 32
 *   layers x 86 sizes x 450 KiB + 56,623,104 B of pool = 1,691,746,304 B less: the largest. */
Test(band, server_budget_of_an_assumed_release)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3.1-8b task=inference framework=vllm gpu=rtx-3090 "
                         "context_len=20000"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info ro = role(&s, 0);
    cr_assert_eq(ro.kv_capacity_high_bytes - ro.kv_capacity_bytes, 100 * MIB);
    cr_assert_eq(ro.kv_capacity_bytes - ro.kv_capacity_low_bytes, UINT64_C(1691746304));
    done(&s);
}

/* SGLang with the release unset: the fraction's band spans the releases' rules gpufit models,
 * here 0.830 (0.5.15, the point) to 0.88 (before 0.5.4, tp 1). One H100, context_len 4096:
 * the optimistic end's total has no driver reserve (85,520,809,984 B), less the 0.5 GiB
 * context: round(0.88 x 84,983,939,072) - 16,064,716,800 B of weights and RoPE table =
 * 58,721,149,583 B, 4,694,799,810 above the point's 54,026,349,773 (test_serving.c); at
 * 0.5.15 the same end is the reserve alone: round(0.83 x 84,983,939,072) - 54,026,349,773 -
 * 16,064,716,800 = 445,602,857 B. */
Test(band, sglang_fraction_of_an_assumed_release)
{
    run_s s;
    static const char *const ver[2] = {"", "framework_version=0.5.15"};
    static const uint64_t up[2] = {UINT64_C(4694799810), UINT64_C(445602857)};
    for (int i = 0; i < 2; i++) {
        char spec[256];
        snprintf(spec, sizeof spec,
                 "model=llama-3-8b task=inference framework=sglang gpu=h100 context_len=4096 %s",
                 ver[i]);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
        gpufit_role_info ro = role(&s, 0);
        cr_assert_eq(ro.kv_capacity_bytes, UINT64_C(54026349773));
        cr_assert_eq(ro.kv_capacity_high_bytes - ro.kv_capacity_bytes, up[i], "%s", spec);
        done(&s);
    }
}

static int32_t verdict_at(uint64_t cap, gpufit_summary *out)
{
    run_s s;
    char spec[160];
    snprintf(spec, sizeof spec, INFER "gpu_memory_bytes=%llu", (unsigned long long)cap);
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
    *out = (gpufit_summary){.struct_size = sizeof *out};
    cr_assert_eq(gpufit_result_summary(s.r, out), GPUFIT_OK);
    done(&s);
    return out->verdict;
}

/* fits when the high end fits, oom when even the low end does not, marginal in between */
Test(band, verdict_at_each_side)
{
    gpufit_summary s0;
    run_s s;
    cr_assert_eq(run(&s, INFER), GPUFIT_OK);
    cr_assert_eq(gpufit_result_summary(s.r, &(gpufit_summary){.struct_size = sizeof s0}),
                 GPUFIT_OK);
    s0 = (gpufit_summary){.struct_size = sizeof s0};
    gpufit_result_summary(s.r, &s0);
    cr_assert_eq(s0.verdict, GPUFIT_VERDICT_UNKNOWN); /* no GPU */
    uint64_t lo = s0.peak_low_bytes, pt = s0.peak_bytes, hi = s0.peak_high_bytes;
    done(&s);
    cr_assert(lo < pt && pt < hi);
    gpufit_summary x;
    cr_assert_eq(verdict_at(hi, &x), GPUFIT_VERDICT_FITS);
    cr_assert_eq(x.fits, 1);
    cr_assert_eq(verdict_at(hi - 1, &x), GPUFIT_VERDICT_MARGINAL);
    cr_assert_eq(x.fits, 1); /* the point estimate still fits */
    cr_assert_eq(verdict_at(pt - 1, &x), GPUFIT_VERDICT_MARGINAL);
    cr_assert_eq(x.fits, 0);
    cr_assert_eq(verdict_at(lo, &x), GPUFIT_VERDICT_MARGINAL);
    cr_assert_eq(verdict_at(lo - 1, &x), GPUFIT_VERDICT_OOM);
    cr_assert_eq(x.peak_low_bytes, lo);
    cr_assert_eq(x.peak_high_bytes, hi);
}

/* A caller compiled before the band fields passes a smaller struct: filled up to its size. */
Test(band, older_struct_sizes)
{
    run_s s;
    cr_assert_eq(run(&s, INFER "gpu=rtx-4090"), GPUFIT_OK);
    gpufit_summary old;
    memset(&old, 0xAB, sizeof old);
    old.struct_size = (uint32_t)offsetof(gpufit_summary, verdict);
    cr_assert_eq(gpufit_result_summary(s.r, &old), GPUFIT_OK);
    cr_assert_eq(old.struct_size, offsetof(gpufit_summary, verdict));
    cr_assert_eq(old.fits, 1);
    cr_assert_eq((uint32_t)old.verdict, 0xABABABABu); /* beyond its size: untouched */
    old.struct_size = (uint32_t)offsetof(gpufit_summary, verdict) - 4;
    cr_assert_eq(gpufit_result_summary(s.r, &old), GPUFIT_E_STRUCT_SIZE);
    /* the allocation-free path follows the same rule */
    gpufit_summary fast;
    memset(&fast, 0xAB, sizeof fast);
    fast.struct_size = (uint32_t)offsetof(gpufit_summary, verdict);
    cr_assert_eq(gpufit_evaluate_summary(s.m, s.j, &fast, NULL), GPUFIT_OK);
    cr_assert_eq(fast.peak_bytes, old.peak_bytes);
    cr_assert_eq((uint32_t)fast.verdict, 0xABABABABu);
    gpufit_role_info ro;
    memset(&ro, 0xAB, sizeof ro);
    ro.struct_size = (uint32_t)offsetof(gpufit_role_info, peak_allocated_low_bytes);
    cr_assert_eq(gpufit_result_role(s.r, 0, &ro), GPUFIT_OK);
    cr_assert_eq(ro.struct_size, offsetof(gpufit_role_info, peak_allocated_low_bytes));
    cr_assert_eq(ro.device_used_low_bytes, 0xABABABABABABABABull);
    ro = role(&s, 0);
    cr_assert_eq(ro.verdict, GPUFIT_VERDICT_FITS);
    done(&s);
}

/* The operator's safety margin (docs/band.md): the verdict checks capacity less the margin. */
Test(band, margin)
{
    gpufit_summary x;
    run_s s;
    cr_assert_eq(run(&s, INFER), GPUFIT_OK);
    gpufit_summary s0 = {.struct_size = sizeof s0};
    gpufit_result_summary(s.r, &s0);
    uint64_t hi = s0.peak_high_bytes;
    done(&s);
    cr_assert_eq(verdict_at(hi, &x), GPUFIT_VERDICT_FITS);
    /* one byte of margin_bytes makes the same card marginal; headroom is above the margin */
    char spec[200];
    snprintf(spec, sizeof spec, INFER "gpu_memory_bytes=%llu margin_bytes=1",
             (unsigned long long)hi);
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
    x = (gpufit_summary){.struct_size = sizeof x};
    gpufit_result_summary(s.r, &x);
    cr_assert_eq(x.verdict, GPUFIT_VERDICT_MARGINAL);
    cr_assert_eq(x.capacity_bytes, hi); /* the card's own capacity is reported */
    cr_assert_eq(x.headroom_bytes, (int64_t)(hi - 1) - (int64_t)x.peak_bytes);
    done(&s);
    /* a share: capacity x (1 - 0.2) must hold the high end: cap = hi / 0.8 (+1 for rounding) */
    uint64_t cap = (uint64_t)((double)hi / 0.8) + 2;
    snprintf(spec, sizeof spec, INFER "gpu_memory_bytes=%llu margin=0.2", (unsigned long long)cap);
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
    x = (gpufit_summary){.struct_size = sizeof x};
    gpufit_result_summary(s.r, &x);
    cr_assert_eq(x.verdict, GPUFIT_VERDICT_FITS);
    done(&s);
    snprintf(spec, sizeof spec, INFER "gpu_memory_bytes=%llu margin=0.25", (unsigned long long)cap);
    cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
    x = (gpufit_summary){.struct_size = sizeof x};
    gpufit_result_summary(s.r, &x);
    cr_assert_neq(x.verdict, GPUFIT_VERDICT_FITS);
    done(&s);
    /* both at once: an error naming margin_bytes */
    cr_assert_eq(run(&s, INFER "gpu=h100 margin=0.1 margin_bytes=1GiB"), GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_MARGIN_BYTES);
    done(&s);
}

/* --max respects the margin: a larger margin never allows a longer context. */
Test(band, max_fitting_respects_margin)
{
    int64_t v[2];
    static const char *const specs[] = {INFER "gpu=rtx-4090", INFER "gpu=rtx-4090 margin=0.1"};
    for (int k = 0; k < 2; k++) {
        run_s s;
        cr_assert_eq(run(&s, specs[k]), GPUFIT_OK);
        cr_assert_eq(gpufit_max_fitting(s.m, s.j, GPUFIT_JOB_CONTEXT_LEN, &v[k], NULL), GPUFIT_OK);
        done(&s);
    }
    cr_assert(v[0] > v[1] && v[1] > 0, "%lld vs %lld", (long long)v[0], (long long)v[1]);
}

/* The CUDA release is not given: PyTorch, DeepSpeed and Megatron still run on CUDA < 11.7 on
 * GPUs before Ada (eager module loading, up to 1434 MiB: docs/memory/runtime.md), so the
 * context's band spans 300 MiB (lazy, low) to 1434 MiB (eager, high) around the lazy 512 MiB.
 * A given release, an fp8 GPU (CUDA >= 11.8) or a serving engine (CUDA >= 11.8) narrows it. */
Test(band, unknown_cuda_release_spans_eager_loading)
{
    static const struct {
        const char *spec;
        uint64_t lo, hi;
    } cases[] = {
        {"model=llama-3-8b task=lora gpu=a100-80gb micro_batch=1 seq_len=512", 300 * MIB,
         1434 * MIB},
        {"model=llama-3-8b task=lora gpu=v100-32gb micro_batch=1 seq_len=512 framework=deepspeed",
         300 * MIB, 1434 * MIB},
        {"model=llama-3-8b task=lora gpu=a100-80gb micro_batch=1 seq_len=512 cuda_version=12.4",
         300 * MIB, 600 * MIB},
        {"model=llama-3-8b task=lora gpu=h100 micro_batch=1 seq_len=512", 300 * MIB, 600 * MIB},
        {"model=llama-3-8b task=inference gpu=a100-80gb context_len=4096 framework=vllm",
         300 * MIB, 600 * MIB},
        /* an old CUDA: eager loading is the point, its own range */
        {"model=llama-3-8b task=lora gpu=a100-80gb micro_batch=1 seq_len=512 cuda_version=11.6",
         900 * MIB, 1434 * MIB},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_s s;
        cr_assert_eq(run(&s, cases[i].spec), GPUFIT_OK, "%s: %s", cases[i].spec, s.err.message);
        uint64_t lo, hi;
        band0(&s, GPUFIT_MEM_RUNTIME_CONTEXT, &lo, &hi);
        cr_assert(lo == cases[i].lo && hi == cases[i].hi, "%s: [%llu, %llu] MiB", cases[i].spec,
                  (unsigned long long)(lo / MIB), (unsigned long long)(hi / MIB));
        done(&s);
    }
}

/* A GGUF file type named without its file: the recipe's per-tensor bumps vary by quantiser
 * (imatrix, --output-tensor-type, forks, custom mixes), so the weights span [every 2-D tensor
 * at the mix's base type, the llama-quant.cpp recipe] (lib/memory/mem_weights.c). Llama-3-8B
 * at Q4_K: 32 x 218,103,808 + 525,336,576 (output) = 7,504,658,432 2-D elements at 144 B per
 * 256, plus 1-D norms in fp32 (32 x 2 x 4096 + 4096) x 4 B; token_embd stays in host memory. */
Test(band, gguf_recipe_weights)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=llamacpp weight_dtype=q4_k_m "
                         "gpu=rtx-3060 context_len=4096"),
                 GPUFIT_OK, "%s", s.err.message);
    uint64_t lo, hi, w = bytes0(&s, GPUFIT_MEM_WEIGHTS);
    band0(&s, GPUFIT_MEM_WEIGHTS, &lo, &hi);
    cr_assert_eq(lo, 7504658432ull / 256 * 144 + (32ull * 2 * 4096 + 4096) * 4);
    cr_assert_eq(hi, w);
    cr_assert(lo < w);
    gpufit_role_info ro = role(&s, 0);
    /* the compute buffer's KV row indices (builds before ggml_set_rows) are banded too */
    uint64_t alo, ahi, a = bytes0(&s, GPUFIT_MEM_ACTIVATIONS);
    band0(&s, GPUFIT_MEM_ACTIVATIONS, &alo, &ahi);
    cr_assert_eq(ahi, a);
    cr_assert_eq(ro.peak_allocated_low_bytes, ro.peak_allocated_bytes - (w - lo) - (a - alo));
    cr_assert_eq(ro.peak_allocated_high_bytes, ro.peak_allocated_bytes);
    done(&s);
    /* one tensor type throughout (Q8_0, f16): exact */
    static const char *exact[] = {"q8_0", "f16"};
    for (size_t i = 0; i < 2; i++) {
        char spec[160];
        snprintf(spec, sizeof spec,
                 "model=llama-3-8b task=inference framework=llamacpp weight_dtype=%s "
                 "gpu=rtx-3060 context_len=4096",
                 exact[i]);
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
        band0(&s, GPUFIT_MEM_WEIGHTS, &lo, &hi);
        cr_assert(lo == hi && hi == bytes0(&s, GPUFIT_MEM_WEIGHTS), "%s", exact[i]);
        done(&s);
    }
}
