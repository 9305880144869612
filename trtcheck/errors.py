"""Errors: those that stop a whole run carry the exit code the CLI returns for them; those of
one row (:class:`Unsupported`) become its status. Also the one-line forms every report uses."""

from __future__ import annotations

import difflib
import traceback
from collections.abc import Iterable
from pathlib import Path

INTERRUPTED = 130  # the shell's code for a run stopped by SIGINT; trtcheck uses it for SIGTERM too
NOTHING_TESTED = 5  # no case selected, or every row skipped: pytest's "no tests ran"


class TrtcheckError(Exception):
    """Base class: a run-level failure with a one-line message and an exit code."""

    exit_code = 1


class UsageError(TrtcheckError):
    """Bad command line: a path that does not exist, an unknown backend, an unwritable out dir."""

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


class Unsupported(Exception):
    """A known limitation: the row becomes ``unsupported`` with this reason, not ``error``."""


def last_line(exc: BaseException, *, cut: bool = False) -> str:
    """``Type: message`` on one line — what tables show for an exception. With ``cut``, a
    message of several lines (torch.export's, with a graph and advice) gives only its first
    line and says how many follow; the traceback in ``results.json`` keeps them all."""
    lines = [text for line in str(exc).splitlines() if (text := " ".join(line.split()))]
    if not lines:
        return type(exc).__name__
    if cut and len(lines) > 1:
        return f"{type(exc).__name__}: {lines[0]} [{len(lines) - 1} more lines in results.json]"
    return f"{type(exc).__name__}: {' '.join(lines)}"


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
