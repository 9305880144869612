"""float64 that stays in PyTorch passes; float64 in a TensorRT block is unsupported without
truncate_double (tests/zoos/float64_placement), and the converter table ``emulate`` decides by.

The table (trtcheck/emulation/converters.json) is what ``python -m
trtcheck.backends.lowering.converter_table`` generates from Torch-TensorRT 2.13.0's real converter
registry; ``lowering`` runs that release's partitioner.
"""

from __future__ import annotations

import pytest

from tests.helpers import TESTS
from trtcheck.backends import Backend
from trtcheck.backends.emulate import EmulateBackend
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.emulation import converters
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.status import Status

ZOO = TESTS / "zoos" / "float64_placement"
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)
IN_PYTORCH = ("returns_double", "cumprod_in_double", "lgamma_in_double")
IN_TENSORRT = {"scale_in_double": "node mul (aten.mul.Tensor) holds float64 and Torch-TensorRT "
                                  "2.13.0 converts aten.mul.Tensor",
               "back_to_float": "node to_1 (aten.to.dtype) holds float64 and aten.to.dtype "
                                "becomes aten._to_copy.default and Torch-TensorRT 2.13.0 converts "
                                "aten._to_copy.default"}


def _rows(backends: dict[str, Backend]) -> dict[tuple[str, str], Row]:
    opts = Options(paths=(ZOO,), timing=QUICK, dtype_drift=False, deploy=False)
    return {(row.case_id.split("::")[1].removesuffix("[default]"), row.backend): row
            for case in collect(opts).cases for row in iter_rows(case, opts, backends)
            if isinstance(row, Row)}


def test_float64_in_pytorch_passes_and_in_tensorrt_is_unsupported() -> None:
    rows = _rows({"emulate": EmulateBackend()})
    for name in IN_PYTORCH:
        row = rows[(name, "emulate")]
        assert row.status is Status.PASS, row.message
        assert row.evidence.details["converter_table"] == (
            "Torch-TensorRT 2.13.0's converter registry (trtcheck/emulation/converters.json)")
    for name, words in IN_TENSORRT.items():
        row = rows[(name, "emulate")]
        assert (row.status, row.stage) == (Status.UNSUPPORTED, "compile")
        assert row.message == (f"TensorRT has no FP64: {words}; truncate_double = true computes "
                               "it in float32")


@pytest.mark.slow
def test_emulate_agrees_with_the_real_partitioner(ttrt_releases) -> None:
    rows = _rows({"emulate": EmulateBackend(), "lowering": LoweringBackend("2.13.0")})
    for name in (*IN_PYTORCH, *IN_TENSORRT):
        lowered, emulated = rows[(name, "lowering")], rows[(name, "emulate")]
        assert lowered.status is emulated.status, (name, lowered.message, emulated.message)


def test_the_table_names_its_release_and_a_validator_that_refuses_float64() -> None:
    table = converters.table()
    assert table.release == "2.13.0"
    cast = table.converters["aten._to_copy.default"]
    assert cast["validated"] and cast["accepts"]["float32>float64"] is False
    assert cast["accepts"]["float64>float32"] is True
    assert not table.converters["aten.mul.Tensor"]["validated"]
    assert "aten.cumprod.default" not in table.converters


