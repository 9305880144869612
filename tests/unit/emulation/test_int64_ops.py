"""Ops that make int64 inside the graph (tests/zoos/int64_ops), on ``emulate`` and ``lowering``.

Under every profile ``emulate`` must lower them without breaking its own invariants, and it must
pass every row that Torch-TensorRT's real lowering (2.13.0's code) passes under the same profile.
"""

from __future__ import annotations

import pytest

from tests.helpers import TESTS
from trtcheck.backends import Backend, Compiled, CompileJob
from trtcheck.backends.emulate import EmulateBackend
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.core.traits import Kind, Traits
from trtcheck.errors import INTERNAL, InternalError
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import DEPLOY_STAGES, Row
from trtcheck.status import Status

ZOO = TESTS / "zoos" / "int64_ops"
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)
PROFILES = tuple(BUILTIN_PROFILES.values())


def _rows(backends: dict[str, Backend], profiles=PROFILES) -> dict[tuple[str, str, str], Row]:
    opts = Options(paths=(ZOO,), profiles=profiles, timing=QUICK, dtype_drift=False)
    return {(row.case_id.split("::")[1], row.backend, str(row.profile)): row
            for case in collect(opts).cases for row in iter_rows(case, opts, backends)
            if isinstance(row, Row)}


def test_the_zoo_covers_every_op_that_makes_int64() -> None:
    names = {c.spec.name for c in collect(Options(paths=(ZOO,))).cases}
    assert names == {"topk", "sort", "argsort", "max_dim", "min_dim", "argmax_argmin",
                     "gather_topk", "cumsum_ids", "arange", "nonzero", "unique", "searchsorted",
                     "bucketize"}


def test_emulate_lowers_every_op_under_every_profile() -> None:
    rows = _rows({"emulate": EmulateBackend()})
    assert len(rows) == 13 * len(PROFILES)
    # a profile of the torch.compile front-end asks nothing of emulate, which predicts export's
    applies = {p.name for p in PROFILES if not EmulateBackend().not_applicable(p)}
    assert applies and {row.status for (_, _, profile), row in rows.items()
                        if profile not in applies} <= {Status.SKIPPED}
    bad = {key: row.message for key, row in rows.items()
           if key[2] in applies and row.status is not Status.PASS}
    assert not bad


def test_int32_engine_narrows_the_indices_where_they_are_taken_out() -> None:
    rows = _rows({"emulate": EmulateBackend()}, (BUILTIN_PROFILES["int64_as_int32"],))
    casts = rows[("topk[default]", "emulate", "int64_as_int32")].evidence.boundaries
    assert "node getitem_1 (aten.topk.default[1]): int64 -> int32" in casts
    assert "output 1: int32 -> int64" in casts


@pytest.mark.slow
def test_emulate_passes_every_row_the_real_lowering_passes(ttrt_releases) -> None:
    profiles = (BUILTIN_PROFILES["int64_as_int32"], BUILTIN_PROFILES["default"])
    rows = _rows({"emulate": EmulateBackend(), "lowering": LoweringBackend("2.13.0")}, profiles)
    lowered = {(case, profile): row for (case, backend, profile), row in rows.items()
               if backend == "lowering"}
    # int64 = "int32" asks nothing of 2.13, which runs int64 natively: its rows would repeat
    # the default profile's, so they are skipped as not applicable
    assert {row.status for (_, profile), row in lowered.items()
            if profile == "int64_as_int32"} == {Status.SKIPPED}
    # the compiled module matched eager: the row passed, or failed only at the deploy stage after
    # (nonzero's engine has a data-dependent shape, which 2.13.0's save cannot re-export)
    passed = [key for key, row in lowered.items()
              if row.status is Status.PASS or row.stage in DEPLOY_STAGES]
    assert len(passed) >= 11  # all but sort and argsort, which trip over 2.13.0's sort_validator
    for case, profile in passed:
        row = rows[(case, "emulate", profile)]
        assert row.status is Status.PASS, (case, profile, row.message)


class _Broken(Backend):
    """A backend whose own code breaks one of its invariants while compiling."""

    traits = Traits("broken", Kind.MEASURED, rewrites=False, uses_profiles=False)

    def compile(self, job: CompileJob) -> Compiled:
        raise InternalError("the node left int64 behind")


def test_an_internal_error_is_trtchecks_own_not_the_models() -> None:
    opts = Options(paths=(ZOO,), timing=QUICK, dtype_drift=False)
    [case] = [c for c in collect(opts).cases if c.spec.name == "topk"]
    [row] = [r for r in iter_rows(case, opts, {"broken": _Broken()}) if isinstance(r, Row)]
    assert (row.status, row.stage, row.location) == (Status.ERROR, INTERNAL, "")
    assert row.message == ("InternalError: trtcheck's own error, not the model's (please report "
                           "it): the node left int64 behind")
