# SPDX-License-Identifier: MIT
"""Measured runs (docs/runs.md) from what users already have, for :func:`gpufit.calibrate`.

* :func:`from_vllm_log`: a vLLM startup log (weights, activation peak, the KV budget);
* :func:`from_llamacpp_log`: a llama.cpp log (model, KV and compute buffers per device);
* :func:`from_memory_stats`: a ``torch.cuda.memory_stats()`` dict (peak allocated/reserved);
* :class:`measure`: a context manager that runs your step under PyTorch and records it.

Each returns (or appends) one run: ``{"id", "source", "kind", "scenario", "measurements"}``,
the scenario being the one you give (the job that ran). Write runs with :func:`write` and
calibrate: ``gpufit.calibrate("runs.jsonl")`` or ``gpufit calibrate runs.jsonl``.
"""
import json
import os
import re

__all__ = ["from_vllm_log", "from_llamacpp_log", "from_memory_stats", "measure", "write"]

GIB = 1 << 30
from typing import Any, Callable, Dict, Iterable, List, Literal, Mapping, Optional, Union

MIB = 1 << 20
_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _run(scenario: Any, measurements: List[Dict[str, Any]], source: str,
         run_id: Optional[str], kind: Optional[str] = None) -> Dict[str, Any]:
    if not isinstance(scenario, dict):
        raise TypeError("scenario: give the scenario that ran, as a dict (docs/scenario.md)")
    if not measurements:
        raise ValueError("no measurement found in the %s" % source)
    task = scenario.get("task", "inference")
    return {"id": run_id or "run", "source": source,
            "kind": kind or ("inference" if task == "inference" else "training"),
            "scenario": dict(scenario), "measurements": measurements}


def _m(level: str, role: str, nbytes: float, note: str, includes: str) -> Dict[str, Any]:
    return {"level": level, "role": role, "bytes": int(round(nbytes)), "unit_note": note,
            "what_it_includes": includes}


def from_vllm_log(text: str, scenario: Dict[str, Any],
                  run_id: Optional[str] = None) -> Dict[str, Any]:
    """One run from a vLLM startup log. vLLM prints GiB (2^30 bytes; older releases write
    "GB" for the same unit). Reads "Model loading took X GiB" (weights), "PyTorch activation
    peak memory takes X GiB" (activations) and the KV budget ("Available KV cache memory: X
    GiB", or "the rest of the memory reserved for KV Cache is X GiB"). Set the scenario's
    ``framework_version`` to the release that ran."""
    ms = []
    note = "vLLM log GiB x 2^30 (2-decimal rounding)"
    w = re.search(r"(?:Model loading took|model weights take) " + _NUM + r" ?Gi?B", text)
    if w:
        ms.append(_m("component:weights", "all", _num(w.group(1)) * GIB, note,
                     "the model weights on one GPU"))
    a = re.search(r"PyTorch activation peak memory takes " + _NUM + r" ?Gi?B", text)
    if a:
        ms.append(_m("component:activations", "all", _num(a.group(1)) * GIB, note,
                     "the profile run's torch peak increase"))
    k = re.search(r"(?:Available KV cache memory:|reserved for KV Cache is) " + _NUM +
                  r" ?Gi?B", text)
    if k:
        ms.append(_m("kv_capacity", "all", _num(k.group(1)) * GIB, note,
                     "the KV budget after weights, profile peak and non-torch memory"))
    return _run(scenario, ms, "vLLM startup log", run_id, "inference")


