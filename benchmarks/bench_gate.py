"""The regression gate measured as a statistician would: ``trtcheck ab`` on identical code for
false alarms, on a head carrying a planted slowdown for power.

The zoo is ``benchmarks/gate`` (the inductor backend on four models from 20 µs to about 1 ms a
call on a GPU), copied into a git repository of its own under ``--work``. Three steps, each
resumed from ``--work``:

1. **Plants.** ``bench_plant.py`` sizes, in one process on the device, work that makes each
   row's compiled call 15 % longer (the speedup metric's plant, eager untouched) and its eager
   call 15 % longer (with the first, the latency metric's: the whole model slower).
2. **Jobs.** ``trtcheck ab --base HEAD gate/ --fail-on regression`` with the plan written into
   the working tree (``gate/plant.json``, which ``gate/_plant.py`` reads): the base is the clean
   commit, the head the same code carrying the plant. ``--jobs`` jobs per metric, alternating
   metrics, each ``--processes`` processes a side and no more (start and cap equal), each with
   its exit code and verdicts: a job is the unit a command resumes at, so it must fit in one.
3. **Comparisons, pooled.** Each job's base processes are clean, so the jobs give one pool of
   clean processes and one pool per plant. A/A: ``--comparisons`` pairs of disjoint draws from
   the clean pool; power: draws from a plant's jobs' clean sides against their planted sides. Each is
   judged by ``trtcheck ab``'s own sequential rule (``trtcheck.results.ab.sequential``, with
   ``ab``'s default settings: 6 processes a side, then 3 more at a time for undecided rows, at
   the level its default start and cap of 15 give), the cap being what the pools hold. **The
   comparisons share processes: they are not independent**, and a rate over them has a wider
   true interval than its Wilson interval says. The pools span jobs, each with its own shared
   compile cache: harsher than one job, where both sides share one.

    python benchmarks/bench_gate.py --device cuda --work /tmp/gate-cuda      # repeat until done
    python benchmarks/bench_gate.py --device cpu --work /tmp/gate-cpu        # likewise
    python benchmarks/bench_gate.py --device cpu --work /tmp/gate-quick --quick

A command starts no step after ``--budget-s`` (a job is one step) and exits 3; the same command
resumes. Keep ``--work`` outside a working tree that is copied to the machine before each
command: a folder there is replaced by the copy, and the runs in it are lost.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import REPO, child_env, trtcheck, wilson

GATE = REPO / "benchmarks" / "gate"
ZOO_FILES = ("models.py", "_plant.py", "trtcheck.toml")
METRICS = ("speedup", "latency")  # each metric's plant has the plan file bench_plant.py names
QUICK = "pointwise"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def make_repo(work: Path) -> Path:
    """A git repository holding the gate zoo as one clean commit."""
    repo = work / "repo"
    if (repo / ".git").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    (repo / "gate").mkdir(parents=True)
    for name in ZOO_FILES:
        shutil.copy2(GATE / name, repo / "gate" / name)
    # gate/plant.json is left untracked, not ignored: ab then sees the head's tree differ
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "gate")
    return repo


def plans(work: Path, device: str, quick: bool, keyword: str | None) -> Path:
    """The two plans, sized by ``bench_plant.py`` on the device (once)."""
    folder = work / "plans"
    if not all((folder / f"{m}.json").exists() for m in METRICS):
        proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_plant.py"),
                               "--device", device, "--out", str(folder), *(["--quick"] if quick else []),
                               *(["-k", keyword] if keyword else [])],
                              capture_output=True, text=True, check=False, env=child_env(device))
        print(proc.stdout, end="", flush=True)
        if proc.returncode:
            raise SystemExit(f"bench_plant.py failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return folder


def job_names(per_metric: int) -> list[tuple[str, str]]:
    """(name, metric) of every job, the metrics alternating."""
    return [(f"{metric}-{k}", metric) for k in range(per_metric) for metric in METRICS]


def job(work: Path, repo: Path, name: str, metric: str, plan: Path, device: str, processes: int,
        keyword: str | None) -> dict[str, Any]:
    """One ``trtcheck ab`` job: the clean commit against the working tree carrying ``plan``."""
    out = work / f"ab-{name}"
    done = out / "job.json"
    if done.exists():
        return json.loads(done.read_text())
    planted = repo / "gate" / "plant.json"
    shutil.copy2(plan, planted)
    t0 = time.perf_counter()
    try:
        proc = trtcheck(["ab", "--base", "HEAD", "gate", "--backend", "inductor", "--device", device,
                         "--processes", str(processes), "--max-processes", str(processes),
                         "--ab-budget", "100000", "--metric", metric, "--fail-on", "regression",
                         "--seed", str(len(name) + sum(map(ord, name))), "-q", "--out", str(out),
                         *(["-k", keyword] if keyword else [])], device=device, cwd=repo)
    finally:
        planted.unlink()
    if proc.returncode not in (0, 1) or not (out / "results.json").exists():
        raise SystemExit(f"trtcheck ab ({name}) failed ({proc.returncode}):\n"
                         f"{proc.stdout[-1500:]}\n{proc.stderr[-2000:]}")
    found = {"metric": metric, "exit": proc.returncode, "wall_s": time.perf_counter() - t0,
             "load": os.getloadavg()}
    done.write_text(json.dumps(found, indent=1) + "\n")
    print(f"ab {name}: exit {proc.returncode} after {found['wall_s']:.0f} s (load "
          f"{found['load'][0]:.1f})", flush=True)
    return found


Pool = dict[str, list[Any]]  # row -> its processes' figures (ProcessFigure) on one side


def jobs_found(work: Path, names: list[tuple[str, str]]) -> dict[str, Any]:
    """Each job's two sides as pools, its metric, exit code, settings, threshold and verdicts."""
    from trtcheck.results.processes import SIDES, row_entries

    found = {}
    for name, metric in names:
        record = json.loads((work / f"ab-{name}" / "results.json").read_text())
        entries = row_entries(record["ab"])
        found[name] = {
            "metric": metric,
            "exit": json.loads((work / f"ab-{name}" / "job.json").read_text())["exit"],
            "settings": record["ab"]["settings"], "threshold": record["baseline"]["threshold"],
            "decisions": {r["case_id"]: r["decision"] for r in record["ab"]["rows"]},
            **{side: {k.case_id: sides[side] for k, sides in entries.items()}
               for side in SIDES}}
    return found


