/* SPDX-License-Identifier: MIT */
/* NVLS buffers at the high end of comm_buffers (docs/memory/runtime.md, "NVLS"): on NVSwitch
 * boards NCCL gives each communicator with 2 or more GPUs of a node nChannels x 2 x buffSize
 * per head (src/transport/nvls.cc ncclNvlsBufferSetup): 192 MiB per head on SM90 (NCCL
 * 2.18-2.19: 16 x 2 x (4 MiB + 2 MiB)), 64 MiB on SM100 (32 x 2 x 1 MiB), times the
 * communicator's GPUs on a node (at most 8). Bytes by hand. */
#include <criterion/criterion.h>

#include "gpufit.h"
#include "run.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

static uint64_t comm_high(const char *spec)
{
    run_s s;
    uint64_t lo, hi;
    run_ok(&s, spec);
    band0(&s, GPUFIT_MEM_COMM_BUFFERS, &lo, &hi);
    done(&s);
    return hi;
}

#define VLLM70 "model=llama-3-70b task=inference framework=vllm tp=8 "

Test(nvls, vllm_tp8_h100_two_communicators)
{
    /* vLLM's TP group holds two communicators (PyNccl and torch's device group): 2 x 1 GiB
     * at the NCCL constant's high end, and 2 x 8 heads x 192 MiB of NVLS buffers */
    cr_assert_eq(comm_high(VLLM70 "gpu=h100"), 2 * GIB + 16 * 192 * MIB);
}

Test(nvls, sm100_buffers_are_smaller)
{
    cr_assert_eq(comm_high(VLLM70 "gpu=b200"), 2 * GIB + 16 * 64 * MIB);
}

Test(nvls, none_without_nvswitch)
{
    /* A100 (SM80: no NVLS) and H100 PCIe (an NVLink bridge, no NVSwitch) */
    cr_assert_eq(comm_high(VLLM70 "gpu=a100-80gb-sxm4"), 2 * GIB);
    cr_assert_eq(comm_high(VLLM70 "gpu=h100-pcie"), 2 * GIB);
}

Test(nvls, groups_over_at_most_eight_gpus_of_a_node)
{
    /* Megatron tp 2 x dp 16: the tp group's 2 heads and the data-parallel group's 8 (a node
     * holds at most 8 of its 16 GPUs): 10 x 192 MiB over the two communicators' 2 GiB */
    cr_assert_eq(comm_high("model=llama-3-8b task=pretrain framework=megatron tp=2 dp=16 "
                           "gpus=32 gpu=h100"),
                 2 * GIB + 10 * 192 * MIB);
}
