# SPDX-License-Identifier: MIT
"""The result of an estimate: :class:`Report` and its device roles, :class:`Role`.

A Report from :func:`gpufit.evaluate` keeps the library's immutable ``gpufit_result`` alive
and reads it lazily: a value is fetched from C the first time it is asked for (the totals
through ``gpufit_result_summary``, a role through ``gpufit_result_role``, one component
through ``gpufit_result_bytes``, the notes, and the JSON report through
``gpufit_result_to_json`` only for :meth:`Report.to_dict` / :meth:`Report.to_json`), so
``evaluate(m, j).roles[0].components["kv_cache"]`` costs three calls into C. The C result is
freed when the report, its roles and their components are all collected. Pickling reads
everything first, so an unpickled report holds plain values. ``str(report)`` is the text the ``gpufit estimate`` command prints; in a notebook
the report shows as a table and a stacked-bar chart (``_repr_html_``).
"""

from typing import (TYPE_CHECKING, Any, Dict, ItemsView, Iterator, KeysView, List, Mapping,
                    Optional, Sequence, Tuple, ValuesView)

if TYPE_CHECKING:
    from .advice import Mitigation

__all__ = ["Report", "Role", "Components", "GIB"]

#: Bytes in a GiB (2^30); every size printed is in GiB.
GIB = 1 << 30


