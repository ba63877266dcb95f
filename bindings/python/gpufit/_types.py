# SPDX-License-Identifier: MIT
"""ctypes mirrors of the public structs of ``gpufit.h``.

Every struct of the C API starts with ``uint32_t struct_size``: the caller sets it to the size
it knows, and the library writes back how many bytes it filled. The mirrors set
``struct_size`` in ``__init__``, so ``Summary()`` is ready to pass to the library, and
:meth:`SizedStruct.has_field` tells whether a field was filled by the loaded library (the
``GPUFIT_HAS_FIELD`` macro of the header), which matters when these mirrors are newer than
the library.

Field names and order follow the header exactly; ``tests/test_layout.py`` compiles
``tests/layout.c`` against the header and compares every offset and size with these classes.
New fields are only ever appended (docs/abi.md), so they are added at the end here too.
"""

import ctypes
from typing import Any, Dict, Sequence, Tuple
from ctypes import c_char, c_char_p, c_double, c_int32, c_int64, c_uint32, c_uint64

__all__ = [
    "SizedStruct",
    "Error",
    "ParamInfo",
    "PresetInfo",
    "GpuInfo",
    "Summary",
    "RoleInfo",
    "SafetensorsInfo",
    "MitigationInfo",
    "Recommendation",
    "Layout",
    "STRUCTS",
    "UINT64_MAX",
]

UINT64_MAX = 2**64 - 1


class SizedStruct(ctypes.Structure):
    """Base of the size-prefixed structs: ``struct_size`` is set to ``sizeof`` on creation."""

    _fields_: Sequence[Tuple[str, Any]] = []  # replaced by every subclass
    _c_name_ = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.struct_size = ctypes.sizeof(self)

    @classmethod
    def c_name(cls) -> str:
        """The C type name (``gpufit_summary`` for :class:`Summary`)."""
        return cls._c_name_

    def has_field(self, name: str) -> bool:
        """True when the library filled ``name`` (``struct_size`` covers the whole field)."""
        field = getattr(type(self), name)
        return bool(self.struct_size >= field.offset + field.size)

    def _asdict(self) -> Dict[str, Any]:
        """The fields as a dict (strings decoded; ``struct_size`` and reserved fields left out)."""
        out = {}
        for name, _ in self._fields_:
            if name == "struct_size" or name.startswith("reserved") or not self.has_field(name):
                continue
            value = getattr(self, name)
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            out[name] = value
        return out


