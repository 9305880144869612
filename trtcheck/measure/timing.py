"""Latency: its statistics, and the measurement itself.

Two figures per row, for eager and the backend alike. The *caller* figure is what one call
costs the code that makes it: host time from the call to its result being ready, launch
overhead included. The *device* figure is the time per call over blocks of back-to-back calls,
each block calibrated to last at least ``block_ms`` — GPU time between two CUDA events on CUDA,
``perf_counter`` on CPU — which launch overhead hides behind. Eager and backend blocks are
interleaved, and the speedup is the median over paired blocks, with a bootstrap interval.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from trtcheck.config.timing import Timing
from trtcheck.results.figures import Latency, Stats

if TYPE_CHECKING:
    import numpy as np

MAX_BLOCK = 1 << 16  # calls per block: a bound for callables too fast for the timer
BOOTSTRAP = 2000  # resamples behind each interval
CONFIDENCE = 0.95


Call = Callable[..., Any]


def measure(fns: tuple[Call, Call], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            timing: Timing, device: str, fresh_inputs: tuple[bool, bool]) -> Latency:
    """Time eager and a backend (``fns``) on the same inputs, interleaved, both figures.

    Interleaving makes both callables see the same machine state (clocks, caches, neighbours),
    so their ratio — the speedup — holds steady where absolute times drift between runs; the
    order alternates each round. A callable whose ``fresh_inputs`` is true (it mutates its
    inputs) gets its own copy for every call, made outside the timed region."""
    import torch  # here, not at the top: options reads Timing, and --help must not load torch

    from trtcheck.tensors import clone

    cuda = torch.device(device).type == "cuda"
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else (lambda: None)
    block = _cuda_block if cuda else _cpu_block

    def inputs(i: int, n: int) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [clone((args, kwargs)) for _ in range(n)] if fresh_inputs[i] else [(args, kwargs)] * n

    def caller(i: int) -> float:
        [(a, kw)] = inputs(i, 1)
        sync()
        t0 = time.perf_counter()
        fns[i](*a, **kw)
        sync()
        return (time.perf_counter() - t0) * 1e3

    def blocked(i: int, k: int) -> float:
        calls = inputs(i, k)
        sync()
        return block(fns[i], calls, device) / k

    with torch.no_grad():
        warm: list[list[float]] = [[], []]
        deadline = time.perf_counter() + timing.warmup_s
        while len(warm[0]) < timing.max_repeats and (
                len(warm[0]) < timing.warmup or time.perf_counter() < deadline):
            for i in (0, 1):
                warm[i].append(caller(i))
        ks = [_calibrate(blocked, i, statistics.median(warm[i]) if warm[i] else 0.0,
                         timing.block_ms) for i in (0, 1)]
        callers: list[list[float]] = [[], []]
        blocks: list[list[float]] = [[], []]
        deadline = time.perf_counter() + timing.min_time_s
        n = 0
        while n < timing.max_repeats and (n < timing.repeats or time.perf_counter() < deadline):
            order = (0, 1) if n % 2 == 0 else (1, 0)
            for i in order:
                blocks[i].append(blocked(i, ks[i]))
            for i in order:
                callers[i].append(caller(i))
            n += 1
    timers = ("perf_counter", "cuda-event" if cuda else "perf_counter")
    return paired(callers, blocks, ks, timers=timers, warmup=len(warm[0]),
                  unstable=timing.unstable_ci)


def _calibrate(blocked: Callable[[int, int], float], i: int, per_call_ms: float,
               block_ms: float) -> int:
    """Calls per block so that a block lasts at least ``block_ms``: a first guess from the
    warm-up's per-call time, then doubled until a timed block is long enough."""
    k = min(MAX_BLOCK, max(1, math.ceil(block_ms / per_call_ms))) if per_call_ms > 0 else 1
    while k < MAX_BLOCK and blocked(i, k) * k < block_ms:
        k *= 2
    return k


def _cpu_block(fn: Call, calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]],
               device: str) -> float:
    t0 = time.perf_counter()
    for a, kw in calls:
        fn(*a, **kw)
    return (time.perf_counter() - t0) * 1e3


def _cuda_block(fn: Call, calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]],
                device: str) -> float:
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for a, kw in calls:
        fn(*a, **kw)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def paired(callers: Sequence[Sequence[float]], blocks: Sequence[Sequence[float]],
           ks: Sequence[int], *, timers: tuple[str, str], warmup: int,
           unstable: float) -> Latency:
    """The latency of eager (index 0) and the backend (1) from their samples: the caller
    figures, the block figures with bootstrap intervals of their medians, and the speedup over
    paired blocks with its interval."""
    import numpy as np

    e, b = (np.asarray(s, dtype=float) for s in blocks)
    ratios = e / np.where(b > 0, b, np.nan)
    rng = np.random.default_rng(0)  # a fixed seed: the same samples give the same interval
    idx = rng.integers(0, len(e), size=(BOOTSTRAP, len(e)))
    tail = (1 - CONFIDENCE) / 2 * 100

    def interval(values: np.ndarray) -> tuple[float, float]:
        medians = np.nanmedian(values[idx], axis=1)
        low, high = np.nanpercentile(medians, [tail, 100 - tail])
        return float(low), float(high)

    def device(i: int, values: np.ndarray) -> Stats:
        low, high = interval(values)
        s = summarize(list(values), timer=timers[1], warmup=warmup)
        return Stats(**{**asdict(s), "block": ks[i], "ci_low_ms": low, "ci_high_ms": high})

    speedup = float(np.nanmedian(ratios))
    low, high = interval(ratios)
    return Latency(
        eager=summarize(list(callers[0]), timer=timers[0], warmup=warmup),
        backend=summarize(list(callers[1]), timer=timers[0], warmup=warmup),
        eager_device=device(0, e), backend_device=device(1, b),
        paired_speedup=speedup, speedup_low=low, speedup_high=high,
        unstable=bool((high - low) / 2 > unstable * speedup))


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
