"""report.html and the history page, in-process: what they hold, their escaping and policy, the
share of the tolerance, the ordering of records over commits, and their limits on big records."""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from trtcheck.config.cascade import saved_gate
from trtcheck.core.traits import Kind
from trtcheck.render import html as report_html
from trtcheck.render.history import render_history
from trtcheck.render.html import render_html, tolerance_used
from trtcheck.render.page import CSP, SCRIPT, STYLE
from trtcheck.render.text import KIND_NOTES, PREDICTION_MARK
from trtcheck.results.baseline import compare
from trtcheck.results.figures import ALLOCATOR, Latency, Memory, Stats
from trtcheck.results.history import flag, order
from trtcheck.results.record import Record, save
from trtcheck.results.rows import Row, RowKey
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

PAYLOADS = ('<script>document.title="PWNED"</script>', '<img src=x onerror="alert(1)">',
            "</svg><script>alert(2)</script>", "\u202eevil\x1b[31m")


def _stats(ms: float, spread: float = 0.01) -> Stats:
    return Stats("perf_counter", 3, 100, ms, ms, ms, ms, 0.0, 8, ms * (1 - spread), ms * (1 + spread))


def _latency(speedup: float, spread: float = 0.01) -> Latency:
    return Latency(_stats(1.0), _stats(1 / speedup), _stats(1.0, spread), _stats(1 / speedup, spread),
                   speedup, speedup * (1 - spread), speedup * (1 + spread))


def _out(passed: bool = True, **figures: Any) -> dict[str, Any]:
    return {"path": "", "kind": "float", "passed": passed, "rtol": 1e-2, "atol": 1e-2, **figures}


def _row(name: str, status: Status = Status.PASS, *, backend: str = "inductor",
         kind: Kind = Kind.MEASURED, **fields: Any) -> Row:
    return Row(f"zoo::{name}[float32]", "zoo", name, "float32", backend, "-", kind, status, **fields)


def _record(*rows: Row, **env: Any) -> Record:
    return Record({"git_commit": "a" * 40, "device_name": "cpu", "started": "2026-01-01T00:00:00+00:00",
                   **env}, {"profiles": [], "strict_xfail": False}, list(rows))


def test_the_share_of_the_tolerance_is_bounded_by_what_the_record_holds() -> None:
    # needs half the atol for sure; its worst error is 0.8 of atol: used between 0.5 and 0.8
    used = tolerance_used([_out(min_atol=5e-3, min_rtol=0.0, max_abs=8e-3, max_rel=2.0)])
    assert (used.low, used.high) == (0.5, pytest.approx(0.8))
    # a failing output used more than its tolerance, at most its worst error over atol here
    failed = tolerance_used([_out(False, min_atol=3e-2, min_rtol=math.inf, max_abs=4e-2, max_rel=9.0)])
    assert (failed.low, failed.value) == (1.0, 4.0)
    # a passing output never used more than all of it, whatever the loose upper bound says
    assert tolerance_used([_out(min_atol=0.0, min_rtol=0.0, max_abs=5e-2, max_rel=5.0)]).high == 1.0
    # the worst of several outputs; integers are exact: no share, a match or not
    worst = tolerance_used([_out(min_atol=1e-3, min_rtol=0.0, max_abs=1e-3, max_rel=1.0),
                            _out(min_atol=9e-3, min_rtol=0.0, max_abs=9e-3, max_rel=1.0)])
    assert worst.low == pytest.approx(0.9)
    exact = tolerance_used([{"passed": False, "rtol": 0.0, "atol": 0.0, "max_abs": 3.0}])
    assert exact.exact and exact.value == math.inf
    assert tolerance_used([]) is None


def _svgs(page: str) -> list[ET.Element]:
    """Every SVG of the page, parsed as XML: an escaping slip would break the parse."""
    found = re.findall(r"<svg .*?</svg>", page, re.S)
    return [ET.fromstring(s) for s in found]


