"""What the parent of a case worker (:mod:`trtcheck.execution.isolate`) and the worker
(:mod:`trtcheck.execution.worker`) say to each other, without torch: requests and replies, one
frozen dataclass for each kind, answered in :func:`trtcheck.process.answer`."""

from __future__ import annotations

from dataclasses import dataclass

from trtcheck.config.options import Options
from trtcheck.execution.events import Item
from trtcheck.zoo.cases import Case

Marks = list[tuple[float, str]]  # (time.monotonic(), the part of the process that starts then)


@dataclass(frozen=True)
class Configure:
    """Run the next cases under ``options``. The first sets the device and the memory limit
    (bytes, or None) for the worker's life; a later one changes the backends, profiles or
    timing of the cases after it."""

    options: Options
    memory_limit: int | None


@dataclass(frozen=True)
class RunCase:
    """Run one case: its module built here from its zoo factory (the spec crosses declared)."""

    case: Case


@dataclass(frozen=True)
class StartMarks:
    """Once, before the first case's replies: when each part of the worker's own start began."""

    marks: Marks


@dataclass(frozen=True)
class Started:
    """The worker took the case: the case's clock starts now, not at the worker's own start."""


@dataclass(frozen=True)
class Stage:
    """A stage of the case starts (on ``backend`` at ``profile``, or none)."""

    backend: str
    profile: str | None
    stage: str


@dataclass(frozen=True)
class Waiting:
    """The worker starts (True) or ends (False) waiting for another process's device lock."""

    waiting: bool


@dataclass(frozen=True)
class Produced:
    """One of the case's rows, or its analysis."""

    item: Item


@dataclass(frozen=True)
class Done:
    """The case is over; ``replace``: why the worker must be replaced (it then exits), or None."""

    replace: str | None
