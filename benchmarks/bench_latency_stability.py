"""How stable trtcheck's latency figures are from one run to the next.

Runs ``trtcheck run ZOO`` ``--runs`` times and, for every row, compares the backend's median
latency across runs (max / min). A ratio near 1 means a pull request's latency table can be
trusted to show real changes; the README quotes the figures measured on CPU and on an H200.

    python benchmarks/bench_latency_stability.py [--runs 3] [--device cuda] [--zoo fixtures/]
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


def medians(zoo: str, device: str, backends: list[str], out: Path) -> dict[tuple[str, str, str], float]:
    argv = [sys.executable, "-m", "trtcheck", "run", zoo, "--device", device, "-q", "--out", str(out)]
    for b in backends:
        argv += ["--backend", b]
    subprocess.run(argv, cwd=REPO, check=False, capture_output=True)
    rows = json.loads((out / "results.json").read_text())["rows"]
    return {(r["case_id"], r["backend"], r["profile"]): r["latency"]["backend"]["median_ms"]
            for r in rows if r.get("latency")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--backend", action="append", default=None)
    args = parser.parse_args()
    backends = args.backend or ["eager", "emulate"]
    with tempfile.TemporaryDirectory() as tmp:
        runs = [medians(args.zoo, args.device, backends, Path(tmp) / str(i)) for i in range(args.runs)]
    keys = sorted(set.intersection(*(set(r) for r in runs)))
    ratios = {k: max(r[k] for r in runs) / min(r[k] for r in runs) for k in keys}
    print(f"device {args.device}, {args.runs} runs, {len(keys)} rows with latency")
    print("| backend | rows | median ms (first run) | median max/min | worst max/min |")
    print("|---|---|---|---|---|")
    for backend in backends:
        mine = [k for k in keys if k[1] == backend]
        if not mine:
            continue
        spread = [ratios[k] for k in mine]
        typical = statistics.median(runs[0][k] for k in mine)
        print(f"| {backend} | {len(mine)} | {typical:.3f} | {statistics.median(spread):.2f} "
              f"| {max(spread):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
