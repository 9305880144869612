"""Memory figures: per-stage peaks, leak notes, the out-of-GPU-memory message, the row contract,
Torch-TensorRT's engine memory, and the worker's replacement when memory is not given back.

CUDA paths run for real in ``test_cuda.py``; here they are tested as pure functions."""

from __future__ import annotations

import ast
import io
import os
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from tests.helpers import REPO
from trtcheck import backends
from trtcheck.backends.torch_tensorrt.inspection import engine_memory
from trtcheck.config import cascade
from trtcheck.core.traits import Kind
from trtcheck.execution.case import iter_rows
from trtcheck.execution.isolate import IsolatedExecutor
from trtcheck.execution.messages import Done
from trtcheck.execution.run import collect
from trtcheck.measure import memory
from trtcheck.measure.memory import LEAK_MARGIN, MIB, Peak
from trtcheck.render.junit import render_junit
from trtcheck.render.markdown import render_markdown
from trtcheck.results.figures import Memory
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged

FIXTURES = REPO / "fixtures"
# A real message of torch.OutOfMemoryError from the caching allocator (torch 2.11 on an H200).
OOM_TEXT = ("CUDA out of memory. Tried to allocate 1024.00 MiB. GPU 0 has a total capacity of "
            "139.81 GiB of which 612.00 MiB is free. Including non-PyTorch memory, this process "
            "has 139.19 GiB memory in use. Of the allocated memory 138.00 GiB is allocated by "
            "PyTorch, and 12.50 MiB is reserved by PyTorch but unallocated.")

cpu_peaks = pytest.mark.skipif(memory.measure_name("cpu") is None,
                               reason="no /proc/self/clear_refs: no per-stage resident peak here")


