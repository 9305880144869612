"""End to end, at scale: start-up without torch, parallel workers and shards give the serial
run's rows. The CLI runs in a subprocess on temp directories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, ZOOS, Ran, trtcheck

# What must not change with workers or shards (timings may; compare takes place in the worker).
SAME = ("case_id", "backend", "profile", "status", "message", "stage", "outputs")
# The serial run's zoo (the fault zoo beside healthy and stateful models: the shared
# ``fault_zoo`` run of tests/e2e/conftest.py) but the hang: a timeout short enough for a test is
# too short for a worker on a busy machine.
RUN = ("run", str(ZOOS), "-k", "(faults or healthy or state) and not hang", "--device", "cpu",
       "--memory-limit", "6144", "--backend", "eager", "--backend", "emulate", "-q")
HANG = "faults/crashes::hang[default]"


def comparable(out: Path) -> list[dict]:
    return [{k: r[k] for k in SAME} for r in json.loads((out / "results.json").read_text())["rows"]
            if r["case_id"] != HANG]


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"], ["run"],
                                  ["run", "--bogus", "x"], ["merge", "--help"],
                                  ["run", "does-not-exist/"], ["run", "fixtures/", "--shard", "3/2"]])
def test_help_version_and_argument_errors_do_not_import_torch(argv: list[str]) -> None:
    probe = ("import sys; from trtcheck.cli import main; code = main(sys.argv[1:]); "
             "print('torch imported' if 'torch' in sys.modules else 'no torch', code)")
    proc = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.stdout.rstrip().splitlines()[-1].startswith("no torch"), proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.fixture
def serial(fault_zoo: Ran) -> Path:
    """The serial run's ``--out``: the fault zoo (crashes, import errors) beside healthy models."""
    assert fault_zoo.returncode == 1, fault_zoo.stdout + fault_zoo.stderr
    return fault_zoo.out


@pytest.mark.slow
def test_two_workers_give_the_serial_rows_in_the_serial_order(serial: Path, tmp_path: Path) -> None:
    proc = trtcheck(*RUN, "--workers", "2", "--out", str(tmp_path), timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    got = comparable(tmp_path)
    assert got == comparable(serial)
    assert {r["status"] for r in got} >= {"pass", "error", "crash"}
    record = json.loads((tmp_path / "results.json").read_text())
    assert record["options"]["workers"] == 2


@pytest.mark.slow
def test_merged_shards_give_exactly_the_unsharded_rows(serial: Path, tmp_path: Path) -> None:
    shards = []
    for i in (1, 2, 3):
        out = tmp_path / f"shard{i}"
        # Balanced by the serial run's stage times: every shard reads the same baseline, so
        # they agree on the split.
        proc = trtcheck(*RUN, "--shard", f"{i}/3", "--baseline", str(serial / "results.json"),
                        "--out", str(out), timeout=900)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        shards.append(out / "results.json")
    records = [json.loads(s.read_text()) for s in shards]
    assert [r["environment"]["shard"]["index"] for r in records] == [1, 2, 3]
    assert all(r["rows"] for r in records)
    merged = tmp_path / "merged"
    proc = trtcheck("merge", *map(str, reversed(shards)), "--out", str(merged), timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the zoo's faults fail the run
    assert comparable(merged) == comparable(serial)
    assert (merged / "comment.md").is_file() and (merged / "junit.xml").is_file()

    proc = trtcheck("merge", str(shards[0]), str(shards[2]), "--out", str(tmp_path / "partial"), timeout=900)
    assert proc.returncode == 1
    assert "shard 2/3 is missing" in (tmp_path / "partial" / "report.md").read_text()


@pytest.mark.slow
def test_merge_refuses_a_record_from_another_torch(serial: Path, tmp_path: Path) -> None:
    other = json.loads((serial / "results.json").read_text())
    other["environment"]["torch"] = "2.99.0"
    other["rows"] = []
    (tmp_path / "other.json").write_text(json.dumps(other))
    proc = trtcheck("merge", str(serial / "results.json"), str(tmp_path / "other.json"),
                    "--out", str(tmp_path / "m"), timeout=900)
    assert proc.returncode == 2
    assert "they differ in torch version ('2.99.0' against" in proc.stderr
    assert not (tmp_path / "m" / "results.json").exists()


def _cuda_devices() -> int:
    import torch

    return torch.cuda.device_count()


@pytest.mark.gpu
@pytest.mark.skipif(_cuda_devices() < 2, reason="needs two CUDA devices")
def test_one_worker_per_gpu_gives_the_rows_of_one_gpu(tmp_path: Path) -> None:
    run = ("run", "fixtures/", "--backend", "eager", "--backend", "emulate", "-q")
    one, two = tmp_path / "one", tmp_path / "two"
    assert trtcheck(*run, "--device", "cuda:0", "--out", str(one)).returncode == 0
    proc = trtcheck(*run, "--device", "cuda:0,cuda:1", "--out", str(two))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [(r["case_id"], r["status"]) for r in comparable(two)] == \
        [(r["case_id"], r["status"]) for r in comparable(one)]
    record = json.loads((two / "results.json").read_text())
    assert record["options"]["workers"] == 2
    assert record["environment"]["devices"] == ["cuda:0", "cuda:1"]
    assert {r["latency"]["backend_device"]["timer"] for r in record["rows"] if r["latency"]} == \
        {"cuda-event"}
    too_many = trtcheck(*run, "--device", "cuda:0", "--workers", "2", "--out", str(tmp_path / "x"))
    assert too_many.returncode == 2 and "one worker per GPU" in too_many.stderr
