"""A run whose control failed says so in its headline, and no speed change is judged from it."""

from __future__ import annotations

from trtcheck.results import control
from trtcheck.results.baseline import NOT_COMPARABLE, compare
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import job_verdict


def _latency(speedup: float, spread: float, eager_ms: float = 1.0) -> Latency:
    """A measured latency whose speedup interval is ±``spread`` (relative)."""
    def stats(ms: float) -> Stats:
        return Stats("cuda-event", 3, 100, ms, ms, ms, ms, 0.0, 8, ms * (1 - spread),
                     ms * (1 + spread))

    return Latency(stats(eager_ms), stats(eager_ms / speedup), stats(eager_ms),
                   stats(eager_ms / speedup), speedup, speedup * (1 - spread),
                   speedup * (1 + spread))


def _row(name: str, latency: Latency, *, backend: str = "inductor") -> Row:
    return Row(f"zoo::{name}[float32]", "zoo", name, "float32", backend, latency=latency)


def _record(*rows: Row) -> Record:
    return Record({}, {"profiles": [], "strict_xfail": False}, list(rows))


def test_a_control_in_its_band_and_medians_that_agree_are_trusted() -> None:
    record = _record(_row("a", _latency(0.99, 0.02), backend="eager"),
                     _row("a", _latency(2.0, 0.02, eager_ms=1.2)),
                     _row("b", _latency(1.2, 0.3), backend="eager"))  # wide, but holding the band
    assert control.distrust(record) == []
    assert "not trusted" not in job_verdict(record).headline


def test_a_control_out_of_its_band_or_medians_apart_distrust_the_timings() -> None:
    record = _record(_row("a", _latency(48.2, 0.02), backend="eager"),
                     _row("b", _latency(1.0, 0.01, eager_ms=0.749), backend="eager"),
                     _row("b", _latency(1.5, 0.01, eager_ms=112.0)))
    reasons = control.distrust(record)
    assert reasons == [
        "the control (eager) read 48.2× on zoo::a[float32], outside its band of 0.91–1.10×",
        "zoo::b[float32]'s eager median read 0.749 ms in one row and 112 ms in another (more "
        "than 2× apart)"]
    assert job_verdict(record).headline == (
        "PASS: 3 rows, none fails the run; this run's timings are not trusted (" + "; ".join(reasons)
        + "): speed not judged")


def test_no_speed_change_is_judged_from_a_run_whose_control_failed() -> None:
    base = _record(_row("a", _latency(1.0, 0.01), backend="eager"), _row("b", _latency(2.0, 0.01)))
    head = _record(_row("a", _latency(0.5, 0.01), backend="eager"), _row("b", _latency(1.0, 0.01)))
    diff = compare(base, head)
    assert not diff.comparable and diff.regressions == []
    assert [c.latency.verdict for c in diff.changes if c.latency] == [NOT_COMPARABLE] * 2
    assert any(w.startswith("this run's timings are not trusted: the control (eager) read 0.5×")
               for w in diff.warnings)
    assert compare(base, base).comparable
