/* SPDX-License-Identifier: MIT */
/* Layer splits over several GPUs (issue #3 item 5): tensor_split shares and device_gpus of
 * different sizes, one role per stage, each checked against its own GPU. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama.cpp's assignment written as its loop (src/llama-model.cpp load_tensors), independent of
 * the library's closed form: cumulative float shares normalised to split points; layer il
 * (the output head is layer L) goes to the first device whose point exceeds il / (L + 1). */
static void reference_split(const float *share, int n, int L, int *layers, int *out_dev)
{
    float pts[16], sum = 0.0f;
    for (int i = 0; i < n; i++) {
        sum += share[i];
        pts[i] = sum;
    }
    for (int i = 0; i < n; i++)
        pts[i] /= sum;
    for (int i = 0; i < n; i++)
        layers[i] = 0;
    for (int il = 0; il <= L; il++) {
        float x = (float)il / (float)(L + 1);
        int d = 0;
        while (d < n && !(pts[d] > x))
            d++;
        if (d == n)
            d = n - 1;
        if (il == L)
            *out_dev = d;
        else
            layers[d]++;
    }
}

Test(split, tensor_split_layers_match_llama_cpp_loop)
{
    static const char *const shares[] = {"1,1", "3,1", "1,3", "2,1,1", "1,0,1", "0.7,0.3",
                                         "5,4,3,2,1", "1,1,1,1,1,1,1,1", "1,100", "0,1"};
    static const int n_layers[] = {1, 2, 7, 32, 61, 80, 94, 126};
    for (size_t a = 0; a < sizeof shares / sizeof shares[0]; a++) {
        float sh[16];
        int n = 0;
        for (const char *p = shares[a]; *p; n++) {
            char *end;
            sh[n] = strtof(p, &end);
            p = *end == ',' ? end + 1 : end;
        }
        for (size_t b = 0; b < sizeof n_layers / sizeof n_layers[0]; b++) {
            int L = n_layers[b];
            if (n > L)
                continue;
            char spec[256];
            snprintf(spec, sizeof spec,
                     "model=llama-3-8b n_layers=%d task=inference framework=llamacpp "
                     "weight_dtype=q4_k_m pp=%d tensor_split=%s gpu=rtx-4090",
                     L, n, shares[a]);
            int want[16], out_dev = -1;
            reference_split(sh, n, L, want, &out_dev);
            run_s s;
            cr_assert_eq(run(&s, spec), GPUFIT_OK, "%s: %s", spec, s.err.message);
            gpufit_summary sum = {.struct_size = sizeof sum};
            gpufit_result_summary(s.r, &sum);
            uint32_t gpus = 0;
            for (uint32_t i = 0; i < sum.n_roles; i++) {
                gpufit_role_info ro = role(&s, i);
                if (strcmp(ro.name, "host") == 0)
                    continue;
                char nm[8];
                snprintf(nm, sizeof nm, "gpu%u", gpus);
                cr_assert_str_eq(ro.name, nm);
                cr_assert_eq((int)ro.layers, want[gpus], "%s: %s holds %u layers, llama.cpp %d",
                             spec, ro.name, ro.layers, want[gpus]);
                cr_assert_eq(ro.n_devices, 1);
                gpus++;
            }
            cr_assert_eq((int)gpus, n, "%s: %u GPU roles", spec, gpus);
            done(&s);
        }
    }
}

/* A 24 GiB and a 12 GiB card: split by memory (llama.cpp's default), each role checked against
 * its own GPU, the verdict taken from the role with the least headroom. */
