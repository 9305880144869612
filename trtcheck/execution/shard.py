"""Shards: split a zoo's cases across runners (``--shard I/N``); :mod:`trtcheck.results.merge`
puts their records back together.

A shard is a contiguous run of the collection order, so concatenating the shards in order
gives back the unsharded run's rows in the unsharded order. Shards are balanced by count, or
by each case's recorded duration when a baseline record is given.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from trtcheck.results.record import Record
from trtcheck.zoo.cases import Case


def case_durations(record: Record) -> dict[str, float]:
    """Seconds each case took in a recorded run: the stage times of all its rows."""
    durations: dict[str, float] = {}
    for row in record.rows:
        durations[row.case_id] = durations.get(row.case_id, 0.0) + sum(row.timings.values())
    return durations


def split(cases: Sequence[Case], index: int, count: int,
          durations: Mapping[str, float] | None = None) -> list[Case]:
    """The cases of shard ``index`` (from 1) of ``count``: a contiguous run of ``cases`` holding
    about 1/count of the total weight, each case weighing its duration in ``durations`` (a case
    missing there weighs the median), or 1 without durations."""
    weights = [1.0] * len(cases)
    if durations:
        known = [d for d in (durations.get(c.case_id) for c in cases) if d is not None and d > 0]
        typical = statistics.median(known) if known else 1.0
        weights = [d if (d := durations.get(c.case_id)) is not None and d > 0 else typical
                   for c in cases]
    total = sum(weights)
    chosen, before = [], 0.0
    for case, weight in zip(cases, weights, strict=True):
        # The shard holding the middle of this case's span of the cumulative weight.
        if min(count - 1, int((before + weight / 2) * count / total)) == index - 1:
            chosen.append(case)
        before += weight
    return chosen


def fingerprint(case_ids: Sequence[str]) -> str:
    """A short digest of a collection, so that a merge can tell whether shards saw the same zoo."""
    return hashlib.sha256("\n".join(case_ids).encode()).hexdigest()[:16]


def describe(index: int, count: int, collected: Sequence[Case], chosen: Sequence[Case]) -> dict[str, Any]:
    """What a shard's record says about it: which shard, and of which collection."""
    return {"index": index, "count": count, "cases": len(chosen), "collected": len(collected),
            "fingerprint": fingerprint([c.case_id for c in collected])}
