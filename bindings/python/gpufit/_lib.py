# SPDX-License-Identifier: MIT
"""Loading libgpufit and declaring its functions (internal).

Where the library comes from, in this order (the first one that loads and passes the checks
wins). Nothing on this path starts a process: ``ctypes.util.find_library`` runs ``ldconfig``,
``gcc`` and ``ld``, which cost tens of milliseconds per ``import gpufit``
(``tools/bench_python.py`` measures the import), so it is never called.

1. The copy bundled in a wheel: ``gpufit/_libs/libgpufit.so.0`` (a wheel is built together
   with its library, so the installed package uses the library it was tested with).
2. ``$GPUFIT_LIBRARY``: an explicit path. When it is set it is the last candidate, so a
   wrong path is an error rather than a silent fallback to another copy.
3. The in-tree build of a source checkout: ``<repository>/build/libgpufit.so.0`` (``make``).
4. The system's dynamic loader by SONAME, ``ctypes.CDLL("libgpufit.so.0")``:
   ``LD_LIBRARY_PATH``, the ld.so cache and the default directories (``make install``).

A candidate is accepted when its ABI major (the ``N`` of the ``libgpufit.so.N`` SONAME, read
from the ELF header when possible) is the one this binding was written for and
``gpufit_version_number()`` is at least the version it needs. When nothing is accepted, one
:class:`ImportError` lists every candidate and why it was refused.

Every function of ``gpufit.h`` is declared once, in :data:`FUNCTIONS`, with its argument
types, return type and the version that added it. A function that the loaded library does not
export (too old, or built from an older source tree) becomes a stub raising
:class:`gpufit.Unsupported` that names both versions, so the rest of the binding still works.

The loaded library handle is the only module-level state of the binding.
"""

import ctypes
import os
import struct
import sys
from ctypes import (POINTER, c_char, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_void_p)

from typing import Any, Callable, List, NoReturn, Optional, Tuple

from . import errors as _errors
from ._types import (UINT64_MAX, Error, GpuInfo, Layout, MitigationInfo, ParamInfo,
                     PresetInfo, Recommendation, RoleInfo, SafetensorsInfo, Summary)

__all__ = ["lib", "path", "version_number", "version_string", "FUNCTIONS", "call",
           "raise_for", "candidates", "elf_soname"]

#: ABI major this binding speaks: the N of libgpufit.so.N.
SOVERSION = 0
#: Oldest library accepted (GPUFIT_VERSION_NUMBER of 0.1.0).
MIN_VERSION = 100

_ERR = POINTER(Error)
_HANDLE_OUT = POINTER(c_void_p)

