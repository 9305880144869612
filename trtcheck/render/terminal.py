"""The plain-text summary printed at the end of a CLI run."""

from __future__ import annotations

from tabulate import tabulate

from trtcheck.render.escape import plain
from trtcheck.render.text import (
    KIND_NOTES,
    NONFINITE_NOTE,
    PREDICTION_MARK,
    fallback_text,
    kinds_present,
    no_engine_text,
    shortened,
    status_text,
    warned,
)
from trtcheck.results.verdict import JobVerdict, Judged, regression_words
from trtcheck.status import Status

MESSAGE_WIDTH = 120


def render_summary(judged: Judged, *, failing_only: bool = False) -> str:
    """One line per row that did not pass or passed with NaN or Inf, then the counts by
    status and how many fail the run; first, which backend ran instead of the default.
    ``failing_only`` (``-q``): only the rows that fail the run, and the verdict."""
    record = judged.record
    shown = [r for r in record.rows if (record.fails(r)
                                        if failing_only else r.status is not Status.PASS or warned(r))]
    rows = [
        [status_text(r), plain(r.case_id),
         plain(r.backend) + (f" {PREDICTION_MARK}" if r.prediction else ""),
         plain(r.profile), plain(r.stage or ""), shortened(r, plain(r.message), MESSAGE_WIDTH)]
        for r in shown
    ]
    lines = [f"note: {plain(fallback_text(record))}"] if fallback_text(record) else []
    if rows:
        lines += [tabulate(rows, headers=["status", "case", "backend", "profile", "stage", "message"],
                           tablefmt="simple", disable_numparse=True)]
        if any("…" in row[-1] for row in rows):
            lines.append(f"(messages cut at {MESSAGE_WIDTH} characters: report.md and "
                         "results.json hold them whole)")
        lines.append("")
    counts = ", ".join(f"{n} {s}{no_engine_text(record, s)}" for s, n in record.status_counts())
    failing = len(record.failing_rows())
    headline = render_headline(judged.verdict)
    if failing_only:
        return "\n".join([*lines, headline])
    total = f"total {len(record.rows)}: {counts or 'no rows'}; {failing} fail the run"
    verdict = judged.verdict
    if verdict.gated and verdict.regressions:  # the rows' count alone would read as a pass
        total += (f"; {regression_words(verdict.regressions, verdict.metric)} "
                  f"fail{'s' if verdict.regressions == 1 else ''} it too")
    lines.append(total)
    if any(warned(r) for r in record.rows):
        lines.append(NONFINITE_NOTE.replace("`", ""))
    for kind in kinds_present(record):
        lines.append(f"{PREDICTION_MARK} on a row of kind {kind} marks {KIND_NOTES[kind]}")
    lines.append(headline)  # last, where the eye looks for the exit code
    return "\n".join(lines)


def render_headline(verdict: JobVerdict) -> str:
    """The job's verdict in one line, starting with PASS or FAIL as the exit code says."""
    return plain(f"{verdict.verdict.title}: {verdict.why}")


