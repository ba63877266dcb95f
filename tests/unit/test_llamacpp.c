/* SPDX-License-Identifier: MIT */
/* llama.cpp over several GPUs (issue #12 item 5): the pipeline-parallel copies of each
 * device's graph inputs in its compute buffer, the default split by free memory, and
 * device_memory_gib (a capacity per device). Bytes by hand from llama.cpp's code
 * (docs/memory/llamacpp.md). */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#include <stdio.h>
#include <string.h>

static uint64_t act(const run_s *s, uint32_t i)
{
    uint64_t b = 0;
    cr_assert_eq(gpufit_result_bytes(s->r, i, GPUFIT_MEM_ACTIVATIONS, &b), GPUFIT_OK);
    return b;
}

/* Llama-3-8B (h 4096, 32 heads, 8 KV heads of 128, ffn 14336 gated, vocab 128256, 32 layers),
 * n_ctx 4096, n_ubatch 512 (llama.cpp's default), Q4_K_M weights. */
#define L3 "model=llama-3-8b task=inference framework=llamacpp weight_dtype=q4_k_m context_len=4096 "

/* Compute buffer peak of one ubatch (§6.4), the same on every device that holds layers:
 *   io   = 4 x 512 x 4096                              =   8,388,608 (one f32 hidden state)
 *   ffn  = 4 x 512 x 14336 x 2 + 3 io                  =  83,886,080
 *   attn = 6 io                                        =  50,331,648 (flash attention)
 *        = 6 io + 4 x n_kv 4096 x 32 heads x 512       = 318,767,104 (without)
 *   logits (output device) = 4 x 512 x 128256 + 3 io   = 287,834,112 */
#define FFN 83886080ull
#define ATTN_NOFA 318767104ull
#define LOGITS 287834112ull

/* Pipeline parallelism: llama.cpp turns it on with two devices and everything offloaded
 * (src/llama-context.cpp pipeline_parallel); ggml's scheduler then keeps n_copies = 4
 * (GGML_SCHED_MAX_COPIES) copies of every input of a device's split, allocated first and
 * never freed (ggml-backend.cpp ggml_backend_sched_split_graph). */
