"""Records of successive commits put in order for ``trtcheck history``: by the commit's time,
then by the record's start time; several records of one commit are that commit's repeats.

A record written before ``git_commit_time`` was recorded is placed by its start time. Each
commit knows its records' verdicts, each record judged once as it is placed, and the rows the
gate flagged (:func:`flag`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from trtcheck.results import baseline
from trtcheck.results.record import Record
from trtcheck.results.rows import Row, RowKey
from trtcheck.results.verdict import JobVerdict, Judged

_LAST = datetime.max.replace(tzinfo=timezone.utc)


@dataclass
class Commit:
    """One commit of the history and its records (repeats of one run, in start order)."""

    sha: str | None
    time: str | None  # the commit's time, else its first record's start time
    records: list[Record] = field(default_factory=list)
    verdicts: list[JobVerdict] = field(default_factory=list)  # each record's, judged once
    sources: list[str] = field(default_factory=list)
    regressions: set[RowKey] = field(default_factory=set)  # flagged in any record, by :func:`flag`

    @property
    def label(self) -> str:
        return (self.sha or "unknown commit")[:12]

    def rows(self, key: RowKey) -> list[Row]:
        """The row of ``key`` in each of the commit's records that has it."""
        return [r for rec in self.records for r in rec.rows if r.key == key]


def when(text: Any) -> datetime:
    """An ISO 8601 time as an aware datetime; the end of time where there is none."""
    if not isinstance(text, str):
        return _LAST
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return _LAST
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def order(records: Iterable[tuple[str, Record]]) -> list[Commit]:
    """``(source, record)`` pairs as commits in order: the commit's time, then its first record's
    start time. Records without a commit are each a commit of their own."""
    commits: dict[object, Commit] = {}
    ordered = sorted(records, key=lambda p: when(p[1].environment.get("started")))
    for n, (source, rec) in enumerate(ordered):
        env = rec.environment
        sha = env.get("git_commit")
        commit = commits.setdefault(sha if sha else ("no commit", n),
                                    Commit(str(sha) if sha else None,
                                           env.get("git_commit_time") or env.get("started")))
        commit.records.append(rec)
        commit.verdicts.append(Judged.of(rec).verdict)
        commit.sources.append(source)
    return sorted(commits.values(),
                  key=lambda c: (when(c.time), when(c.records[0].environment.get("started"))))


def row_keys(commits: Iterable[Commit]) -> list[RowKey]:
    """Every row's key over the history, in the order first seen."""
    return list(dict.fromkeys(r.key for c in commits for rec in c.records for r in rec.rows))


class Gated(Protocol):
    """The gate a record's run used: its metric and threshold."""

    metric: str
    threshold: float


def flag(commits: Sequence[Commit], gate_of: Callable[[Record], Gated]) -> None:
    """Fill each commit's ``regressions``: the rows the gate flagged in any of its records, by
    the record's own baseline comparison where it has one, else against the commit before (its
    first record) under the gate ``gate_of`` reads from the record's options."""
    for i, commit in enumerate(commits):
        keys: set[RowKey] = set()
        for rec in commit.records:
            diff = baseline.read(rec.baseline)
            if diff is None and i > 0:
                gate = gate_of(rec)
                diff = baseline.compare(commits[i - 1].records[0], rec, metric=gate.metric,
                                        threshold=gate.threshold)
            if diff is not None:
                keys |= {RowKey(c.case_id, c.backend, c.profile) for c in diff.regressions}
        commit.regressions = keys
