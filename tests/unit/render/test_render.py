"""Renderers: golden JUnit and Markdown, the status mapping, and hostile text from user code.

Regenerate the golden files with ``TRTCHECK_UPDATE_GOLDEN=1 pytest tests/unit/render/test_render.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import TESTS
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.core.traits import Kind
from trtcheck.render import (
    render_comment,
    render_html,
    render_junit,
    render_markdown,
    render_summary,
    write_reports,
)
from trtcheck.render.escape import md, plain, xml_text
from trtcheck.render.link import RunLink
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import SCHEMA_VERSION, Record, load
from trtcheck.results.rows import Evidence, Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

GOLDEN = TESTS / "golden"
HOSTILE = "a|b<b>x</b>$(rm -rf /)"
XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _stats(median_ms: float) -> Stats:
    return Stats(timer="perf_counter", warmup=2, repeats=10, median_ms=median_ms,
                 p90_ms=median_ms * 1.1, min_ms=median_ms * 0.9, mean_ms=median_ms,
                 stdev_ms=0.01)


def _output(path: str, kind: str, passed: bool, **metrics: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "path": path, "kind": kind, "passed": passed, "eager_dtype": "torch.float32",
        "dtype": "torch.float32", "eager_shape": [2, 8], "shape": [2, 8], "rtol": 1e-5,
        "atol": 1e-6, "max_abs": None, "max_rel": None, "frac_mismatch": None, "cosine": None,
        "max_mag_err": None, "max_phase_err": None, "n_diff": 0, "int32_overflow": False,
        "min_atol": None, "min_rtol": None, "message": "",
    }
    return base | metrics


def _row(file: str, model: str, variant: str, backend: str, status: Status,
         **fields: Any) -> Row:
    return Row(f"{file.removesuffix('.py')}::{model}[{variant}]", file, model, variant,
               backend, status=status, **fields)


def make_record() -> Record:
    rope = "llm/rope.py"
    rows = [
        _row(rope, "rope_attention", "complex64", "inductor", Status.PASS,
             timings={"export": 0.5, "compile": 12.25, "run": 0.25},
             outputs=[_output("out", "float", True, max_abs=2.4e-7, max_rel=1.1e-6,
                              cosine=1.0)],
             latency=Latency(_stats(4.0), _stats(1.6)),
             evidence=Evidence(path=["complex rewrite"])),
        _row(rope, "rope_attention", "complex64", "emulate", Status.PASS,
             profile="truncate_double",
             outputs=[_output("out", "complex", True, max_abs=3.0e-7, max_rel=2.0e-6,
                              cosine=0.99999)],
             latency=Latency(_stats(4.0), _stats(5.0)),
             kind=Kind.EMULATED,
             evidence=Evidence(path=["complex rewrite", "int64"], fallbacks=["aten.fft_fft"])),
        _row("recsys/ids.py", "embed_bag", "int64", "inductor", Status.FAIL, stage="compare",
             message="2 of 3 outputs differ from eager",
             timings={"compile": 3.0, "run": 0.125},
             outputs=[
                 _output("out[0]", "float", False, max_abs=0.031, max_rel=0.0042,
                         cosine=0.9871, min_atol=0.031, min_rtol=0.0042,
                         message="values differ"),
                 _output("out[1]", "int", False, eager_dtype="torch.int64",
                         dtype="torch.int32", max_abs=4294967296.0, n_diff=3,
                         int32_overflow=True, message="3 values outside the int32 range"),
                 _output("out[2]", "bool", True),
             ]),
        _row("recsys/ids.py", "scatter_ids", "int64", "inductor", Status.ERROR,
             stage="compile", message="RuntimeError: no converter for aten.scatter_reduce",
             location="fixtures/recsys/ids.py:41",
             traceback='Traceback (most recent call last):\n  File "x.py", line 1\n'
                       "\x1b[31mRuntimeError\x00: no converter for aten.scatter_reduce\n",
             timings={"export": 0.5, "compile": 1.5}),
        _row("audio/stft.py", "complex_conv", "complex64", "inductor", Status.UNSUPPORTED,
             stage="export", message="complex convolution is not rewritten by the seed"),
        _row("audio/stft.py", "spectrum", "complex128", "inductor", Status.XFAIL,
             message="known precision loss [fail: out differs]"),
        _row("audio/stft.py", "spectrum", "complex64", "inductor", Status.XPASS,
             message="expected to fail (issue 12) but passed"),
        _row("audio/stft.py", "spectrum", "complex64", "tensorrt", Status.SKIPPED,
             message="torch_tensorrt is not installed (pip install \"torch-trtcheck[tensorrt]\")"),
        _row("", "slow_model", "float64", "inductor", Status.TIMEOUT, stage="run",
             message="no result after 300 s"),
        _row("sci/fp64.py", "solver", "float64", "inductor", Status.CRASH, stage="run",
             message="worker died with signal 11 (SIGSEGV)"),
        _row("evil/zoo.py", HOSTILE, "v`1`", "inductor", Status.FAIL, stage="compare",
             message="bad\x01\x1b[31m value\nsecond line with *stars* & `ticks` \ud800\uffff",
             outputs=[_output("out", "float", False, max_abs=1.0, max_rel=0.5, cosine=0.5,
                              min_atol=1.0, min_rtol=0.5)]),
    ]
    environment = {
        "trtcheck": "0.1.0", "torch": "2.13.0", "python": "3.11.9", "platform": "Linux-x86_64",
        "device": "cpu", "git_commit": "0123456789abcdef", "torch_tensorrt": None,
        "started": "2025-01-02T03:04:05Z", "duration_s": 42.0,
    }
    profiles = [BUILTIN_PROFILES[n].to_dict() for n in ("default", "truncate_double", "seed")]
    return Record(environment=environment,
                  options={"backends": ["inductor", "emulate"], "profiles": profiles},
                  rows=rows, analyses={"llm/rope::rope_attention[complex64]":
                                       {"path": ["complex rewrite", "float32"]}})


@pytest.fixture
def record() -> Record:
    return make_record()


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("TRTCHECK_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


# A real run's record, written by trtcheck 0.1.0 before the record's schema 2 (``trtcheck run
# fixtures/ --backend emulate --backend eager --profile default --profile int64_as_int32``).
SCHEMA_1 = TESTS / "data" / "results-schema1.json"


def test_junit_golden() -> None:
    _check_golden("junit.xml", render_junit(load(SCHEMA_1)))


def test_markdown_golden() -> None:
    _check_golden("report.md", render_markdown(Judged.of(load(SCHEMA_1))))


def test_schema_1_record_reads_as_the_current_schema() -> None:
    old = load(SCHEMA_1)
    assert len(old.rows) == 39 and set(old.analyses) == {r.case_id for r in old.rows}
    assert {r.kind for r in old.rows if r.backend == "emulate"} == {Kind.EMULATED}
    assert {r.kind for r in old.rows if r.backend == "eager"} == {Kind.MEASURED}
    assert all(p["description"] for p in old.options["profiles"])
    again = Record.from_dict(json.loads(json.dumps(old.to_dict())))
    assert again == old and again.schema == SCHEMA_VERSION


# --- JUnit --------------------------------------------------------------------------------

EXPECTED_ELEMENT = {
    Status.PASS: None, Status.FAIL: "failure", Status.ERROR: "error",
    Status.UNSUPPORTED: "skipped", Status.XFAIL: "skipped", Status.XPASS: None,
    Status.SKIPPED: "skipped", Status.TIMEOUT: "error", Status.CRASH: "error",
}


def _testcases(xml: str) -> list[ET.Element]:
    return ET.fromstring(xml).findall("./testsuite/testcase")


def _outcome(case: ET.Element) -> str | None:
    found = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize("strict_xfail", [False, True])
def test_junit_maps_every_status(record: Record, strict_xfail: bool) -> None:
    record.options["strict_xfail"] = strict_xfail  # the record says how strictly it ran
    cases = _testcases(render_junit(record))
    assert len(cases) == len(record.rows)
    for row, case in zip(record.rows, cases, strict=True):
        expected = EXPECTED_ELEMENT[row.status]
        if row.status is Status.XPASS and strict_xfail:
            expected = "failure"
        assert _outcome(case) == expected, row.status


def test_junit_messages_and_system_out(record: Record) -> None:
    root = ET.fromstring(render_junit(record))
    by_name = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    error = by_name[("recsys.ids", "scatter_ids[int64] inductor")].find("error")
    assert error is not None
    assert error.get("message") == ("error at compile: RuntimeError: no converter for "
                                    "aten.scatter_reduce")
    assert error.get("type") == "error"
    assert "Traceback (most recent call last)" in (error.text or "")
    skipped = by_name[("audio.stft", "complex_conv[complex64] inductor")].find("skipped")
    assert skipped is not None
    assert (skipped.get("message") or "").startswith("unsupported at export: complex conv")

    predicted = by_name[("llm.rope",
                         "rope_attention[complex64] emulate:truncate_double [prediction: emulated]")]
    out = predicted.findtext("system-out") or ""
    assert "PREDICTION: " in out and "not a TensorRT measurement" in out
    assert "path: complex rewrite+int64" in out
    assert "speedup [95% interval]: n/a (prediction)" in out and "0.8×" not in out
    measured = by_name[("llm.rope", "rope_attention[complex64] inductor")]
    assert "PREDICTION" not in (measured.findtext("system-out") or "")
    assert "\nspeedup [95% interval]: 2.5×\n" in (measured.findtext("system-out") or "")
    xpass = by_name[("audio.stft", "spectrum[complex64] inductor")]
    assert "does not fail the run" in (xpass.findtext("system-out") or "")

    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["llm/rope.py", "recsys/ids.py", "audio/stft.py", "trtcheck",
                            "sci/fp64.py", "evil/zoo.py"]
    props = {p.get("name"): p.get("value") for p in suites["trtcheck"].iter("property")}
    assert props == {"trtcheck": "0.1.0", "torch": "2.13.0", "torch_tensorrt": "not installed",
                     "device": "cpu", "git_commit": "0123456789abcdef"}
    # The suite holding an emulate row says in its header that it holds predictions.
    rope = {p.get("name"): p.get("value") for p in suites["llm/rope.py"].iter("property")}
    assert rope["predictions (emulated)"].startswith("1 of 2 rows are a prediction")
    assert "not a TensorRT measurement" in rope["predictions (emulated)"]


def test_junit_hostile_text_round_trips_safely(record: Record) -> None:
    xml = render_junit(record)
    assert not XML_ILLEGAL.search(xml)
    assert "<b>" not in xml
    case = _testcases(xml)[-1]
    assert case.get("name") == f"{HOSTILE}[v`1`] inductor"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == ("fail at compare: bad[31m value second line with *stars* "
                                      "& `ticks`")


def test_junit_escapes_quotes_in_attributes() -> None:
    row = Row('f::q"<&>\'[v]', "f.py", 'q"<&>\'', "v", "eager", status=Status.SKIPPED,
              message='"quoted" <tag> & \'apostrophe\'')
    case = _testcases(render_junit(Record({}, {}, [row])))[0]
    assert case.get("name") == 'q"<&>\'[v] eager'
    skipped = case.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == 'skipped: "quoted" <tag> & \'apostrophe\''


def test_junit_of_an_empty_record_parses() -> None:
    assert _testcases(render_junit(Record({}, {"strict_xfail": True}, []))) == []


# --- Markdown -----------------------------------------------------------------------------

_UNESCAPED_PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")


def _tables(text: str) -> list[list[str]]:
    tables: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return tables


def test_markdown_tables_are_not_broken_by_user_text(record: Record) -> None:
    text = render_markdown(Judged.of(record))
    tables = _tables(text)
    assert len(tables) >= 5  # summary, accuracy, latency, two output tables
    for table in tables:
        header = len(_UNESCAPED_PIPE.findall(table[0]))
        assert all(len(_UNESCAPED_PIPE.findall(line)) == header for line in table), table
    assert HOSTILE not in text
    assert "<b>" not in text and "</b>" not in text
    assert "$(" not in text and "`1`" not in text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]", text)


def test_markdown_prediction_notice_iff_prediction_rows(record: Record) -> None:
    text = render_markdown(Judged.of(record))
    notice = "> **† Predictions, not measurements.**"
    assert notice in text
    assert "| emulate † " in text
    measured = dataclasses.replace(record, rows=[r for r in record.rows if not r.prediction])
    assert notice not in render_markdown(Judged.of(measured))
    assert "†" not in render_markdown(Judged.of(measured))


def test_markdown_verdict_follows_strict_xfail(record: Record) -> None:
    assert "5 of 11 rows fail the run (strict xfail off)" in render_markdown(
        Judged.of(record))
    record.options["strict_xfail"] = True
    assert "6 of 11 rows fail the run (strict xfail on)" in render_markdown(Judged.of(record))


def test_markdown_of_an_empty_record() -> None:
    text = render_markdown(Judged.of(Record({}, {}, [])))
    assert "**Result: NOTHING TESTED**: no case was selected" in text
    assert "## Accuracy" not in text and "## Details" not in text
    allowed = render_markdown(Judged.of(Record({}, {"allow_empty": True}, [])))
    assert "**Result: PASS**" in allowed


def test_an_interrupted_record_says_so_everywhere(record: Record) -> None:
    passing = dataclasses.replace(record, rows=record.rows[:1],
                                  environment={**record.environment, "interrupted": True})
    assert "**Result: INTERRUPTED**" in render_markdown(Judged.of(passing))
    assert "PASS" not in render_markdown(Judged.of(passing))
    summary = render_summary(Judged.of(passing))
    assert summary.splitlines()[-1].startswith("INTERRUPTED: the run was stopped")


def test_profiles_section_lists_used_profiles_with_what_they_predict(record: Record) -> None:
    text = render_markdown(Judged.of(record))
    section = text.split("## Settings profiles")[1].split("## ")[0]
    assert "truncate\\_double" in section and "computed in float32" in section
    assert "| seed" not in section  # defined in the options but no row uses it


def test_profiles_section_says_when_min_block_size_is_not_torch_tensorrt_s_default(record: Record) -> None:
    line = "Torch-TensorRT ran with `min_block_size` = 1, not its default of 5"
    assert line not in render_markdown(Judged.of(record))
    rows = [dataclasses.replace(r, evidence=dataclasses.replace(r.evidence, settings={"min_block_size": 1}))
            if r.backend == "emulate" else r for r in record.rows]
    text = render_markdown(Judged.of(dataclasses.replace(record, rows=rows)))
    assert line in text.split("## Settings profiles")[1].split("## ")[0]


@pytest.mark.parametrize(("raw", "escaped"), [
    ("a|b", r"a\|b"),
    ("<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"),
    ("$(rm -rf /)", r"\$\(rm -rf /\)"),
    ("`code` *em* _u_ [l](u) ![i] ~s~", r"\`code\` \*em\* \_u\_ \[l\]\(u\) \!\[i\] \~s\~"),
    ("back\\slash|", r"back\\slash\|"),
    ("a & b\nc\r\n\td", "a &amp; b c d"),
    ("bell\x07 esc\x1b[0m del\x7f rlo\u202e", r"bell esc\[0m del rlo"),
])
def test_md_escapes(raw: str, escaped: str) -> None:
    assert md(raw) == escaped


def test_xml_text_keeps_legal_whitespace_and_drops_the_rest() -> None:
    assert xml_text("a\tb\nc\rd\x00\x01\x1b\ud800\ufffe\uffff\U0001f600") == "a\tb\nc\rd\U0001f600"
    assert not XML_ILLEGAL.search(plain("".join(map(chr, range(0x20))) + "\ud800\uffff"))


# --- terminal and files ---------------------------------------------------------------------

def test_summary_lists_non_passing_rows_and_counts(record: Record) -> None:
    record.options["strict_xfail"] = True
    text = render_summary(Judged.of(record))
    lines = text.splitlines()
    assert len([r for r in record.rows if r.status is not Status.PASS]) == 9
    # header, rule, rows, blank, counts, prediction note, the job's verdict
    assert len(lines) == 2 + 9 + 1 + 3
    assert lines[-3] == ("total 11: 1 crash, 1 timeout, 1 error, 2 fail, 1 xpass, 1 unsupported,"
                         " 1 xfail, 1 skipped, 2 pass; 6 fail the run")
    assert lines[-2].startswith("† ") and "not a TensorRT measurement" in lines[-2]
    assert lines[-1] == "FAIL: 6 of 11 rows fail the run"
    assert "rope_attention" not in text
    assert not re.search("[\x00-\x1f\x7f-\x9f]", text.replace("\n", ""))


def test_summary_of_an_all_passing_record(record: Record) -> None:
    passing = dataclasses.replace(record, rows=record.rows[:1])
    assert render_summary(Judged.of(passing)) == ("total 1: 1 pass; 0 fail the run\n"
                                                           "PASS: 1 rows, none fails the run")


def test_write_reports(record: Record, tmp_path: Path) -> None:
    link = RunLink(sha=record.environment.get("git_commit"))
    paths = write_reports(Judged.of(record), tmp_path / "out", link=link)
    assert [p.name for p in paths] == ["results.json", "junit.xml", "report.md", "comment.md",
                                       "report.html"]
    assert load(paths[0]) == record
    assert paths[1].read_text(encoding="utf-8") == render_junit(record)
    assert paths[2].read_text(encoding="utf-8") == render_markdown(Judged.of(record))
    assert paths[3].read_text(encoding="utf-8") == render_comment(
        Judged.of(record), link=link)
    assert paths[4].read_text(encoding="utf-8") == render_html(Judged.of(record), link=link)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "comment.md", "junit.xml", "report.html", "report.md", "results.json"]


def test_passing_rows_with_pytorch_fallbacks_are_marked_in_the_table() -> None:
    from trtcheck.core.traits import Kind
    from trtcheck.results.rows import Evidence

    rows = [_row("m.py", "fft", "complex64", "emulate", Status.PASS, kind=Kind.EMULATED,
                 evidence=Evidence(path=["complex rewrite"], fallbacks=["aten.fft_fft"])),
            _row("m.py", "fft", "complex64", "inductor", Status.PASS,
                 evidence=Evidence(path=["complex rewrite"]))]
    table = render_markdown(Judged.of(Record({}, {}, rows))).split("## Accuracy")[1]
    emulate, inductor = (line for line in table.splitlines() if "m::fft" in line)
    assert "| pass (fallback) |" in " ".join(emulate.split())
    assert "complex rewrite" in emulate
    assert "complex rewrite" not in inductor  # inductor runs the exported graph as is


def test_terminal_keeps_the_exception_type_and_the_head_of_a_long_message() -> None:
    message = ("IndexError: tuple index out of range (raised inside Torch-TensorRT, in "
               "sort_validator at torch_tensorrt/dynamo/conversion/aten_ops_converters.py:3003: "
               "`dim = node.args[1]`: a bug in Torch-TensorRT; report it with this frame)")
    rows = [_row("m.py", "x", "float32", "eager", Status.ERROR, message=message, stage="compile")]
    lines = render_summary(Judged.of(Record({}, {}, rows))).splitlines()
    assert lines[3].startswith("(messages cut at 120 characters")  # under the table
    shown = lines[2].split(" compile ", 1)[1].strip()
    assert shown.endswith("…") and message.startswith(shown[:-1])
    assert "IndexError: tuple index out of range (raised inside Torch-TensorRT, in sort_validator" in shown


def test_an_export_error_is_detailed_once_for_all_the_cases_rows() -> None:
    error = dict(status=Status.ERROR, stage="export", message="Unsupported: data-dependent shape",
                 location="zoo/m.py:7")
    rows = [Row("m::dyn[float32]", "m", "dyn", "float32", backend, profile, **error)
            for backend, profile in (("emulate", "default"), ("emulate", "seed"), ("eager", "-"))]
    rows.append(Row("m::other[float32]", "m", "other", "float32", "eager", "-",
                    status=Status.FAIL, stage="compare", message="values differ"))
    details = render_markdown(Judged.of(Record({}, {}, rows))).split("## Details")[1]
    assert details.count("data-dependent shape") == 1
    assert "### m::dyn\\[float32\\] · every backend and profile (3 rows)" in details
    assert "### m::other\\[float32\\] · eager · -" in details


def test_disagreement_names_the_release_of_a_row_that_failed_before_compiling() -> None:
    from trtcheck.results.rows import Evidence, Kind

    def pair(model: str, versions: dict[str, str | None]) -> list[Row]:
        return [_row("m.py", model, "float32", "emulate", Status.PASS, kind=Kind.EMULATED),
                _row("m.py", model, "float32", "lowering", Status.ERROR, kind=Kind.LOWERED,
                     stage="compile", message="IndexError: tuple index out of range",
                     evidence=Evidence(versions=versions))]

    def section(rows: list[Row]) -> str:
        return render_markdown(Judged.of(Record({}, {}, rows))).split(
            "## Where emulate and lowering disagree")[1]

    known = pair("a", {}) + pair("b", {"torch_tensorrt": "2.13.0"})
    text = section(known)
    assert text.count("Torch-TensorRT 2.13.0's lowering gives error at compile") == 2
    alone = section(pair("a", {}))
    assert "Torch-TensorRT's lowering gives error at compile" in alone and " 's" not in alone


def test_junit_marks_a_predictions_error_in_its_name_and_message() -> None:
    """``spectral_gate[float32] lowering`` with ``error at compile: RuntimeError…`` read as a
    real TensorRT error in CI test views: the kind is in the name and starts the message."""
    from trtcheck.results.rows import Kind

    rows = [_row("audio.py", "spectral_gate", "float32", "lowering", Status.ERROR, kind=Kind.LOWERED,
                 stage="compile", message="RuntimeError: no converter", profile="default"),
            _row("audio.py", "spectral_gate", "float32", "emulate", Status.FAIL, kind=Kind.EMULATED,
                 stage="compare", message="1 of 1 outputs failed", profile="default"),
            _row("audio.py", "spectral_gate", "float32", "inductor", Status.ERROR,
                 stage="compile", message="RuntimeError: no converter")]
    root = ET.fromstring(render_junit(Record({}, {}, rows)))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases) == ["spectral_gate[float32] lowering [prediction: lowered]",
                           "spectral_gate[float32] emulate [prediction: emulated]",
                           "spectral_gate[float32] inductor"]
    error = cases["spectral_gate[float32] lowering [prediction: lowered]"].find("error")
    assert error.get("message") == "[prediction: lowered] error at compile: RuntimeError: no converter"
    failure = cases["spectral_gate[float32] emulate [prediction: emulated]"].find("failure")
    assert failure.get("message").startswith("[prediction: emulated] fail at compare")
    measured = cases["spectral_gate[float32] inductor"].find("error")
    assert measured.get("message") == "error at compile: RuntimeError: no converter"


def test_header_names_where_the_stack_came_from_and_a_mismatched_pairing() -> None:
    env = {"trtcheck": "1.2.3", "torch": "2.14.0+cu130", "torch_tensorrt": "2.13.0",
           "tensorrt": "11.0.1", "device": "cuda:0", "device_name": "NVIDIA H200",
           "git_commit": "e" * 40, "sources": {"torch": "runner", "torch_tensorrt": "action",
                                               "tensorrt": "action"},
           "stack_warnings": ["Torch-TensorRT 2.13.0 is built for torch 2.13, but torch "
                              "2.14.0+cu130 is installed: the matching release is ..."]}
    record = Record(environment=env, options={}, rows=[])
    link = RunLink(sha="d" * 40, url=None)
    lines = render_markdown(Judged.of(record), link=link).splitlines()
    assert lines[2] == ("trtcheck 1.2.3 · torch 2.14.0+cu130 (from the runner) · Torch-TensorRT "
                        "2.13.0 (installed by the Action) · TensorRT 11.0.1 (installed by the "
                        f"Action) · device cuda:0 · commit {'d' * 40}")
    assert lines[4] == ("> ⚠ Torch-TensorRT 2.13.0 is built for torch 2.13, but torch "
                        "2.14.0+cu130 is installed: the matching release is ...")
    comment = render_comment(Judged.of(record), link=link)
    assert ("torch 2.14.0+cu130 (from the runner) · Torch-TensorRT 2.13.0 (installed by the "
            "Action)") in comment
    assert "<br>⚠ Torch-TensorRT 2.13.0 is built for torch 2.13" in comment


def test_the_latency_note_says_how_the_record_was_timed(record: Record) -> None:
    """The figures' note follows each row's recorded method; where the device figure is the
    caller's (calls timed by one host clock, on a CPU), one pair of columns is shown."""
    calls = Latency(_stats(4.0), _stats(2.0), _stats(4.0), _stats(2.0), 2.0, 1.9, 2.1,
                    method="calls", schedule="serial")
    timed = [replace(r, latency=calls, backend="lowering") for r in record.rows if r.latency]
    text = render_markdown(Judged.of(replace(record, rows=timed)))
    latency = text.split("## Latency")[1]
    header = latency.split("\n")[2]
    assert "| eager median ms | backend median ms | speedup" in header and "device" not in header
    assert "each call timed on its own with `perf_counter`" in latency
    assert "block" not in latency
    assert "except on lowering rows: all of eager's calls, then the backend's" in latency
    gpu = replace(calls, eager_device=replace(_stats(3.0), timer="cuda-event"),
                  backend_device=replace(_stats(1.5), timer="cuda-event"), schedule="interleaved")
    text = render_markdown(Judged.of(replace(record, rows=[replace(r, latency=gpu) for r in timed])))
    latency = text.split("## Latency")[1]
    assert ("| eager median ms (caller) | backend median ms (caller) | eager median ms (device) | "
            "backend median ms (device) |") in latency
    assert "*device*: each call timed on its own, the device idle before it" in latency
    assert "Eager's and the backend's calls alternate." in latency and "block" not in latency
    assert "fastest CPU" not in latency
    swept = [replace(r, latency=replace(gpu, cpus=16)) for r in timed]
    latency = render_markdown(Judged.of(replace(record, rows=swept))).split("## Latency")[1]
    assert ("The measured rounds moved over the process's 16 CPUs, a block on each; the figures "
            "are the fastest CPU's") in latency


