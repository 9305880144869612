"""Errors: those that stop a whole run carry the exit code the CLI returns for them; those of
one row (:class:`Unsupported`) become its status. Also the one-line forms every report uses."""

from __future__ import annotations

import difflib
import re
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

INTERRUPTED = 130  # the shell's code for a run stopped by SIGINT; trtcheck uses it for SIGTERM too
NOTHING_TESTED = 5  # no case selected, or every row skipped: pytest's "no tests ran"


class TrtcheckError(Exception):
    """Base class: a run-level failure with a one-line message and an exit code."""

    exit_code = 1


class UsageError(TrtcheckError):
    """Bad command line: a path that does not exist or is not a zoo file, an unknown backend, an
    unwritable out dir."""

    exit_code = 2


class ConfigError(TrtcheckError):
    """Bad configuration: unknown keys, invalid values, contradictory settings."""

    exit_code = 2


class NoFallback(TrtcheckError):
    """The default backend cannot run and the configuration allows no other in its place."""

    exit_code = 2


class LockedError(UsageError):
    """Another trtcheck run is writing to the same report directory."""


class RecordError(TrtcheckError):
    """A results record that cannot be read or has an unknown schema."""

    exit_code = 2


class OutputError(TrtcheckError):
    """The report directory could not be written (a full disk, a quota): the rows that could
    not be saved are lost to ``--resume``, so the run stops with its own exit code."""

    exit_code = 3


class Unsupported(Exception):
    """A known limitation: the row becomes ``unsupported`` with this reason, not ``error``."""


INTERNAL = "internal"  # the stage of a row that trtcheck's own error ended


class InternalError(Exception):
    """A broken invariant of trtcheck's own code: an ``error`` row at stage ``internal`` that
    asks for a report, never blamed on the model."""

    def __str__(self) -> str:
        return f"trtcheck's own error, not the model's (please report it): {super().__str__()}"


def last_line(exc: BaseException, *, cut: bool = False) -> str:
    """``Type: message`` on one line — what tables show for an exception. With ``cut``, a
    message of several lines (torch.export's, with a graph and advice) gives only its first
    line; the row's traceback keeps them all."""
    lines = [text for line in str(exc).splitlines() if (text := " ".join(line.split()))]
    if not lines:
        return type(exc).__name__
    return f"{type(exc).__name__}: {lines[0] if cut else ' '.join(lines)}"


_OWN = Path(__file__).resolve().parent  # trtcheck's own files: never another package's frame
_FRAME = re.compile(r'^ *File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)\n'
                    r'(?: {4}(?P<code>\S.*)\n)?', re.MULTILINE)


@dataclass(frozen=True)
class Frame:
    """A frame of a formatted traceback: ``where`` is its file from the package's folder on."""

    where: str
    name: str
    code: str

    @property
    def deliberate(self) -> bool:
        """Whether the package raised on purpose (a ``raise`` statement), not by a slip."""
        return self.code.startswith("raise")


def raising_frame(trace: str, package: str) -> Frame | None:
    """The frame that raised, in the first traceback of ``trace`` (its causes come first) whose
    raising frame is in ``package``: where to point a bug report at that package."""
    for block in trace.split("Traceback (most recent call last):")[1:]:
        frames = list(_FRAME.finditer(block))
        if not frames:
            continue
        last = frames[-1]
        parts = Path(last["file"]).parts
        if package in parts and not Path(last["file"]).is_relative_to(_OWN):
            at = len(parts) - 1 - parts[::-1].index(package)
            return Frame(f"{'/'.join(parts[at:])}:{last['line']}", last["name"], last["code"] or "")
    return None


def location(exc: BaseException, root: Path) -> str:
    """``file:line`` of the deepest frame inside the zoo root (the user's code), if any."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).is_relative_to(root)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest known word, or ``""``."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
