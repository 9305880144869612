"""Start-up: ``trtcheck --help`` against ``python -c "import torch"``, each in fresh processes.

Target: ``trtcheck --help`` takes at most 0.5x the time of importing torch (the CLI loads torch
only inside the commands that need it).

    python benchmarks/bench_startup.py [--repeat 7] [--quick: once each]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET = 0.5


def wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], capture_output=True, check=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="each command once")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    wall(["-c", "import torch"])  # warm the file cache for both
    runs = {"trtcheck --help": ["-m", "trtcheck", "--help"], "trtcheck --version":
            ["-m", "trtcheck", "--version"], 'python -c "import torch"': ["-c", "import torch"]}
    medians = {}
    print("| command | median s | min s | max s |")
    print("|---|---|---|---|")
    for label, argv in runs.items():
        times = [wall(argv) for _ in range(args.repeat)]
        medians[label] = statistics.median(times)
        print(f"| `{label}` | {medians[label]:.3f} | {min(times):.3f} | {max(times):.3f} |")
    ratio = medians["trtcheck --help"] / medians['python -c "import torch"']
    print(f"\n--help / import torch: {ratio:.2f}x (target <= {TARGET}x): "
          f"{'met' if ratio <= TARGET else 'MISSED'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
