"""The plain-text summary printed at the end of a CLI run."""

from __future__ import annotations

from tabulate import tabulate

from trtcheck.render.text import (
    KIND_NOTES,
    NONFINITE_NOTE,
    PREDICTION_MARK,
    fallback_text,
    kinds_present,
    n_failing,
    plain,
    shortened,
    status_counts,
    status_text,
    verdict_text,
    warned,
)
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.status import Status, Verdict

MESSAGE_WIDTH = 80


def render_summary(record: Record, *, strict_xfail: bool) -> str:
    """One line per row that did not pass or passed with NaN or Inf, then the counts by
    status and how many fail the run; first, which backend ran instead of the default."""
    shown = [r for r in record.rows if r.status is not Status.PASS or warned(r)]
    rows = [
        [status_text(r) if warned(r) else str(r.status), plain(r.case_id),
         plain(r.backend) + (f" {PREDICTION_MARK}" if r.prediction else ""),
         plain(r.profile), plain(r.stage or ""), _message(r)]
        for r in shown
    ]
    lines = [f"note: {plain(fallback_text(record))}"] if fallback_text(record) else []
    if rows:
        lines += [tabulate(rows, headers=["status", "case", "backend", "profile", "stage", "message"],
                           tablefmt="simple", disable_numparse=True), ""]
    counts = ", ".join(f"{n} {s}" for s, n in status_counts(record))
    failing = n_failing(record, strict_xfail=strict_xfail)
    lines.append(f"total {len(record.rows)}: {counts or 'no rows'}; {failing} fail the run")
    result, why = verdict_text(record, strict_xfail=strict_xfail)
    if result is Verdict.INTERRUPTED:  # the counts alone would read as a pass
        lines.append(f"result: {result.title}: {why}")
    if any(warned(r) for r in record.rows):
        lines.append(NONFINITE_NOTE.replace("`", ""))
    for kind in kinds_present(record):
        lines.append(f"{PREDICTION_MARK} on a row of kind {kind} marks {KIND_NOTES[kind]}")
    return "\n".join(lines)


def _message(row: Row) -> str:
    return shortened(row, plain(row.message), _shorten)


def _shorten(text: str) -> str:
    """The message cut in the middle, so that its end ("… but passed") stays."""
    if len(text) <= MESSAGE_WIDTH:
        return text
    tail = MESSAGE_WIDTH // 3
    return text[:MESSAGE_WIDTH - tail - 1] + "…" + text[-tail:]
