# SPDX-License-Identifier: MIT
"""The Pythonic API over the C library: Model, Job, evaluate(), estimate() and the listings.

Nothing here knows a parameter by heart: names, types, ranges, defaults and enum values all
come from the library's parameter table (``gpufit_param_next``, ``gpufit_param_get_info``,
``gpufit_param_value_at``), so a parameter added to the C library is usable from Python at
once. The only names handled specially are the two that the scenario format itself treats
specially: ``model`` (a preset or an architecture) and ``gpu`` (a catalogue entry or a
capacity).
"""

import ctypes
import errno
import itertools
import numbers
import os
import stat
import struct
import typing
import warnings
import weakref
from typing import (TYPE_CHECKING, Any, BinaryIO, Callable, Dict, Iterable, List, Mapping,
                    Optional, Sequence, Tuple, Type, TypeVar, Union)
from ctypes import (byref, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32, c_uint64,
                    c_void_p)

from . import _lib
from . import errors as _errors
from ._lib import lib
from ._scenario import json_key_at, remove_member, scalar_json, scenario_json, spec_key_at
from ._types import Error as _Error
from ._types import GpuInfo, ParamInfo, PresetInfo, RoleInfo, Summary
from ._types import Layout as _Layout
from ._types import MitigationInfo as _MitigationInfo
from ._types import Recommendation as _Recommendation
from ._types import SafetensorsInfo as _SafetensorsInfo
from ._sweep_chart import SweepColumns
from .report import Components, Report, Role

if TYPE_CHECKING:  # imported when first used: dataclass creation costs import time
    from .advice import Layout, Recommendation
    from .summary import Verdict

__all__ = ["Model", "Job", "evaluate", "evaluate_summary", "sweep", "estimate",
           "calibrate", "max_fitting", "recommend", "plan",
           "models", "gpus", "params", "components", "param_info", "safetensors_info",
           "ResultList"]

#: a path argument: text or an os.PathLike
PathArg = Union[str, "os.PathLike[str]"]
_H = TypeVar("_H", bound="_Handle")
_E = TypeVar("_E")

_DOMAINS = {1: "model", 2: "job"}
_TYPES = {1: "int", 2: "float", 3: "enum", 4: "bool", 5: "list"}
#: gpufit_status GPUFIT_E_BUFFER_TOO_SMALL (include/gpufit.h)
_E_BUFFER_TOO_SMALL = -8
#: The list parameter whose entries are catalogue GPUs (names in Python, ids in the library).
_GPU_LIST = "device_gpus"
#: gpufit_param_info.flags bit GPUFIT_PARAM_FLAG_UNSET_DEFAULT (include/gpufit.h)
PARAM_FLAG_UNSET_DEFAULT = 0x1
#: Names that estimate() takes for itself, so no keyword can reach the library under them.
_RESERVED = ("file", "spec")


