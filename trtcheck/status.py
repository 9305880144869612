"""Row statuses, and how they combine into a run's verdict and exit code."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from trtcheck.errors import Exit


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    UNSUPPORTED = "unsupported"
    XFAIL = "xfail"
    XPASS = "xpass"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"
    CRASH = "crash"

    def __str__(self) -> str:
        return self.value


FAILING = frozenset({Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.CRASH})
ERRORS = FAILING - {Status.FAIL}  # the failing statuses that are not a wrong result: JUnit's errors

# Order used for counts and tables: the worst first.
ORDER = (
    Status.CRASH,
    Status.TIMEOUT,
    Status.ERROR,
    Status.FAIL,
    Status.XPASS,
    Status.UNSUPPORTED,
    Status.XFAIL,
    Status.SKIPPED,
    Status.PASS,
)


def is_failure(status: Status, *, strict_xfail: bool) -> bool:
    """Whether a row with this status makes the run exit 1."""
    return status in FAILING or (strict_xfail and status is Status.XPASS)


def apply_xfail(status: Status, message: str, reason: str | None) -> tuple[Status, str]:
    """Turn a row's status into xfail/xpass when the zoo declared an expected failure."""
    if reason is None or status in (Status.SKIPPED,):
        return status, message
    if status is Status.PASS:
        return Status.XPASS, f"expected to fail ({reason}) but passed"
    detail = f"{status.value}: {message}" if message else status.value
    return Status.XFAIL, f"{reason} [{detail}]"


class Verdict(str, Enum):
    """What a whole run amounts to; each verdict has its exit code."""

    PASS = "pass"
    FAIL = "fail"
    EMPTY = "empty"  # nothing was tested: no case selected, or every row skipped
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value

    @property
    def title(self) -> str:
        """How reports headline it."""
        return "NOTHING TESTED" if self is Verdict.EMPTY else self.value.upper()

    @property
    def exit_code(self) -> Exit:
        """The exit code of the same name."""
        return Exit[self.name]


def verdict(statuses: Iterable[Status], *, strict_xfail: bool, interrupted: bool = False,
            allow_empty: bool = False, allow_skipped: bool = False) -> Verdict:
    """The run's verdict: interrupted, else fail when any row fails, else empty when nothing
    was tested (no row, or every row skipped) unless that is allowed, else pass."""
    statuses = list(statuses)
    if interrupted:
        return Verdict.INTERRUPTED
    if any(is_failure(s, strict_xfail=strict_xfail) for s in statuses):
        return Verdict.FAIL
    if not statuses and not allow_empty:
        return Verdict.EMPTY
    if statuses and all(s is Status.SKIPPED for s in statuses) and not allow_skipped:
        return Verdict.EMPTY
    return Verdict.PASS


# ``--fail-on``'s word for failing a ``trtcheck ab`` job on a row whose eager outputs changed.
OUTPUT_CHANGE = "output-change"
# ``--fail-on``'s word for failing a run on a passing row whose values an engine narrows
# (trtcheck.results.findings).
NARROWING = "narrowing"
NO_CASE = "no case was selected (check the paths and -k)"


def nothing_tested(statuses: Iterable[Status]) -> str:
    """The one line that says why a run tested nothing."""
    statuses = list(statuses)
    if not statuses:
        return f"{NO_CASE}; --allow-empty accepts this"
    return (f"all {len(statuses)} rows were skipped (a requested backend is "
            "unavailable here?); --allow-skipped accepts this")
