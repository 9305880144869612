"""baseline.py and its reports: per-row changes against a base record, the noise-aware
regression verdict, and the gate, on synthetic records; ``trtcheck diff`` through the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import TESTS, in_process
from trtcheck.config.options import Gate
from trtcheck.core.traits import Kind
from trtcheck.render import render_changes, render_comment, render_junit, render_markdown
from trtcheck.render.changes import change_text, count_line
from trtcheck.results.baseline import (
    IMPROVEMENT,
    NOISE,
    NOT_COMPARABLE,
    NOT_GATED,
    REGRESSION,
    SMALL,
    UNDECIDED,
    Diff,
    LatencyChange,
    compare,
)
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import FIGURES_SCHEMA, Record, load, save
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged, job_verdict
from trtcheck.status import Status, Verdict

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


def _gated(record: Record, fail_on: str = "regression") -> Verdict:
    """The job's verdict of ``record`` run with ``--fail-on fail_on``."""
    record.options["gate"] = {"fail_on": fail_on, "metric": "speedup", "threshold": 0.07}
    return job_verdict(record).verdict


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
    assert _gated(head, "failures") is Verdict.PASS
    assert _gated(head) is Verdict.FAIL


def test_reports_show_the_changes_first_and_a_status_change_always(tmp_path: Path) -> None:
    base = _record(_row("a", _latency(2, 0.01)), _row("slow", _latency(2, 0.01)))
    head = _record(_row("a", _latency(2, 0.01), status=Status.FAIL, rel=0.3),
                   _row("slow", _latency(2.0 / 1.2, 0.01)))
    head.baseline = compare(base, head).to_dict()
    save(head, tmp_path / "results.json")
    again = load(tmp_path / "results.json")
    assert Diff.from_dict(again.baseline) == Diff.from_dict(head.baseline)
    report = render_markdown(Judged.of(again))
    assert report.index("## Changes against the baseline") < report.index("## Summary")
    changes = report.split("## Changes against the baseline")[1].split("## ")[0]
    assert "1 speedup regression, 1 status change, 1 accuracy change; 0 rows unchanged" in changes
    assert "| zoo::a\\[float32\\] | inductor | - | pass → **fail** | 1e-06 → 0.3 |" in changes
    assert "**speedup over eager worsened -16.7%; slower +20.0%**" in changes
    comment = render_comment(Judged.of(again),
                             changes=render_changes(again, heading="####"))
    assert comment.index("#### Changes against the baseline") < comment.index("Needs attention")
    tiny = render_comment(Judged.of(again), limit=2500,
                          changes=render_changes(again, heading="####"))
    assert "pass → **fail**" in tiny and len(tiny) <= 2500


def test_prediction_rows_show_no_speedup_anywhere() -> None:
    row = _row("m", _latency(3.0, 0.01), backend="emulate", kind=Kind.EMULATED)
    record = _record(row)
    record.baseline = compare(_record(row), record).to_dict()
    report = render_markdown(Judged.of(record))
    latency_table = report.split("## Latency")[1]
    assert "n/a (prediction)" in latency_table and "3×" not in latency_table
    assert "speedup [95% interval]: n/a (prediction)" in render_junit(record)
    comment = render_comment(Judged.of(record), changes=render_changes(record))
    assert "No speedup: every backend of this run predicts" in comment and "3×" not in comment


def _write(path: Path, record: Record) -> Path:
    save(record, path)
    return path


