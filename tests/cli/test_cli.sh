#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Smoke tests of the gpufit command: exit codes, JSON report invariants, listings.
set -euo pipefail
G=${GPUFIT_CLI:-build/gpufit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_exit() { # expect_exit CODE ARGS...
    local want=$1; shift
    set +e; "$G" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?; set -e
    [ "$got" -eq "$want" ] || fail "gpufit $* exited $got, wanted $want: $(cat "$tmp/err")"
}

# 0 fits, 1 does not fit, 2 bad input, 3 unreadable file
expect_exit 0 estimate --spec "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192"
expect_exit 1 estimate --spec "model=llama-3-70b task=inference gpu=rtx-4090"
expect_exit 2 estimate --spec "model=llama-3-8b tp=banana"
grep -q "tp" "$tmp/err" || fail "bad value message does not name the key"
expect_exit 2 estimate --spec "model=llama-3-8b frobnicate=1"
grep -q "frobnicate" "$tmp/err" || fail "unknown key message does not name the key"
expect_exit 2 estimate --spec "model=no-such-model"
expect_exit 2 estimate --spec "model=llama-3-8b tp=3"
expect_exit 3 estimate "$tmp/does-not-exist.json"
expect_exit 2 estimate
echo '{"model": "llama-3-8b", "task": "inference", "gpu": {"memory_gib": 24}, "context_len": 4096' >"$tmp/bad.json"
expect_exit 2 estimate "$tmp/bad.json"

# the JSON report: components add up to device_used_bytes in every role
for spec in "model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192" \
            "model=llama-3-8b task=pretrain gpu=h100 micro_batch=2 seq_len=4096 checkpointing=selective" \
            "model=mixtral-8x7b task=inference gpu=a100-80gb weight_dtype=q4_k_m framework=llamacpp" \
            "model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024" \
            "model=llama-3-70b task=pretrain gpu=h100 tp=8 pp=4 dp=2 zero=1 precision=bf16 framework=megatron" \
            "model=llama-3.1-8b task=inference gpu=rtx-3090 framework=vllm context_len=20000"; do
    set +e; "$G" estimate --json --spec "$spec" >"$tmp/r.json"; st=$?; set -e
    [ "$st" -le 1 ] || [ "$st" -eq 5 ] || fail "estimate --json --spec '$spec' exited $st"
    python3 - "$tmp/r.json" "$st" "$spec" <<'PY' || fail "component sum check for: $spec"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == 2 and r["roles"], r
assert r["model"]["n_params"] > 0 and r["model"]["n_active_params"] > 0
for role in r["roles"]:
    total = sum(role["components"].values())
    assert total == role["device_used_bytes"], (role["name"], total, role["device_used_bytes"])
    assert role["peak_allocated_bytes"] <= role["peak_reserved_bytes"] <= role["device_used_bytes"]
    # the band (docs/band.md): low <= point <= high for every total and component
    for lvl in ("peak_allocated", "peak_reserved", "device_used", "kv_capacity"):
        lo, hi = role[lvl + "_low_bytes"], role[lvl + "_high_bytes"]
        assert lo <= role[lvl + "_bytes"] <= hi, (role["name"], lvl, lo, hi)
    for c, b in role["components"].items():
        assert role["components_low"][c] <= b <= role["components_high"][c], (c,)
    # exact terms; a GGUF file type named without its file is a recipe with a band (band.md);
    # PyTorch training: the optimizer step's temporaries and the gradients freed between
    # steps depend on the release (docs/memory/optimizer-step.md); llama.cpp's compute buffer
    # reaches down to builds without the KV row indices (docs/memory/llamacpp.md)
    gguf_recipe = "weight_dtype=q4_k_m" in sys.argv[3]
    llamacpp = "framework=llamacpp" in sys.argv[3]
    # PyTorch's caching allocator: per-tensor families reach up by the blocks' rests
    # (docs/memory/allocator.md, "Blocks above 1 MiB"); their low end is the point
    blocks = "framework=" not in sys.argv[3] or "framework=megatron" in sys.argv[3]
    pt_train = "framework=" not in sys.argv[3] and "task=inference" not in sys.argv[3]
    for c in ("weights", "gradients", "optimizer_states", "master_weights", "activations"):
        if pt_train and c in ("gradients", "optimizer_states"):
            continue
        if llamacpp and c == "activations" and role["name"] != "host":
            assert role["components_low"][c] < role["components_high"][c], (c, "set_rows")
            continue
        if blocks and c != "activations":
            assert role["components_low"][c] == role["components"][c], (c, "blocks")
            continue
        if c == "weights" and gguf_recipe and role["name"] != "host":
            assert role["components_low"][c] < role["components_high"][c], (c, "recipe")
            continue
        assert role["components_low"][c] == role["components_high"][c], (c, "exact")
assert r["peak_bytes"] == max(x["device_used_bytes"] for x in r["roles"])
assert r["peak_low_bytes"] <= r["peak_bytes"] <= r["peak_high_bytes"]
# the exit code follows the three-way verdict
assert int(sys.argv[2]) == {"fits": 0, "oom": 1, "marginal": 5}[r["verdict"]], (r["verdict"],)
PY
done

# a JSON scenario file with the spec applied on top
cat >"$tmp/s.json" <<'JSON'
{"model": {"preset": "llama-3-8b", "n_layers": 8}, "gpu": "h100-sxm-80gb",
 "task": "pretrain", "precision": "amp_bf16", "micro_batch": 1, "seq_len": 4096}
JSON
expect_exit 0 estimate "$tmp/s.json" --spec "checkpointing=full" --json
python3 -c "import json,sys; r=json.load(open('$tmp/out')); assert r['roles'][0]['layers']==8, r" \
    || fail "preset override n_layers=8 not applied"

# real model files: a config.json (exact count of the preset) and a GGUF header
expect_exit 0 estimate --model tests/data/hf/meta-llama-3-8b.json --spec "task=inference gpu=rtx-4090" --json
python3 -c "import json; r=json.load(open('$tmp/out')); assert r['model']['n_params']==8030261248, r['model']" \
    || fail "--model config.json count"
expect_exit 0 estimate --model tests/fuzz/corpus/gguf/llama_q4_k_m.gguf --spec "task=inference gpu=rtx-4090 context_len=512"
expect_exit 3 estimate --model "$tmp/no-such-dir" --spec "task=inference"

# recommend and plan: text lines and one JSON document, empty lists included
expect_exit 0 recommend --spec "model=llama-3-8b task=inference" --only rtx-4090,h100
grep -q "^ 1\. " "$tmp/out" || fail "recommend: no numbered line"
list_json() { # list_json KEY ARGS...: `gpufit ARGS --json` is {"KEY": [...]}, items iff exit 0
    local key=$1; shift
    set +e; "$G" "$@" --json >"$tmp/l.json"; local st=$?; set -e
    [ "$st" -le 1 ] || fail "gpufit $* --json exited $st"
    python3 - "$tmp/l.json" "$key" "$st" <<'PY' || fail "gpufit $* --json"
import json, sys
items = json.load(open(sys.argv[1]))[sys.argv[2]]
assert (len(items) > 0) == (sys.argv[3] == "0"), (len(items), sys.argv[3])
PY
}
list_json recommendations recommend --spec "model=llama-3-8b" --only rtx-4090,h100
list_json recommendations recommend --spec "model=llama-3-70b task=pretrain" --max-gpus 1
list_json layouts plan --spec "model=llama-3-8b task=pretrain gpu=h100" --top 3
list_json layouts plan --spec "model=llama-3-70b task=pretrain" --gpus-per-node 1
expect_exit 0 plan --spec "model=llama-3-8b task=pretrain gpu=h100" --top 3
grep -q "^placement of layout 1: " "$tmp/out" || fail "plan: no placement line"
expect_exit 1 plan --spec "model=llama-3-70b task=pretrain" --gpus-per-node 1
grep -q "^no layout fits$" "$tmp/out" || fail "plan: no 'no layout fits'"
# what every auto resolved to: a text line and the JSON "resolved" (docs/report.md)
expect_exit 0 estimate --spec "model=llama-3-8b task=lora gpu=a100-80gb seq_len=1024"
grep -q "^resolved: framework=pytorch precision=bf16 weight_dtype=bf16 compute_dtype=bf16 grad_dtype=fp32 " "$tmp/out" \
    || fail "resolved line: $(grep resolved "$tmp/out")"
grep -q "^note: precision auto for LoRA: the frozen base weights load in bf16" "$tmp/out" || fail "LoRA base note"
expect_exit 0 estimate --spec "model=llama-3-8b task=inference framework=vllm gpu=rtx-3090 gpus=2" --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["resolved"]; sys.exit(not (r["tp"] == 2 and r["layout"] == "gpus_tp" and r["gpu_memory_utilization"] == 0.92))' \
    "$tmp/out" || fail "resolved JSON: gpus alone under vLLM"
# the job's own flags, in its framework's words (text line and JSON "flags")
expect_exit 0 estimate --spec "model=llama-3-8b task=inference framework=vllm gpu=h100 gpus=2 context_len=8192"
grep -q "^flags: --max-model-len 8192 --gpu-memory-utilization 0.92 --tensor-parallel-size 2$" "$tmp/out" \
    || fail "job flags line: $(grep '^flags' "$tmp/out")"
expect_exit 0 estimate --spec "model=llama-3-8b task=inference framework=llamacpp gpu=rtx-4090 context_len=8192" --json
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["flags"] != "-c 8192 -ngl 999 -fa on")' \
    "$tmp/out" || fail "job flags JSON: llama.cpp"
