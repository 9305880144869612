"""timing.py: settings checks, statistics, and the interleaved measurement on CPU."""

from __future__ import annotations

import os
from dataclasses import asdict

import pytest
import torch

from trtcheck.config.cascade import resolve
from trtcheck.config.timing import TIMING_KEYS, Timing
from trtcheck.errors import ConfigError
from trtcheck.measure.timing import (
    MAX_BLOCK,
    RESOLUTION,
    SETTLE,
    _calibrate,
    _fastest_cpu,
    measure,
    paired,
    summarize,
)
from trtcheck.results.figures import Latency, Stats


def test_timing_settings_are_checked_where_they_live() -> None:
    assert Timing.from_config({"repeats": 5}, "x.timing") == Timing(repeats=5)
    with pytest.raises(ConfigError, match=r"^x.timing: repeats must be >= 1"):
        Timing.from_config({"repeats": 0}, "x.timing")
    with pytest.raises(ConfigError, match="warmup_s, min_time_s and block_ms must be >= 0"):
        Timing.from_config({"min_time_s": -1}, "x.timing")
    with pytest.raises(ConfigError, match="unstable_ci > 0"):
        Timing.from_config({"unstable_ci": 0}, "x.timing")
    assert {"warmup": int, "repeats": int, "warmup_s": (int, float),
            "min_time_s": (int, float), "max_repeats": int, "block_ms": (int, float),
            "unstable_ci": (int, float), "method": str, "cpus": str} == TIMING_KEYS
    with pytest.raises(ConfigError, match="method must be one of 'calls', 'blocks'"):
        Timing.from_config({"method": "graph"}, "x.timing")
    with pytest.raises(ConfigError, match="cpus must be one of 'any', 'sweep', not 'all'"):
        Timing.from_config({"cpus": "all"}, "x.timing")


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_a_sweep_keeps_the_fastest_cpus_rounds_and_gives_the_thread_back() -> None:
    allowed = os.sched_getaffinity(0)
    slowest = max(allowed)
    runs: list[tuple[int, int]] = []

    def run(least: int, into: list[list[tuple[float, float]]]) -> None:
        (cpu,) = os.sched_getaffinity(0)  # the sweep pins the thread to one CPU at a time
        runs.append((cpu, least))
        for _ in range(least):  # the last CPU is slow, the others differ a little
            for side, ms in enumerate((2.0, 1.0)):
                into[side].append((ms, ms * (3 if cpu == slowest else 1 + cpu / 100)))

    samples, cpus = _fastest_cpu(run, Timing(repeats=4, min_time_s=0))
    assert cpus == len(allowed) and os.sched_getaffinity(0) == allowed
    assert [cpu for cpu, least in runs if least == 4] == sorted(allowed)  # each CPU once
    assert all(least == SETTLE for _, least in runs[0::2])  # settling rounds after each move
    first = min(allowed)
    assert samples == [[(2.0, 2.0 * (1 + first / 100))] * 4, [(1.0, 1 + first / 100)] * 4]


def test_config_timing_table_reaches_the_options(tmp_path) -> None:
    (tmp_path / "trtcheck.toml").write_text("[timing]\nrepeats = 7\nwarmup_s = 0\n")
    assert resolve((tmp_path,)).timing == Timing(repeats=7, warmup_s=0)
    (tmp_path / "trtcheck.toml").write_text("[timing]\nrepeat = 7\n")
    with pytest.raises(ConfigError, match="did you mean 'repeats'"):
        resolve((tmp_path,))


def test_summarize_fixed_fields() -> None:
    stats = summarize([5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0],
                      timer="perf_counter", warmup=2)
    assert (stats.median_ms, stats.p90_ms, stats.min_ms, stats.mean_ms) == (5.5, 9.0, 1.0, 5.5)
    assert stats.repeats == 10 and stats.warmup == 2 and stats.stdev_ms > 0
    assert summarize([2.0], timer="t", warmup=0).stdev_ms == 0.0


