"""A row's latency and memory figures as recorded: plain data, without torch.

:mod:`trtcheck.measure.timing` and :mod:`trtcheck.measure.memory` measure them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
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
class Cost:
    """What a callable compared for accuracy costs per call beyond the one timed (the exported
    program's module beyond the model: ``label`` ``"export"``), with an interval, in ms."""

    label: str
    ms: float
    low_ms: float
    high_ms: float


@dataclass(frozen=True)
class Latency:
    """Eager and a backend, timed together.

    ``eager``/``backend`` are the caller figures (host time of one call, its result ready);
    ``eager_device``/``backend_device`` the device figures: per call, between CUDA events on
    CUDA (``method`` ``"calls"``), or per call over blocks of back-to-back calls (``"blocks"``).
    ``paired_speedup`` is eager's device median over the backend's, ``speedup_low``/
    ``speedup_high`` its bootstrap interval over the paired samples. ``schedule`` says how the
    two were kept from disturbing each other: ``"interleaved"`` (alternating, so both see the
    same machine state) or ``"serial"`` (all of eager's calls, then the backend's: a backend
    that runs in another process); either way the device's timing lock is held
    (:mod:`trtcheck.measure.device_lock`). ``cost`` is the export round trip's own cost, on the
    control. ``cpus``: with ``[timing] cpus = "sweep"``, how many CPUs the rounds moved over (the
    figures are the fastest CPU's); None where the thread stayed put. Records made before blocks
    were timed have only the caller figures."""

    eager: Stats
    backend: Stats
    eager_device: Stats | None = None
    backend_device: Stats | None = None
    paired_speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    unstable: bool = False
    method: str = "blocks"
    schedule: str = "interleaved"
    cost: Cost | None = None
    cpus: int | None = None

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
        d = {name: getattr(self, name) for name in _LATENCY_FIELDS}
        for side in _LATENCY_PARTS:
            if d[side] is not None:
                d[side] = d[side].__dict__.copy()
        d["speedup"] = self.speedup
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Latency:
        """A latency from its dict, by field name; older records carry only ``eager`` and
        ``backend``, and keys this trtcheck does not know are left out."""
        data = by_field(d, _LATENCY_FIELDS)
        for side in _LATENCY_PARTS:
            if data.get(side):
                data[side] = Cost(**data[side]) if side == "cost" else _stats(data[side])
        return cls(**data)


MIB = 2**20
ALLOCATOR = "PyTorch allocator peak"
RESIDENT = "resident memory peak"
# Below these peaks a ratio says more about the measure than the model: the allocator rounds
# blocks up to 512 bytes and 2 MiB segments; resident memory moves by pages and malloc's arenas.
RATIO_FLOOR = {ALLOCATOR: MIB, RESIDENT: 16 * MIB}


@dataclass(frozen=True)
class Memory:
    """A row's memory figures, in bytes (None where not measured).

    ``eager`` and ``backend`` are steady-state peaks: the most one call allocates above what was
    in use before it, taken after warm-up, so that first-call allocations of shared libraries
    (cuBLAS and cuDNN workspaces, lazy initialisation, autotuning) stay out; ``backend`` also
    holds ``owned``, the allocator memory the compiled module itself keeps (freed when it is
    released). ``eager_first``/``backend_first`` are the first calls' peaks, one-time
    allocations included, shown apart (JUnit's system-out), never in the ratio.
    ``compiled`` is what compiling left allocated; ``engine`` the device memory the backend
    reports for its compiled artifact (TensorRT engines), outside the allocator, counted in the
    ratio; ``before``/``after`` the GPU memory in use when the row started and after it
    released its compiled module; ``notes`` name leaks."""

    measure: str
    eager: int | None = None
    backend: int | None = None
    compiled: int | None = None
    engine: int | None = None
    before: int | None = None
    after: int | None = None
    notes: list[str] = field(default_factory=list)
    owned: int | None = None
    eager_first: int | None = None
    backend_first: int | None = None

    @property
    def ratio(self) -> float | None:
        """The backend's memory (its peak, what it owns, its engines) over eager's peak: below 1,
        the compiled module needs less. None when either is under the measure's floor."""
        if self.eager is None or self.backend is None:
            return None
        backend = self.backend + (self.engine or 0)
        floor = RATIO_FLOOR.get(self.measure, MIB)
        if self.eager < floor or backend < floor:
            return None
        return backend / self.eager


_STATS_FIELDS = tuple(f.name for f in fields(Stats))
_LATENCY_FIELDS = tuple(f.name for f in fields(Latency))
_LATENCY_PARTS = ("eager", "backend", "eager_device", "backend_device", "cost")


def by_field(d: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The items of ``d`` that a dataclass of fields ``names`` takes (others, such as a later
    trtcheck's, are left out), keyed by the field names' own strings. Keys read from JSON are
    equal strings but other objects, and Python matches such keyword arguments by comparing
    each with every parameter name in turn: that was about a fifth of the time of reading rows."""
    return {name: d[name] for name in names if name in d}


def _stats(side: Mapping[str, Any]) -> Stats:
    return Stats(**by_field(side, _STATS_FIELDS))


@dataclass(frozen=True)
class LatencyFigure:
    """One latency figure the reports show: whose calls timed how (``side``, a Stats field of
    :class:`Latency`), which statistic of them (a :class:`Stats` field), and how to read it."""

    who: str  # eager or backend
    clock: str  # caller or device
    side: str  # eager, backend, eager_device, backend_device
    statistic: str = "median_ms"
    reading: str = "ms a call, lower is faster"

    @property
    def label(self) -> str:
        """``eager median ms (caller)``: how every report names it."""
        return f"{self.unclocked} ({self.clock})"

    @property
    def unclocked(self) -> str:
        """``eager median ms``: its name where one clock times both figures."""
        return f"{self.who} {self.statistic.removesuffix('_ms')} ms"

    @property
    def device(self) -> bool:
        """Whether it is a device figure (else the caller's)."""
        return self.clock == "device"

    def of(self, latency: Latency | None) -> float | None:
        stats = getattr(latency, self.side) if latency is not None else None
        return getattr(stats, self.statistic) if stats is not None else None


# Every latency figure, declared once: every report's latency columns are made from these.
LATENCY_FIGURES = (
    LatencyFigure("eager", "caller", "eager"),
    LatencyFigure("backend", "caller", "backend"),
    LatencyFigure("eager", "device", "eager_device"),
    LatencyFigure("backend", "device", "backend_device"),
)