def test_the_page_is_self_contained_under_a_strict_policy_and_escapes_the_zoo() -> None:
    rows = [_row(p, Status.FAIL, stage="compare", message=f"bad {p}", latency=_latency(1.5),
                 outputs=[_out(False, min_atol=0.02, min_rtol=1.0, max_abs=0.03, max_rel=1.0)])
            for p in PAYLOADS]
    page = render_html(Judged.of(_record(*rows, device_name=PAYLOADS[0])))
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert "default-src 'none'" in CSP and "unsafe-inline" not in CSP
    assert re.findall(r"<script>", page) == ["<script>"] and SCRIPT in page and STYLE in page
    assert not re.search(r"<[^>]*\son\w+=", page)  # no event handler in any tag
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)  # nothing fetched
    assert "&lt;script&gt;document.title=&quot;PWNED&quot;&lt;/script&gt;" in page
    assert "\u202e" not in page and "\x1b" not in page
    svgs = _svgs(page)
    assert len(svgs) == 2  # accuracy and speed; no memory was measured
    assert all(s.get("class") == "chart" for s in svgs)


def test_the_page_marks_predictions_as_the_other_reports_do() -> None:
    rows = [_row("m", latency=_latency(2.0), outputs=[_out(min_atol=0.0, min_rtol=0.0, max_abs=0.0,
                                                            max_rel=0.0)]),
            _row("m", backend="emulate", kind=Kind.EMULATED, latency=_latency(9.0))]
    page = render_html(Judged.of(_record(*rows)))
    assert f"emulate</code> {PREDICTION_MARK} (emulated)" in page
    assert KIND_NOTES[Kind.EMULATED].replace("'", "&#x27;") in page
    assert "n/a (prediction)" in page
    speed = page.split('id="speed"')[1].split("</section>")[0]
    assert "9×" not in speed and "zoo::m[float32] · emulate" not in speed  # no speedup drawn


