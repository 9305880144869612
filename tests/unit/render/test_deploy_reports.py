"""The deploy stage in every report and gate: report.md's section, comment.md's line, JUnit's
system-out, the pytest item's headline, ``ab``'s newly failing rows, reduce's signature and repro."""

from __future__ import annotations

import ast

from trtcheck.core.traits import Kind
from trtcheck.reduce import bundle
from trtcheck.reduce.signature import reducible
from trtcheck.render.comment import render_comment
from trtcheck.render.item import reason
from trtcheck.render.junit import render_junit
from trtcheck.render.markdown import render_markdown
from trtcheck.results.ab import newly_failing
from trtcheck.results.record import Record
from trtcheck.results.rows import Evidence, Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

PASSED = {"format": "exported_program", "status": "pass", "size_bytes": 28226, "load_s": 0.14,
          "shapes": 1, "kept": {"complex": "kept"}}
DIFFERS = ("the saved artifact differs from the compiled module (Torch-TensorRT's exporter): "
           "1 of 1 outputs failed; worst: out: dtype torch.float32 != eager torch.complex64")


def _row(name: str, entry: dict[str, object], status: Status = Status.PASS,
         stage: str | None = None, message: str = "") -> Row:
    return Row(f"zoo::{name}[complex64]", "zoo", name, "complex64", "lowering", "default",
               kind=Kind.LOWERED, status=status, stage=stage, message=message,
               outputs=[{"path": "", "passed": True}], evidence=Evidence(deploy=[entry]))


def _failed() -> Row:
    return _row("rope", {**PASSED, "status": "fail", "step": "compare",
                         "owner": "Torch-TensorRT's exporter", "message": DIFFERS,
                         "kept": {"complex": "out complex64[2, 8] came back float32[2, 8, 2]"}},
                Status.FAIL, "deploy", f"deploy as exported_program: {DIFFERS}")


def test_every_report_shows_the_round_trip_and_a_failure_at_deploy() -> None:
    record = Record({}, {}, [_row("gain", PASSED), _failed()])
    report = render_markdown(Judged.of(record))
    assert "## Deploy round trip" in report
    assert "exported\\_program: 1 pass, 1 fail" in report
    assert "not a TensorRT measurement" in report.split("## Deploy round trip")[1]
    assert "| 28.2 kB | 0.14 s | complex kept |" in report
    assert "came back float32\\[2, 8, 2\\]" in report
    assert "Saved and loaded again: exported\\_program: 1 pass, 1 fail" in render_comment(Judged.of(record))
    junit = render_junit(record)
    assert "deploy: exported_program: pass, 28.2 kB, loaded in 0.14 s, complex kept" in junit
    assert "stage: deploy" in junit
    assert reason(_failed()).startswith("fail at deploy: deploy as exported_program: the saved "
                                        "artifact differs from the compiled module")


def test_ab_counts_a_deploy_failure_the_head_introduced_as_newly_failing() -> None:
    head = Record({}, {}, [_row("gain", PASSED), _failed()],
                  ab={"base_rows": [_row("gain", PASSED).to_dict(), _row("rope", PASSED).to_dict()]})
    assert newly_failing(head) == {_failed().key}


def test_reduce_cuts_a_deploy_failure_and_its_repro_saves_and_loads() -> None:
    assert reducible(_failed()) is None
    ran = bundle.Ran("lowering", "2.13.0", bundle.CONVERTERS)
    source = bundle.repro_source("class Reduced: ...", {"min_block_size": 1}, [], "trtcheck run .",
                                 "about", ran, "default", "exported_program")
    ast.parse(source)
    assert ("torch_tensorrt.save(compiled, str(HERE / 'model.ep'), "
            "output_format='exported_program', arg_inputs=list(inputs))") in source
    assert "compiled = torch_tensorrt.load(str(HERE / 'model.ep')).module()" in source
    plain = bundle.repro_source("class Reduced: ...", {}, [], "trtcheck run .", "about", ran,
                                "default")
    assert "torch_tensorrt.save" not in plain