#: Every function of gpufit.h: (name, argtypes, restype, since). Handles are ``c_void_p``;
#: writable char buffers are ``POINTER(c_char)``; the trailing ``gpufit_error *`` is
#: ``POINTER(Error)``. tests/test_functions.py checks this table against the header.
FUNCTIONS: Tuple[Tuple[str, List[Any], Any, int], ...] = (
    # version and status
    ("gpufit_version_number", [], c_uint32, 100),
    ("gpufit_version_string", [], c_char_p, 100),
    ("gpufit_status_str", [c_int32], c_char_p, 100),
    # handles
    ("gpufit_model_new", [_HANDLE_OUT, _ERR], c_int32, 100),
    ("gpufit_model_from_preset", [_HANDLE_OUT, c_char_p, _ERR], c_int32, 100),
    ("gpufit_model_copy", [_HANDLE_OUT, c_void_p, _ERR], c_int32, 100),
    ("gpufit_model_free", [c_void_p], None, 100),
    ("gpufit_model_name", [c_void_p], c_char_p, 100),
    ("gpufit_model_param_count", [c_void_p, POINTER(c_uint64), POINTER(c_uint64), _ERR],
     c_int32, 100),
    ("gpufit_job_new", [_HANDLE_OUT, _ERR], c_int32, 100),
    ("gpufit_job_copy", [_HANDLE_OUT, c_void_p, _ERR], c_int32, 100),
    ("gpufit_job_free", [c_void_p], None, 100),
    # parameter table
    ("gpufit_param_get_info", [c_int32, POINTER(ParamInfo)], c_int32, 100),
    ("gpufit_param_by_name", [c_char_p, POINTER(c_int32)], c_int32, 100),
    ("gpufit_param_next", [c_int32], c_int32, 100),
    ("gpufit_param_value_at", [c_int32, c_uint32, POINTER(c_int64), POINTER(c_char_p)],
     c_int32, 100),
    ("gpufit_param_value_name", [c_int32, c_int64], c_char_p, 100),
    ("gpufit_param_value_by_name", [c_int32, c_char_p, POINTER(c_int64)], c_int32, 100),
    # typed setters and getters
    ("gpufit_model_set_int", [c_void_p, c_int32, c_int64, _ERR], c_int32, 100),
    ("gpufit_model_set_float", [c_void_p, c_int32, c_double, _ERR], c_int32, 100),
    ("gpufit_model_get_int", [c_void_p, c_int32, POINTER(c_int64), _ERR], c_int32, 100),
    ("gpufit_model_get_float", [c_void_p, c_int32, POINTER(c_double), _ERR], c_int32, 100),
    ("gpufit_job_set_int", [c_void_p, c_int32, c_int64, _ERR], c_int32, 100),
    ("gpufit_job_set_float", [c_void_p, c_int32, c_double, _ERR], c_int32, 100),
    ("gpufit_job_get_int", [c_void_p, c_int32, POINTER(c_int64), _ERR], c_int32, 100),
    ("gpufit_job_get_float", [c_void_p, c_int32, POINTER(c_double), _ERR], c_int32, 100),
    ("gpufit_job_set_list", [c_void_p, c_int32, POINTER(c_double), c_uint32, _ERR], c_int32,
     100),
    ("gpufit_job_get_list",
     [c_void_p, c_int32, POINTER(c_double), c_uint32, POINTER(c_uint32), _ERR], c_int32, 100),
    # text forms
    ("gpufit_apply_spec", [c_void_p, c_void_p, c_char_p, _ERR], c_int32, 100),
    ("gpufit_apply_json", [c_void_p, c_void_p, c_char_p, c_size_t, _ERR], c_int32, 100),
    # model-file readers (the library takes buffers; the binding reads the files)
    ("gpufit_model_from_hf_config", [_HANDLE_OUT, c_char_p, c_size_t, _ERR], c_int32, 100),
    ("gpufit_model_from_gguf", [_HANDLE_OUT, c_void_p, c_size_t, POINTER(c_uint64), _ERR],
     c_int32, 100),
    ("gpufit_safetensors_read", [POINTER(SafetensorsInfo), c_void_p, c_size_t,
                                 POINTER(c_uint64), _ERR], c_int32, 100),
    ("gpufit_model_check_safetensors", [c_void_p, POINTER(SafetensorsInfo), _ERR], c_int32,
     100),
    # catalogues
    ("gpufit_preset_at", [c_uint32, POINTER(PresetInfo)], c_int32, 100),
    ("gpufit_gpu_at", [c_uint32, POINTER(GpuInfo)], c_int32, 100),
    ("gpufit_gpu_by_name", [c_char_p, POINTER(GpuInfo)], c_int32, 100),
    # evaluation and results
    ("gpufit_component_next", [c_int32], c_int32, 100),
    ("gpufit_component_name", [c_int32], c_char_p, 100),
    ("gpufit_evaluate", [_HANDLE_OUT, c_void_p, c_void_p, _ERR], c_int32, 100),
    ("gpufit_result_free", [c_void_p], None, 100),
    ("gpufit_result_summary", [c_void_p, POINTER(Summary)], c_int32, 100),
    ("gpufit_evaluate_summary", [c_void_p, c_void_p, POINTER(Summary), _ERR], c_int32, 100),
    ("gpufit_result_role", [c_void_p, c_uint32, POINTER(RoleInfo)], c_int32, 100),
    ("gpufit_result_bytes", [c_void_p, c_uint32, c_int32, POINTER(c_uint64)], c_int32, 100),
    ("gpufit_result_bytes_band", [c_void_p, c_uint32, c_int32, POINTER(c_uint64),
                                  POINTER(c_uint64)], c_int32, 100),
    ("gpufit_result_note", [c_void_p, c_uint32, POINTER(c_char_p)], c_int32, 100),
    ("gpufit_calibrate", [c_char_p, c_size_t, POINTER(c_char), c_size_t, POINTER(c_size_t),
                          _ERR], c_int32, 100),
    ("gpufit_job_apply_profile", [c_void_p, c_char_p, c_size_t, _ERR], c_int32, 100),
    ("gpufit_result_to_json", [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t), _ERR],
     c_int32, 100),
    # mitigations and searches
    ("gpufit_result_mitigation", [c_void_p, c_uint32, POINTER(MitigationInfo)], c_int32, 100),
    ("gpufit_job_apply_mitigation", [c_void_p, c_void_p, c_uint32, _ERR], c_int32, 100),
    ("gpufit_max_fitting", [c_void_p, c_void_p, c_int32, POINTER(c_int64), _ERR], c_int32,
     100),
    # GPU recommendation and layout planning (lists)
    ("gpufit_recommend", [_HANDLE_OUT, c_void_p, c_void_p, POINTER(c_int32), c_uint32,
                          c_uint32, _ERR], c_int32, 100),
    ("gpufit_plan", [_HANDLE_OUT, c_void_p, c_void_p, c_uint32, c_uint32, c_uint32, _ERR],
     c_int32, 100),
    ("gpufit_list_count", [c_void_p], c_uint32, 100),
    ("gpufit_list_evaluated", [c_void_p], c_uint64, 100),
    ("gpufit_list_recommendation", [c_void_p, c_uint32, POINTER(Recommendation)], c_int32,
     100),
    ("gpufit_list_layout", [c_void_p, c_uint32, POINTER(Layout)], c_int32, 100),
    ("gpufit_job_apply_list_entry", [c_void_p, c_void_p, c_uint32, _ERR], c_int32, 100),
    ("gpufit_result_resolved", [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)],
     c_int32, 100),
    ("gpufit_result_flags", [c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t)],
     c_int32, 100),
    ("gpufit_list_free", [c_void_p], None, 100),
    # grids
    ("gpufit_sweep", [c_void_p, c_void_p, POINTER(c_int32), POINTER(c_uint32), POINTER(c_double),
                      c_uint32, POINTER(Summary), POINTER(c_int32), c_uint64, _ERR], c_int32,
     100),
)


