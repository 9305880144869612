"""record.py: the record's round trip, the journal and its merging, and the worker protocol."""

from __future__ import annotations

import json
import math
from pathlib import Path

from trtcheck.backends import get
from trtcheck.config.options import Options
from trtcheck.execution.isolate import IsolatedExecutor
from trtcheck.results.backends import Kind
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import Journal, Record, save
from trtcheck.results.record import load as load_record
from trtcheck.results.rows import Analysis, Evidence, Row
from trtcheck.status import Status
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile, load


def _row(case: str, backend: str = "eager", profile: str = "-", **fields) -> Row:
    return Row(f"m::{case}[float32]", "m", case, "float32", backend, profile, **fields)


def test_record_round_trips_through_json_with_non_finite_numbers(tmp_path: Path) -> None:
    stats = Stats("perf_counter", 3, 20, 1.5, 2.0, 1.0, 1.6, 0.1)
    row = _row("a", "emulate", "default", kind=Kind.EMULATED, status=Status.FAIL,
               outputs=[{"path": "", "kind": "float", "passed": False, "max_abs": math.inf,
                         "max_rel": math.nan, "min_rtol": math.inf, "message": "x"}],
               latency=Latency(stats, stats),
               evidence=Evidence(path=["int64"], fallbacks=["aten.fft_fft.default"], engines=2,
                                 notes=["n"], settings={"min_block_size": 1},
                                 versions={"torch_tensorrt": None}, details={"k": [1]}))
    record = Record({"device": "cpu"}, {"profiles": []}, [row], {row.case_id: {"path": ["int64"]}})
    save(record, tmp_path / "results.json")
    text = (tmp_path / "results.json").read_text()
    assert "NaN" not in text and "Infinity" not in text  # portable JSON
    again = load_record(tmp_path / "results.json")
    assert again.rows[0].outputs[0]["max_abs"] == math.inf
    assert math.isnan(again.rows[0].outputs[0]["max_rel"])
    again.rows[0].outputs[0]["max_rel"] = row.outputs[0]["max_rel"] = 0.0
    assert again == record


def test_journal_merges_resumed_runs_last_row_wins(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    journal = Journal(path, {"device": "cpu"}, {"strict_xfail": False})
    journal.append([Analysis("m::a[float32]", {"path": []}), _row("a", status=Status.CRASH),
                    _row("b")])
    journal.close()
    resumed = Journal(path, {"device": "cpu"}, {}, resume=True)
    resumed.append([_row("a", message="second try")])
    resumed.close()
    with path.open("a") as fh:
        fh.write('{"case_id": "m::c[float32]", "backe')  # a line cut short by a kill
    record = load_record(path)
    assert [(r.case_id, r.status, r.message) for r in record.rows] == [
        ("m::a[float32]", Status.PASS, "second try"), ("m::b[float32]", Status.PASS, "")]
    assert record.analyses == {"m::a[float32]": {"path": []}}
    assert json.loads(path.read_text().splitlines()[0])["schema"] == 2


def test_worker_protocol_sends_the_analysis_then_each_row(make_zoo, tmp_path: Path) -> None:
    root = make_zoo({"m.py": """
        import torch, trtcheck

        @trtcheck.model(variants=("float32",))
        def double(variant):
            return torch.nn.Identity(), (torch.ones(2),)
    """})
    file = ZooFile(root, root / "m.py")
    [spec] = load(file).specs
    opts = Options(paths=(root,), backends=("eager",), device="cpu", timeout=120)
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
