#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Model files and options as a scheduler meets them (issue 13): special files never hang the
# command (exit 3), a corrupt safetensors shard is the directory's error (exit 2, not a
# warning), counts never wrap (exit 2 naming the option and its range), and every --spec
# applies in order. The Python binding gives the same answer or error class
# (bindings/python/tests/test_files.py).
set -euo pipefail
G=${GPUFIT_CLI:-build/gpufit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() { # expect_exit CODE ARGS...
    local want=$1; shift
    set +e; timeout 20 "$G" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?; set -e
    [ "$got" -eq "$want" ] || fail "gpufit $* exited $got, wanted $want: $(cat "$tmp/err")"
}
cfg=tests/data/hf/meta-llama-3-8b.json

# a FIFO named config.json, or named like a shard, or given as a scenario: exit 3, no hang
mkdir "$tmp/fifo" "$tmp/fifo2"
mkfifo "$tmp/fifo/config.json"
expect_exit 3 estimate --model "$tmp/fifo" --spec "task=inference"
grep -q "not a regular file" "$tmp/err" || fail "FIFO config.json: $(cat "$tmp/err")"
cp "$cfg" "$tmp/fifo2/config.json"
mkfifo "$tmp/fifo2/model-00001-of-00002.safetensors"
expect_exit 3 estimate --model "$tmp/fifo2" --spec "task=inference"
mkfifo "$tmp/scenario.json"
expect_exit 3 estimate "$tmp/scenario.json"
expect_exit 3 estimate --model /dev/null --spec "task=inference"

# shards: a good one is read, a corrupt one fails the directory (exit 2, the file named)
mkdir "$tmp/sharded"
cp "$cfg" "$tmp/sharded/config.json"
python3 - "$tmp/sharded" <<'PY'
import json, struct, sys
d = sys.argv[1]
hdr = json.dumps({"w": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
with open(d + "/model-00001-of-00002.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(hdr)) + hdr + bytes(8))
with open(d + "/model-00002-of-00002.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 1 << 40) + b"{")  # a header length no file holds
PY
expect_exit 2 estimate --model "$tmp/sharded" --spec "task=inference gpu=h100"
grep -q "model-00002-of-00002.safetensors" "$tmp/err" || fail "corrupt shard not named"
rm "$tmp/sharded/model-00002-of-00002.safetensors"
expect_exit 0 estimate --model "$tmp/sharded" --spec "task=inference gpu=h100"

# counts: 64-bit parsing, range-checked (no "4294967298 x 8 GPUs" planned on 2 nodes)
for opt in --nodes --gpus-per-node --top; do
    expect_exit 2 plan --spec "model=llama-3-8b gpu=h100" "$opt" 4294967298
    grep -q -- "$opt needs an integer in \[1, 4294967295\]" "$tmp/err" || fail "$opt range"
done
expect_exit 2 recommend --spec "model=llama-3-8b" --max-gpus 99999999999999999999
expect_exit 2 plan --spec "model=llama-3-8b gpu=h100" --nodes 0

# every --spec applies, in order (a later one overrides)
expect_exit 0 estimate --json --spec "model=llama-3-8b gpu=h100 task=inference" --spec "tp=2"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["roles"][0]["devices"] != 2)' \
    "$tmp/out" || fail "the second --spec (tp=2) was not applied"
expect_exit 0 estimate --json --spec "model=llama-3-8b gpu=h100 task=inference tp=2" --spec "tp=1"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["roles"][0]["devices"] != 1)' \
    "$tmp/out" || fail "a later --spec does not override"
grep -q '"name": "llama-3-8b"' "$tmp/out" || fail "the first --spec's model was forgotten"
# more --spec options than the command keeps is an error, never a silently dropped one
many=(); for k in $(seq 17); do many+=(--spec "tp=1"); done
expect_exit 2 estimate --spec "model=llama-3-8b" "${many[@]}"
grep -q -- "more than 16 --spec options" "$tmp/err" || fail "17 --spec: $(head -c 300 "$tmp/err")"
many=(); for k in $(seq 15); do many+=(--spec "tp=1"); done
expect_exit 0 estimate --spec "model=llama-3-8b gpu=h100" "${many[@]}"
# help: every command explains itself (exit 0); bare gpufit prints usage and exits 2
for c in estimate recommend plan calibrate models gpus params version; do
    expect_exit 0 "$c" --help
    grep -q "usage: gpufit $c" "$tmp/out" || fail "$c --help: $(head -1 "$tmp/out")"
done
expect_exit 0 plan -h
set +e; "$G" >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e
[ "$rc" -eq 2 ] && grep -q "^usage:" "$tmp/err" || fail "bare gpufit exited $rc"
[ -f docs/gpufit.1 ] && grep -q '^\.TH GPUFIT 1' docs/gpufit.1 || fail "no man page"
[ -f LICENSE ] && grep -q "MIT License" LICENSE || fail "no LICENSE"
echo "test_cli_files: OK"
