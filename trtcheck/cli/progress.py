"""The progress of a run as it is printed: a bar on a terminal, folded lines under GitHub
Actions, a line per case elsewhere."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import click

from trtcheck.cli import github
from trtcheck.cli.console import echo
from trtcheck.core.traits import NO_BACKEND

if TYPE_CHECKING:
    from trtcheck.execution.run import Collection
    from trtcheck.results.rows import Row
    from trtcheck.zoo.cases import Case

STILL_RUNNING_EVERY_S = 30.0  # CI logs: how often a long stage says it is still running


class Progress:
    """What is printed while cases run. On a terminal, a progress bar with the ETA and the
    running case's stage and elapsed time; under GitHub Actions, one line per finished case,
    each zoo file's lines in a ``::group::`` fold printed when the file completes, and a
    still-running line every 30 s of a long stage; elsewhere one line per finished case."""

    def __init__(self, verbosity: int, collection: Collection) -> None:
        self.verbosity = verbosity
        self.total = len(collection.cases)
        self.done = 0
        self.mode = ("quiet" if verbosity < 0 else "ci" if github.active()
                     else "bar" if sys.stdout.isatty() and self.total else "lines")
        self.in_file = Counter(c.file.rel for c in collection.cases)
        self.left_in_file = Counter(self.in_file)
        self.fold: dict[str, list[str]] = {}
        self.running: tuple[str, str, float] | None = None  # case id, stage text, started
        self.noted = 0.0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.bar: Any = None
        self.ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.mode == "bar":
            self.bar = click.progressbar(length=self.total, label="running", show_eta=True,
                                         show_pos=True, item_show_func=self._running_text)
            self.bar.__enter__()
        if self.mode in ("bar", "ci"):
            self.ticker = threading.Thread(target=self._tick, daemon=True)
            self.ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.ticker is not None:
            self.ticker.join()
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def collection(self, c: Collection) -> None:
        from trtcheck.render.escape import plain

        if self.verbosity >= 0:
            for rel in c.empty_files:
                echo(f"note: {plain(rel)}.py declares no models (helpers belong in "
                      "files whose names start with _)", err=True)
            part = (f" (shard {c.shard['index']}/{c.shard['count']} of {c.shard['collected']})"
                    if c.shard else "")
            echo(f"collected {len(c.cases)} cases{part}"
                  + (f", {len(c.problems)} collection errors" if c.problems else ""))

    def stage(self, case: Case, backend: str, profile: str | None, stage: str) -> None:
        where = "" if backend == NO_BACKEND else f" ({backend}{':' + profile if profile else ''})"
        with self.lock:
            self.running = (case.case_id, f"{stage}{where}", time.monotonic())
            self.noted = time.monotonic()
            if self.verbosity >= 1 and self.mode != "quiet":  # -v: a line per stage
                from trtcheck.render.escape import plain

                self._say(f"    {plain(case.case_id)}: {stage}{where}")

    def case(self, case: Case | None, rows: list[Row]) -> None:
        from trtcheck.render.escape import plain

        if self.mode == "quiet":
            return
        with self.lock:
            if case is None:
                for row in rows:
                    where = plain(row.location or row.file)
                    self._say(f"{str(row.status).upper()} {where}: {plain(row.message)}")
                return
            self.done += 1
            self.running = None
            parts = " ".join(f"{r.backend}{'' if r.profile == '-' else ':' + r.profile}="
                             f"{r.status}" for r in rows)
            lines = [f"[{self.done}/{self.total}] {plain(case.case_id)}  {parts}"]
            if self.verbosity >= 1:
                lines += [f"    {r.backend}: {plain(r.message)}" for r in rows if r.message]
            if self.mode == "bar":
                self.bar.update(1)
            elif self.mode == "lines":
                for line in lines:
                    echo(line)
            else:
                self._fold(case.file.rel, lines)

    def _fold(self, rel: str, lines: list[str]) -> None:
        """CI: keep a file's lines until its last case finishes, then print them in one fold."""
        from trtcheck.render.escape import plain

        self.fold.setdefault(rel, []).extend(lines)
        self.left_in_file[rel] -= 1
        if self.left_in_file[rel] == 0:
            echo(f"::group::{plain(rel)}.py ({self.in_file[rel]} cases)")
            for line in self.fold.pop(rel):
                echo(line)
            echo("::endgroup::")

    def _say(self, line: str) -> None:
        echo(f"\r\x1b[K{line}" if self.mode == "bar" else line)

    def _running_text(self, _: object) -> str:
        from trtcheck.render.escape import plain

        if self.running is None:
            return ""
        case_id, stage, started = self.running
        return f"{plain(case_id)}: {stage} {time.monotonic() - started:.0f}s"

    def _tick(self) -> None:
        while not self.stop.wait(1.0):
            with self.lock:
                if self.mode == "bar":
                    self.bar.render_progress()
                elif self.running and time.monotonic() - self.noted >= STILL_RUNNING_EVERY_S:
                    self.noted = time.monotonic()
                    echo(f"still running: {self._running_text(None)}")