def _text(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", "replace") if b is not None else None


# ---------------------------------------------------------------------------------------------
# The parameter table
# ---------------------------------------------------------------------------------------------
def _param_id(name: Any) -> int:
    pid = c_int32(0)
    if not isinstance(name, str) or lib.gpufit_param_by_name(name.encode("utf-8"),
                                                             byref(pid)) != 0:
        return 0
    return pid.value


def _info(pid: int) -> ParamInfo:
    info = ParamInfo()
    st = lib.gpufit_param_get_info(pid, byref(info))
    if st != 0:
        _lib.raise_for(st)
    return info


def _values(pid: int) -> List[Tuple[Optional[str], int]]:
    out = []
    v = c_int64(0)
    name = c_char_p()
    i = 0
    while lib.gpufit_param_value_at(pid, i, byref(v), byref(name)) == 0:
        out.append((_text(name.value), v.value))
        i += 1
    return out


def _type_of(name: str) -> Optional[str]:
    pid = _param_id(name)
    return _TYPES.get(_info(pid).type) if pid else None


def _describe(pid: int) -> Dict[str, Any]:
    info = _info(pid)
    typ = _TYPES.get(info.type, str(info.type))
    d = {
        "name": _text(info.name),
        "id": info.id,
        "domain": _DOMAINS.get(info.domain, str(info.domain)),
        "type": typ,
        "unit": _text(info.unit) or "",
        "doc": _text(info.doc) or "",
        "since": _lib._version_text(info.since) if info.since else None,
    }
    if typ == "float":
        d.update(default=info.default_float, min=info.min_float, max=info.max_float)
    elif typ == "list":
        # min/max bound each entry; min_count/max_count the number of entries
        d.update(default=[], min=info.min_float, max=info.max_float, min_count=info.min_int,
                 max_count=info.max_int)
    elif typ in ("enum", "bool"):
        values = _values(pid)
        dn = lib.gpufit_param_value_name(pid, info.default_int)
        if typ == "bool":
            d["default"] = bool(info.default_int)
        else:
            d["default"] = _text(dn) if dn is not None else info.default_int
        d["values"] = [n for n, _ in values]
    else:
        d.update(default=info.default_int, min=info.min_int, max=info.max_int)
        # the default 0 lies outside the range: "not set", the value must be given
        d["required"] = bool(info.flags & PARAM_FLAG_UNSET_DEFAULT)
    return d


def param_info(name: str) -> Dict[str, Any]:
    """The parameter table's row for ``name`` (or an alias) as a dict, like :func:`params`.

    Raises :class:`gpufit.UnknownParameter` for a name the library does not know.
    """
    pid = _param_id(name)
    if not pid:
        raise _errors.UnknownParameter(
            message="unknown parameter %r (see gpufit.params())" % (name,), key=name)
    return _describe(pid)


def params(domain: Optional[str] = None) -> List[Dict[str, Any]]:
    """Every parameter of the library, in table order, as dicts.

    Each dict has ``name``, ``id``, ``domain`` ("model" or "job"), ``type`` ("int",
    "float", "enum", "bool", "list"), ``default``, ``unit``, ``doc``, ``since`` and either
    ``min`` and ``max`` (int, float; a list: the range of each entry) or ``values`` (the
    accepted names of an enum or bool). Lists also carry ``min_count`` and ``max_count``
    (how many entries) and default to ``[]``. Integer
    parameters also carry ``required``: True when the default (0) means "not set" and the
    value must come from a preset, a model file or the caller. ``domain`` filters on "model" or "job".
    """
    out = []
    pid = lib.gpufit_param_next(0)
    while pid != 0:
        d = _describe(pid)
        if domain is None or d["domain"] == domain:
            out.append(d)
        pid = lib.gpufit_param_next(pid)
    return out


def components() -> List[str]:
    """Names of the memory components, in report order ("weights", ..., "fragmentation")."""
    out: List[str] = []
    c = lib.gpufit_component_next(0)
    while c != 0:
        out.append(_text(lib.gpufit_component_name(c)) or "")
        c = lib.gpufit_component_next(c)
    return out


def _component_ids() -> List[Tuple[int, str]]:
    out: List[Tuple[int, str]] = []
    c = lib.gpufit_component_next(0)
    while c != 0:
        out.append((c, _text(lib.gpufit_component_name(c)) or ""))
        c = lib.gpufit_component_next(c)
    return out


def _split(text: Optional[str]) -> List[str]:
    return text.split() if text else []


def models() -> List[Dict[str, Any]]:
    """The built-in model presets as dicts: ``name``, ``aliases`` (list), ``hf_repo``,
    ``n_params``, ``n_active_params`` and ``index``."""
    out: List[Dict[str, Any]] = []
    i = 0
    while True:
        p = PresetInfo()
        if lib.gpufit_preset_at(i, byref(p)) != 0:
            return out
        d = p._asdict()
        d["aliases"] = _split(d.get("aliases"))
        out.append(d)
        i += 1


def _gpu_dict(g: GpuInfo) -> Dict[str, Any]:
    d = g._asdict()
    d["aliases"] = _split(d.get("aliases"))
    for k in ("supports_bf16", "supports_fp8", "usable_known"):
        if k in d:
            d[k] = bool(d[k])
    if "memory_bytes" in d:
        d["memory_gib"] = d["memory_bytes"] / 2**30
    return d


def gpus() -> List[Dict[str, Any]]:
    """The GPU catalogue as dicts: ``key``, ``name``, ``aliases`` (list), ``vendor``,
    ``architecture``, ``id``, ``memory_bytes`` (the capacity used for the verdict),
    ``memory_gib``, ``marketed_bytes``, bandwidth, TFLOPS, price and support flags."""
    out: List[Dict[str, Any]] = []
    i = 0
    while True:
        g = GpuInfo()
        if lib.gpufit_gpu_at(i, byref(g)) != 0:
            return out
        out.append(_gpu_dict(g))
        i += 1


def _gpu_key(gpu_id: int) -> Optional[str]:
    i = 0
    while True:
        g = GpuInfo()
        if lib.gpufit_gpu_at(i, byref(g)) != 0:
            return None
        if g.id == gpu_id:
            return _text(g.key)
        i += 1


# ---------------------------------------------------------------------------------------------
# Handles
# ---------------------------------------------------------------------------------------------
class _Handle:
    """An owned gpufit handle, freed when the object is collected or closed."""

    _domain: Optional[str] = None
    _free: Any = None
    _set_int: Any = None
    _set_float: Any = None
    _get_int: Any = None
    _get_float: Any = None

    def __init__(self, ptr: Optional[int]) -> None:
        self._ptr = ptr
        self._finalizer = weakref.finalize(self, type(self)._free, ptr)

    @property
    def _as_parameter_(self) -> int:
        if not self._ptr:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._ptr

    def close(self) -> None:
        """Frees the C handle now (it is also freed when the object is collected)."""
        if self._ptr:
            self._changing()
        self._finalizer()
        self._ptr = None

    # -- reports that read this handle later (copy on write) ----------------------------------
    _readers = None  # weak references to the reports evaluated from this handle
    _prune_at = 64

    def _pin(self, ref: "weakref.ref[Report]") -> None:
        """Remembers a report that still reads this handle (its model name, task and
        with_changes): before the handle changes, :meth:`_changing` gives it a copy."""
        rs = self._readers
        if rs is None:
            self._readers = [ref]
            return
        rs.append(ref)
        if len(rs) > self._prune_at:  # collected reports: keep the list short
            rs[:] = [r for r in rs if r() is not None]
            self._prune_at = max(64, 2 * len(rs))

    def _changing(self) -> None:
        """Called before any change: the reports still reading this handle get a copy of it
        as it is now, so a report keeps the inputs it was evaluated from."""
        rs = self._readers
        if not rs:
            return
        self._readers = None
        alive = [r for r in (ref() for ref in rs) if r is not None]
        if not alive:
            return
        snap = self.copy()  # type: ignore[attr-defined]  # Model.copy, Job.copy
        for report in alive:
            inputs = report.__dict__.get("_inputs")
            if inputs is not None:
                report.__dict__["_inputs"] = tuple(snap if h is self else h for h in inputs)

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- parameters ---------------------------------------------------------------------------
    def _apply_items(self: _H, items: List[Tuple[str, Any]]) -> _H:
        raise NotImplementedError  # Model and Job

    def _lookup(self, name: str) -> Tuple[int, ParamInfo]:
        pid = _param_id(name)
        if not pid:
            raise _errors.UnknownParameter(
                message="unknown parameter %r (see gpufit.params())" % (name,), key=name)
        return pid, _info(pid)

    def set(self: _H, name: str, value: Any) -> _H:
        """Sets parameter ``name`` (see :func:`gpufit.params`) and returns ``self``.

        Numbers and booleans go through the typed setters; strings (enum names, numbers as
        text, ``gpu`` names) through the library's scenario parser, as in a JSON scenario.
        """
        self._changing()
        if name == "lora_modules" and isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)  # module names, as in a spec string
        if name in ("model", "gpu") or isinstance(value, (str, dict, os.PathLike)):
            return self._apply_items([(name, value)])
        if value is None:
            return self
        pid, info = self._lookup(name)
        typ = _TYPES.get(info.type)
        if typ == "list":
            return self._set_list(name, pid, info, value)
        st_fn: Any = None
        arg: Any = None
        if typ == "float":
            if isinstance(value, numbers.Real):
                scalar_json(name, value)  # rejects NaN and infinities, naming the key
                st_fn, arg = self._set_float, c_double(float(value))
        elif isinstance(value, numbers.Integral):
            st_fn, arg = self._set_int, int(value)
        elif isinstance(value, numbers.Real) and float(value).is_integer():
            st_fn, arg = self._set_int, int(value)
        if st_fn is None:
            raise _errors.InvalidArgument(
                message="%s: %r is not a%s %s value" % (
                    name, value, "n" if typ in ("int", "enum") else "", typ),
                key=name, param=_text(info.name), param_id=pid)
        if st_fn is self._set_int:
            if not -2**63 <= arg < 2**63:
                raise _errors.Overflow(message="%s: %d does not fit in 64 bits" % (name, arg),
                                       key=name, param=_text(info.name), param_id=pid)
            arg = c_int64(arg)
        _lib.call(st_fn, self, pid, arg, key=name)
        return self

    def _set_list(self: _H, name: str, pid: int, info: ParamInfo, value: Any) -> _H:
        """A list parameter from a list or tuple of numbers (``device_gpus``: catalogue names
        or ids), or a single number; ``[]`` clears it. The library checks the entries."""
        if self._domain != "job":  # lists are job parameters: let the library say so
            _lib.call(self._set_int, self, pid, c_int64(0), key=name)
        pname = _text(info.name)
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise _errors.InvalidArgument(
                message="%s: give a list of numbers%s, not a %s" % (
                    name, " or GPU names" if pname == _GPU_LIST else "",
                    type(value).__name__), key=name, param=pname, param_id=pid)
        entries = []
        for v in value:
            if isinstance(v, str) and pname == _GPU_LIST:
                entries.append(float(_gpu_id(v, key=name, param=pname, param_id=pid)))
            elif isinstance(v, numbers.Real) and not isinstance(v, bool):
                entries.append(float(v))
            else:
                raise _errors.InvalidArgument(
                    message="%s: entry %r is not a number%s" % (
                        name, v, " or a GPU name" if pname == _GPU_LIST else ""),
                    key=name, param=pname, param_id=pid)
        arr = (c_double * max(len(entries), 1))(*entries)
        _lib.call(lib.gpufit_job_set_list, self, pid, arr, c_uint32(len(entries)), key=name)
        return self

    def _get_list(self, name: str, pid: int, info: ParamInfo) -> List[Any]:
        if self._domain != "job":
            _lib.call(self._get_int, self, pid, byref(c_int64(0)), key=name)
        n = c_uint32(0)
        st = lib.gpufit_job_get_list(self, pid, None, 0, byref(n), None)
        if st not in (0, _E_BUFFER_TOO_SMALL):
            _lib.call(lib.gpufit_job_get_list, self, pid, None, 0, byref(n), key=name)
        arr = (c_double * max(n.value, 1))()
        _lib.call(lib.gpufit_job_get_list, self, pid, arr, c_uint32(n.value), byref(n), key=name)
        values = list(arr[:n.value])
        if _text(info.name) == _GPU_LIST:
            return [_gpu_key(int(v)) or int(v) for v in values]
        return values

    def get(self, name: str) -> Any:
        """The value of parameter ``name``: int, float, bool, or the name of an enum value
        (``gpu``: the catalogue key, or None when the job has no catalogue GPU); a list
        parameter gives a list of floats (``device_gpus``: catalogue keys)."""
        pid, info = self._lookup(name)
        typ = _TYPES.get(info.type)
        if typ == "list":
            return self._get_list(name, pid, info)
        if typ == "float":
            out = c_double(0.0)
            _lib.call(self._get_float, self, pid, byref(out), key=name)
            return out.value
        iv = c_int64(0)
        _lib.call(self._get_int, self, pid, byref(iv), key=name)
        v = int(iv.value)
        if typ == "bool":
            return bool(v)
        if typ == "enum":
            n = lib.gpufit_param_value_name(pid, v)
            return _text(n) if n is not None else v
        if _text(info.name) == "gpu":
            return _gpu_key(v) if v >= 0 else None
        return v

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set(name, value)

    def update(self: _H, *args: Any, **kwargs: Any) -> _H:
        """Sets several parameters from a dict and/or keywords, in one atomic step for the
        library's text forms; returns ``self``."""
        self._changing()
        items = list(dict(*args, **kwargs).items())
        for name, value in items:
            if name in ("model", "gpu") or isinstance(value, (str, dict, os.PathLike)):
                return self._apply_items(items)
        for name, value in items:
            self.set(name, value)
        return self

    def to_dict(self, all: bool = False) -> Dict[str, Any]:
        """The parameters of this handle's domain as a dict; only those that differ from the
        table's default unless ``all``."""
        out = {}
        for d in params(self._domain):
            v = self.get(d["name"])
            if all or v != d["default"]:
                out[d["name"]] = v
        return out

    def __repr__(self) -> str:
        if not self._ptr:
            return "<gpufit.%s (closed)>" % type(self).__name__
        return "gpufit.%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % kv for kv in self.to_dict().items()))


def _check_domain(items: Sequence[Tuple[str, Any]], domain: str, own: str,
                  other: str) -> None:
    """Refuses keys of the other handle's domain (they would otherwise go nowhere)."""
    for name, _ in items:
        d: Optional[str]
        if name == own:
            continue
        if name == other:
            d = "job" if domain == "model" else "model"
        else:
            pid = _param_id(name)
            if not pid:
                continue  # the library reports unknown keys
            d = _DOMAINS.get(_info(pid).domain)
        if d != domain:
            raise _errors.InvalidArgument(
                message="%r is a %s key: set it on a %s, or use gpufit.estimate()" % (
                    name, d, "Job" if d == "job" else "Model"), key=name)


def _new(fn: Callable[..., int], *args: Any, **kw: Any) -> Optional[int]:
    out = c_void_p()
    _lib.call(fn, byref(out), *args, **kw)
    return out.value


