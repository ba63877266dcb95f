/* SPDX-License-Identifier: MIT */
/* Megatron-Core expert tensor parallelism (etp, MoE parallel folding): layout rules, expert
 * shards of weights, gradients and distributed-optimizer states, expert activations, the
 * planner. Bytes by hand from megatron/core/parallel_state.py initialize_model_parallel
 * (expert grid etp x ep x expert-dp x pp over the same world), transformer/moe/experts.py
 * (FC1/FC2 split over the expert tp group) and moe/token_dispatcher.py (all-to-all over ep,
 * all-gather over etp). docs/memory/megatron.md. */
#include <criterion/criterion.h>

#include "gpufit.h"

#include <stdio.h>
#include <string.h>

/* A small MoE decoder: every layer MoE, h 64, 4 heads of 16 (MHA), 8 experts of f_moe 32,
 * top-2, SwiGLU, RMSNorm, V 256 untied, no biases. */
#define MOE                                                                                        \
    "arch=decoder n_layers=2 hidden_size=64 n_heads=4 n_kv_heads=4 vocab_size=256 "                \
    "ffn_hidden_size=128 mlp=swiglu norm=rmsnorm n_experts=8 experts_per_token=2 "                 \
    "moe_ffn_hidden_size=32 "
#define MEGATRON "task=pretrain framework=megatron precision=bf16 seq_len=64 micro_batch=1 "

typedef struct run_t {
    gpufit_model *m;
    gpufit_job *j;
    gpufit_result *r;
    gpufit_error err;
} run_t;

static int32_t run(run_t *x, const char *spec)
{
    x->err = (gpufit_error)GPUFIT_ERROR_INIT;
    x->r = NULL;
    cr_assert_eq(gpufit_model_new(&x->m, &x->err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&x->j, &x->err), GPUFIT_OK);
    int32_t st = gpufit_apply_spec(x->m, x->j, spec, &x->err);
    if (st == GPUFIT_OK)
        st = gpufit_evaluate(&x->r, x->m, x->j, &x->err);
    return st;
}

static void done(run_t *x)
{
    gpufit_result_free(x->r);
    gpufit_job_free(x->j);
    gpufit_model_free(x->m);
}

static uint64_t comp(run_t *x, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(x->r, 0, c, &b), GPUFIT_OK);
    return b;
}

static void expect_error(const char *spec, int32_t param)
{
    run_t x;
    cr_assert_eq(run(&x, spec), GPUFIT_E_INCONSISTENT, "%s", spec);
    cr_assert_eq(x.err.param, param, "%s: param %d (%s)", spec, x.err.param, x.err.message);
    done(&x);
}

/* tp=2 dp=2 ep=4 etp=1: world 4 = tp x dp; Megatron needs only world % (etp x ep x pp) = 4 % 4
 * == 0. Expert data-parallel size = world / (etp x ep x pp) = 1. Per rank, in elements:
 *   globals: embedding 256 x 64 / tp 2 = 8192, output head 8192, final norm 64 -> 16448
 *   per layer: q, k, v, o 64 x 64 / 2 = 2048 each -> 8192; two norms 128; router 8 x 64 = 512
 *     (replicated: TopKRouter.weight); experts 8 / ep 4 = 2 whole experts (etp 1) of
 *     gate + up + down 3 x 32 x 64 = 6144 -> 12288; layer 21120
 *   total 2 x 21120 + 16448 = 58688, of which experts 2 x 12288 = 24576, dense 34112.
 * bf16 weights 2 B: 117376. Megatron keeps fp32 main grads, full size under the distributed
 * optimizer (zero=1): 4 x 58688 = 234752. fp32 master and Adam states (8 B) sharded: dense
 * over dp x cp = 2, experts over expert-dp = 1:
 *   master 4 x 34112 / 2 + 4 x 24576 / 1 = 68224 + 98304 = 166528
 *   adam   8 x 34112 / 2 + 8 x 24576 / 1 = 136448 + 196608 = 333056 */
Test(etp, folding_layout_tp2_dp2_ep4_etp1_bytes_by_hand)
{
    run_t x;
    cr_assert_eq(run(&x, MOE MEGATRON "tp=2 dp=2 ep=4 etp=1 sp=1 zero=1"), GPUFIT_OK, "%s",
                 x.err.message);
    cr_assert_eq(comp(&x, GPUFIT_MEM_WEIGHTS), 117376);
    cr_assert_eq(comp(&x, GPUFIT_MEM_GRADIENTS), 234752);
    cr_assert_eq(comp(&x, GPUFIT_MEM_MASTER_WEIGHTS), 166528);
    cr_assert_eq(comp(&x, GPUFIT_MEM_OPTIMIZER_STATES), 333056);
    done(&x);
}