def test_diff_command_renders_without_running_and_gates(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _write(tmp_path / "base.json", _record(_row("m", _latency(2.0, 0.01))))
    head_record = _record(_row("m", _latency(2.0 / 1.2, 0.01)))
    head = _write(tmp_path / "head.json", head_record)

    def diff(*extra: str) -> subprocess.CompletedProcess[str]:
        return in_process(capsys, "diff", base, head, *extra)

    plain = diff()
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("## Changes against the baseline")
    assert "**speedup over eager worsened -16.7%; slower +20.0%**" in plain.stdout
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
    from trtcheck.config.cascade import resolve, saved_gate
    from trtcheck.errors import ConfigError, UsageError

    (tmp_path / "trtcheck.toml").write_text('metric = "latency"\nthreshold = "10%"\n')
    opts = resolve((tmp_path,), fail_on=("regression",))
    assert opts.gate == Gate(("regression",), "latency", 0.1) and opts.config_warnings == ()
    both = resolve((tmp_path,), fail_on=("regression", "output-change"))
    assert both.gate.fail_on == ("regression", "output-change")
    assert saved_gate(both.to_dict()) == both.gate
    assert saved_gate({"gate": {"fail_on": "regression"}}).fail_on == ("regression",)  # older
    (tmp_path / "trtcheck.toml").write_text('fail_on = ["regression", "output-change"]\n')
    assert resolve((tmp_path,)).gate.fail_on == ("regression", "output-change")
    (tmp_path / "trtcheck.toml").write_text('fail_on = ["regression", "outputs"]\n')
    with pytest.raises(ConfigError, match="'outputs' is not one of"):
        resolve((tmp_path,))
    assert saved_gate(opts.to_dict()) == opts.gate
    assert saved_gate(opts.to_dict(), metric="speedup").metric == "speedup"
    assert saved_gate({}) == Gate()  # a record from before the gate existed
    # the old keys still read, each with a warning; both names at once is refused
    (tmp_path / "trtcheck.toml").write_text('regression_metric = "latency"\n'
                                            "regression_threshold = 0.1\n")
    old = resolve((tmp_path,))
    assert (old.gate.metric, old.gate.threshold) == ("latency", 0.1)
    assert [w.split(": ")[1] for w in old.config_warnings] == [
        "regression_metric is now called metric; the old name is still read",
        "regression_threshold is now called threshold; the old name is still read"]
    (tmp_path / "trtcheck.toml").write_text('metric = "latency"\nregression_metric = "speedup"\n')
    with pytest.raises(ConfigError, match="regression_metric and metric are one setting"):
        resolve((tmp_path,))
    (tmp_path / "trtcheck.toml").write_text('metrik = "latency"\n')
    with pytest.raises(ConfigError, match="did you mean 'metric'"):
        resolve((tmp_path,))
    (tmp_path / "trtcheck.toml").write_text("threshold = -1\n")
    with pytest.raises(ConfigError, match="threshold: must be a fraction"):
        resolve((tmp_path,))
    # a bare number of 1 or more is refused: 7 meant 7%, not 700%
    (tmp_path / "trtcheck.toml").write_text("")
    for given, fraction in (("0.07", 0.07), ("7%", 0.07), ("150%", 1.5), ("0", 0.0)):
        assert resolve((tmp_path,), threshold=given).gate.threshold == pytest.approx(fraction)
    for refused in ("7", "1", "1.0", "seven", "-3%"):
        with pytest.raises(ConfigError, match="--threshold"):
            resolve((tmp_path,), threshold=refused)
    (tmp_path / "trtcheck.toml").write_text("")
    with pytest.raises(UsageError, match=r"--baseline: .*missing\.json is not a file"):
        resolve((tmp_path,), baseline=tmp_path / "missing.json")


def test_a_row_unstable_in_either_run_is_not_gated_unless_its_intervals_are_far_apart() -> None:
    from dataclasses import replace

    from trtcheck.results.baseline import UNSTABLE

    # 20% slower, intervals ±6%: apart, but their nearest ends only 6.4% apart (under 7%)
    slower = _latency(2.0 / 1.2, 0.06)
    assert _verdict(_latency(2.0, 0.06), slower) == REGRESSION
    assert _verdict(replace(_latency(2.0, 0.06), unstable=True), slower) == UNSTABLE
    assert _verdict(_latency(2.0, 0.06), replace(slower, unstable=True)) == UNSTABLE
    # within the threshold it stays below threshold, unstable or not
    assert _verdict(replace(_latency(2.0, 0.01), unstable=True), _latency(1.98, 0.01)) == SMALL
    # 50% slower, intervals apart: run-to-run noise can do that to an unstable row; not gated
    assert _verdict(replace(_latency(2.0, 0.01), unstable=True),
                    replace(_latency(2.0 / 1.5, 0.01), unstable=True)) == UNSTABLE
    # five times slower: the nearest ends alone differ by more than FAR_APART, so it is judged
    assert _verdict(replace(_latency(2.0, 0.01), unstable=True),
                    replace(_latency(2.0 / 5, 0.01), unstable=True)) == REGRESSION
    assert _verdict(replace(_latency(2.0, 0.01), unstable=True),
                    replace(_latency(2.0 * 5, 0.01), unstable=True)) == IMPROVEMENT


def test_a_tenfold_latency_change_with_intervals_apart_is_gated_however_wide_they_are() -> None:
    """0.5 ms [0.4, 0.6] to 5 ms [4, 6], both flagged unstable (±20%): gated under the latency
    metric, and the run with --fail-on regression fails."""
    from dataclasses import replace

    before = replace(_latency(2.0, 0.2, eager_ms=1.0), unstable=True)
    after = replace(_latency(2.0, 0.2, eager_ms=10.0), unstable=True)  # eager slower alike
    assert _verdict(before, after, metric="latency") == REGRESSION
    head = _record(_row("m", after))
    head.baseline = compare(_record(_row("m", before)), head, metric="latency").to_dict()
    head.options["gate"] = {"fail_on": "regression", "metric": "latency", "threshold": 0.07}
    judged = job_verdict(head)
    assert judged.exit_code == 1 and judged.headline == "FAIL: 1 latency regression"


@pytest.mark.parametrize("fail_on", ["regression", "failures"])
def test_a_planted_regression_against_a_baseline_heads_every_report_as_the_exit_code_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str) -> None:
    """``run --baseline`` on a head ten times slower in eager and compiled alike (the speedup
    over eager unchanged), re-rendered by ``trtcheck report`` in-process: with ``--fail-on
    regression`` the exit code is 1 and every headline starts with FAIL, junit.xml holds the
    regression as a failing testcase and the Action's outputs say so; without, PASS everywhere
    and the regression is said not gated."""
    import xml.etree.ElementTree as ET

    from tests.helpers import assert_headlines, read_outputs
    from trtcheck.cli import github, main

    steady = _latency(2.0, 0.01)
    base = _record(_row("m", _latency(2.0, 0.01, eager_ms=0.2)), _row("ok", steady))
    head = _record(_row("m", _latency(2.0, 0.01, eager_ms=2.0)), _row("ok", steady))
    head.options["gate"] = {"fail_on": fail_on, "metric": "latency", "threshold": 0.07}
    head.baseline = compare(base, head, metric="latency").to_dict()
    out = tmp_path / "rep"
    save(head, out / "results.json")
    code = main(["report", str(out)])
    terminal = capsys.readouterr().out
    assert code == (1 if fail_on == "regression" else 0)
    assert_headlines(out, code, terminal)
    failures = ET.parse(out / "junit.xml").getroot().findall(".//failure")
    if fail_on == "regression":
        assert terminal.splitlines()[-2] == "FAIL: 1 latency regression"
        assert "total 2: 2 pass; 0 fail the run; 1 latency regression fails it too" in terminal
        (failure,) = failures
        assert failure.get("type") == "regression"
        assert failure.get("message") == "latency regression against the baseline: slower +900.0%"
    else:
        assert "PASS: 2 rows, none fails the run; 1 latency regression not gated" in terminal
        assert failures == []
    env = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "output")}
    github.write_outputs(code, out, Judged.of(load(out / "results.json")), env=env)
    outputs = read_outputs(tmp_path / "output")
    assert outputs["verdict"].startswith("FAIL: " if code else "PASS: ")
    assert outputs["regressions"] == "1" and outputs["exit-code"] == str(code)


