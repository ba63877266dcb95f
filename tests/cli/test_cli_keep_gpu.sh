#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 15's "Done when" jobs: each gets, first, a fix that keeps the GPU and its count, fits
# when its changes are applied to the job (re-evaluated: verdict fits), and comes with the
# framework's flags (docs/mitigations.md, docs/flags.md).
set -euo pipefail
G=${GPUFIT_CLI:-build/gpufit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# check NAME WANT_FLAG ARGS...: the job does not fit; its first mitigation fits, changes no
# hardware, has flags containing WANT_FLAG, and applying its spec gives verdict "fits"
check() {
    local name=$1 want=$2; shift 2
    set +e; "$G" estimate "$@" --json >"$tmp/job.json" 2>"$tmp/err"; local rc=$?; set -e
    [ "$rc" -eq 1 ] || fail "$name: exit $rc, wanted 1 (does not fit): $(cat "$tmp/err")"
    python3 - "$tmp/job.json" "$want" >"$tmp/first" 2>&1 <<'PY' || fail "$name: first fix: $(cat "$tmp/first")"
import json, sys
r = json.load(open(sys.argv[1]))
ms = r["mitigations"]
assert ms, "no mitigation"
m = ms[0]
assert m["fits_after"] is True, ("first fix does not fit", m)
hw = {"gpu", "gpu_memory_bytes", "gpu_memory_gib", "device_gpus", "gpus"}
assert not hw & set(m["changes"]), ("first fix changes the hardware", m["changes"])
assert sys.argv[2] in m["flags"], ("flags lack " + sys.argv[2], m["flags"])
print(m["spec"])
PY
    local spec; spec=$(cat "$tmp/first")
    set +e; "$G" estimate "$@" --spec "$spec" --json >"$tmp/after.json" 2>"$tmp/err"; rc=$?; set -e
    [ "$rc" -eq 0 ] || fail "$name: '$spec' applied exits $rc, wanted 0 (fits): $(cat "$tmp/err")"
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["verdict"] != "fits")' \
        "$tmp/after.json" || fail "$name: '$spec' applied is not verdict fits"
}

# LoRA of Llama-3-8B on one RTX 4090, seq 4096, micro-batch 4, from its config.json
check "lora 4090" "--gradient_checkpointing" --model tests/data/hf/meta-llama-3-8b.json \
    --spec "task=lora gpu=rtx-4090 seq_len=4096 micro_batch=4"
# full fine-tuning of Qwen2.5-7B on one A100-80GB
check "qwen full a100" "--bf16" --model tests/data/hf/qwen2.5-7b.json \
    --spec "task=finetune gpu=a100-80gb"
check "qwen full a100 preset" "--bf16" --spec "model=qwen2.5-7b task=finetune gpu=a100-80gb"
# Llama-3-70B inference at 32k context on two RTX 3090s (gpus=2 alone: llama.cpp splits the layers)
check "70b 2x3090 llama.cpp" "-ctk q8_0" \
    --spec "model=llama-3-70b task=inference framework=llamacpp gpu=rtx-3090 gpus=2 context_len=32768"
echo "keep-gpu CLI tests passed"