# plan says which GPU count it used: the job's gpus=, else 8 assumed, else --gpus-per-node
expect_exit 0 plan --spec "model=llama-3-8b task=lora gpu=rtx-4090 gpus=2" --top 1
grep -q "^[0-9]* layouts evaluated on 1 x 2 GPUs (the job's gpus);" "$tmp/out" || fail "plan gpus: $(head -1 "$tmp/out")"
expect_exit 0 plan --spec "model=llama-3-8b task=lora gpu=rtx-4090" --top 1
grep -q "^[0-9]* layouts evaluated on 1 x 8 GPUs (assumed: no gpus= or --gpus-per-node given);" "$tmp/out" \
    || fail "plan assumed: $(head -1 "$tmp/out")"
expect_exit 0 plan --spec "model=llama-3-8b task=lora gpu=rtx-4090 gpus=2" --gpus-per-node 4 --top 1 --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r["gpus_per_node"] == 4 and r["nodes"] == 1 and r["gpus_assumed"] is False))' \
    "$tmp/out" || fail "plan --json: gpus_per_node"
expect_exit 1 recommend --spec "model=llama-3-70b task=pretrain" --max-gpus 1
grep -q "^no catalogue GPU fits this job with up to 1 GPUs$" "$tmp/out" || fail "recommend: empty"

