"""A row's latency and memory figures as recorded: plain data, without torch.

:mod:`trtcheck.measure.timing` and :mod:`trtcheck.measure.memory` measure them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Stats:
    """Latency of one callable per call: fixed fields, times in milliseconds. ``block`` is the
    number of calls each sample timed together; ``ci_low_ms``/``ci_high_ms`` bound the median
    (a bootstrap interval; None when not computed)."""

    timer: str
    warmup: int
    repeats: int
    median_ms: float
    p90_ms: float
    min_ms: float
    mean_ms: float
    stdev_ms: float
    block: int = 1
    ci_low_ms: float | None = None
    ci_high_ms: float | None = None


@dataclass(frozen=True)
class Latency:
    """Eager and a backend, timed together.

    ``eager``/``backend`` are the caller figures; ``eager_device``/``backend_device`` the
    per-call times from blocks. ``paired_speedup`` is the median over paired blocks of eager's
    time over the backend's, ``speedup_low``/``speedup_high`` its interval. Records made before
    blocks were timed have only the caller figures."""

    eager: Stats
    backend: Stats
    eager_device: Stats | None = None
    backend_device: Stats | None = None
    paired_speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    unstable: bool = False

    @property
    def speedup(self) -> float:
        """Above 1 means the backend is faster: the paired-block speedup, or for older records
        eager's median over the backend's."""
        return self.paired_speedup if self.paired_speedup is not None else self.caller_speedup

    @property
    def caller_speedup(self) -> float:
        """Eager's caller median over the backend's."""
        return self.eager.median_ms / self.backend.median_ms if self.backend.median_ms else math.inf

    @property
    def interval(self) -> tuple[float, float] | None:
        """The speedup's interval, when measured."""
        if self.speedup_low is None or self.speedup_high is None:
            return None
        return self.speedup_low, self.speedup_high

    def to_dict(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict deep-copies, most of the time of saving a big record.
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        for side in ("eager", "backend", "eager_device", "backend_device"):
            if d[side] is not None:
                d[side] = d[side].__dict__.copy()
        return {**d, "speedup": self.speedup}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Latency:
        """A latency from its dict; older records carry only ``eager`` and ``backend``."""
        known = _STATS_FIELDS

        def stats(side: Mapping[str, Any]) -> Stats:
            return Stats(**{k: v for k, v in side.items() if k in known})

        device = [stats(d[k]) if d.get(k) else None for k in ("eager_device", "backend_device")]
        return cls(stats(d["eager"]), stats(d["backend"]), *device,
                   d.get("paired_speedup"), d.get("speedup_low"), d.get("speedup_high"),
                   bool(d.get("unstable", False)))


@dataclass(frozen=True)
class Memory:
    """A row's memory figures, in bytes (None where not measured).

    ``eager`` and ``backend`` are the peaks of the eager call and of the compiled module's
    first call above what was in use before each; ``compiled`` what compiling kept allocated;
    ``engine`` the device memory the backend reports for its compiled artifact (TensorRT
    engines), outside the allocator; ``before``/``after`` the GPU memory in use when the row
    started and after it released its compiled module; ``notes`` name leaks."""

    measure: str
    eager: int | None = None
    backend: int | None = None
    compiled: int | None = None
    engine: int | None = None
    before: int | None = None
    after: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """Backend peak over eager peak: below 1, the compiled module needs less."""
        if self.eager and self.backend is not None:
            return self.backend / self.eager
        return None


_STATS_FIELDS = frozenset(f.name for f in fields(Stats))
