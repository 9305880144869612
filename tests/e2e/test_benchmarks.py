"""Every benchmark script's quick mode runs its whole path on CPU, so that none rots unseen.

Each script runs in a fresh process on tiny inputs (``--quick``); the test asserts that it
finishes and prints its table. A script whose quick mode another's runs whole (``RUN_BY``) is
checked in that one's output instead of running twice. A quick mode measures nothing worth
reading: the figures are the full runs', on the benchmarks page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

BENCHMARKS = REPO / "benchmarks"
TABLE = "|---"

# script -> (its quick command's arguments, with {work} a fresh folder; what its output shows)
QUICK: dict[str, tuple[list[str], str]] = {
    "bench_cli.py": (["--quick"], TABLE),
    "bench_compare_memory.py": (["--quick"], TABLE),
    "bench_compile_cache.py": (["--device", "cpu", "--quick", "--work", "{work}"], TABLE),
    "bench_control.py": (["--quick"], "intervals holding 1"),
    "bench_converter_suite.py": (["--quick"], "pass rate: 100.0% (6 of 6)"),
    "bench_eager_rows.py": (["--quick"], "the largest gap"),
    "bench_gate.py": (["--device", "cpu", "--quick", "--work", "{work}"], TABLE),
    "bench_html.py": (["--quick"], TABLE),
    "bench_latency_gpu.py": (["--device", "cpu", "--quick", "--json", "{work}/latency.json"], TABLE),
    "bench_latency_stability.py": (["--quick"], TABLE),
    "bench_lowering_levels.py": (["--quick"], TABLE),
    "bench_merge.py": (["--quick"], TABLE),
    "bench_overhead.py": (["--quick"], TABLE),
    "bench_pairs.py": (["--quick", "--work", "{work}"], TABLE),
    "bench_reduce.py": (["--quick", "--out", "{work}/reduce"], TABLE),
    "bench_startup.py": (["--quick"], TABLE),
    "bench_workers.py": (["--quick"], TABLE),
    "canary_torch_tensorrt.py": (["--quick"], "canary: ok"),
}
# script -> (the script whose quick mode runs its quick mode whole and prints its output; what
# that output shows): tested there rather than run twice.
RUN_BY: dict[str, tuple[str, str]] = {
    "bench_plant.py": ("bench_gate.py", "planted work, cpu: target"),
}


def test_every_benchmark_script_has_a_quick_command() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")}
    assert scripts == set(QUICK) | set(RUN_BY) and not set(QUICK) & set(RUN_BY)
    assert all(by in QUICK for by, _ in RUN_BY.values())


def run_quick(script: str, tmp_path: Path) -> None:
    """``script``'s quick mode in a fresh process: it finishes and prints what it shows."""
    argv, shows = QUICK[script]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script),
                           *(a.format(work=tmp_path) for a in argv)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    # 1 is a missed target (a quick mode's figures mean nothing); a traceback is a broken script
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for text in (shows, *(also for by, also in RUN_BY.values() if by == script)):
        assert text in proc.stdout, proc.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(QUICK))
def test_quick_mode_runs_the_whole_script(script: str, tmp_path: Path) -> None:
    run_quick(script, tmp_path)
