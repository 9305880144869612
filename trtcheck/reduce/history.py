"""A bundle's history across Torch-TensorRT releases: which releases its repro runs on, and the one
line a maintainer reads first (did an older release work, does a newer one fix it)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from trtcheck.backends.lowering.code import (
    KNOWN_RELEASES,
    CodeUnavailable,
    cached_releases,
    locate,
)

# What a release gave the bundle, as ``summary.json``'s ``releases`` says it.
SAME, PASS = "fails the same way", "pass"


def key(version: str) -> tuple[int, ...]:
    """A release's order: ``2.12.1`` before ``2.13.0``; a label that is no version last."""
    found = [int(p) for p in re.findall(r"\d+", version)[:3]]
    return tuple(found) if found else (10**9,)


def candidates(wanted: Iterable[str]) -> list[str]:
    """The releases a history runs, oldest first: ``wanted`` where given, else every release
    trtcheck knows and every one in the cache."""
    names = set(wanted) or {*KNOWN_RELEASES, *(s.version for s in cached_releases())}
    return sorted(names, key=key)


def available(version: str) -> str | None:
    """Why ``version``'s code cannot be had here (fetched as needed; offline, only a cached one
    is), or None where it can."""
    try:
        locate(version)
    except CodeUnavailable as exc:
        return exc.reason
    return None


def line(outcomes: Mapping[str, str]) -> str:
    """One line from each release's outcome (:data:`SAME`, :data:`PASS`, or what it gave
    instead, as a signature describes it): ``fails on 2.12.1, 2.13.0; passes on 2.14.0: fixed
    in 2.14.0``, or ``...: a regression in 2.12`` where an older release passed."""
    order = sorted(outcomes, key=key)
    fails = [v for v in order if outcomes[v] == SAME]
    passes = [v for v in order if outcomes[v] == PASS]
    others = [f"{v} ({outcomes[v]})" for v in order if outcomes[v] not in (SAME, PASS)]
    parts = [f"fails on {', '.join(fails)}" if fails else "",
             f"passes on {', '.join(passes)}" if passes else "",
             f"fails another way on {', '.join(others)}" if others else ""]
    text = "; ".join(p for p in parts if p)
    fixed, regressed = fixed_in(outcomes), regression(outcomes)
    if fixed:
        return f"{text}: fixed in {fixed}"
    if regressed:
        return f"{text}: a regression in {regressed}"
    return text


def fixed_in(outcomes: Mapping[str, str]) -> str | None:
    """The first release newer than every one that fails the same way, where it and every
    release after it pass; else None."""
    order = sorted(outcomes, key=key)
    failing = [i for i, v in enumerate(order) if outcomes[v] == SAME]
    if not failing or failing[-1] + 1 >= len(order):
        return None
    later = order[failing[-1] + 1:]
    return later[0] if all(outcomes[v] == PASS for v in later) else None


def regression(outcomes: Mapping[str, str]) -> str | None:
    """``major.minor`` of the first release that fails the same way, where every release before
    it passes (at least one) and none after it passes; else None."""
    order = sorted(outcomes, key=key)
    failing = [i for i, v in enumerate(order) if outcomes[v] == SAME]
    if not failing or failing[0] == 0:
        return None
    if not all(outcomes[v] == PASS for v in order[:failing[0]]):
        return None
    if any(outcomes[v] == PASS for v in order[failing[0]:]):
        return None
    return ".".join(order[failing[0]].split(".")[:2])
