#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python binding throughput against the bare library, in one run (issue 16's "Done when").

Ratios are what to compare on a noisy machine: every rate is taken in the same process and
printed against a bare ctypes call of ``gpufit_evaluate_summary`` (prototypes declared, the
struct reused, no error struct), which is the ceiling of any Python call into the library.

    gpufit.evaluate_summary(m, j).fits           >= 25 % of the bare call
    gpufit.evaluate(m, j) + one component read   >= 10 %
    gpufit.sweep over a 64 x 8 grid              >= 1,000,000 estimates/s (one call into C)
    import gpufit                                <= 30 ms more than `python3 -c pass`

Usage: python3 tools/bench_python.py [SECONDS per figure] [--check]
(needs the built library: make; ``make bench`` runs it). ``--check`` exits 1 when a target
is missed. The import figure runs fresh interpreters in a loop (the fastest of each, alternated).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PKG = os.path.join(ROOT, "bindings", "python")
sys.path.insert(0, PKG)
os.environ.setdefault("GPUFIT_LIBRARY", os.path.join(ROOT, "build", "libgpufit.so.0"))

import ctypes  # noqa: E402

import gpufit  # noqa: E402
from gpufit import _lib  # noqa: E402
from gpufit._types import Summary  # noqa: E402


def rates(fns, seconds):
    """Calls per second of each ``(fn, per_call)`` in ``fns``, in this process's CPU time
    (time.process_time: time on a shared machine's other jobs is not counted), measured in
    interleaved slices; the best slice of each."""
    best = [0.0] * len(fns)
    rounds = 5
    for _ in range(rounds):
        for i, (fn, per_call) in enumerate(fns):
            n, t0 = 0, time.process_time()
            while True:
                for _ in range(16):
                    fn()
                n += 16
                t = time.process_time() - t0
                if t >= seconds / rounds:
                    break
            best[i] = max(best[i], n * per_call / t)
    return best


def import_ms(runs):
    """(fastest ms of `python3 -c pass`, fastest ms of `python3 -c "import gpufit"`), fresh
    interpreters alternated so that both see the same machine load."""
    # as an installed package: byte-compiled (pip compiles at install; this machine may set
    # PYTHONDONTWRITEBYTECODE), the library found without GPUFIT_LIBRARY (in-tree build)
    cache = tempfile.mkdtemp(prefix="gpufit-bench-pyc-")
    env = dict(os.environ, PYTHONPATH=PKG, PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("GPUFIT_LIBRARY", None)
    subprocess.run([sys.executable, "-c", "import gpufit"], env=env, check=True)
    base, with_import = [], []
    for _ in range(runs):
        for code, out in (("pass", base), ("import gpufit", with_import)):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=env, check=True)
            out.append((time.perf_counter() - t0) * 1e3)
    shutil.rmtree(cache, ignore_errors=True)
    return min(base), min(with_import)


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    seconds = float(args[0]) if args else 2.0
    m = gpufit.Model("llama-3-8b")
    j = gpufit.Job(task="inference", gpu="rtx-4090", context_len=8192)

    fn = _lib.lib.gpufit_evaluate_summary
    s = Summary()
    ref = ctypes.byref(s)
    mp, jp = m._ptr, j._ptr
    grid = dict(micro_batch=range(1, 65), seq_len=[512 << k for k in range(8)])
    t = gpufit.Job(task="pretrain", gpu="h100", precision="bf16", seq_len=2048)
    bare, fast, comp, full, sweep = rates([
        (lambda: fn(mp, jp, ref, None), 1),
        (lambda: gpufit.evaluate_summary(m, j).fits, 1),
        (lambda: gpufit.evaluate(m, j).roles[0].components["kv_cache"], 1),
        (lambda: gpufit.evaluate(m, j).to_dict(), 1),
        (lambda: gpufit.sweep(m, t, **grid), 64 * 8)], seconds)
    base_ms, import_total = import_ms(int(os.environ.get("GPUFIT_BENCH_IMPORTS", "20")))
    added = import_total - base_ms

    def line(name, value, unit, ratio=None, target=None, ok=None):
        r = "" if ratio is None else "  %6.1f %% of bare" % (100 * ratio)
        tg = "" if target is None else "  target %s: %s" % (target, "met" if ok else "MISSED")
        print("  %-44s %12.0f %s%s%s" % (name, value, unit, r, tg))

    print("Python binding, one process, CPU time (library %s):" % gpufit.library_path)
    line("bare ctypes gpufit_evaluate_summary", bare, "/s")
    results = []
    ok = fast / bare >= 0.25
    results.append(ok)
    line("gpufit.evaluate_summary(m, j).fits", fast, "/s", fast / bare, ">= 25 %", ok)
    ok = comp / bare >= 0.10
    results.append(ok)
    line("gpufit.evaluate(m, j), one component", comp, "/s", comp / bare, ">= 10 %", ok)
    line("gpufit.evaluate(m, j).to_dict()", full, "/s", full / bare)
    ok = sweep >= 1e6
    results.append(ok)
    line("gpufit.sweep 64 x 8 grid", sweep, "estimates/s", sweep / bare, ">= 1 M/s", ok)
    ok = added <= 30.0
    results.append(ok)
    print("  %-44s %9.1f ms  (python3 -c pass: %.1f ms, ratio %.2f)  target <= 30 ms: %s"
          % ("import gpufit adds", added, base_ms, import_total / base_ms,
             "met" if ok else "MISSED"))
    return 1 if check and not all(results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
