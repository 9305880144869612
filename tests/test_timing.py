"""timing.py: settings checks, statistics, and the interleaved measurement on CPU."""

from __future__ import annotations

import pytest
import torch

from trtcheck.errors import ConfigError
from trtcheck.options import resolve
from trtcheck.timing import TIMING_KEYS, Latency, Stats, Timing, measure, summarize


def test_timing_settings_are_checked_where_they_live() -> None:
    assert Timing.from_config({"repeats": 5}, "x.timing") == Timing(repeats=5)
    with pytest.raises(ConfigError, match=r"^x.timing: repeats must be >= 1"):
        Timing.from_config({"repeats": 0}, "x.timing")
    with pytest.raises(ConfigError, match="warmup_s and min_time_s must be >= 0"):
        Timing.from_config({"min_time_s": -1}, "x.timing")
    assert {"warmup": int, "repeats": int, "warmup_s": (int, float),
                           "min_time_s": (int, float), "max_repeats": int} == TIMING_KEYS


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


def test_speedup_is_eager_over_backend() -> None:
    def stats(ms: float) -> Stats:
        return Stats("perf_counter", 1, 1, ms, ms, ms, ms, 0.0)

    assert Latency(stats(4.0), stats(1.0)).speedup == 4.0
    assert Latency(stats(4.0), stats(0.0)).speedup == float("inf")


def test_measure_interleaves_and_gives_a_mutating_callable_fresh_inputs() -> None:
    calls: list[str] = []
    seen: list[float] = []

    def eager(x: torch.Tensor) -> torch.Tensor:
        calls.append("eager")
        return x + 1

    def mutating(x: torch.Tensor) -> torch.Tensor:
        calls.append("backend")
        seen.append(float(x[0]))
        return x.add_(1)

    x = torch.zeros(3)
    timing = Timing(warmup=2, repeats=5, warmup_s=0.0, min_time_s=0.0)
    eager_stats, backend_stats = measure([eager, mutating], (x,), {}, timing=timing,
                                         device="cpu", fresh_inputs=[False, True])
    assert calls == ["eager", "backend"] * 7  # warm-up and measured rounds, interleaved
    assert seen == [0.0] * 7 and float(x[0]) == 0.0  # each call got its own copy
    assert (eager_stats.warmup, eager_stats.repeats, eager_stats.timer) == (2, 5, "perf_counter")
    assert backend_stats.repeats == 5


def test_measure_runs_at_least_min_time_and_at_most_max_repeats() -> None:
    timing = Timing(warmup=0, repeats=1, warmup_s=0.0, min_time_s=10.0, max_repeats=3)
    [stats] = measure([lambda x: x], (torch.zeros(1),), {}, timing=timing, device="cpu",
                      fresh_inputs=[False])
    assert stats.repeats == 3  # max_repeats stops it long before 10 s
