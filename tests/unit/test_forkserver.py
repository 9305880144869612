"""The fork server: children forked from a warm parent speak the process protocol as fresh ones
do, are reaped with their exit codes, and a target the server cannot fork starts afresh."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import pytest

from trtcheck.forkserver import Forked, ForkServer
from trtcheck.process import Child
from trtcheck.zoo.collector import TARGET as COLLECTOR
from trtcheck.zoo.discover import Discovered
from trtcheck.zoo.messages import Imported, Importing, LoadFile

ZOO = """
import torch, trtcheck

@trtcheck.model
def double(variant):
    return torch.nn.Linear(2, 2), (torch.ones(1, 2),)
"""


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    forks = ForkServer(("torch", COLLECTOR))
    yield forks
    forks.close()


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def _load(child: Child, tmp_path: Path) -> object:
    (tmp_path / "m.py").write_text(ZOO)
    child.send(LoadFile(tmp_path, tmp_path / "m.py"))
    assert child.poll(60) and child.receive() == Importing()
    assert child.poll(60)
    return child.receive()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_forked_child_speaks_the_protocol_and_is_reaped_with_its_code(
        server: ForkServer, tmp_path: Path) -> None:
    child = Child(COLLECTOR, server=server)
    assert isinstance(child.proc, Forked) and server.refused is None
    assert _parent_of(child.proc.pid) == server.proc.pid  # forked, not a new interpreter
    assert os.getpgid(child.proc.pid) == child.proc.pid  # a group of its own, for killpg
    loaded = _load(child, tmp_path)
    assert isinstance(loaded, Imported) and isinstance(found := loaded.found, Discovered)
    assert [s.name for s in found.specs] == ["double"]
    child.stop()  # the end of its requests: it exits cleanly, and the server says so
    assert child.proc.poll() == 0

    killed = Child(COLLECTOR, server=server)
    assert killed.kill() == -signal.SIGKILL
    with pytest.raises(subprocess.TimeoutExpired):  # a live one times out as Popen's does
        Child(COLLECTOR, server=server).proc.wait(timeout=0.01)


def test_a_target_the_server_did_not_preload_is_refused_and_says_why(
        server: ForkServer) -> None:
    mine = copy.copy(server)  # the same server, so that the refusal stays on this handle
    r, w = os.pipe()
    try:
        assert mine.start("json", [], (r, w), subprocess.DEVNULL, None) is None
    finally:
        os.close(r)
        os.close(w)
    assert mine.refused == "json is not a module with a main(argv)"
    assert mine.start(COLLECTOR, [], (r, w), subprocess.DEVNULL, None) is None  # from now on


class _Refusing:
    def start(self, target: str, args: Sequence[str], pipes: tuple[int, int],
              log: IO[str] | int, env: Mapping[str, str] | None) -> None:
        return None


def test_a_child_the_server_will_not_fork_starts_a_new_interpreter(tmp_path: Path) -> None:
    child = Child(COLLECTOR, server=_Refusing())
    try:
        assert isinstance(child.proc, subprocess.Popen)
        assert isinstance(_load(child, tmp_path), Imported)
    finally:
        child.stop()
