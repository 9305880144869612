"""Rows of the lowering backend that say why and whose: Torch-TensorRT 2.13.0's real converters
over the behaving stand-in (NOT TensorRT), on tests/zoos/verdicts, through the case runner
in-process. One test, so that one lowering host (serving tests/standin_gaps.py's extra requests)
serves every row, whichever test worker runs it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import TESTS
from tests.standin_gaps import With, Without
from trtcheck.backends.lowering import lowering_backend
from trtcheck.backends.lowering.client import LoweringHost
from trtcheck.backends.lowering.code import CodeSource
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.status import Status

ZOO = TESTS / "zoos" / "verdicts"
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)
NOT_BLAMED = "a bug in Torch-TensorRT"


class Lowering:
    """The lowering backend on 2.13.0 and its host, which runs tests/standin_gaps.py."""

    def __init__(self) -> None:
        self.hosts: list[LoweringHost] = []
        self.backend = LoweringBackend("2.13.0")
        self.opts = Options(paths=(ZOO,), timing=QUICK, dtype_drift=False, deploy=False)
        self.cases = {c.spec.name: c for c in collect(self.opts).cases}

    def start(self, source: CodeSource, behaving: bool = False) -> LoweringHost:
        self.hosts.append(LoweringHost(source, target=str(TESTS / "standin_gaps.py"), behaving=behaving))
        return self.hosts[-1]

    def row(self, name: str) -> Row:
        [row] = [r for r in iter_rows(self.cases[name], self.opts, {"lowering": self.backend})
                 if isinstance(r, Row)]
        return row

    def request(self, message: Any) -> None:
        self.hosts[-1].request(message)


@pytest.fixture
def lowering(ttrt_releases: dict[str, Path]) -> Iterator[Lowering]:
    made = Lowering()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lowering_backend, "LoweringHost", made.start)
        yield made
    made.backend.deactivate()


@pytest.mark.slow
def test_lowering_rows_say_why_and_whose(lowering: Lowering) -> None:
    refused_gather_names_the_cumsum_converter_and_keeps_its_notes(lowering.row("position_ids"))
    column_write_is_refused_at_build_naming_the_copy_converter(lowering.row("column_write"))
    a_verdict_resting_on_a_stand_in_choice_says_so(lowering.row("masked_attention"))
    a_choice_whose_value_is_not_used_names_its_converter(lowering.row("embedding_bags"))
    lowering.request(Without("add_gather"))
    try:
        row = lowering.row("position_ids")
    finally:
        lowering.request(With("add_gather"))
    an_api_the_stand_in_lacks_skips_the_row_naming_it(row)


def refused_gather_names_the_cumsum_converter_and_keeps_its_notes(row: Row) -> None:
    assert (row.status, row.stage) == (Status.ERROR, "compile")
    message = row.message
    assert message.startswith("the TensorRT stand-in's builder (predicting TensorRT's) refused layer "
                              "'[GATHER]-[aten_ops.embedding.default]")
    assert "IGatherLayer indices has type FLOAT" in message
    assert "models.py:20)" in message  # the embedding's line in the zoo
    assert "float32 where PyTorch computes int64 since node cumsum (aten.cumsum.default" in message
    assert "models.py:18)" in message  # the cumsum's
    assert "(aten_ops_cumsum at torch_tensorrt/dynamo/conversion/aten_ops_converters.py:" in message
    assert message.endswith("report that converter to Torch-TensorRT")
    assert NOT_BLAMED not in message and "assert cuda_engine" not in message
    notes = row.evidence.notes
    assert any(n.startswith("int64 narrowed to float32 inside the engine by cumsum") for n in notes)
    assert any("IGatherLayer indices has type FLOAT" in n for n in notes)
    assert row.evidence.versions["torch_tensorrt"] == "2.13.0"
    assert row.evidence.details["stage"].startswith("converters: stopped after ")
    assert "assert cuda_engine" in (row.traceback or "")  # where it showed, kept for the curious


def column_write_is_refused_at_build_naming_the_copy_converter(row: Row) -> None:
    assert (row.status, row.stage) == (Status.ERROR, "compile")  # at build, not at run
    assert "'[SCATTER]-[aten_ops.scatter.src]-[/scatter_scatter_layer]' (SCATTER)" in row.message
    assert "IScatterLayer in ELEMENT mode needs data, indices and updates of one rank" in row.message
    assert "since node copy (aten.copy.default" in row.message
    assert "(aten_ops_copy at torch_tensorrt/dynamo/conversion/aten_ops_converters.py:" in row.message
    assert NOT_BLAMED not in row.message


def a_verdict_resting_on_a_stand_in_choice_says_so(row: Row) -> None:
    assert row.status is Status.FAIL
    assert ("the stand-in returns NaN for a fully masked attention row (softmax over no key); "
            "TensorRT's behaviour there is undocumented (layer '") in row.message
    assert row.evidence.remark in row.message
    # the node and converter whose layer chose, the user's line, and the value reaching an output
    assert "' of node scaled_dot_product_attention, converter aten." in row.evidence.remark
    assert "models.py:" in row.evidence.remark and row.evidence.remark.endswith("; value used)")


def a_choice_whose_value_is_not_used_names_its_converter(row: Row) -> None:
    # embedding_bag's converter gathers offsets[len(offsets)] on its last loop trip, then drops it
    assert row.status is Status.PASS
    assert "out-of-bounds gather index" in row.evidence.remark
    assert ("of node _embedding_bag, converter aten._embedding_bag.default, at "
            in row.evidence.remark)
    assert row.evidence.remark.endswith("; value not used)")


def an_api_the_stand_in_lacks_skips_the_row_naming_it(row: Row) -> None:
    assert (row.status, row.stage) == (Status.SKIPPED, "compile")
    assert row.message == ("the prediction could not be made: the TensorRT stand-in lacks "
                           "INetworkDefinition.add_gather")
    assert NOT_BLAMED not in row.message and "StandInLacks" in (row.traceback or "")
    assert row.evidence.details["stage"].startswith("converters: stopped after ")