# every advice reproduces (docs/advice.md): the scenario as a file plus the advice's spec gives
# the printed peak (issue 13: the gpipe job planned on 2 nodes; a recommendation; a mitigation)
echo '{"model": "llama-3-8b", "task": "pretrain", "pp": 4, "pp_schedule": "gpipe", "gpu": "h100"}' \
    >"$tmp/gpipe.json"
expect_exit 0 plan "$tmp/gpipe.json" --nodes 2 --top 3 --json
python3 - "$tmp/out" >"$tmp/advice" <<'PY' || fail "plan --json: no changes"
import json, sys
for y in json.load(open(sys.argv[1]))["layouts"]:
    assert y["changes"]["pp_schedule"] == "auto", y
    assert y["spec"].endswith(" pp_schedule=auto"), y
    assert "--per_device_train_batch_size" in y["flags"], y  # the HF Trainer job's flags
    print("%d\t%s\t%s" % (y["peak_bytes"], json.dumps(y["flags"]), y["spec"]))
PY
while IFS="$(printf '\t')" read -r peak flags spec; do
    expect_exit 0 estimate "$tmp/gpipe.json" --spec "$spec" --json
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["peak_bytes"] != int(sys.argv[2]))' \
        "$tmp/out" "$peak" || fail "plan layout '$spec' does not reproduce $peak bytes"
    # a layout's flags are the flags of the job with the layout applied (docs/flags.md)
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["flags"] != json.loads(sys.argv[2]))' \
        "$tmp/out" "$flags" || fail "plan layout '$spec': flags differ from the estimate's"
done <"$tmp/advice"
echo '{"model": "llama-3-70b", "task": "inference", "gpu": {"memory_gib": 20}}' >"$tmp/rec.json"
expect_exit 0 recommend "$tmp/rec.json" --only h100,rtx-4090 --json
python3 - "$tmp/out" >"$tmp/advice" <<'PY' || fail "recommend --json: no changes"
import json, sys
for x in json.load(open(sys.argv[1]))["recommendations"]:
    assert x["changes"]["tp"] == x["count"], x
    print(x["peak_bytes"], x["spec"])
PY
[ -s "$tmp/advice" ] || fail "recommend: empty list"
while read -r peak spec; do
    expect_exit 0 estimate "$tmp/rec.json" --spec "$spec" --json
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["peak_bytes"] != int(sys.argv[2]))' \
        "$tmp/out" "$peak" || fail "recommendation '$spec' does not reproduce $peak bytes"
done <"$tmp/advice"
expect_exit 0 recommend "$tmp/rec.json" --only h100
grep -q '^    --spec "tp=[0-9]* gpu=h100-sxm5"$' "$tmp/out" || fail "recommend: no --spec line"
echo '{"model": "llama-3-8b", "task": "finetune", "gpu": "rtx-4090"}' >"$tmp/mit.json"
expect_exit 1 estimate "$tmp/mit.json" --json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mitigations"][0]; print(m["peak_bytes_after"], m["spec"])' \
    "$tmp/out" >"$tmp/advice"