/* The same layout with etp = tp (Megatron's default) needs etp x ep = 8 ranks per expert copy:
 * 4 % 8 != 0, rejected naming ep (etp not given) or etp (given). */
Test(etp, default_etp_is_tp_and_rejects_that_layout)
{
    expect_error(MOE MEGATRON "tp=2 dp=2 ep=4 sp=1", GPUFIT_JOB_EP);
    expect_error(MOE MEGATRON "tp=2 dp=2 ep=4 etp=2 sp=1", GPUFIT_JOB_ETP);
}

/* etp = tp reproduces the earlier rule: tp=2 dp=4 ep=4 -> expert-dp = 8 / (2 x 4) = 1 =
 * dp x cp / ep. Experts per rank: 2 experts x 6144 / etp 2 = 6144 per layer; weights
 * 2 x (8192 + 128 + 512 + 6144) + 16448 = 46400 elements -> 92800 B; the explicit etp=2
 * gives the same bytes. Adam: dense 34112 x 8 / dp 4 = 68224, experts 12288 x 8 / 1 = 98304. */
Test(etp, etp_equal_to_tp_is_the_default)
{
    run_t a, b;
    cr_assert_eq(run(&a, MOE MEGATRON "tp=2 dp=4 ep=4 sp=1 zero=1"), GPUFIT_OK);
    cr_assert_eq(run(&b, MOE MEGATRON "tp=2 dp=4 ep=4 etp=2 sp=1 zero=1"), GPUFIT_OK);
    cr_assert_eq(comp(&a, GPUFIT_MEM_WEIGHTS), 92800);
    cr_assert_eq(comp(&b, GPUFIT_MEM_WEIGHTS), 92800);
    cr_assert_eq(comp(&a, GPUFIT_MEM_OPTIMIZER_STATES), 68224 + 98304);
    cr_assert_eq(comp(&b, GPUFIT_MEM_OPTIMIZER_STATES), 68224 + 98304);
    done(&a);
    done(&b);
}

/* etp larger than tp (tp=1 dp=4 ep=2 etp=2: world 4 = etp x ep): 4 experts per rank, each
 * split in two: 4 x 6144 / 2 = 12288 per layer; dense per layer 4 x 4096 + 128 + 512 = 17024;
 * globals 2 x 16384 + 64 = 32832: weights 2 x (17024 + 12288) + 32832 = 91456 el = 182912 B.
 * Expert-dp = 4 / (2 x 2) = 1: Adam 8 x 2 x 12288 = 196608 on experts, dense 8 x 66880 / 4. */
Test(etp, etp_above_tp)
{
    run_t x;
    cr_assert_eq(run(&x, MOE MEGATRON "tp=1 dp=4 ep=2 etp=2 zero=1"), GPUFIT_OK, "%s",
                 x.err.message);
    cr_assert_eq(comp(&x, GPUFIT_MEM_WEIGHTS), 182912);
    cr_assert_eq(comp(&x, GPUFIT_MEM_OPTIMIZER_STATES), 196608 + 8 * 66880 / 4);
    done(&x);
}

/* Expert activations: each rank's experts see k x tok x etp / tp tokens (all-to-all over ep
 * keeps the count, all-gather over etp multiplies it) at width f_moe / etp. tp=2 dp=4 ep=4,
 * tok = 64, k = 2, a = 2 B, Megatron's fused SwiGLU keeps 3 f-wide tensors:
 *   etp 2: FC1 input 2 x 128 x 64 = 16384, intermediates 3 x 2 x 128 x 16 = 12288 -> 28672
 *   etp 1: FC1 input 2 x  64 x 64 =  8192, intermediates 3 x 2 x  64 x 32 = 12288 -> 20480
 * 8192 B less per layer, 16384 over the two layers (the largest tensor, 2 x 128 x 16 =
 * 2 x 64 x 32 = 4096 B, and so the transient, are the same). */
Test(etp, expert_activations_fold_with_etp)
{
    run_t a, b;
    cr_assert_eq(run(&a, MOE MEGATRON "tp=2 dp=4 ep=4 sp=1"), GPUFIT_OK);
    cr_assert_eq(run(&b, MOE MEGATRON "tp=2 dp=4 ep=4 etp=1 sp=1"), GPUFIT_OK);
    cr_assert_eq(comp(&a, GPUFIT_MEM_ACTIVATIONS) - comp(&b, GPUFIT_MEM_ACTIVATIONS), 16384);
    done(&a);
    done(&b);
}

