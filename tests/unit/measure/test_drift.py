"""Runtime dtype drift (the autocast RFC's second use case): each outcome, and the row it gives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.config.options import Options
from trtcheck.core.profiles import Tolerance
from trtcheck.core.traits import Kind, Traits
from trtcheck.execution.case import iter_rows
from trtcheck.measure import drift
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile, load

TOL = Tolerance(rtol=5e-3, atol=5e-3)


def eager(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return x * 2 + ids.to(x.dtype)


def inputs() -> tuple[tuple[torch.Tensor, ...], dict[str, Any]]:
    return (torch.randn(4), torch.arange(4, dtype=torch.int64)), {}


def casting(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """A module compiled for float32/int64 that casts what it is given, as an engine boundary does."""
    return eager(x.to(torch.float32), ids.to(torch.int64))


def test_a_cast_that_matches_eager_is_accepted() -> None:
    result = drift.check(eager, casting, inputs(), TOL)
    assert result == drift.Drift(drift.CAST, "float32 → float64, int64 → int32")
    assert not result.fails


def test_a_clear_error_is_accepted() -> None:
    def strict(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32:
            raise TypeError(f"expected float32 input, got {x.dtype}")
        return eager(x, ids)

    result = drift.check(eager, strict, inputs(), TOL)
    assert result is not None and result.outcome == drift.ERROR and not result.fails
    assert result.detail == "TypeError: expected float32 input, got torch.float64"


def test_a_wrong_result_fails() -> None:
    result = drift.check(eager, lambda x, ids: casting(x, ids) + 1, inputs(), TOL)
    assert result is not None and result.outcome == drift.WRONG and result.fails
    assert "outputs failed" in result.detail


def test_modifying_the_callers_tensor_fails() -> None:
    def mutating(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        out = casting(x, ids)
        x.mul_(0)
        return out

    result = drift.check(eager, mutating, inputs(), TOL)
    assert result is not None and result.outcome == drift.MUTATED and result.fails


def test_a_wrapped_narrow_value_may_match_the_cast_back_reference() -> None:
    """Eager computing in int32 overflows where a module that casts back to int64 does not: that
    module matches eager on the drifted values cast back, which the RFC's cast allows."""
    def scaled(ids: torch.Tensor) -> torch.Tensor:
        return ids * 3 // 7  # floor division does not commute with wrapping to int32

    ids = torch.tensor([3, 2**30, -(2**30)], dtype=torch.int64)
    result = drift.check(scaled, lambda i: scaled(i.to(torch.int64)), ((ids,), {}), TOL)
    assert result is not None and result.outcome == drift.CAST
    assert result.detail == "matches eager on the values cast back"


def test_no_sibling_dtype_means_no_call() -> None:
    z = torch.randn(3, dtype=torch.complex64)
    assert drift.check(torch.conj, torch.conj, ((z,), {}), TOL) is None
    assert drift.retyped(((torch.ones(2, dtype=torch.bool),), {}))[1] == ""


class _Wrong(Backend):
    """Matches eager on the case's own dtypes, returns garbage for the sibling ones."""

    traits = Traits("wrong_on_drift", Kind.MEASURED, rewrites=False, uses_profiles=False)

    def compile(self, job: CompileJob) -> Compiled:
        module = job.program.module()

        def fn(x: torch.Tensor) -> torch.Tensor:
            out = module(x.to(torch.float32))
            return out if x.dtype == torch.float32 else out + 100

        return Compiled(fn)


def _rows(make_zoo: Callable[[dict[str, str]], Any], **opts: Any) -> list[Row]:
    root = make_zoo({"m.py": """
        import torch, trtcheck

        @trtcheck.model(variants=("float32",))
        def double(variant):
            return torch.nn.Linear(3, 2), (torch.randn(4, 3),)
    """})
    file = ZooFile(root, root / "m.py")
    [spec] = load(file).specs
    options = replace(Options(paths=(root,), devices=("cpu",)), **opts)
    return [r for r in iter_rows(Case(file, spec, "float32"), options, {"wrong_on_drift": _Wrong()})
            if isinstance(r, Row)]


def test_a_wrong_drift_result_fails_the_row_and_is_recorded(make_zoo) -> None:
    [row] = _rows(make_zoo)
    assert row.status is Status.FAIL
    assert row.message.startswith("dtype drift float32 → float64: wrong result")
    assert row.evidence.drift is not None and row.evidence.drift["outcome"] == drift.WRONG
    assert row.outputs and all(o["passed"] for o in row.outputs)  # the main comparison passed


def test_dtype_drift_can_be_turned_off(make_zoo) -> None:
    [row] = _rows(make_zoo, dtype_drift=False)
    assert row.status is Status.PASS and row.evidence.drift is None


def test_a_long_drift_detail_is_cut_in_its_table_cell_with_a_pointer_to_the_whole() -> None:
    """A 1,500-character dynamo error in the drift table's one cell is cut, saying where the
    whole text is; results.json keeps it whole."""
    from trtcheck.render import render_markdown
    from trtcheck.results.record import Record
    from trtcheck.results.rows import Evidence

    long = "torch._dynamo.exc.Unsupported: " + "x" * 1500
    row = Row("zoo::m[float32]", "zoo", "m", "float32", "inductor", status=Status.PASS,
              evidence=Evidence(drift={"change": "float32 → float64", "outcome": "error",
                                       "detail": long}))
    table = render_markdown(Judged.of(Record({}, {}, [row]))).split(
        "## Runtime dtype drift")[1].split("\n## ")[0]
    (line,) = [li for li in table.splitlines() if li.startswith("| zoo::m")]
    assert len(line) < 400 and "(whole in results.json, the row's evidence.drift.detail)" in line
    assert Row.from_dict(row.to_dict()).evidence.drift["detail"] == long