def _version_text(v: int) -> str:
    return "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100)


def _file_name() -> str:
    if sys.platform == "darwin":
        return "libgpufit.%d.dylib" % SOVERSION
    if sys.platform.startswith("win") or sys.platform == "cygwin":
        return "gpufit.dll"
    return "libgpufit.so.%d" % SOVERSION


def candidates() -> List[Tuple[str, str]]:
    """The places the library is looked for, in order, as ``(path_or_name, origin)`` pairs
    (the bundled copy only when the package has one)."""
    here = os.path.dirname(os.path.realpath(__file__))
    name = _file_name()
    out: List[Tuple[str, str]] = []
    bundled = os.path.join(here, "_libs", name)
    if os.path.exists(bundled):
        out.append((bundled, "bundled copy"))
    explicit = os.environ.get("GPUFIT_LIBRARY")
    if explicit:
        return out + [(explicit, "$GPUFIT_LIBRARY")]
    tree = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(here))), "build", name)
    if os.path.exists(tree):
        out.append((tree, "in-tree build (make)"))
    out.append((name, "system dynamic loader"))
    return out


def elf_soname(path: str) -> Optional[str]:
    """The DT_SONAME of an ELF shared object, or None (not ELF, unreadable, or no SONAME)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    try:
        if is64:
            shoff, = struct.unpack_from(end + "Q", data, 0x28)
            shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
            sh_fmt, dyn_fmt = end + "IIQQQQIIQQ", end + "qQ"
        else:
            shoff, = struct.unpack_from(end + "I", data, 0x20)
            shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
            sh_fmt, dyn_fmt = end + "IIIIIIIIII", end + "iI"
        sections = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize)
                    for i in range(shnum)]
        for sh in sections:
            if sh[1] != 6:  # SHT_DYNAMIC
                continue
            dyn_off, dyn_size, link = sh[4], sh[5], sh[6]
            str_off = sections[link][4]
            step = struct.calcsize(dyn_fmt)
            for pos in range(dyn_off, dyn_off + dyn_size, step):
                tag, val = struct.unpack_from(dyn_fmt, data, pos)
                if tag == 0:  # DT_NULL
                    break
                if tag == 14:  # DT_SONAME
                    stop = data.index(b"\0", str_off + val)
                    return data[str_off + val:stop].decode("ascii", "replace")
    except (struct.error, IndexError, ValueError):
        return None
    return None


def _abi_major_problem(path_or_name: str, handle_version: int) -> Optional[str]:
    """Why the candidate's ABI major is wrong, or None when it is right."""
    want = "libgpufit.so.%d" % SOVERSION
    soname = elf_soname(path_or_name) if os.path.sep in path_or_name else None
    if soname is None and os.path.sep not in path_or_name and path_or_name.startswith(
            "libgpufit.so."):
        soname = path_or_name
    if soname is not None:
        if soname != want:
            return "SONAME is %s, this binding needs %s" % (soname, want)
        return None
    # No ELF SONAME to read (another platform): 0.x releases all keep ABI 0, and from 1.0 on
    # the ABI major follows the major version.
    major = handle_version // 10000
    abi = 0 if major == 0 else major
    if abi != SOVERSION:
        return "library %s has ABI major %d, this binding needs %d" % (
            _version_text(handle_version), abi, SOVERSION)
    return None


