"""``--workers 2`` against a serial run: wall time, and the same statuses.

On CPU: the sample zoo with a CPU-bound backend (``emulate``, plus ``eager``), serial against
``--workers 2``. When two or more GPUs are present, also ``--device cuda:0`` against
``--device cuda:0,cuda:1`` (one worker per GPU) with ``eager``, ``emulate`` and ``inductor``.
Targets: identical statuses (rows compared apart from timings), and ``--workers 2`` faster than
serial. Runs unattended; prints one Markdown table.

    python benchmarks/bench_workers.py [--repeat 3] [--zoo fixtures/]
    python benchmarks/bench_workers.py --quick    # one tiny model, once: checks the code path
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUICK_ZOO = "benchmarks/quick/"  # --quick: one tiny model (benchmarks/quick/tiny.py)


def run(argv: list[str], out: Path) -> tuple[float, list[tuple[str, str, str, str]]]:
    """Wall seconds of ``trtcheck run`` and its rows as (case, backend, profile, status)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "trtcheck", "run", *argv, "-q", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"trtcheck run {' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    rows = json.loads((out / "results.json").read_text())["rows"]
    return elapsed, [(r["case_id"], r["backend"], r["profile"], r["status"]) for r in rows]


def compare(label: str, serial: list[str], parallel: list[str], repeat: int, tmp: Path) -> bool:
    times: dict[str, list[float]] = {"serial": [], "workers": []}
    statuses = {}
    for i in range(repeat):  # alternated, so both see the same machine
        for name, argv in (("serial", serial), ("workers", parallel)):
            elapsed, statuses[name] = run(argv, tmp / f"{label}-{name}-{i}")
            times[name].append(elapsed)
    same = statuses["serial"] == statuses["workers"]
    s, w = statistics.median(times["serial"]), statistics.median(times["workers"])
    print(f"| {label} | {len(statuses['serial'])} | {s:.2f} | {w:.2f} | {s / w:.2f}x (target > 1x: "
          f"{'met' if s > w else 'MISSED'}) | {'yes' if same else 'NO'} (target: yes) |")
    return same and s > w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--quick", action="store_true", help="one tiny model, once")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.zoo = 1, QUICK_ZOO
    import torch

    print("| machine | rows | serial s | --workers 2 s | speedup | same statuses |")
    print("|---|---|---|---|---|---|")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        cpu = [args.zoo, "--device", "cpu", "--backend", "emulate", "--backend", "eager"]
        ok &= compare("CPU, emulate + eager", cpu, [*cpu, "--workers", "2"], args.repeat, Path(tmp))
        if torch.cuda.device_count() >= 2:
            gpu = [args.zoo, "--backend", "eager", "--backend", "emulate", "--backend", "inductor"]
            ok &= compare(f"2 x {torch.cuda.get_device_name(0)}", [*gpu, "--device", "cuda:0"],
                          [*gpu, "--device", "cuda:0,cuda:1"], args.repeat, Path(tmp))
        else:
            print(f"| 2 GPUs | not measured: {torch.cuda.device_count()} CUDA devices here | | | | |")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
