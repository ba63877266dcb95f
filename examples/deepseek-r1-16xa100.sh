#!/bin/sh
# DeepSeek-R1 (671B parameters) on 16 x A100-80GB at FP16 — the seed table's example (issue #4):
# the per-GPU headroom under stated assumptions, then the layouts and GPUs that fit with room to
# serve. Run from the repository root after `make` (or set GPUFIT to an installed gpufit).
#
# Assumptions (all visible in the specs below):
#  - FP16 weights: the checkpoint is FP8, but A100s have no FP8 tensor cores, so serving "at FP16"
#    means upcasting; 671,026,419,200 parameters x 2 bytes = 1,342 GB of the 16 x 85.9 GB = 1,374 GB.
#  - 2 nodes of 8 GPUs: tensor parallelism 8 inside a node, 2 pipeline stages across the nodes.
#  - PyTorch-style runtime: CUDA context 0.5 GiB and NCCL buffers 0.6 GiB per communicator per
#    GPU (memory-model.md sections 8.1 and 8.4); one sequence of 4,096 tokens in the KV cache.
set -eu
GPUFIT=${GPUFIT:-build/gpufit}

echo "== 1. 16 x A100-80GB, FP16 weights, tp=8 pp=2, one 4k-token sequence"
"$GPUFIT" estimate --spec "model=deepseek-r1 task=inference gpu=a100-80gb gpus=16 tp=8 pp=2 \
precision=fp16 context_len=4096 batch=1 mitigations=4" || true

echo
echo "== 2. serving layouts on the same 2 x 8 A100s with FP8 weights (vLLM runs them on Ampere"
echo "==    as weight-only FP8), 8 sequences of 32k tokens, vLLM's 0.9 budget"
"$GPUFIT" plan --spec "model=deepseek-r1 task=inference gpu=a100-80gb framework=vllm \
weight_dtype=fp8 context_len=32768 batch=8" --gpus-per-node 8 --nodes 2 --top 5 || true

echo
echo "== 3. GPUs and counts on which the FP16 model serves 8 sequences of 32k tokens"
"$GPUFIT" recommend --spec "model=deepseek-r1 task=inference precision=fp16 framework=vllm \
context_len=32768 batch=8" --max-gpus 64 | head -n 8
