#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replays PyTorch's caching-allocator rules (c10/cuda/CUDACachingAllocator.cpp: round_size,
get_allocation_size, best-fit get_free_block, should_split) over a sequence of fresh
allocations and prints what torch.cuda.memory_allocated() would count: the blocks, not the
bytes (docs/memory/allocator.md, "Blocks above 1 MiB").

The default sequence is bert-base-cased in fp32 moved to the GPU module by module
(Module._apply: children first, then parameters, then buffers), the accelerate validation case
accelerate-bert-base-cased-fp32-load (measured 433,774,920 B +- 5,242 B).

    python3 tools/allocator_replay.py            # the bert-base-cased case
    python3 tools/allocator_replay.py 4096 3e6   # any sizes in bytes, in order
    python3 tools/allocator_replay.py --check [GPUFIT]   # make check: the replay lies within
        # the measurement's rounding, and inside gpufit's weights band for that case
"""
import json
import os
import subprocess
import sys
import tempfile

MIB = 1 << 20
SMALL = MIB          # kSmallSize: requests up to this come from the small pool
SMALL_BUFFER = 2 * MIB
LARGE_BUFFER = 20 * MIB
MIN_LARGE_ALLOC = 10 * MIB
ROUND_LARGE = 2 * MIB


def round_size(n):
    return 512 if n < 512 else (n + 511) // 512 * 512


def replay(sizes):
    """memory_allocated() after allocating `sizes` (bytes) in order, nothing freed."""
    free = {"small": [], "large": []}
    allocated = 0
    for n in sizes:
        size = round_size(n)
        pool = "small" if size <= SMALL else "large"
        fits = [b for b in free[pool] if b >= size]
        if fits:  # best fit among the cached blocks
            block = min(fits)
            free[pool].remove(block)
        elif size <= SMALL:
            block = SMALL_BUFFER
        elif size < MIN_LARGE_ALLOC:
            block = LARGE_BUFFER
        else:
            block = (size + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE
        rest = block - size
        if (pool == "small" and rest >= 512) or (pool == "large" and rest > SMALL):
            free[pool].append(rest)  # split: the block is the request
            block = size
        allocated += block
    return allocated


def bert_base_cased_fp32():
    h, v, f, layers = 768, 28996, 3072, 12
    t = [v * h * 4, 512 * h * 4, 2 * h * 4, h * 4, h * 4]  # embeddings and their LayerNorm
    t += [512 * 8, 512 * 8]  # buffers position_ids and token_type_ids (int64)
    for _ in range(layers):
        t += [h * h * 4, h * 4] * 3 + [h * h * 4, h * 4, h * 4, h * 4]  # q k v, o, LayerNorm
        t += [f * h * 4, f * 4] + [h * f * 4, h * 4, h * 4, h * 4]      # FFN, LayerNorm
    t += [h * h * 4, h * 4]  # pooler
    return t


CASE = "accelerate-bert-base-cased-fp32-load"


def check(gpufit):
    """1 unless the replay of CASE matches its measurement and lies in gpufit's band."""
    here = os.path.dirname(os.path.abspath(__file__))
    cases = os.path.join(here, "..", "tests", "validation", "public.jsonl")
    case = next(c for c in map(json.loads, open(cases)) if c["id"] == CASE)
    meas = case["measurements"][0]
    got = replay(bert_base_cased_fp32())
    ok = abs(got - meas["bytes"]) <= meas["resolution_bytes"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case["scenario"], f)
    try:
        out = subprocess.run([gpufit, "estimate", "--json", f.name], capture_output=True,
                             text=True)
    finally:
        os.unlink(f.name)
    if out.returncode not in (0, 1, 5):
        print("allocator_replay: gpufit failed: %s" % out.stderr.strip())
        return 1
    role = json.loads(out.stdout)["roles"][0]
    lo, hi = role["components_low"]["weights"], role["components_high"]["weights"]
    inside = lo <= got <= hi
    print("    replay %d B, measured %d +- %d B: %s; gpufit's weights band [%d, %d]: %s"
          % (got, meas["bytes"], meas["resolution_bytes"], "matches" if ok else "MISMATCH",
             lo, hi, "inside" if inside else "OUTSIDE"))
    return 0 if ok and inside else 1


def main(argv):
    if argv and argv[0] == "--check":
        return check(argv[1] if len(argv) > 1 else os.path.join("build", "gpufit"))
    sizes = [int(float(a)) for a in argv] if argv else bert_base_cased_fp32()
    got = replay(sizes)
    print("tensors: %d, bytes: %d, memory_allocated: %d (+%d)"
          % (len(sizes), sum(sizes), got, got - sum(sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