class Error(SizedStruct):
    """``gpufit_error``: status, offending parameter id, byte offset and a one-line message."""

    _c_name_ = "gpufit_error"
    _fields_ = [
        ("struct_size", c_uint32),
        ("status", c_int32),
        ("param", c_int32),
        ("reserved0", c_uint32),
        ("offset", c_uint64),
        ("message", c_char * 256),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.offset = UINT64_MAX  # as GPUFIT_ERROR_INIT


class ParamInfo(SizedStruct):
    """``gpufit_param_info``: one row of the library's parameter table."""

    _c_name_ = "gpufit_param_info"
    _fields_ = [
        ("struct_size", c_uint32),
        ("id", c_int32),
        ("domain", c_int32),
        ("type", c_int32),
        ("min_int", c_int64),
        ("max_int", c_int64),
        ("default_int", c_int64),
        ("min_float", c_double),
        ("max_float", c_double),
        ("default_float", c_double),
        ("since", c_uint32),
        ("flags", c_uint32),
        ("name", c_char_p),
        ("unit", c_char_p),
        ("doc", c_char_p),
    ]


class PresetInfo(SizedStruct):
    """``gpufit_preset_info``: a built-in model preset."""

    _c_name_ = "gpufit_preset_info"
    _fields_ = [
        ("struct_size", c_uint32),
        ("index", c_uint32),
        ("n_params", c_uint64),
        ("n_active_params", c_uint64),
        ("name", c_char_p),
        ("aliases", c_char_p),
        ("hf_repo", c_char_p),
    ]


class GpuInfo(SizedStruct):
    """``gpufit_gpu_info``: a GPU of the built-in catalogue."""

    _c_name_ = "gpufit_gpu_info"
    _fields_ = [
        ("struct_size", c_uint32),
        ("id", c_int32),
        ("memory_bytes", c_uint64),
        ("marketed_bytes", c_uint64),
        ("memory_bandwidth_gbs", c_double),
        ("bf16_tflops", c_double),
        ("fp8_tflops", c_double),
        ("nvlink_gbs", c_double),
        ("msrp_usd", c_double),
        ("supports_bf16", c_int32),
        ("supports_fp8", c_int32),
        ("usable_known", c_int32),
        ("launch_year", c_int32),
        ("name", c_char_p),
        ("key", c_char_p),
        ("aliases", c_char_p),
        ("vendor", c_char_p),
        ("architecture", c_char_p),
    ]


class Summary(SizedStruct):
    """``gpufit_summary``: verdict and totals of a result."""

    _c_name_ = "gpufit_summary"
    _fields_ = [
        ("struct_size", c_uint32),
        ("fits", c_int32),
        ("n_roles", c_uint32),
        ("worst_role", c_uint32),
        ("n_notes", c_uint32),
        ("reserved0", c_uint32),
        ("capacity_bytes", c_uint64),
        ("peak_bytes", c_uint64),
        ("headroom_bytes", c_int64),
        ("n_params", c_uint64),
        ("n_active_params", c_uint64),
        ("host_bytes", c_uint64),
        ("n_mitigations", c_uint32),
        ("reserved1", c_uint32),
        ("verdict", c_int32),
        ("reserved2", c_uint32),
        ("peak_low_bytes", c_uint64),
        ("peak_high_bytes", c_uint64),
    ]


class RoleInfo(SizedStruct):
    """``gpufit_role_info``: one device role of a result."""

    _c_name_ = "gpufit_role_info"
    _fields_ = [
        ("struct_size", c_uint32),
        ("n_devices", c_uint32),
        ("peak_allocated_bytes", c_uint64),
        ("peak_reserved_bytes", c_uint64),
        ("device_used_bytes", c_uint64),
        ("headroom_bytes", c_int64),
        ("kv_capacity_bytes", c_uint64),
        ("kv_capacity_tokens", c_uint64),
        ("fits", c_int32),
        ("layers", c_uint32),
        ("name", c_char_p),
        ("capacity_bytes", c_uint64),
        ("gpu", c_char_p),
        ("peak_allocated_low_bytes", c_uint64),
        ("peak_allocated_high_bytes", c_uint64),
        ("peak_reserved_low_bytes", c_uint64),
        ("peak_reserved_high_bytes", c_uint64),
        ("device_used_low_bytes", c_uint64),
        ("device_used_high_bytes", c_uint64),
        ("kv_capacity_low_bytes", c_uint64),
        ("kv_capacity_high_bytes", c_uint64),
        ("verdict", c_int32),
        ("reserved0", c_uint32),
    ]


class SafetensorsInfo(SizedStruct):
    """``gpufit_safetensors_info``: what a safetensors header (or index) holds."""

    _c_name_ = "gpufit_safetensors_info"
    _fields_ = [
        ("struct_size", c_uint32),
        ("n_tensors", c_uint32),
        ("n_params", c_uint64),
        ("total_bytes", c_uint64),
        ("header_bytes", c_uint64),
        ("bytes_fp32", c_uint64),
        ("bytes_16bit", c_uint64),
        ("bytes_8bit", c_uint64),
        ("bytes_other", c_uint64),
    ]


class MitigationInfo(SizedStruct):
    """``gpufit_mitigation_info``: one ranked change that makes a job fit (or fit better)."""

    _c_name_ = "gpufit_mitigation_info"
    _fields_ = [
        ("struct_size", c_uint32),
        ("kind", c_int32),
        ("fits_after", c_int32),
        ("n_changes", c_uint32),
        ("peak_bytes_after", c_uint64),
        ("saved_bytes", c_int64),
        ("cost", c_double),
        ("text", c_char_p),
        ("changes", c_char_p),
        ("changes_json", c_char_p),
        ("flags", c_char_p),
    ]


class Recommendation(SizedStruct):
    """``gpufit_recommendation``: one GPU kind and count on which a job fits."""

    _c_name_ = "gpufit_recommendation"
    _fields_ = [
        ("struct_size", c_uint32),
        ("gpu_id", c_int32),
        ("count", c_uint32),
        ("fits", c_int32),
        ("needs_nvlink", c_int32),
        ("has_nvlink", c_int32),
        ("peak_bytes", c_uint64),
        ("headroom_bytes", c_int64),
        ("price_usd", c_double),
        ("tflops", c_double),
        ("tflops_per_kusd", c_double),
        ("gpu_name", c_char_p),
        ("reason", c_char_p),
        ("spec", c_char_p),
        ("spec_json", c_char_p),
    ]


class Layout(SizedStruct):
    """``gpufit_layout``: one parallel layout found by the planner."""

    _c_name_ = "gpufit_layout"
    _fields_ = [
        ("struct_size", c_uint32),
        ("tp", c_uint32),
        ("pp", c_uint32),
        ("vpp", c_uint32),
        ("dp", c_uint32),
        ("cp", c_uint32),
        ("ep", c_uint32),
        ("zero", c_uint32),
        ("micro_batch", c_uint32),
        ("checkpointing", c_int32),
        ("peak_bytes", c_uint64),
        ("headroom_bytes", c_int64),
        ("cost", c_double),
        ("spec", c_char_p),
        ("placement", c_char_p),
        ("kv_capacity_tokens", c_uint64),
        ("spec_json", c_char_p),
        ("flags", c_char_p),
    ]


#: Every mirrored struct, for the layout test.
STRUCTS = (Error, ParamInfo, SafetensorsInfo, PresetInfo, GpuInfo, Summary, RoleInfo,
           MitigationInfo, Recommendation, Layout)
