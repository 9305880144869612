"""Errors: those that stop a whole run carry the exit code the CLI returns for them; those of
one row (:class:`Unsupported`) become its status. Also the one-line forms every report uses."""

from __future__ import annotations

import difflib
import re
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TypeVar

E = TypeVar("E", bound=BaseException)


class Exit(IntEnum):
    """Every exit code trtcheck returns, declared once, with what it means (``meaning``, for
    ``trtcheck run --help``; docs/reference.md's table and README are tested against it) and
    the Action's ``status`` output for it. A run's verdict of the same name has its code."""

    PASS = 0, "no row fails: pass, xfail, xpass, skipped, unsupported"
    FAIL = 1, ("a row is fail, error, timeout or crash (or xpass under strict_xfail), or, with "
               "--fail-on regression, a row regressed against the baseline, or, with trtcheck ab "
               "and --fail-on output-change, a row's eager outputs changed against the base, or, "
               "with --fail-on narrowing, a passing row's values were narrowed inside an engine")
    USAGE = 2, ("usage or configuration error (also --resume with other options, and merge of "
                "records that cannot be combined)")
    OUTPUT = 3, ("the report directory could not be written (a full disk): the rows that "
                 "finished are in the reports that could be written")
    EMPTY = 5, ("nothing tested: no case selected (--allow-empty accepts it), or every row "
                "skipped (--allow-skipped accepts it); pytest's \"no tests ran\"")
    INTERRUPTED = 130, "interrupted (Ctrl-C, SIGTERM): --resume runs the cases left"

    meaning: str

    def __new__(cls, code: int, meaning: str) -> Exit:
        member = int.__new__(cls, code)
        member._value_ = code
        member.meaning = meaning
        return member

    @property
    def status(self) -> str:
        """The Action's ``status`` output: the verdict's word, or ``error``."""
        return "error" if self in (Exit.USAGE, Exit.OUTPUT) else self.name.lower()


def exit_codes_help() -> str:
    """The exit codes as ``trtcheck run --help`` lists them."""
    import textwrap

    return "\n".join(textwrap.fill(e.meaning, 72, initial_indent=f"  {e.value:<5}",
                                    subsequent_indent=" " * 7, break_on_hyphens=False)
                     for e in Exit)


class TrtcheckError(Exception):
    """Base class: a run-level failure with a one-line message and an exit code."""

    exit_code = Exit.FAIL


class UsageError(TrtcheckError):
    """Bad command line: a path that does not exist or is not a zoo file, an unknown backend, an
    unwritable out dir."""

    exit_code = Exit.USAGE


class ConfigError(TrtcheckError):
    """Bad configuration: unknown keys, invalid values, contradictory settings."""

    exit_code = Exit.USAGE


class NoFallback(TrtcheckError):
    """The default backend cannot run and the configuration allows no other in its place."""

    exit_code = Exit.USAGE


class LockedError(UsageError):
    """Another trtcheck run is writing to the same report directory."""


class RecordError(TrtcheckError):
    """A results record that cannot be read, has an unknown schema, or cannot be merged."""

    exit_code = Exit.USAGE


class OutputError(TrtcheckError):
    """The report directory could not be written (a full disk, a quota): the rows that could
    not be saved are lost to ``--resume``, so the run stops with its own exit code."""

    exit_code = Exit.OUTPUT


class Unsupported(Exception):
    """A known limitation: the row becomes ``unsupported`` with this reason, not ``error``."""


class PredictionGap(Exception):
    """A prediction that could not be made: the TensorRT stand-in lacks a TensorRT API, or its
    own code could not run a layer. The row is ``skipped`` with this reason, never blamed on
    Torch-TensorRT or the model (its message is what is missing or failed; the row says that
    the prediction could not be made). Raised in the lowering host, and wherever Torch-TensorRT
    runs over the stand-in."""

    stage: str | None = None  # the stage it stopped, once a case's stages have seen it

    @property
    def reason(self) -> str:
        """What a row says is missing or failed: the message, unless a subclass says it shorter."""
        return str(self)


