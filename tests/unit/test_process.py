"""The process protocol's helpers that run in the child, called here in-process."""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtcheck.process import Child, Parent, answer, freeze_imports, python_command


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_frozen_imports_are_left_out_and_later_garbage_is_still_collected() -> None:
    kept = _Node()
    before = gc.get_freeze_count()
    freeze_imports()
    try:
        assert gc.get_freeze_count() > before
        gc.collect()
        later = _Node()
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None
        assert kept.me is kept
    finally:
        gc.unfreeze()


GC_STATES = """
import gc, sys
from trtcheck.process import Parent, freeze_imports
importing = gc.isenabled()
freeze_imports()
Parent(sys.argv[1:]).send((importing, gc.isenabled()))
"""


def test_a_child_imports_with_the_collector_off_until_it_freezes_them(tmp_path: Path) -> None:
    """A child's imports run without the garbage collector, which freeze_imports turns on; a
    fresh run (no child: it never calls freeze_imports) starts with it on."""
    script = tmp_path / "target.py"
    script.write_text(GC_STATES)
    child = Child(str(script))
    try:
        assert child.receive() == (False, True)
    finally:
        child.stop()
    assert "gc.disable()" in python_command("t")[2]
    assert "gc.disable()" not in python_command("t", child=False)[2]


@dataclass(frozen=True)
class _Add:
    n: int


@dataclass(frozen=True)
class _Stop:
    pass


@dataclass(frozen=True)
class _Other:
    pass


class _Pipe(Parent):
    """A parent's requests without a pipe (the real one sits on file descriptors)."""

    def __init__(self, *requests: Any) -> None:
        self.requests = list(requests)  # type: ignore[assignment]

    def receive(self) -> Any:
        if not self.requests:
            raise EOFError
        return self.requests.pop(0)  # type: ignore[attr-defined]


def test_one_loop_dispatches_by_type_and_ends_or_hands_a_request_on() -> None:
    """Each request goes to its type's handler; the loop ends when the parent has gone or a
    handler says so (None), and hands back the first request no handler takes, the rest left
    for what serves next (a collector's child becoming a worker)."""
    seen: list[int] = []
    handlers: dict[type, Any] = {_Add: lambda r: seen.append(r.n), _Stop: lambda r: True}
    assert answer(_Pipe(_Add(1), _Add(2)), handlers) is None and seen == [1, 2]
    stopped = _Pipe(_Add(3), _Stop(), _Add(4))
    assert answer(stopped, handlers) is None and seen == [1, 2, 3]
    assert stopped.requests == [_Add(4)]  # type: ignore[comparison-overlap]
    handed = _Pipe(_Add(5), _Other(), _Add(6))
    assert answer(handed, handlers) == _Other() and seen == [1, 2, 3, 5]
    assert handed.requests == [_Add(6)]  # type: ignore[comparison-overlap]
