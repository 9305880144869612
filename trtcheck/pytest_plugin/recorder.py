"""The session's record, kept by the process that writes the reports (the only one, or
pytest-xdist's controller): each row as its report comes in, journalled as ``trtcheck run``
journals it, and at the end the record, in collection order, written through the CLI's own
:func:`trtcheck.cli.common.write` (results.json, junit.xml, report.md, comment.md, report.html).

The record holds the rows the session ran: rows pytest deselected, or did not reach after
``-x`` stopped it, are not in it; an interrupted session's record says so."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from trtcheck.cli import common
from trtcheck.config.options import Options
from trtcheck.errors import OutputError
from trtcheck.execution.run import JOURNAL, environment
from trtcheck.results import record
from trtcheck.results.record import Journal, Record
from trtcheck.results.rows import Analysis, Row
from trtcheck.results.verdict import Judged


class Recorder:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.out: Path = opts.out
        self.rows: list[tuple[int, Row]] = []
        self.analyses: dict[str, Any] = {}
        self.held = contextlib.ExitStack()
        self.journal: Journal | None = None
        self.env: dict[str, Any] = {}
        self.t0 = 0.0
        self.judged: Judged | None = None  # the session's record, judged once
        self.written: list[Path] = []

    def open(self) -> None:
        """Take the report directory (:class:`~trtcheck.errors.UsageError` when it cannot be
        written or another run holds it) and start the journal."""
        common.check_writable(self.out)
        self.held.enter_context(record.locked(self.out))
        self.t0 = time.perf_counter()
        self.env = environment(self.opts)
        self.journal = Journal(self.out / JOURNAL, self.env, self.opts.to_dict())

    def take(self, carried: dict[str, Any]) -> None:
        """One report's row (:func:`trtcheck.pytest_plugin.outcome.carry`); OutputError when
        the journal cannot be written, which stops the session as it stops ``trtcheck run``."""
        row = record.read_row(carried["row"])
        self.rows.append((int(carried["index"]), row))
        items: list[Row | Analysis] = [row]
        if carried.get("analysis") is not None:
            analysis = Analysis(row.case_id, json.loads(carried["analysis"]))
            self.analyses[row.case_id] = analysis.data
            items.append(analysis)
        if self.journal is not None:
            try:
                self.journal.append(items)
            except OutputError as exc:
                self.env["output_error"] = str(exc)
                self.journal = None
                raise

    def finish(self, *, interrupted: bool) -> Record:
        """The session's record, its reports written; OutputError names those that could not
        be."""
        self.env["duration_s"] = round(time.perf_counter() - self.t0, 3)
        if interrupted:
            self.env["interrupted"] = True  # the reports say INTERRUPTED, as the CLI's do
        rec = Record(self.env, self.opts.to_dict(),
                     [row for _, row in sorted(self.rows, key=lambda pair: pair[0])],
                     self.analyses)
        self.judged = Judged.of(rec)
        try:
            self.written = common.write(self.judged, self.out)
        finally:
            self.close()
        return rec

    def close(self) -> None:
        """Close the journal and give the report directory back."""
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        self.held.close()
