"""``trtcheck diff``'s judgement: a head record's changes against a base record, by the rule
that fits the two, without running anything."""

from __future__ import annotations

import dataclasses
from typing import Any

from trtcheck.results import ab, baseline
from trtcheck.results.record import Record


def judged(before: Record, head: Record | None, gate: Any) -> Record:
    """``head`` (None: ``before``'s own head side, ``before`` an ab record) with its changes against
    ``before`` and ``gate`` (a :class:`~trtcheck.config.options.Gate`) in its options, which
    its verdict reads. Two ab records are judged by ab's rule over processes (the head side
    of each), and so is one alone; two records of ``trtcheck run`` by the weaker rule over
    runs, as ``--baseline`` does."""
    rec = head if head is not None else before
    if before.ab is not None and rec.ab is not None:
        diff = ab.rejudge(before, head, metric=gate.metric, threshold=gate.threshold)
    else:
        diff = baseline.compare(before, rec, metric=gate.metric, threshold=gate.threshold)
    rec.baseline = diff.to_dict()
    rec.options = {**rec.options, "gate": dataclasses.asdict(gate)}
    return rec