def test_memory_shows_the_ratio_only_above_the_floor() -> None:
    big, small = 64 * 2**20, 2**19
    rows = [_row("big", memory=Memory(ALLOCATOR, eager=big, backend=big // 2)),
            _row("small", memory=Memory(ALLOCATOR, eager=small, backend=small))]
    memory = render_html(Judged.of(_record(*rows))).split('id="memory"')[1]
    assert "0.5×" in memory and "—" in memory
    assert "1 MiB (allocator) or 16 MiB (resident)" in memory


def test_failures_name_the_torch_tensorrt_frame_and_link_the_reduce_bundle() -> None:
    trace = ('Traceback (most recent call last):\n  File "/x/site-packages/torch_tensorrt/dynamo/'
             'conversion/impl.py", line 42, in convert\n    raise RuntimeError("no")\nRuntimeError: no\n')
    row = _row("r", Status.ERROR, stage="compile", message="RuntimeError: no", traceback=trace,
               reduction={"reduced": True, "bundle": "repro/zoo-r", "original_nodes": 9,
                          "reduced_nodes": 2, "reproduced": True,
                          "files": ["ISSUE.md", "repro.py", "<x>.py"]})
    failures = render_html(Judged.of(_record(row))).split('id="failures"')[1]
    assert "torch_tensorrt/dynamo/conversion/impl.py:42" in failures
    assert '<a href="repro/zoo-r/ISSUE.md">ISSUE.md</a>' in failures
    assert '<a href="repro/zoo-r/-x-.py">' in failures  # a file name is kept to safe characters


def test_a_diff_draws_each_change_with_both_intervals_and_the_verdict() -> None:
    head = _record(_row("m", latency=_latency(1.0, 0.01)), _row("n", latency=_latency(2.0, 0.01)))
    head.baseline = compare(_record(_row("m", latency=_latency(2.0, 0.01)),
                                    _row("n", latency=_latency(2.0, 0.01))), head).to_dict()
    changes = render_html(Judged.of(head)).split('id="changes"')[1].split("</section>")[0]
    assert "1 speedup regression" in changes
    (chart,) = _svgs(changes)
    rows = [g for g in chart.iter("{http://www.w3.org/2000/svg}g")]
    assert rows[0].get("class") == "fail"
    assert "speedup over eager worsened -50.0%" in "".join(rows[0].itertext())
    assert rows[0].find("{http://www.w3.org/2000/svg}rect[@class='band']") is not None


def test_a_big_record_is_cut_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_html, "CHART_LIMIT", 5)
    monkeypatch.setattr(report_html, "TABLE_LIMIT", 7)
    rows = [_row(f"m{i}", latency=_latency(1 + i / 10)) for i in range(12)]
    page = render_html(Judged.of(_record(*rows)))
    assert "Showing the first 5 of 12 rows" in page
    assert "The first 7 of 12 rows" in page
    speed = _svgs(page.split('id="speed"')[1])[0]
    assert len(list(speed.iter("{http://www.w3.org/2000/svg}circle"))) == 5


def _at(sha: str | None, commit_time: str | None, started: str, *rows: Row) -> Record:
    env = {"git_commit": sha, "git_commit_time": commit_time, "started": started}
    return Record(env, {"profiles": [], "strict_xfail": False}, list(rows))


def test_records_are_ordered_by_commit_time_then_start_and_repeats_grouped() -> None:
    a = _at("a" * 40, "2026-01-02T00:00:00+00:00", "2026-01-05T00:00:00+00:00")
    b1 = _at("b" * 40, "2026-01-01T00:00:00+00:00", "2026-01-07T00:00:00+00:00")
    b2 = _at("b" * 40, "2026-01-01T00:00:00+00:00", "2026-01-06T00:00:00+00:00")
    # no commit time (an older record): placed by its start time; its time zone counts
    c = _at("c" * 40, None, "2026-01-01T12:00:00-06:00")
    commits = order([("a", a), ("b1", b1), ("b2", b2), ("c", c)])
    assert [x.sha[0] for x in commits] == ["b", "c", "a"]
    assert commits[0].sources == ["b2", "b1"]  # repeats in start order
    apart = order([("x", _at(None, None, "2026-01-01")), ("y", _at(None, None, "2026-01-01"))])
    assert [len(x.records) for x in apart] == [1, 1]  # records without a commit stay apart


def test_the_history_marks_regressions_status_changes_and_repeats() -> None:
    def rec(n: int, speedup: float, status: Status = Status.PASS, started: int = 0) -> Record:
        return _at(f"{n:040x}", f"2026-01-0{n + 1}T00:00:00+00:00",
                   f"2026-01-0{n + 1}T0{started}:00:00+00:00",
                   _row("m", latency=_latency(speedup)), _row("n", status, latency=_latency(2.0)))
    commits = order([(str(i), r) for i, r in enumerate(
        [rec(0, 2.0), rec(1, 2.0), rec(1, 2.02, started=1), rec(2, 1.4, Status.FAIL)])])
    assert [len(c.records) for c in commits] == [1, 2, 1]
    flag(commits, lambda rec: saved_gate(rec.options))
    assert [c.regressions for c in commits] == [set(), set(),
                                                {RowKey("zoo::m[float32]", "inductor", "-")}]
    page = render_history(commits, unread=["broken.json: not a record <b>"])
    assert "not read: broken.json: not a record &lt;b&gt;" in page
    assert page.index("zoo::m[float32]") < page.index("zoo::n[float32]")  # flagged rows first
    assert "pass → fail" in page
    svgs = _svgs(page)
    assert len(svgs) == 4  # speedup and latency of each row
    flags = [g.get("class") for s in svgs[:1] for g in s.iter("{http://www.w3.org/2000/svg}g")]
    assert flags == ["fail"]
    # two repeats at the second commit: three points, four dots
    assert svgs[0].find(".//{http://www.w3.org/2000/svg}path[@class='s0 dots']").get("d").count("M") == 4


def test_a_row_that_errored_at_a_commit_breaks_its_line_there() -> None:
    def rec(n: int, row: Row) -> Record:
        return _at(f"{n:040x}", f"2026-01-0{n + 1}T00:00:00+00:00",
                   f"2026-01-0{n + 1}T00:00:00+00:00", row)

    errored = _row("m", Status.ERROR)  # no latency: it failed before its timing
    assert errored.latency is None
    commits = order([(str(i), r) for i, r in enumerate(
        [rec(0, _row("m", latency=_latency(2.0))), rec(1, errored),
         rec(2, _row("m", latency=_latency(2.1)))])])
    speed = _svgs(render_history(commits))[0]
    lines = speed.findall(".//{http://www.w3.org/2000/svg}polyline")
    assert [len(li.get("points").split()) for li in lines] == [1, 1]  # not one line through


def test_a_prediction_row_gets_no_speedup_over_commits() -> None:
    row = _row("p", backend="emulate", kind=Kind.EMULATED, latency=_latency(3.0))
    page = render_history(order([("x", _at("a" * 40, None, "2026-01-01", row))]))
    assert "no speedup or latency is drawn" in page and not _svgs(page)
    assert dataclasses.replace(row, kind=Kind.MEASURED).prediction is False


def test_non_finite_figures_are_drawn_at_the_edge_or_left_out() -> None:
    lat = _latency(2.0)
    rows = [_row("inf", latency=dataclasses.replace(lat, paired_speedup=math.inf, speedup_low=None,
                                                     speedup_high=None)),
            _row("nan", latency=dataclasses.replace(lat, paired_speedup=math.nan)),
            _row("out", Status.FAIL, outputs=[_out(False, min_atol=math.nan, max_abs=math.nan,
                                                   max_rel=math.nan, nan=3)])]
    page = render_html(Judged.of(_record(*rows)))
    speed = _svgs(page.split('id="speed"')[1])[0]
    assert "»" in "".join(speed.itertext())  # an infinite speedup sits at the axis's end
    assert "backend output holds 3 NaN" in page
    commits = order([("a", _record(*rows)), ("b", _record(*rows, git_commit="b" * 40))])
    history = render_history(commits)
    assert len(_svgs(history)) == 2  # the infinite and the NaN speedups: only latencies drawn


def test_the_history_command_skips_a_record_it_cannot_read(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from trtcheck.cli import main

    good = tmp_path / "good" / "results.json"
    save(_record(_row("m", latency=_latency(2.0))), good)
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["history", str(good.parent), str(tmp_path / "bad.json"),
                 str(tmp_path / "." / "bad.json"), "--out", str(tmp_path / "h")]) == 0
    err = capsys.readouterr().err
    assert err.count("bad.json") == 1  # named twice, warned about once
    assert "bad.json" in (tmp_path / "h" / "history.html").read_text()
    assert main(["history", str(tmp_path / "bad.json"), "--out", str(tmp_path / "h2")]) == 2
    assert "no record could be read" in capsys.readouterr().err


def test_a_refused_build_shows_its_evidence_and_not_the_assertion_frame() -> None:
    """An error row keeps the notes its backend gathered before it failed, in report.html and
    report.md; a message that names the converter to report is not followed by the frame where
    the failure showed (Torch-TensorRT's ``assert cuda_engine``)."""
    from trtcheck.errors import REPORT_CONVERTER
    from trtcheck.render import render_markdown
    from trtcheck.results.rows import Evidence

    trace = ('Traceback (most recent call last):\n  File "/x/site-packages/torch_tensorrt/dynamo/'
             'conversion/_TRTInterpreter.py", line 446, in run\n    assert cuda_engine\nAssertionError\n')
    evidence = Evidence(notes=["int64 narrowed to float32 inside the engine by cumsum <x>"],
                        details={"stage": "converters: stopped after 5 nodes converted"})
    row = _row("r", Status.ERROR, backend="lowering", kind=Kind.LOWERED, stage="compile",
               message=f"the builder refused layer 'g'; {REPORT_CONVERTER}", traceback=trace,
               evidence=evidence)
    failures = render_html(Judged.of(_record(row))).split('id="failures"')[1]
    assert "<li>int64 narrowed to float32 inside the engine by cumsum &lt;x&gt;</li>" in failures
    assert "<li>stage reached: converters: stopped after 5 nodes converted</li>" in failures
    assert "Torch-TensorRT frame" not in failures and "_TRTInterpreter.py:446" not in failures.split(
        "<summary>traceback")[0]
    details = render_markdown(Judged.of(_record(row))).split("## Details")[1]
    assert "- int64 narrowed to float32 inside the engine by cumsum " in details
    assert "- stage reached: converters: stopped after 5 nodes converted" in details
