"""Memory and time of comparing one large output pair, as LLM logits or audio batches give.

Target: comparing a 1 GB output pair (two 512 MiB outputs) needs less extra memory than 2x the
pair, and takes seconds, not minutes. Extra memory is the peak while comparing minus what was
allocated before: on CPU from the process's resident set (its peak reset through
/proc/self/clear_refs first, Linux), on CUDA from the allocator's peak. Each dtype runs in a
fresh subprocess so that peaks do not carry over (``--quick``: all three in one).

    python benchmarks/bench_compare_memory.py [--device cpu|cuda] [--mib 512]
    python benchmarks/bench_compare_memory.py --quick    # 1 MiB outputs, one subprocess: checks the code path
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

DTYPES = ("float32", "complex64", "int64")


def measure(dtype_name: str, device: str, mib: int) -> dict[str, float]:
    import torch

    from trtcheck.core.profiles import Tolerance
    from trtcheck.measure.compare import compare

    dtype = getattr(torch, dtype_name)
    n = mib * 2**20 // torch.empty((), dtype=dtype).element_size()
    if dtype.is_floating_point or dtype.is_complex:
        eager = torch.randn(n, dtype=dtype, device=device)
        actual = eager + 1e-4 * torch.randn(n, dtype=dtype, device=device)
    else:
        eager = torch.randint(-2**40, 2**40, (n,), dtype=dtype, device=device)
        actual = eager.clone()
        actual[::1000] += 1
    pair = 2 * mib * 2**20
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    else:
        Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
        before = _status_kib("VmRSS") * 1024
    t0 = time.perf_counter()
    result = compare(eager, actual, lambda _: Tolerance(rtol=5e-3, atol=5e-3))
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        extra = torch.cuda.max_memory_allocated() - before
    else:
        extra = _status_kib("VmHWM") * 1024 - before
    seconds = time.perf_counter() - t0
    assert result.leaves[0].max_abs is not None
    return {"pair_mib": pair / 2**20, "extra_mib": extra / 2**20, "ratio": extra / pair,
            "seconds": seconds}


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mib", type=int, default=512, help="size of each output, MiB")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # dtypes, comma-separated
    parser.add_argument("--quick", action="store_true", help="1 MiB outputs, one subprocess")
    args = parser.parse_args()
    if args.quick:
        args.mib = 1
    if args.one:
        for name in args.one.split(","):
            print(json.dumps(measure(name, args.device, args.mib)), flush=True)
        return 0
    print("| dtype | device | pair MiB | extra MiB | extra / pair (target < 2) | seconds |")
    print("|---|---|---|---|---|---|")
    ok = True
    # a quick mode's figures mean nothing: its dtypes share one process start
    for group in [DTYPES] if args.quick else [(name,) for name in DTYPES]:
        proc = subprocess.run([sys.executable, __file__, "--one", ",".join(group), "--device",
                               args.device, "--mib", str(args.mib)],
                              capture_output=True, text=True, check=False)
        measured = proc.stdout.splitlines()
        for i, name in enumerate(group):
            if i >= len(measured):
                print(f"| {name} | {args.device} | failed: {proc.stderr.strip().splitlines()[-1]} |")
                ok = False
                continue
            r = json.loads(measured[i])
            ok = ok and r["ratio"] < 2
            print(f"| {name} | {args.device} | {r['pair_mib']:.0f} | {r['extra_mib']:.0f} | "
                  f"{r['ratio']:.2f} | {r['seconds']:.1f} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
