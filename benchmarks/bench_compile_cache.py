"""The compile lottery: how far the speedup moves between fresh processes, with a private
compile cache per process against one cache shared by the job.

Each process is a fresh ``trtcheck run ZOO --backend inductor`` (default ``benchmarks/gate``).
``private``: its own empty ``TORCHINDUCTOR_CACHE_DIR`` (and ``TRITON_CACHE_DIR`` inside it), so
every process compiles and autotunes anew, as separate CI jobs do. ``shared``: one directory for
the whole job, so the first process compiles and the others load its FX graphs, kernels and
autotuning choices (``TORCHINDUCTOR_FX_GRAPH_CACHE`` and the autotune cache are on by default;
the script records their values). The modes alternate process by process, so both see the same
machine. Per process it records each row's speedup and a hash of the generated code the
process left in its cache (``.py``, ``.cpp`` and autotuning ``.best_config`` files: the whole
private cache; the shared cache's new files, or "none new" when it compiled nothing), so that a
spread can be traced to a kernel choice. Per row and mode it prints the coefficient of
variation (CV) of the speedup over processes and the largest change between two of them
(max ÷ min − 1).

Runs stay in ``--work`` (keep it outside the checkout); a command starts no process after
``--budget-s`` and the next one resumes.

    python benchmarks/bench_compile_cache.py --device cuda --runs 4 --work /tmp/cache-cuda
    python benchmarks/bench_compile_cache.py --device cpu --runs 3 --work /tmp/cache-cpu
    python benchmarks/bench_compile_cache.py --device cpu --quick --work /tmp/cache-quick
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from _common import REPO, cv, trtcheck

MODES = ("private", "shared")
CODE = (".py", ".cpp", ".best_config")  # generated code and autotuning choices
QUICK = "pointwise"  # -k of --quick: one row


def code_files(cache: Path) -> dict[str, str]:
    """Each generated file under ``cache``, by its path there, with the hash of its content."""
    if not cache.exists():
        return {}
    return {str(p.relative_to(cache)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(cache.rglob("*")) if p.is_file() and p.name.endswith(CODE)}


def digest(files: dict[str, str]) -> str:
    """One hash of a set of files, from their contents only (the cache's paths hold keys that
    may carry temporary names)."""
    return hashlib.sha256("".join(sorted(files.values())).encode()).hexdigest()[:12] if files \
        else "none new"


def one(work: Path, mode: str, i: int, zoo: Path, device: str, keyword: str | None) -> dict[str, Any]:
    """Process ``i`` of ``mode``: its speedups, its code hash, its wall time."""
    out = work / f"{mode}-{i}"
    cache = work / "cache" / (f"private-{i}" if mode == "private" else "shared")
    before = code_files(cache)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(cache), "TRITON_CACHE_DIR": str(cache / "triton")}
    t0 = time.perf_counter()
    proc = trtcheck(["run", str(zoo), "--backend", "inductor", "--device", device, "-q",
                     "--out", str(out), *(["-k", keyword] if keyword else [])],
                    device=device, env=env)
    wall = time.perf_counter() - t0
    results = out / "results.json"
    if not results.exists():
        raise SystemExit(f"{out.name} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    after = code_files(cache)
    new = {k: v for k, v in after.items() if before.get(k) != v}
    rows = json.loads(results.read_text())["rows"]
    found = {"mode": mode, "run": i, "wall_s": wall, "new_files": len(new), "code": digest(new),
             "speedup": {r["case_id"]: r["latency"]["speedup"] for r in rows if r.get("latency")},
             "backend_ms": {r["case_id"]: r["latency"]["backend_device"]["median_ms"]
                            for r in rows if r.get("latency")}}
    (out / "process.json").write_text(json.dumps(found, indent=1) + "\n")
    return found


def summarize(processes: list[dict[str, Any]]) -> dict[str, Any]:
    """Per mode and row: the speedups over processes, their CV and largest change."""
    summary: dict[str, Any] = {}
    for mode in MODES:
        mine = [p for p in processes if p["mode"] == mode]
        if not mine:
            continue
        rows = sorted(set.intersection(*(set(p["speedup"]) for p in mine)))
        summary[mode] = {
            "processes": len(mine), "wall_s": [p["wall_s"] for p in mine],
            "codes": [p["code"] for p in mine],
            "rows": {row: {"speedups": (s := [p["speedup"][row] for p in mine]),
                           "cv_percent": cv(s), "max_change": max(s) / min(s) - 1}
                     for row in rows}}
    return summary


def report(summary: dict[str, Any], meta: dict[str, Any]) -> None:
    print(f"\n{meta['machine']}, {meta['device']}, torch {meta['torch']}, zoo {meta['zoo']}: "
          "speedup (eager ÷ inductor) over fresh processes; CV and largest change (max ÷ min − 1)\n")
    rows = sorted({r for s in summary.values() for r in s["rows"]})
    print("| row | " + " | ".join(f"{m}: CV · largest change · speedups" for m in summary) + " |")
    print("|---|" + "---|" * len(summary))
    for row in rows:
        cells = []
        for s in summary.values():
            r = s["rows"].get(row)
            cells.append("—" if r is None else
                         f"{r['cv_percent']:.1f}% · {r['max_change']:.1%} · "
                         + " ".join(f"{v:.3f}" for v in r["speedups"]))
        print(f"| {row} | " + " | ".join(cells) + " |")
    print()
    for mode, s in summary.items():
        walls = s["wall_s"]
        print(f"{mode}: {s['processes']} processes, wall {min(walls):.0f}–{max(walls):.0f} s; "
              f"code per process: {', '.join(s['codes'])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--runs", type=int, default=4, help="fresh processes per mode")
    parser.add_argument("--zoo", type=Path, default=REPO / "benchmarks" / "gate")
    parser.add_argument("--work", type=Path, required=True,
                        help="the runs' folder, outside the checkout; a second command resumes")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="start no process after this many seconds (the next command resumes)")
    parser.add_argument("--quick", action="store_true",
                        help=f"one row (-k {QUICK}), 1 process per mode: checks the code path")
    args = parser.parse_args()
    runs, keyword = (1, QUICK) if args.quick else (args.runs, None)
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    processes = []
    for i in range(runs):
        for mode in MODES:
            done = args.work / f"{mode}-{i}" / "process.json"
            if done.exists():
                processes.append(json.loads(done.read_text()))
                continue
            if time.perf_counter() - t0 > args.budget_s:
                print("budget spent: run the same command again to resume", flush=True)
                return 3
            processes.append(one(args.work, mode, i, args.zoo.resolve(), args.device, keyword))
            p = processes[-1]
            print(f"{mode}-{i} done at {time.perf_counter() - t0:.0f} s ({p['new_files']} new "
                  f"code files, {p['code']})", flush=True)
    import torch

    meta = {"device": args.device, "torch": torch.__version__, "zoo": str(args.zoo),
            "machine": (torch.cuda.get_device_name(0) if args.device.startswith("cuda")
                        else f"{platform.processor() or platform.machine()} CPU"),
            "env": {k: os.environ.get(k, "unset (torch's default)")
                    for k in ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE",
                              "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE")}}
    summary = summarize(processes)
    report(summary, meta)
    (args.work / "summary.json").write_text(json.dumps({"meta": meta, "modes": summary},
                                                       indent=1) + "\n")
    print(f"\nfigures: {args.work / 'summary.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