Test(split, device_gpus_of_different_sizes)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-70b task=inference framework=llamacpp weight_dtype=q4_k_m "
                         "pp=2 device_gpus=rtx-4090,rtx-3060 context_len=2048"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_gpu_info big = {.struct_size = sizeof big}, small = {.struct_size = sizeof small};
    cr_assert_eq(gpufit_gpu_by_name("rtx-4090", &big), GPUFIT_OK);
    cr_assert_eq(gpufit_gpu_by_name("rtx-3060", &small), GPUFIT_OK);
    gpufit_role_info r0 = role(&s, 0), r1 = role(&s, 1);
    cr_assert_eq(r0.capacity_bytes, big.memory_bytes);
    cr_assert_eq(r1.capacity_bytes, small.memory_bytes);
    cr_assert_str_eq(r0.gpu, big.name);
    cr_assert_str_eq(r1.gpu, small.name);
    /* shares by free memory (llama.cpp load_tensors: ggml_backend_dev_memory's free, i.e. the
     * capacity less the 300 MiB CUDA context llama.cpp's query has created): the bigger card
     * holds about twice the layers */
    float sh[2] = {(float)(big.memory_bytes - 300u * 1048576u),
                   (float)(small.memory_bytes - 300u * 1048576u)};
    int want[2], out_dev;
    reference_split(sh, 2, 80, want, &out_dev);
    cr_assert_eq((int)r0.layers, want[0]);
    cr_assert_eq((int)r1.layers, want[1]);
    cr_assert(r0.layers > r1.layers);
    for (uint32_t i = 0; i < 2; i++) {
        gpufit_role_info ro = role(&s, i);
        cr_assert_eq(ro.headroom_bytes,
                     (int64_t)ro.capacity_bytes - (int64_t)ro.device_used_bytes);
        cr_assert_eq(ro.fits, ro.device_used_bytes <= ro.capacity_bytes);
    }
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    gpufit_role_info w = role(&s, sum.worst_role);
    cr_assert(w.headroom_bytes <= r0.headroom_bytes && w.headroom_bytes <= r1.headroom_bytes);
    cr_assert_eq(sum.peak_bytes, w.device_used_bytes);
    cr_assert_eq(sum.capacity_bytes, w.capacity_bytes);
    cr_assert_eq(sum.fits, r0.fits && r1.fits);
    /* the report names each role's GPU and capacity */
    char json[65536];
    cr_assert_eq(gpufit_result_to_json(s.r, json, sizeof json, NULL, NULL), GPUFIT_OK);
    char want_cap[64];
    snprintf(want_cap, sizeof want_cap, "\"capacity_bytes\": %llu",
             (unsigned long long)small.memory_bytes);
    cr_assert(strstr(json, want_cap) != NULL);
    done(&s);

    /* a 70B Q4 model on 24 + 12 GiB does not fit; with a third 24 GiB card it does */
    cr_assert_eq(run(&s, "model=llama-3-70b task=inference framework=llamacpp weight_dtype=q4_k_m "
                         "pp=3 device_gpus=rtx-4090,rtx-3060,rtx-4090 context_len=2048"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.fits, 1);
    done(&s);
}

/* The whole model is held once: layers add up to n_layers, weights to a single-GPU run's. */
Test(split, stages_add_up_to_the_model)
{
    run_s one, two;
    cr_assert_eq(run(&one, "model=qwen2.5-7b task=inference framework=llamacpp weight_dtype=q8_0 "
                           "gpu=rtx-4090"),
                 GPUFIT_OK);
    cr_assert_eq(run(&two, "model=qwen2.5-7b task=inference framework=llamacpp weight_dtype=q8_0 "
                           "gpu=rtx-4090 pp=3 tensor_split=1,2,1"),
                 GPUFIT_OK, "%s", two.err.message);
    uint64_t w1 = 0, kv1 = 0, w = 0, kv = 0;
    gpufit_result_bytes(one.r, 0, GPUFIT_MEM_WEIGHTS, &w1);
    gpufit_result_bytes(one.r, 0, GPUFIT_MEM_KV_CACHE, &kv1);
    uint32_t layers = 0;
    for (uint32_t i = 0; i < 3; i++) {
        uint64_t b = 0;
        gpufit_result_bytes(two.r, i, GPUFIT_MEM_WEIGHTS, &b);
        w += b;
        gpufit_result_bytes(two.r, i, GPUFIT_MEM_KV_CACHE, &b);
        kv += b;
        layers += role(&two, i).layers;
        uint64_t comm = 1;
        gpufit_result_bytes(two.r, i, GPUFIT_MEM_COMM_BUFFERS, &comm);
        cr_assert_eq(comm, 0, "llama.cpp copies between devices without NCCL");
    }
    cr_assert_eq(layers, 28);
    cr_assert_eq(w, w1);
    cr_assert_eq(kv, kv1);
    done(&one);
    done(&two);
}