def test_the_profiles_heading_speaks_of_emulate_only_where_it_ran(record: Record) -> None:
    assert "what emulate predicts under them" in render_markdown(Judged.of(record))
    lowering = [replace(r, backend="lowering", kind=Kind.LOWERED) for r in record.rows]
    text = render_markdown(Judged.of(replace(record, rows=lowering)))
    assert "## Settings profiles" in text and "emulate predicts" not in text
def test_every_report_takes_its_latency_and_memory_columns_from_one_list() -> None:
    from trtcheck.render.text import MARKDOWN, ROW_FIGURES
    from trtcheck.results.figures import LATENCY_FIGURES, Cost, Memory

    latency = Latency(_stats(4.0), _stats(2.0), _stats(3.0), _stats(1.5), paired_speedup=2.0,
                      cost=Cost("export", 0.1, 0.05, 0.15))
    memory = Memory("PyTorch allocator peak", eager=8 * 2**20, backend=4 * 2**20,
                    engine=2**20, eager_first=40 * 2**20, backend_first=36 * 2**20)
    row = _row("m.py", "m", "float32", "inductor", Status.PASS, timings={"compile": 1.5},
               latency=latency, memory=memory)
    record = Record({}, {}, [row])
    out = ET.fromstring(render_junit(record)).findtext(".//system-out") or ""
    for column in ROW_FIGURES:
        assert f"\n{column.label}: {column.text(row)}" in out
    assert "eager first-call peak MiB: 40" in out and "backend median ms (device): 1.5" in out
    header = next(line for line in render_markdown(Judged.of(record)).splitlines()
                  if line.startswith("| case | backend | profile | eager"))
    shown = [c.label for c in ROW_FIGURES if MARKDOWN in c.reports]
    assert header.removesuffix(" |").split(" | ")[3:] == shown
    assert LATENCY_FIGURES[0].label == "eager median ms (caller)"
    # by keyword: an older record's missing fields default, an unknown key is left out
    assert Latency.from_dict({**latency.to_dict(), "a_later_field": 1}) == latency
    assert Latency.from_dict({"eager": latency.to_dict()["eager"],
                              "backend": latency.to_dict()["backend"]}) == \
        Latency(_stats(4.0), _stats(2.0))