def _make_stub(name: str, since: int, loaded: int, where: str) -> Callable[..., Any]:
    """A stand-in for a function the loaded library does not export: calling it raises
    Unsupported, naming the version that added the function (py-sdl2 style)."""
    if since > loaded:
        why = "%s needs libgpufit >= %s, loaded %s from %s" % (
            name, _version_text(since), _version_text(loaded), where)
    else:
        why = ("%s is missing from %s (version %s; it should be there since %s): the library "
               "was built from an older source tree" % (name, where, _version_text(loaded),
                                                        _version_text(since)))

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise _errors.Unsupported(message=why)
    stub.__name__ = name
    setattr(stub, "missing", True)
    return stub


class _Library:
    """The loaded library: one attribute per function of gpufit.h, declared from FUNCTIONS."""

    def __init__(self, cdll: ctypes.CDLL, where: str, version: int) -> None:
        self._cdll = cdll
        self.path = where
        self.version_number = version
        for name, argtypes, restype, since in FUNCTIONS:
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                setattr(self, name, _make_stub(name, since, version, where))
                continue
            fn.argtypes = argtypes
            fn.restype = restype
            setattr(self, name, fn)

    def __getattr__(self, name: str) -> Any:  # the functions set above (for type checkers)
        raise AttributeError(name)


