# SPDX-License-Identifier: MIT
"""What the library advises, as dataclasses: :class:`Mitigation` (``Report.mitigations``),
:class:`Recommendation` (:func:`gpufit.recommend`) and :class:`Layout` (:func:`gpufit.plan`).

``to_dict()`` of each is the entry of the ``gpufit`` command's ``--json`` output (the report's
``mitigations``, ``recommend --json``'s ``recommendations``, ``plan --json``'s ``layouts``),
so ``python3 -m gpufit`` prints them through these methods and cannot drift from the
command. The attributes carry everything the library gives (more than the command prints:
catalogue keys, ids, NVLink needs, placements). The entries also read like the dicts earlier
versions returned: ``entry["changes"]``, ``entry.get("spec")``, ``dict(entry)``.
"""

import copy
import dataclasses
from typing import Any, Dict, Iterator, List, Optional

__all__ = ["Mitigation", "Recommendation", "Layout"]


class _Entry:
    """Read access by field name, as the dicts these entries replace."""

    def keys(self) -> List[str]:
        """The field names, in order."""
        return [f.name for f in dataclasses.fields(self)]

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key``, or ``default`` when there is no such field."""
        return getattr(self, key) if key in self.keys() else default

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def as_dict(self) -> Dict[str, Any]:
        """Every field as a dict (``changes`` copied)."""
        return {k: copy.deepcopy(getattr(self, k)) for k in self.keys()}


@dataclasses.dataclass(frozen=True)
class Mitigation(_Entry):
    """A change that would make the job fit (or fit with more headroom), best first.

    Attributes: ``text`` (what it does), ``changes`` (the canonical scenario keys, ready for
    :meth:`gpufit.Report.with_changes`; docs/advice.md), ``spec`` (the same as a spec string),
    ``flags`` (the framework's own command-line flags for it), ``peak_bytes_after``,
    ``fits_after`` (None without a GPU) and ``cost`` (speed, quality or money lost).
    """

    text: str
    changes: Dict[str, Any]
    spec: str
    flags: str
    peak_bytes_after: int
    fits_after: Optional[bool]
    cost: float

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Mitigation":
        """From an entry of the JSON report's ``mitigations``."""
        return cls(text=d.get("text", ""), changes=dict(d.get("changes") or {}),
                   spec=d.get("spec", ""), flags=d.get("flags", ""),
                   peak_bytes_after=int(d.get("peak_bytes_after", 0)),
                   fits_after=d.get("fits_after"), cost=float(d.get("cost", 0.0)))

    def to_dict(self) -> Dict[str, Any]:
        """The entry of ``gpufit estimate --json``'s ``mitigations``."""
        return {"text": self.text, "changes": copy.deepcopy(self.changes), "spec": self.spec,
                "flags": self.flags, "peak_bytes_after": self.peak_bytes_after,
                "fits_after": self.fits_after, "cost": self.cost}


@dataclasses.dataclass(frozen=True)
class Recommendation(_Entry):
    """A catalogue GPU and the smallest count of it on which the job fits.

    Attributes: ``gpu`` (catalogue key), ``gpu_name``, ``gpu_id``, ``count``, ``fits``,
    ``needs_nvlink`` (the layout needs it), ``has_nvlink``, ``peak_bytes``,
    ``headroom_bytes``, ``price_usd`` (0: unknown), ``tflops``, ``tflops_per_kusd``,
    ``reason``, ``spec`` and ``changes`` (the job changes that reproduce it; docs/advice.md).
    """

    gpu: Optional[str]
    gpu_name: str
    gpu_id: int
    count: int
    fits: bool
    needs_nvlink: bool
    has_nvlink: bool
    peak_bytes: int
    headroom_bytes: int
    price_usd: float
    tflops: float
    tflops_per_kusd: float
    reason: str
    spec: str
    changes: Dict[str, Any]

    def to_dict(self) -> Dict[str, Any]:
        """The entry of ``gpufit recommend --json``'s ``recommendations`` (cli/recommend.c:
        the display name as ``gpu``, the price in whole dollars, TFLOPS to 0.1)."""
        return {"gpu": self.gpu_name, "count": self.count, "peak_bytes": self.peak_bytes,
                "headroom_bytes": self.headroom_bytes, "price_usd": round(self.price_usd),
                "tflops": round(self.tflops, 1), "nvlink": self.has_nvlink,
                "reason": self.reason, "spec": self.spec,
                "changes": copy.deepcopy(self.changes)}


@dataclasses.dataclass(frozen=True)
class Layout(_Entry):
    """A parallel layout that fits, from the planner, cheapest first.

    Attributes: ``tp``, ``pp``, ``vpp``, ``dp``, ``cp``, ``ep``, ``zero``, ``micro_batch``,
    ``checkpointing`` (a name), ``peak_bytes``, ``headroom_bytes``, ``cost`` (docs/planner.md),
    ``spec`` and ``changes`` (the layout's canonical job changes; applied to the scenario they
    reproduce ``peak_bytes``; docs/advice.md), ``placement`` (how ranks map to GPUs),
    ``kv_capacity_tokens`` (serving plans: the KV room per replica) and ``flags`` (the layout
    in its framework's own flags; docs/flags.md).
    """

    tp: int
    pp: int
    vpp: int
    dp: int
    cp: int
    ep: int
    zero: int
    micro_batch: int
    checkpointing: Any
    peak_bytes: int
    headroom_bytes: int
    cost: float
    spec: str
    changes: Dict[str, Any]
    placement: str = ""
    kv_capacity_tokens: int = 0
    flags: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """The entry of ``gpufit plan --json``'s ``layouts`` (cli/plan.c: cost to 0.001)."""
        return {"spec": self.spec, "changes": copy.deepcopy(self.changes),
                "cost": round(self.cost, 3), "peak_bytes": self.peak_bytes,
                "headroom_bytes": self.headroom_bytes,
                "kv_capacity_tokens": self.kv_capacity_tokens, "flags": self.flags}
