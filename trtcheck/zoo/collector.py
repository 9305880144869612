"""Collect the zoo in a child process: a zoo file that crashes or hangs at import costs one row.

:class:`Collector` (the parent's side) sends each zoo file, :class:`LoadFile`, to a child of
:mod:`trtcheck.process`, which imports it once with :data:`trtcheck.zoo.discover.IMPORTED`
(:func:`serve`) and replies :class:`Importing`, then :class:`Imported` (Discovered or ImportFailure):
the declarations without their factories and dynamic shapes, which stay in the child (a case is
built where it runs). The timeout counts from ``importing``: a fresh child's own start (Python, torch, which
each child imports first, and trtcheck's modules) is not the file's import, however busy the
machine. A file whose import kills the child, or takes longer than the timeout, is :class:`Lost`;
the child is replaced and the next file goes on. The child's output goes to a log, and
``faulthandler`` writes the Python stack there when it crashes or is stopped, so that the row
can point at the zoo file's line.

The child is this module's :func:`main`, or a case worker (:mod:`trtcheck.execution.worker`),
which collects first and is then handed on (``adopt``) to run the cases: their files are
imported already, and torch is imported once.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, NoReturn

from trtcheck.errors import frames
from trtcheck.process import (
    STARTUP_S,
    Child,
    Failure,
    Parent,
    Starter,
    answer,
    ended,
    exit_now,
    freeze_imports,
    send_or_start,
)
from trtcheck.status import Status
from trtcheck.zoo.discover import IMPORTED, Discovered, ImportFailure, ZooFile
from trtcheck.zoo.messages import Imported, Importing, LoadFile

TARGET = "trtcheck.zoo.collector"
_STACK_S = 2.0  # how long a stopped child has to write its stack


@dataclass(frozen=True)
class Lost:
    """A zoo file whose import crashed the collector or ran past the timeout."""

    file: ZooFile
    status: Status  # CRASH or TIMEOUT
    message: str
    location: str  # file:line of the zoo file's frame in the stack, else the file
    output: str  # what the child wrote while importing it (its stack included)


Loaded = Discovered | ImportFailure | Lost


class Collector:
    """Imports zoo files one at a time in a reusable child, each within ``timeout`` seconds.

    By default the child is this module's and writes to a log of the collector's own; given a
    ``target``, ``log`` and ``env``, the child is that module (one that starts with
    :func:`serve`), and ``adopt`` receives it, still running, when collection ends; with a
    ``server``, the child is forked from it where it forks."""

    def __init__(self, timeout: float, *, target: str = TARGET, log: IO[str] | None = None,
                 env: Mapping[str, str] | None = None,
                 adopt: Callable[[Child], None] | None = None,
                 server: Starter | None = None) -> None:
        self.timeout = timeout
        self.target, self.env, self.adopt, self.server = target, env, adopt, server
        self.own_log = log is None
        self.log: IO[str] = log if log is not None else tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="replace")
        self.child: Child | None = None

    def __enter__(self) -> Collector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load(self, file: ZooFile) -> Loaded:
        """The file's declarations, its import failure, or how it was lost."""
        self.log.seek(0, 2)
        start = self.log.tell()
        child = self._send(LoadFile(file.root, file.path))
        try:
            # The file's clock starts when the child starts importing it: a fresh child's own
            # start (Python, torch, trtcheck's modules) is not the file's import.
            started = max(self.timeout, STARTUP_S)
            if not child.poll(started):
                return self._lost(file, start, Status.TIMEOUT, self._stop(child),
                                  f"timed out after {started:g} s starting the process that "
                                  f"imports {file.path.name}")
            child.receive()  # Importing
            if not child.poll(self.timeout):  # poll waits the whole timeout
                return self._lost(file, start, Status.TIMEOUT, self._stop(child),
                                  f"timed out after {self.timeout:g} s importing {file.path.name}")
            reply: Imported | Failure = child.receive()
        except (EOFError, OSError):
            code = child.kill()
            self.child = None
            return self._lost(file, start, Status.CRASH, code, f"crashed importing {file.path.name}")
        if isinstance(reply, Failure):  # trtcheck's own failure in the child, not the file's
            raise reply.exception()
        return reply.found

    def _send(self, request: LoadFile) -> Child:
        self.child = send_or_start(
            self.child, lambda: Child(self.target, log=self.log, env=self.env, server=self.server),
            request)
        return self.child

    def _stop(self, child: Child) -> int:
        """Stop a child that hangs, giving faulthandler a moment to write its stack."""
        child.proc.send_signal(signal.SIGABRT)
        with contextlib.suppress(subprocess.TimeoutExpired):  # still there: killed below
            child.proc.wait(timeout=_STACK_S)
        self.child = None
        return child.kill()

    def _lost(self, file: ZooFile, start: int, status: Status, code: int, what: str) -> Lost:
        self.log.flush()
        self.log.seek(start)
        output = self.log.read()
        if status is Status.CRASH:
            what += f": {ended(code)}"
        mine = [f for f in frames(output) if Path(f.file) == file.path]
        # faulthandler lists the innermost frame first
        location = f"{file.path}:{mine[0].line}" if mine else str(file.path)
        return Lost(file, status, what, location, output)

    def close(self) -> None:
        if self.child is not None:
            if self.adopt is not None and self.child.alive():
                self.adopt(self.child)
            else:
                self.child.stop()
            self.child = None
        if self.own_log:
            self.log.close()


def _declared(found: Discovered | ImportFailure) -> Discovered | ImportFailure:
    """What crosses back to the parent: the declarations without factories and dynamic shapes."""
    if isinstance(found, ImportFailure):
        return found
    return replace(found, specs=tuple(s.declared() for s in found.specs))


def serve(parent: Parent) -> Any:
    """The child's side: answer :class:`LoadFile` requests until another comes, and return that
    one (None when the parent has gone)."""
    faulthandler.enable()  # a crash, or the SIGABRT that stops a hang, writes the stack to the log

    def load(request: LoadFile) -> None:
        parent.send(Importing())  # the parent's clock for the file starts now
        try:
            parent.send(Imported(_declared(IMPORTED.load(ZooFile(request.root, request.path)))))
        except Exception as exc:
            parent.fail(exc)

    return answer(parent, {LoadFile: load})


def main(argv: list[str]) -> NoReturn:
    import torch  # noqa: F401  (before any file's clock starts, as in a worker, which has it)

    freeze_imports()

    serve(Parent(argv))  # this child only loads: any other request ends it
    exit_now()


if __name__ == "__main__":
    main(sys.argv[1:])
