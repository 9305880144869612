"""Latency: warm-up, repeats, median and p90 — CUDA events on CUDA, perf_counter on CPU."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from trtcheck.options import Timing
from trtcheck.record import Stats
from trtcheck.tensors import clone


def measure(fns: Sequence[Callable[..., Any]], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            timing: Timing, device: str, fresh_inputs: Sequence[bool]) -> list[Stats]:
    """Time each of ``fns`` on the same inputs, interleaving their calls.

    Interleaving makes every callable see the same machine state (clocks, caches, neighbours),
    so their ratio — the speedup — holds steady even where absolute times drift between runs.
    Warm-up lasts at least ``warmup`` rounds and ``warmup_s`` seconds; measurement at least
    ``repeats`` rounds and ``min_time_s`` seconds, at most ``max_repeats`` rounds. A callable
    whose ``fresh_inputs`` is true (it mutates its inputs) gets its own copy for every call,
    made outside the timed region."""
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
