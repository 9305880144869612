"""A zoo file is isolated from its import on: a crash or a hang at import costs one row."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import REPO, trtcheck
from trtcheck.status import Status
from trtcheck.zoo.collector import Collector, Lost
from trtcheck.zoo.discover import Discovered, zoo_files

FAULTS = REPO / "tests" / "import_faults"  # not under tests/zoos: every zoo there is run whole
TIMEOUT = "4"


# far more than the timeout, so that a hang fails the test rather than blocking it
HANG = 180


def test_the_collector_loses_only_the_file_that_crashes_or_hangs() -> None:
    with Collector(timeout=float(TIMEOUT)) as collector:
        loaded = {f.path.name: collector.load(f) for f in zoo_files([FAULTS])}
    good, hang, segfault = loaded["good.py"], loaded["hang.py"], loaded["segfault.py"]
    assert isinstance(good, Discovered) and [s.name for s in good.specs] == ["twice"]
    assert good.specs[0].factory is None  # the factory stays in the child that imported it
    assert isinstance(segfault, Lost) and segfault.status is Status.CRASH
    assert segfault.message == "crashed importing segfault.py: killed by SIGSEGV"
    assert segfault.location == f"{FAULTS / 'segfault.py'}:4"  # faulthandler's stack
    assert isinstance(hang, Lost) and hang.status is Status.TIMEOUT
    assert hang.message == f"timed out after {TIMEOUT} s importing hang.py"
    assert hang.location == f"{FAULTS / 'hang.py'}:4"


@pytest.mark.slow
@pytest.mark.parametrize("isolate", ["--isolate", "--no-isolate"])
def test_run_gives_one_row_per_file(tmp_path: Path, isolate: str) -> None:
    """Within a 4 s timeout on a busy machine: a fresh worker's start (Python, torch, trtcheck:
    8 s seen) and torch.export's first call are not counted against the file or the case, and a
    temporary directory of its own keeps other trtcheck runs' device locks from holding it up."""
    out = tmp_path / "out"
    proc = trtcheck("run", str(FAULTS), "--backend", "eager", "--timeout", TIMEOUT, isolate,
                    "--out", str(out), env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=HANG)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert sorted((r["case_id"], r["status"], r["stage"]) for r in rows) == [
        ("good::twice[default]", "pass", None),
        ("hang::(collect)", "timeout", "import"),
        ("segfault::(collect)", "crash", "import")]


@pytest.mark.slow
def test_list_gives_one_line_per_file() -> None:
    proc = trtcheck("list", str(FAULTS), "--timeout", TIMEOUT, timeout=HANG)
    assert proc.returncode == 1
    assert proc.stdout.split() == ["good::twice[default]"]
    assert proc.stderr.splitlines() == [
        f"timeout: {FAULTS / 'hang.py'}:4: timed out after {TIMEOUT} s importing hang.py",
        f"crash: {FAULTS / 'segfault.py'}:4: crashed importing segfault.py: killed by SIGSEGV"]


@pytest.mark.slow
def test_analyze_gives_one_row_per_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = trtcheck("analyze", str(FAULTS), "--timeout", TIMEOUT, "--out", str(out), timeout=HANG)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = json.loads((out / "analysis.json").read_text())["rows"]
    assert sorted((r["case_id"], r["status"]) for r in rows) == [
        ("good::twice[default]", "pass"), ("hang::(collect)", "timeout"),
        ("segfault::(collect)", "crash")]


IMPORT_COUNTED = """
import os
from pathlib import Path

import torch

import trtcheck

IMPORTS = Path(__file__).with_name("imports.log")
with IMPORTS.open("a") as log:
    log.write(f"{os.getpid()}\\n")
if IMPORTS.read_text().count("\\n") > 1 and os.environ.get("ZOO_SECOND_IMPORT_FAILS"):
    raise RuntimeError("imported again")


@trtcheck.model()
def crashes(variant):
    if os.environ.get("ZOO_SECOND_IMPORT_FAILS"):
        os._exit(3)
    return torch.nn.Identity(), (torch.ones(2),)


@trtcheck.model()
def same(variant):
    return torch.nn.Identity(), (torch.ones(2),)
"""


@pytest.mark.slow
def test_an_isolated_run_imports_each_zoo_file_once_in_the_collector_turned_worker(
        make_zoo, tmp_path: Path) -> None:
    zoo = make_zoo({"counted.py": IMPORT_COUNTED})
    proc = trtcheck("run", str(zoo), "--backend", "eager", "--out", str(tmp_path / "out"), timeout=HANG)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len((zoo / "imports.log").read_text().split()) == 1  # collected and run in one child


@pytest.mark.slow
def test_a_worker_that_cannot_import_a_collected_file_gives_that_cases_rows(
        make_zoo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    zoo = make_zoo({"counted.py": IMPORT_COUNTED})
    monkeypatch.setenv("ZOO_SECOND_IMPORT_FAILS", "1")  # the first case kills its worker
    out = tmp_path / "out"
    proc = trtcheck("run", str(zoo), "--backend", "eager", "--out", str(out), timeout=HANG)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {r["case_id"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert (rows["counted::crashes[default]"]["status"], rows["counted::crashes[default]"]["stage"]) \
        == ("crash", "build")
    same = rows["counted::same[default]"]  # its fresh worker imports the file again, and fails
    assert (same["status"], same["stage"]) == ("error", "import")
    assert "imported again" in same["message"] and same["location"].startswith(str(zoo))


def test_a_collector_child_gone_before_it_is_handed_on_is_dropped(tmp_path: Path) -> None:
    from trtcheck.config.cascade import resolve
    from trtcheck.core.traits import traits_table
    from trtcheck.execution.isolate import IsolatedExecutor

    opts = resolve((tmp_path,), backends=("eager",))
    executor = IsolatedExecutor(opts, traits_table(opts.backends), tmp_path / "worker.log")
    with executor.collector() as collector:
        collector.load(next(f for f in zoo_files([FAULTS]) if f.path.name == "good.py"))
        assert collector.child is not None
        collector.child.proc.kill()
        collector.child.proc.wait()
        collector.child.alive = lambda: True  # gone between the check and the hand-over
    assert executor.worker is None  # not adopted, and the run goes on: the next case starts one
    executor.close()
