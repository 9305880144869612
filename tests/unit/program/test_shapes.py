"""Dynamic shapes exercised: the shapes a case runs at, inputs made at them, rows that run them."""

from __future__ import annotations

import functools

import pytest
import torch
from torch.export import Dim

from tests.helpers import TESTS
from trtcheck.backends import get
from trtcheck.config.options import Options
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.program.shapes import ShapeRange, plan_shapes, resize
from trtcheck.render.markdown import render_markdown
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

DYNAMIC_ZOO = TESTS / "dynamic"  # not under tests/zoos: every zoo there is run whole


class Pair(torch.nn.Module):
    def forward(self, x: torch.Tensor, ids: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return x * scale + ids.float()


def _export(dims: dict[str, object], *inputs: torch.Tensor):
    return torch.export.export(Pair(), inputs, dynamic_shapes=dims)


def test_a_dynamic_batch_and_sequence_run_at_the_example_and_both_ends() -> None:
    inputs = (torch.randn(4, 8), torch.arange(32).reshape(4, 8), torch.ones(1))
    batch, seq = Dim("batch", min=1, max=16), Dim("seq", min=2)
    program = _export({"x": {0: batch, 1: seq}, "ids": {0: batch, 1: seq}, "scale": None}, *inputs)
    plan = plan_shapes(program, (inputs, {}))
    assert [(s.name, s.shapes["x"], s.shapes["ids"]) for s in plan.sets] == [
        ("example", (4, 8), (4, 8)), ("min", (1, 2), (1, 2)), ("max", (16, 16), (16, 16))]
    assert plan.sets[1].describe() == "x=(1, 2), ids=(1, 2), scale=(1,)"
    # the highest of the batch is its declared max, 16, four times the example; of the
    # unbounded seq, twice the example
    assert plan.ranges == {"x": ShapeRange((1, 2), (4, 8), (16, 16), torch.float32),
                           "ids": ShapeRange((1, 2), (4, 8), (16, 16), torch.int64)}


@pytest.mark.parametrize(("low", "high"), [(3, 5), (1, 32)])
def test_the_highest_is_the_declared_max_below_or_above_twice_the_example(low: int, high: int) -> None:
    inputs = (torch.randn(4, 3), torch.zeros(4, 3, dtype=torch.long), torch.ones(1))
    batch = Dim("batch", min=low, max=high)
    program = _export({"x": {0: batch}, "ids": {0: batch}, "scale": None}, *inputs)
    plan = plan_shapes(program, (inputs, {}))
    assert [s.shapes["x"] for s in plan.sets] == [(4, 3), (low, 3), (high, 3)]
    assert plan.ranges["x"] == ShapeRange((low, 3), (4, 3), (high, 3), torch.float32)


def test_a_static_program_runs_at_its_example_only() -> None:
    inputs = (torch.randn(4, 8), torch.zeros(4, 8, dtype=torch.long), torch.ones(1))
    plan = plan_shapes(torch.export.export(Pair(), inputs), (inputs, {}))
    assert not plan.dynamic and len(plan.sets) == 1 and plan.ranges == {}


def test_resized_inputs_keep_the_examples_values() -> None:
    """Tiled then cropped: ids stay ids the model was given (an embedding's rows stay valid)."""
    inputs = (torch.randn(2, 3), torch.arange(6).reshape(2, 3), torch.ones(1))
    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=1, max=8)
    program = _export({"x": {0: batch, 1: seq}, "ids": {0: batch, 1: seq}, "scale": None}, *inputs)
    plan = plan_shapes(program, (inputs, {}))
    (x, ids, scale), kwargs = resize(program, (inputs, {}), plan.sets[2])
    assert kwargs == {} and scale is inputs[2]
    assert ids.tolist() == [[0, 1, 2, 0, 1, 2, 0, 1], [3, 4, 5, 3, 4, 5, 3, 4]] * 4
    torch.testing.assert_close(x[:2, :3], inputs[0])
    (_, small, _), _ = resize(program, (inputs, {}), plan.sets[1])
    assert small.tolist() == [[0]]


BACKENDS = ("eager", "inductor", "emulate")


@functools.cache
def _rows(name: str) -> tuple[Row, ...]:
    """The case's rows on every backend of :data:`BACKENDS`, made once for the module's tests
    (inductor's compile at three shapes is most of this file's time)."""
    opts = Options(paths=(DYNAMIC_ZOO,), devices=("cpu",))
    [case] = [c for c in collect(opts).cases if c.spec.name == name]
    return tuple(r for r in iter_rows(case, opts, {b: get(b) for b in BACKENDS})
                 if isinstance(r, Row))


def _eager(name: str) -> list[Row]:
    return [r for r in _rows(name) if r.backend == "eager"]



def test_a_model_declaring_dynamic_batch_and_sequence_runs_three_shapes_per_backend() -> None:
    rows = _rows("attention")
    assert [r.backend for r in rows] == list(BACKENDS)
    for row in rows:
        assert row.status is Status.PASS, row.message
        assert row.shapes == [{"ids": [4, 8]}, {"ids": [1, 2]}, {"ids": [16, 64]}]


def test_a_model_wrong_only_away_from_its_example_fails_naming_the_shape() -> None:
    rows = {r.backend: r for r in _rows("example_batch_mean")}
    # inductor compiles the user's module, as its users do: it never takes the export-only path
    assert rows.pop("inductor").status is Status.PASS
    for row in rows.values():  # eager (the exported program compared) and emulate run the export
        assert row.status is Status.FAIL and row.stage == "compare"
        assert row.message.startswith("at shape x=(1, 8): 1 of 1 outputs failed"), row.message
        assert row.shapes == [{"x": [4, 8]}, {"x": [1, 8]}]  # it stopped at the failing shape


def test_report_shows_the_shapes_each_row_ran() -> None:
    rows = _eager("attention") + _eager("example_batch_mean")
    report = render_markdown(Judged.of(Record({}, {}, rows, {})))
    assert "## Dynamic shapes" in report
    # the highest shape is the declared max where one is declared, not "at most twice the example"
    assert "(its declared max; for a dimension declared without a max, twice the example)" in report
    assert "at most twice" not in report
    lines = [" ".join(line.split()) for line in report.splitlines()]
    assert "| models::attention\\[int64\\] | eager | - | ids 4×8, 1×2, 16×64 |" in lines
    assert "- shapes run: x 4×8, 1×8" in lines
    assert any(line.startswith("- fail at compare: at shape x=\\(1, 8\\): 1 of 1 outputs failed")
               for line in lines)
    assert Row.from_dict(rows[0].to_dict()).shapes == rows[0].shapes
