"""How stable trtcheck's latency figures are from one run to the next.

Runs ``trtcheck run ZOO`` ``--runs`` times and, for every row, compares across runs (max / min)
the backend's median latency and the speedup (eager median / backend median, measured
interleaved). A ratio near 1 means a pull request's latency table can be trusted to show real
changes; docs/benchmarks.md quotes the figures measured on CPU and on an H200.

    python benchmarks/bench_latency_stability.py [--runs 3] [--device cuda] [--zoo fixtures/]
    python benchmarks/bench_latency_stability.py --quick    # one tiny model, 2 runs, eager
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUICK_ZOO = "benchmarks/quick/"  # --quick: one tiny model (benchmarks/quick/tiny.py)


Figures = dict[tuple[str, str, str], tuple[float, float]]


def figures(zoo: str, device: str, backends: list[str], out: Path) -> Figures:
    """(backend median ms, speedup) per row of one run."""
    argv = [sys.executable, "-m", "trtcheck", "run", zoo, "--device", device, "-q", "--out", str(out)]
    for b in backends:
        argv += ["--backend", b]
    subprocess.run(argv, cwd=REPO, check=False, capture_output=True)
    rows = json.loads((out / "results.json").read_text())["rows"]
    return {(r["case_id"], r["backend"], r["profile"]):
            (r["latency"]["backend"]["median_ms"], r["latency"]["speedup"])
            for r in rows if r.get("latency")}


def spread(runs: list[Figures], key: tuple[str, str, str], field: int) -> float:
    values = [r[key][field] for r in runs]
    return max(values) / min(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--backend", action="append", default=None)
    parser.add_argument("--quick", action="store_true", help="one tiny model, 2 runs, eager")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.zoo, args.backend = 2, QUICK_ZOO, ["eager"]
    backends = args.backend or ["eager", "emulate"]
    with tempfile.TemporaryDirectory() as tmp:
        runs = [figures(args.zoo, args.device, backends, Path(tmp) / str(i))
                for i in range(args.runs)]
    keys = sorted(set.intersection(*(set(r) for r in runs)))
    print(f"device {args.device}, {args.runs} runs, {len(keys)} rows with latency; "
          "max/min across runs: median over rows (worst row)")
    print("| backend | rows | backend ms (run 1, median row) | backend ms max/min | speedup max/min |")
    print("|---|---|---|---|---|")
    for backend in backends:
        mine = [k for k in keys if k[1] == backend]
        if not mine:
            continue
        ms = [spread(runs, k, 0) for k in mine]
        speedup = [spread(runs, k, 1) for k in mine]
        typical = statistics.median(runs[0][k][0] for k in mine)
        print(f"| {backend} | {len(mine)} | {typical:.3f} | {statistics.median(ms):.2f} "
              f"({max(ms):.2f}) | {statistics.median(speedup):.2f} ({max(speedup):.2f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
