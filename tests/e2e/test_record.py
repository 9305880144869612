"""The worker process an isolated run starts: its protocol sends a case's analysis, then each row.
The record itself is tested in tests/unit/results/test_record.py."""

from __future__ import annotations

from pathlib import Path

from trtcheck.backends import get
from trtcheck.config.options import Options
from trtcheck.core.traits import Kind
from trtcheck.execution.isolate import IsolatedExecutor
from trtcheck.results.rows import Analysis, Row
from trtcheck.status import Status
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile, load


def test_worker_protocol_sends_the_analysis_then_each_row(make_zoo, tmp_path: Path) -> None:
    root = make_zoo({"m.py": """
        import torch, trtcheck

        @trtcheck.model(variants=("float32",))
        def double(variant):
            return torch.nn.Identity(), (torch.ones(2),)
    """})
    file = ZooFile(root, root / "m.py")
    [spec] = load(file).specs
    opts = Options(paths=(root,), backends=("eager",), devices=("cpu",), timeout=120)
    executor = IsolatedExecutor(opts, {"eager": get("eager")}, tmp_path / "worker.log")
    try:
        items = list(executor.rows(Case(file, spec, "float32")))
        again = list(executor.rows(Case(file, spec, "float32")))
        worker = executor.worker
        assert worker is not None and worker.proc.poll() is None  # reused, still alive
    finally:
        executor.close()
    assert [type(i) for i in items] == [Analysis, Row] == [type(i) for i in again]
    assert items[0].case_id == "m::double[float32]"
    assert items[1].status is Status.PASS and items[1].kind is Kind.MEASURED
