"""CUDA code paths, for real: device placement, CUDA-event timing, backends on the GPU,
memory peaks, out of GPU memory and memory left between cases.

Marked ``gpu``; they skip on machines without CUDA (CI here has none)."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from tests.helpers import REPO
from trtcheck import backends
from trtcheck.config import cascade, options
from trtcheck.config.timing import Timing
from trtcheck.execution.case import iter_rows
from trtcheck.execution.isolate import IsolatedExecutor
from trtcheck.execution.run import collect
from trtcheck.measure import kernels, memory
from trtcheck.measure.timing import measure
from trtcheck.results.metrics import MAX_REL
from trtcheck.results.rows import Row
from trtcheck.status import Status

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

FIXTURES = REPO / "fixtures"


def _opts(keyword: str, profiles: tuple[str, ...] = ("default",),
          names: tuple[str, ...] = ("eager", "emulate", "inductor"), **given: object) -> options.Options:
    return cascade.resolve((FIXTURES,), keyword=keyword, device="cuda", run_profiles=profiles,
                           backends=names, **given)


@pytest.mark.parametrize("keyword", ["seed_rope", "llama_rope", "id_hash", "scatter", "propagator"])
def test_backends_on_cuda_match_eager_and_time_with_cuda_events(keyword: str) -> None:
    opts = _opts(keyword, profiles=("truncate_double",))  # emulate: no FP64 in an engine otherwise
    chosen = {n: backends.get(n) for n in opts.backends}
    cases = collect(opts).cases
    assert cases
    for case in cases:
        rows = [r for r in iter_rows(case, opts, chosen) if isinstance(r, Row)]
        assert {r.backend for r in rows} == {"eager", "emulate", "inductor"}
        for row in rows:
            assert row.status is Status.PASS, (row.case_id, row.backend, row.message)
            lat = row.latency
            if row.backend == "emulate":  # a prediction: timed only under time_predictions
                assert lat is None, (row.case_id, "a prediction row was timed")
                continue
            assert lat is not None, (row.case_id, row.backend)
            assert lat.eager.timer == lat.backend.timer == "perf_counter"  # the caller's view
            assert lat.eager_device.timer == lat.backend_device.timer == "cuda-event"
            assert lat.backend.median_ms > 0 and lat.backend_device.median_ms > 0
            assert lat.interval is not None and lat.interval[0] <= lat.speedup <= lat.interval[1]


def test_a_prediction_asked_to_be_timed_is_timed_with_cuda_events() -> None:
    opts = _opts("seed_rope", profiles=("truncate_double",), names=("emulate",), time_predictions=True)
    case = collect(opts).cases[0]
    rows = [r for r in iter_rows(case, opts, {n: backends.get(n) for n in opts.backends})
            if isinstance(r, Row)]
    assert rows and all(r.latency is not None for r in rows)
    assert {r.latency.backend_device.timer for r in rows} == {"cuda-event"}


def test_gpu_blocks_last_at_least_block_ms_and_hide_launch_overhead() -> None:
    x = torch.randn(1024, device="cuda")

    def tiny(t: torch.Tensor) -> torch.Tensor:
        return t * 2 + 1

    timing = Timing(warmup=3, repeats=20, warmup_s=0.05, min_time_s=0.2, block_ms=1.0,
                    method="blocks")
    lat = measure((tiny, tiny), (x,), {}, timing=timing, device="cuda",
                  fresh_inputs=(False, False))
    for dev in (lat.eager_device, lat.backend_device):
        assert dev.block > 1 and dev.block * dev.median_ms >= 0.5
    # a synchronised single call pays the launch and the wait; back-to-back calls overlap them
    assert lat.eager_device.median_ms < lat.eager.median_ms
    assert 0.8 < lat.speedup < 1.25  # the same callable twice


def test_a_cpu_sweep_on_cuda_times_on_every_cpu_and_gives_the_thread_back() -> None:
    import os

    x = torch.randn(1024, device="cuda")
    allowed = os.sched_getaffinity(0)
    lat = measure((torch.tanh, torch.tanh), (x,), {}, timing=Timing(repeats=5, cpus="sweep"),
                  device="cuda", fresh_inputs=(False, False))
    assert lat.cpus == len(allowed) and os.sched_getaffinity(0) == allowed
    assert lat.eager_device.repeats == 5  # the fastest CPU's block alone
    assert measure((torch.tanh, torch.tanh), (x,), {}, timing=Timing(repeats=5), device="cuda",
                   fresh_inputs=(False, False)).cpus is None


def test_truncate_double_on_cuda_loses_float64_precision() -> None:
    opts = _opts("propagator", profiles=("default", "truncate_double"))
    (case,) = collect(opts).cases
    rows = {r.profile: r for r in iter_rows(case, opts, {"emulate": backends.get("emulate")})
            if isinstance(r, Row)}
    exact, truncated = rows["default"], rows["truncate_double"]
    assert exact.status is Status.UNSUPPORTED and "TensorRT has no FP64" in exact.message
    assert truncated.status is Status.PASS
    assert 1e-8 < MAX_REL.of_row(truncated.outputs) < 1e-4
    assert "precision lost" in truncated.message


def test_tensorrt_without_torch_tensorrt_is_skipped_with_reason() -> None:
    reason = backends.get("tensorrt").unavailable_reason("cuda")
    try:
        import torch_tensorrt  # noqa: F401
    except Exception:
        assert reason and "torch_tensorrt" in reason
    else:
        pytest.skip("Torch-TensorRT is installed here")


def test_rows_on_cuda_carry_allocator_peaks_with_a_ratio_on_measured_rows_only() -> None:
    # relax_grid: peaks above the 1 MiB floor a ratio needs (the RoPE fixtures stay under it)
    opts = _opts("relax_grid")
    chosen = {n: backends.get(n) for n in opts.backends}
    for case in collect(opts).cases:
        rows = {r.backend: r for r in iter_rows(case, opts, chosen) if isinstance(r, Row)}
        for row in rows.values():
            mem = row.memory
            assert mem is not None and mem.measure == memory.ALLOCATOR
            assert mem.eager and mem.eager > 0 and mem.backend is not None
            assert mem.before is not None and mem.after is not None
            assert mem.notes == [], mem.notes  # nothing leaked, cuBLAS workspaces included
        assert rows["eager"].memory_ratio is not None
        assert rows["inductor"].memory_ratio is not None
        assert rows["emulate"].memory_ratio is None
        assert rows["emulate"].to_dict()["memory"]["backend"] is not None


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64, torch.int64])
def test_compare_stays_on_the_device_within_twice_the_pair(dtype: torch.dtype) -> None:
    from trtcheck.core.profiles import Tolerance
    from trtcheck.measure.compare import compare

    n = 64 * 2**20 // torch.empty((), dtype=dtype).element_size()  # 64 MiB per output
    if dtype == torch.int64:
        eager = torch.randint(-2**40, 2**40, (n,), device="cuda")
    else:
        eager = torch.randn(n, dtype=dtype, device="cuda")
    actual = eager * 2 if dtype == torch.int64 else eager + 1e-4
    eager_before = eager.clone()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    result = compare(eager, actual, lambda _: Tolerance(rtol=5e-3, atol=5e-3))
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before
    assert extra < 2 * (eager.nbytes + actual.nbytes)
    assert torch.equal(eager, eager_before)
    assert result.leaves[0].max_abs is not None


def test_kernel_fingerprints_on_cuda_name_cublas_and_cudnn_kernels() -> None:
    x = torch.randn(256, 256, device="cuda")
    conv = torch.nn.Conv2d(3, 16, 3).cuda()
    image = torch.randn(4, 3, 64, 64, device="cuda")
    mm = kernels.fingerprint(lambda: x @ x, "cuda")
    cv = kernels.fingerprint(lambda: conv(image), "cuda")
    assert mm["of"] == cv["of"] == "GPU kernels"
    # cuBLAS's kernels (gemm, cutlass, Hopper's nvjet) and cuDNN's (implicit gemm, fprop, ...)
    assert any(re.search(r"gemm|cutlass|xmma|cublas|nvjet", n, re.I) for n in mm["names"]), \
        mm["names"]
    assert any(re.search(r"conv|cudnn|implicit|winograd|xmma|fft|fprop", n, re.I)
               for n in cv["names"]), cv["names"]
    assert mm["fingerprint"] == kernels.fingerprint(lambda: x @ x, "cuda")["fingerprint"]
    assert mm["fingerprint"] != cv["fingerprint"]


def test_rows_on_cuda_carry_the_kernels_of_eager_and_the_backend_with_their_settings() -> None:
    # relax_grid: elementwise, one generated kernel compiled against several eager ones
    opts = replace(_opts("relax_grid", names=("eager", "inductor")), kernels=True)
    chosen = {n: backends.get(n) for n in opts.backends}
    for case in collect(opts).cases:
        rows = {r.backend: r for r in iter_rows(case, opts, chosen) if isinstance(r, Row)}
        found = rows["inductor"].evidence.details["kernels"]
        assert found["eager"]["of"] == found["backend"]["of"] == "GPU kernels"
        assert any(n.startswith("triton_") for n in found["backend"]["names"]), found["backend"]
        assert found["eager"]["fingerprint"] != found["backend"]["fingerprint"]
        assert set(found["settings"]) >= {"cudnn_benchmark", "cudnn_allow_tf32",
                                          "matmul_allow_tf32", "CUBLAS_WORKSPACE_CONFIG"}


def test_a_worker_on_cuda_marks_its_cuda_start_apart_from_the_first_case(tmp_path: Path) -> None:
    opts = _opts("seed_rope", names=("eager",))
    executor = IsolatedExecutor(opts, {"eager": backends.get("eager")}, tmp_path / "worker.log")
    try:
        for case in collect(opts, executor).cases:
            rows = [r for r in executor.rows(case) if isinstance(r, Row)]
            assert rows and all(r.status is Status.PASS for r in rows)
    finally:
        executor.close()
    parts = executor.timeline.parts(time.monotonic())
    assert {"interpreter", "imports", "collection", "cuda start", "backends", "build",
            "teardown"} <= parts.keys(), parts
    assert parts["cuda start"] > 0
