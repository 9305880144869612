"""Shards: the split is deterministic, contiguous and balanced; merge combines shards exactly and
refuses what cannot be combined. Workers: how many, and which case each takes next."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.helpers import TESTS
from trtcheck.config.settings import ROW_SETTINGS
from trtcheck.config.validation import parse_shard, workers
from trtcheck.errors import ConfigError, RecordError, UsageError
from trtcheck.execution.isolate import Schedule
from trtcheck.execution.shard import case_durations, describe, split
from trtcheck.results import record
from trtcheck.results.merge import merge
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.status import Status


def _cases(n: int) -> list[Any]:
    return [SimpleNamespace(case_id=f"m::c{i}[default]") for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, 5, 13, 100])
@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_partition_the_cases_in_order_and_balance_the_count(n: int, count: int) -> None:
    cases = _cases(n)
    shards = [split(cases, i, count) for i in range(1, count + 1)]
    assert [c for s in shards for c in s] == cases
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1


def test_durations_balance_the_shards_by_time() -> None:
    cases = _cases(6)
    durations = {cases[0].case_id: 50.0, **{c.case_id: 10.0 for c in cases[1:]}}
    first, second = split(cases, 1, 2, durations), split(cases, 2, 2, durations)
    assert first == cases[:1] and second == cases[1:]
    # A case the baseline does not know weighs the median of those it knows.
    del durations[cases[5].case_id]
    assert split(cases, 1, 2, durations) == cases[:1]


def _row(case: str, status: Status = Status.PASS, **timings: float) -> Row:
    return Row(f"m::{case}", "m", case, "default", "eager", status=status, timings=timings)


def _save(path: Path, rows: list[Row], shard: tuple[int, int] | None = None, *,
          collected: int = 4, **env: Any) -> Path:
    environment = {"trtcheck": "0.1.0", "torch": "2.13.0", "torch_tensorrt": None,
                   "tensorrt": None, "device": "cpu", "git_commit": "abc", "duration_s": 1.5, **env}
    if shard:
        every = _cases(collected)
        environment["shard"] = describe(*shard, every, every[:len(rows)])
    options = {"backends": ["eager"], "profiles": [], "variants": [], "tolerances": {},
               "timing": {"repeats": 20}, "strict_xfail": False, "out": str(path.parent),
               "shard": f"{shard[0]}/{shard[1]}" if shard else None}
    record.save(Record(environment, options, rows), path)
    return path


def test_merge_gives_the_shards_rows_in_shard_order(tmp_path: Path) -> None:
    a = _save(tmp_path / "a.json", [_row("c0"), _row("c1")], (1, 2))
    b = _save(tmp_path / "b.json", [_row("c2", Status.FAIL), _row("c3")], (2, 2), duration_s=4.0)
    merged = merge([b, a], ROW_SETTINGS)  # given in any order
    assert [r.case_id for r in merged.rows] == ["m::c0", "m::c1", "m::c2", "m::c3"]
    assert merged.rows[2].status is Status.FAIL
    assert "shard" not in merged.environment and merged.options["shard"] is None
    assert merged.environment["duration_s"] == 4.0
    assert [m["shard"]["index"] for m in merged.environment["merged"]] == [1, 2]


@pytest.mark.parametrize(("env", "name", "shown"), [
    ({"torch": "2.14.0"}, "torch version", "'2.14.0' against '2.13.0'"),
    ({"torch_tensorrt": "2.13.0"}, "torch_tensorrt version", "'2.13.0' against None"),
    ({"trtcheck": "0.2.0"}, "trtcheck version", "'0.2.0' against '0.1.0'"),
    ({"device": "cuda:1", "device_name": "NVIDIA H200"}, "device kind",
     "'cuda (NVIDIA H200)' against 'cpu'"),
])
def test_merge_refuses_records_from_other_software_or_devices(tmp_path: Path, env: dict[str, str],
                                                             name: str, shown: str) -> None:
    a = _save(tmp_path / "a.json", [_row("c0"), _row("c1")], (1, 2))
    b = _save(tmp_path / "b.json", [_row("c2"), _row("c3")], (2, 2), **env)
    with pytest.raises(RecordError, match=f"they differ in {name}") as err:
        merge([a, b], ROW_SETTINGS)
    assert f"({shown})" in str(err.value)


def test_merge_refuses_other_settings_but_not_another_out_or_device_index(tmp_path: Path) -> None:
    a = _save(tmp_path / "a.json", [_row("c0"), _row("c1")], (1, 2))
    b = _save(tmp_path / "sub" / "b.json", [_row("c2"), _row("c3")], (2, 2), device="cpu")
    assert len(merge([a, b], ROW_SETTINGS).rows) == 4
    rec = record.load(b)
    rec.options["timing"] = {"repeats": 50}
    record.save(rec, b)
    with pytest.raises(RecordError, match="they differ in config key timing"):
        merge([a, b], ROW_SETTINGS)


def test_merge_refuses_overlapping_records(tmp_path: Path) -> None:
    a = _save(tmp_path / "a.json", [_row("c0"), _row("c1")])
    b = _save(tmp_path / "b.json", [_row("c1"), _row("c2")])
    with pytest.raises(RecordError, match=r"overlap: both hold m::c1 on eager"):
        merge([a, b], ROW_SETTINGS)
    with pytest.raises(RecordError, match=r"overlap: both hold m::c0 on eager"):
        merge([a, a], ROW_SETTINGS)  # a whole run given twice, even as one Path object
    one = _save(tmp_path / "one.json", [_row("c0"), _row("c1")], (1, 2))
    with pytest.raises(RecordError, match="both are shard 1/2"):
        merge([one, one], ROW_SETTINGS)
    with pytest.raises(RecordError, match="is a whole run, not a shard"):
        merge([one, b], ROW_SETTINGS)


def test_merge_refuses_shards_of_different_collections(tmp_path: Path) -> None:
    a = _save(tmp_path / "a.json", [_row("c0"), _row("c1")], (1, 2))
    b = _save(tmp_path / "b.json", [_row("c2"), _row("c3")], (2, 2), collected=5)
    with pytest.raises(RecordError, match="shards of different collections"):
        merge([a, b], ROW_SETTINGS)


def test_a_missing_shard_becomes_an_error_row(tmp_path: Path) -> None:
    a = _save(tmp_path / "a.json", [_row("c0")], (1, 3))
    c = _save(tmp_path / "c.json", [_row("c2")], (3, 3))
    merged = merge([a, c], ROW_SETTINGS)
    assert [r.status for r in merged.rows] == [Status.PASS, Status.PASS, Status.ERROR]
    assert merged.rows[-1].message == "shard 2/3 is missing: its cases are not in these reports"


def test_merge_and_report_print_the_verdict_and_why(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Like run: the rows that did not pass, with their message, and the verdict."""
    from trtcheck.cli import main

    a = _save(tmp_path / "a.json", [_row("c0")], (1, 3))
    c = _save(tmp_path / "c.json", [_row("c2")], (3, 3))
    assert main(["merge", str(a), str(c), "--out", str(tmp_path / "m")]) == 1
    out = capsys.readouterr().out
    assert "shard 2/3 is missing: its cases are not in these reports" in out
    assert "total 3: 1 error, 2 pass; 1 fail the run" in out
    assert main(["report", str(tmp_path / "m")]) == 1
    assert "total 3: 1 error, 2 pass; 1 fail the run" in capsys.readouterr().out