class BuildRefused(Exception):
    """TensorRT's builder (or, under ``lowering``, the stand-in's, predicting it) refused a
    network Torch-TensorRT's converters built: the message already says what the builder logged,
    the layer and the graph node it came from, and which converter to report, so a row shows it
    as it is, with no frame of Torch-TensorRT's added."""


# How a message that names the converter to report (a refused build's) ends.
REPORT_CONVERTER = "report that converter to Torch-TensorRT"


# The exceptions of one row that cross from a child process with their type (and the
# ``evidence`` an exception gathered before it was raised, where it has any).
ROW_ERRORS: dict[str, type[Exception]] = {
    cls.__name__: cls for cls in (Unsupported, PredictionGap, BuildRefused)}


def found_in(exc: BaseException, kind: type[E]) -> E | None:
    """The first exception of type ``kind`` in ``exc``'s chain (itself, its causes and the
    exceptions it was raised while handling), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


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
# A frame as a traceback writes it (``File "f.py", line 3, in name`` then its code, indented)
# and as faulthandler does (``File "f.py", line 3 in name``, no code).
_FRAME = re.compile(r'^ *File "(?P<file>[^"]+)", line (?P<line>\d+),? in (?P<name>\S+)[ \t]*$'
                    r'(?:\n {4}(?P<code>\S.*)$)?', re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^\S.*$", re.MULTILINE)


@dataclass(frozen=True)
class Frame:
    """One frame of a formatted traceback or of faulthandler's stack."""

    file: str  # as written
    line: int
    name: str
    code: str = ""  # its source line; empty in faulthandler's stack

    @property
    def deliberate(self) -> bool:
        """Whether it raised on purpose (a ``raise`` statement), not by a slip."""
        return self.code.startswith("raise")

    def path_in(self, package: str) -> str | None:
        """The frame's file from ``package``'s folder on, where it is in that package (and not
        one of trtcheck's own files); else None."""
        parts = Path(self.file).parts
        if package not in parts or self.own:
            return None
        at = len(parts) - 1 - parts[::-1].index(package)
        return "/".join(parts[at:])

    @property
    def own(self) -> bool:
        """Whether the frame is in one of trtcheck's own files."""
        return Path(self.file).is_relative_to(_OWN)

    def within(self, package: str) -> str | None:
        """``path:line in name`` with :meth:`path_in`'s path, where the frame is in ``package``."""
        path = self.path_in(package)
        return f"{path}:{self.line} in {self.name}" if path else None


@dataclass(frozen=True)
class Traceback:
    """One traceback of a formatted exception: its frames, outermost first, and the
    ``Type: message`` line that ends it."""

    frames: list[Frame]
    exception: str


def _frame(match: re.Match[str]) -> Frame:
    return Frame(match["file"], int(match["line"]), match["name"], match["code"] or "")


def frames(text: str) -> list[Frame]:
    """Every frame ``text`` writes (a traceback, several chained ones, a faulthandler stack), in
    the order written."""
    return [_frame(m) for m in _FRAME.finditer(text)]


def tracebacks(trace: str) -> list[Traceback]:
    """Each traceback a formatted exception holds, its causes first."""
    found = []
    for block in trace.split(_TRACEBACK)[1:]:
        # Its frames end at the exception line, the first not indented: frames the message
        # itself quotes (torch's "Original traceback") are not this traceback's.
        ending = _EXCEPTION.search(block)
        found.append(Traceback(frames(block[:ending.start()] if ending else block),
                               ending[0] if ending else ""))
    return found


def innermost(trace: str, package: str) -> tuple[Traceback, Frame] | None:
    """The first traceback of ``trace`` (its causes first) that passes through ``package``, and
    its innermost frame there: where to point a report at that package."""
    for found in tracebacks(trace):
        inside = [f for f in found.frames if f.within(package)]
        if inside:
            return found, inside[-1]
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
