"""Time per reduction on CPU: ``trtcheck reduce`` over ``tests/zoos/reduce`` (the 8-layer RoPE
transformer with ``1 - z`` in its fifth layer, and each failing lowering pattern buried in a
generated graph) on Torch-TensorRT's lowering, then one Markdown table row per reduced row from
the bundles' ``summary.json``, for docs/reduce.md.

    python benchmarks/bench_reduce.py [--torch-tensorrt 2.13.0] [--out DIR]
    python benchmarks/bench_reduce.py --quick    # the one-node overflow only: checks the code path
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-tensorrt", default="2.13.0")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="the smallest case only (-k huge)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-reduce-"))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "trtcheck", "reduce", str(REPO / "tests" / "zoos" / "reduce"),
                    "--backend", "lowering", "--torch-tensorrt", args.torch_tensorrt, "--out", str(out),
                    "-q", *(["-k", "huge"] if args.quick else [])], cwd=REPO, check=False)
    total = time.perf_counter() - t0
    print("| case | nodes | reduced to | seconds | candidates | reproduced |")
    print("|---|---:|---:|---:|---:|---|")
    for path in sorted((out / "repro").glob("*/summary.json")):
        s = json.loads(path.read_text())
        print(f"| `{s['case_id']}` | {s['original_nodes']} | {s['reduced_nodes']} | {s['seconds']:.0f} "
              f"| {s['attempts']} | {'yes' if s['reproduced'] else 'no'} |")
    print(f"\nwhole command (run, reductions, fresh-process checks): {total:.0f} s; bundles in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
