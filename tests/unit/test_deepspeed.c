/* SPDX-License-Identifier: MIT */
/* DeepSpeed and FSDP rules (docs/memory/deepspeed.md, docs/memory/fsdp.md): bytes by hand from
 * the frameworks' code. Generic models of P parameters carry no layer structure, so the model
 * states are exact multiples of P; "cublas" is the default workspace of a training job on a
 * GPU before Hopper: 2 handle-streams x 8,519,680 B (memory-model.md §8.2). */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#include <stdio.h>

#define P 1000000000ull /* parameters of the generic models below */
#define GIB ((uint64_t)1 << 30)
#define NCCL (GIB * 6 / 10)         /* one NCCL communicator (memory-model.md §8.4) */
#define CUBLAS (2ull * 8519680ull) /* training workspaces, no GPU given */

typedef run_s scenario;

static uint64_t comp(scenario *s, uint32_t role, int32_t c)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(s->r, role, c, &b), GPUFIT_OK);
    return b;
}

typedef struct states {
    uint64_t w, g, o, m, ws, comm;
} states;

/* Evaluates "arch=generic n_params=1e9 task=pretrain framework=deepspeed <spec>", role 0. */
static states ds(const char *spec)
{
    char full[512];
    snprintf(full, sizeof full,
             "arch=generic n_params=1000000000 task=pretrain optimizer=adamw "
             "framework=deepspeed %s",
             spec);
    scenario s;
    cr_assert_eq(run(&s, full), GPUFIT_OK, "%s: %s", full, s.err.message);
    states x = {comp(&s, 0, GPUFIT_MEM_WEIGHTS),        comp(&s, 0, GPUFIT_MEM_GRADIENTS),
                comp(&s, 0, GPUFIT_MEM_OPTIMIZER_STATES), comp(&s, 0, GPUFIT_MEM_MASTER_WEIGHTS),
                comp(&s, 0, GPUFIT_MEM_WORKSPACE),       comp(&s, 0, GPUFIT_MEM_COMM_BUFFERS)};
    done(&s);
    return x;
}

/* bf16 weights + fp32 gradient accumulation without ZeRO (BLOOM's ZERO_STAGE=0):
 * bf16_optimizer.py _setup_for_real_optimizer keeps the flat bf16 params (2P), an fp32
 * accumulation buffer zeros_like(the whole flat group) (4P, unsharded), an fp32 master
 * partition bf16_dp_partitions[rank].clone().float() (4P/dp) with Adam's exp_avg and exp_avg_sq
 * on it (8P/dp); every parameter keeps its bf16 .grad (2P: clear_lp_grads zeroes it). The
 * gradients are all-reduced in place (flat buffers): no bucket. */
Test(deepspeed, bf16_optimizer_without_zero)
{
    states x = ds("precision=bf16 grad_dtype=fp32 master_weights=fp32 zero=0 dp=4");
    cr_assert_eq(x.w, 2 * P);
    cr_assert_eq(x.g, 4 * P + 2 * P, "%llu", (unsigned long long)x.g);
    cr_assert_eq(x.m, 4 * P / 4);
    cr_assert_eq(x.o, 8 * P / 4);
    cr_assert_eq(x.ws, CUBLAS);
    cr_assert_eq(x.comm, 1 * NCCL); /* the dp group */
    /* the same optimizer under zero_optimization.stage 1 (engine.py: bf16 + fp32 grad_accum +
     * stage 1 -> BFLOAT16): nothing changes, in particular the gradients are not sharded */
    states z1 = ds("precision=bf16 grad_dtype=fp32 master_weights=fp32 zero=1 dp=4");
    cr_assert_eq(z1.g, x.g);
    cr_assert_eq(z1.ws, x.ws);
    cr_assert_eq(z1.m + z1.o, x.m + x.o);
}

