"""Row statuses and how they combine into an exit code."""

from __future__ import annotations

from enum import Enum


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
