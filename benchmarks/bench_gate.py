"""The regression gate measured as a statistician would: A/A pairs for false alarms, planted
slowdowns for power.

Every run is a fresh ``trtcheck run benchmarks/gate`` (the inductor backend on four models from
20 µs to about 1 ms a call on a GPU); every pair is judged by the command a pull request's job
runs, ``trtcheck diff A/results.json B/results.json --fail-on regression``:

- false alarms: ``--pairs`` pairs of runs of the same code (run i against run i + 1 of
  ``--pairs`` + 1 clean runs), default metric;
- power, default metric (speedup): run i against a run where the compiled path alone does about
  15 % more work (``benchmarks/gate/plant.py``: extra work only when ``torch.compiler.
  is_compiling()``), sized from run 0's figures per case;
- power, ``--metric latency``: run i against a run where the whole model is about 15 % slower,
  eager and compiled alike.

Each run's results stay in ``--work``; a command stops starting runs after ``--budget-s`` and
the next one resumes where it stopped. ``--report`` prints the table (pairs, false alarms with
their rate and interval per row, detections, rows gated, threshold) and the A/A figures the
threshold is taken from, and writes them to ``--json``.

    python benchmarks/bench_gate.py --device cuda --work /tmp/gate-cuda --report  # repeat until done
    python benchmarks/bench_gate.py --device cpu --work /tmp/gate-cpu --report

Keep ``--work`` outside a working tree that is copied to the machine before each command: a
folder there is replaced by the copy, and the runs in it are lost.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ZOO = REPO / "benchmarks" / "gate"
PLANT = 0.15  # the planted slowdown: 15 % of the backend's (or the whole model's) time
KINDS = ("base", "slow-backend", "slow-model")


def run_name(kind: str, i: int) -> str:
    return f"{kind}-{i}"


def trtcheck(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trtcheck", *argv], cwd=REPO, capture_output=True,
                          text=True, check=False, env={**os.environ, **(env or {})})


def plant_file(work: Path, kind: str) -> Path:
    """The plant for ``kind``, sized from run ``base-0``'s device medians."""
    path = work / f"{kind}.json"
    if not path.exists():
        rows = json.loads((work / run_name("base", 0) / "results.json").read_text())["rows"]
        plan = {}
        for row in rows:
            lat = row.get("latency")
            if not lat:
                continue
            backend = lat["backend_device"]["median_ms"] * PLANT
            eager = lat["eager_device"]["median_ms"] * PLANT if kind == "slow-model" else 0.0
            plan[row["case_id"]] = {"eager_ms": eager, "backend_ms": backend}
        path.write_text(json.dumps(plan, indent=1) + "\n")
    return path


def plan(pairs: int) -> list[tuple[str, int]]:
    """Every run, in an order that gives complete pairs early: base-0, base-1, slow-…-0, …"""
    order = [("base", 0)]
    for i in range(pairs):
        order += [("base", i + 1), ("slow-backend", i), ("slow-model", i)]
    return order


