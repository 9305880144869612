"""The job's verdict, decided once: what the exit code will be and why (failing rows, gated
regressions, an interrupted run). The terminal, every report and the Action's step outputs
headline it with :attr:`JobVerdict.headline`, which starts with the exit code's word.

A record is judged once, by :meth:`Judged.of`, where a command, ``trtcheck history`` or the
pytest plugin ends, and the :class:`Judged` record is carried to the reports, the summary, the
step outputs and the exit code: none of them judges it again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trtcheck.errors import Exit
from trtcheck.results.ab import newly_failing
from trtcheck.results.baseline import OUTPUT_CHANGED, read
from trtcheck.results.control import distrust, distrust_words
from trtcheck.results.findings import narrowed_rows
from trtcheck.results.record import Record
from trtcheck.results.rows import RowKey
from trtcheck.status import NARROWING, OUTPUT_CHANGE, Verdict, nothing_tested


@dataclass(frozen=True)
class JobVerdict:
    """A run's verdict with what it rests on: ``failing`` rows of ``rows``, ``regressions``
    flagged against the baseline (or ``ab``'s base) under ``metric``, counted in the verdict
    when ``gated`` (``fail_on`` ``regression``); ``empty`` why nothing was tested; of an ``ab``
    job, ``outputs`` rows whose eager outputs changed, counted when ``outputs_gated``
    (``fail_on`` ``output-change``); ``narrowed`` passing rows whose values an engine narrows,
    counted when ``narrowing_gated`` (``fail_on`` ``narrowing``); ``fail_on`` what the run was
    told to fail on, in words; ``untrusted`` why its timings are not trusted (its control failed:
    :mod:`trtcheck.results.control`), when so, and then no regression is counted."""

    verdict: Verdict
    rows: int
    failing: int
    regressions: int
    gated: bool
    metric: str
    empty: str = ""
    same_tree: bool = False  # an ``ab`` job whose base and head are one tree
    # an ``ab`` job: the failing rows the head broke; the others failed on the base too
    newly_failing: frozenset[RowKey] | None = None
    outputs: int = 0
    outputs_gated: bool = False
    fail_on: str = "failures"
    narrowed: int = 0
    narrowing_gated: bool = False
    untrusted: str = ""

    @property
    def exit_code(self) -> Exit:
        return self.verdict.exit_code

    @property
    def newly(self) -> int | None:
        """How many failing rows an ``ab`` job's head broke; None for another job."""
        return None if self.newly_failing is None else len(self.newly_failing)

    @property
    def why(self) -> str:
        """What the verdict rests on, in one line; an ``ab`` job of one tree says so."""
        return (self._why() + ("; same tree: base and head ran the same code" if self.same_tree
                               else "") + (f"; {self.untrusted}" if self.untrusted else ""))

    def _why(self) -> str:
        fails = (f"{self.failing} of {self.rows} rows fail the run" if self.newly is None else
                 f"{self.newly} newly failing, {self.failing - self.newly} already failing on "
                 "the base")
        regressions = regression_words(self.regressions, self.metric)
        if self.verdict is Verdict.INTERRUPTED:
            return ("the run was stopped before every case finished; the rows cover what "
                    "finished, the rest are skipped: interrupted"
                    + (f"; {fails}" if self.failing else ""))
        if self.verdict is Verdict.EMPTY:
            return self.empty
        if self.verdict is Verdict.FAIL:
            parts = [fails] if self.failing else []
            if self.gated and self.regressions and not self.untrusted:
                parts.append(regressions)
            if self.outputs_gated and self.outputs:
                parts.append(output_words(self.outputs))
            if self.narrowing_gated and self.narrowed:
                parts.append(narrowing_words(self.narrowed))
            return "; ".join(parts)
        why = f"{self.rows} rows, none fails the run"
        loose = [words for n, words, gated in (
            (0 if self.untrusted else self.regressions, regressions, self.gated),
            (self.outputs, output_words(self.outputs), self.outputs_gated),
            (self.narrowed, narrowing_words(self.narrowed), self.narrowing_gated))
            if n and not gated]
        if loose:
            why += f"; {' and '.join(loose)} not gated (--fail-on {self.fail_on})"
        return why

    @property
    def headline(self) -> str:
        """``FAIL: 1 latency regression``: the exit code's word, then why."""
        return f"{self.verdict.title}: {self.why}"


def regression_words(n: int, metric: str) -> str:
    """``1 latency regression``, ``2 speedup regressions``: regressions of the gated figure."""
    return f"{n} {metric} regression{'s' if n != 1 else ''}"


def output_words(n: int) -> str:
    """``1 output change``: rows whose eager outputs changed, head against base."""
    return f"{n} output change{'s' if n != 1 else ''}"


def narrowing_words(n: int) -> str:
    """``1 passing row narrowed inside an engine``: rows ``--fail-on narrowing`` fails."""
    return f"{n} passing row{'s' if n != 1 else ''} narrowed inside an engine"


def fails_on(options: dict[str, Any]) -> tuple[str, ...]:
    """What a record's run was told to fail on (``--fail-on``, repeatable), from its options;
    a record written before it repeated holds one word."""
    given = (options.get("gate") or {}).get("fail_on") or "failures"
    return (given,) if isinstance(given, str) else tuple(given)


def gate_of(options: dict[str, Any]) -> tuple[bool, str]:
    """Whether a record's run failed on regressions, and its metric, from its options."""
    gate = options.get("gate") or {}
    return "regression" in fails_on(options), str(gate.get("metric") or "speedup")


def job_verdict(record: Record, newly: set[RowKey] | None = None) -> JobVerdict:
    """The verdict of ``record`` under the options it holds (``strict_xfail``; ``gate``:
    ``fail_on`` and the metric): the exit code ``trtcheck`` gives for it, and every headline.
    ``newly``: an ``ab`` record's newly failing rows (:func:`in_report_order` gives them to
    :meth:`Judged.of`); None for another record."""
    statuses = [r.status for r in record.rows]
    result = record.verdict()
    gated, metric = gate_of(record.options)
    diff = read(record.baseline)
    regressions = len(diff.regressions) if diff else 0
    if diff:
        metric = diff.metric
    outputs = sum(c.eager == OUTPUT_CHANGED for c in diff.changes) if diff else 0
    outputs_gated = OUTPUT_CHANGE in fails_on(record.options)
    narrowed = len(narrowed_rows(record.rows))
    narrowing_gated = NARROWING in fails_on(record.options)
    untrusted = distrust_words(distrust(record))
    if result is Verdict.PASS and ((gated and regressions and not untrusted)
                                   or (outputs_gated and outputs)
                                   or (narrowing_gated and narrowed)):
        result = Verdict.FAIL
    return JobVerdict(result, len(statuses),
                      len(record.failing_rows()),
                      regressions, gated, metric,
                      nothing_tested(statuses) if result is Verdict.EMPTY else "",
                      bool((record.ab or {}).get("same_tree")),
                      None if newly is None else frozenset(newly), outputs, outputs_gated,
                      " --fail-on ".join(fails_on(record.options)), narrowed, narrowing_gated,
                      untrusted)


@dataclass(frozen=True)
class Judged:
    """A record with its verdict: what the reports, the terminal summary, the step outputs and
    the exit code read, so that each record is judged once."""

    record: Record
    verdict: JobVerdict

    @classmethod
    def of(cls, record: Record) -> Judged:
        """``record`` judged (:func:`job_verdict`), an ``ab`` record in report order
        (:func:`in_report_order`, which gives its newly failing rows)."""
        return cls(record, job_verdict(record, in_report_order(record)))


def in_report_order(record: Record) -> set[RowKey] | None:
    """Put the rows of ``record``, an ``ab`` record, in the order every report gives them: the
    rows the head broke first, then the zoo's case order; its ``ab`` section's rows and its
    changes against the base (where it has them yet) the same, then the rows only the base
    has. A record in that order already (one read back) stays as it is. The rows the head
    broke (:func:`trtcheck.results.ab.newly_failing`); None, and no change, for a record not
    made by ``ab``."""
    newly = newly_failing(record)
    if newly is None:
        return None
    record.rows.sort(key=lambda r: r.key not in newly)
    rank: dict[RowKey, int] = {}
    for key in (*(r.key for r in record.rows),
                *(RowKey(r["case_id"], r["backend"], r["profile"])
                  for r in (record.ab or {}).get("base_rows", []))):
        rank.setdefault(key, len(rank))
    for listed in ((record.ab or {}).get("rows", []), (record.baseline or {}).get("changes", [])):
        listed.sort(key=lambda r: rank.get(RowKey(r["case_id"], r["backend"], r["profile"]),
                                           len(rank)))
    return newly
