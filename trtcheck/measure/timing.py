"""Latency: its statistics, and the measurement itself.

Two figures per row, for eager and the backend alike. The *caller* figure is what one call
costs the code that makes it: host time from the call to its result being ready, launch
overhead included. The *device* figure depends on the method. With ``"calls"`` (the default)
every call is timed on its own, the device idle before it: between two CUDA events around the
call on CUDA (so it holds the launches the GPU waited for), ``perf_counter`` on CPU; eager's
and the backend's calls alternate call by call, so both see the same clocks, caches and
neighbours, and their ratio holds steady where absolute times drift. With ``"blocks"`` it is the
time per call over blocks of back-to-back calls lasting at least ``block_ms``, eager's and the
backend's blocks alternating. The speedup is eager's median over the backend's, with a
bootstrap interval over the paired samples.

A backend whose calls run in another process (``interleave=False``) is timed serially instead:
all of eager's calls, then the backend's, so that eager is never timed while that process works.

With ``cpus = "sweep"`` on CUDA, the measured rounds move over every CPU the process may use, a
block of rounds on each, and the figures are the fastest block's (the lowest sum of the two
device medians): the launch-bound calls of small models run at the speed of the CPU that makes
them, and on a virtual machine a busy neighbour slows its CPUs by turns, for seconds at a time.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from typing import Any

from trtcheck.config.timing import Timing
from trtcheck.results.figures import Latency, Stats

MAX_BLOCK = 1 << 16  # calls per block: a bound for callables too fast for the timer
BOOTSTRAP = 1000  # resamples behind each interval
# Pairs per resample at most. With more pairs, the m-out-of-n bootstrap: resamples of this many
# pairs, their spread scaled by sqrt(m / n) (a median's spread shrinks as 1 / sqrt(n)); the same
# interval in expectation, at a fraction of the cost (0.33 s a row at 10,000 pairs on a 2-core CPU).
RESAMPLE = 2000
CONFIDENCE = 0.95
# The harness's own systematic error: two slots timing the very same module on a quiet 2-core
# CPU read 0.993-1.001 (docs/benchmarks.md, "The control reads 1.00×"), a bias no resampling
# sees. Every speedup interval is at least this wide on each side, so it never claims better.
RESOLUTION = 0.01
SETTLE = 3  # rounds after each move of a sweep, not kept: the thread's caches start cold there


Call = Callable[..., Any]
Sample = tuple[float, float]  # (caller ms, device ms) of one timed call or block


def measure(fns: tuple[Call, Call], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            timing: Timing, device: str, fresh_inputs: tuple[bool, bool],
            interleave: bool = True) -> Latency:
    """Time eager and a backend (``fns``) on the same inputs, both figures.

    A callable whose ``fresh_inputs`` is true (it mutates its inputs) gets its own copy for
    every call, made outside the timed region. Interleaved rounds alternate their order."""
    import torch  # here, not at the top: options reads Timing, and --help must not load torch

    from trtcheck.tensors import clone

    cuda = torch.device(device).type == "cuda"
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else (lambda: None)

    def inputs(i: int, n: int) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [clone((args, kwargs)) for _ in range(n)] if fresh_inputs[i] else [(args, kwargs)] * n

    def timed(i: int, k: int) -> Sample:
        """``k`` calls of ``fns[i]`` back to back, per call: host and device ms."""
        calls = inputs(i, k)
        if cuda:  # made before the host clock starts: the caller figure holds the calls only
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        sync()
        t0 = time.perf_counter()
        if cuda:
            start.record()
            for a, kw in calls:
                fns[i](*a, **kw)
            end.record()
            end.synchronize()
            host = (time.perf_counter() - t0) * 1e3
            return host / k, start.elapsed_time(end) / k
        for a, kw in calls:
            fns[i](*a, **kw)
        host = (time.perf_counter() - t0) * 1e3
        return host / k, host / k

    ks = [1, 1]

    def sample(i: int) -> Sample:
        """One call timed; with blocks, one call's host time and a block's device time."""
        one = timed(i, 1)
        return (one[0], timed(i, ks[i])[1]) if ks[i] > 1 else one

    def rounds(sides: Sequence[int], least: int, seconds: float,
               into: list[list[Sample]]) -> None:
        deadline = time.perf_counter() + seconds
        n = 0
        while n < timing.max_repeats and (n < least or time.perf_counter() < deadline):
            for i in (sides if n % 2 == 0 else sides[::-1]):
                into[i].append(sample(i))
            n += 1

    samples: list[list[Sample]] = [[], []]
    warm: list[list[Sample]] = [[], []]
    sweep = timing.cpus == "sweep" and cuda and interleave and hasattr(os, "sched_setaffinity")
    cpus = None
    with torch.no_grad():
        for sides in ([(0, 1)] if interleave else [(0,), (1,)]):
            rounds(sides, timing.warmup, timing.warmup_s, warm)
            if timing.method == "blocks":
                for i in sides:
                    ks[i] = _calibrate(lambda i, k: timed(i, k)[1], i,
                                       statistics.median(s[1] for s in warm[i]) if warm[i] else 0.0,
                                       timing.block_ms)
            if sweep:
                samples, cpus = _fastest_cpu(
                    lambda least, into, sides=sides: rounds(sides, least, 0.0, into), timing)
            else:
                rounds(sides, timing.repeats, timing.min_time_s, samples)
    timers = ("perf_counter", "cuda-event" if cuda else "perf_counter")
    latency = paired(samples, ks, timers=timers, warmup=len(warm[0]), unstable=timing.unstable_ci,
                     method=timing.method, schedule="interleaved" if interleave else "serial")
    return replace(latency, cpus=cpus)


def _fastest_cpu(run: Callable[[int, list[list[Sample]]], None],
                 timing: Timing) -> tuple[list[list[Sample]], int]:
    """A sweep: ``timing.repeats`` rounds on each CPU this thread may use in turn (``run`` does
    that many rounds into the lists it is given), again while ``min_time_s`` lasts, at most
    ``max_repeats`` rounds in all; the fastest block's samples, and how many CPUs took part."""
    cpus = sorted(os.sched_getaffinity(0))
    blocks: list[list[list[Sample]]] = []
    deadline = time.perf_counter() + timing.min_time_s
    try:
        while (len(blocks) < len(cpus) or time.perf_counter() < deadline) \
                and (len(blocks) + 1) * timing.repeats <= timing.max_repeats:
            os.sched_setaffinity(0, {cpus[len(blocks) % len(cpus)]})
            run(SETTLE, [[], []])
            block: list[list[Sample]] = [[], []]
            run(timing.repeats, block)
            blocks.append(block)
    finally:
        os.sched_setaffinity(0, cpus)
    fastest = min(blocks, key=lambda b: sum(statistics.median(s[1] for s in side) for side in b))
    return fastest, len(cpus)


