#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python binding throughput, in one run (ratios are what to compare on a noisy machine):
gpufit.evaluate (a full Report) against gpufit.evaluate_summary (the fast path), on the same
model and job.

Usage: python3 tools/bench_python.py [SECONDS]   (needs the built library: make)"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
os.environ.setdefault("GPUFIT_LIBRARY", os.path.join(ROOT, "build", "libgpufit.so.0"))

import gpufit  # noqa: E402


def rate(fn, seconds):
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    m = gpufit.Model("llama-3-8b")
    j = gpufit.Job(task="inference", gpu="rtx-4090", context_len=8192)
    full = rate(lambda: gpufit.evaluate(m, j), seconds)
    fast = rate(lambda: gpufit.evaluate_summary(m, j), seconds)
    print("gpufit.evaluate          : %10.0f /s" % full)
    print("gpufit.evaluate_summary  : %10.0f /s  (%.1fx)" % (fast, fast / full))
    return 0


if __name__ == "__main__":
    sys.exit(main())