/* Divisibility rules, each from Megatron's code, and keys that do not apply. */
Test(etp, bad_layouts_name_the_key)
{
    /* world % (etp x ep x pp): tp 2 x dp 2 = 4 ranks, etp 1 x ep 8 = 8 */
    expect_error(MOE MEGATRON "tp=2 dp=2 ep=8 etp=1 sp=1", GPUFIT_JOB_ETP);
    /* TEGroupedLinear divide(moe_ffn_hidden_size, etp): 32 % 64 */
    expect_error(MOE MEGATRON "tp=1 dp=64 etp=64", GPUFIT_JOB_ETP);
    /* num_experts % ep (arguments.py) */
    expect_error(MOE MEGATRON "tp=2 dp=3 ep=3 etp=1 sp=1", GPUFIT_JOB_EP);
    /* expert_data_parallel_size % num_distributed_optimizer_instances: expert-dp
     * 8 / (1 x 4) = 2, dp / zero_shard_size = 4 instances */
    expect_error(MOE MEGATRON "tp=2 dp=4 ep=4 etp=1 sp=1 zero=1 zero_shard_size=1",
                 GPUFIT_JOB_ZERO_SHARD_SIZE);
    /* etp on a dense model */
    expect_error("model=llama-3-8b " MEGATRON "tp=2 etp=2 sp=1", GPUFIT_JOB_ETP);
    /* etp other than tp outside Megatron */
    expect_error(MOE "task=pretrain framework=deepspeed tp=2 dp=2 ep=2 etp=1", GPUFIT_JOB_ETP);
    /* servers: whole experts under ep (etp 1), tp-split experts without it (etp = tp) */
    expect_error(MOE "task=inference framework=vllm tp=2 ep=2 etp=2", GPUFIT_JOB_ETP);
    expect_error(MOE "task=inference framework=vllm tp=2 etp=1", GPUFIT_JOB_ETP);
}

Test(etp, server_keeps_whole_experts)
{
    run_t a, b;
    cr_assert_eq(run(&a, MOE "task=inference framework=vllm tp=2 ep=2"), GPUFIT_OK);
    cr_assert_eq(run(&b, MOE "task=inference framework=vllm tp=2 ep=2 etp=1"), GPUFIT_OK);
    cr_assert_eq(comp(&a, GPUFIT_MEM_WEIGHTS), comp(&b, GPUFIT_MEM_WEIGHTS));
    done(&a);
    done(&b);
}

/* The planner offers etp = 1 beside etp = tp for Megatron MoE jobs, and every layout it
 * returns evaluates (none is rejected by the layout checks). */
Test(etp, planner_layouts_evaluate)
{
    gpufit_error err = GPUFIT_ERROR_INIT;
    gpufit_model *m = NULL;
    gpufit_job *j = NULL;
    cr_assert_eq(gpufit_model_new(&m, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_job_new(&j, &err), GPUFIT_OK);
    cr_assert_eq(gpufit_apply_spec(m, j, MOE MEGATRON "gpu=h100 global_batch=64", &err),
                 GPUFIT_OK);
    gpufit_list *l = NULL;
    cr_assert_eq(gpufit_plan(&l, m, j, 8, 1, 10000, &err), GPUFIT_OK, "%s", err.message);
    uint32_t n = gpufit_list_count(l), folded = 0;
    cr_assert_gt(n, 0);
    for (uint32_t i = 0; i < n; i++) {
        gpufit_layout y = {.struct_size = sizeof y};
        cr_assert_eq(gpufit_list_layout(l, i, &y), GPUFIT_OK);
        folded += strstr(y.spec, " etp=1") != NULL && y.tp > 1;
        gpufit_model *m2 = NULL;
        gpufit_job *j2 = NULL;
        gpufit_result *r = NULL;
        char spec[512];
        snprintf(spec, sizeof spec, MOE MEGATRON "gpu=h100 %s", y.spec);
        cr_assert_eq(gpufit_model_new(&m2, &err), GPUFIT_OK);
        cr_assert_eq(gpufit_job_new(&j2, &err), GPUFIT_OK);
        /* the layout's spec overrides the job's: a second document (within one spec a key
         * given twice is an error) */
        cr_assert_eq(gpufit_apply_spec(m2, j2, MOE MEGATRON "gpu=h100", &err), GPUFIT_OK);
        cr_assert_eq(gpufit_apply_spec(m2, j2, y.spec, &err), GPUFIT_OK, "%s", spec);
        cr_assert_eq(gpufit_evaluate(&r, m2, j2, &err), GPUFIT_OK, "%s: %s", spec, err.message);
        gpufit_summary sum = {.struct_size = sizeof sum};
        cr_assert_eq(gpufit_result_summary(r, &sum), GPUFIT_OK);
        cr_assert_eq(sum.peak_bytes, y.peak_bytes, "%s", spec);
        gpufit_result_free(r);
        gpufit_job_free(j2);
        gpufit_model_free(m2);
    }
    cr_assert_gt(folded, 0, "no etp=1 layout among %u", n);
    gpufit_list_free(l);
    gpufit_job_free(j);
    gpufit_model_free(m);
}