Test(llamacpp, pipeline_parallel_copies_with_flash_attention)
{
    run_s s;
    cr_assert_eq(run(&s, L3 "pp=2 attention=flash"), GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info a = role(&s, 0), b = role(&s, 1);
    cr_assert_eq(a.layers, 17); /* llama.cpp's rule on equal devices: 17 + 15 */
    cr_assert_eq(b.layers, 15);
    /* inputs of device 0's split (n_kv = 4096, already a multiple of 256):
     *   hidden state from the CPU's get_rows  f32 4096 x 512 = 8,388,608
     *   KQ mask                                f16 4096 x 512 = 4,194,304
     *   self_v_idxs (V not transposed)         i64 512        =     4,096
     *   inp_pos i32 512 + self_k_idxs i64 512                 =     6,144
     *                                                    I0   = 12,593,152
     * compute = 4 x I0 + peak = 50,372,608 + 83,886,080 = 134,258,688 */
    cr_assert_eq(act(&s, 0), 134258688ull);
    /* device 1 also holds the last layer: out_ids i32 512 = 2,048 more, I1 = 12,595,200; its
     * peak is the output's logits: 4 x I1 + 287,834,112 = 338,214,912 */
    cr_assert_eq(act(&s, 1), 4ull * 12595200ull + LOGITS);
    cr_assert_eq(act(&s, 1), 338214912ull);
    /* against the same device without pipeline parallelism (one copy of the inputs but the
     * hidden state, the first layer's input under the peak): the difference is n_copies x
     * inputs - the one copy already counted */
    uint64_t no_pp = 4194304ull + 4096ull + 6144ull + FFN;
    cr_assert_eq(act(&s, 0) - no_pp, 4ull * 12593152ull - 4194304ull - 4096ull - 6144ull);
    done(&s);
    /* one GPU with flash attention: mask f16 4,194,304, inp_pos 2,048, out_ids 2,048,
     * self_k_idxs 4,096, self_v_idxs 4,096 (V not transposed), and the logits' peak */
    cr_assert_eq(run(&s, L3 "attention=flash"), GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(act(&s, 0), 4194304ull + 12288ull + LOGITS);
    done(&s);
}

Test(llamacpp, pipeline_parallel_copies_without_flash_attention)
{
    run_s s;
    /* one GPU (no pipeline parallelism): one copy of each input, read up to the last layer,
     * so under the peak: KQ mask f32 4096 x 512 = 8,388,608, inp_pos i32 512 = 2,048,
     * out_ids i32 512 = 2,048, self_k_idxs i64 512 = 4,096 and self_v_idxs i64 512 x 1024 =
     * 4,194,304 (V transposed): 8,388,608 + 4,202,496 + the peak */
    cr_assert_eq(run(&s, L3 "attention=eager"), GPUFIT_OK, "%s", s.err.message);
    uint64_t single = act(&s, 0), lo, hi;
    cr_assert_eq(single, 8388608ull + 4202496ull + ATTN_NOFA);
    /* builds before the ggml_set_rows KV path have no KV row indices: the band's low end */
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_ACTIVATIONS, &lo, &hi), GPUFIT_OK);
    cr_assert_eq(hi, single);
    cr_assert_eq(lo, single - 4096ull - 4194304ull);
    done(&s);
    cr_assert_eq(run(&s, L3 "pp=2 attention=eager"), GPUFIT_OK, "%s", s.err.message);
    /* without flash attention V is stored transposed and self_v_idxs holds one index per
     * element: i64 512 x (8 x 128) = 4,194,304 (llama_kv_cache::build_input_v_idxs);
     *   I0 = 8,388,608 (hidden) + 8,388,608 (mask f32) + 4,194,304 + 6,144 = 20,977,664
     *   device 0: 4 x I0 + 318,767,104 = 402,677,760 */
    cr_assert_eq(act(&s, 0), 402677760ull);
    /* the same peak as the single GPU's (the KQ scores), so the difference is exactly the
     * copies less the single GPU's one copy of the mask and the small inputs */
    cr_assert_eq(act(&s, 0) - single, 4ull * 20977664ull - 8388608ull - 4202496ull);
    /* the band's low end: four copies without the KV row indices */
    uint64_t lo0, hi0;
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_ACTIVATIONS, &lo0, &hi0), GPUFIT_OK);
    cr_assert_eq(lo0, act(&s, 0) - 4ull * (4096ull + 4194304ull));
    /* device 1: + out_ids, peak max(KQ scores, logits) = the KQ scores */
    cr_assert_eq(act(&s, 1), 4ull * (20977664ull + 2048ull) + ATTN_NOFA);
    done(&s);
}

/* A device that holds the output head only reads the last hidden state (f32 4096 x 512):
 * shares 0.95, 0.05 put layers 0-31 on device 0 (31/33 < 0.95) and the head (32/33 >= 0.95)
 * on device 1. */
Test(llamacpp, output_only_device_copies_the_hidden_state)
{
    run_s s;
    cr_assert_eq(run(&s, L3 "pp=2 attention=flash tensor_split=0.95,0.05"), GPUFIT_OK, "%s",
                 s.err.message);
    cr_assert_eq(role(&s, 0).layers, 32);
    cr_assert_eq(role(&s, 1).layers, 0);
    /* device 0 holds the last layer: 4 x (12,593,152 + 2,048) + 83,886,080 */
    cr_assert_eq(act(&s, 0), 4ull * 12595200ull + FFN);
    /* device 1: 4 x 8,388,608 + 287,834,112 = 321,388,544 (no mask: no attention there) */
    cr_assert_eq(act(&s, 1), 321388544ull);
    done(&s);
}

/* Default split by free memory (src/llama-model.cpp load_tensors: the share of a device is
 * ggml_backend_dev_memory's free bytes): 24 GiB and 12 GiB devices, each less llama.cpp's
 * 300 MiB CUDA context:
 *   free0 = 25,769,803,776 - 314,572,800 = 25,455,230,976
 *   free1 = 12,884,901,888 - 314,572,800 = 12,570,329,088
 *   split point 0 = free0 / (free0 + free1) = 0.66942
 * layer il goes to device 0 while il / 33 < 0.66942, i.e. il <= 22: 23 layers, and 9 + the
 * output head on device 1. By total memory (2/3) it would be il <= 21 (22 layers); equal
 * shares give 17. */