def test_speedup_is_the_paired_figure_else_eager_over_backend() -> None:
    def stats(ms: float) -> Stats:
        return Stats("perf_counter", 1, 1, ms, ms, ms, ms, 0.0)

    assert Latency(stats(4.0), stats(1.0)).speedup == 4.0
    assert Latency(stats(4.0), stats(0.0)).speedup == float("inf")
    paired_ = Latency(stats(4.0), stats(1.0), stats(2.0), stats(1.0), 2.1, 2.0, 2.2)
    assert (paired_.speedup, paired_.caller_speedup, paired_.interval) == (2.1, 4.0, (2.0, 2.2))
    assert Latency.from_dict(paired_.to_dict()) == paired_
    # records written before blocks were timed: the caller figures only
    old = {"eager": asdict(stats(4.0)), "backend": asdict(stats(2.0)), "speedup": 2.0}
    assert Latency.from_dict(old) == Latency(stats(4.0), stats(2.0))


class _Clock:
    """``perf_counter`` for the timing module that moves only when a timed call spends time:
    the figures then follow what each call costs, whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def spend(self, ms: float) -> None:
        self.now += ms / 1e3


def test_measure_interleaves_alternating_and_gives_a_mutating_callable_fresh_inputs() -> None:
    calls: list[str] = []
    seen: list[float] = []

    def eager(x: torch.Tensor) -> torch.Tensor:
        calls.append("e")
        return x + 1

    def mutating(x: torch.Tensor) -> torch.Tensor:
        calls.append("b")
        seen.append(float(x[0]))
        return x.add_(1)

    x = torch.zeros(3)
    timing = Timing(warmup=2, repeats=4, warmup_s=0.0, min_time_s=0.0)
    lat = measure((eager, mutating), (x,), {}, timing=timing, device="cpu",
                  fresh_inputs=(False, True))
    # per call, interleaved: warm-up rounds, then measured rounds, the order alternating
    assert "".join(calls) == "eb" + "be" + "eb" + "be" + "eb" + "be"
    assert seen == [0.0] * len(seen) and float(x[0]) == 0.0  # each call got its own copy
    assert lat.eager.warmup == 2 and lat.eager.repeats == lat.backend.repeats == 4
    assert lat.eager.timer == lat.eager_device.timer == "perf_counter"
    assert lat.eager_device.block == lat.backend_device.block == 1
    assert (lat.method, lat.schedule) == ("calls", "interleaved")


def test_serial_schedule_times_all_of_eager_first() -> None:
    calls: list[str] = []
    lat = measure((lambda: calls.append("e"), lambda: calls.append("b")), (), {},
                  timing=Timing(warmup=1, repeats=3, warmup_s=0.0, min_time_s=0.0),
                  device="cpu", fresh_inputs=(False, False), interleave=False)
    assert "".join(calls) == "eeee" + "bbbb" and lat.schedule == "serial"


def test_control_interval_covers_both_call_orders() -> None:
    # eager (index 0) is slower whenever it goes first: the order effect, not a speedup
    samples = [[(1.1, 1.1) if k % 2 == 0 else (1.0, 1.0) for k in range(40)],
               [(1.0, 1.0) if k % 2 == 0 else (1.1, 1.1) for k in range(40)]]
    lat = paired(samples, [1, 1], timers=("perf_counter", "perf_counter"), warmup=0,
                 unstable=0.5)
    assert lat.interval[0] <= 1.0 / 1.1 + 1e-9 and lat.interval[1] >= 1.1 - 1e-9


def test_measure_calibrates_blocks_and_brackets_the_speedup(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr("trtcheck.measure.timing.time", clock)
    timing = Timing(warmup=2, repeats=30, warmup_s=0.0, min_time_s=0.0, block_ms=2.0,
                    method="blocks")
    lat = measure((lambda: clock.spend(0.6), lambda: clock.spend(0.3)), (), {}, timing=timing,
                  device="cpu", fresh_inputs=(False, False))
    # the warm-up's per-call time gives the block: 2 ms / 0.6 ms -> 4 calls, 2 / 0.3 -> 7
    assert (lat.eager_device.block, lat.backend_device.block) == (4, 7)
    assert lat.speedup == pytest.approx(2.0)
    low, high = lat.interval
    assert low <= lat.speedup <= high
    assert lat.eager_device.ci_low_ms <= lat.eager_device.median_ms <= lat.eager_device.ci_high_ms


def test_calibrate_guesses_from_the_warm_up_then_doubles_until_a_block_lasts_long_enough() -> None:
    asked: list[int] = []

    def faster_when_warm(i: int, k: int) -> float:  # per-call ms of a k-call block
        asked.append(k)
        return 0.1

    assert _calibrate(faster_when_warm, 0, 0.2, 2.0) == 20  # guess 10, whose block lasts 1 ms
    assert asked == [10, 20]
    assert _calibrate(lambda i, k: 0.2, 0, 0.2, 2.0) == 10  # the guess holds
    assert _calibrate(lambda i, k: 1.0, 0, 0.0, 2.0) == 2  # no warm-up: from 1, doubled
    assert _calibrate(lambda i, k: 0.0, 0, 1e-9, 2.0) == MAX_BLOCK


def test_paired_speedup_interval_and_unstable_flag() -> None:
    steady = paired([[(1.0, 2.0)] * 9, [(0.5, 1.0)] * 9], [4, 8],
                    timers=("perf_counter", "perf_counter"), warmup=1, unstable=0.05)
    # no spread at all: the interval is the harness's resolution, never narrower
    assert (steady.speedup, steady.unstable) == (2.0, False)
    assert steady.interval == pytest.approx((2.0 * (1 - RESOLUTION), 2.0 * (1 + RESOLUTION)))
    assert steady.eager_device.block == 4 and steady.backend_device.block == 8
    noisy = paired([[(1.0, 2.0)] * 6, [(0.5, x) for x in (1, 0.5, 2, 1, 0.6, 1.8)]],
                   [1, 1], timers=("perf_counter", "perf_counter"), warmup=1, unstable=0.05)
    assert noisy.unstable and noisy.interval[0] < noisy.speedup < noisy.interval[1]


def test_measure_runs_at_least_min_time_and_at_most_max_repeats() -> None:
    timing = Timing(warmup=0, repeats=1, warmup_s=0.0, min_time_s=10.0, max_repeats=3)
    lat = measure((lambda x: x, lambda x: x), (torch.zeros(1),), {}, timing=timing,
                  device="cpu", fresh_inputs=(False, False))
    assert lat.eager.repeats == 3  # max_repeats stops it long before 10 s


def test_many_pairs_resample_fewer_and_scale_the_spread_to_the_full_bootstrap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    shared = rng.lognormal(0, 0.05, 8000)  # what both calls of a round see
    eager, backend = (ms * shared * rng.lognormal(0, 0.03, 8000) for ms in (0.009, 0.0092))
    samples = [[(x, x) for x in eager.tolist()], [(x, x) for x in backend.tolist()]]

    def width() -> float:
        lat = paired(samples, [1, 1], timers=("perf_counter", "perf_counter"), warmup=0,
                     unstable=0.05, schedule="serial")
        return lat.speedup_high - lat.speedup_low

    monkeypatch.setattr("trtcheck.measure.timing.RESOLUTION", 0.0)
    monkeypatch.setattr("trtcheck.measure.timing.RESAMPLE", 8000)
    full = width()
    monkeypatch.setattr("trtcheck.measure.timing.RESAMPLE", 1000)
    assert 0.8 * full < width() < 1.25 * full  # unscaled, 1,000-pair resamples are 2.8x wider