/* bf16 with bf16 accumulation without ZeRO: a PipelineModule gets the BF16_Optimizer with a
 * 16-bit accumulation buffer (2P), whose step makes an fp32 copy of the partition
 * (grad_partition.to(fp32): 4P/dp); without pipeline the engine picks FP16_Optimizer
 * (DDP_BFLOAT16): unsharded fp32 master (4P) and Adam (8P); its step lists the fp32 copy of
 * every .grad and flattens it (_flatten_dense_tensors([p.grad.to(fp32) ...]): 4P + 4P), and
 * the engine all-reduces the .grad through flattened buckets of MEMORY_OPT_ALLREDUCE_SIZE =
 * 5e8 elements (allreduce_no_retain): 5e8 x 2 B. */
Test(deepspeed, bf16_without_zero_by_pipeline)
{
    states fp = ds("precision=bf16 zero=0 dp=4");
    cr_assert_eq(fp.w, 2 * P);
    cr_assert_eq(fp.g, 2 * P + 8 * P);
    cr_assert_eq(fp.m, 4 * P);
    cr_assert_eq(fp.o, 8 * P);
    cr_assert_eq(fp.ws, CUBLAS + 500000000ull * 2);
    /* pp = 2 (a real model: generic ones have no layers to split): stage 0 holds T
     * parameters, its bf16 weights are 2T bytes */
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain framework=deepspeed precision=bf16 "
                         "zero=0 dp=4 pp=2 global_batch=8"),
                 GPUFIT_OK, "%s", s.err.message);
    uint64_t T = comp(&s, 0, GPUFIT_MEM_WEIGHTS) / 2;
    cr_assert_eq(T % 4, 0); /* the shards below divide evenly */
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_GRADIENTS), 2 * T + 2 * T + 4 * T / 4);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_MASTER_WEIGHTS), 4 * T / 4);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_OPTIMIZER_STATES), 8 * T / 4);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WORKSPACE), CUBLAS);
    done(&s);
}

/* fp16 + fp32 accumulation without ZeRO has no DeepSpeed optimizer (NotImplementedError). */
Test(deepspeed, fp16_with_fp32_grads_needs_zero)
{
    scenario s;
    cr_assert_eq(run(&s, "arch=generic n_params=1000000000 task=pretrain framework=deepspeed "
                         "precision=fp16 grad_dtype=fp32 zero=0"),
                 GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_GRAD_DTYPE);
    done(&s);
}

/* ZeRO-1, fp16, dp = 8 (stage_1_and_2.py): full fp16 .grad (2P); at the step the partition is
 * flattened in fp16 (2P/8) and cast to fp32 (4P/8); master 4P/8, Adam 8P/8. Reduce buckets:
 * setup_buckets allocates reduce_bucket_size elements in the model dtype, a second one with
 * overlap_comm: 5e8 x 2 B by default (overlap_comm defaults to off below stage 3). */
Test(deepspeed, zero1_buckets_and_step_copies)
{
    states x = ds("precision=fp16 zero=1 dp=8");
    cr_assert_eq(x.w, 2 * P);
    cr_assert_eq(x.g, 2 * P + 2 * P / 8 + 4 * P / 8, "%llu", (unsigned long long)x.g);
    cr_assert_eq(x.m, 4 * P / 8);
    cr_assert_eq(x.o, 8 * P / 8);
    cr_assert_eq(x.ws, CUBLAS + 1000000000ull);
    cr_assert_eq(ds("precision=fp16 zero=1 dp=8 overlap_comm=on").ws, CUBLAS + 2000000000ull);
    cr_assert_eq(ds("precision=fp16 zero=1 dp=8 overlap_comm=off").ws, CUBLAS + 1000000000ull);
    cr_assert_eq(ds("precision=fp16 zero=1 dp=8 reduce_bucket_size=200000000").ws,
                 CUBLAS + 400000000ull);
    cr_assert_eq(ds("precision=fp16 zero=2 dp=8 reduce_bucket_size=2e8 overlap_comm=on").ws,
                 CUBLAS + 800000000ull);
    /* a PipelineModule turns overlap_comm off (engine.py _configure_zero_optimizer) */
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain framework=deepspeed precision=fp16 "
                         "zero=1 dp=8 pp=2 global_batch=16 overlap_comm=on"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WORKSPACE), CUBLAS + 1000000000ull);
    done(&s);
    /* ZeRO-2 shards the gradients: fp16 partition 2P/8 plus the step's two copies */
    states z2 = ds("precision=fp16 zero=2 dp=8");
    cr_assert_eq(z2.g, 2 * P / 8 + 2 * P / 8 + 4 * P / 8);
}