# ---------------------------------------------------------------------------------------------
# Model files (the library parses buffers; reading the files is the binding's job)
# ---------------------------------------------------------------------------------------------
_FIRST_READ = 1 << 20  # GGUF and safetensors headers: read this much first, then what is asked


def _read_prefix(fn: Callable[..., int], path: str, *args: Any,
                 key: Optional[str] = None) -> int:
    """Calls ``fn(*args, buf, len, &needed, &err)`` on a growing prefix of the file at
    ``path`` until the library has read enough (GPUFIT_E_BUFFER_TOO_SMALL asks for more)."""
    with _open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        want = min(size, _FIRST_READ)
        while True:
            f.seek(0)
            buf = f.read(want)
            needed = c_uint64(0)
            err = _Error()
            st = fn(*args, buf, len(buf), byref(needed), byref(err))
            if st == -8 and len(buf) < size and needed.value > len(buf):
                want = min(size, needed.value)
                continue
            if st < 0:
                _lib.raise_for(st, err, key=key)
            return st


def _hf_config_text(config: Any) -> bytes:
    if isinstance(config, dict):
        import json  # noqa: PLC0415 (json is imported when first used: import time)
        return json.dumps(config).encode("utf-8")
    if isinstance(config, (bytes, bytearray)):
        return bytes(config)
    if isinstance(config, str) and config.lstrip().startswith("{"):
        return config.encode("utf-8")
    return _read_file(config)


def safetensors_info(path: PathArg) -> Dict[str, Any]:
    """What the safetensors files of a model hold, as a dict (``n_tensors``, ``n_params``,
    ``total_bytes``, ``header_bytes``, ``bytes_fp32``, ``bytes_16bit``, ``bytes_8bit``,
    ``bytes_other``).

    ``path`` is a ``.safetensors`` file, a ``model.safetensors.index.json`` (then only
    ``total_bytes`` is known), or a model directory (the index when there is one, otherwise
    every ``*.safetensors`` shard, added up).
    """
    return _safetensors(path)._asdict()


def _safetensors(path: PathArg) -> _SafetensorsInfo:
    path = os.fspath(path)
    if os.path.isdir(path):
        # the shards' own headers, as the command reads them (the index holds no parameter
        # count); the index only when no shard is present
        shards = sorted(n for n in os.listdir(path) if n.endswith(".safetensors"))
        index = os.path.join(path, "model.safetensors.index.json")
        if not shards and os.path.exists(index):
            return _safetensors(index)
        if not shards:
            raise _errors.NotFound(message="%s: no *.safetensors files" % path, key="model.path")
        total = _SafetensorsInfo()
        for name in shards:
            one = _safetensors(os.path.join(path, name))
            for field, ctype in total._fields_:
                if field == "struct_size":
                    continue
                v = getattr(total, field) + getattr(one, field)
                if field == "n_tensors":
                    v = min(v, 0xFFFFFFFF)
                elif v >= 1 << 64:  # a sum past 2^64 is no checkpoint
                    raise _errors.Overflow(message="%s: the shards' totals exceed 64 bits (%s)"
                                           % (path, name), key="model.path")
                setattr(total, field, v)
        return total
    info = _SafetensorsInfo()
    if path.endswith(".json"):
        data = _read_file(path)
        needed = c_uint64(0)
        _lib.call(lib.gpufit_safetensors_read, byref(info), data, len(data), byref(needed),
                  key="model.path")
    else:
        _read_prefix(lib.gpufit_safetensors_read, path, byref(info), key="model.path")
    return info


def _model_from_path(path: PathArg, base_dir: Optional[str] = None) -> "Model":
    """A Model from a config.json, a GGUF file or a model directory (config.json, checked
    against its safetensors headers when there are any)."""
    path = os.fspath(path)
    if base_dir is not None and not os.path.isabs(path):
        path = os.path.join(base_dir, path)
    if os.path.isdir(path):
        config = os.path.join(path, "config.json")
        if not os.path.exists(config):
            raise _errors.NotFound(message="model.path: %s has no config.json" % path,
                                   key="model.path")
        model = Model.from_hf_config(config)
        has_weights = any(n.endswith(".safetensors") for n in os.listdir(path))
        if has_weights:
            try:
                info = _safetensors(path)
            except _errors.Unsupported:
                return model  # a library without the safetensors reader: no cross-check
            try:
                _lib.call(lib.gpufit_model_check_safetensors, model, byref(info),
                          key="model.path")
            except _errors.Inconsistent as e:  # as the command: the config defines the model
                warnings.warn("%s: %s" % (path, e), RuntimeWarning, stacklevel=3)
        return model
    magic = _read_magic(path)
    if magic == b"GGUF" or path.endswith(".gguf"):
        return Model.from_gguf(path)
    return Model.from_hf_config(path)


def _read_magic(path: str) -> bytes:
    """The first 4 bytes of a regular file (b"" for a directory)."""
    if os.path.isdir(path):
        return b""
    with _open_regular(path) as f:
        return f.read(4)


class Model(_Handle):
    """A model architecture (``gpufit_model``).

    ``Model("llama-3-8b")`` loads a built-in preset (name or alias, see :func:`models`);
    ``Model(hidden_size=4096, n_layers=32, ...)`` starts from the defaults; keywords
    override the preset's values. ``Model.from_file(path)`` reads a Hugging Face
    ``config.json``, a model directory or a ``.gguf`` file::

        m = gpufit.Model("llama-3-8b", n_layers=16)
        m.n_params, m["hidden_size"]
    """

    _domain = "model"
    _free = staticmethod(lambda p: lib.gpufit_model_free(p))
    _set_int = staticmethod(lambda *a: lib.gpufit_model_set_int(*a))
    _set_float = staticmethod(lambda *a: lib.gpufit_model_set_float(*a))
    _get_int = staticmethod(lambda *a: lib.gpufit_model_get_int(*a))
    _get_float = staticmethod(lambda *a: lib.gpufit_model_get_float(*a))

    def __init__(self, preset: Optional[str] = None, **params: Any) -> None:
        if preset is None:
            ptr = _new(lib.gpufit_model_new)
        else:
            if not isinstance(preset, str):
                raise _errors.InvalidArgument(message="model: a preset name is a string",
                                              key="model")
            ptr = _new(lib.gpufit_model_from_preset, preset.encode("utf-8"), key="model")
        super().__init__(ptr)
        if params:
            self.update(params)

    @classmethod
    def _wrap(cls, ptr: Optional[int]) -> "Model":
        m = cls.__new__(cls)
        _Handle.__init__(m, ptr)
        return m

    @classmethod
    def from_hf_config(cls, config: Any, **params: Any) -> "Model":
        """A model from a Hugging Face ``config.json``: a path, its text, or a dict.

        Errors name the offending key of the config (``key``, ``offset`` into ``source``).
        """
        data = _hf_config_text(config)
        m = cls._wrap(_new(lib.gpufit_model_from_hf_config, data, len(data),
                           source=data.decode("utf-8", "replace"),
                           key_at=lambda o: json_key_at(data, o), key="model.hf_config"))
        if params:
            m.update(params)
        return m

    @classmethod
    def from_gguf(cls, path: PathArg, **params: Any) -> "Model":
        """A model from a GGUF file (only its header and tensor table are read)."""
        out = c_void_p()
        _read_prefix(lib.gpufit_model_from_gguf, os.fspath(path), byref(out), key="model.path")
        m = cls._wrap(out.value)
        if params:
            m.update(params)
        return m

    @classmethod
    def from_file(cls, path: PathArg, **params: Any) -> "Model":
        """A model from a ``config.json``, a ``.gguf`` file, or a model directory
        (``config.json``, cross-checked against the safetensors headers)."""
        m = _model_from_path(path)
        if params:
            m.update(params)
        return m

    def _apply_items(self, items: List[Tuple[str, Any]]) -> "Model":
        self._changing()
        _check_domain(items, "model", "model", "gpu")
        model, rest = _resolve_model(items)
        if model is not None:
            self._replace(model)
        if rest:
            _apply_json(self, Job(), scenario_json(rest, _type_of).encode("ascii"))
        return self

    def _replace(self, other: "Model") -> None:
        """Takes over ``other``'s C handle (``other`` is left closed)."""
        self.close()
        self._ptr, other._ptr = other._ptr, None
        other._finalizer.detach()
        self._finalizer = weakref.finalize(self, type(self)._free, self._ptr)

    def copy(self) -> "Model":
        """A deep copy."""
        return Model._wrap(_new(lib.gpufit_model_copy, self))

    @property
    def name(self) -> str:
        """Preset name, or "custom"."""
        return _text(lib.gpufit_model_name(self)) or ""

    def param_count(self) -> Tuple[int, int]:
        """``(total, active)``: every parameter once, and those used per token."""
        total, active = c_uint64(0), c_uint64(0)
        _lib.call(lib.gpufit_model_param_count, self, byref(total), byref(active))
        return total.value, active.value

    @property
    def n_params(self) -> int:
        """Total parameters (tied embeddings counted once)."""
        return self.param_count()[0]

    @property
    def n_active_params(self) -> int:
        """Parameters used per token (MoE: shared + top-k experts)."""
        return self.param_count()[1]

    def __repr__(self) -> str:
        if not self._ptr:
            return "<gpufit.Model (closed)>"
        name = self.name
        if name == "custom":
            return "gpufit.Model(%s)" % ", ".join("%s=%r" % kv for kv in self.to_dict().items())
        try:
            base = Model(name).to_dict(all=True)
        except _errors.GpufitError:  # a file model's name is not a preset
            base = {}
        extra = "".join(", %s=%r" % (k, v) for k, v in self.to_dict(all=True).items()
                        if k in base and base[k] != v)
        return "gpufit.Model(%r%s)" % (name, extra)