def _load() -> _Library:
    tried = []
    for cand, origin in candidates():
        if os.path.sep in cand and not os.path.exists(cand):
            tried.append("%s (%s): no such file" % (cand, origin))
            continue
        try:
            cdll = ctypes.CDLL(cand)
        except OSError as e:
            tried.append("%s (%s): %s" % (cand, origin, e))
            continue
        try:
            fn = cdll.gpufit_version_number
        except AttributeError:
            tried.append("%s (%s): not libgpufit (no gpufit_version_number)" % (cand, origin))
            continue
        fn.argtypes = []
        fn.restype = c_uint32
        version = int(fn())
        where = cand if os.path.sep in cand else _loaded_path(cdll, cand)
        problem = _abi_major_problem(where, version)
        if problem is None and version < MIN_VERSION:
            problem = "version %s is older than the %s this binding needs" % (
                _version_text(version), _version_text(MIN_VERSION))
        if problem is not None:
            tried.append("%s (%s): %s" % (cand, origin, problem))
            continue
        return _Library(cdll, where, version)
    raise ImportError(
        "gpufit: cannot load the gpufit C library (%s, version >= %s). Tried:\n  - %s\n"
        "Build it with `make` in the repository, install it (`make install`), install a "
        "wheel that bundles it, or set GPUFIT_LIBRARY to the path of libgpufit.so.%d."
        % (_file_name(), _version_text(MIN_VERSION), "\n  - ".join(tried), SOVERSION))


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p), ("dli_sname", c_char_p),
                ("dli_saddr", c_void_p)]


def _loaded_path(cdll: ctypes.CDLL, fallback: str) -> str:
    """The file the dynamic loader mapped for ``cdll`` (dladdr), or ``fallback``."""
    try:
        try:
            dladdr = ctypes.CDLL(None).dladdr
        except AttributeError:  # glibc before 2.34 keeps dladdr in libdl (by SONAME, no search)
            dladdr = ctypes.CDLL("libdl.so.2").dladdr
        dladdr.argtypes = [c_void_p, POINTER(_DlInfo)]
        dladdr.restype = ctypes.c_int
        info = _DlInfo()
        addr = ctypes.cast(cdll.gpufit_version_number, c_void_p)
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    except Exception:  # not glibc/macOS: keep the name the loader was given
        pass
    return fallback


lib = _load()
path = lib.path
version_number = lib.version_number
version_string: str = lib.gpufit_version_string().decode("ascii")


def status_text(status: int) -> str:
    """The library's English text for a status code."""
    return str(lib.gpufit_status_str(status).decode("utf-8", "replace"))


def param_name(param_id: int) -> Optional[str]:
    """The table name of a parameter id, or None."""
    if not param_id:
        return None
    info = ParamInfo()
    if lib.gpufit_param_get_info(param_id, ctypes.byref(info)) != 0 or not info.name:
        return None
    return str(info.name.decode("utf-8", "replace"))


def raise_for(status: int, err: Optional[Error] = None, source: Any = None,
              key_at: Optional[Callable[[int], Optional[str]]] = None,
              key: Optional[str] = None) -> NoReturn:
    """Raises the exception for a negative ``status`` and its ``gpufit_error`` detail.

    ``source`` is the text that was parsed, if any; ``key_at(offset)`` returns the key the
    caller wrote at a byte offset of it (None when it cannot tell); ``key`` is the key to
    report when there is no offset to look up (the parameter's name is the last resort).
    """
    message, pid, offset = "", 0, None
    if err is not None:
        message = err.message.decode("utf-8", "replace")
        pid = int(err.param)
        if err.offset != UINT64_MAX:
            offset = int(err.offset)
    if not message:
        message = status_text(status)
    pname = param_name(pid)
    if key_at is not None and offset is not None:
        key = key_at(offset) or key
    cls = _errors.error_class(status)
    raise cls(status, message, pname, offset, key, source, pid)


def call(fn: Callable[..., int], *args: Any, source: Any = None,
         key_at: Optional[Callable[[int], Optional[str]]] = None,
         key: Optional[str] = None) -> int:
    """Calls a fallible function whose last argument is a ``gpufit_error *``; raises on
    failure and returns the status otherwise."""
    err = Error()
    status = fn(*args, ctypes.byref(err))
    if status < 0:
        raise_for(status, err, source, key_at, key)
    return status
