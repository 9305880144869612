"""``bench_gate.py``'s quick mode (see test_benchmarks.py), in a file of its own: at over a
minute the slowest of them, shared out to a test worker by itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_benchmarks import APART, run_quick


@pytest.mark.slow
@pytest.mark.parametrize("script", APART)
def test_quick_mode_runs_the_whole_script(script: str, tmp_path: Path) -> None:
    run_quick(script, tmp_path)