class Job(_Handle):
    """What runs on the model (``gpufit_job``): task, shapes, precision, layout and GPU.

    ``Job(task="pretrain", gpu="h100", tp=8, micro_batch=2)``; ``gpu`` is a catalogue name,
    a number of GiB or ``{"memory_gib": N}``. ``Job(spec="task=lora lora_rank=64")`` applies
    a spec string first.
    """

    _domain = "job"
    _free = staticmethod(lambda p: lib.gpufit_job_free(p))
    _set_int = staticmethod(lambda *a: lib.gpufit_job_set_int(*a))
    _set_float = staticmethod(lambda *a: lib.gpufit_job_set_float(*a))
    _get_int = staticmethod(lambda *a: lib.gpufit_job_get_int(*a))
    _get_float = staticmethod(lambda *a: lib.gpufit_job_get_float(*a))

    def __init__(self, spec: Optional[str] = None, **params: Any) -> None:
        super().__init__(_new(lib.gpufit_job_new))
        if spec is not None:
            _apply_spec(None, self, spec)
        if params:
            self.update(params)

    def _apply_items(self, items: List[Tuple[str, Any]]) -> "Job":
        self._changing()
        _check_domain(items, "job", "gpu", "model")
        _apply_json(Model(), self, scenario_json(items, _type_of).encode("ascii"))
        return self

    def apply_profile(self, profile: Any) -> "Job":
        """Applies a calibration profile (what :func:`calibrate` returns: a dict, its JSON
        text, or the path of a profile file) to this job; returns the job."""
        self._changing()
        data = _profile_bytes(profile)
        _lib.call(lib.gpufit_job_apply_profile, self, data, len(data),
                  source=data.decode("utf-8", "replace"))
        return self

    def copy(self) -> "Job":
        """A deep copy."""
        j = Job.__new__(Job)
        _Handle.__init__(j, _new(lib.gpufit_job_copy, self))
        return j


# ---------------------------------------------------------------------------------------------
# Text forms
# ---------------------------------------------------------------------------------------------
def _apply_spec(model: Optional["Model"], job: "Job", spec: Any) -> None:
    if not isinstance(spec, str):
        raise _errors.InvalidArgument(message="spec: give a string such as 'tp=8 pp=2'",
                                      key="spec")
    data = spec.encode("utf-8")
    _lib.call(lib.gpufit_apply_spec, model, job, data, source=spec,
              key_at=lambda o: spec_key_at(data, o))


def _apply_json(model: "Model", job: "Job", data: bytes, source: Optional[str] = None) -> None:
    _lib.call(lib.gpufit_apply_json, model, job, data, len(data),
              source=source if source is not None else data.decode("utf-8", "replace"),
              key_at=lambda o: json_key_at(data, o))


def _open_regular(path: PathArg) -> BinaryIO:
    """Opens ``path`` for reading if it is a regular file: a FIFO, a device or a socket named
    like a model file would block or never end (opened with O_NONBLOCK, then checked).
    Raises FileNotFoundError, IsADirectoryError or OSError(EINVAL) as the command exits 3."""
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return f


def _read_file(path: PathArg) -> bytes:
    with _open_regular(path) as f:
        return f.read()


def _check_handles(model: Any, job: Any) -> None:
    """Both handles are of their own type: ctypes would pass anything (an int, a Model as a
    job) to the library, which reads it as the struct it expects."""
    if not isinstance(model, Model):
        raise TypeError("model: expected a gpufit.Model, not %s" % type(model).__name__)
    if not isinstance(job, Job):
        raise TypeError("job: expected a gpufit.Job, not %s" % type(job).__name__)


