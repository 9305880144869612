"""Fidelity of the behaving TensorRT stand-in on Torch-TensorRT's own converter tests.

Runs the converter test cases found in ``--suite DIR`` (a checkout of pytorch/TensorRT's
``tests/py/dynamo/conversion/`` for the release under test; never committed here) against the
stand-in (:mod:`trtcheck.backends.lowering.trt`, NOT TensorRT) on the CPU, or with ``--device
cuda`` on a GPU (the suite's ``.cuda()`` calls honoured, the stand-in's engines run on CUDA),
with the release's real Python code from trtcheck's cache (``--release``). The test bodies run
unchanged; what makes them run here is adapted in the worker, and listed in the output
(``ADAPTATIONS``). Cases run in a worker process, one at a time; a case that crashes or hangs the
worker is recorded and the worker replaced.

    python benchmarks/bench_converter_suite.py --suite DIR [--sample N] [--seed S] [--release 2.13.0]
        [--json PATH] [--timeout 120] [--device cpu|cuda] [--shard K/N]
    python benchmarks/bench_converter_suite.py --quick   # this repository's own converter cases

Ends with ``pass rate: NN.N% (P of N)``: N counts the cases run (sampled, less those the suite's own
decorators skip), P those that passed; every test module that could not be imported is named, and
counted, before it. With no case run it exits 1, naming why (most often a package the suite's modules
import is missing). ``--quick`` runs ``benchmarks/converter_cases/`` (no upstream checkout needed).
The suite's cases need the ``parameterized`` and ``expecttest`` packages (in the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import logging
import os
import random
import re
import select
import subprocess
import sys
import time
import traceback
import types
import unittest
from collections import Counter
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
QUICK_SUITE = BENCHMARKS / "converter_cases"

# What the worker changes so that the unchanged test bodies run without TensorRT, on each device.
ADAPTATIONS = {
    "cpu": (
        "the behaving TensorRT stand-in installed as `tensorrt`, with CUDA shims: streams, events and "
        "device properties do nothing, allocations and moves to `cuda` (`device=\"cuda\"`, `.cuda()`, "
        "`.to(\"cuda\")`) stay on the CPU",
        "`torch.cuda.is_available()` returns True while the suite's modules are imported (the harness's "
        "`skipIf` skips every case without CUDA)",
        "for the eager reference outputs, CPU kernels of what CPU PyTorch lacks: "
        "`aten._scaled_dot_product_efficient_attention` (the math attention) and `aten._softmax` with "
        "`half_to_float` (computed in float32; every CPU `_softmax` of the worker, the stand-in's own "
        "included, then runs this math)",
    ),
    "cuda": (
        "the behaving TensorRT stand-in installed as `tensorrt`, its engines run on CUDA at the addresses "
        "Torch-TensorRT's runtime gives them, on its stream; every `.cuda()` of the suite honoured",
    ),
}
# Words in a failure's message that name a feature only a GPU has: FP8/FP4, collectives.
GPU_ONLY = re.compile(r"compute capability|sm_\d+|FP8|fp8|float8|FP4|nvfp4|Blackwell|Hopper|NCCL|"
                      r"ModelOpt|modelopt|requires a GPU|DLA", re.I)
LAYER = re.compile(r"\b(I[A-Z][A-Za-z]+Layer)\b")


# The worker -----------------------------------------------------------------------------------

def _cpu_references() -> None:
    """CPU kernels for what CPU PyTorch lacks, so that a test's eager reference can run:
    ``aten::_scaled_dot_product_efficient_attention`` (CUDA-only), the math attention; and
    ``aten::_softmax`` with ``half_to_float`` (refused on CPU), softmax computed in float32."""
    import torch

    def efficient(query: Any, key: Any, value: Any, attn_bias: Any, compute_log_sumexp: bool,
                  dropout_p: float = 0.0, is_causal: bool = False, *, scale: Any = None) -> Any:
        out = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=attn_bias, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
        lse = torch.empty(query.shape[:-1], dtype=torch.float32)
        return out, lse, torch.empty((), dtype=torch.int64), torch.empty((), dtype=torch.int64)

    def softmax(x: Any, dim: int, half_to_float: bool) -> Any:
        if half_to_float:
            x = x.float()
        shifted = x - x.amax(dim, keepdim=True)
        exp = shifted.exp()
        return exp / exp.sum(dim, keepdim=True)

    library = torch.library.Library("aten", "IMPL")
    library.impl("_scaled_dot_product_efficient_attention", efficient, "CPU")
    library.impl("_softmax", softmax, "CPU")
    _KEEP.append(library)


_KEEP: list[Any] = []


def import_suite(suite: Path) -> tuple[str, dict[str, str]]:
    """Import the suite's folder as a package (named for the folder, made an identifier: a folder
    named ``suite-2.13`` is the package ``suite_2_13``) and each of its ``test_*.py`` modules; the
    package's name, and each module that could not be imported with why."""
    package = re.sub(r"\W", "_", suite.name)
    if not package.isidentifier():
        package = f"suite_{package}"
    init = suite / "__init__.py"
    if init.exists():
        spec = importlib.util.spec_from_file_location(package, init, submodule_search_locations=[str(suite)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    else:
        module = types.ModuleType(package)
        module.__path__ = [str(suite)]
        sys.modules[package] = module
    unimportable: dict[str, str] = {}
    for path in sorted(suite.glob("test_*.py")):
        try:
            importlib.import_module(f"{package}.{path.stem}")
        except Exception as exc:  # reported: its cases cannot be counted
            unimportable[path.name] = f"{type(exc).__name__}: {exc}"
    return package, unimportable


def _load(suite: Path, release: str, device: str) -> tuple[str, dict[str, str]]:
    """Import the release over the stand-in, adapt, and import the suite's modules."""
    import torch

    from trtcheck.backends.lowering.code import locate
    from trtcheck.backends.lowering.release import load

    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no CUDA device here")
    source = locate(release)
    load(str(source.path or ""), behaving=True)  # on CUDA where torch sees it (the parent hides it for cpu)
    if device == "cpu":
        _cpu_references()
    available = torch.cuda.is_available
    torch.cuda.is_available = lambda: True  # read by the harness's skipIf, when its module is imported
    try:
        return import_suite(suite)
    finally:
        torch.cuda.is_available = available


def case_ids(suite: Path, package: str, unimportable: dict[str, str]) -> list[str]:
    """The ids of the cases of the suite's imported test modules."""
    ids: list[str] = []

    def walk(test: Any) -> None:
        if isinstance(test, unittest.TestSuite):
            for t in test:
                walk(t)
        else:
            ids.append(test.id())

    for path in sorted(suite.glob("test_*.py")):
        if path.name not in unimportable:
            walk(unittest.defaultTestLoader.loadTestsFromName(f"{package}.{path.stem}"))
    return ids


class _Errors(logging.Handler):
    """What TensorRT's logger said at ERROR during a case (Torch-TensorRT logs it through Python's)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


ERRORS = _Errors()


def _run_one(test_id: str) -> dict[str, Any]:
    case = unittest.defaultTestLoader.loadTestsFromName(test_id)
    result = unittest.TestResult()
    ERRORS.messages.clear()
    started = time.perf_counter()
    case.run(result)
    seconds = time.perf_counter() - started
    if result.skipped:
        return {"id": test_id, "outcome": "skipped", "reason": str(result.skipped[0][1]), "s": seconds}
    if result.failures or result.errors:
        kind, (_, text) = ("fail", result.failures[0]) if result.failures else ("error", result.errors[0])
        reason = _reason(text)
        if ERRORS.messages:  # a failed build: what TensorRT's logger was told says why
            reason = f"{reason} (logged: {ERRORS.messages[0][:300]})"
        return {"id": test_id, "outcome": kind, "reason": reason, "trace": text[-4000:], "s": seconds}
    if result.testsRun == 0 or (not result.wasSuccessful()):
        return {"id": test_id, "outcome": "error", "reason": "the case did not run", "s": seconds}
    return {"id": test_id, "outcome": "pass", "s": seconds}


def _reason(text: str) -> str:
    """The exception line of a traceback (its last line that names an exception)."""
    lines = [line for line in text.strip().splitlines()
             if line.strip() and not line.startswith("While executing")]
    for line in lines:
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b: ", line):
            return line.strip()[:400]
    for line in reversed(lines):
        named = re.match(r"^[A-Za-z_.]*(Error|Exception|Failure|Exit)\b", line)
        if named or (": " in line and not line.startswith(" ")):
            return line.strip()[:400]
    return lines[-1].strip()[:400] if lines else "no message"


def worker(suite: Path, release: str, device: str) -> int:
    """Answer on stdout: first the case ids, then for each id read from stdin a JSON line."""
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    logging.getLogger().addHandler(ERRORS)
    logging.getLogger().setLevel(logging.ERROR)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # the suite's own prints stay off the protocol
    try:
        package, unimportable = _load(suite, release, device)
    except Exception:
        print(json.dumps({"fatal": traceback.format_exc()}), file=real_stdout, flush=True)
        return 1
    print(json.dumps({"ids": case_ids(suite, package, unimportable), "unimportable": unimportable}),
          file=real_stdout, flush=True)
    for line in sys.stdin:
        test_id = line.strip()
        if not test_id:
            continue
        try:
            record = _run_one(test_id)
        except Exception:
            record = {"id": test_id, "outcome": "error", "reason": _reason(traceback.format_exc())}
        print(json.dumps(record), file=real_stdout, flush=True)
    return 0


# The parent -----------------------------------------------------------------------------------

class Worker:
    """One worker process; ``run`` sends a case and waits for its line, at most ``timeout`` s."""

    def __init__(self, suite: Path, release: str, device: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(BENCHMARKS.parent), os.environ.get("PYTHONPATH")) if p), "OMP_NUM_THREADS": "1"}
        if device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""  # a GPU machine's CPU run: torch sees no GPU, as on a CPU one
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", "--suite",
                                      str(suite), "--release", release, "--device", device],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        first = self._line(600)
        if first is None or "ids" not in first:
            raise SystemExit(f"the worker did not start: {(first or {}).get('fatal', 'no reply')}")
        self.ids: list[str] = first["ids"]
        self.unimportable: dict[str, str] = first["unimportable"]

    def _line(self, timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def run(self, test_id: str, timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(test_id + "\n")
            self.proc.stdin.flush()
        except OSError:
            return None
        return self._line(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_cases(suite: Path, release: str, device: str, ids: list[str], timeout: float,
              current: Worker | None = None) -> list[dict[str, Any]]:
    """Each case in a worker (``current`` first), a new one after a crash or a hang."""
    records: list[dict[str, Any]] = []
    for n, test_id in enumerate(ids, 1):
        if current is None:
            current = Worker(suite, release, device)
        record = current.run(test_id, timeout)
        if record is None:
            alive = current.proc.poll() is None
            record = {"id": test_id, "outcome": "error", "s": timeout if alive else None,
                      "reason": f"timed out after {timeout:.0f} s" if alive else
                      f"the worker died (exit {current.proc.returncode})"}
            current.close()
            current = None
        records.append(record)
        print(f"[{n}/{len(ids)}] {record['outcome']:7} {test_id}", file=sys.stderr, flush=True)
    if current is not None:
        current.close()
    return records


def layer_of(record: dict[str, Any]) -> str:
    """The TensorRT layer a failure names, else the test file (the converter under test)."""
    found = LAYER.findall(record.get("reason", "") + record.get("trace", ""))
    if found:
        return found[-1]
    module = record["id"].split(".")
    return module[1] if len(module) > 2 else record["id"]


def report(records: list[dict[str, Any]], wall: float, device: str) -> tuple[int, int, int]:
    """Print the tables; return the cases passed, run, and failed needing a GPU-only feature."""
    counts = Counter(r["outcome"] for r in records)
    run = [r for r in records if r["outcome"] != "skipped"]
    passed = sum(r["outcome"] == "pass" for r in run)
    print("| outcome | cases |")
    print("|---|---|")
    for outcome in ("pass", "fail", "error", "skipped"):
        print(f"| {outcome} | {counts.get(outcome, 0)} |")
    gpu = [r for r in run
           if r["outcome"] != "pass" and GPU_ONLY.search(r.get("reason", "") + r.get("trace", ""))]
    print(f"\ncases needing a GPU-only feature: {len(gpu)}; wall time {wall:.0f} s")
    failed = [r for r in run if r["outcome"] != "pass"]
    if failed:
        print("\n| case | layer | outcome | reason |")
        print("|---|---|---|---|")
        for r in sorted(failed, key=lambda r: (layer_of(r), r["id"])):
            reason = r.get("reason", "").replace("|", "\\|").replace("\n", " ")[:200]
            print(f"| `{r['id'].split('.', 1)[-1]}` | {layer_of(r)} | {r['outcome']} | {reason} |")
    skipped = [r for r in records if r["outcome"] == "skipped"]
    if skipped:
        reasons = Counter(r.get("reason", "")[:120] for r in skipped).most_common()
        print("\nskipped by the suite itself: " + "; ".join(f"{reason} ({n})" for reason, n in reasons))
    print("\nadapted to run here: " + "; ".join(ADAPTATIONS[device]))
    return passed, len(run), len(gpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, help="tests/py/dynamo/conversion/ of the release under test")
    parser.add_argument("--sample", type=int, help="run this many cases, drawn with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shard", type=_shard,
                        help="K/N: every Nth case from the Kth (1-based), to run N processes side by side")
    parser.add_argument("--release", default="2.13.0", help="the Torch-TensorRT release whose code runs")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a case may take")
    parser.add_argument("--json", type=Path, help="write every case's record here")
    parser.add_argument("--quick", action="store_true", help="this repository's own converter cases")
    parser.add_argument("--device", choices=tuple(ADAPTATIONS), default="cpu",
                        help="where the suite's tensors and the stand-in's engines are (cuda: a GPU)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.suite = QUICK_SUITE
    if args.suite is None:
        parser.error("--suite DIR (or --quick) is required")
    suite = args.suite.resolve()
    if args.worker:
        return worker(suite, args.release, args.device)
    started = time.perf_counter()
    first = Worker(suite, args.release, args.device)
    ids, unimportable = first.ids, first.unimportable
    total = len(ids)
    if args.sample is not None and args.sample < total:
        ids = sorted(random.Random(args.seed).sample(ids, args.sample))
    if args.shard is not None:
        ids = ids[args.shard[0] - 1::args.shard[1]]
    print(f"Torch-TensorRT {args.release}'s converter cases in {suite}: {total}; running {len(ids)} "
          f"(seed {args.seed}) through the TensorRT stand-in on {args.device} (NOT TensorRT)")
    for name, why in unimportable.items():
        print(f"not imported, its cases not counted: {name}: {why}")
    if not ids:
        code, summary = verdict(0, 0, total, unimportable)
        first.close()
        print(f"\n{summary}")
        return code
    print()
    records = run_cases(suite, args.release, args.device, ids, args.timeout, first)
    wall = time.perf_counter() - started
    if args.json:
        args.json.write_text(json.dumps({"release": args.release, "device": args.device, "suite": str(suite),
                                         "total": total,
                                         "seed": args.seed, "wall_s": wall, "records": records,
                                         "unimportable": unimportable}, indent=1))
    passed, run, gpu = report(records, wall, args.device)
    if gpu:
        print(f"\npass rate without the {gpu} cases needing a GPU-only feature: "
              f"{100 * passed / (run - gpu) if run > gpu else 0:.1f}% ({passed} of {run - gpu})")
    code, summary = verdict(passed, run, total, unimportable)
    print(f"\n{summary}")
    return code


def _shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)/(\d+)", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 1 <= K <= N")
    return int(match[1]), int(match[2])


def verdict(passed: int, run: int, total: int, unimportable: dict[str, str]) -> tuple[int, str]:
    """The exit code and the last lines: the modules not imported, named and counted, then the pass
    rate; with no case run, exit 1 and why."""
    lines = [f"test modules not imported: {len(unimportable)}"
             + "".join(f"\n  {name}: {why}" for name, why in unimportable.items())] if unimportable else []
    if run == 0:
        if unimportable:
            cause, count = Counter(unimportable.values()).most_common(1)[0]
            why = f"no case was found: {len(unimportable)} test modules could not be imported ({count} of " \
                f"them: {cause})" if total == 0 else "every case was skipped"
        else:
            why = "the suite holds no test case (no test_*.py module with cases)" if total == 0 else \
                "every case was skipped"
        return 1, "\n".join([*lines, f"no case ran: {why}"])
    return 0, "\n".join([*lines, f"pass rate: {100 * passed / run:.1f}% ({passed} of {run})"])


if __name__ == "__main__":
    raise SystemExit(main())
