"""baseline.py and its reports: per-row changes against a base record, the noise-aware
regression verdict, and the gate, on synthetic records; ``trtcheck diff`` through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trtcheck.cli import _verdict as exit_code
from trtcheck.config.options import Gate
from trtcheck.render import render_changes, render_comment, render_junit, render_markdown
from trtcheck.results.baseline import IMPROVEMENT, NOISE, REGRESSION, SMALL, Diff, compare
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import Record, load, save
from trtcheck.results.rows import Kind, Row
from trtcheck.status import Status

ENV = {"device_name": "NVIDIA H200", "driver": "570.1", "torch": "2.11.0",
       "torch_tensorrt": None, "git_commit": "a" * 40}


def _stats(ms: float, spread: float = 0.0) -> Stats:
    return Stats("cuda-event", 3, 100, ms, ms, ms, ms, 0.0, 8, ms * (1 - spread), ms * (1 + spread))


def _latency(speedup: float, spread: float, eager_ms: float = 1.0) -> Latency:
    """A measured latency whose speedup interval is ±``spread`` (relative)."""
    backend_ms = eager_ms / speedup
    return Latency(_stats(eager_ms * 1.5), _stats(backend_ms * 1.5), _stats(eager_ms, spread),
                   _stats(backend_ms, spread), speedup, speedup * (1 - spread),
                   speedup * (1 + spread))


def _row(name: str, latency: Latency | None = None, *, status: Status = Status.PASS,
         backend: str = "inductor", kind: Kind = Kind.MEASURED, rel: float = 1e-6) -> Row:
    return Row(f"zoo::{name}[float32]", "zoo", name, "float32", backend, "-", kind, status,
               outputs=[{"path": "", "passed": status is Status.PASS, "max_rel": rel}],
               latency=latency)


def _record(*rows: Row, env: dict | None = None) -> Record:
    return Record(dict(env or ENV), {"profiles": [], "strict_xfail": False}, list(rows))


def _verdict(before: Latency, after: Latency, **kw) -> str:
    diff = compare(_record(_row("m", before)), _record(_row("m", after)), **kw)
    (change,) = diff.changes
    assert change.latency is not None
    return change.latency.verdict


def test_twenty_percent_slower_with_tight_intervals_regresses() -> None:
    assert _verdict(_latency(2.0, 0.01), _latency(2.0 / 1.2, 0.01)) == REGRESSION


def test_twenty_percent_slower_with_overlapping_intervals_does_not() -> None:
    assert _verdict(_latency(2.0, 0.15), _latency(2.0 / 1.2, 0.15)) == NOISE


def test_three_percent_slower_does_not_even_with_tight_intervals() -> None:
    assert _verdict(_latency(2.0, 0.001), _latency(2.0 / 1.03, 0.001)) == SMALL


def test_faster_beyond_noise_is_an_improvement_and_the_threshold_is_configurable() -> None:
    assert _verdict(_latency(2.0, 0.01), _latency(2.5, 0.01)) == IMPROVEMENT
    assert _verdict(_latency(2.0, 0.001), _latency(2.0 / 1.03, 0.001), threshold=0.02) == REGRESSION


def test_latency_metric_gates_on_absolute_device_time_not_the_speedup() -> None:
    # eager got slower too (a slower machine): the speedup holds, the absolute time does not
    before, after = _latency(2.0, 0.01, eager_ms=1.0), _latency(2.0, 0.01, eager_ms=1.3)
    assert _verdict(before, after) == SMALL
    assert _verdict(before, after, metric="latency") == REGRESSION


def test_old_baseline_without_intervals_uses_the_threshold_alone() -> None:
    old = Latency(_stats(2.0), _stats(1.0))
    assert old.interval is None
    assert _verdict(old, _latency(2.0 / 1.2, 0.01)) == REGRESSION
    assert _verdict(old, _latency(2.0 / 1.03, 0.01)) == SMALL


def test_status_changes_new_and_removed_rows() -> None:
    base = _record(_row("a", _latency(2, 0.01)), _row("b", _latency(2, 0.01)),
                   _row("gone", _latency(2, 0.01)))
    head = _record(_row("a", _latency(2, 0.01), status=Status.FAIL, rel=0.3),
                   _row("b", _latency(2, 0.01)), _row("new", _latency(2, 0.01)))
    diff = compare(base, head)
    shown = {c.case_id.split("::")[1]: (c.before, c.after) for c in diff.changes if c.shown}
    assert shown == {"a[float32]": ("pass", "fail"), "new[float32]": (None, "pass"),
                     "gone[float32]": ("pass", None)}
    a = next(c for c in diff.changes if c.case_id == "zoo::a[float32]")
    assert a.accuracy_changed and (a.before_error, a.after_error) == (1e-6, 0.3)


def test_prediction_rows_get_no_latency_verdict() -> None:
    base = _record(_row("m", _latency(2, 0.01), backend="emulate", kind=Kind.EMULATED))
    head = _record(_row("m", _latency(1, 0.01), backend="emulate", kind=Kind.EMULATED))
    (change,) = compare(base, head).changes
    assert change.latency is None and not change.shown


def test_environment_differences_are_warned() -> None:
    head_env = {**ENV, "device_name": "NVIDIA A100", "torch": "2.12.0"}
    warnings = compare(_record(), _record(env=head_env)).warnings
    assert len(warnings) == 2
    assert "another GPU: NVIDIA H200 (now NVIDIA A100)" in warnings[0]
    assert "another torch: 2.11.0 (now 2.12.0)" in warnings[1]
    # a schema-1 baseline without these facts gives no warning
    assert compare(_record(env={}), _record()).warnings == []


def test_gate_fails_on_regressions_only_when_asked() -> None:
    head = _record(_row("m", _latency(2.0 / 1.2, 0.01)))
    head.baseline = compare(_record(_row("m", _latency(2.0, 0.01))), head).to_dict()
    assert exit_code(head, False, Gate()) == 0
    assert exit_code(head, False, Gate(fail_on="regression")) == 1


def test_reports_show_the_changes_first_and_a_status_change_always(tmp_path: Path) -> None:
    base = _record(_row("a", _latency(2, 0.01)), _row("slow", _latency(2, 0.01)))
    head = _record(_row("a", _latency(2, 0.01), status=Status.FAIL, rel=0.3),
                   _row("slow", _latency(2.0 / 1.2, 0.01)))
    head.baseline = compare(base, head).to_dict()
    save(head, tmp_path / "results.json")
    again = load(tmp_path / "results.json")
    assert Diff.from_dict(again.baseline) == Diff.from_dict(head.baseline)
    report = render_markdown(again, strict_xfail=False)
    assert report.index("## Changes against the baseline") < report.index("## Summary")
    changes = report.split("## Changes against the baseline")[1].split("## ")[0]
    assert "1 latency regressions, 1 status changes" in changes
    assert "| zoo::a\\[float32\\] | inductor | - | pass → **fail** | 1e-06 → 0.3 |" in changes
    assert "**+20.0% slower: regression**" in changes
    comment = render_comment(again, strict_xfail=False,
                             changes=render_changes(again, heading="####"))
    assert comment.index("#### Changes against the baseline") < comment.index("Needs attention")
    tiny = render_comment(again, strict_xfail=False, limit=2500,
                          changes=render_changes(again, heading="####"))
    assert "pass → **fail**" in tiny and len(tiny) <= 2500


def test_prediction_rows_show_no_speedup_anywhere() -> None:
    row = _row("m", _latency(3.0, 0.01), backend="emulate", kind=Kind.EMULATED)
    record = _record(row)
    record.baseline = compare(_record(row), record).to_dict()
    report = render_markdown(record, strict_xfail=False)
    latency_table = report.split("## Latency")[1]
    assert "n/a (prediction)" in latency_table and "3×" not in latency_table
    assert "speedup: n/a (prediction)" in render_junit(record, strict_xfail=False)
    comment = render_comment(record, strict_xfail=False, changes=render_changes(record))
    assert "n/a (prediction)" in comment and "3×" not in comment


def _write(path: Path, record: Record) -> Path:
    save(record, path)
    return path


@pytest.mark.slow
def test_diff_command_renders_without_running_and_gates(tmp_path: Path) -> None:
    base = _write(tmp_path / "base.json", _record(_row("m", _latency(2.0, 0.01))))
    head_record = _record(_row("m", _latency(2.0 / 1.2, 0.01)))
    head = _write(tmp_path / "head.json", head_record)

    def diff(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "trtcheck", "diff", str(base), str(head),
                               *extra], capture_output=True, text=True, check=False)

    plain = diff()
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("## Changes against the baseline")
    assert "**+20.0% slower: regression**" in plain.stdout
    assert diff("--fail-on", "regression").returncode == 1
    assert diff("--fail-on", "regression", "--threshold", "0.25").returncode == 0
    out = tmp_path / "out"
    assert diff("--out", str(out)).returncode == 0
    saved = json.loads((out / "results.json").read_text())
    assert saved["baseline"]["metric"] == "speedup"
    assert "Changes against the baseline" in (out / "comment.md").read_text()
    bad = diff("--metric", "latncy")
    assert bad.returncode == 2 and "latncy" in bad.stderr


def test_gate_settings_resolve_from_config_and_command_line(tmp_path: Path) -> None:
    from trtcheck.config.options import resolve, saved_gate
    from trtcheck.errors import ConfigError, UsageError

    (tmp_path / "trtcheck.toml").write_text('regression_metric = "latency"\n'
                                            "regression_threshold = 0.1\n")
    opts = resolve((tmp_path,), fail_on="regression")
    assert opts.gate == Gate("regression", "latency", 0.1)
    assert saved_gate(opts.to_dict()) == opts.gate
    assert saved_gate(opts.to_dict(), regression_metric="speedup").metric == "speedup"
    assert saved_gate({}) == Gate()  # a record from before the gate existed
    (tmp_path / "trtcheck.toml").write_text('regression-metric = "latency"\n')
    with pytest.raises(ConfigError, match="did you mean 'regression_metric'"):
        resolve((tmp_path,))
    (tmp_path / "trtcheck.toml").write_text("regression_threshold = -1\n")
    with pytest.raises(ConfigError, match="regression_threshold: must be a fraction"):
        resolve((tmp_path,))
    (tmp_path / "trtcheck.toml").write_text("")
    with pytest.raises(UsageError, match=r"--baseline: .*missing\.json is not a file"):
        resolve((tmp_path,), baseline=tmp_path / "missing.json")


def test_a_row_unstable_in_either_run_is_not_gated() -> None:
    from dataclasses import replace

    from trtcheck.results.baseline import UNSTABLE

    slower = _latency(2.0 / 1.5, 0.01)
    assert _verdict(_latency(2.0, 0.01), slower) == REGRESSION
    assert _verdict(replace(_latency(2.0, 0.01), unstable=True), slower) == UNSTABLE
    assert _verdict(_latency(2.0, 0.01), replace(slower, unstable=True)) == UNSTABLE
