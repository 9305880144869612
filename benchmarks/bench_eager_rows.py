"""Eager's time across the rows of one run: does eager read the same in every row of a case?

Runs ``trtcheck run fixtures/ --backend eager --backend lowering --time-predictions --no-deploy``
``--runs`` times, each in a fresh process (without the deploy stage, whose loader process would
import torch and the release beside the cases being timed), and for every case compares eager's
median in the ``lowering`` row (timed serially, after eager, since lowering's calls run in
another process) with eager's median in the ``eager`` row of the same run; prints each case's
ratio per run, then how many of them lie within ``--within`` (relative) and the largest gap, the figure
docs/reports.md quotes.

    python benchmarks/bench_eager_rows.py [--runs 3] [--within 0.05]
    python benchmarks/bench_eager_rows.py --quick    # one tiny model, one run: checks the path
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUICK_ZOO = "benchmarks/quick/"  # --quick: one tiny model (benchmarks/quick/tiny.py)


def eager_medians(zoo: str, out: Path) -> dict[tuple[str, str], float]:
    """Eager's device median (ms) in each timed row of one fresh run, by (case, backend)."""
    argv = [sys.executable, "-m", "trtcheck", "run", zoo, "--device", "cpu",
            "--backend", "eager", "--backend", "lowering", "--time-predictions", "--no-deploy",
            "-q", "--out", str(out)]  # a prediction row is timed only when asked
    subprocess.run(argv, cwd=REPO, check=False, capture_output=True)
    rows = json.loads((out / "results.json").read_text())["rows"]
    found = {}
    for row in rows:
        latency = row.get("latency") or row.get("prediction_timing")  # lowering: a prediction
        if latency and row["profile"] in ("-", "default"):
            side = latency.get("eager_device") or latency["eager"]
            found[row["case_id"], row["backend"]] = side["median_ms"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--within", type=float, default=0.05)
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--quick", action="store_true", help="one tiny model, one run")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.zoo = 1, QUICK_ZOO
    ratios: list[float] = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            medians = eager_medians(args.zoo, Path(tmp))
        for (case, backend), ms in sorted(medians.items()):
            control = medians.get((case, "eager"))
            if backend == "eager" or not control:
                continue
            ratio = ms / control
            ratios.append(ratio)
            print(f"run {run + 1}  {case:45s} eager in lowering row {ms:9.4f} ms, in eager row "
                  f"{control:9.4f} ms: {ratio:.3f}")
    if not ratios:
        print("no case timed in both rows")
        return 1
    held = sum(abs(r - 1) <= args.within for r in ratios)
    worst = max(ratios, key=lambda r: abs(r - 1))
    print(f"\n{held} of {len(ratios)} within ±{args.within:.0%}; the largest gap {worst:.3f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