# --- the words of a change, and how changes are counted ----------------------------------------

def _change(metric: str, slowdown: float, verdict: str = SMALL, **kw: object) -> LatencyChange:
    return LatencyChange(metric, 1.0, 1.0, slowdown, verdict, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "text"), [
    (_change("speedup", 1 / 0.83, REGRESSION), "speedup over eager worsened -17.0%"),
    (_change("speedup", 1 / 1.25, IMPROVEMENT), "speedup over eager improved +25.0%"),
    (_change("speedup", 0.575 / 0.00165, REGRESSION), "speedup over eager worsened -99.7%"),
    (_change("speedup", 1.0), "speedup over eager +0.0% (below threshold)"),
    (_change("latency", 1.2, REGRESSION), "slower +20.0%"),
    (_change("latency", 0.8, IMPROVEMENT), "faster -20.0%"),
    (_change("latency", 3.0, NOISE), "latency +200.0% (within noise)"),
    # a speedup over eager that improved on a model that got slower says both, on one line
    (_change("speedup", 1 / 2.39, IMPROVEMENT, other_metric="latency", other_slowdown=6.13,
             other_verdict=REGRESSION), "speedup over eager improved +139.0%; slower +513.0%"),
    (_change("latency", 1.2, REGRESSION, interval=(1.1, 1.3), processes=(6, 6)),
     "slower +20.0% [+10.0%, +30.0%]"),
    (_change("speedup", 1.25, REGRESSION, interval=(1.1, 1.5), processes=(6, 6)),
     "speedup over eager worsened -20.0% [-33.3%, -9.1%]"),
])
def test_a_change_is_written_one_way_and_faster_or_slower_means_latency(
        change: LatencyChange, text: str) -> None:
    assert change_text(change) == text


