"""Under GitHub Actions: step outputs, annotations at the model's declaration, the run link."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from tests.helpers import REPO, read_outputs
from trtcheck.cli import github, main
from trtcheck.process import WORKFLOW_VARIABLES, Child, child_env
from trtcheck.render.annotations import (
    MAX_ANNOTATIONS,
    escape_data,
    escape_property,
    render_annotations,
)
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

SAMPLE = REPO / "tests" / "data" / "sample_zoo_results.json.gz"


@pytest.fixture
def actions_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A simulated runner: GITHUB_ACTIONS, an output file, a pull_request event."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 4, "head": {"sha": "d" * 40}}}))
    for name, value in {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "output"),
                        "GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": "e" * 40,
                        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
                        "GITHUB_RUN_ID": "99"}.items():
        monkeypatch.setenv(name, value)
    return tmp_path / "output"


def test_report_writes_outputs_annotations_and_comment(
        actions_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "rep" / "results.json"
    results.parent.mkdir()
    results.write_bytes(gzip.decompress(SAMPLE.read_bytes()))
    assert main(["report", str(results)]) == 1
    out = read_outputs(actions_env)
    assert out == {
        "status": "fail", "exit-code": "1", "passed": "67", "failed": "1", "errors": "0",
        "verdict": "FAIL: 1 of 78 rows fail the run", "regressions": "0",
        "report-dir": str(results.parent), "comment-file": str(results.parent / "comment.md"),
        "results-json": str(results),
    }
    annotations = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    assert annotations == [
        "::error file=fixtures/indices.py,line=47,title=trtcheck%3A indices%3A%3Aid_hash[int64] "
        "emulate%3Aint64_as_int32::fail at compare: 2 of 2 outputs failed; worst: out[0]: 30 of 30 "
        "int64 values differ (max abs diff 1.04022e+12); eager has 30 values outside the int32 "
        "range (int64 truncated to int32?)"]
    comment = (results.parent / "comment.md").read_text(encoding="utf-8")
    # the pull request's head commit, not the merge commit, and the run
    assert f"commit {'d' * 40} · [run](https://github.com/o/r/actions/runs/99)" in comment


def test_fifteen_failing_rows_give_ten_errors_and_one_notice(
        actions_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trtcheck.results.record import save

    rows = [Row(f"z::m{i}[int64]", "z", f"m{i}", "int64", "eager", status=Status.FAIL,
                message="mismatch") for i in range(15)]
    save(Record({"torch": "2.13.0"}, {}, rows), tmp_path / "results.json")
    assert main(["report", str(tmp_path / "results.json")]) == 1
    commands = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    assert [x.split(" ", 1)[0] for x in commands] == ["::error"] * 10 + ["::notice"]
    assert "5 more failing rows are not annotated" in commands[-1]


def test_usage_error_still_writes_outputs(actions_env: Path, tmp_path: Path) -> None:
    assert main(["run", str(tmp_path / "missing")]) == 2
    out = read_outputs(actions_env)
    assert out["status"] == "error" and out["exit-code"] == "2"
    assert out["report-dir"] == out["comment-file"] == ""


def test_nothing_is_written_outside_github_actions(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    github.write_outputs(0, tmp_path, None)
    assert not (tmp_path / "output").exists()


def test_output_values_cannot_add_outputs(actions_env: Path, tmp_path: Path) -> None:
    odd = tmp_path / "a\nstatus=pass"
    github.write_outputs(1, odd, None)
    out = read_outputs(actions_env)
    assert out["status"] == "fail" and out["report-dir"] == str(odd)


@pytest.mark.parametrize(("env", "sha", "url"), [
    ({"GITHUB_SHA": "A" * 40, "GITHUB_SERVER_URL": "https://ghe.example:8443",
      "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "5"},
     "a" * 40, "https://ghe.example:8443/o/r/actions/runs/5"),
    ({"GITHUB_SHA": "$(x)", "GITHUB_SERVER_URL": "javascript:alert(1)//",
      "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "5"}, "0123abc", None),
    ({}, "0123abc", None),
])
def test_run_link_takes_only_well_formed_values(env: dict[str, str], sha: str,
                                                url: str | None) -> None:
    link = github.run_link(env, "0123abc")
    assert (link.sha, link.url) == (sha, url)


def test_annotation_escaping() -> None:
    assert escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    row = Row("z::m,x:y[int64]", "z", "m,x:y", "int64", "emulate", status=Status.ERROR,
              message="boom\n::error::forged", source="dir,with:odd%/z.py", line=7)
    (line,) = render_annotations(Record({}, {}, [row]))
    props, message = line.removeprefix("::error ").split("::", 1)
    assert props == ("file=dir%2Cwith%3Aodd%25/z.py,line=7,"
                     "title=trtcheck%3A z%3A%3Am%2Cx%3Ay[int64] emulate")
    assert message == "error: boom ::error::forged"  # one line: nothing else is parsed


def test_annotations_only_for_failing_rows_and_capped() -> None:
    rows = [Row(f"z::m{i}[int64]", "z", f"m{i}", "int64", "eager", status=Status.FAIL)
            for i in range(15)]
    rows.append(Row("z::ok[int64]", "z", "ok", "int64", "eager", status=Status.XPASS))
    lines = render_annotations(Record({}, {}, rows))
    assert MAX_ANNOTATIONS == 10 and len(lines) == 11
    assert all(re.match(r"::error title=trtcheck%3A z%3A%3Am\d+\[int64\] eager::fail$", x)
               for x in lines[:-1])
    assert lines[-1] == ("::notice title=trtcheck::5 more failing rows are not annotated (GitHub "
                         "shows 10 errors per step): they are in the job summary and in report.md "
                         "of the report artifact")
    assert len(render_annotations(Record({}, {"strict_xfail": True}, rows[-1:]))) == 1


@pytest.mark.parametrize("strict", [False, True])
def test_the_failed_and_errors_outputs_add_up_to_the_rows_that_fail_the_run(
        actions_env: Path, tmp_path: Path, strict: bool) -> None:
    rows = [Row(f"m::c{i}", "m", f"c{i}", "v", "eager", status=s)
            for i, s in enumerate([Status.PASS, Status.FAIL, Status.XPASS, Status.ERROR,
                                   Status.TIMEOUT, Status.CRASH, Status.XFAIL])]
    record = Record({}, {"strict_xfail": strict}, rows)
    github.write_outputs(1, tmp_path, Judged.of(record))
    out = read_outputs(actions_env)
    assert (out["failed"], out["errors"]) == (("2", "3") if strict else ("1", "3"))
    assert int(out["failed"]) + int(out["errors"]) == len(record.failing_rows())


# --- the zoo's code and the workflow's files --------------------------------------------------


def test_every_child_process_starts_without_the_workflows_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """process.Child, which starts the collector, the worker and the lowering host."""
    for name in WORKFLOW_VARIABLES:
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("TRTCHECK_KEPT", "y")
    script = tmp_path / "child.py"
    script.write_text("import os, sys\nfrom trtcheck.process import Parent\n"
                      "Parent(sys.argv[1:]).send(dict(os.environ))\n")
    for env in (None, {**os.environ, "EXTRA": "z"}):
        child = Child(str(script), env=env)
        try:
            assert child.poll(60)
            seen = child.receive()
        finally:
            child.kill()
        assert not WORKFLOW_VARIABLES & set(seen)
        assert seen["TRTCHECK_KEPT"] == "y" and ("EXTRA" in seen) is (env is not None)
    assert child_env({"GITHUB_ENV": "f", "GITHUB_WORKSPACE": "w"}) == {"GITHUB_WORKSPACE": "w"}


def test_the_outputs_file_is_withheld_while_a_command_runs(
        actions_env: Path, tmp_path: Path) -> None:
    with github.withheld():
        assert "GITHUB_OUTPUT" not in os.environ
        github.write_outputs(0, tmp_path, None)  # still written, to the withheld file
    assert os.environ["GITHUB_OUTPUT"] == str(actions_env)
    assert read_outputs(actions_env)["status"] == "pass"