Test(llamacpp, default_split_by_free_memory)
{
    run_s s;
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24,12"), GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info a = role(&s, 0), b = role(&s, 1);
    cr_assert_str_eq(a.name, "gpu0");
    cr_assert_str_eq(b.name, "gpu1");
    cr_assert_eq(a.layers, 23);
    cr_assert_eq(b.layers, 9);
    cr_assert_eq(a.capacity_bytes, 25769803776ull);
    cr_assert_eq(b.capacity_bytes, 12884901888ull);
    done(&s);
    /* with no context on the devices, free = total: 2/3, il <= 21 */
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24,12 cuda_context_bytes=0"), GPUFIT_OK,
                 "%s", s.err.message);
    cr_assert_eq(role(&s, 0).layers, 22);
    cr_assert_eq(role(&s, 1).layers, 10);
    done(&s);
    /* tensor_split still decides when given */
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24,12 tensor_split=1,1"), GPUFIT_OK, "%s",
                 s.err.message);
    cr_assert_eq(role(&s, 0).layers, 17);
    done(&s);
}

/* device_memory_gib gives each role its capacity (a GPU not in the catalogue), overrides
 * device_gpus' catalogue memory stage by stage, and each role's verdict uses its own. */
Test(llamacpp, device_memory_gib_roles_and_verdicts)
{
    run_s s;
    /* Llama-3-70B Q4_K_M (~40 GiB of weights) over 24 + 12 GiB does not fit */
    cr_assert_eq(run(&s, "model=llama-3-70b task=inference framework=llamacpp "
                         "weight_dtype=q4_k_m context_len=2048 pp=2 device_memory_gib=24,12"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    cr_assert_eq(gpufit_result_summary(s.r, &sum), GPUFIT_OK);
    cr_assert_eq(sum.fits, 0);
    for (uint32_t i = 0; i < 2; i++) {
        gpufit_role_info ro = role(&s, i);
        cr_assert_str_eq(ro.gpu, ""); /* no catalogue GPU */
        cr_assert_eq(ro.fits, ro.device_used_bytes <= ro.capacity_bytes);
        cr_assert_eq(ro.headroom_bytes, (int64_t)ro.capacity_bytes - (int64_t)ro.device_used_bytes);
    }
    gpufit_role_info w = role(&s, sum.worst_role);
    cr_assert_eq(sum.capacity_bytes, w.capacity_bytes);
    char json[65536];
    cr_assert_eq(gpufit_result_to_json(s.r, json, sizeof json, NULL, NULL), GPUFIT_OK);
    cr_assert(strstr(json, "\"capacity_bytes\": 12884901888") != NULL);
    cr_assert(strstr(json, "\"capacity_bytes\": 25769803776") != NULL);
    done(&s);
    /* three 24 GiB devices hold it */
    cr_assert_eq(run(&s, "model=llama-3-70b task=inference framework=llamacpp "
                         "weight_dtype=q4_k_m context_len=2048 pp=3 device_memory_gib=24,24,24"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(gpufit_result_summary(s.r, &sum), GPUFIT_OK);
    cr_assert_eq(sum.fits, 1);
    done(&s);
    /* with device_gpus: names from the catalogue, capacities from device_memory_gib */
    cr_assert_eq(run(&s, L3 "pp=2 device_gpus=rtx-4090,rtx-3060 device_memory_gib=20,10.5"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_gpu_info g = {.struct_size = sizeof g};
    cr_assert_eq(gpufit_gpu_by_name("rtx-3060", &g), GPUFIT_OK);
    cr_assert_str_eq(role(&s, 1).gpu, g.name);
    cr_assert_eq(role(&s, 0).capacity_bytes, 20ull << 30);
    cr_assert_eq(role(&s, 1).capacity_bytes, 21ull << 29);
    done(&s);
    /* and over the job's GPU / capacity, stage by stage */
    cr_assert_eq(run(&s, L3 "pp=2 gpu=h100 device_memory_gib=8,8"), GPUFIT_OK, "%s",
                 s.err.message);
    cr_assert_eq(role(&s, 0).capacity_bytes, 8ull << 30);
    cr_assert_eq(role(&s, 1).capacity_bytes, 8ull << 30);
    done(&s);
}

/* Bad combinations name the key. */
Test(llamacpp, bad_splits_name_the_key)
{
    run_s s;
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24"), GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_DEVICE_MEMORY_GIB);
    cr_assert(strstr(s.err.message, "device_memory_gib") != NULL, "%s", s.err.message);
    done(&s);
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24,0"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(s.err.param, GPUFIT_JOB_DEVICE_MEMORY_GIB);
    done(&s);
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24,-3"), GPUFIT_E_INVALID_ARG);
    cr_assert_eq(s.err.param, GPUFIT_JOB_DEVICE_MEMORY_GIB);
    done(&s);
    cr_assert_eq(run(&s, L3 "pp=2 device_memory_gib=24,12 pp_last_layers=4"),
                 GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_DEVICE_MEMORY_GIB);
    done(&s);
    /* a partial offload over several devices is not modelled: said, not ignored */
    cr_assert_eq(run(&s, L3 "pp=2 n_gpu_layers=20"), GPUFIT_E_INCONSISTENT);
    cr_assert_eq(s.err.param, GPUFIT_JOB_N_GPU_LAYERS);
    done(&s);
    /* more than n_layers is everything: fine */
    cr_assert_eq(run(&s, L3 "pp=2 n_gpu_layers=33"), GPUFIT_OK, "%s", s.err.message);
    done(&s);
}

/* The band's low end for older builds (docs/memory/llamacpp.md, "Older builds"), at the output
 * head: the single copy of the inputs is freed after the last layer reads it (ggml-alloc.c
 * ggml_gallocr_free_node), and the head's matmul needs only the logits and the normed hidden
 * state they come from; builds differ in what they leave below the logits (the point keeps the
 * current release's mask + 3 io). Llama-3-8B, one GPU, flash attention (the macros above):
 *   point = mask 4,194,304 + small inputs 12,288 + logits' peak 287,834,112 = 292,040,704
 *   layers' low end = mask + max(attn 50,331,648, ffn 83,886,080) + small - KV row indices
 *                   = 4,194,304 + 83,886,080 + 12,288 - 8,192     =  88,084,480
 *   head's low end  = 4 x 512 x 128,256 + io 8,388,608            = 271,056,896 */
Test(llamacpp, older_builds_output_head_low_end)
{
    run_s s;
    cr_assert_eq(run(&s, L3 "attention=flash"), GPUFIT_OK, "%s", s.err.message);
    uint64_t lo, hi;
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_ACTIVATIONS, &lo, &hi), GPUFIT_OK);
    cr_assert_eq(hi, 292040704ull);
    cr_assert_eq(hi, act(&s, 0));
    cr_assert_eq(lo, 271056896ull);
    done(&s);
}

/* MoE experts one slot at a time (llama.cpp before b266290ee, PR #6505, 2024-04-18: one
 * ggml_mul_mat_id per slot), the low end of a device's FFN. Mixtral-8x7B (h 4096, 8 experts,
 * 2 per token, f 14336, vocab 32000), n_ctx 4096, flash attention, pp=2, device 0 (no head):
 *   ffn    = 8 x 512 x 2 x 14336 + 4 x 512 x 8 + io = 117,440,512 + 16,384 + 8,388,608
 *          = 125,845,504 (both slots' up and gate at once, the current graph)
 *   ffn_lo = 8 x 512 x 14336 + 16,384 + io          =  67,125,248 (one slot)
 *   inputs I0 = 12,593,152, of which 8,192 KV row indices (as Llama-3-8B's above), 4 copies:
 *   point = 4 x 12,593,152 + 125,845,504           = 176,218,112
 *   low   = 4 x (12,593,152 - 8,192) + 67,125,248  = 117,465,088 */
Test(llamacpp, older_builds_moe_one_slot_low_end)
{
    run_s s;
    cr_assert_eq(run(&s, "model=mixtral-8x7b task=inference framework=llamacpp weight_dtype=q4_k_m "
                         "context_len=4096 attention=flash pp=2"),
                 GPUFIT_OK, "%s", s.err.message);
    uint64_t lo, hi;
    cr_assert_eq(gpufit_result_bytes_band(s.r, 0, GPUFIT_MEM_ACTIVATIONS, &lo, &hi), GPUFIT_OK);
    cr_assert_eq(act(&s, 0), 176218112ull);
    cr_assert_eq(hi, 176218112ull);
    cr_assert_eq(lo, 117465088ull);
    done(&s);
}