def test_a_model_slower_in_eager_and_compiled_alike_is_never_faster_nor_green() -> None:
    """The head adds work to eager and compiled alike: the speedup over eager improves (2.39×
    here) while the model gets six times slower. Under either metric, no report calls it
    faster, and report.html draws it amber or red, never green."""
    from trtcheck.render import render_html

    before = _latency(0.5, 0.01, eager_ms=0.1)  # backend 0.2 ms
    after = _latency(0.5 * 2.39, 0.01, eager_ms=0.1 * 6 * 2.39)  # backend 1.2 ms
    for metric, gated in (("speedup", IMPROVEMENT), ("latency", REGRESSION)):
        head = _record(_row("mlp", after))
        diff = compare(_record(_row("mlp", before)), head, metric=metric)
        (change,) = diff.changes
        assert change.latency is not None and change.latency.verdict == gated
        assert change.latency.worsened and change.shown
        head.baseline = diff.to_dict()
        text = render_changes(head)
        line = next(li for li in text.splitlines() if li.startswith("| zoo::mlp"))
        assert "slower +500.0%" in line and "faster" not in text
        assert "speedup over eager improved +139.0%" in line
        assert text.count("backend ms (median)") == 1  # one column of the backend's ms
        page = render_html(Judged.of(head))
        assert '<g class="pass">' not in page.split('id="changes"')[1].split("</section>")[0]


def test_terminal_and_reports_count_the_same_changes() -> None:
    base = _record(_row("a", _latency(2, 0.01)), _row("b", _latency(2, 0.01)),
                   _row("gone", _latency(2, 0.01)))
    head = _record(_row("a", _latency(2, 0.01), status=Status.FAIL),
                   _row("b", _latency(2, 0.01)), _row("new", _latency(2, 0.01)))
    diff = compare(base, head)
    assert diff.tally() == {REGRESSION: 0, "status": 1, "new": 1, "removed": 1,
                            IMPROVEMENT: 0, "accuracy": 0, "other": 0, NOT_COMPARABLE: 0,
                            UNDECIDED: 0, NOT_GATED: 0, "unchanged": 1}
    line = count_line(diff)
    assert line == "0 speedup regressions, 1 status change, 1 new row, 1 removed row; 1 row unchanged"
    head.baseline = diff.to_dict()
    assert f"{line}." in render_markdown(Judged.of(head))
    assert f"{line}." in render_changes(head, heading="####")


# --- a baseline of an older record schema ------------------------------------------------------

def test_an_older_schema_marks_changed_figures_not_comparable_and_gates_none() -> None:
    base = _record(_row("slow", _latency(2, 0.01)), _row("same", _latency(2, 0.001)),
                   _row("broken", _latency(2, 0.01)))
    base.source_schema = FIGURES_SCHEMA - 1
    head = _record(_row("slow", _latency(1, 0.01)), _row("same", _latency(2, 0.001)),
                   _row("broken", _latency(2, 0.01), status=Status.FAIL))
    diff = compare(base, head)
    verdicts = {c.case_id.split("::")[1]: c.latency.verdict for c in diff.changes if c.latency}
    assert verdicts == {"slow[float32]": NOT_COMPARABLE, "same[float32]": SMALL,
                        "broken[float32]": SMALL}
    assert not diff.regressions and not diff.comparable
    assert "record schema 2, whose control, speedup and memory figures meant something else" \
        in diff.warnings[0]
    head.baseline = diff.to_dict()
    # fails for the failing row only: no figure of an older schema counts as a regression
    assert _gated(head) is Verdict.FAIL
    text = render_changes(head)
    assert "| zoo::broken\\[float32\\] | inductor | - | pass → **fail** |" in text
    assert "speedup over eager -50.0% \\(not comparable\\)" in text
    assert "1 row with figures not comparable" in text and "nothing is gated on them" in text
    base.source_schema = FIGURES_SCHEMA  # the same figures, comparable, regress
    assert [c.case_id for c in compare(base, head).regressions] == ["zoo::slow[float32]"]


SCHEMA_2 = TESTS / "data" / "results-schema2.json"


