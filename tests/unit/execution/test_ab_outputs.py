"""``trtcheck ab`` compares the model's own eager outputs, base against head, in-process: each
process keeps every case's digests as a worker does (``measure.outputs.keep_eager``, the first
process of a side the outputs too; that the worker calls it is tests/e2e/test_ab.py's), then
the job's parent side (``execution.ab.Job``) finds which rows changed and by how much, and the
reports name them."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch

from trtcheck.config.options import Options
from trtcheck.execution.ab import Job, Process, eager_folder
from trtcheck.measure import outputs
from trtcheck.render.changes import decision_lines
from trtcheck.results import ab, processes
from trtcheck.results.baseline import INPUTS_CHANGED, NOT_REPRODUCIBLE, OUTPUT_CHANGED, Diff
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import in_report_order

IDS, CLOCK = "m::ids[float32]", "m::clock[float32]"


def _ids(x: torch.Tensor, extra: int) -> torch.Tensor:
    """int64 positions through a hash whose constant the head changes for every third one."""
    ids = x.long() * 3
    return ids + (ids % 9 == 0) * extra


def _process(index: int, side: str, work: Path, ticks: itertools.count) -> Process:
    """One ab process: its two rows, and each case's eager digests kept as its worker keeps
    them, the outputs too in the first process of each side (indices 0 and 1). ``clock``
    returns another value at every build, as a model reading a counter or the time would."""
    folder = eager_folder(work, index)
    x = torch.arange(48.0)
    outputs.keep_eager(folder, IDS, ((x,), {}), _ids(x, 1200 if side == "head" else 0),
                       values=index < 2)
    one = torch.ones(4)
    outputs.keep_eager(folder, CLOCK, ((one,), {}), one + next(ticks), values=index < 2)
    rows = [Row(case, "m", case[3:].split("[")[0], "float32", "eager") for case in (IDS, CLOCK)]
    return Process(index, side, index, [IDS, CLOCK], rows=rows, collected=[IDS, CLOCK],
                   eager=outputs.read_digests(folder))


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    """Two processes a side, base and head alternating as ab runs them; the head adds 1200 to
    every third id."""
    work = tmp_path_factory.mktemp("ab")
    job = Job(Options(paths=(work,), devices=("cpu",)), {}, {}, work, print, 1)
    ticks = itertools.count()
    job.processes = [_process(i, side, work, ticks)
                     for i, side in enumerate(("base", "head", "head", "base"))]
    return job


def _record(job: Job, gate: list[str]) -> Record:
    """The head's record as run_ab writes it, under ``--fail-on`` ``gate``."""
    figures = job.figures()
    differences = job.eager_differences(figures)
    sides = {p.side: Record({}, {"gate": {"fail_on": gate, "metric": "speedup",
                                          "threshold": 0.07}}, p.in_case_order())
             for p in job.processes[:2]}
    head = sides["head"]
    level = ab.Level(0.05, 0, 1)
    head.ab = {"level": level.to_dict(), "base_rows": [r.to_dict() for r in sides["base"].rows],
               "eager_differences": differences,
               "rows": [{"case_id": k.case_id, "backend": k.backend, "profile": k.profile,
                         **{s: processes.side_dict(per[s]) for s in processes.SIDES}}
                        for k, per in figures.items()]}
    in_report_order(head)
    head.baseline = ab.to_diff(sides["base"], head, {}, figures, metric="speedup",
                               threshold=0.07, level=level, differences=differences).to_dict()
    return head


def test_the_digests_and_the_first_processes_outputs_are_kept(job: Job) -> None:
    base, head, head2, base2 = (p.eager[IDS] for p in job.processes)
    assert base == base2 and head == head2  # reproducible on each side
    assert base["inputs"] == head["inputs"] and base["outputs"] != head["outputs"]
    assert [outputs.values_file(eager_folder(job.work, i), IDS).exists()
            for i in range(4)] == [True, True, False, False]


def test_a_head_that_changes_eager_outputs_names_the_row_in_every_report(
        job: Job, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No status changed, yet the row whose model computes other values is named on its own
    line in comment.md, with by how much; the one whose builds disagree is not reproducible
    and says so instead; only --fail-on output-change fails the job on it."""
    from tests.helpers import reported

    record = _record(job, ["failures"])
    changes = {c.case_id: (c.eager, c.eager_detail)
               for c in ab.rejudge(record, None, metric="speedup", threshold=0.07).changes}
    assert changes[IDS] == (OUTPUT_CHANGED, "max abs 1.2e+03, 16 of 48 int64 values differ")
    assert changes[CLOCK] == (NOT_REPRODUCIBLE, "the base's 2 processes built 2 different eager "
                                                "outputs; its outputs are not compared")
    for gate, code, said in ((["failures"], 0, "PASS: 2 rows, none fails the run; 1 output "
                              "change not gated (--fail-on failures)"),
                             (["failures", "output-change"], 1, "FAIL: 1 output change")):
        out = tmp_path / gate[-1]
        exit_code, terminal = reported(_record(job, gate), out, capsys)
        assert exit_code == code and said in terminal.splitlines()
        comment = (out / "comment.md").read_text()
        assert said in comment.splitlines()[0]
        line = next(li for li in comment.splitlines() if li.startswith("| m::ids"))
        assert "output changed: max abs 1.2e+03, 16 of 48 int64 values differ" in line
        assert "| pass |" in line  # no status changed
        assert "not reproducible" in next(li for li in comment.splitlines()
                                          if li.startswith("| m::clock"))
        assert "1 output change" in comment and "1 row not reproducible" in comment
    # what ab's terminal prints for each row (common.say_baseline)
    assert f"{IDS} eager -: output changed: max abs 1.2e+03, 16 of 48 int64 values differ" in \
        decision_lines(Diff.from_dict(record.baseline))


def test_inputs_the_head_builds_otherwise_are_named_and_not_compared() -> None:
    def side(inputs: str, out: str) -> list[processes.ProcessFigure]:
        return [processes.ProcessFigure(i, "pass", eager=f"{inputs}/{out}") for i in range(3)]

    assert ab.eager_change({"base": side("a", "x"), "head": side("b", "y")}, "") == (
        INPUTS_CHANGED, "the head builds other seeded inputs; outputs not compared")
    assert ab.eager_change({"base": side("a", "x"), "head": side("a", "x")}, "") is None
    assert ab.eager_change({"base": side("a", "x"), "head": []}, "") is None  # not kept


def test_the_difference_names_shape_dtype_and_nan(tmp_path: Path) -> None:
    def kept(name: str, value: object) -> Path:
        outputs.keep_eager(tmp_path / name, "c", (), value, values=True)
        return outputs.values_file(tmp_path / name, "c")

    nan = torch.tensor([float("nan"), 1.0, 2.0])
    assert outputs.difference(kept("a", nan), kept("b", nan.clone())) == ""
    assert outputs.difference(kept("c", nan), kept("d", torch.tensor([float("nan"), 1.0, 2.5]))) \
        == "max abs 0.5, 1 of 3 float32 values differ"
    assert outputs.difference(kept("e", nan), kept("f", nan.double())) == \
        "output tensor float32[3] → float64[3]"
    assert outputs.difference(kept("g", {"a": nan}), kept("h", (nan, nan))) == \
        "the outputs are other ones: 1 leaves → 2"
    assert outputs.difference(kept("i", (nan, "x" * 100)), kept("j", (nan, "y"))) == \
        f"output [1] '{'x' * 38}… → 'y'"