def _spec_value(v: Any) -> Any:
    """A change's value in spec form: true/false, a list as "a,b", anything else as is."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v) if v else "none"
    return v


def _gib(b: int) -> float:
    return b / GIB


class Components(Mapping[str, int]):
    """A role's components, ``{name: bytes}`` in report order, read from the C result one
    component at a time (``gpufit_result_bytes``) when asked for. A read-only mapping that
    compares equal to the dict of the same items; ``dict(c)`` copies it."""

    __slots__ = ("_reader", "_index", "_kind", "_got")

    def __init__(self, reader: Any, index: int, kind: int) -> None:
        self._reader, self._index, self._kind = reader, index, kind
        self._got: Optional[Dict[str, int]] = None  # every component, once all were read

    def __getitem__(self, name: str) -> int:
        got = self._got
        if got is not None:
            return got[name]
        v: int = self._reader.component(self._index, name, self._kind)  # an int already
        return v

    def _all(self) -> Dict[str, int]:
        got = self._got
        if got is None:
            got = self._got = dict(self._reader.components(self._index, self._kind))
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._reader.component_names)

    def __len__(self) -> int:
        return len(self._reader.component_names)

    def __contains__(self, name: object) -> bool:
        return name in self._reader.component_ids

    def keys(self) -> KeysView[str]:
        return self._all().keys()

    def items(self) -> ItemsView[str, int]:
        return self._all().items()

    def values(self) -> ValuesView[int]:
        return self._all().values()

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self._reader.component_ids else default

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._all() == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> Tuple[Any, ...]:  # pickles and copies as the plain dict
        return (dict, (self._all(),))


class Role:
    """One device role of a report: devices that hold the same share of the job.

    Attributes:
        name: ``"all"`` when every device holds the same; ``"pp_first"``, ``"pp_middle"``,
            ``"pp_last"`` with pipeline parallelism; further roles get equally plain names.
        devices: how many devices share this role.
        layers: transformer layers held by one device of this role.
        components: ``{name: bytes}`` in report order (see :func:`gpufit.components`); they
            add up exactly to ``device_used_bytes``.
        peak_allocated_bytes: live tensors at the peak (``torch.cuda.max_memory_allocated``).
        peak_reserved_bytes: plus allocator caching (``max_memory_reserved``).
        device_used_bytes: plus CUDA context, workspaces and NCCL buffers (``nvidia-smi``).
        headroom_bytes: capacity minus ``device_used_bytes`` (negative when it does not fit).
        fits: True or False, or None when no GPU was given.
        kv_capacity_bytes, kv_capacity_tokens: inference: the KV cache that fits in what the
            budget leaves after everything else.
        gpu: the name of this role's GPU ("" when none was given); with ``device_gpus`` each
            stage has its own.
        capacity_bytes: that GPU's memory (0 when unknown; the host role: host_memory_bytes).
        verdict: ``"fits"``, ``"marginal"``, ``"oom"`` or None (docs/band.md).
        components_low, components_high: each component's band ``{name: bytes}``; equal to
            ``components`` for exact terms.
        peak_allocated_low_bytes ... kv_capacity_high_bytes: the band of each total (the
            stack constants at the low and the high end of their documented ranges).
    """

    _BAND = ("peak_allocated_low_bytes", "peak_allocated_high_bytes", "peak_reserved_low_bytes",
             "peak_reserved_high_bytes", "device_used_low_bytes", "device_used_high_bytes",
             "kv_capacity_low_bytes", "kv_capacity_high_bytes")
    _FIELDS = ("name", "devices", "layers", "components", "peak_allocated_bytes",
               "peak_reserved_bytes", "device_used_bytes", "headroom_bytes", "fits",
               "kv_capacity_bytes", "kv_capacity_tokens", "gpu", "capacity_bytes",
               "verdict", "components_low", "components_high") + _BAND
    _COMPONENT_KINDS = {"components": 0, "components_low": 1, "components_high": 2}
    # _src: (reader, index) of a role read lazily from a C result (gpufit._api)
    __slots__ = _FIELDS + ("_src", "__weakref__")
    _src: Tuple[Any, int]

    @classmethod
    def _lazy(cls, reader: Any, index: int) -> "Role":
        """A role whose fields are read from the C result when first asked for."""
        r = cls.__new__(cls)
        r._src = (reader, index)
        # the mapping most reads go to, made now: an unset slot's miss raises (and formats) an
        # AttributeError before __getattr__ runs, which costs more than this small object
        setattr(r, "components", Components(reader, index, 0))  # as __getattr__ sets it
        return r

    def __getattr__(self, name: str) -> Any:
        try:
            reader, index = object.__getattribute__(self, "_src")
        except AttributeError:
            raise AttributeError(name) from None
        if name not in Role._FIELDS:
            raise AttributeError(name)
        kind = Role._COMPONENT_KINDS.get(name)
        if kind is not None:  # no other field needed: a mapping over the C result
            c = Components(reader, index, kind)
            setattr(self, name, c)
            return c
        reader.fill_role(self, index, name)
        return object.__getattribute__(self, name)

    def __init__(self, name: str, devices: int, layers: int, components: Mapping[str, int],
                 peak_allocated_bytes: int, peak_reserved_bytes: int, device_used_bytes: int,
                 headroom_bytes: int, fits: Optional[bool], kv_capacity_bytes: int,
                 kv_capacity_tokens: int, gpu: str = "", capacity_bytes: int = 0,
                 verdict: Optional[str] = None,
                 components_low: Optional[Mapping[str, int]] = None,
                 components_high: Optional[Mapping[str, int]] = None, **band: int) -> None:
        unknown = set(band) - set(self._BAND)
        if unknown:
            raise TypeError("Role() got unexpected keyword arguments %s" % sorted(unknown))
        self.verdict = verdict
        self.components_low = dict(components_low if components_low is not None
                                   else components)
        self.components_high = dict(components_high if components_high is not None
                                    else components)
        point = {"peak_allocated": peak_allocated_bytes, "peak_reserved": peak_reserved_bytes,
                 "device_used": device_used_bytes, "kv_capacity": kv_capacity_bytes}
        for k in self._BAND:
            setattr(self, k, band.get(k, point[k.rsplit("_", 2)[0]]))
        self.name = name
        self.devices = devices
        self.layers = layers
        self.components = dict(components)
        self.peak_allocated_bytes = peak_allocated_bytes
        self.peak_reserved_bytes = peak_reserved_bytes
        self.device_used_bytes = device_used_bytes
        self.headroom_bytes = headroom_bytes
        self.fits = fits
        self.kv_capacity_bytes = kv_capacity_bytes
        self.kv_capacity_tokens = kv_capacity_tokens
        self.gpu = gpu
        self.capacity_bytes = capacity_bytes

    def to_dict(self) -> Dict[str, Any]:
        """The role as a dict with the keys of the JSON report."""
        return {
            "name": self.name, "devices": self.devices, "layers": self.layers,
            "gpu": self.gpu, "capacity_bytes": self.capacity_bytes,
            "components": dict(self.components),
            "peak_allocated_bytes": self.peak_allocated_bytes,
            "peak_reserved_bytes": self.peak_reserved_bytes,
            "device_used_bytes": self.device_used_bytes,
            "headroom_bytes": self.headroom_bytes, "fits": self.fits,
            "kv_capacity_bytes": self.kv_capacity_bytes,
            "kv_capacity_tokens": self.kv_capacity_tokens,
            "verdict": self.verdict,
            "components_low": dict(self.components_low),
            "components_high": dict(self.components_high),
            **{k: getattr(self, k) for k in self._BAND},
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Role) and self.to_dict() == other.to_dict()

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        for k in self._FIELDS:
            setattr(self, k, state[k])

    def __repr__(self) -> str:
        return "<gpufit.Role %s: %d device%s, %d layers, %.2f GiB used>" % (
            self.name, self.devices, "" if self.devices == 1 else "s", self.layers,
            _gib(self.device_used_bytes))


class Report:
    """What :func:`gpufit.estimate` and :func:`gpufit.evaluate` return.

    Attributes:
        fits: True, False, or None when no GPU was given (no verdict).
        peak_bytes: ``device_used_bytes`` of the fullest role (the verdict uses it).
        capacity_bytes: device capacity the verdict used (0 without a GPU).
        headroom_bytes: ``capacity_bytes - peak_bytes`` (negative when it does not fit).
        n_params, n_active_params: parameters counted once, and those used per token.
        host_bytes: host (CPU) memory the job places there (offload).
        roles: list of :class:`Role`.
        worst_role: the :class:`Role` with the largest ``device_used_bytes``.
        notes: the library's notes and warnings (strings).
        mitigations: suggested changes from the JSON report (an empty list until the library
            suggests any).
        model_name, task, gpu_name: what was estimated (``gpu_name`` None without a GPU).
        verdict: the three-way verdict, ``"fits"``, ``"marginal"`` or ``"oom"`` (None without
            a GPU): docs/band.md. ``fits`` keeps its meaning (the point estimate fits).
        peak_low_bytes, peak_high_bytes: the band of ``peak_bytes``.

    ``bool(report)`` is the verdict: true only when the job surely fits (``verdict ==
    "fits"``). A report from :func:`gpufit.evaluate` reads the C result lazily (see the
    module's documentation).
    """

    def __init__(self, fits: Optional[bool], peak_bytes: int, capacity_bytes: int,
                 headroom_bytes: int, n_params: int, n_active_params: int, host_bytes: int,
                 worst_role: int, roles: List[Role], notes: List[str], json_text: str,
                 model_name: Optional[str] = None, task: Optional[str] = None,
                 library_version: Optional[str] = None,
                 mitigation_specs: Sequence[str] = (), verdict: Optional[str] = None,
                 peak_low_bytes: Optional[int] = None,
                 peak_high_bytes: Optional[int] = None) -> None:
        self.verdict = verdict
        self.peak_low_bytes = peak_bytes if peak_low_bytes is None else peak_low_bytes
        self.peak_high_bytes = peak_bytes if peak_high_bytes is None else peak_high_bytes
        self.fits = fits
        self.peak_bytes = peak_bytes
        self.capacity_bytes = capacity_bytes
        self.headroom_bytes = headroom_bytes
        self.n_params = n_params
        self.n_active_params = n_active_params
        self.host_bytes = host_bytes
        self.roles = list(roles)
        self._worst = worst_role
        self.notes = list(notes)
        self._json = json_text
        self.model_name = model_name
        self.task = task
        self.library_version = library_version
        self._mitigation_specs = list(mitigation_specs)
        self._inputs = None  # (Model, Job) copies when the report came from evaluate()

    #: what a report read from C fills when first asked for (gpufit._api reads them)
    _LAZY = ("fits", "peak_bytes", "capacity_bytes", "headroom_bytes", "n_params",
             "n_active_params", "host_bytes", "_worst", "verdict", "peak_low_bytes",
             "peak_high_bytes", "roles", "notes", "_json", "model_name", "task",
             "library_version", "_mitigation_specs")

    @classmethod
    def _lazy(cls, reader: Any, inputs: Tuple[Any, Any]) -> "Report":
        """A report over a C result: ``reader`` fetches each value when first asked for."""
        r = cls.__new__(cls)
        r.__dict__["_src"] = reader
        r.__dict__["_inputs"] = inputs
        return r

    def __getattr__(self, name: str) -> Any:
        reader = self.__dict__.get("_src")
        if reader is None or name not in Report._LAZY:
            raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))
        reader.fill_report(self, name)
        return self.__dict__[name]

    # -- data ---------------------------------------------------------------------------------
    @property
    def worst_role(self) -> Optional[Role]:
        """The role with the largest ``device_used_bytes`` (None if there are no roles)."""
        if not self.roles:
            return None
        if 0 <= self._worst < len(self.roles):
            return self.roles[self._worst]
        return max(self.roles, key=lambda r: r.device_used_bytes)

    @property
    def gpu_name(self) -> Optional[str]:
        """The GPU's catalogue or display name, or None."""
        return self.to_dict().get("gpu") or None

    @property
    def mitigations(self) -> List["Mitigation"]:
        """Changes that would make the job fit (or fit with more headroom), best first, as
        :class:`gpufit.Mitigation` dataclasses (``to_dict()``: the JSON report's entry):
        ``text``, ``changes`` (scenario keys, ready for :meth:`with_changes`), ``spec`` (the
        same changes as a spec string), ``flags``, ``peak_bytes_after``, ``fits_after`` and
        ``cost``; ``m["changes"]`` reads a field too. Empty when the library suggests none."""
        from .advice import Mitigation
        out = []
        for i, m in enumerate(self.to_dict().get("mitigations") or []):
            if isinstance(m, dict):
                m = dict(m)
                if "spec" not in m:
                    if i < len(self._mitigation_specs):
                        m["spec"] = self._mitigation_specs[i]
                    else:
                        m["spec"] = " ".join("%s=%s" % (k, _spec_value(v)) for k, v in (
                            m.get("changes") or {}).items())
                m = Mitigation.from_json(m)
            out.append(m)
        return out

    @property
    def resolved(self) -> Dict[str, Any]:
        """What every ``auto`` of the job resolved to, as the JSON report's ``resolved``: a
        dict of ``framework``, ``precision``, the dtypes, ``attention``, ``dp``/``tp``/``pp``/
        ``cp`` and ``layout`` (``given``, or ``gpus_dp``/``gpus_tp``/``gpus_layers`` when
        ``gpus`` alone chose it), and the framework defaults used (docs/report.md)."""
        return dict(self.to_dict().get("resolved") or {})

    @property
    def flags(self) -> str:
        """The job's own flags in its framework's words (the JSON report's ``flags``: vLLM /
        SGLang arguments, llama.cpp options, Trainer / PEFT arguments, DeepSpeed config keys,
        Megatron-LM arguments; docs/flags.md), or ""."""
        return str(self.to_dict().get("flags") or "")

    def to_dict(self) -> Dict[str, Any]:
        """The library's JSON report (``gpufit_result_to_json``) parsed into a new dict;
        identical to ``gpufit estimate --json``."""
        import json  # noqa: PLC0415 (imported when first used: import time)
        d: Dict[str, Any] = json.loads(self._json)
        return d

    def to_json(self, indent: Optional[int] = None) -> str:
        """The library's JSON report text, unchanged; re-indented when ``indent`` is given."""
        if indent is None:
            return self._json
        import json  # noqa: PLC0415
        return json.dumps(self.to_dict(), indent=indent)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self._json == other._json

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        """The verdict: true only when the job surely fits (``verdict == "fits"``: the high
        end of every role's band fits), as :class:`gpufit.Verdict`; false when it does not
        fit, is marginal, or no GPU was given."""
        return self.verdict == "fits"

    def __getstate__(self) -> Dict[str, Any]:
        for name in self._LAZY:  # everything read from C now: the state is plain values
            getattr(self, name)
        state = dict(self.__dict__)
        state.pop("_src", None)
        state["roles"] = [Role(**ro.to_dict()) for ro in self.roles]
        state["_inputs"] = None  # C handles do not pickle
        return state

    # -- what if ------------------------------------------------------------------------------
    def with_changes(self, changes: Optional[Mapping[str, Any]] = None,
                     **kwargs: Any) -> "Report":
        """Re-evaluates this report's model and job with scenario keys changed, e.g.
        ``r.with_changes(micro_batch=1, checkpointing="full")`` or
        ``r.with_changes(r.mitigations[0]["changes"])``; returns a new Report."""
        from ._api import reevaluate
        merged = dict(changes or {})
        merged.update(kwargs)
        return reevaluate(self, merged)

    def with_mitigation(self, index: int = 0) -> "Report":
        """The report after applying suggested mitigation ``index`` (0: the best one)."""
        mit = self.mitigations
        if not 0 <= index < len(mit):
            raise IndexError("mitigation %d of %d" % (index, len(mit)))
        return self.with_changes(mit[index].get("changes") or {})

    # -- display ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        verdict = {True: "FITS", False: "DOES NOT FIT", None: "no GPU"}[self.fits]
        cap = " of %.2f GiB" % _gib(self.capacity_bytes) if self.capacity_bytes else ""
        return "<gpufit.Report %s, %s: %s, peak %.2f GiB%s, %d role%s>" % (
            self.model_name, self.task, verdict, _gib(self.peak_bytes), cap, len(self.roles),
            "" if len(self.roles) == 1 else "s")

    def __str__(self) -> str:
        return self.text()

    def text(self, bars: bool = True) -> str:
        """The report as the ``gpufit estimate`` command prints it."""
        from ._render import render_text
        return render_text(self, bars=bars)

    def html(self) -> str:
        """A self-contained HTML fragment: verdict, stacked-bar chart (SVG) and table."""
        from ._render import render_html
        return render_html(self)

    def svg(self) -> str:
        """The stacked-bar chart alone, as an SVG document."""
        from ._render import render_svg
        return render_svg(self)

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython terminal
        p.text(repr(self) if cycle else self.text())
