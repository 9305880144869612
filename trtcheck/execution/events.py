"""What running a case yields and tells, without torch: the parent of isolated workers needs these
and never loads torch itself."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.results.rows import Analysis, Row

Item = Row | Analysis  # a case's analysis, or one of its rows

StageHook = Callable[[str, str | None, str], None]  # hears (backend, profile, stage) as each starts


def no_hook(backend: str, profile: str | None, stage: str) -> None:
    return None
