"""The rule over plain runs measured on identical code: A/A pairs of fresh ``trtcheck run``s,
judged as ``trtcheck run --baseline`` and ``trtcheck diff`` judge two plain records
(``trtcheck.results.baseline.compare``), on each metric.

Runs ``trtcheck run ZOO`` ``2 × --pairs`` times, each a fresh process (one torch thread on a
CPU), into ``--work``/runN (a run already there is reused: the command resumes), then judges
run 2k+1 against run 2k. Every pair is the same code, so every row flagged a regression is a
false alarm. Per metric it prints: the pairs with a false alarm, the rows judged (neither
below the threshold nor set aside), the rows set aside as unstable (an interval wider than
``[timing] unstable_ci`` whose nearest ends are within the threshold) and the largest change.

    python benchmarks/bench_pairs.py --device cpu --work /tmp/pairs [--pairs 10] [--zoo benchmarks/gate]
    python benchmarks/bench_pairs.py --quick --work /tmp/pairs-quick   # one tiny model, one pair, eager
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from _common import REPO, trtcheck, wilson

from trtcheck.results.baseline import IMPROVEMENT, NOISE, REGRESSION, SMALL, UNSTABLE, compare
from trtcheck.results.record import load

QUICK_ZOO = "benchmarks/quick/"
# --quick's backend: the cheapest timed one (the zoo's default, a prediction, has no latency to judge)
QUICK_BACKEND = "eager"
METRICS = ("speedup", "latency")


def ensure_runs(work: Path, zoo: str, device: str, count: int, backend: list[str]) -> list[Path]:
    """The results.json of ``count`` fresh runs, running the ones ``work`` does not hold yet."""
    records = []
    for i in range(count):
        out = work / f"run{i}"
        if not (out / "results.json").is_file():
            started = time.monotonic()
            proc = trtcheck(["run", zoo, "--device", device, "--out", str(out), "-q", *backend],
                            device=device)
            load_now = Path("/proc/loadavg").read_text().split()[0] \
                if Path("/proc/loadavg").exists() else "?"
            print(f"run {i}: exit {proc.returncode} in {time.monotonic() - started:.0f} s "
                  f"(load {load_now})", flush=True)
            if not (out / "results.json").is_file():
                sys.exit(f"run {i} wrote no results.json: {proc.stderr[-2000:]}")
        records.append(out / "results.json")
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--zoo", default="benchmarks/gate")
    parser.add_argument("--threshold", type=float, default=0.07)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--quick", action="store_true",
                        help=f"one tiny model, one pair, --backend {QUICK_BACKEND}")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.zoo = 1, QUICK_ZOO
    backend = ["--backend", QUICK_BACKEND] if args.quick else []
    paths = ensure_runs(args.work, str(REPO / args.zoo), args.device, 2 * args.pairs, backend)
    records = [load(p) for p in paths]
    print(f"\n{args.pairs} A/A pairs of `trtcheck run {args.zoo}` on {args.device}, threshold "
          f"{args.threshold:.0%}\n")
    print("| metric | pairs with a false alarm [95% Wilson] | rows judged | rows set aside "
          "unstable | within noise | largest change |")
    print("|---|---|---|---|---|---|")
    missed = False
    for metric in METRICS:
        alarms = judged = unstable = noise = rows = 0
        largest = 1.0
        for base, head in zip(records[::2], records[1::2], strict=True):
            diff = compare(base, head, metric=metric, threshold=args.threshold)
            changes = [c.latency for c in diff.changes if c.latency is not None]
            rows += len(changes)
            alarms += any(c.verdict == REGRESSION for c in changes)
            judged += sum(c.verdict in (REGRESSION, IMPROVEMENT, SMALL) for c in changes)
            unstable += sum(c.verdict == UNSTABLE for c in changes)
            noise += sum(c.verdict == NOISE for c in changes)
            largest = max([largest, *(max(c.slowdown, 1 / c.slowdown) for c in changes
                                      if c.slowdown > 0)])
        low, high = wilson(alarms, args.pairs)
        missed |= alarms > 0
        print(f"| {metric} | {alarms} / {args.pairs} [{low:.0%}, {high:.0%}] | {judged} of {rows} "
              f"| {unstable} | {noise} | ×{largest:.3f} |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