def from_llamacpp_log(text: str, scenario: Dict[str, Any],
                      run_id: Optional[str] = None) -> Dict[str, Any]:
    """One run from a llama.cpp log: "CUDA<n> model buffer size = X MiB" (weights on device
    n), "CUDA<n> KV buffer size" (KV cache) and "CUDA<n> compute buffer size" (activations),
    in MiB (2^20 bytes). One device is role ``all``; several are ``gpu0``, ``gpu1``, ..."""
    kinds = (("model", "component:weights", "the model buffer (token_embd stays on the host)"),
             ("KV", "component:kv_cache", "the KV buffer"),
             ("compute", "component:activations", "the compute buffer"))
    found = []
    for word, level, includes in kinds:
        for dev, mib in re.findall(r"CUDA(\d+) " + word + r" buffer size =\s*" + _NUM + " MiB",
                                   text):
            found.append((int(dev), level, _num(mib) * MIB, includes))
    devices = {d for d, _, _, _ in found}
    note = "llama.cpp log MiB x 2^20 (2-decimal rounding)"
    ms = [_m(level, "all" if len(devices) == 1 else "gpu%d" % d, b, note, inc)
          for d, level, b, inc in found]
    return _run(scenario, ms, "llama.cpp log", run_id, "inference")


def from_memory_stats(stats: Mapping[str, Any], scenario: Dict[str, Any],
                      run_id: Optional[str] = None,
                      source: str = "torch.cuda.memory_stats()") -> Dict[str, Any]:
    """One run from ``torch.cuda.memory_stats()`` (a dict, or its JSON text): the peaks
    "allocated_bytes.all.peak" (peak_allocated_bytes) and "reserved_bytes.all.peak"
    (peak_reserved_bytes), exact bytes."""
    if isinstance(stats, str):
        stats = json.loads(stats)
    if not isinstance(stats, dict):
        raise TypeError("stats: give torch.cuda.memory_stats()'s dict or its JSON text")
    ms = []
    for key, level, includes in (
            ("allocated_bytes.all.peak", "peak_allocated_bytes", "live tensors at the peak"),
            ("reserved_bytes.all.peak", "peak_reserved_bytes", "plus the allocator's cache")):
        if key in stats:
            ms.append(_m(level, "all", stats[key], "torch.cuda.memory_stats, exact", includes))
    return _run(scenario, ms, source, run_id)


def write(runs: Union[Dict[str, Any], Iterable[Dict[str, Any]]],
          path: Union[str, "os.PathLike[str]"]) -> None:
    """Appends runs (a run dict or a list of them) to the JSONL file ``path``."""
    if isinstance(runs, dict):
        runs = [runs]
    with open(path, "a", encoding="utf-8") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")


class measure:
    """Runs your step and records its peak memory as a run::

        with gpufit.runs.measure(scenario, "runs.jsonl"):
            train_step()

    On entry it resets PyTorch's peak statistics; on a normal exit it reads
    ``torch.cuda.memory_stats()`` and appends the run to ``path`` (``self.run`` holds it).
    ``stats`` replaces ``torch.cuda.memory_stats`` (and ``reset`` the reset) where PyTorch
    is not the source, e.g. in tests."""

    def __init__(self, scenario: Dict[str, Any],
                 path: Union[str, "os.PathLike[str]", None] = None,
                 run_id: Optional[str] = None,
                 stats: Optional[Callable[[], Mapping[str, Any]]] = None,
                 reset: Optional[Callable[[], Any]] = None) -> None:
        self.scenario, self.path, self.run_id = scenario, path, run_id
        self._stats, self._reset = stats, reset
        self.run: Optional[Dict[str, Any]] = None
        if self._stats is None:
            try:
                import torch  # type: ignore[import]  # noqa: F401 (optional)
            except ImportError as e:
                raise ImportError("gpufit.runs.measure needs PyTorch, or stats=") from e
            self._stats = torch.cuda.memory_stats
            self._reset = torch.cuda.reset_peak_memory_stats

    def __enter__(self) -> "measure":
        if self._reset is not None:
            self._reset()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        if exc_type is None:
            assert self._stats is not None
            self.run = from_memory_stats(self._stats(), self.scenario, self.run_id,
                                         source="gpufit.runs.measure")
            if self.path is not None:
                write(self.run, os.fspath(self.path))
        return False