def test_diff_against_a_schema_2_record_gates_no_figure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real schema-2 record (``trtcheck run fixtures/rope.py fixtures/indices.py --backend
    eager --backend emulate`` before schema 3) against itself as schema 3, with one row's
    speedup halved and another's status changed."""
    data = json.loads(SCHEMA_2.read_text())
    assert data["schema"] == 2
    for row in data["rows"]:  # measured steady, so that only comparability decides the gate
        if row.get("latency"):
            row["latency"]["unstable"] = False
    speedups = ("paired_speedup", "speedup_low", "speedup_high")
    eager = sorted((r for r in data["rows"] if r["backend"] == "eager" and r["latency"]),
                   key=lambda r: r["latency"]["speedup_high"] / r["latency"]["speedup_low"])
    # Read as schema 3, the eager rows are the control and must read 1.00× (schema 2's control
    # meant something else); the steadiest one stands for a measured backend.
    for row in eager:
        row["latency"] |= {k: row["latency"][k] / row["latency"]["paired_speedup"] for k in speedups}
    eager[0]["backend"] = "inductor"
    head = {**data, "schema": 3, "rows": [dict(r) for r in data["rows"]]}
    slow, changed = head["rows"][data["rows"].index(eager[0])], head["rows"][data["rows"].index(eager[1])]
    # halved beyond its interval: a regression if comparable
    slow["latency"] = {**slow["latency"], **{k: slow["latency"][k] / 2 for k in speedups}}
    changed["status"] = "unsupported"
    (tmp_path / "head.json").write_text(json.dumps(head))
    (tmp_path / "base3.json").write_text(json.dumps({**data, "schema": 3}))
    (tmp_path / "base2.json").write_text(json.dumps(data))

    def diff(base: Path) -> subprocess.CompletedProcess[str]:
        return in_process(capsys, "diff", base, tmp_path / "head.json", "--fail-on", "regression")

    old = diff(tmp_path / "base2.json")
    assert old.returncode == 0, old.stdout + old.stderr
    assert "not comparable" in old.stdout and "regression**" not in old.stdout
    assert "pass → unsupported" in old.stdout
    assert "0 speedup regressions, 1 status change, 1 row with figures not comparable" \
        in old.stdout
    same_schema = diff(tmp_path / "base3.json")
    assert same_schema.returncode == 1 and "speedup over eager worsened -50.0%**" in same_schema.stdout


def test_a_run_against_a_baseline_counts_alike_on_the_terminal_and_in_every_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    def model(name: str) -> str:
        return (f"@trtcheck.model(variants=('float32',))\ndef {name}(variant):\n"
                f"    return torch.nn.Linear(4, 4), (torch.ones(2, 4),)\n")

    def run(names: tuple[str, ...], out: str, *extra: str) -> subprocess.CompletedProcess[str]:
        # a zoo folder a run, as this process keeps the modules it imported
        (tmp_path / out / "zoo").mkdir(parents=True)
        (tmp_path / out / "zoo" / "m.py").write_text("import torch, trtcheck\n\n"
                                                     + "\n".join(model(n) for n in names))
        return in_process(capsys, "run", f"{out}/zoo", "--backend", "eager", "--no-isolate",
                          "--out", out, *extra)

    assert run(("kept", "gone"), "base").returncode == 0
    proc = run(("kept", "new"), "head", "--baseline", "base/results.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [said] = [line.removeprefix("against the baseline: ") for line in proc.stdout.splitlines()
              if line.startswith("against the baseline: ")]
    assert said.startswith("0 speedup regressions, 0 status changes, ")
    assert "1 new row, 1 removed row" in said
    for report in ("report.md", "comment.md"):
        assert f"{said}." in (tmp_path / "head" / report).read_text(), report


def test_the_changes_table_keeps_the_prediction_mark_and_names_the_clock() -> None:
    """A prediction row stays marked † in the changes; the latency metric on a CPU run speaks of
    CPU time, not GPU time."""
    cpu = {**ENV, "device": "cpu", "device_name": "x86_64"}
    base = _record(_row("m", backend="lowering", kind=Kind.LOWERED), env=cpu)
    head = _record(_row("m", backend="lowering", kind=Kind.LOWERED, status=Status.FAIL), env=cpu)
    head.baseline = compare(base, head, metric="latency").to_dict()
    text = render_changes(head)
    assert "| zoo::m\\[float32\\] | lowering † | - | pass → **fail** |" in text
    assert "the backend's absolute CPU time" in text and "GPU" not in text.split("Baseline:")[1][:200]
