"""``trtcheck reduce`` on the buried zoo: every buried pattern reduced in one run on
Torch-TensorRT's real lowering code (slow: the CLI in a subprocess). A file of its own, so that
the test workers share the slow reductions out by file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_reduce import ZOO, summaries, trtcheck

from trtcheck.reduce.bundle import ZOO_FILE
from trtcheck.reduce.graph import slug


@pytest.fixture(scope="module")
def buried(tmp_path_factory: pytest.TempPathFactory, ttrt_releases: dict[str, Path]) -> Path:
    out = tmp_path_factory.mktemp("buried")
    proc = trtcheck("reduce", str(ZOO / "buried.py"), "--backend", "lowering",
                    "--torch-tensorrt", "2.13.0", "--out", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the run's verdict: rows fail
    return out


PATTERNS = ("one_minus", "times_2j_as_real", "over_complex_scalar_as_real", "plus_1j",
            "complex_plus_real", "complex_of_reals", "real_part_as_complex", "two_complex_outputs")


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_each_buried_pattern_reduces_to_at_most_4_nodes(buried: Path, pattern: str) -> None:
    summary = summaries(buried)[f"buried::buried_{pattern}[complex64]"]
    assert summary["original_nodes"] >= 50
    assert summary["reduced_nodes"] <= 4 and summary["reproduced"] is True, summary
    assert summary["values"] == "random"
    folder = buried / "repro" / slug(f"buried::buried_{pattern}[complex64]-lowering-default")
    issue = (folder / "ISSUE.md").read_text()
    assert "Predicted, not measured on TensorRT" in issue and "random values" in issue
    repro = (folder / "repro.py").read_text()
    assert "trtcheck" not in repro.split('"""', 2)[2].split("def main")[0]  # torch only, no zoo


@pytest.mark.slow
def test_a_candidate_that_fails_differently_is_rejected(buried: Path) -> None:
    """The buried complex + real tensor fails at compile; a candidate without that add (the real
    and complex values then meet nowhere) fails otherwise or passes, and is not kept."""
    summary = summaries(buried)["buried::buried_complex_plus_real[complex64]"]
    assert summary["signature"]["status"] == "error" and summary["signature"]["stage"] == "compile"
    folder = buried / "repro" / slug("buried::buried_complex_plus_real[complex64]-lowering-default")
    assert "aten.add.Tensor" in (folder / ZOO_FILE).read_text()


@pytest.mark.slow
def test_repro_without_tensorrt_says_so_and_gives_the_trtcheck_command(buried: Path) -> None:
    folder = buried / "repro" / slug("buried::buried_one_minus[complex64]-lowering-default")
    proc = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "TensorRT is not usable here" in proc.stdout
    assert "trtcheck run . --backend lowering --profile default --torch-tensorrt 2.13.0" in proc.stdout