@cpu_peaks
def test_cpu_peak_is_reset_for_each_stage() -> None:
    peaks: dict[str, Peak] = {}
    with memory.peak("cpu", peaks, "big"):
        big = torch.ones(64 * MIB // 4)  # 64 MiB, touched
        del big
    with memory.peak("cpu", peaks, "small"):
        small = torch.ones(MIB // 4)
        del small
    assert peaks["big"].added >= 60 * MIB
    # Without the reset the second stage would report the first one's high-water mark; with
    # it, 1 MiB reused from the freed 64 moves no mark: not measured, rather than 0.
    small = peaks.get("small")
    assert small is None or (0 < small.added < 16 * MIB and small.peak < peaks["big"].peak)


@pytest.mark.parametrize(("baseline", "now", "near"), [
    (0, 0, True), (0, LEAK_MARGIN, True), (0, LEAK_MARGIN + 1, False),
    (10 * MIB, 10 * MIB + LEAK_MARGIN + 1, False), (100 * MIB, 0, True),
    (None, 10**12, True), (0, None, True),
])
def test_near_baseline(baseline: int | None, now: int | None, near: bool) -> None:
    assert memory.near_baseline(baseline, now) is near


def test_leak_note_names_what_leaked_with_figures() -> None:
    assert memory.leak_note("case a::b[default]", 0, LEAK_MARGIN, "cuda:0") is None
    note = memory.leak_note("case a::b[default]", 2 * MIB, 258 * MIB, "cuda:1")
    assert note == ("case a::b[default] left 256.0 MiB allocated on cuda:1 after it finished "
                    "(in use 2.0 MiB before, 258.0 MiB after): a leak in the model or the backend")


def test_oom_message_carries_the_allocator_figures() -> None:
    text = memory.oom_message("run", OOM_TEXT, reserved=139 * 2**30, total=140 * 2**30)
    assert text == ("out of GPU memory at run: requested 1024.00 MiB, reserved by PyTorch "
                    "142336.0 MiB, total 143360.0 MiB")
    assert memory.oom_message("compile", "no figures", None, None) == (
        "out of GPU memory at compile: requested unknown, reserved by PyTorch unknown, "
        "total unknown")


def test_memory_on_cpu_is_not_a_gpu_figure() -> None:
    assert memory.in_use("cpu") is None
    assert memory.measure_name("cpu") in (memory.RESIDENT, None)


def _row(kind: Kind, mem: Memory | None) -> Row:
    return Row("z::m[default]", "z.py", "m", "default", "b", kind=kind, memory=mem)


def test_ratio_for_measured_rows_only_and_round_trip() -> None:
    mem = Memory(memory.ALLOCATOR, eager=4 * MIB, backend=2 * MIB, compiled=MIB, engine=None,
                 before=0, after=0, notes=["n"])
    measured, predicted = _row(Kind.MEASURED, mem), _row(Kind.EMULATED, mem)
    assert measured.memory_ratio == 0.5
    assert predicted.memory_ratio is None
    assert measured.to_dict()["memory"]["ratio"] == 0.5
    assert "ratio" not in predicted.to_dict()["memory"]  # no ratio to mistake for TensorRT's
    assert predicted.to_dict()["memory"]["backend"] == 2 * MIB  # the peak stays
    assert Row.from_dict(measured.to_dict()) == measured
    assert _row(Kind.MEASURED, Memory(memory.ALLOCATOR, eager=0, backend=MIB)).memory_ratio is None
    assert Row.from_dict(_row(Kind.MEASURED, None).to_dict()).memory is None


def test_reports_show_peaks_ratio_and_notes() -> None:
    mem = Memory(memory.ALLOCATOR, eager=4 * MIB, backend=2 * MIB,
                 notes=["case z::m\\[default] left 100.0 MiB allocated"])
    from trtcheck.results.figures import Latency, Stats
    stats = Stats("cuda-event", 3, 20, 1.0, 1.0, 1.0, 1.0, 0.0)
    rows = [Row("z::m[default]", "z.py", "m", "default", b, kind=k, memory=mem,
                latency=Latency(stats, stats)) for b, k in (("inductor", Kind.MEASURED),
                                                             ("emulate", Kind.EMULATED))]
    record = Record({"device": "cuda:0"}, {}, rows, {})
    report = render_markdown(Judged.of(record))
    assert "| eager peak MiB | backend peak MiB | memory ratio |" in report
    assert "| 4 | 2 | 0.5× |" in report
    assert "| 4 | 2 | — |" in report  # emulate
    assert "PyTorch allocator peak of one call after warm-up" in report
    assert "left 100.0 MiB allocated" in report
    junit = render_junit(record)
    assert "memory ratio: 0.5×" in junit and "backend peak MiB: 2" in junit
    assert "memory (PyTorch allocator peak) note: case z::m" in junit


@cpu_peaks
def test_cpu_rows_carry_resident_peaks_with_a_ratio_on_measured_rows_only() -> None:
    opts = cascade.resolve((FIXTURES,), keyword="seed_rope", device="cpu",
                           backends=("eager", "emulate"))
    chosen = {n: backends.get(n) for n in opts.backends}
    case = collect(opts).cases[0]
    rows = [r for r in iter_rows(case, opts, chosen) if isinstance(r, Row)]
    assert {r.backend for r in rows} == {"eager", "emulate"}
    for row in rows:
        assert row.memory is not None and row.memory.measure == memory.RESIDENT
        # a mark that never rose is not measured (None), never 0
        assert row.memory.eager != 0 and row.memory.backend != 0
        assert row.memory.before is row.memory.after is None  # no GPU figures on CPU
        assert row.memory.notes == []
    by_backend = {r.backend: r for r in rows}
    assert by_backend["emulate"].memory_ratio is None
    if by_backend["eager"].memory.eager:  # a few KiB of activations may not move the RSS
        assert by_backend["eager"].memory_ratio is not None


class _Engine(torch.nn.Module):
    def __init__(self, plan: bytes, engine: Any) -> None:
        super().__init__()
        self.serialized_engine = plan
        self.engine = engine


class _ScriptEngine:
    """Like ``torch.classes.tensorrt.Engine``: an unknown attribute raises, not AttributeError."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"Tried to access nonexistent attribute or method '{name}'")


def _compiled(*engines: torch.nn.Module) -> torch.nn.Module:
    module = torch.nn.Module()
    for i, engine in enumerate(engines):
        module.add_module(f"_run_on_acc_{i}", engine)
    module.add_module("_run_on_gpu_0", torch.nn.Identity())
    return module


def test_engine_memory_reads_plans_and_python_runtime_activations() -> None:
    python_213 = SimpleNamespace(cuda_engine=SimpleNamespace(device_memory_size_v2=4096))
    python_212 = SimpleNamespace(device_memory_size_v2=1024)  # the ICudaEngine itself
    assert engine_memory(_compiled(_Engine(b"x" * 100, python_213),
                                   _Engine(b"y" * 50, python_212))) == {
        "plan_bytes": 150, "activation_bytes": 5120}
    # The C++ runtime holds no ICudaEngine in Python: the plans only.
    assert engine_memory(_compiled(_Engine(b"x" * 100, python_213),
                                   _Engine(b"y" * 50, _ScriptEngine()))) == {
        "plan_bytes": 150, "activation_bytes": None}
    assert engine_memory(_compiled()) is None
    assert engine_memory(lambda x: x) is None


# Contract with the real Torch-TensorRT code: the names engine_memory reads are the ones each
# release's runtime modules assign. Read from the release wheels' sources (no TensorRT needed);
# skipped where the wheels are not on disk.
WHEELS = Path(os.environ.get("TRTCHECK_TTRT_WHEELS", "/tmp/ttrt"))
RUNTIME = "torch_tensorrt/dynamo/runtime/"


def _self_assignments(source: str, class_name: str) -> set[str]:
    tree = ast.parse(source)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name)
    return {t.attr for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}


@pytest.mark.parametrize("release", ["2.12.1", "2.13.0", "2.14.0"])
def test_engine_memory_contract_with_torch_tensorrt_sources(release: str) -> None:
    wheels = sorted((WHEELS / release).glob("torch_tensorrt-*.whl"))
    if not wheels:
        pytest.skip(f"no Torch-TensorRT {release} wheel under {WHEELS} (TRTCHECK_TTRT_WHEELS)")
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())

        def read(name: str) -> str:
            return io.TextIOWrapper(wheel.open(RUNTIME + name), encoding="utf-8").read()

        assert {"serialized_engine", "engine"} <= _self_assignments(
            read("_TorchTensorRTModule.py"), "TorchTensorRTModule")
        if RUNTIME + "_TRTEngine.py" in names:  # 2.13+: the Python runtime's TRTEngine
            source = read("_TRTEngine.py")
            assert "cuda_engine" in _self_assignments(source, "TRTEngine")
            # Torch-TensorRT itself reads the ICudaEngine's activation size under this name.
            assert "self.cuda_engine.device_memory_size_v2" in source
        else:  # 2.12: PythonTorchTensorRTModule holds the ICudaEngine as ``engine``; its
            # device_memory_size_v2 is TensorRT 10's API (10.0 on), and 2.12 pins TensorRT 10.16.
            source = read("_PythonTorchTensorRTModule.py")
            assigned = _self_assignments(source, "PythonTorchTensorRTModule")
            assert {"serialized_engine", "engine"} <= assigned
            assert "self.engine = runtime.deserialize_cuda_engine(" in source
        # The name partition_summary and engine_memory find engines by.
        assert "_run_on_acc" in wheel.read(
            "torch_tensorrt/dynamo/partitioning/_global_partitioner.py").decode()


class _FakeWorker:
    """The parent side's view of a worker that finished a case and asks to be replaced."""

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages
        self.stopped = False

    def alive(self) -> bool:
        return True

    def poll(self, timeout: float) -> bool:
        return True

    def receive(self) -> Any:
        return self.messages.pop(0)

    def stop(self) -> None:
        self.stopped = True


@pytest.mark.parametrize("reason", [None, "worker replaced: 300.0 MiB of GPU memory still allocated"])
def test_worker_asking_for_replacement_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  reason: str | None) -> None:
    opts = cascade.resolve((FIXTURES,), keyword="seed_rope", device="cpu", backends=("eager",))
    case = collect(opts).cases[0]
    executor = IsolatedExecutor(opts, {"eager": backends.get("eager")}, tmp_path / "worker.log")
    fake = _FakeWorker([Done(reason)])
    monkeypatch.setattr(executor, "_send", lambda request: fake)
    executor.worker = fake  # type: ignore[assignment]
    assert list(executor.rows(case)) == []
    assert fake.stopped is (reason is not None)
    assert (executor.worker is None) is (reason is not None)
    executor.log.close()
    log = (tmp_path / "worker.log").read_text()
    assert reason in log if reason else log == ""


@pytest.mark.parametrize(("measure", "eager", "backend", "ratio"), [
    (memory.ALLOCATOR, 4 * MIB, 4 * MIB, 1.0),
    (memory.ALLOCATOR, 4 * MIB, MIB // 2, None),  # the backend's peak under the 1 MiB floor
    (memory.ALLOCATOR, MIB // 2, 4 * MIB, None),
    (memory.RESIDENT, 8 * MIB, 8 * MIB, None),  # resident memory: a 16 MiB floor
    (memory.RESIDENT, 32 * MIB, 16 * MIB, 0.5),
])
def test_ratio_only_above_the_measures_floor(measure: str, eager: int, backend: int,
                                             ratio: float | None) -> None:
    assert Memory(measure, eager=eager, backend=backend).ratio == ratio


def test_engine_memory_counts_in_the_backends_side_of_the_ratio() -> None:
    assert Memory(memory.ALLOCATOR, eager=4 * MIB, backend=2 * MIB, engine=2 * MIB).ratio == 1.0


def test_steady_peak_leaves_out_what_the_first_call_allocates() -> None:
    kept: list[torch.Tensor] = []

    def first_call_allocates(x: torch.Tensor) -> torch.Tensor:
        if not kept:  # a workspace, made once and reused
            kept.append(torch.ones(64 * MIB // 4))
        return x + 1

    (peak,) = memory.steady_peaks("cpu", [(first_call_allocates, lambda: ((torch.ones(4),), {}))])
    if memory.measure_name("cpu") is not None:  # x + 1 may move no resident mark: not measured
        assert peak is None or 0 < peak.added < 16 * MIB
    assert len(kept) == 1
