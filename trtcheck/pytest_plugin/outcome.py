"""A row's status as pytest's outcome, and the row carried on its report.

pass is passed; fail, error, timeout and crash are failed, the failure text trtcheck's message
(a prediction's note last); unsupported and skipped are skipped with the reason, at the
model's line; xfail and xpass are pytest's xfail and xpass (an xpass fails under
``strict_xfail``). The row travels on the report as JSON text (:data:`ATTRIBUTE`): pytest
serializes a report's attributes, so under pytest-xdist the controlling process gets every
worker's rows with their reports."""

from __future__ import annotations

import os
from typing import Any

import pytest

from trtcheck.render.item import FINDINGS, failure_text, finding_lines, prediction_note, reason
from trtcheck.render.text import NO_ENGINE_NOTE
from trtcheck.results.jsontext import dumps
from trtcheck.results.rows import Row
from trtcheck.status import Status, is_failure

ATTRIBUTE = "trtcheck"  # the report's attribute: {"row": JSON, "index": int, "analysis": JSON}
PREDICTION = "prediction"  # the user property that names a prediction, which JUnit XML shows
NO_ENGINE = "no engine"  # the user property of a pass that built no TensorRT engine


def report_row(report: pytest.TestReport, row: Row, *, strict_xfail: bool,
               where: tuple[str | os.PathLike[str], int | None]) -> None:
    """Give the call's ``report`` the outcome of ``row``, whose model is declared ``where``
    (its file, and its line from 0)."""
    status = row.status
    report.longrepr = None
    if status is Status.PASS:
        report.outcome = "passed"
        found = finding_lines(row)
        if found:  # shown by -rP, and kept in the report as its sections are
            report.sections.append((FINDINGS, "\n".join(f"{k}: {t}" for k, t in found)))
    elif is_failure(status, strict_xfail=strict_xfail):
        report.outcome = "failed"
        report.longrepr = ("[XPASS(strict)] " if status is Status.XPASS else "") + failure_text(row)
    elif status in (Status.XFAIL, Status.XPASS):
        report.outcome = "skipped" if status is Status.XFAIL else "passed"
        report.wasxfail = reason(row)  # type: ignore[attr-defined]  # what pytest's xfail sets
    else:  # skipped, unsupported
        report.outcome = "skipped"
        path, line = where
        report.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {reason(row)}")


def properties(row: Row) -> list[tuple[str, str]]:
    """The item's user properties, which JUnit XML shows: a prediction's note, a pass that
    built no TensorRT engine, and a passing row's narrowings and remarks (``trtcheck.narrowing``,
    ``trtcheck.remark``)."""
    note = prediction_note(row)
    return [*([(PREDICTION, note)] if note else []),
            *([(NO_ENGINE, NO_ENGINE_NOTE)] if row.no_engine else []),
            *[(f"trtcheck.{kind}", text) for kind, text in finding_lines(row)]]


def carry(report: pytest.TestReport, row: Row, index: int, analysis: Any) -> None:
    """Put the row on the report, with its item's place in the collection and, on the item
    that ran the case, the case's analysis."""
    setattr(report, ATTRIBUTE, {"row": row.json_line, "index": index,
                                "analysis": None if analysis is None else dumps(analysis)})


def carried(report: pytest.TestReport) -> dict[str, Any] | None:
    """What :func:`carry` put on the report (also after pytest-xdist moved it), or None."""
    return getattr(report, ATTRIBUTE, None)