/* The bucket holds the trainable parameters' gradients: a QLoRA job's adapters are fp32
 * (amp_bf16 default, PEFT upcasts them), not the NF4 base: 5e8 x 4 B. */
Test(deepspeed, lora_bucket_in_the_adapters_dtype)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=qlora framework=deepspeed zero=2 dp=8"), GPUFIT_OK,
                 "%s", s.err.message);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_WORKSPACE), CUBLAS + 2000000000ull);
    done(&s);
}

/* ZeRO-3: overlap_comm defaults to on (zero/config.py overlap_comm_valid), but stage3.py keeps
 * one IPG buffer of reduce_bucket_size elements whatever overlap_comm says. */
Test(deepspeed, zero3_one_reduce_bucket)
{
    cr_assert_eq(ds("precision=bf16 zero=3 dp=8").ws, CUBLAS + 1000000000ull);
    cr_assert_eq(ds("precision=bf16 zero=3 dp=8 overlap_comm=off").ws, CUBLAS + 1000000000ull);
    cr_assert_eq(ds("precision=bf16 zero=3 dp=8 reduce_bucket_size=1e8").ws, CUBLAS + 200000000ull);
}

/* NCCL communicators of Megatron-DeepSpeed (policy.c, eval_role): tp 2, pp 4, dp 2, untied
 * Llama: Megatron's tp group, the grid's slice group, the model-parallel group (tp x pp), the
 * pipe group and the dp group = 5 on every stage; send/recv: 1 neighbour on the first and
 * last stage, 2 in the middle. A tied embedding adds its group on the first and last stage. */
Test(deepspeed, nccl_communicators_per_process_group)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain framework=deepspeed precision=bf16 "
                         "zero=1 tp=2 pp=4 dp=2 global_batch=16 checkpointing=full"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_COMM_BUFFERS), 6 * NCCL); /* pp_first */
    cr_assert_eq(comp(&s, 1, GPUFIT_MEM_COMM_BUFFERS), 7 * NCCL); /* pp_middle */
    cr_assert_eq(comp(&s, 2, GPUFIT_MEM_COMM_BUFFERS), 6 * NCCL); /* pp_last */
    done(&s);
    cr_assert_eq(run(&s, "arch=decoder n_layers=8 hidden_size=1024 n_heads=16 "
                         "ffn_hidden_size=4096 vocab_size=32000 tied_embeddings=1 "
                         "task=pretrain framework=deepspeed precision=bf16 zero=1 tp=2 pp=4 "
                         "dp=2 global_batch=16"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_COMM_BUFFERS), 7 * NCCL);
    cr_assert_eq(comp(&s, 1, GPUFIT_MEM_COMM_BUFFERS), 7 * NCCL);
    cr_assert_eq(comp(&s, 2, GPUFIT_MEM_COMM_BUFFERS), 7 * NCCL);
    done(&s);
    /* no pipeline, tp 8: Megatron's tp group + the grad-norm model-parallel group */
    cr_assert_eq(ds("precision=bf16 zero=1 tp=8").comm, 2 * NCCL);
    /* Megatron-LM itself is unchanged: one per parallel dimension */
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain framework=megatron precision=bf16 "
                         "tp=2 pp=4 dp=2 global_batch=16"),
                 GPUFIT_OK);
    cr_assert_eq(comp(&s, 0, GPUFIT_MEM_COMM_BUFFERS), 3 * NCCL);
    done(&s);
}

/* PipelineEngine pipe_buffers['outputs']: every in-flight micro-batch's stage output, the 1/tp
 * partition (pipe_partitioned): stage 0 of pp = 2 with 4 micro-batches keeps min(2, 4) = 2
 * outputs of b x s x h / tp x 2 B = 2 x 2048 x 4096 / 2 x 2 B. The last stage keeps none. */