def _calibrate(blocked: Callable[[int, int], float], i: int, per_call_ms: float,
               block_ms: float) -> int:
    """Calls per block so that a block lasts at least ``block_ms``: a first guess from the
    warm-up's per-call time, then doubled until a timed block is long enough."""
    k = min(MAX_BLOCK, max(1, math.ceil(block_ms / per_call_ms))) if per_call_ms > 0 else 1
    while k < MAX_BLOCK and blocked(i, k) * k < block_ms:
        k *= 2
    return k


def paired(samples: Sequence[Sequence[Sample]], ks: Sequence[int], *, timers: tuple[str, str],
           warmup: int, unstable: float, method: str = "calls",
           schedule: str = "interleaved") -> Latency:
    """The latency of eager (index 0) and the backend (1) from their ``(caller, device)``
    samples: the caller figures, the device figures with bootstrap intervals of their medians,
    and the speedup (eager's device median over the backend's) with its interval, resampling
    the pairs together (cut to the shorter side when a serial schedule gave unequal counts),
    when interleaved widened to cover each order of the calls within a round, and never
    narrower than the harness's resolution (``RESOLUTION`` each side)."""
    import numpy as np

    n = min(len(samples[0]), len(samples[1]))
    host = [np.asarray([s[0] for s in side], dtype=float) for side in samples]
    dev = [np.asarray([s[1] for s in side], dtype=float) for side in samples]
    rng = np.random.default_rng(0)  # a fixed seed: the same samples give the same interval
    m = min(n, RESAMPLE)
    idx = rng.integers(0, n, size=(BOOTSTRAP, m))
    scale = math.sqrt(m / n) if n else 1.0
    tail = (1 - CONFIDENCE) / 2 * 100
    medians = [np.median(d[:n][idx], axis=1) for d in dev]
    centres = [float(np.median(d[:n])) for d in dev]

    def interval(values: np.ndarray, centre: float) -> tuple[float, float]:
        low, high = np.nanpercentile(values, [tail, 100 - tail])
        return float(centre + (low - centre) * scale), float(centre + (high - centre) * scale)

    def device(i: int) -> Stats:
        low, high = interval(medians[i], centres[i])
        s = summarize(list(dev[i]), timer=timers[1], warmup=warmup)
        return Stats(**{**asdict(s), "block": ks[i], "ci_low_ms": low, "ci_high_ms": high})

    e, b = (float(np.median(d)) for d in dev)
    speedup = e / b if b > 0 else math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high = interval(medians[0] / medians[1], centres[0] / centres[1])
        if schedule == "interleaved" and n >= 4:
            # Resampling cannot see the order of calls: the interval also covers the speedups
            # of the rounds where eager went first and of those where the backend did.
            by_order = [float(np.median(dev[0][k:n:2]) / np.median(dev[1][k:n:2])) for k in (0, 1)]
            low, high = min(low, *by_order), max(high, *by_order)
        low, high = min(low, speedup * (1 - RESOLUTION)), max(high, speedup * (1 + RESOLUTION))
    return Latency(
        eager=summarize(list(host[0]), timer=timers[0], warmup=warmup),
        backend=summarize(list(host[1]), timer=timers[0], warmup=warmup),
        eager_device=device(0), backend_device=device(1),
        paired_speedup=speedup, speedup_low=low, speedup_high=high,
        unstable=bool((high - low) / 2 > unstable * speedup), method=method, schedule=schedule)


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
