"""The findings of passing rows (:mod:`trtcheck.results.findings`: int64/float64 values narrowed
inside an engine, the stand-in's remarks) as every report shows them, grouped by the
Torch-TensorRT converter that made them. Each renderer escapes with its own escaping."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.results.findings import (
    Finding,
    by_converter,
    count_words,
    findings,
    passing_findings,
)
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.status import Status

TITLE = "Narrowings and remarks on passing rows"
INTRO = ("These rows pass, but an engine narrows some of their int64 or float64 values (exact only "
         "within the range named: ids or sums beyond it come back wrong), or the TensorRT "
         "stand-in chose a result TensorRT leaves open. `--fail-on narrowing` fails the run on a "
         "narrowing.")


def row_name(row: Row) -> str:
    """``case · backend · profile``."""
    return f"{row.case_id} · {row.backend} · {row.profile}"


def groups(record: Record) -> dict[str, list[tuple[Finding, list[Row]]]]:
    """The passing rows' findings by converter, each distinct finding once with its rows."""
    grouped: dict[str, list[tuple[Finding, list[Row]]]] = {}
    for converter, found in by_converter(passing_findings(record.rows)).items():
        by_text: dict[Finding, list[Row]] = {}
        for row, finding in found:
            by_text.setdefault(finding, []).append(row)
        grouped[converter] = list(by_text.items())
    return grouped


def summary(record: Record) -> str:
    """``2 narrowings and 1 remark on passing rows``, or ``""``."""
    return count_words(passing_findings(record.rows))


def lines(record: Record, escape: Callable[[object], str]) -> list[str]:
    """One Markdown list per converter: each narrowing's change and exact range as code, each
    finding's sentence and its rows, escaped with ``escape``."""
    out = []
    for converter, found in groups(record).items():
        out += ["", f"**{escape(converter)}**", ""]
        for finding, rows in found:
            what = ", ".join(filter(None, [_code(finding.change), finding.exact and
                                           f"exact while {_code(finding.exact)}"]))
            out.append(f"- {what + ': ' if what else ''}{escape(finding.text)} — "
                       f"{escape('; '.join(map(row_name, rows)))}")
    return out


def _code(text: str) -> str:
    """``text`` as a Markdown code span (it holds no backtick then), or ``""``."""
    return f"`{text.replace('`', chr(39))}`" if text else ""


def row_lines(row: Row) -> list[str]:
    """A passing row's findings, one line each: ``narrowing: …`` or ``remark: …``."""
    if row.status is not Status.PASS:
        return []
    return [f"{f.kind}: {f.text}" for f in findings(row)]
