"""What Dynamo made of one ``torch.compile`` call: its graph breaks, from Dynamo's own record,
with the reason and the user's ``file:line`` of each."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

_TORCH = os.path.dirname(torch.__file__) + os.sep


@dataclass(frozen=True)
class GraphBreak:
    """One graph break: Dynamo's reason (its first line) and where in the user's code."""

    reason: str
    where: str

    def describe(self) -> str:
        return f"{self.reason} at {self.where}" if self.where else self.reason


@contextmanager
def watch() -> Iterator[list[GraphBreak]]:
    """The graph breaks of the calls made inside, filled in on the way out."""
    from torch._dynamo.utils import graph_break_reasons  # Dynamo's list, cleared by its reset

    before = len(graph_break_reasons)
    found: list[GraphBreak] = []
    try:
        yield found
    finally:
        found.extend(_break(r) for r in graph_break_reasons[before:])


def _break(reason: Any) -> GraphBreak:
    """The break's first line, and its innermost frame outside torch, if any (a break at a
    ``torch.compiler.disable``d function is recorded in torch's wrapper alone)."""
    text = str(getattr(reason, "reason", reason)).strip()
    stack = getattr(reason, "user_stack", None) or []
    user = [f for f in stack if not f.filename.startswith(_TORCH)]
    where = f"{user[-1].filename}:{user[-1].lineno}" if user else ""
    return GraphBreak(text.splitlines()[0] if text else "unknown reason", where)


def summary(breaks: list[GraphBreak]) -> str:
    """``"2 graph breaks: data-dependent branching at x.py:14; ..."``, or ``""`` for none;
    a break met again on a later call is counted once."""
    unique = list(dict.fromkeys(b.describe() for b in breaks))
    if not unique:
        return ""
    return f"{len(unique)} graph break{'s' if len(unique) > 1 else ''}: {'; '.join(unique)}"