def comparison(sides: dict[str, tuple[list[Any], list[Any]]], metric: str, threshold: float,
               alpha: float) -> dict[str, Any]:
    """One comparison judged by ``ab``'s sequential rule: per row, the first ``start``
    processes of each side's draw, then more as the rule asks, up to what the draws hold."""
    from trtcheck.config.ab import STEP, defaults
    from trtcheck.results import ab as rule
    from trtcheck.results.processes import SIDES
    from trtcheck.results.rows import RowKey

    keys = [RowKey(r, "inductor", "default") for r in sorted(sides)]
    settings = defaults()
    cap = min(len(side) for pair in sides.values() for side in pair)
    taken = {"n": min(settings.start, cap)}

    def figures() -> dict[RowKey, dict[str, list[Any]]]:
        return {k: {s: draw[:taken["n"]] for s, draw in zip(SIDES, sides[k.case_id],
                                                             strict=True)} for k in keys}

    def measure_more(undecided: list[RowKey], more: int) -> bool:
        taken["n"] += more
        return True

    level = rule.Level(alpha, len(keys), rule.looks(settings.start, settings.cap, STEP))
    decisions = rule.sequential(keys, figures, measure_more, start=taken["n"], cap=cap, step=STEP,
                                metric=metric, threshold=threshold, level=level)
    return {k.case_id: {"verdict": d.verdict, "change": d.change, "low": d.low, "high": d.high,
                        "processes": list(d.processes)} for k, d in decisions.items()}


