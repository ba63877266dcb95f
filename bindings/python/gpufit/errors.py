# SPDX-License-Identifier: MIT
"""Exceptions raised by the gpufit binding, one class per ``gpufit_status`` code.

Every failure of the C library arrives as a negative status and a filled ``gpufit_error``;
the binding raises the class mapped from the status, carrying the library's one-line
message, the offending parameter and, for parsed text, the byte offset::

    try:
        gpufit.estimate(model="llama-3-8b", tp="banana")
    except gpufit.InvalidArgument as e:
        e.key      # 'tp': the key as you wrote it
        e.param    # 'tp': the library's parameter name (None when not a parameter)
        e.offset   # byte offset into e.source, or None
        e.status   # -1 (GPUFIT_E_INVALID_ARG)

The classes also derive from the matching built-in exceptions, so code that does not know
gpufit can still catch them: every kind of bad input is a :class:`ValueError` (bad values,
inconsistent values, unknown keys, malformed text, unknown names), :class:`Overflow` is an
:class:`OverflowError` and :class:`Unsupported` a :class:`NotImplementedError`.
"""

__all__ = [
    "GpufitError",
    "InvalidArgument",
    "Inconsistent",
    "Overflow",
    "UnknownParameter",
    "Unsupported",
    "ParseError",
    "NotFound",
    "BufferTooSmall",
    "StructSizeError",
    "OutOfMemory",
    "InternalError",
    "STATUS",
    "error_class",
]

#: Status codes of ``gpufit.h`` (``gpufit_status``) by name. The values never change.
from typing import Any, Dict, Optional, Tuple, Type, Union

STATUS = {
    "OK": 0,
    "E_INVALID_ARG": -1,
    "E_INCONSISTENT": -2,
    "E_OVERFLOW": -3,
    "E_UNKNOWN_PARAM": -4,
    "E_UNSUPPORTED": -5,
    "E_PARSE": -6,
    "E_NOT_FOUND": -7,
    "E_BUFFER_TOO_SMALL": -8,
    "E_STRUCT_SIZE": -9,
    "E_NOMEM": -10,
    "E_INTERNAL": -99,
}


class GpufitError(Exception):
    """A failed gpufit call.

    Attributes:
        status: the ``gpufit_status`` code (a negative int).
        message: the library's one-line English message; it names the key.
        param: name of the offending library parameter (``"tp"``), or None.
        param_id: its ``gpufit_param`` id, or 0.
        key: the offending key as the caller wrote it (``"tp"``, ``"model.n_layers"``,
            ``"gpu.foo"``), or None when it cannot be told.
        offset: byte offset into :attr:`source` where the problem is, or None.
        source: the text that was parsed (a spec string, a scenario file's contents, or the
            JSON scenario that :func:`gpufit.estimate` built from its keyword arguments), or
            None.
    """

    default_status: Optional[int] = None

    def __init__(self, status: Optional[int] = None, message: str = "",
                 param: Optional[str] = None, offset: Optional[int] = None,
                 key: Optional[str] = None, source: Union[str, bytes, None] = None,
                 param_id: int = 0) -> None:
        if status is None:
            status = self.default_status if self.default_status is not None else -99
        self.status = status
        self.message = message
        self.param = param
        self.param_id = param_id
        self.key = key if key is not None else param
        self.offset = offset
        self.source = source
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_rebuild, (type(self), self.status, self.message, self.param, self.offset,
                           self.key, self.source, self.param_id))

    def caret(self) -> str:
        """The source line with a ``^`` under the offset (as the ``gpufit`` command prints
        it), or an empty string when there is no single-line source and offset."""
        if self.source is None or self.offset is None:
            return ""
        text = self.source if isinstance(self.source, str) else self.source.decode(
            "utf-8", "replace")
        if "\n" in text or len(text) >= 200 or self.offset > len(text):
            return ""
        return "  %s\n  %s^" % (text, " " * self.offset)


def _rebuild(cls: Type["GpufitError"], status: int, message: str, param: Optional[str],
             offset: Optional[int], key: Optional[str], source: Union[str, bytes, None],
             param_id: int) -> "GpufitError":
    return cls(status, message, param, offset, key, source, param_id)


class InvalidArgument(GpufitError, ValueError):
    """NaN, negative, zero or out-of-range value, or a value of the wrong type."""

    default_status = -1


class Inconsistent(GpufitError, ValueError):
    """Values that do not fit together (``tp`` does not divide ``n_heads``)."""

    default_status = -2


class Overflow(GpufitError, OverflowError):
    """A byte count would exceed 64 bits."""

    default_status = -3


class UnknownParameter(GpufitError, ValueError, KeyError):
    """A key that is not a parameter of this library (see :func:`gpufit.params`)."""

    default_status = -4


class Unsupported(GpufitError, NotImplementedError):
    """Known, but this combination is not modelled, or a feature the loaded library lacks."""

    default_status = -5


class ParseError(GpufitError, ValueError):
    """Malformed spec string or JSON."""

    default_status = -6


class NotFound(GpufitError, LookupError, ValueError):
    """Unknown preset, GPU or value name."""

    default_status = -7


class BufferTooSmall(GpufitError):
    """An output buffer was too small (the binding retries; seen only on a library bug)."""

    default_status = -8


class StructSizeError(GpufitError):
    """The library refused a struct size (a binding older than the library's first release)."""

    default_status = -9


class OutOfMemory(GpufitError, MemoryError):
    """The library could not allocate."""

    default_status = -10


class InternalError(GpufitError, RuntimeError):
    """A bug in gpufit."""

    default_status = -99


_BY_STATUS: Dict[Optional[int], Type[GpufitError]] = {
    cls.default_status: cls
    for cls in (InvalidArgument, Inconsistent, Overflow, UnknownParameter, Unsupported,
                ParseError, NotFound, BufferTooSmall, StructSizeError, OutOfMemory,
                InternalError)
}


def error_class(status: int) -> Type[GpufitError]:
    """The exception class for a ``gpufit_status`` code (:class:`GpufitError` if unknown)."""
    return _BY_STATUS.get(status, GpufitError)
