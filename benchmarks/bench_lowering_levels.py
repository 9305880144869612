"""Cost per case of the ``lowering`` backend at each level it predicts at.

Runs ``trtcheck run ZOO --backend lowering`` (the release's converters and engine, through the
TensorRT stand-in) and the same with ``--lowering-dryrun`` (graph level only), each in a fresh
process, and prints, per level, the median over cases of a row's stage seconds (``timings`` in
results.json: build, export, compile, run, compare, drift...), the slowest case, the whole
command's wall time, and the load average it ran under, as a Markdown table for
docs/benchmarks.md. The first case of each run pays the host's import of Torch-TensorRT.

    python benchmarks/bench_lowering_levels.py [--zoo fixtures/] [-k EXPR] [--quick]

``--quick`` (CI's check that the script runs) measures one case, ``seed_rope[complex64]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LEVELS = {"converters and engine (default)": [], "graph only (--lowering-dryrun)": ["--lowering-dryrun"]}


def level(zoo: str, extra: list[str], keyword: str | None) -> tuple[list[float], float]:
    """Seconds per case (a case's rows' stage seconds summed) and the command's wall time."""
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        select = ["-k", keyword] if keyword else []
        proc = subprocess.run([sys.executable, "-m", "trtcheck", "run", zoo, "--backend", "lowering",
                               *extra, *select, "--out", out], cwd=REPO, capture_output=True,
                              text=True, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"trtcheck exited {proc.returncode}:\n{proc.stderr[-2000:]}")
        rows = json.loads((Path(out) / "results.json").read_text())["rows"]
    per_case: dict[str, float] = {}
    for row in rows:
        per_case[row["case_id"]] = per_case.get(row["case_id"], 0.0) + sum((row["timings"] or {}).values())
    return list(per_case.values()), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("-k", dest="keyword", help="only the cases this selects, as trtcheck's -k")
    parser.add_argument("--quick", action="store_true", help="one case: seed_rope[complex64]")
    args = parser.parse_args()
    keyword = "seed_rope and complex64" if args.quick else args.keyword
    print("| level | cases | median s/case | slowest case s | command wall s | load before |")
    print("|---|---|---|---|---|---|")
    for name, extra in LEVELS.items():
        load = os.getloadavg()[0]
        cases, wall = level(args.zoo, extra, keyword)
        print(f"| {name} | {len(cases)} | {statistics.median(cases):.2f} | {max(cases):.2f} | "
              f"{wall:.1f} | {load:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