def judge(jobs: dict[str, Any], comparisons: int, threshold: float | None) -> dict[str, Any]:
    """The pooled comparisons: A/A on each metric (two disjoint halves of the clean pool, every
    job's base side), power on each plant (its jobs' base sides against their head sides), each
    side's processes in a shuffled order."""
    first = next(iter(jobs.values()))
    settings = first["settings"]
    rows = sorted(first["base"])

    def pool(side: str, metric: str | None = None) -> dict[str, list[Any]]:
        return {r: [f for j in jobs.values() if metric in (None, j["metric"]) for f in j[side][r]]
                for r in rows}

    clean = pool("base")
    planted = {j["metric"] for j in jobs.values()}
    tests: dict[str, Any] = {}
    for name, metric in (("A/A, speedup", "speedup"), ("A/A, latency", "latency"),
                         ("planted, speedup", "speedup"), ("planted, latency", "latency")):
        if name.startswith("planted") and metric not in planted:
            continue  # --quick: no job carried this plant
        runs = []
        for c in range(comparisons):
            rng = random.Random(f"{name}/{c}")
            if name.startswith("A/A"):
                shuffled = {r: rng.sample(clean[r], len(clean[r])) for r in rows}
                sides = {r: (s[0::2], s[1::2]) for r, s in shuffled.items()}
            else:
                mine = [pool(side, metric) for side in ("base", "head")]
                sides = {r: tuple(rng.sample(p[r], len(p[r])) for p in mine) for r in rows}
            runs.append(comparison(sides, metric, first["threshold"] if threshold is None
                                   else threshold, settings["alpha"]))
        tests[name] = {"metric": metric, "runs": runs,
                       "cap": min(len(x) for pair in sides.values() for x in pair)}
    return tests


def table(tests: dict[str, Any], jobs: dict[str, Any], achieved: dict[str, Any],
          meta: dict[str, Any]) -> None:
    """The gate's table, then per row: false alarms with their interval, detections beside the
    plant's size."""
    from trtcheck.results.ab import DECIDED, SLOWER

    print(f"\n{meta['machine']}: `trtcheck ab` rule, threshold {meta['threshold']:.0%}, "
          f"alpha {next(iter(jobs.values()))['settings']['alpha']}; pooled: "
          f"{meta['pool']}; comparisons share processes (not independent)\n")
    print("| test | comparisons | jobs flagged (`--fail-on regression` would exit 1) "
          "| rows decided | processes a side (start → cap) |")
    print("|---|---|---|---|---|")
    for name, t in tests.items():
        flagged = sum(any(r["verdict"] == SLOWER for r in run.values()) for run in t["runs"])
        verdicts = [r for run in t["runs"] for r in run.values()]
        decided = sum(r["verdict"] in DECIDED for r in verdicts)
        what = "false alarms" if name.startswith("A/A") else "detections"
        print(f"| {name} | {len(t['runs'])} | {flagged} {what} | {decided}/{len(verdicts)} "
              f"({decided / max(1, len(verdicts)):.0%}) | {min(r['processes'][0] for r in verdicts)}"
              f" → {t['cap']} |")
    for name, t in tests.items():
        aa = name.startswith("A/A")
        print(f"\n{name} per row: " + ("false alarms (95% Wilson interval of the rate), verdicts, "
                                      "median change" if aa else "detections; the plant as sized "
                                      "in-process · the median change the comparisons saw; verdicts"))
        for row in sorted(t["runs"][0]):
            rs = [run[row] for run in t["runs"]]
            k = sum(r["verdict"] == SLOWER for r in rs)
            counts = {v: sum(r["verdict"] == v for r in rs) for v in sorted({r["verdict"] for r in rs})}
            changes = [r["change"] for r in rs if r["change"] is not None]
            median = f"{statistics.median(changes):.3f}" if changes else "—"
            if aa:
                low, high = wilson(k, len(rs))
                head = f"{k}/{len(rs)} [{low:.0%}, {high:.0%}]"
            else:
                size = achieved[t["metric"]].get(row, {})
                sized = " + ".join(f"{s} +{z['change']:.1%}" for s, z in size.items())
                head = f"{k}/{len(rs)}; plant {sized or '—'} · seen ×{median}"
            tail = f"; median change ×{median}" if aa else ""
            print(f"  {row}: {head}; " + ", ".join(f"{v} {n}" for v, n in counts.items()) + tail)
    print("\nthe jobs themselves (each ab job on all its processes: exit code and verdicts):")
    for name, j in jobs.items():
        print(f"  {name}: exit {j['exit']}; " + ", ".join(
            f"{row} {d['verdict'] if d else '—'}" for row, d in sorted(j["decisions"].items())))