def do_runs(device: str, work: Path, pairs: int, budget_s: float, jobs: int = 1) -> bool:
    """Run what is missing, ``jobs`` at a time, until the budget is spent; True when every run
    is there. With ``jobs`` > 1, trtcheck's device lock (:mod:`trtcheck.measure.device_lock`) keeps
    the runs' stages out of each other's timing, but not their start-up (importing torch) or
    anything outside trtcheck: on the H200, 8 runs at once moved absolute medians by up to 2×
    between runs, against about 20 % one at a time. Figures for the docs use ``--jobs 1``."""
    t0 = time.perf_counter()
    todo = [(kind, i) for kind, i in plan(pairs)
            if not (work / run_name(kind, i) / "results.json").exists()]

    def one(kind: str, i: int) -> None:
        out = work / run_name(kind, i)
        if time.perf_counter() - t0 > budget_s:
            return
        env = {"TRTCHECK_PLANT": str(plant_file(work, kind))} if kind != "base" else {}
        proc = trtcheck("run", str(ZOO), "--device", device, "-q", "--out", str(out), env=env)
        if not (out / "results.json").exists():
            raise SystemExit(f"{out.name} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        print(f"{out.name} done at {time.perf_counter() - t0:.0f} s", flush=True)

    if todo and todo[0] == ("base", 0):  # the plants are sized from it
        one(*todo.pop(0))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for done in [pool.submit(one, kind, i) for kind, i in todo]:
            done.result()
    missing = [(k, i) for k, i in plan(pairs) if not (work / run_name(k, i) / "results.json").exists()]
    if missing:
        print(f"budget spent: run again to resume ({len(missing)} runs left)", flush=True)
    return not missing


def judge(work: Path, pairs: int, threshold: float | None) -> dict[str, Any]:
    """Every pair judged by ``trtcheck diff --fail-on regression``, and each row's verdict."""
    from trtcheck.results import baseline, record

    tests = {"A/A": ("base", "speedup"), "planted, speedup": ("slow-backend", "speedup"),
             "planted, latency": ("slow-model", "latency")}
    found: dict[str, Any] = {}
    for name, (kind, metric) in tests.items():
        flagged, rows = 0, {}
        for i in range(pairs):
            a = work / run_name("base", i) / "results.json"
            b = work / run_name(kind if kind != "base" else "base", i + (kind == "base")) / "results.json"
            extra = ["--threshold", str(threshold)] if threshold is not None else []
            proc = trtcheck("diff", str(a), str(b), "--fail-on", "regression", "--metric", metric,
                            *extra)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"trtcheck diff failed ({proc.returncode}): {proc.stderr[-1000:]}")
            flagged += proc.returncode == 1
            before, after = record.load(a), record.load(b)
            diff = baseline.compare(before, after, metric=metric,
                                    **({"threshold": threshold} if threshold is not None else {}))
            unstable = {r.case_id for rec in (before, after) for r in rec.rows
                        if r.latency is not None and r.latency.unstable}
            for c in diff.changes:
                if c.latency is not None:
                    rows.setdefault(c.case_id, []).append(
                        {"verdict": c.latency.verdict, "slowdown": c.latency.slowdown,
                         "gated": c.case_id not in unstable})
            found["threshold"] = diff.threshold
        found[name] = {"pairs": pairs, "flagged": flagged, "rows": rows}
    return found


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of a rate of ``k`` in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def report(found: dict[str, Any], device: str) -> None:
    from trtcheck.results.baseline import REGRESSION

    aa = found["A/A"]
    verdicts = [v for vs in aa["rows"].values() for v in vs]
    gated = sum(v["gated"] for v in verdicts)
    print(f"\n{device}: threshold {found['threshold']:.0%}, {aa['pairs']} pairs per test\n")
    print("| test | pairs | flagged by `trtcheck diff --fail-on regression` | rows gated |")
    print("|---|---|---|---|")
    for name in ("A/A", "planted, speedup", "planted, latency"):
        t = found[name]
        vs = [v for rows in t["rows"].values() for v in rows]
        n_gated = sum(v["gated"] for v in vs)
        what = "false alarms" if name == "A/A" else "detections"
        print(f"| {name} | {t['pairs']} | {t['flagged']} {what} | {n_gated}/{len(vs)} "
              f"({n_gated / max(1, len(vs)):.0%}) |")
    print("\nA/A per row: false alarms (95% Wilson interval of the rate), slowdowns seen, gated")
    for case, vs in sorted(aa["rows"].items()):
        k = sum(v["verdict"] == REGRESSION for v in vs)
        low, high = wilson(k, len(vs))
        spread = [v["slowdown"] for v in vs if math.isfinite(v["slowdown"])]
        worst = max(abs(s - 1) for s in spread) if spread else math.nan
        print(f"  {case}: {k}/{len(vs)} [{low:.0%}, {high:.0%}]; slowdown median "
              f"{statistics.median(spread):.3f}, worst |Δ| {worst:.1%}, "
              f"gated {sum(v['gated'] for v in vs)}/{len(vs)}")
    for name in ("planted, speedup", "planted, latency"):
        print(f"\n{name} per row: regression verdicts, median slowdown seen")
        for case, vs in sorted(found[name]["rows"].items()):
            k = sum(v["verdict"] == REGRESSION for v in vs)
            print(f"  {case}: {k}/{len(vs)}; slowdown median "
                  f"{statistics.median(v['slowdown'] for v in vs):.3f}")
    print(f"\nrows gated in A/A: {gated}/{len(verdicts)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--work", type=Path, default=Path(".gate"))
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="start no run after this many seconds (the next command resumes)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs at once: a quick check only, its figures are noisier")
    parser.add_argument("--threshold", type=float, default=None,
                        help="judge with this threshold (default: trtcheck's)")
    parser.add_argument("--report", action="store_true", help="also judge and print the table")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    done = do_runs(args.device, args.work, args.pairs, args.budget_s, args.jobs)
    if not (done and args.report):
        return 0 if done else 3
    found = judge(args.work, args.pairs, args.threshold)
    report(found, args.device)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