def _count(name: str, value: Any, hi: int = 0xFFFFFFFF) -> int:
    """A count the C API takes as uint32_t: an int in [1, hi], never wrapped."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s: expected an integer, not %s" % (name, type(value).__name__))
    if not 1 <= int(value) <= hi:
        raise ValueError("%s: %d is outside [1, %d]" % (name, int(value), hi))
    return int(value)


def _is_model_path(value: PathArg) -> bool:
    """A ``model`` string that names a file or directory rather than a preset."""
    text = os.fspath(value)
    pathlike = (os.sep in text or (os.altsep is not None and os.altsep in text)
                or text.endswith((".json", ".gguf")))
    if pathlike and not os.path.exists(text) and (
            text.startswith(("/", "./", "../", "~")) or text.endswith((".json", ".gguf"))):
        # clearly a path, not a preset (nor a Hugging Face id such as org/name)
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", text)
    return pathlike and os.path.exists(text)


def _resolve_model(items: Iterable[Tuple[str, Any]], base_dir: Optional[str] = None
                   ) -> Tuple[Optional["Model"], List[Tuple[str, Any]]]:
    """Splits a ``model`` that the library cannot take as JSON (a Model, a file, a
    ``{"path"}`` or ``{"hf_config"}`` object) out of ``items``: returns (Model or None,
    remaining items, with the overrides of such a model object as top-level keys)."""
    out, model = [], None
    for key, value in items:
        if key != "model" or value is None:
            out.append((key, value))
            continue
        if isinstance(value, Model):
            model = value.copy()
        elif isinstance(value, os.PathLike) or (isinstance(value, str) and
                                                 _is_model_path(value)):
            model = _model_from_path(value, base_dir)
        elif isinstance(value, dict) and ("path" in value or "hf_config" in value):
            src = [k for k in ("path", "hf_config", "preset") if value.get(k) is not None]
            if len(src) > 1:
                raise _errors.InvalidArgument(
                    message="model: give one of path, hf_config and preset, not %s" % (
                        " and ".join(src)), key="model." + src[1])
            if "path" in value:
                model = _model_from_path(value["path"], base_dir)
            else:
                model = Model.from_hf_config(value["hf_config"])
            for k, v in value.items():
                if k in ("path", "hf_config", "preset"):
                    continue
                if k == "name":
                    raise _errors.InvalidArgument(
                        message="model.name: a model read from a file keeps its own name",
                        key="model.name")
                out.append((k, v))
        else:
            out.append((key, value))
            model = None  # a later preset replaces an earlier file model
    return model, out


def apply_file(model: "Model", job: "Job", path: PathArg) -> None:
    """Applies a JSON scenario file to ``model`` and ``job`` (OSError if unreadable).

    A ``model`` object with ``path`` (relative to the scenario file) or ``hf_config`` is read
    here, as scenario.md asks of the command line and the bindings; the rest of the document
    goes to ``gpufit_apply_json`` with byte offsets unchanged.
    """
    data = _read_file(path)
    try:
        import json  # noqa: PLC0415 (json is imported when first used: import time)
        doc = json.loads(data)
    except ValueError:
        doc = None  # the library reports the syntax error with its offset
    m = doc.get("model") if isinstance(doc, dict) else None
    if isinstance(m, dict) and ("path" in m or "hf_config" in m):
        base = os.path.dirname(os.path.abspath(os.fspath(path)))
        file_model, overrides = _resolve_model([("model", m)], base)
        data = remove_member(data, "model")
        if file_model is not None:
            model._replace(file_model)
        if overrides:
            _apply_json(model, job, scenario_json(overrides, _type_of).encode("ascii"))
    _apply_json(model, job, data)


def build(scenario: Optional[Mapping[str, Any]] = None, file: Optional[PathArg] = None,
          spec: Optional[str] = None, params: Optional[Mapping[str, Any]] = None
          ) -> Tuple["Model", "Job"]:
    """(Model, Job) for a scenario given as :func:`estimate` takes it."""
    model = Model()
    job = Job()
    if file is not None:
        apply_file(model, job, file)
    if spec is not None:
        _apply_spec(model, job, spec)
    items = dict(scenario or {})
    items.update(params or {})
    file_model, rest = _resolve_model([(k, v) for k, v in items.items() if v is not None])
    if file_model is not None:
        model._replace(file_model)
    if rest:
        _apply_json(model, job, scenario_json(rest, _type_of).encode("ascii"))
    return model, job


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------
def _result_json(res: Any) -> str:
    """The JSON report of a result: one call when it fits 16 KiB (most do), else two."""
    need = c_size_t(0)
    size = 16384
    for _ in range(3):
        buf = ctypes.create_string_buffer(size)
        st = lib.gpufit_result_to_json(res, buf, len(buf), byref(need), None)
        if st == 0:
            return buf.value.decode("utf-8")
        if st != _E_BUFFER_TOO_SMALL:
            _lib.raise_for(st)
        size = need.value + 1
    _lib.raise_for(_E_BUFFER_TOO_SMALL)


# gpufit_verdict values as the report names them (docs/band.md)
_VERDICTS = {1: "fits", 2: "marginal", 3: "oom"}


_COMPONENTS = _component_ids()  # [(id, name)] in report order, once at import
_COMPONENT_NAMES = tuple(n for _, n in _COMPONENTS)
_COMPONENT_IDS = {n: c for c, n in _COMPONENTS}
_result_bytes = lib.gpufit_result_bytes
_result_bytes_band = lib.gpufit_result_bytes_band
_result_free = lib.gpufit_result_free


class _Reader:
    """Owns one ``gpufit_result`` and reads it on demand for a lazy :class:`Report`, its
    roles and their components (which all keep it alive); freed with the last of them."""

    __slots__ = ("ptr", "_s", "__weakref__")
    component_names = _COMPONENT_NAMES
    component_ids = _COMPONENT_IDS

    def __init__(self, ptr: Optional[int]) -> None:
        self.ptr = ptr
        self._s: Optional[Summary] = None

    def __del__(self, _free: Callable[[Any], None] = _result_free) -> None:
        if self.ptr:
            _free(self.ptr)
            self.ptr = None

    def summary(self) -> Summary:
        s = self._s
        if s is None:
            s = self._s = _new_summary(_SUMMARY_ZERO)
            st = lib.gpufit_result_summary(self.ptr, byref(s))
            if st != 0:
                _lib.raise_for(st)
        return s

    # -- components ----------------------------------------------------------------------------
    def component(self, role: int, name: str, kind: int) -> int:
        cid = _COMPONENT_IDS[name]  # KeyError for a name that is no component
        if kind == 0:
            b = c_uint64(0)
            st = _result_bytes(self.ptr, role, cid, byref(b))
            if st != 0:
                _lib.raise_for(st)
            return b.value
        lo, hi = c_uint64(0), c_uint64(0)
        st = _result_bytes_band(self.ptr, role, cid, byref(lo), byref(hi))
        if st != 0:
            _lib.raise_for(st)
        return lo.value if kind == 1 else hi.value

    def components(self, role: int, kind: int) -> Dict[str, int]:
        return {n: self.component(role, n, kind) for n in _COMPONENT_NAMES}

    # -- roles ----------------------------------------------------------------------------------
    def fill_role(self, role: Role, i: int, name: str) -> None:
        """Sets every field of lazy Role ``role`` (index ``i``) read from RoleInfo."""
        ri = RoleInfo()
        st = lib.gpufit_result_role(self.ptr, i, byref(ri))
        if st != 0:
            _lib.raise_for(st)
        s = self.summary()
        role.name = _text(ri.name) or ""
        role.devices = ri.n_devices
        role.layers = ri.layers
        # components, components_low, components_high: Role.__getattr__ makes the mappings
        role.peak_allocated_bytes = ri.peak_allocated_bytes
        role.peak_reserved_bytes = ri.peak_reserved_bytes
        role.device_used_bytes = ri.device_used_bytes
        role.headroom_bytes = ri.headroom_bytes
        role.fits = None if s.fits < 0 or ri.fits < 0 else bool(ri.fits)
        role.kv_capacity_bytes = ri.kv_capacity_bytes
        role.kv_capacity_tokens = ri.kv_capacity_tokens
        role.gpu = _text(ri.gpu) or "" if ri.has_field("gpu") else ""
        role.capacity_bytes = ri.capacity_bytes if ri.has_field("capacity_bytes") else 0
        role.verdict = _VERDICTS.get(ri.verdict)
        for k in Role._BAND:
            setattr(role, k, getattr(ri, k))

    # -- the report ---------------------------------------------------------------------------
    def fill_report(self, report: Report, name: str) -> None:
        d = report.__dict__
        if name == "roles":
            d["roles"] = [Role._lazy(self, i) for i in range(self.summary().n_roles)]
        elif name == "notes":
            notes = []
            t = c_char_p()
            for i in range(self.summary().n_notes):
                if lib.gpufit_result_note(self.ptr, i, byref(t)) == 0:
                    notes.append(_text(t.value))
            d["notes"] = notes
        elif name == "_json":
            d["_json"] = _result_json(self.ptr)
        elif name == "_mitigation_specs":
            d["_mitigation_specs"] = self._mitigation_specs()
        elif name in ("model_name", "task"):
            inputs = report._inputs
            assert inputs is not None  # a report read from C has its inputs
            model, job = inputs
            d["model_name"] = model.name
            d["task"] = job.get("task") if _param_id("task") else None
        elif name == "library_version":
            d["library_version"] = _lib.version_string
        else:
            s = self.summary()
            d.update(
                fits=None if s.fits < 0 else bool(s.fits), peak_bytes=s.peak_bytes,
                capacity_bytes=s.capacity_bytes, headroom_bytes=s.headroom_bytes,
                n_params=s.n_params, n_active_params=s.n_active_params,
                host_bytes=s.host_bytes, _worst=s.worst_role, verdict=_VERDICTS.get(s.verdict),
                peak_low_bytes=s.peak_low_bytes, peak_high_bytes=s.peak_high_bytes)

    def _mitigation_specs(self) -> List[str]:
        s = self.summary()
        specs = []
        n_mit = s.n_mitigations if s.has_field("n_mitigations") else 0
        for i in range(n_mit):
            mi = _MitigationInfo()
            try:
                st = lib.gpufit_result_mitigation(self.ptr, i, byref(mi))
            except _errors.Unsupported:
                break
            if st != 0:
                break
            specs.append(_text(mi.changes) or "")
        return specs


_SUMMARY_ZERO = bytes(Summary())  # a ready struct (struct_size set), copied per call
_new_summary = Summary.from_buffer_copy
_object_new = object.__new__
_object_setattr = object.__setattr__


def _handle_ptr(h: Any, cls: Any) -> int:
    """The C pointer of handle ``h`` of exactly ``cls`` (the hot path), else checked."""
    if type(h) is not cls and not isinstance(h, cls):
        raise TypeError("%s: expected a gpufit.%s, not %s" % (
            cls.__name__.lower(), cls.__name__, type(h).__name__))
    ptr: Optional[int] = h._ptr
    if not ptr:
        raise ValueError("%s is closed" % cls.__name__)
    return ptr


_verdict_class: "Optional[Type[Verdict]]" = None


def _load_verdict() -> "Type[Verdict]":
    """:class:`gpufit.Verdict`, imported at the first :func:`evaluate_summary`: the
    dataclasses module costs ``import gpufit`` more than a third of its time."""
    global _verdict_class
    from .summary import Verdict
    _verdict_class = Verdict
    return Verdict


def evaluate_summary(model: "Model", job: "Job") -> "Verdict":
    """The fast path for sweeps: evaluates ``model`` (a :class:`Model`) under ``job`` (a
    :class:`Job`) through ``gpufit_evaluate_summary`` and returns a :class:`Verdict`, much
    faster than :func:`evaluate` (nothing but the totals is read; no error struct is filled
    unless the call fails; tools/bench_python.py)."""
    mp = _handle_ptr(model, Model)
    jp = _handle_ptr(job, Job)
    s = _new_summary(_SUMMARY_ZERO)
    if _evaluate_summary_fn(mp, jp, byref(s), None) < 0:  # again, for the error's detail
        _lib.call(lib.gpufit_evaluate_summary, mp, jp, byref(s))
    v: "Verdict" = _object_new(_verdict_class or _load_verdict())
    fits = s.fits
    _object_setattr(v, "__dict__", {
        "verdict": _VERDICTS.get(s.verdict), "fits": None if fits < 0 else fits == 1,
        "peak_bytes": s.peak_bytes, "peak_low_bytes": s.peak_low_bytes,
        "peak_high_bytes": s.peak_high_bytes, "headroom_bytes": s.headroom_bytes,
        "capacity_bytes": s.capacity_bytes})
    return v


_evaluate_summary_fn = lib.gpufit_evaluate_summary

#: the columns sweep() adds after the grid's own
_SWEEP_COLUMNS = ("verdict", "fits", "peak_bytes", "peak_low_bytes", "peak_high_bytes",
                  "headroom_bytes", "error")
_CODES = {c_uint32: "I", c_int32: "i", c_uint64: "Q", c_int64: "q"}
#: each gpufit_summary field a sweep column comes from: (memoryview format, index of the
#: field's first element, elements per summary); a column is one strided slice of the
#: summaries cast to that format, turned into a list at C speed (memoryview.tolist)
_SUMMARY_COLUMN = {
    n: (_CODES[t], getattr(Summary, n).offset // ctypes.sizeof(t),
        ctypes.sizeof(Summary) // ctypes.sizeof(t))
    for n, t in Summary._fields_}
_PANDAS: List[Any] = []  # [module or None] once looked up


def _pandas() -> Any:
    if not _PANDAS:
        try:
            import pandas  # type: ignore[import]  # optional
        except ImportError:
            pandas = None
        _PANDAS.append(pandas)
    return _PANDAS[0]


def _axis_number(name: str, pid: int, info: ParamInfo, value: Any) -> Optional[float]:
    """A grid value as gpufit_sweep takes it (a double), or None when only the Python path
    can set it (a GPU name, a model file, text)."""
    typ = _TYPES.get(info.type)
    if isinstance(value, bool):
        return float(value) if typ in ("bool", "int") else None
    if typ == "enum" and isinstance(value, str):
        v = c_int64(0)
        if lib.gpufit_param_value_by_name(pid, value.encode("utf-8"), byref(v)) != 0:
            return None
        return float(v.value)
    if typ == "float" and isinstance(value, numbers.Real):
        return float(value)
    if typ in ("int", "enum", "bool") and isinstance(value, numbers.Integral):
        n = int(value)
        return float(n) if -2**53 <= n <= 2**53 else None
    return None


def _grid_axes(keys: List[str], values: List[List[Any]]
               ) -> Optional[Tuple[List[int], List[float]]]:
    """(param ids, doubles) for gpufit_sweep, or None when some axis needs the Python path."""
    if len(keys) > 8:  # GPUFIT_SWEEP_AXES_MAX
        return None
    pids: List[int] = []
    flat: List[float] = []
    for k, vals in zip(keys, values):
        pid = _param_id(k) if k not in ("model", "gpu") else 0
        if not pid:
            return None
        info = _info(pid)
        typ = _TYPES.get(info.type)
        if typ == "list":
            return None
        if typ in ("int", "float") and set(map(type, vals)) == {int} and (
                -2**53 <= min(vals) and max(vals) <= 2**53):
            flat.extend(map(float, vals))  # the common case: plain ints
        else:
            for v in vals:
                x = _axis_number(k, pid, info, v)
                if x is None:
                    return None
                flat.append(x)
        pids.append(pid)
    return pids, flat


def _cell_handles(model: "Model", job: "Job", keys: List[str],
                  combo: Sequence[Any]) -> Tuple["Model", "Job"]:
    """Copies of the handles with one grid cell's values set (model keys on the model)."""
    m, j = model, job.copy()
    on_model = {}
    on_job = {}
    for k, v in zip(keys, combo):
        pid = _param_id(k) if k not in ("model", "gpu") else 0
        if k == "model" or (pid and _DOMAINS.get(_info(pid).domain) == "model"):
            on_model[k] = v
        else:
            on_job[k] = v
    if on_model:
        m = model.copy()
        m.update(on_model)
    if on_job:
        j.update(on_job)
    return m, j


