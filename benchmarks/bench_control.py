"""The control measured: the user's module timed against itself must read 1.00×.

Runs ``trtcheck run fixtures/ --backend eager --backend inductor`` ``--runs`` times, each in a
fresh process, and for the ``eager`` rows (the control) prints per run the median speedup and
its range, how many speedup intervals hold 1, and the control's memory ratios; then the
targets of the trust issue: median within 1.00 ± 0.05 (GPU) or ± 0.10 (CPU), at least 90% of
intervals holding 1, memory ratios 1.00× or "—".

    python benchmarks/bench_control.py [--runs 3] [--device cuda] [--zoo fixtures/]
    python benchmarks/bench_control.py --quick    # one tiny model, one run, eager only: checks the code path
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
BACKENDS = ("eager", "inductor")  # --quick: the control's alone, no inductor compile


def control_rows(zoo: str, device: str, backends: tuple[str, ...], out: Path) -> list[dict]:
    """The ``eager`` rows of one fresh run, with their latency."""
    argv = [sys.executable, "-m", "trtcheck", "run", zoo, "--device", device,
            *(a for b in backends for a in ("--backend", b)), "-q", "--out", str(out)]
    subprocess.run(argv, cwd=REPO, check=False, capture_output=True)
    rows = json.loads((out / "results.json").read_text())["rows"]
    return [r for r in rows if r["backend"] == "eager" and r.get("latency")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--quick", action="store_true", help="one tiny model, one run, eager only")
    args = parser.parse_args()
    backends = BACKENDS[:1] if args.quick else BACKENDS
    if args.quick:
        args.runs, args.zoo = 1, QUICK_ZOO
    tolerance = 0.10 if args.device == "cpu" else 0.05
    held_all = total = 0
    medians = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            rows = control_rows(args.zoo, args.device, backends, Path(tmp) / str(run))
            speedups = [r["latency"]["speedup"] for r in rows]
            held = sum(r["latency"]["speedup_low"] <= 1 <= r["latency"]["speedup_high"]
                       for r in rows)
            ratios = {r["case_id"]: r["memory"]["ratio"] for r in rows
                      if (r.get("memory") or {}).get("ratio") is not None}
            medians.append(statistics.median(speedups))
            held_all, total = held_all + held, total + len(rows)
            print(f"run {run}: {len(rows)} control rows, median {medians[-1]:.3f} "
                  f"({min(speedups):.3f}-{max(speedups):.3f}), intervals holding 1: "
                  f"{held}/{len(rows)}, memory ratios: "
                  + (", ".join(f"{c} {v:.2f}x" for c, v in ratios.items()) or "all —"),
                  flush=True)
    worst = max(medians, key=lambda m: abs(m - 1))
    met = abs(worst - 1) <= tolerance
    print(f"\nmedian speedup within 1.00 ± {tolerance:.2f}: {'met' if met else 'missed'}"
          f" (worst run {worst:.3f}); intervals holding 1: {held_all}/{total} "
          f"({held_all / total:.0%}, target ≥ 90%: {'met' if held_all >= 0.9 * total else 'missed'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
