"""Cost per case of the ``lowering`` backend at each level it predicts at, and of its deploy stage.

Runs ``trtcheck run ZOO --backend lowering`` (the release's converters and engine, through the
TensorRT stand-in, each compiled row then saved, loaded in the loader process and compared again),
the same with ``--no-deploy``, and with ``--lowering-dryrun`` (graph level only, nothing to
deploy), each in a fresh process, and prints, per level, the median over cases of a row's stage
seconds (``timings`` in results.json: build, export, compile, run, compare, drift, save, load,
deploy...), the median over deployed cases of the deploy stages alone (save, load, the loaded
artifact's calls and their comparison) and their sum over the run with the loader's start (its
wait, where the compile had not hidden it), the slowest case, the whole command's wall time, and
the load average it ran under, as a Markdown table for docs/benchmarks.md. The first case of each
run pays the host's import of Torch-TensorRT.

    python benchmarks/bench_lowering_levels.py [--zoo fixtures/] [-k EXPR] [--rounds N] [--quick]

``--rounds`` runs the levels that many times, alternating. ``--quick`` (CI's check that the
script runs) measures one case, ``seed_rope[complex64]``, with and without the deploy stage.
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

from trtcheck.results.rows import DEPLOY_STAGES

REPO = Path(__file__).resolve().parent.parent
LEVELS = {"converters and engine (default)": [],
          "converters and engine, `--no-deploy`": ["--no-deploy"],
          "graph only (`--lowering-dryrun`)": ["--lowering-dryrun"]}
LOADER_WAIT = "deploy loader"  # the loader's wait, paid once a run


def level(zoo: str, extra: list[str], keyword: str | None
          ) -> tuple[list[float], list[float], float, float]:
    """Seconds per case (a case's rows' stage seconds summed), the deploy stages' seconds per
    deployed case, the run's deploy seconds with the loader's wait, and the command's wall time."""
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
    deployed: dict[str, float] = {}
    for row in rows:
        timings = row["timings"] or {}
        per_case[row["case_id"]] = per_case.get(row["case_id"], 0.0) + sum(timings.values())
        if any(stage in timings for stage in DEPLOY_STAGES):
            deployed[row["case_id"]] = (deployed.get(row["case_id"], 0.0)
                                        + sum(timings.get(s, 0.0) for s in DEPLOY_STAGES))
    whole = sum(deployed.values()) + sum((r["timings"] or {}).get(LOADER_WAIT, 0.0) for r in rows)
    return list(per_case.values()), list(deployed.values()), whole, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("-k", dest="keyword", help="only the cases this selects, as trtcheck's -k")
    parser.add_argument("--rounds", type=int, default=1, help="times each level runs, alternating")
    parser.add_argument("--quick", action="store_true",
                        help="one case, seed_rope[complex64], with and without the deploy stage")
    args = parser.parse_args()
    keyword = "seed_rope and complex64" if args.quick else args.keyword
    levels = dict(list(LEVELS.items())[:2]) if args.quick else LEVELS
    print("| level | cases | median s/case | deploy s/deployed case | deploy s/run | slowest case s "
          "| command wall s | load before |")
    print("|---|---|---|---|---|---|---|---|")
    for _ in range(args.rounds):
        for name, extra in levels.items():
            load = os.getloadavg()[0]
            cases, deployed, whole, wall = level(args.zoo, extra, keyword)
            per_deployed = f"{statistics.median(deployed):.2f}" if deployed else "-"
            print(f"| {name} | {len(cases)} | {statistics.median(cases):.2f} | {per_deployed} | "
                  f"{whole:.1f} | {max(cases):.2f} | {wall:.1f} | {load:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
