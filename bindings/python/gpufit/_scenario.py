# SPDX-License-Identifier: MIT
"""Scenario text for the library (internal): Python values to JSON scenario text, and the key
a caller wrote at a byte offset of a spec string or a JSON document (for error messages).

Python values map onto the scenario vocabulary of ``docs/scenario.md`` and ``docs/params.md``:

* ``None`` means "not given" and is left out;
* ``bool`` is ``true``/``false`` (``1``/``0`` for parameters whose type is int or float);
* integers and finite floats are JSON numbers (anything registered with :mod:`numbers`,
  so NumPy scalars work too); strings are enum names, preset and GPU names, or numbers as
  text;
* ``model``: a preset name, or a dict of architecture keys, optionally with ``"preset"``
  (files, ``{"path"}`` and ``{"hf_config"}`` are read by the binding before this module
  sees the scenario);
* ``gpu``: a catalogue name or alias, a number of GiB, or a dict ``{"memory_gib": N}`` /
  ``{"memory_bytes": N}`` with an optional ``"name"``.

The library itself checks names, types and ranges, so this module knows no parameter; it
only asks the parameter table for a type where a Python ``bool`` must become a number.
"""

import math
import numbers
import os
import re
from typing import Any, Callable, Iterable, List, Optional, Tuple, Union

from . import errors as _errors

#: ``type_of(name)``: the parameter table's type name of ``name``, or None
TypeOf = Callable[[str], Optional[str]]

def _invalid(key: str, message: str) -> _errors.InvalidArgument:
    return _errors.InvalidArgument(message=message, key=key)


def scalar_json(key: str, value: Any, param_type: Optional[str] = None) -> str:
    """JSON text of a scalar ``value`` for ``key``; ``param_type`` is the table's type name
    ("int", "float", "enum", "bool") when known. Raises InvalidArgument naming the key."""
    import json  # noqa: PLC0415 (imported when first used: import time)
    if isinstance(value, bool):
        if param_type in ("int", "float"):
            return "1" if value else "0"
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise _invalid(key, "%s: %r is not a finite number" % (key, value))
        return repr(f)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value))
    raise _invalid(key, "%s: a %s is not a scenario value (give a number, a string or a "
                   "boolean)" % (key, type(value).__name__))


def list_json(key: str, value: Iterable[Any]) -> str:
    """JSON array text of a list parameter's ``value`` (a list or tuple of numbers, or of GPU
    names for ``device_gpus``); ``[]`` clears the list."""
    parts = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, str)):
            raise _invalid(key, "%s: a list entry must be a number or a name, not %r" % (key, v))
        parts.append(scalar_json(key, v))
    return "[" + ", ".join(parts) + "]"


def model_json(value: Any, type_of: TypeOf) -> str:
    """JSON text of a ``model`` value (preset name or dict of architecture keys)."""
    import json  # noqa: PLC0415 (imported when first used: import time)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise _invalid("model", "model: keys must be strings, not %r" % (k,))
            if v is None:
                continue
            mk = "model." + k
            if k in ("preset", "name"):
                text = scalar_json(mk, v)
            else:
                text = scalar_json(mk, v, type_of(k))
            parts.append("%s: %s" % (json.dumps(k), text))
        return "{" + ", ".join(parts) + "}"
    raise _invalid("model", "model: give a preset name, a dict of architecture keys, a "
                   "gpufit.Model or a path, not a %s" % type(value).__name__)


def gpu_json(value: Any) -> str:
    """JSON text of a ``gpu`` value (name, GiB, or dict)."""
    import json  # noqa: PLC0415 (imported when first used: import time)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return "{\"memory_gib\": %s}" % scalar_json("gpu", value)
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if v is None:
                continue
            parts.append("%s: %s" % (json.dumps(str(k)), scalar_json("gpu." + str(k), v)))
        return "{" + ", ".join(parts) + "}"
    raise _invalid("gpu", "gpu: give a catalogue name, a number of GiB or a dict such as "
                   "{'memory_gib': 24}, not a %s" % type(value).__name__)


def scenario_json(items: Iterable[Tuple[str, Any]], type_of: TypeOf) -> str:
    """JSON scenario text for ``items`` (key, value pairs, in order; None values dropped; a
    list or tuple becomes a JSON array, for list parameters such as ``tensor_split``).

    ``type_of(name)`` returns the parameter table's type name of ``name`` or None.
    """
    import json  # noqa: PLC0415 (imported when first used: import time)
    parts = []
    for key, value in items:
        if value is None:
            continue
        if key == "model":
            text = model_json(value, type_of)
        elif key == "gpu":
            text = gpu_json(value)
        elif isinstance(value, (list, tuple)):
            text = list_json(key, value)
        else:
            text = scalar_json(key, value, type_of(key))
        parts.append("%s: %s" % (json.dumps(key), text))
    return "{" + ", ".join(parts) + "}"