read -r peak spec <"$tmp/advice"
set +e; "$G" estimate "$tmp/mit.json" --spec "$spec" --json >"$tmp/out" 2>"$tmp/err"; set -e
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["peak_bytes"] != int(sys.argv[2]))' \
    "$tmp/out" "$peak" || fail "mitigation '$spec' does not reproduce $peak bytes"

# the three-way verdict (docs/band.md): the 8B inference job needs 17.29-18.10 GiB on CUDA 12.4
# (lazy loading; the high end with its K and V matrices' allocator block rests, 64 MiB); with
# no CUDA release and no catalogue GPU the context may be eager (up to 1434 MiB), and the band
# grows to 18.92 GiB
expect_exit 5 estimate --spec "model=llama-3-8b task=inference context_len=8192 gpu_memory_gib=18.5"
grep -q "^verdict: MARGINAL: 17.29-18.92 GiB of 18.50 GiB" "$tmp/out" || fail "eager text: $(tail -1 "$tmp/out")"
band="model=llama-3-8b task=inference context_len=8192 cuda_version=12.4"
expect_exit 0 estimate --spec "$band gpu_memory_gib=18.5"
grep -q "^verdict: FITS: 17.29-18.10 GiB of 18.50 GiB" "$tmp/out" || fail "fits text: $(tail -1 "$tmp/out")"
expect_exit 5 estimate --spec "$band gpu_memory_gib=17.7"
grep -q "^verdict: MARGINAL: 17.29-18.10 GiB of 17.70 GiB" "$tmp/out" || fail "marginal text"
expect_exit 1 estimate --spec "$band gpu_memory_gib=17.0"
grep -q "^verdict: DOES NOT FIT: 17.29-18.10 GiB of 17.00 GiB (short by 0.77 GiB" "$tmp/out" \
    || fail "oom text: $(tail -1 "$tmp/out")"
expect_exit 1 estimate --strict --spec "$band gpu_memory_gib=17.7"  # marginal fails closed
expect_exit 0 estimate --strict --spec "$band gpu_memory_gib=18.5"
expect_exit 2 estimate --strict --spec "$band"                      # no GPU: no verdict
expect_exit 0 estimate --spec "$band"                               # ... which is fine unstrict
# a server whose KV budget is what fails: no "short by" a wrapped number
expect_exit 1 estimate --spec "model=llama-3-8b task=inference framework=vllm gpu=rtx-3090 context_len=131072"
grep -q "^verdict: DOES NOT FIT: the KV-cache budget is smaller than the job needs" "$tmp/out" \
    || fail "server shortfall text: $(tail -1 "$tmp/out")"

# calibration (docs/calibration.md): runs -> profile -> --profile; bad input exits 2, a
# missing file 3
expect_exit 0 calibrate tests/validation/public.jsonl -o "$tmp/prof.json"
grep -q '"gpufit_profile": 1' "$tmp/prof.json" || fail "calibrate wrote no profile"
grep -q '"cuda_context": {"point": ' "$tmp/prof.json" || fail "calibrate fitted no context"
expect_exit 0 estimate --profile "$tmp/prof.json" --spec "$band gpu=h100"
expect_exit 3 calibrate "$tmp/no-such-runs.jsonl"
echo '{"scenario": {"model": "llama-3-8b"}}' >"$tmp/bad.jsonl"
expect_exit 2 calibrate "$tmp/bad.jsonl"
grep -q "measurements" "$tmp/err" || fail "calibrate: the error does not name the missing key"
echo '{"gpufit_profile": 1, "constants": {"cuda_ctx": {}}}' >"$tmp/badprof.json"
expect_exit 2 estimate --profile "$tmp/badprof.json" --spec "$band"
expect_exit 0 calibrate --help
expect_exit 2 calibrate

# listings
# (into files first: grep -q closing the pipe early would fail the writer under pipefail)
"$G" models >"$tmp/models"; grep -q "deepseek-r1" "$tmp/models" || fail "models lacks deepseek-r1"
"$G" gpus >"$tmp/gpus"; grep -q "h100-sxm5" "$tmp/gpus" || fail "gpus lacks h100-sxm5"
"$G" params >"$tmp/params"; grep -q "^tp " "$tmp/params" || fail "params lacks tp"
grep -q "^tensor_split  *job   list   up to 16 entries, each in \[0, 1e+06\]" "$tmp/params" \
    || fail "params: tensor_split is not shown as a list"
grep -q "^device_gpus  *job   list   up to 16 entries, each a name from 'gpufit gpus'" \
    "$tmp/params" || fail "params: device_gpus is not shown as a list"
"$G" version >"$tmp/version"; grep -q "gpufit " "$tmp/version" || fail "version"
echo "test_cli: OK"
