"""Wall-clock benchmarks of whole CLI commands on the sample zoo.

Measures what a user waits for: ``trtcheck analyze fixtures/`` (target: under 30 s on a
2-core CPU) and ``trtcheck run`` with and without worker isolation (the cost of isolation).
Each command runs ``--repeat`` times in a fresh subprocess; the median and the spread are printed
as a Markdown table for docs/benchmarks.md.

    python benchmarks/bench_cli.py [--repeat 3] [--zoo fixtures/]
    python benchmarks/bench_cli.py --quick    # one tiny model, once: checks the code path
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUICK_ZOO = "benchmarks/quick/"  # --quick: one tiny model (benchmarks/quick/tiny.py)


def wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "trtcheck", *argv], cwd=REPO,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"trtcheck {' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--quick", action="store_true", help="one tiny model, once")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.zoo = 1, QUICK_ZOO
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "analyze": ["analyze", args.zoo],
            "run --backend eager --no-isolate": ["run", args.zoo, "--backend", "eager",
                                                 "--no-isolate", "-q", "--out", f"{tmp}/a"],
            "run --backend eager (isolated)": ["run", args.zoo, "--backend", "eager", "-q",
                                               "--out", f"{tmp}/b"],
            "run --backend emulate": ["run", args.zoo, "--backend", "emulate", "-q",
                                      "--out", f"{tmp}/c"],
        }
        print("| command | median s | min s | max s |")
        print("|---|---|---|---|")
        for label, argv in commands.items():
            times = [wall(argv) for _ in range(args.repeat)]
            print(f"| `trtcheck {label}` | {statistics.median(times):.2f} | {min(times):.2f} "
                  f"| {max(times):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
