"""Latency: its settings, its statistics, and the measurement itself.

Warm-up, repeats, median and p90 — CUDA events on CUDA, ``perf_counter`` on CPU.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from trtcheck.errors import ConfigError


@dataclass(frozen=True)
class Timing:
    """Latency measurement: at least ``warmup`` calls and ``warmup_s`` seconds of warm-up, then
    at least ``repeats`` calls and ``min_time_s`` seconds measured, at most ``max_repeats``."""

    warmup: int = 3
    repeats: int = 20
    warmup_s: float = 0.05
    min_time_s: float = 0.2
    max_repeats: int = 10_000

    @classmethod
    def from_config(cls, table: Mapping[str, Any], where: str) -> Timing:
        """The ``[timing]`` table checked and applied over the defaults; ConfigError if invalid."""
        timing = cls(**table)
        if timing.repeats < 1 or timing.warmup < 0 or timing.max_repeats < timing.repeats:
            raise ConfigError(f"{where}: repeats must be >= 1, warmup >= 0 and "
                              "max_repeats >= repeats")
        if timing.warmup_s < 0 or timing.min_time_s < 0:
            raise ConfigError(f"{where}: warmup_s and min_time_s must be >= 0")
        return timing


# The config schema of the ``[timing]`` table: key -> accepted types.
TIMING_KEYS: dict[str, Any] = {f.name: (int, float) if f.type == "float" else int
                               for f in fields(Timing)}


@dataclass(frozen=True)
class Stats:
    """Latency of one callable: fixed fields, all in milliseconds."""

    timer: str
    warmup: int
    repeats: int
    median_ms: float
    p90_ms: float
    min_ms: float
    mean_ms: float
    stdev_ms: float


@dataclass(frozen=True)
class Latency:
    """Eager and a backend, timed together."""

    eager: Stats
    backend: Stats

    @property
    def speedup(self) -> float:
        """Eager median over backend median: above 1 means the backend is faster."""
        return self.eager.median_ms / self.backend.median_ms if self.backend.median_ms else math.inf


def measure(fns: Sequence[Callable[..., Any]], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            timing: Timing, device: str, fresh_inputs: Sequence[bool]) -> list[Stats]:
    """Time each of ``fns`` on the same inputs, interleaving their calls.

    Interleaving makes every callable see the same machine state (clocks, caches, neighbours),
    so their ratio — the speedup — holds steady even where absolute times drift between runs.
    Warm-up lasts at least ``warmup`` rounds and ``warmup_s`` seconds; measurement at least
    ``repeats`` rounds and ``min_time_s`` seconds, at most ``max_repeats`` rounds. A callable
    whose ``fresh_inputs`` is true (it mutates its inputs) gets its own copy for every call,
    made outside the timed region."""
    import torch  # here, not at the top: options reads Timing, and --help must not load torch

    from trtcheck.tensors import clone

    cuda = torch.device(device).type == "cuda"
    call = _cuda_call if cuda else _cpu_call

    def rounds(min_rounds: int, min_seconds: float) -> list[list[float]]:
        samples: list[list[float]] = [[] for _ in fns]
        deadline = time.perf_counter() + min_seconds
        n = 0
        while n < timing.max_repeats and (n < min_rounds or time.perf_counter() < deadline):
            for fn, fresh, into in zip(fns, fresh_inputs, samples, strict=True):
                a, kw = clone((args, kwargs)) if fresh else (args, kwargs)
                into.append(call(fn, a, kw, device))
            n += 1
        return samples

    with torch.no_grad():
        warm = rounds(timing.warmup, timing.warmup_s)
        measured = rounds(timing.repeats, timing.min_time_s)
    timer = "cuda-event" if cuda else "perf_counter"
    return [summarize(s, timer=timer, warmup=len(warm[0])) for s in measured]


def _cpu_call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
              device: str) -> float:
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - t0) * 1e3


def _cuda_call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
               device: str) -> float:
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(device)
    start.record()
    fn(*args, **kwargs)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def summarize(samples: list[float], *, timer: str, warmup: int) -> Stats:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]
    return Stats(
        timer=timer,
        warmup=warmup,
        repeats=len(samples),
        median_ms=statistics.median(ordered),
        p90_ms=p90,
        min_ms=ordered[0],
        mean_ms=statistics.fmean(ordered),
        stdev_ms=statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
    )
