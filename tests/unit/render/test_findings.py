"""Narrowings and the stand-in's remarks on passing rows, in every report, from records: the
sentences are the lowering backend's own (trtcheck.results.findings writes and reads them)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from trtcheck.core.traits import Kind
from trtcheck.pytest_plugin import outcome
from trtcheck.render.comment import render_comment
from trtcheck.render.html import render_html
from trtcheck.render.junit import render_junit
from trtcheck.render.markdown import render_markdown
from trtcheck.results import findings
from trtcheck.results.record import Record
from trtcheck.results.rows import Evidence, Row
from trtcheck.results.verdict import Judged, job_verdict
from trtcheck.status import Status

CUMSUM = findings.narrowing("int64", "float32", "cumsum", "aten.cumsum.default",
                            "its int64 result is built as float32", "|value| <= 2**24")
GATHER = findings.remark("the stand-in returns 0 for an out-of-bounds gather index; TensorRT's "
                         "result there is undefined", "(Gather) [48]", "_embedding_bag",
                         "aten._embedding_bag.default", "dlrm.py:12", used=False)
MASKED = findings.remark("the stand-in returns NaN for a fully masked attention row (softmax over "
                         "no key); TensorRT's behaviour there is undocumented", "attn", used=True)


def _row(model: str, status: Status = Status.PASS, **evidence: object) -> Row:
    return Row(f"zoo::{model}[int64]", "zoo.py", model, "int64", "lowering", "default",
               Kind.LOWERED, status, evidence=Evidence(**evidence))  # type: ignore[arg-type]


def _record(fail_on: tuple[str, ...] = ("failures",)) -> Record:
    return Record({}, {"gate": {"fail_on": list(fail_on)}}, [
        _row("scan", notes=["lowering: 2.13.0", CUMSUM]),
        _row("bag", remark=f"{GATHER}; {MASKED}"),
        _row("broken", Status.FAIL, notes=[CUMSUM.replace("cumsum", "other")]),
        _row("plain"),
    ])


def test_a_row_s_findings_are_read_back_from_its_notes_and_remark() -> None:
    scan, bag, *_ = _record().rows
    [narrowed] = findings.findings(scan)
    assert (narrowed.kind, narrowed.converter, narrowed.node) == (
        findings.NARROWING, "aten.cumsum.default", "cumsum")
    assert (narrowed.change, narrowed.exact) == ("int64 → float32", "|value| <= 2**24")
    gather, masked = findings.findings(bag)
    assert (gather.text, gather.converter, gather.node) == (
        GATHER, "aten._embedding_bag.default", "_embedding_bag")
    assert GATHER.endswith("at dlrm.py:12; value not used)")
    assert (masked.text, masked.converter) == (MASKED, findings.UNKNOWN)
    # a failing row's notes are in its details already: only passing rows count
    assert [r.model for r, _ in findings.passing_findings(_record().rows)] == ["scan", "bag", "bag"]


def test_every_report_lists_the_passing_rows_findings_by_converter() -> None:
    record = _record()
    report = render_markdown(Judged.of(record))
    section = report.split("## Narrowings and remarks on passing rows")[1].split("\n## ")[0]
    assert "**aten.cumsum.default**" in section
    assert "- `int64 → float32`, exact while `|value| <= 2**24`: int64 narrowed to float32 inside " \
           "the engine by cumsum" in section
    assert "zoo::scan\\[int64\\] · lowering · default" in section
    assert "aten.\\_embedding\\_bag.default" in section and "value not used" in section
    assert "other" not in section  # the failing row's
    comment = render_comment(Judged.of(record))
    assert "<details><summary>1 narrowing and 2 remarks on passing rows</summary>" in comment
    assert "exact while `|value| <= 2**24`" in comment
    html = render_html(Judged.of(record))
    assert '<section id="findings">' in html and "inside the engine by cumsum" in html
    assert "|value| &lt;= 2**24" in html
    cases = {c.get("name"): c for c in ET.fromstring(render_junit(record)).iter("testcase")}
    scan = cases["scan[int64] lowering [prediction: lowered]"]
    assert [(p.get("name"), p.get("value")) for p in scan.iter("property")] == [
        ("trtcheck.narrowing", CUMSUM)]
    assert f"narrowing: {CUMSUM}" in (scan.findtext("system-out") or "")
    assert scan.find("failure") is None  # a finding leaves the row passing
    # the job summary is report.md (or comment.md when that is too long): both hold them


def test_a_passing_row_s_pytest_item_carries_its_findings() -> None:
    row = _record().rows[0]
    assert ("trtcheck.narrowing", CUMSUM) in outcome.properties(row)
    report = _report(row)
    assert report.outcome == "passed"
    assert dict(report.sections)["trtcheck findings"] == f"narrowing: {CUMSUM}"


@pytest.mark.parametrize("fail_on", [("failures",), ("failures", "narrowing")])
def test_fail_on_narrowing_fails_the_run_on_a_passing_row_narrowed(fail_on: tuple[str, ...]) -> None:
    record = _record(fail_on)
    record.rows.pop(2)  # no failing row: only the narrowing can fail it
    verdict = job_verdict(record)
    cases = {c.get("name"): c for c in ET.fromstring(render_junit(record)).iter("testcase")}
    failure = cases["scan[int64] lowering [prediction: lowered]"].find("failure")
    if "narrowing" in fail_on:
        assert verdict.headline == "FAIL: 1 passing row narrowed inside an engine"
        assert failure is not None and failure.get("type") == "narrowing"
        assert failure.get("message") == CUMSUM
    else:
        assert verdict.headline == ("PASS: 3 rows, none fails the run; 1 passing row narrowed "
                                    "inside an engine not gated (--fail-on failures)")
        assert failure is None


def _report(row: Row) -> pytest.TestReport:
    report = pytest.TestReport("x", ("zoo.py", 0, "x"), {}, "passed", None, "call")
    outcome.report_row(report, row, strict_xfail=False, where=("zoo.py", 0))
    return report
