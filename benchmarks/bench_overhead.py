"""trtcheck's overhead against a minimal hand-written loop doing the same work.

The loop (``--loop ZOO``, run in a fresh process) imports each zoo file, and for every case
seeds, builds, runs eager, exports with ``torch.export``, runs the exported module, compares
the outputs and times, with trtcheck's default timing settings, what the ``eager`` backend
times: the model against itself (the control), then against the exported module (the export
cost), each pair interleaved. That is what ``trtcheck run ZOO --backend eager`` does, minus
everything that makes it a tool (isolation, analysis, drift and mutation checks, memory
peaks, evidence, the journal, reports). Target: trtcheck with isolation
takes at most 1.2x the loop's time. Wall and CPU seconds (this process's children) are shown.

    python benchmarks/bench_overhead.py [--repeat 3] [--zoo fixtures/]
    python benchmarks/bench_overhead.py --quick    # one tiny model, once: checks the code path
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
QUICK_ZOO = "benchmarks/quick/"  # --quick: one tiny model (benchmarks/quick/tiny.py)
TARGET = 1.2


def loop(root: Path) -> int:
    """The hand-written loop; returns the number of cases whose outputs differ or that raised."""
    import torch
    from torch.utils import _pytree as pytree

    from trtcheck.zoo import api as zoo

    def timed(fns: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[float]:
        samples: list[list[float]] = [[] for _ in fns]
        for rounds, seconds in ((3, 0.05), (20, 0.2)):
            samples = [[] for _ in fns]
            deadline, n = time.perf_counter() + seconds, 0
            while n < rounds or time.perf_counter() < deadline:
                for fn, into in zip(fns, samples, strict=True):
                    t0 = time.perf_counter()
                    fn(*args, **kwargs)
                    into.append(time.perf_counter() - t0)
                n += 1
        return [statistics.median(s) for s in samples]

    sys.path.insert(0, str(root))
    bad = 0
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith(("_", ".")):
            continue
        collector = zoo.collecting()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        zoo.stop_collecting(collector)
        for model in collector.specs:
            for variant in model.variants:
                case_id = f"{path.relative_to(root).with_suffix('')}::{model.name}[{variant}]"
                seed = int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "little")
                torch.manual_seed(seed & (2**63 - 1))
                random.seed(seed & (2**63 - 1))
                try:
                    built = model.factory(variant)
                    module, args, kwargs = built if len(built) == 3 else (*built, {})
                    module = module.eval()
                    with torch.no_grad():
                        expected = module(*args, **kwargs)
                        program = torch.export.export(
                            module, args, kwargs, strict=model.strict,
                            dynamic_shapes=model.dynamic_shapes_for(variant))
                        exported = program.module()
                        got = exported(*args, **kwargs)
                        same = all(torch.allclose(a, b, rtol=5e-3, atol=5e-3, equal_nan=True)
                                   if a.is_floating_point() or a.is_complex() else torch.equal(a, b)
                                   for a, b in zip(pytree.tree_leaves(expected),
                                                   pytree.tree_leaves(got), strict=True))
                        timed([module, module], args, kwargs)
                        timed([module, exported], args, kwargs)
                except Exception:
                    same = False
                bad += not same
    return bad


def measure(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of a command, its children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zoo", default="fixtures/")
    parser.add_argument("--loop", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="one tiny model, once")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.zoo = 1, QUICK_ZOO
    if args.loop:
        return min(loop(args.loop.resolve()), 1)
    results: dict[str, list[tuple[float, float]]] = {"loop": [], "trtcheck": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):  # alternated, so both see the same machine
            results["loop"].append(measure([sys.executable, __file__, "--loop", args.zoo]))
            results["trtcheck"].append(measure([sys.executable, "-m", "trtcheck", "run", args.zoo,
                                                "--backend", "eager", "-q", "--out", f"{tmp}/{i}"]))
    print("| command | median wall s | median CPU s |")
    print("|---|---|---|")
    medians = {}
    for label, runs in results.items():
        medians[label] = (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        name = ("hand-written loop" if label == "loop"
                else f"`trtcheck run {args.zoo} --backend eager` (isolated)")
        print(f"| {name} | {medians[label][0]:.2f} | {medians[label][1]:.2f} |")
    ratio = medians["trtcheck"][0] / medians["loop"][0]
    cpu_ratio = medians["trtcheck"][1] / medians["loop"][1]
    print(f"\ntrtcheck / loop: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target <= {TARGET}x): "
          f"{'met' if ratio <= TARGET else 'MISSED'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