# ---------------------------------------------------------------------------------------------
# Offsets back to keys
# ---------------------------------------------------------------------------------------------
_SPEC_SEP = " \t\r\n,"


def spec_key_at(spec: Union[str, bytes], offset: Optional[int]) -> Optional[str]:
    """The key of the ``key=value`` token of ``spec`` that covers byte ``offset``."""
    data = spec.encode("utf-8") if isinstance(spec, str) else spec
    if not data or offset is None or offset < 0 or offset > len(data):
        return None
    if offset == len(data):
        offset -= 1
    sep = _SPEC_SEP.encode("ascii")
    start = offset
    while start > 0 and data[start - 1] not in sep:
        start -= 1
    end = offset
    while end < len(data) and data[end] not in sep:
        end += 1
    token = data[start:end]
    if not token:
        return None
    return token.split(b"=", 1)[0].decode("utf-8", "replace") or None


class _Partial(Exception):
    pass


_LITERAL = re.compile(rb"[^\s,\]}:]+")
_WS = b" \t\r\n"


def _member_spans(data: bytes) -> List[List[Any]]:
    """(start, end, path) of every object member of JSON ``data`` (bytes); members that are
    still open when the text breaks off end at len(data)."""
    import json  # noqa: PLC0415 (imported when first used: import time)
    spans: List[List[Any]] = []
    n = len(data)

    def ws(i: int) -> int:
        while i < n and data[i] in _WS:
            i += 1
        return i

    def string_end(i: int) -> int:  # data[i] is the opening quote
        i += 1
        while i < n:
            c = data[i]
            if c == 0x5C:  # backslash
                i += 2
                continue
            if c == 0x22:
                return i + 1
            i += 1
        raise _Partial()

    def value(i: int, path: Tuple[Any, ...], depth: int) -> int:
        if depth > 200:
            raise _Partial()
        i = ws(i)
        if i >= n:
            raise _Partial()
        c = data[i]
        if c == 0x7B:  # {
            i = ws(i + 1)
            if i < n and data[i] == 0x7D:
                return i + 1
            while True:
                i = ws(i)
                if i >= n or data[i] != 0x22:
                    raise _Partial()
                kstart = i
                kend = string_end(i)
                try:
                    key = json.loads(data[kstart:kend].decode("utf-8", "replace"))
                except ValueError:
                    key = data[kstart + 1:kend - 1].decode("utf-8", "replace")
                inner = path + (key,)
                member: List[Any] = [kstart, n, inner]
                spans.append(member)
                i = ws(kend)
                if i >= n or data[i] != 0x3A:  # :
                    raise _Partial()
                i = value(i + 1, inner, depth + 1)
                member[1] = i
                i = ws(i)
                if i < n and data[i] == 0x2C:  # ,
                    i += 1
                    continue
                if i < n and data[i] == 0x7D:
                    return i + 1
                raise _Partial()
        if c == 0x5B:  # [
            i = ws(i + 1)
            if i < n and data[i] == 0x5D:
                return i + 1
            while True:
                i = ws(value(i, path, depth + 1))
                if i < n and data[i] == 0x2C:
                    i += 1
                    continue
                if i < n and data[i] == 0x5D:
                    return i + 1
                raise _Partial()
        if c == 0x22:
            return string_end(i)
        m = _LITERAL.match(data, i)
        if not m:
            raise _Partial()
        return m.end()

    try:
        value(0, (), 0)
    except _Partial:
        pass
    return spans


def json_key_at(text: Union[str, bytes], offset: Optional[int]) -> Optional[str]:
    """Dotted path (``"model.n_layers"``) of the innermost object member of JSON ``text``
    whose key or value covers byte ``offset``, or None."""
    if offset is None:
        return None
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    best: Optional[Tuple[Any, ...]] = None
    for start, end, path in _member_spans(data):
        if start <= offset < end or (offset == end == len(data)):
            if best is None or len(path) > len(best):
                best = path
    if best is None:
        return None
    return ".".join(str(p) for p in best)


def remove_member(data: bytes, key: str) -> bytes:
    """``data`` (JSON bytes) with the top-level member ``key`` blanked out by spaces, so that
    every other byte keeps its offset; unchanged when there is no such member."""
    buf = bytearray(data)
    spans = [(s, e) for s, e, path in _member_spans(bytes(buf)) if path == (key,)]
    for start, end in spans:
        buf[start:end] = b" " * (end - start)
        i = end
        while i < len(buf) and buf[i] in _WS:
            i += 1
        if i < len(buf) and buf[i] == 0x2C:  # the comma after it
            buf[i] = 0x20
            continue
        i = start - 1
        while i >= 0 and buf[i] in _WS:
            i -= 1
        if i >= 0 and buf[i] == 0x2C:  # or the comma before it (last member)
            buf[i] = 0x20
    return bytes(buf)