def _sweep_cell_error(model: "Model", job: "Job", keys: List[str],
                      combo: Sequence[Any]) -> str:
    """The message of one refused cell, from the one-by-one path."""
    try:
        evaluate_summary(*_cell_handles(model, job, keys, combo))
    except _errors.GpufitError as e:
        return str(e)
    return "refused by the library"


def sweep(model: Union["Model", str], job: Union["Job", Mapping[str, Any], None] = None, *,
          as_frame: Optional[bool] = None, **grid: Any) -> Any:
    """Evaluates the job over a grid of values (``micro_batch=range(1, 65), seq_len=[...]``)
    in one call into the library (``gpufit_sweep``) and returns the columns: a
    ``pandas.DataFrame`` when pandas is importable, else a dict of lists (one column per grid
    key, then ``verdict``, ``fits``, ``peak_bytes``, ``peak_low_bytes``, ``peak_high_bytes``,
    ``headroom_bytes``, ``error``), one row per combination with the last key varying fastest
    (``itertools.product``). A combination the library refuses gets verdict ``"error"`` and
    its message in ``error``. Grid keys are model or job parameters with numbers, booleans or
    enum names; other values (``gpu`` names, model files) take the slower one-by-one path.

    ``as_frame``: True for a DataFrame (pandas needed), False for the dict of columns (a
    :class:`gpufit.SweepColumns`, which a notebook shows as a heat map of a one- or two-key
    grid with the capacity line), None (default) for a DataFrame when pandas is importable.
    """
    m = _as_model(model)
    j = _as_job(job)
    keys = list(grid)
    values = [list(v) if not isinstance(v, (str, bytes)) and hasattr(v, "__iter__") else [v]
              for v in grid.values()]
    for k, v in zip(keys, values):
        if not v:
            raise ValueError("sweep: %s has no values" % k)
    axes = _grid_axes(keys, values)
    if axes is None:
        cols = _sweep_python(m, j, keys, values)
    else:
        cols = _sweep_c(m, j, keys, values, *axes)
    pandas = _pandas() if as_frame is not False else None
    if as_frame and pandas is None:
        raise ImportError("sweep(as_frame=True) needs pandas")
    if pandas is not None:
        return pandas.DataFrame(cols)
    out = SweepColumns(cols)
    out.grid = keys
    return out


_FITS = {1: True, 0: False, -1: None}


def _grid_columns(keys: List[str], values: List[List[Any]]) -> Dict[str, List[Any]]:
    """The grid's own columns in ``itertools.product`` order (the last key fastest): each
    value of a key repeated once per cell of the keys after it, the whole tiled once per cell
    of the keys before it."""
    cols: Dict[str, List[Any]] = {}
    after = 1
    for v in values:
        after *= len(v)
    before = 1
    for k, v in zip(keys, values):
        after //= len(v)
        run = list(v) if after == 1 else list(itertools.chain.from_iterable(
            map(itertools.repeat, v, itertools.repeat(after, len(v)))))
        cols[k] = run * before
        before *= len(v)
    return cols


def _sweep_c(model: "Model", job: "Job", keys: List[str], values: List[List[Any]],
             pids: List[int], flat: List[float]) -> Dict[str, List[Any]]:
    n = 1
    for v in values:
        n *= len(v)
    out = (Summary * n)()
    out[0].struct_size = ctypes.sizeof(Summary)
    status = (c_int32 * n)()
    na = len(pids)
    _lib.call(lib.gpufit_sweep, model, job, (c_int32 * max(na, 1))(*pids),
              (c_uint32 * max(na, 1))(*[len(v) for v in values]),
              (c_double * max(len(flat), 1))(*flat), na, out, status, n)
    cols = _grid_columns(keys, values)
    raw = memoryview(out).cast("B")
    views: Dict[str, memoryview] = {}

    def column(name: str) -> List[Any]:
        """One summary field of every cell, in grid order (a strided slice, at C speed)."""
        code, first, step = _SUMMARY_COLUMN[name]
        if code not in views:
            views[code] = raw.cast(code)
        return views[code][first::step].tolist()

    cols["verdict"] = list(map(_VERDICTS.get, column("verdict")))
    cols["fits"] = list(map(_FITS.get, column("fits")))
    for k in ("peak_bytes", "peak_low_bytes", "peak_high_bytes", "headroom_bytes"):
        cols[k] = column(k)
    errors: List[Optional[str]] = [None] * n
    if bytes(status).count(0) != 4 * n:  # some cell was refused
        combos = list(itertools.product(*values))
        for i, st in enumerate(status):
            if st:
                errors[i] = _sweep_cell_error(model, job, keys, combos[i])
                cols["verdict"][i] = "error"
                for k in ("fits", "peak_bytes", "peak_low_bytes", "peak_high_bytes",
                          "headroom_bytes"):
                    cols[k][i] = None
    cols["error"] = errors
    return cols


def _sweep_python(model: "Model", job: "Job", keys: List[str],
                  values: List[List[Any]]) -> Dict[str, List[Any]]:
    cols: Dict[str, List[Any]] = {k: [] for k in keys + list(_SWEEP_COLUMNS)}
    for combo in itertools.product(*values):
        try:
            v = evaluate_summary(*_cell_handles(model, job, keys, combo))
            row = [v.verdict, v.fits, v.peak_bytes, v.peak_low_bytes, v.peak_high_bytes,
                   v.headroom_bytes, None]
        except _errors.GpufitError as e:
            row = ["error", None, None, None, None, None, str(e)]
        for k, x in zip(keys, combo):
            cols[k].append(x)
        for k, x in zip(_SWEEP_COLUMNS, row):
            cols[k].append(x)
    return cols


def _as_model(model: Any) -> "Model":
    """A Model from a Model or a preset name (TypeError otherwise)."""
    if isinstance(model, str):
        model = Model(model)
    _handle_ptr(model, Model)
    assert isinstance(model, Model)
    return model


def _as_job(job: Any) -> "Job":
    """A Job from a Job, a dict of job keys or None (the defaults); TypeError otherwise."""
    if job is None:
        job = Job()
    elif isinstance(job, Mapping):
        job = Job(**job)
    _handle_ptr(job, Job)
    assert isinstance(job, Job)
    return job