def machine(device: str, work: Path) -> str:
    """The device's name; for a CPU, its cores and the load average while the jobs ran."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    loads = [json.loads(p.read_text())["load"][0] for p in sorted(work.glob("ab-*/job.json"))]
    return (f"{os.cpu_count()}-core CPU, load average {min(loads):.1f}–{max(loads):.1f} "
            "at the jobs' ends")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--work", type=Path, required=True,
                        help="the runs' folder, outside the checkout; a second command resumes")
    parser.add_argument("--processes", type=int, default=4,
                        help="processes a side in each ab job")
    parser.add_argument("--jobs", type=int, default=2, help="ab jobs per metric")
    parser.add_argument("--comparisons", type=int, default=10)
    parser.add_argument("--threshold", type=float, default=None,
                        help="judge with this threshold (default: trtcheck's)")
    parser.add_argument("--budget-s", type=float, default=200.0,
                        help="start no job after this many seconds (the next command resumes); "
                             "a job on 4 + 4 processes takes about 3 to 4.5 minutes on the H200")
    parser.add_argument("--quick", action="store_true",
                        help=f"one row (-k {QUICK}), one job (the speedup plant) of 2 processes a "
                             "side, no budget: checks the code path")
    parser.add_argument("-k", dest="keyword", default=None,
                        help="only the rows this selects (trtcheck's -k), in plants and jobs")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    processes, per_metric, keyword = (2, 1, QUICK) if args.quick else (args.processes, args.jobs,
                                                                       args.keyword)
    budget = math.inf if args.quick else args.budget_s  # a check runs to its end
    names = job_names(per_metric)[:1] if args.quick else job_names(per_metric)
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    repo = make_repo(args.work)
    folder = plans(args.work, args.device, args.quick, keyword)
    for name, metric in names:
        if not (args.work / f"ab-{name}" / "job.json").exists() \
                and time.perf_counter() - t0 > budget:
            print("budget spent: run the same command again to resume", flush=True)
            return 3
        job(args.work, repo, name, metric, folder / f"{metric}.json", args.device, processes,
            keyword)
    jobs = jobs_found(args.work, names)
    tests = judge(jobs, args.comparisons, args.threshold)
    achieved = {m: json.loads((folder / f"{m}.json").read_text())["achieved"] for m in METRICS}
    first = next(iter(jobs.values()))
    row = next(iter(first["base"]))
    planted = {m: sum(len(j["head"][row]) for j in jobs.values() if j["metric"] == m)
               for m in METRICS}
    meta = {"machine": machine(args.device, args.work),
            "threshold": args.threshold if args.threshold is not None else first["threshold"],
            "pool": f"{sum(len(j['base'][row]) for j in jobs.values())} clean processes from "
                    f"{len(jobs)} jobs, " + ", ".join(f"{n} with the {m} plant"
                                                      for m, n in planted.items())}
    table(tests, jobs, achieved, meta)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "tests": tests, "achieved": achieved,
                                         "jobs": {m: {k: j[k] for k in ("exit", "decisions")}
                                                  for m, j in jobs.items()}},
                                        indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
