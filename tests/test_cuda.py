"""CUDA code paths, for real: device placement, CUDA-event timing, backends on the GPU.

Marked ``gpu``; they skip on machines without CUDA (CI here has none)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trtcheck import backends, options
from trtcheck.compare import METRICS
from trtcheck.execute import iter_rows
from trtcheck.rows import Row
from trtcheck.run import collect
from trtcheck.status import Status

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

MAX_REL = next(m for m in METRICS if m.field == "max_rel")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _opts(keyword: str, profiles: tuple[str, ...] = ("default",)) -> options.Options:
    return options.resolve((FIXTURES,), keyword=keyword, device="cuda", profiles=profiles,
                           backends=("eager", "emulate", "inductor"))


@pytest.mark.parametrize("keyword", ["seed_rope", "llama_rope", "id_hash", "scatter", "propagator"])
def test_backends_on_cuda_match_eager_and_time_with_cuda_events(keyword: str) -> None:
    opts = _opts(keyword)
    chosen = {n: backends.get(n) for n in opts.backends}
    cases = collect(opts).cases
    assert cases
    for case in cases:
        rows = [r for r in iter_rows(case, opts, chosen) if isinstance(r, Row)]
        assert {r.backend for r in rows} == {"eager", "emulate", "inductor"}
        for row in rows:
            assert row.status is Status.PASS, (row.case_id, row.backend, row.message)
            assert row.latency is not None
            assert row.latency.eager.timer == row.latency.backend.timer == "cuda-event"
            assert row.latency.backend.median_ms > 0


def test_truncate_double_on_cuda_loses_float64_precision() -> None:
    opts = _opts("propagator", profiles=("default", "truncate_double"))
    (case,) = collect(opts).cases
    rows = {r.profile: r for r in iter_rows(case, opts, {"emulate": backends.get("emulate")})
            if isinstance(r, Row)}
    exact, truncated = rows["default"], rows["truncate_double"]
    assert exact.status is truncated.status is Status.PASS
    assert MAX_REL.of_row(exact.outputs) < 1e-12 < 1e-8 < MAX_REL.of_row(truncated.outputs) < 1e-4
    assert "precision lost" in truncated.message


def test_tensorrt_without_torch_tensorrt_is_skipped_with_reason() -> None:
    reason = backends.get("tensorrt").unavailable_reason("cuda")
    try:
        import torch_tensorrt  # noqa: F401
    except Exception:
        assert reason and "torch_tensorrt" in reason
    else:
        pytest.skip("Torch-TensorRT is installed here")


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64, torch.int64])
def test_compare_stays_on_the_device_within_twice_the_pair(dtype: torch.dtype) -> None:
    from trtcheck.compare import compare
    from trtcheck.options import Tolerance

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
