# SPDX-License-Identifier: MIT
"""gpufit: predict the GPU memory of a deep-learning job before it is launched.

Python bindings (ctypes, standard library only) over the C library ``libgpufit``::

    import gpufit

    r = gpufit.estimate(model="llama-3-70b", gpu="h100-sxm-80gb", task="pretrain",
                        tp=8, pp=4, dp=2, precision="bf16", framework="megatron")
    r.fits, r.peak_bytes, r.headroom_bytes
    for role in r.roles:
        print(role.name, role.devices, role.components["activations"])
    r.to_dict()          # == `gpufit estimate --json`
    r                    # in a notebook: a table and a stacked-bar chart

The vocabulary is that of the scenario format (``docs/scenario.md`` and ``docs/params.md``): the same
names as the ``gpufit`` command's spec strings and JSON files. Keyword arguments are checked
by the library's own parameter table (:func:`params`), so every parameter of the loaded
library is accepted without a change here.

Also: :func:`models`, :func:`gpus`, :func:`params` and :func:`components` (listings),
:class:`Model` and :class:`Job` (thin wrappers of the C handles with typed setters; models
also from ``config.json``, model directories and GGUF files) with :func:`evaluate`,
:func:`max_fitting` (the largest batch or context that fits), :func:`recommend` (which
GPUs, how many) and :func:`plan` (parallel layouts), :meth:`Report.with_changes`
(re-evaluate with edits, e.g. a suggested mitigation), the exceptions of
:mod:`gpufit.errors`, and ``python3 -m gpufit`` (the ``gpufit`` command in Python).
"""

from typing import TYPE_CHECKING, Any

from . import _lib
from ._api import (Job, Model, ResultList, calibrate, components, estimate, evaluate,
                   evaluate_summary, gpus, max_fitting, models, param_info, params, plan,
                   recommend, safetensors_info, sweep)
from .errors import (BufferTooSmall, GpufitError, Inconsistent, InternalError, InvalidArgument,
                     NotFound, OutOfMemory, Overflow, ParseError, StructSizeError,
                     UnknownParameter, Unsupported)
from ._sweep_chart import SweepColumns
from .report import Components, Report, Role

if TYPE_CHECKING:
    from .advice import Layout, Mitigation, Recommendation
    from .summary import Verdict


def __getattr__(name: str) -> Any:
    """Mitigation, Recommendation and Layout (gpufit.advice) and Verdict (gpufit.summary),
    imported when first asked for: the dataclasses module costs import time that
    ``import gpufit`` need not pay."""
    if name in ("Mitigation", "Recommendation", "Layout"):
        from . import advice
        return getattr(advice, name)
    if name == "Verdict":
        from .summary import Verdict
        return Verdict
    raise AttributeError("module 'gpufit' has no attribute %r" % name)


#: Version of the loaded C library ("0.1.0"); the binding has no version of its own.
__version__ = _lib.version_string
#: Packed version of the loaded library: MAJOR*10000 + MINOR*100 + PATCH.
version_number = _lib.version_number
#: Path of the loaded shared library.
library_path = _lib.path

__all__ = [
    "__version__", "version_number", "library_path",
    "estimate", "evaluate", "evaluate_summary", "sweep", "Verdict", "calibrate", "max_fitting", "recommend", "plan", "ResultList",
    "Model", "Job", "Report", "Role", "Components", "SweepColumns", "Mitigation", "Recommendation", "Layout",
    "models", "gpus", "params", "param_info", "components", "safetensors_info",
    "GpufitError", "InvalidArgument", "Inconsistent", "Overflow", "UnknownParameter",
    "Unsupported", "ParseError", "NotFound", "BufferTooSmall", "StructSizeError",
    "OutOfMemory", "InternalError",
]
