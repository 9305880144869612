"""The words every report uses for a ``trtcheck ab`` record: what each side ran, and where its
speed figures are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def side_label(section: Mapping[str, Any] | None, side: str) -> str | None:
    """What a side of an ``ab`` record ran, in the words every report uses: ``v0 (COMMIT)``,
    ``working tree (COMMIT)``, or ``working tree (uncommitted changes on COMMIT)``; None for a
    record not made by ``ab``."""
    entry = ((section or {}).get("sides") or {}).get(side)
    if not entry:
        return None
    ref, commit = entry.get("ref") or "working tree", entry.get("commit") or "unknown commit"
    # records before "dirty" was kept: the working tree's hash was kept only when it was clean
    if entry.get("dirty", ref == "working tree" and entry.get("tree") is None):
        return f"{ref} (uncommitted changes on {commit})"
    return f"{ref} ({commit})"


# Where each report points instead of the first process's speed figures.
SPEED_IN_CHANGES = ("Each row's speedup over eager and latency, for `trtcheck ab`, are its "
                    "figures over every process of each side, under Head against base.")
