"""record.py: the record's round trip, the journal and its merging, and the worker protocol."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from trtcheck.config.options import Options
from trtcheck.core.traits import Kind
from trtcheck.distribution import version
from trtcheck.execution.isolate import IsolatedExecutor
from trtcheck.results.figures import Latency, Memory, Stats
from trtcheck.results.record import LOCK_FILE, SCHEMA_VERSION, Journal, Record, locked, save
from trtcheck.results.record import load as load_record
from trtcheck.results.rows import Analysis, Evidence, Row
from trtcheck.status import Status


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


def _keys(value: object) -> set[str]:
    """Every key of a JSON value, however deep."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_a_prediction_row_saves_its_timings_without_speedup_interval_or_ratio(
        tmp_path: Path) -> None:
    stats = Stats("perf_counter", 3, 20, 1.5, 2.0, 1.0, 1.6, 0.1)
    latency = Latency(stats, stats, stats, stats, 0.039, 0.03, 0.05)
    memory = Memory("resident", eager=2**20, backend=2**21)
    rows = [_row("a", "emulate", "default", kind=Kind.EMULATED, latency=latency, memory=memory),
            _row("a", "lowering", "default", kind=Kind.LOWERED, latency=latency, memory=memory),
            _row("a", "inductor", latency=latency, memory=memory)]
    save(Record({}, {"profiles": []}, rows), tmp_path / "results.json")
    saved = json.loads((tmp_path / "results.json").read_text())["rows"]
    for prediction in saved[:2]:
        assert prediction["latency"] is None
        assert {"speedup", "paired_speedup", "speedup_low", "speedup_high", "ratio",
                "unstable"}.isdisjoint(_keys(prediction))
        assert prediction["prediction_timing"]["backend"]["median_ms"] == 1.5
        assert prediction["prediction_timing"]["schedule"] == "interleaved"  # how it was timed
    assert saved[2]["latency"]["speedup"] == 0.039 and saved[2]["memory"]["ratio"] == 2.0
    again = load_record(tmp_path / "results.json").rows
    assert again[0].latency is not None and again[0].latency.backend == stats
    assert again[0].latency.paired_speedup is None and again[2].latency == latency


def _varied_rows() -> list[Row]:
    stats = Stats("perf_counter", 3, 20, 1.5, 2.0, 1.0, 1.6, 0.1)
    return [_row("a", "inductor", latency=Latency(stats, stats, stats, stats, 0.9, 0.8, 1.0),
                 memory=Memory("resident", eager=2**20, backend=2**21)),
            _row("b", "emulate", "default", kind=Kind.EMULATED, status=Status.FAIL,
                 message='a "quoted" line\nand é, 雪, </xml>',
                 outputs=[{"path": "", "kind": "float", "passed": False, "max_abs": math.inf,
                           "max_rel": math.nan, "message": "x"}]),
            _row("c", "lowering", kind=Kind.LOWERED, tags=["t"], evidence=Evidence(notes=["n"]))]


def test_a_record_saved_again_copies_each_rows_line_as_read(tmp_path: Path) -> None:
    """Rows read from a record this trtcheck saved are written back by copying their lines
    (no re-encoding): the second save is byte for byte the first, and a line whose spacing
    differs from the encoder's (only a copy keeps it) comes back as it was."""
    env = {"trtcheck": version()}
    save(Record(env, {"profiles": []}, _varied_rows()), tmp_path / "first.json")
    first = (tmp_path / "first.json").read_text()
    save(load_record(tmp_path / "first.json"), tmp_path / "second.json")
    assert (tmp_path / "second.json").read_text() == first
    spaced = first.replace('{"case_id": "m::b[float32]"', '{"case_id":  "m::b[float32]"')
    (tmp_path / "spaced.json").write_text(spaced)
    save(load_record(tmp_path / "spaced.json"), tmp_path / "copied.json")
    assert (tmp_path / "copied.json").read_text() == spaced


def test_rows_of_another_version_or_layout_are_encoded_anew(tmp_path: Path) -> None:
    """Lines are copied only from this trtcheck's own layout: a record another version saved,
    or one written on one line, is re-encoded into the layout :func:`save` writes."""
    rows = _varied_rows()
    save(Record({"trtcheck": version()}, {"profiles": []}, rows), tmp_path / "mine.json")
    canonical = (tmp_path / "mine.json").read_text()
    other = canonical.replace(f'"trtcheck": "{version()}"', '"trtcheck": "0.0.1"')
    spaced = other.replace('{"case_id": "m::b[float32]"', '{"case_id":  "m::b[float32]"')
    one_line = json.dumps(json.loads(canonical))
    for name, text in (("other.json", spaced), ("one-line.json", one_line)):
        (tmp_path / name).write_text(text)
        save(load_record(tmp_path / name), tmp_path / f"again-{name}")
        again = (tmp_path / f"again-{name}").read_text()
        assert '"case_id":  ' not in again and again.count("\n") == canonical.count("\n")
        assert json.loads(again)["rows"] == json.loads(canonical)["rows"]


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
    assert json.loads(path.read_text().splitlines()[0])["schema"] == SCHEMA_VERSION


def test_a_finished_run_leaves_no_lock_file_and_no_empty_log(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with locked(out):
        assert (out / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    assert not (out / LOCK_FILE).exists()
    with locked(out):  # the next run takes the lock again
        pass
    opts = Options(paths=(tmp_path,), backends=("eager",), devices=("cpu",))
    IsolatedExecutor(opts, {}, out / "worker.log").close()
    assert list(out.iterdir()) == []
    kept = IsolatedExecutor(opts, {}, out / "worker.log")
    kept.log.write("a worker's warning\n")
    kept.close()
    assert [p.name for p in out.iterdir()] == ["worker.log"]