def evaluate(model: Union["Model", str],
             job: Union["Job", Mapping[str, Any], None] = None) -> Report:
    """Evaluates ``model`` (a :class:`Model` or a preset name) under ``job`` (a :class:`Job`,
    a dict of job keys, or None for the defaults) and returns a :class:`Report`."""
    m = model if type(model) is Model else _as_model(model)
    j = job if type(job) is Job else _as_job(job)
    mp = m._ptr or _handle_ptr(m, Model)
    jp = j._ptr or _handle_ptr(j, Job)
    out = c_void_p()
    if _evaluate_fn(byref(out), mp, jp, None) < 0:  # again, for the error's detail
        _lib.call(lib.gpufit_evaluate, byref(out), mp, jp)
    report = _new_report(Report)
    d = report.__dict__
    d["_src"] = _Reader(out.value)
    d["_inputs"] = (m, j)
    # the report reads its inputs later (with_changes, model_name): the handles copy
    # themselves for it before their next change (_Handle._pin, _Handle._changing)
    ref = _weakref(report)
    h: _Handle
    for h in (m, j):
        rs = h._readers
        if rs is None or len(rs) >= h._prune_at:
            h._pin(ref)
        else:
            rs.append(ref)
    return report


_new_report = object.__new__


_evaluate_fn = lib.gpufit_evaluate
_weakref = weakref.ref


def reevaluate(report: Report, changes: Mapping[str, Any]) -> Report:
    """A new Report for ``report``'s model and job with ``changes`` (scenario keys) applied."""
    if getattr(report, "_inputs", None) is None:
        raise ValueError("this report does not carry its model and job (it was unpickled or "
                         "built by hand): call gpufit.estimate() with the changes instead")
    inputs = report._inputs
    assert inputs is not None
    model, job = inputs[0].copy(), inputs[1].copy()
    file_model, rest = _resolve_model([(k, v) for k, v in dict(changes).items()
                                       if v is not None])
    if file_model is not None:
        model._replace(file_model)
    if rest:
        _apply_json(model, job, scenario_json(rest, _type_of).encode("ascii"))
    return evaluate(model, job)


def _profile_bytes(profile: Any) -> bytes:
    if isinstance(profile, dict):
        import json  # noqa: PLC0415 (json is imported when first used: import time)
        return json.dumps(profile).encode("utf-8")
    if isinstance(profile, (str, os.PathLike)):
        text = os.fspath(profile)
        if not text.lstrip().startswith("{"):
            with open(text, "rb") as f:  # a path: FileNotFoundError when it is missing
                return f.read()
        return text.encode("utf-8")
    raise TypeError("profile: give a dict, JSON text or a path, not %s"
                    % type(profile).__name__)


def calibrate(runs: Any) -> Dict[str, Any]:
    """Fits the stack constants that measured runs constrain (docs/calibration.md) and
    returns the profile as a dict, ready for ``estimate(..., profile=...)`` or
    :meth:`Job.apply_profile`. ``runs`` is the path of a RUNS.jsonl file, its text or bytes,
    or a list of run dicts in the format of docs/runs.md."""
    import json  # noqa: PLC0415 (json is imported when first used: import time)
    profile: Dict[str, Any] = json.loads(calibrate_text(runs))
    return profile


def calibrate_text(runs: Any) -> str:
    """:func:`calibrate`'s profile as the library writes it (the text of ``gpufit calibrate``)."""
    if isinstance(runs, (bytes, bytearray)):  # the file's bytes, as read
        data = bytes(runs)
    elif isinstance(runs, (list, tuple)):
        import json  # noqa: PLC0415 (json is imported when first used: import time)
        data = "\n".join(json.dumps(r) for r in runs).encode("utf-8")
    elif isinstance(runs, (str, os.PathLike)):
        text = os.fspath(runs)
        if "\n" in text or text.lstrip().startswith("{"):
            data = text.encode("utf-8")
        else:
            with open(text, "rb") as f:
                data = f.read()
    else:
        raise TypeError("runs: give a path, JSONL text or bytes, or a list of dicts, not %s"
                        % type(runs).__name__)
    need = c_size_t(0)
    err = _Error()
    st = lib.gpufit_calibrate(data, len(data), None, 0, byref(need), byref(err))
    if st not in (0, -8):
        _lib.raise_for(st, err, data.decode("utf-8", "replace"))
    buf = ctypes.create_string_buffer(need.value + 1)
    _lib.call(lib.gpufit_calibrate, data, len(data), buf, len(buf), None,
              source=data.decode("utf-8", "replace"))
    profile_text: str = buf.value.decode("utf-8")
    return profile_text


def estimate(scenario: Optional[Mapping[str, Any]] = None, *, file: Optional[PathArg] = None,
             spec: Optional[str] = None, profile: Any = None, **params: Any) -> Report:
    """Predicts the memory of a job and returns a :class:`Report`.

    The scenario is put together from, in this order (a later source wins over an earlier
    one, as in the ``gpufit`` command where ``--spec`` is applied after the file):

    1. ``file``: a JSON scenario file (``docs/scenario.md`` and ``docs/params.md``);
    2. ``spec``: a spec string, ``"model=llama-3-8b task=inference gpu=rtx-4090"``;
    3. ``scenario``: a dict in the JSON form, updated with the keyword arguments.

    Keywords are the scenario's names (see :func:`params`): ``model`` (a preset name, a dict
    of architecture keys optionally with ``"preset"``, a :class:`Model`, the path of a
    ``config.json``, a ``.gguf`` file or a model directory, or ``{"path": ...}`` /
    ``{"hf_config": {...}}`` with overrides), ``gpu`` (a catalogue name, a number of GiB,
    or ``{"memory_gib": N}``), and every model or job parameter (``task="pretrain", tp=8,
    precision="amp_bf16", sp=True``). A value of None means "not given".

    Errors raise :class:`gpufit.GpufitError` subclasses whose ``key`` names the offending key
    and ``offset`` its byte offset in ``source`` (the spec, the file, or the JSON built from
    the keywords).

    >>> r = gpufit.estimate(model="llama-3-70b", gpu="h100-sxm-80gb", task="pretrain",
    ...                     tp=8, pp=4, dp=2)
    >>> r.fits, r.peak_bytes
    """
    model, job = build(scenario, file, spec, params)
    if profile is not None:  # a calibration profile (calibrate)
        job.apply_profile(profile)
    return evaluate(model, job)


def max_fitting(param: str, scenario: Optional[Mapping[str, Any]] = None, *,
                file: Optional[PathArg] = None, spec: Optional[str] = None,
                **params: Any) -> int:
    """The largest value of ``param`` (``"micro_batch"``, ``"seq_len"``, ``"batch"``,
    ``"context_len"``, ``"prompt_len"`` or ``"n_gpu_layers"``) with which the scenario still
    fits its GPU, found exactly by the library (0 when even the smallest value does not fit).
    The scenario is given as to :func:`estimate`."""
    pid = _param_id(param)
    if not pid:
        raise _errors.UnknownParameter(
            message="unknown parameter %r (see gpufit.params())" % (param,), key=param)
    model, job = build(scenario, file, spec, params)
    return max_fitting_handles(model, job, param)


def max_fitting_handles(model: "Model", job: "Job", param: str) -> int:
    """:func:`max_fitting` for a :class:`Model` and a :class:`Job`."""
    if not isinstance(param, str):
        raise TypeError("param must be a str (a parameter name), not %s" % type(param).__name__)
    pid = _param_id(param)
    if not pid:
        raise _errors.UnknownParameter(
            message="unknown parameter %r (see gpufit.params())" % (param,), key=param)
    _check_handles(model, job)
    out = c_int64(0)
    _lib.call(lib.gpufit_max_fitting, model, job, pid, byref(out), key=param)
    return out.value


# ---------------------------------------------------------------------------------------------
# GPU recommendation and layout planning
# ---------------------------------------------------------------------------------------------
class ResultList(List[Any]):
    """A list of :class:`gpufit.Recommendation` (:func:`recommend`) or
    :class:`gpufit.Layout` (:func:`plan`), best first; ``evaluated`` is how many candidates
    the library evaluated to build it. ``to_dict()`` is the command's ``--json`` output
    (``{"recommendations": [...]}``, ``{"evaluated": N, "layouts": [...]}``). Shows as a table
    in notebooks."""

    evaluated: int = 0
    columns: Tuple[str, ...] = ()
    kind: str = "recommendations"
    # plan: the GPUs it planned over (the job's gpus, else 8 assumed, else gpus_per_node)
    nodes: int = 1
    gpus_per_node: int = 0
    gpus_assumed: bool = False

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        if isinstance(index, slice):
            out = ResultList(item)
            out.evaluated, out.columns, out.kind = self.evaluated, self.columns, self.kind
            out.nodes, out.gpus_per_node = self.nodes, self.gpus_per_node
            out.gpus_assumed = self.gpus_assumed
            return out
        return item

    def to_dict(self) -> Dict[str, Any]:
        """What ``gpufit recommend --json`` / ``gpufit plan --json`` prints, parsed."""
        rows = [x.to_dict() for x in self]
        if self.kind == "layouts":
            return {"evaluated": self.evaluated, "nodes": self.nodes,
                    "gpus_per_node": self.gpus_per_node, "gpus_assumed": self.gpus_assumed,
                    "layouts": rows}
        return {"recommendations": rows}

    def _repr_html_(self) -> str:
        from html import escape
        cols = [c for c in self.columns if any(c in row for row in self)] or (
            list(self[0]) if self else [])
        h = ['<table style="border-collapse:collapse;font-size:12.5px;font-family:system-ui,'
             'sans-serif"><thead><tr>']
        for c in cols:
            h.append('<th style="padding:3px 8px;border-bottom:1px solid #bbb;text-align:left">'
                     "%s</th>" % escape(c))
        h.append("</tr></thead><tbody>")
        for row in self:
            h.append("<tr>")
            for c in cols:
                v = row.get(c, "")
                if isinstance(v, int) and not isinstance(v, bool) and c.endswith("_bytes"):
                    v = "%.2f GiB" % (v / 2**30)
                elif isinstance(v, float):
                    v = "%.4g" % v
                h.append('<td style="padding:2px 8px">%s</td>' % escape(str(v)))
            h.append("</tr>")
        h.append("</tbody></table><div style=\"color:#888;font-size:11px\">%d candidates "
                 "evaluated</div>" % self.evaluated)
        return "".join(h)


