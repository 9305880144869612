"""Choosing the lowering backend: the default order, several releases, fetching, and the report
sections that compare releases and set emulate's rules against Torch-TensorRT's own lowering."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import REPO
from trtcheck import backends
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.cli import main
from trtcheck.config.cascade import resolve
from trtcheck.core.traits import Kind
from trtcheck.errors import ConfigError
from trtcheck.render import render_markdown
from trtcheck.results.record import Record
from trtcheck.results.rows import Evidence, Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

FIXTURES = REPO / "fixtures"


def test_without_tensorrt_the_default_is_lowering_on_the_release_for_this_torch(
        ttrt_releases: dict[str, Path]) -> None:
    opts = backends.choose(resolve((FIXTURES,), device="cpu"))
    assert opts.backends == ("lowering",)
    assert opts.backend_note is not None
    assert opts.backend_note.startswith("no backend named: using lowering, Torch-TensorRT 2.13")
    # By default the release's converters run over the TensorRT stand-in (lowering_dryrun off).
    assert "a prediction at the converters and engine, not TensorRT" in opts.backend_note
    dry = backends.choose(resolve((FIXTURES,), device="cpu", lowering_dryrun=True))
    assert dry.backend_note is not None
    assert "a prediction at the graph level, not TensorRT" in dry.backend_note


def test_without_the_code_the_default_is_emulate_naming_both_reasons(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)  # with CI set, there is no fallback (test_fallback.py)
    missing = str(tmp_path / "torch_tensorrt-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    opts = backends.choose(resolve((FIXTURES,), device="cpu", torch_tensorrt=(missing,)))
    assert opts.backends == ("emulate",)
    assert opts.backend_note is not None and "(tensorrt: " in opts.backend_note
    assert "; lowering: " in opts.backend_note
    assert opts.fallback_note is not None
    assert opts.fallback_note.startswith("emulate ran instead of lowering, the default: ")
    assert opts.fallback_note.endswith("not Torch-TensorRT's converters, so a converter's own bug "
                                       "passes there")


def test_several_releases_give_one_lowering_backend_each(ttrt_releases: dict[str, Path]) -> None:
    opts = backends.choose(resolve((FIXTURES,), device="cpu", backends=("lowering", "emulate"),
                                   torch_tensorrt=("2.12.1", str(ttrt_releases["2.14.0"]))))
    assert opts.backends == ("lowering@2.12.1", "lowering@2.14.0", "emulate")
    made = backends.instantiate(opts)
    assert list(made) == list(opts.backends)
    assert [b.version for b in made.values() if isinstance(b, LoweringBackend)] == ["2.12.1", "2.14.0"]


def test_torch_tensorrt_needs_the_lowering_backend() -> None:
    with pytest.raises(ConfigError, match="--torch-tensorrt: picks the code of the lowering backend"):
        resolve((FIXTURES,), device="cpu", backends=("emulate",), torch_tensorrt=("2.13.0",))


def test_fetch_command_fills_the_cache(ttrt_releases: dict[str, Path],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fetch", "torch-tensorrt", "2.13.0"]) == 0
    assert capsys.readouterr().out.strip() == f"torch-tensorrt 2.13.0: {ttrt_releases['2.13.0']}"


def _row(backend: str, status: Status, kind: Kind, message: str = "") -> Row:
    version = backend.partition("@")[2]
    return Row("m::one_minus[complex64]", "m", "one_minus", "complex64", backend, "default", kind,
               status=status, message=message, stage=None if status is Status.PASS else "compare",
               evidence=Evidence(versions={"torch_tensorrt": version} if version else {}))


def test_report_sets_the_rules_against_each_release() -> None:
    rows = [_row("emulate", Status.PASS, Kind.EMULATED),
            _row("lowering@2.12.1", Status.FAIL, Kind.LOWERED, "max abs err 1 on out"),
            _row("lowering@2.14.0", Status.PASS, Kind.LOWERED)]
    analyses = {"m::one_minus[complex64]": {"complex": {"ops": [{"op": "aten.rsub.Scalar"}]}}}
    text = render_markdown(Judged.of(Record({}, {}, rows, analyses)))
    matrix = text.split("## Torch-TensorRT releases")[1].split("## ")[0]
    assert "| 2.12.1" in matrix and "| 2.14.0" in matrix
    assert "| m::one\\_minus\\[complex64\\] | default | **fail** | pass |" in matrix
    disagree = text.split("## Where emulate and lowering disagree")[1].split("## ")[0]
    assert ("(aten.rsub.Scalar): the guide's rule (emulate) predicts pass; Torch-TensorRT "
            "2.12.1's lowering gives fail at compare: max abs err 1 on out") in disagree
    assert "2.14.0's lowering" not in disagree  # it agrees with the rule


def test_no_comparison_sections_when_nothing_differs() -> None:
    rows = [_row("emulate", Status.PASS, Kind.EMULATED), _row("lowering", Status.PASS, Kind.LOWERED)]
    text = render_markdown(Judged.of(Record({}, {}, rows)))
    assert "## Torch-TensorRT releases" not in text and "disagree" not in text
