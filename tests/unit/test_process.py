"""The process protocol's helpers that run in the child, called here in-process."""

from __future__ import annotations

import gc
import weakref

from trtcheck.process import freeze_imports


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