def _changes(d: Dict[str, Any]) -> None:
    """The entry's canonical changes (docs/advice.md) as a dict under ``changes``: applied to
    the scenario the list was made for (``Report.with_changes`` or the ``spec`` text with
    :func:`estimate`), they reproduce its peak and verdict."""
    text = d.pop("spec_json", None)
    import json  # noqa: PLC0415 (json is imported when first used: import time)
    d["changes"] = json.loads(text) if text else {}


def _entry(cls: Type[_E], d: Dict[str, Any]) -> _E:
    """A dataclass entry from a struct's dict: fields the loaded library did not fill get
    their type's zero."""
    zero = {"int": 0, "float": 0.0, "bool": False, "str": ""}
    kw = {}
    import dataclasses
    for f in dataclasses.fields(cls):
        if f.name in d:
            kw[f.name] = d[f.name]
        elif f.default is not dataclasses.MISSING:
            kw[f.name] = f.default
        else:
            t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
            kw[f.name] = {} if "Dict" in t else zero.get(t)
    return cls(**kw)


def _read_list(ptr: Any, getter: Callable[..., int], struct: Any,
               convert: Callable[[Any], Any], columns: Tuple[str, ...],
               kind: str = "recommendations") -> ResultList:
    out = ResultList()
    out.columns = columns
    out.kind = kind
    try:
        for i in range(lib.gpufit_list_count(ptr)):
            item = struct()
            st = getter(ptr, i, byref(item))
            if st != 0:
                _lib.raise_for(st)
            out.append(convert(item))
        out.evaluated = int(lib.gpufit_list_evaluated(ptr))
    finally:
        lib.gpufit_list_free(ptr)
    return out


def _gpu_id(name: Any, key: str = "candidates", param: Optional[str] = None,
            param_id: int = 0) -> int:
    if isinstance(name, numbers.Integral) and not isinstance(name, bool):
        return int(name)
    g = GpuInfo()
    if not isinstance(name, str) or lib.gpufit_gpu_by_name(name.encode("utf-8"), byref(g)) != 0:
        raise _errors.NotFound(message="%s: GPU %r is not in the catalogue (see "
                                       "gpufit.gpus())" % (key, name), key=key, param=param,
                               param_id=param_id)
    return int(g.id)


def recommend(scenario: Optional[Mapping[str, Any]] = None, *, candidates: Any = None,
              max_count: int = 8, file: Optional[PathArg] = None, spec: Optional[str] = None,
              **params: Any) -> ResultList:
    """GPUs on which the scenario fits, best first: for every catalogue GPU (or only the
    ``candidates``, names or ids), the smallest count up to ``max_count`` that fits,
    ranked by memory fit, the interconnect a multi-GPU layout needs, price, then TFLOPS per
    dollar. The scenario is given as to :func:`estimate` (its ``gpu`` is ignored).

    Returns a :class:`ResultList` of :class:`gpufit.Recommendation` dataclasses: ``gpu``
    (catalogue key), ``gpu_name``, ``gpu_id``, ``count``, ``fits``, ``needs_nvlink``,
    ``has_nvlink``, ``peak_bytes``, ``headroom_bytes``, ``price_usd``, ``tflops``,
    ``tflops_per_kusd``, ``reason``, ``spec`` and ``changes`` (the job changes that reproduce
    it, as a spec string and a dict; docs/advice.md); ``entry["gpu"]`` reads a field too.
    ``to_dict()`` of an entry (and of the list) is ``gpufit recommend --json``.
    """
    model, job = build(scenario, file, spec, params)
    return recommend_handles(model, job, candidates, max_count)


def recommend_handles(model: "Model", job: "Job", candidates: Any = None,
                      max_count: int = 8) -> ResultList:
    """:func:`recommend` for a :class:`Model` and a :class:`Job`."""
    _check_handles(model, job)
    max_count = _count("max_count", max_count)
    ids = None
    n = 0
    if candidates is not None:
        if isinstance(candidates, (str, numbers.Integral)):
            candidates = [candidates]
        values = [_gpu_id(c) for c in candidates]
        n = len(values)
        ids = (c_int32 * n)(*values)
    out = c_void_p()
    _lib.call(lib.gpufit_recommend, byref(out), model, job, ids, n, int(max_count))

    from .advice import Recommendation

    def convert(rec: _Recommendation) -> "Recommendation":
        d = rec._asdict()
        for k in ("fits", "needs_nvlink", "has_nvlink"):
            if k in d:
                d[k] = bool(d[k])
        d["gpu"] = _gpu_key(rec.gpu_id)
        _changes(d)
        return _entry(Recommendation, d)

    return _read_list(out, lib.gpufit_list_recommendation, _Recommendation, convert,
                      ("gpu", "count", "fits", "peak_bytes", "headroom_bytes", "needs_nvlink",
                       "has_nvlink", "price_usd", "tflops_per_kusd", "reason"))


def plan(scenario: Optional[Mapping[str, Any]] = None, *,
         gpus_per_node: Optional[int] = None, nodes: int = 1, max_results: int = 10,
         file: Optional[PathArg] = None, spec: Optional[str] = None,
         **params: Any) -> ResultList:
    """Parallel layouts that fit ``gpus_per_node`` x ``nodes`` GPUs of the scenario's GPU,
    cheapest first by the library's documented cost (at most ``max_results``). The scenario
    is given as to :func:`estimate`. ``gpus_per_node`` None: the job's ``gpus`` (on one
    node), else 8; the returned list's ``gpus_per_node`` and ``gpus_assumed`` say which.

    Returns a :class:`ResultList` of :class:`gpufit.Layout` dataclasses (``to_dict()``: the
    entries of ``gpufit plan --json``; ``entry["spec"]`` reads a field too): ``tp``, ``pp``,
    ``vpp``, ``dp``, ``cp``, ``ep``, ``zero``,
    ``micro_batch``, ``checkpointing`` (a name), ``peak_bytes``, ``headroom_bytes``, ``cost``,
    ``spec`` (the layout's canonical job changes as a spec string: applied to the scenario
    with ``estimate(spec=...)`` they reproduce ``peak_bytes``; docs/advice.md), ``changes``
    (the same as a dict), ``placement``, ``kv_capacity_tokens`` (serving plans: the KV
    room per replica) and ``flags`` (the layout in its framework's flags; docs/flags.md).
    """
    model, job = build(scenario, file, spec, params)
    return plan_handles(model, job, gpus_per_node, nodes, max_results)


def plan_handles(model: "Model", job: "Job", gpus_per_node: Optional[int] = None,
                 nodes: int = 1, max_results: int = 10) -> ResultList:
    """:func:`plan` for a :class:`Model` and a :class:`Job`."""
    _check_handles(model, job)
    assumed = False
    if gpus_per_node is None:  # the job's gpus on one node, else 8 (as the command does)
        gpus = job.get("gpus")
        if gpus > 0 and nodes == 1:
            gpus_per_node = gpus
        else:
            gpus_per_node, assumed = 8, True
    gpus_per_node = _count("gpus_per_node", gpus_per_node)
    nodes = _count("nodes", nodes)
    max_results = _count("max_results", max_results)
    out = c_void_p()
    _lib.call(lib.gpufit_plan, byref(out), model, job, gpus_per_node, nodes, max_results)
    ckpt = _param_id("checkpointing")

    from .advice import Layout

    def convert(lay: _Layout) -> "Layout":
        d = lay._asdict()
        if "checkpointing" in d and ckpt:
            name = lib.gpufit_param_value_name(ckpt, d["checkpointing"])
            if name is not None:
                d["checkpointing"] = _text(name)
        _changes(d)
        return _entry(Layout, d)

    lays = _read_list(out, lib.gpufit_list_layout, _Layout, convert,
                      ("tp", "pp", "vpp", "dp", "cp", "ep", "zero", "micro_batch",
                       "checkpointing", "peak_bytes", "headroom_bytes", "cost", "spec",
                       "kv_capacity_tokens"), kind="layouts")
    lays.gpus_per_node, lays.nodes, lays.gpus_assumed = gpus_per_node, nodes, assumed
    return lays