Test(deepspeed, pipeline_keeps_stage_outputs)
{
    const char *base = "model=llama-3-8b task=pretrain precision=bf16 attention=flash "
                       "checkpointing=full zero=1 tp=2 pp=2 dp=2 micro_batch=2 seq_len=2048 "
                       "global_batch=16";
    char spec[512];
    scenario s;
    uint64_t act[2][2], loss = 0;
    for (int k = 0; k < 2; k++) {
        /* Megatron-LM's own schedule frees the output's data (deallocate_output_tensor) */
        snprintf(spec, sizeof spec, "%s framework=%s", base, k ? "deepspeed" : "megatron");
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s", s.err.message);
        act[k][0] = comp(&s, 0, GPUFIT_MEM_ACTIVATIONS);
        act[k][1] = comp(&s, 1, GPUFIT_MEM_ACTIVATIONS);
        if (k == 0)
            loss = comp(&s, 1, GPUFIT_MEM_LOGITS);
        done(&s);
    }
    cr_assert_eq(act[1][0] - act[0][0], 2ull * (2 * 2048 * 4096 / 2) * 2);
    /* the last stage keeps no stage output; Megatron counts its layer's backward temporaries
     * only by what they exceed the loss's terms by (test_megatron_loss_phase.c) */
    cr_assert_leq(act[0][1], act[1][1]);
    cr_assert_leq(act[1][1] - act[0][1], loss);
    cr_assert_gt(act[1][1] - act[0][1], 0);
}

/* FSDP under accelerate / the HF Trainer: with gradient accumulation the non-final
 * micro-batches run in no_sync(), which keeps the full unsharded gradients (2P in bf16) beside
 * the sharded ones (2P/8), FULL_SHARD and SHARD_GRAD_OP alike; sync_each_batch=1 turns it off;
 * without accumulation (global_batch = micro_batch x dp) nothing changes. */
Test(fsdp, no_sync_keeps_unsharded_gradients)
{
    static const struct {
        const char *spec;
        uint64_t grads;
    } cases[] = {
        {"dp=8 zero=3 global_batch=8", 2 * P / 8},
        {"dp=8 zero=3 global_batch=32", 2 * P / 8 + 2 * P},
        {"dp=8 zero=3 global_batch=32 sync_each_batch=1", 2 * P / 8},
        {"dp=8 zero=2 global_batch=32", 2 * P / 8 + 2 * P},
        {"zero=0 global_batch=32 dp=1", 2 * P}, /* no sharding: nothing to keep besides */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char spec[512];
        snprintf(spec, sizeof spec,
                 "arch=generic n_params=1000000000 task=pretrain framework=pytorch "
                 "precision=bf16 micro_batch=1 %s",
                 cases[i].spec);
        scenario s;
        cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
        cr_assert_eq(comp(&s, 0, GPUFIT_MEM_GRADIENTS), cases[i].grads, "%s: %llu", spec,
                     (unsigned long long)comp(&s, 0, GPUFIT_MEM_GRADIENTS));
        done(&s);
    }
}

/* The new keys reach the table with their defaults and names. */
Test(params, deepspeed_and_fsdp_keys)
{
    scenario s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain framework=deepspeed zero=2 dp=8 "
                         "reduce_bucket_size=2e8 overlap_comm=on"),
                 GPUFIT_OK, "%s", s.err.message);
    int64_t v = 0;
    cr_assert_eq(gpufit_job_get_int(s.j, GPUFIT_JOB_REDUCE_BUCKET_SIZE, &v, &s.err), GPUFIT_OK);
    cr_assert_eq(v, 200000000);
    cr_assert_eq(gpufit_job_get_int(s.j, GPUFIT_JOB_OVERLAP_COMM, &v, &s.err), GPUFIT_OK);
    cr_assert_eq(v, 1);
    cr_assert_eq(gpufit_job_get_int(s.j, GPUFIT_JOB_SYNC_EACH_BATCH, &v, &s.err), GPUFIT_OK);
    cr_assert_eq(v, 0);
    done(&s);
}
