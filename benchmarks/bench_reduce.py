"""Reductions on CPU: ``trtcheck reduce`` over a zoo on Torch-TensorRT's lowering (by default
``tests/zoos/reduce``: everyday models that fail on the converters, the 8-layer RoPE transformer
with ``1 - z`` in its fifth layer, and each failing lowering pattern buried in a generated graph),
then one Markdown table row per failing row from ``results.json`` and the bundles'
``summary.json`` (with each bundle's history across releases), and how many rows became
reproducing bundles, for docs/reduce.md. ``--releases`` limits the history (``--releases 2.13.0``:
the row's own release only, no history: run both ways for what the history adds).

    python benchmarks/bench_reduce.py [--zoo PATH] [--torch-tensorrt 2.13.0] [--releases V]... [--out DIR]
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
    parser.add_argument("--zoo", type=Path, default=REPO / "tests" / "zoos" / "reduce")
    parser.add_argument("--torch-tensorrt", default="2.13.0")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--releases", action="append", default=[],
                        help="the releases of each bundle's history (repeatable) [every one]")
    parser.add_argument("--quick", action="store_true", help="the smallest case only (-k huge), "
                        "with no history")
    args = parser.parse_args()
    releases = [args.torch_tensorrt] if args.quick else args.releases
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-reduce-"))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "trtcheck", "reduce", str(args.zoo),
                    "--backend", "lowering", "--torch-tensorrt", args.torch_tensorrt, "--out", str(out),
                    "-q", *(["-k", "huge"] if args.quick else []),
                    *(a for v in releases for a in ("--releases", v))], cwd=REPO, check=False)
    total = time.perf_counter() - t0
    rows = json.loads((out / "results.json").read_text())["rows"]
    failing = [r for r in rows if r.get("reduction")]
    print("| case | row | nodes | reduced to | seconds | candidates | values | reproduced | "
          "across releases |")
    print("|---|---|---:|---:|---:|---:|---|---|---|")
    sizes = []
    for row in failing:
        red = row["reduction"]
        head = f"| `{row['case_id']}` | {row['status']} at {row['stage']} |"
        if not red.get("reduced"):
            print(f"{head} {red.get('original_nodes', '—')} | — | — | — | — | not reduced: "
                  f"{red['why']} | — |")
            continue
        if red["reproduced"]:
            sizes.append(red["reduced_nodes"])
        print(f"{head} {red['original_nodes']} | {red['reduced_nodes']} | {red['seconds']:.0f} "
              f"| {red['attempts']} | {red['values']} | {'yes' if red['reproduced'] else 'no'} "
              f"| {red.get('history') or '—'} |")
    shown = ", ".join(map(str, sorted(sizes))) or "—"
    print(f"\n{len(failing)} failing rows: {sum(bool(r['reduction'].get('reduced')) for r in failing)} "
          f"bundles, {len(sizes)} reproduce in a fresh process (their sizes in nodes: {shown})")
    print(f"whole command (run, reductions, fresh-process checks): {total:.0f} s; bundles in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
