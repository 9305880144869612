"""A row as a pytest item reports it (``pytest --trtcheck``): the one line of a skip or an
expected failure, and the failure text, which names a prediction as one."""

from __future__ import annotations

from trtcheck.render import findings
from trtcheck.render.escape import block, plain
from trtcheck.render.text import KIND_NOTES, PREDICTION_MARK, failure_lines, headline
from trtcheck.results.rows import Row


def reason(row: Row) -> str:
    """``unsupported at compile: …``: the row's status, stage and message on one line."""
    return plain(headline(row))


def prediction_note(row: Row) -> str | None:
    """What a prediction's row is (never a TensorRT measurement), or None for a measurement."""
    return f"{PREDICTION_MARK} this row is {KIND_NOTES[row.kind]}" if row.prediction else None


def failure_text(row: Row) -> str:
    """A failing row's text: its headline, where it failed, the outputs that did not match,
    the traceback of an error, and a prediction's note last, where the eye ends."""
    lines = [reason(row)]
    if row.location:
        lines.append(f"at {plain(row.location)}")
    lines += [plain(line) for line in failure_lines(row)]
    if row.traceback:
        lines += ["", block(row.traceback)]
    note = prediction_note(row)
    if note:
        lines += ["", note]
    return "\n".join(lines)


FINDINGS = "trtcheck findings"  # the report section that lists a passing row's findings


def finding_lines(row: Row) -> list[tuple[str, str]]:
    """A passing row's narrowings and the stand-in's remarks, each ``(kind, sentence)``."""
    return [(kind, plain(text)) for kind, text in
            (line.split(": ", 1) for line in findings.row_lines(row))]
