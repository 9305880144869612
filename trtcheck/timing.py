"""Latency: warm-up, repeats, median and p90 — CUDA events on CUDA, perf_counter on CPU."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from trtcheck.options import Timing
from trtcheck.record import Stats
from trtcheck.tensors import clone


def measure(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            timing: Timing, device: str, fresh_inputs: bool) -> Stats:
    """Time ``fn(*args, **kwargs)``. With ``fresh_inputs`` (a model that mutates its inputs)
    each call gets its own copy, made outside the timed region."""
    cuda = torch.device(device).type == "cuda"
    samples: list[float] = []
    with torch.no_grad():
        for i in range(timing.warmup + timing.repeats):
            a, kw = clone((args, kwargs)) if fresh_inputs else (args, kwargs)
            if cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize(device)
                start.record()
                fn(*a, **kw)
                end.record()
                end.synchronize()
                elapsed = start.elapsed_time(end)
            else:
                t0 = time.perf_counter()
                fn(*a, **kw)
                elapsed = (time.perf_counter() - t0) * 1e3
            if i >= timing.warmup:
                samples.append(elapsed)
    return summarize(samples, timer="cuda-event" if cuda else "perf_counter", warmup=timing.warmup)


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
