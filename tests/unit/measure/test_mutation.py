"""Modules that modify their inputs in place or change their own buffers (tests/zoos/state).

Judged right, each passes on every backend that computes what eager does; a compiled module
that modifies the inputs differently from eager, or not at all, still fails, saying who did what.
"""

from __future__ import annotations

import pytest
import torch

from tests.helpers import TESTS
from trtcheck.backends import Backend, get
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import Tolerance
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.measure import drift
from trtcheck.measure.mutation import mutation_problem
from trtcheck.results.rows import Row
from trtcheck.status import Status
from trtcheck.tensors import StateSnapshot

ZOO = TESTS / "zoos" / "state"
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)
TOL = Tolerance(rtol=5e-3, atol=5e-3)
STATEFUL = "the module changes its own buffers between calls"


def _rows(name: str, backends: dict[str, Backend]) -> dict[str, Row]:
    opts = Options(paths=(ZOO,), timing=QUICK)
    [case] = [c for c in collect(opts).cases if c.spec.name == name]
    return {row.backend: row for row in iter_rows(case, opts, backends) if isinstance(row, Row)}


# -- inputs modified in place ----------------------------------------------------------------------

def _normalise(x: torch.Tensor) -> torch.Tensor:
    x.sub_(0.485)
    x.div_(0.229)
    return x.sum()


def test_inputs_modified_as_eager_does_within_tolerance_pass() -> None:
    before = torch.rand(16)
    eager_after = before.clone()
    _normalise(eager_after)
    compiled_after = eager_after + 1e-6  # the same in-place update, rounded differently
    assert mutation_problem(before, eager_after, compiled_after, lambda _: TOL) == ""


def test_each_way_inputs_can_differ_says_who_modified_them() -> None:
    before = torch.rand(16)
    eager_after = before.clone()
    _normalise(eager_after)
    untouched = mutation_problem(before, eager_after, before.clone(), lambda _: TOL)
    assert untouched.startswith("eager modifies its inputs in place and the compiled module "
                                "leaves them unchanged: 1 of 1 inputs failed")
    assert mutation_problem(before, before.clone(), eager_after, lambda _: TOL).startswith(
        "the compiled module modifies or re-types its inputs, eager leaves them unchanged: ")
    assert mutation_problem(before, eager_after, eager_after * 2, lambda _: TOL).startswith(
        "the compiled module modifies its inputs differently from eager: ")


def test_drift_accepts_a_cast_that_modifies_the_input_as_eager_does() -> None:
    """A module compiled for float32, called with float64: it computes in float32 and writes the
    result back into the caller's float64 tensor, a rounding away from eager's float64 result."""
    def compiled(x: torch.Tensor) -> torch.Tensor:
        narrow = x.to(torch.float32)
        out = _normalise(narrow)
        x.copy_(narrow)
        return out

    result = drift.check(_normalise, compiled, ((torch.rand(16),), {}), TOL)
    assert result == drift.Drift(drift.CAST, "float32 → float64")


def test_drift_fails_a_cast_that_leaves_the_input_eager_modifies() -> None:
    result = drift.check(_normalise, lambda x: _normalise(x.to(torch.float32)),
                         ((torch.rand(16),), {}), TOL)
    assert result is not None and result.outcome == drift.MUTATED and result.fails
    assert result.detail.startswith("eager modifies its inputs in place and the compiled module "
                                    "leaves them unchanged")


def test_in_place_normalisation_passes_with_its_drift_check() -> None:
    rows = _rows("normalise_in_place", {name: get(name) for name in ("eager", "emulate")})
    for row in rows.values():
        assert (row.status, row.message) == (Status.PASS, ""), row.message
        assert row.evidence.drift == {"outcome": drift.CAST, "change": "float32 → float64",
                                      "detail": ""}


@pytest.mark.slow
def test_in_place_normalisation_passes_on_inductor() -> None:
    [row] = _rows("normalise_in_place", {"inductor": get("inductor")}).values()
    assert row.status is Status.PASS, row.message


@pytest.mark.slow
def test_a_lowering_that_drops_the_in_place_update_fails_saying_so(ttrt_releases) -> None:
    """Torch-TensorRT's lowering leaves the caller's tensor unchanged (see
    test_input_mutation_is_dropped_by_the_lowering): it is eager that modified the input."""
    [row] = _rows("normalise_in_place", {"lowering": LoweringBackend("2.13.0")}).values()
    assert (row.status, row.stage) == (Status.FAIL, "compare")
    assert row.message.startswith("eager modifies its inputs in place and the compiled module "
                                  "leaves them unchanged: 1 of 1 inputs failed")


# -- buffers changed by forward --------------------------------------------------------------------

@pytest.mark.parametrize(("name", "buffer"), [("step_counter", "steps"), ("running_cache", "cache")])
def test_a_module_changing_its_buffers_is_compared_from_one_starting_state(name: str,
                                                                           buffer: str) -> None:
    rows = _rows(name, {backend: get(backend) for backend in ("eager", "emulate")})
    for row in rows.values():
        assert row.status is Status.PASS, row.message
        assert row.message.startswith(f"{STATEFUL}: {buffer} (eager and the backend are compared "
                                      "from the same starting state)")
        assert row.evidence.drift == {"outcome": drift.CHECK_FAILED, "change": "float32 → float64",
                                      "detail": STATEFUL}


@pytest.mark.slow
def test_a_step_counter_passes_on_inductor_whose_compile_calls_the_module() -> None:
    [row] = _rows("step_counter", {"inductor": get("inductor")}).values()
    assert row.status is Status.PASS, row.message


def test_a_snapshot_finds_and_restores_changed_buffers() -> None:
    module = torch.nn.BatchNorm1d(3).train()
    module.register_buffer("history", torch.zeros(2))
    snapshot = StateSnapshot(module)
    mean = module.running_mean
    module(torch.randn(8, 3) + 5)
    module.history = torch.zeros(4)  # rebound with another shape
    assert snapshot.changed() == ["running_mean", "running_var", "num_batches_tracked", "history"]
    snapshot.restore()
    assert snapshot.changed() == []
    assert module.running_mean is mean and torch.equal(mean, torch.zeros(3))
    assert module.history.shape == (2,) and "history" in dict(module.named_buffers())


def test_a_nan_buffer_left_alone_is_unchanged() -> None:
    module = torch.nn.Module()
    module.register_buffer("mask", torch.tensor([float("nan"), 1.0]))
    assert StateSnapshot(module).changed() == []


