"""GitHub workflow commands: one ``::error`` annotation per failing row, and one ``::warning``
per row that passed with NaN or Inf in an output, at the model's declaration."""

from __future__ import annotations

from trtcheck.render.escape import plain
from trtcheck.render.text import headline, warned
from trtcheck.results.record import Record
from trtcheck.results.rows import NO_PROFILE, Row

# GitHub shows at most 10 error annotations per step; the rest are counted in one notice.
MAX_ANNOTATIONS = 10


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: the data escapes, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_annotations(record: Record) -> list[str]:
    """``::error file=…,line=…,title=…::message`` lines for the failing rows, then ``::warning``
    lines for the rows that passed with NaN or Inf, each in record order."""
    failing = record.failing_rows()
    lines = [_annotation(r) for r in failing[:MAX_ANNOTATIONS]]
    if len(failing) > MAX_ANNOTATIONS:
        lines.append(f"::notice title=trtcheck::{len(failing) - MAX_ANNOTATIONS} more failing rows "
                     f"are not annotated (GitHub shows {MAX_ANNOTATIONS} errors per step): they "
                     "are in the job summary and in report.md of the report artifact")
    nonfinite = [r for r in record.rows if warned(r)]
    lines += [_annotation(r, "warning") for r in nonfinite[:MAX_ANNOTATIONS]]
    if len(nonfinite) > MAX_ANNOTATIONS:
        lines.append(f"::notice title=trtcheck::{len(nonfinite) - MAX_ANNOTATIONS} more rows "
                     "passed with NaN or Inf and are not annotated; see report.md")
    return lines


def _annotation(row: Row, level: str = "error") -> str:
    props = {"file": row.source, "line": str(row.line) if row.source and row.line else None,
             "title": plain(f"trtcheck: {row.case_id} {row.backend}"
                            + ("" if row.profile in (NO_PROFILE, "default") else f":{row.profile}"))}
    text = ",".join(f"{k}={escape_property(v)}" for k, v in props.items() if v)
    return f"::{level} {text}::{escape_data(plain(headline(row)))}"