Test(split, inconsistent_splits_are_rejected)
{
    static const struct {
        const char *spec;
        int32_t param;
        const char *word;
    } cases[] = {
        {"model=llama-3-8b task=inference pp=2 tensor_split=1,1,1", GPUFIT_JOB_TENSOR_SPLIT,
         "3 entries but pp = 2"},
        {"model=llama-3-8b task=inference tensor_split=1,1", GPUFIT_JOB_TENSOR_SPLIT, "pp = 1"},
        {"model=llama-3-8b task=inference pp=2 device_gpus=rtx-4090", GPUFIT_JOB_DEVICE_GPUS,
         "device_gpus has 1 entries"},
        {"model=llama-3-8b task=pretrain pp=2 tensor_split=1,1 pp_first_layers=10",
         GPUFIT_JOB_TENSOR_SPLIT, "pp_first_layers"},
        {"model=llama-3-8b task=pretrain pp=2 vpp=2 device_gpus=h100,h100",
         GPUFIT_JOB_DEVICE_GPUS, "vpp"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_s s;
        cr_assert_eq(run(&s, cases[i].spec), GPUFIT_E_INCONSISTENT, "%s", cases[i].spec);
        cr_assert_eq(s.err.param, cases[i].param, "%s", cases[i].spec);
        cr_assert(strstr(s.err.message, cases[i].word) != NULL, "%s: %s", cases[i].spec,
                  s.err.message);
        done(&s);
    }
}

/* Training pipelines take shares too: every stage is a role with dp x tp devices. */
Test(split, training_pipeline_by_shares)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=pretrain precision=bf16 framework=megatron gpu=h100 "
                         "tp=2 dp=2 pp=4 tensor_split=7,9,9,7 seq_len=4096 global_batch=64"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_summary sum = {.struct_size = sizeof sum};
    gpufit_result_summary(s.r, &sum);
    cr_assert_eq(sum.n_roles, 4);
    uint32_t layers = 0;
    for (uint32_t i = 0; i < 4; i++) {
        gpufit_role_info ro = role(&s, i);
        cr_assert_eq(ro.n_devices, 4);
        layers += ro.layers;
    }
    cr_assert_eq(layers, 32);
    done(&s);
}

/* Without shares llama.cpp still splits by its rule with equal shares: 17 + 15 of 32 layers on
 * two GPUs (32 / 33 of the way is past the first split point at one half), and the roles keep
 * their pipeline names; its token embedding stays in one process's host memory. */
Test(split, llama_cpp_equal_split_is_uneven)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference framework=llamacpp weight_dtype=q4_k_m "
                         "pp=2 gpu=rtx-4090"),
                 GPUFIT_OK, "%s", s.err.message);
    gpufit_role_info a = role(&s, 0), b = role(&s, 1), h = role(&s, 2);
    cr_assert_str_eq(a.name, "pp_first");
    cr_assert_str_eq(b.name, "pp_last");
    cr_assert_eq(a.layers, 17);
    cr_assert_eq(b.layers, 15);
    cr_assert_str_eq(h.name, "host");
    cr_assert_eq(h.n_devices, 1);
    done(&s);
}

/* Fuzz finding F8: shares that are positive as doubles but vanish as llama.cpp's floats fall
 * back to equal shares instead of NaN split points. */
Test(split, shares_that_vanish_as_floats)
{
    run_s s;
    cr_assert_eq(run(&s, "model=llama-3-8b task=inference pp=2 tensor_split=1e-300,0 gpu=h100"),
                 GPUFIT_OK, "%s", s.err.message);
    cr_assert_eq(role(&s, 0).layers + role(&s, 1).layers, 32);
    cr_assert_eq(role(&s, 0).layers, 17); /* equal shares, as llama.cpp splits them */
    done(&s);
}
