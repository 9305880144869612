"""NaN and Inf: counted per output, said in words with the counts in every report, and the
``nan`` policy (warn: matching ones pass with ⚠; fail: every such row fails)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from trtcheck.cli import main
from trtcheck.config.cascade import resolve
from trtcheck.core.profiles import DEFAULT_TOLERANCES
from trtcheck.errors import ConfigError
from trtcheck.measure.compare import compare
from trtcheck.render import render_comment, render_junit, render_markdown
from trtcheck.render.annotations import render_annotations
from trtcheck.render.terminal import render_summary
from trtcheck.results import nonfinite
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

NAN, INF = float("nan"), float("inf")
WORDS = "eager output holds 16 NaN and 1 Inf, backend output 16 NaN and 1 Inf"


def _outputs(eager: torch.Tensor, actual: torch.Tensor) -> list[dict]:
    result = compare(eager, actual, lambda _: DEFAULT_TOLERANCES["float32"])
    return [leaf.to_dict() for leaf in result.leaves]


def test_counts_nan_and_inf_apart_on_each_side() -> None:
    eager = torch.tensor([NAN, NAN, INF, -INF, 1.0])
    [out] = _outputs(eager, torch.tensor([NAN, 2.0, INF, -INF, 1.0]))
    assert (out["eager_nan"], out["eager_inf"], out["nan"], out["inf"]) == (2, 2, 1, 2)
    assert not out["passed"]  # a NaN became a number: placement differs
    assert nonfinite.describe([out]) == \
        "eager output holds 2 NaN and 2 Inf, backend output 1 NaN and 2 Inf"


def test_a_complex_element_with_a_nan_part_counts_once_as_nan() -> None:
    z = torch.tensor([complex(NAN, INF), complex(INF, 0.0), 1j], dtype=torch.complex64)
    [out] = _outputs(z, z.clone())
    assert (out["eager_nan"], out["eager_inf"]) == (1, 1)


def test_finite_outputs_count_none_and_several_outputs_are_named() -> None:
    [finite] = _outputs(torch.ones(3), torch.ones(3))
    assert not nonfinite.count([finite]) and nonfinite.describe([finite]) == ""
    [bad] = _outputs(torch.tensor([NAN]), torch.tensor([NAN]))
    bad = {**bad, "path": "[1]"}
    assert nonfinite.describe([finite, bad]) == \
        "eager output holds 1 NaN, backend output 1 NaN (in out[1])"


def _record(status: Status = Status.PASS, message: str = WORDS) -> Record:
    x = torch.log(torch.arange(16.0) - 10)  # 10 NaN and one -Inf ...
    x = torch.cat([x, torch.full((6,), NAN)])  # ... and 6 more NaN
    row = Row("zoo::logm[float32]", "zoo", "logm", "float32", "eager", "-", status=status,
              message=message, stage=None if status is Status.PASS else "compare",
              outputs=_outputs(x, x.clone()), source="zoo.py", line=7)
    return Record({}, {"profiles": []}, [row])


def test_every_report_says_nan_and_inf_with_counts_for_a_passing_row() -> None:
    record = _record()
    terminal = render_summary(Judged.of(record))
    assert "pass ⚠    zoo::logm[float32]" in terminal and WORDS in terminal
    report = render_markdown(Judged.of(record))
    accuracy = report.split("## Accuracy")[1].split("## ")[0]
    assert "| pass ⚠ " in accuracy and 'nan = "fail"' in accuracy
    assert f"- pass ⚠: {WORDS}" in report.split("## Details")[1]
    comment = render_comment(Judged.of(record))
    attention = comment.split("#### Needs attention")[1].split("####")[0]
    assert f"| pass ⚠ | pass ⚠: {WORDS} |" in attention
    assert "| within ⚠ |" in comment.split("#### Accuracy")[1]
    [case] = ET.fromstring(render_junit(record)).iter("testcase")
    assert case.find("failure") is None
    assert f"NaN/Inf: ⚠ {WORDS}" in (case.findtext("system-out") or "")
    [annotation] = render_annotations(record)
    assert annotation.startswith("::warning file=zoo.py,line=7,")
    assert annotation.endswith(f"::pass ⚠: {WORDS}")


def test_a_failing_row_keeps_the_counts_whole_in_short_messages() -> None:
    long = "1 of 1 outputs failed; worst: out: NaN/Inf placement differs at 3 of 22 positions; " \
           + "x" * 300
    record = _record(Status.FAIL, f"{long}; {WORDS}")
    assert WORDS in render_summary(Judged.of(record))
    assert WORDS in render_comment(Judged.of(record)).split("#### Needs attention")[1]
    [case] = ET.fromstring(render_junit(record)).iter("testcase")
    assert WORDS in (case.find("failure").get("message") or "")
    [annotation] = render_annotations(record)
    assert annotation.startswith("::error ") and annotation.endswith(WORDS)


def test_nan_is_a_setting_from_config_and_command_line(tmp_path: Path) -> None:
    assert resolve((tmp_path,), device="cpu").nan == "warn"
    (tmp_path / "trtcheck.toml").write_text('nan = "fail"\n')
    assert resolve((tmp_path,), device="cpu").nan == "fail"
    assert resolve((tmp_path,), device="cpu", nan="warn").nan == "warn"
    (tmp_path / "trtcheck.toml").write_text('nan = "ignore"\n')
    with pytest.raises(ConfigError, match="nan: 'ignore' is not one of 'warn', 'fail'"):
        resolve((tmp_path,), device="cpu")


# --- a run, in-process --------------------------------------------------------------------------------

ZOO = '''
import torch, trtcheck

class Log(torch.nn.Module):
    def forward(self, x):
        return torch.log(x - 10)  # 10 NaN and one -Inf over arange(16)

class Traced(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():  # only the exported program takes the log
            return torch.log(x - 10)
        return x

@trtcheck.model(variants=("float32",))
def logm(variant):
    return Log(), (torch.arange(16.0),)

@trtcheck.model(variants=("float32",))
def traced(variant):
    return Traced(), (torch.arange(16.0),)
'''
LOG_WORDS = "eager output holds 10 NaN and 1 Inf, backend output 10 NaN and 1 Inf"


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> tuple[int, str, Path]:
    """``trtcheck run`` on the zoo, in this process (``--no-isolate``), outside GitHub Actions."""
    (tmp_path / "zoo").mkdir(exist_ok=True)
    (tmp_path / "zoo" / "nan.py").write_text(ZOO)
    out = tmp_path / ("out" + "".join(args).replace("-", ""))
    for name in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "zoo", "--backend", "eager", "--no-isolate", "--out", str(out), *args])
    return code, capsys.readouterr().out, out


def _rows(out: Path) -> dict[str, dict]:
    return {r["model"]: r for r in json.loads((out / "results.json").read_text())["rows"]}


def test_nan_in_a_run_passes_with_a_warning_and_different_placement_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, stdout, out = _run(tmp_path, capsys, monkeypatch)
    assert code == 1, stdout  # the traced row fails
    rows = _rows(out)
    assert rows["logm"]["status"] == "pass" and rows["logm"]["message"] == LOG_WORDS
    assert rows["traced"]["status"] == "fail"
    assert "NaN/Inf placement differs at 11 of 16 positions" in rows["traced"]["message"]
    assert rows["traced"]["message"].endswith(
        "backend output holds 10 NaN and 1 Inf, eager output none")
    assert LOG_WORDS in stdout and "pass ⚠" in stdout
    for report in ("report.md", "comment.md", "junit.xml"):
        assert LOG_WORDS in (out / report).read_text(), report


def test_nan_fail_fails_matching_nan_too(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    code, stdout, out = _run(tmp_path, capsys, monkeypatch, "--nan", "fail", "-k", "logm")
    assert code == 1, stdout
    row = _rows(out)["logm"]
    assert row["status"] == "fail" and row["message"] == f'nan = "fail": {LOG_WORDS}'
    assert json.loads((out / "results.json").read_text())["options"]["nan"] == "fail"