def test_an_untimed_row_s_remark_is_under_the_accuracy_table(record: Record) -> None:
    """A prediction row is not timed, so it has no latency row to carry its remark (a graph
    break on the torch.compile front-end): the accuracy section lists it."""
    jit = _row("gate.py", "gate", "default", "lowering", Status.PASS, profile="torch_compile",
               kind=Kind.LOWERED, evidence=Evidence(remark="1 graph break: generic_jump at gate.py:14"))
    text = render_markdown(Judged.of(replace(record, rows=[*record.rows, jit])))
    accuracy = text.split("## Accuracy", 1)[1].split("\n## ", 1)[0]
    assert ("- gate::gate\\[default\\] · lowering † · torch\\_compile: 1 graph break: "
            "generic\\_jump at gate.py:14") in accuracy


def test_a_pass_that_built_no_engine_is_counted_apart_in_every_summary(record: Record) -> None:
    """Row.no_engine, the one fact: a pass whose compile built no TensorRT engine is counted
    apart in the terminal's total, comment.md's counts, report.md's and report.html's summary
    tables and a JUnit suite property; a row with no notion of engines (engines None) is not."""
    def passing(model: str, engines: int | None) -> Row:
        return _row("gate.py", model, "default", "lowering", Status.PASS, profile="torch_compile",
                    kind=Kind.LOWERED, evidence=Evidence(engines=engines))

    added = [passing("none", 0), passing("built", 2), passing("other", None)]
    rec = replace(record, rows=[*record.rows, *added])
    assert [r.no_engine for r in added] == [True, False, False]
    passes = sum(r.status is Status.PASS for r in rec.rows)
    assert f"{passes} pass (1 with no engine)" in render_summary(Judged.of(rec))
    assert f"pass {passes} (1 with no engine)" in render_comment(Judged.of(rec))
    assert f"| {passes} (1 with no engine) |" in render_markdown(Judged.of(rec))
    assert f"{passes} (1 with no engine)" in render_html(Judged.of(rec))
    assert 'name="no engine" value="1 of 3 rows passed with no TensorRT engine built' in \
        render_junit(rec)
    assert "no engine" not in render_summary(Judged.of(record))