def test_merge_reads_schema_1_and_refuses_to_mix_schemas(tmp_path: Path) -> None:
    old = TESTS / "data" / "results-schema1.json"
    assert merge([old], ROW_SETTINGS).rows
    new = _save(tmp_path / "new.json", [_row("zzz")])  # the same trtcheck version, schema 2
    with pytest.raises(RecordError, match="they differ in record schema"):
        merge([old, new], ROW_SETTINGS)


def test_case_durations_add_up_each_cases_stage_times() -> None:
    rec = Record({}, {}, [_row("a", build=1.0, compile=2.0), _row("a", run=0.5), _row("b", build=3.0)])
    assert case_durations(rec) == {"m::a": 3.5, "m::b": 3.0}


@pytest.mark.parametrize("text", ["1", "0/2", "3/2", "a/b", "1/0", ""])
def test_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


def test_workers_per_device() -> None:
    assert workers(("cpu",), None, "command line", isolate=True) == 1
    assert workers(("cpu",), 3, "command line", isolate=True) == 3
    assert workers(("cuda:0", "cuda:1"), None, "command line", isolate=True) == 2
    with pytest.raises(ConfigError, match="one worker per GPU"):
        workers(("cuda:0",), 2, "command line", isolate=True)
    with pytest.raises(ConfigError, match="--no-isolate"):
        workers(("cpu",), 2, "command line", isolate=False)
    with pytest.raises(ConfigError, match="at least 1"):
        workers(("cpu",), 0, "cfg.toml", isolate=True)


def test_a_worker_keeps_to_its_file_and_takes_a_free_file_before_sharing() -> None:
    a, b, c = Path("a.py"), Path("b.py"), Path("c.py")
    schedule = Schedule([a, a, a, b, b, c])
    assert [schedule.take(0), schedule.take(1)] == [0, 3]  # worker 1 starts on b, not on a
    assert [schedule.take(0), schedule.take(1), schedule.take(1)] == [1, 4, 5]
    assert [schedule.take(1), schedule.take(0), schedule.take(0)] == [2, None, None]  # shares a


@pytest.mark.parametrize(("key", "value", "name"), [
    ("nan", "fail", "--nan"),
    ("torch_tensorrt", ["2.12.1"], "--torch-tensorrt"),
    ("dtype_drift", False, "config key dtype_drift"),
    ("engine_cache", True, "--cache"),
    ("strict_xfail", True, "config key strict_xfail"),
])
def test_merge_refuses_shards_whose_row_settings_differ(tmp_path: Path, key: str, value: Any,
                                                        name: str) -> None:
    a = _save(tmp_path / "a.json", [_row("c0"), _row("c1")], (1, 2))
    b = _save(tmp_path / "b.json", [_row("c2"), _row("c3")], (2, 2))
    rec = record.load(b)
    rec.options[key] = value
    record.save(rec, b)
    with pytest.raises(RecordError, match=f"they differ in {name} ") as err:
        merge([a, b], ROW_SETTINGS)
    assert err.value.exit_code == 2
