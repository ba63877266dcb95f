# SPDX-License-Identifier: MIT
"""What :func:`gpufit.evaluate_summary` returns: :class:`Verdict`, a dataclass (imported when
first used, so that ``import gpufit`` does not pay for the dataclasses module)."""

import dataclasses
import typing

@dataclasses.dataclass(frozen=True)
class Verdict:
    """What :func:`evaluate_summary` returns: the verdict and totals only (no roles, no
    components, no mitigations), read from ``gpufit_evaluate_summary`` without allocating.

    Attributes: ``verdict`` (``"fits"``, ``"marginal"``, ``"oom"`` or None without a GPU),
    ``fits`` (the point estimate fits; None without a GPU), ``peak_bytes`` and its band
    ``peak_low_bytes`` / ``peak_high_bytes``, ``headroom_bytes``, ``capacity_bytes``."""

    verdict: typing.Optional[str]
    fits: typing.Optional[bool]
    peak_bytes: int
    peak_low_bytes: int
    peak_high_bytes: int
    headroom_bytes: int
    capacity_bytes: int

    def __bool__(self) -> bool:
        return self.verdict == "fits"
