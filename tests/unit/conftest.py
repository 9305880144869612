from __future__ import annotations

import multiprocessing.util
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent.parent
# Where a call that starts a process may come from without being the test's: the standard library
# between the call and whoever asked for it.
STDLIB = Path(os.__file__).resolve().parent


def _asker() -> Path:
    """The file of the first frame outside the standard library and this file: who asked for
    the process."""
    frame = sys._getframe(2)
    while frame is not None:
        path = Path(frame.f_code.co_filename).resolve()
        if path != Path(__file__).resolve() and STDLIB not in path.parents:
            return path
        frame = frame.f_back
    return Path(__file__)


@pytest.fixture(autouse=True)
def no_process(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """A unit test starts no process itself (the CLI, a script, git, a tool): such a test belongs
    in tests/e2e. What trtcheck or torch starts within an in-process call (the zoo collector,
    the lowering host, inductor's compile workers) is part of the call."""

    def guard(original: Callable[..., Any]) -> Callable[..., Any]:
        def start(*args: Any, **kwargs: Any) -> Any:
            asker = _asker()
            if TESTS in asker.parents:
                raise AssertionError(f"{request.node.nodeid} starts a process ({asker.name}): "
                                     "it belongs in tests/e2e")
            return original(*args, **kwargs)
        return start

    monkeypatch.setattr(subprocess.Popen, "_execute_child", guard(subprocess.Popen._execute_child))
    for name in ("fork", "posix_spawn", "posix_spawnp", "system"):
        monkeypatch.setattr(os, name, guard(getattr(os, name)))
    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds",
                        guard(multiprocessing.util.spawnv_passfds))
    yield
