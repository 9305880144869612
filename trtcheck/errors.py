"""Errors that stop a whole run. Each carries the exit code the CLI returns for it."""

from __future__ import annotations


class TrtcheckError(Exception):
    """Base class: a run-level failure with a one-line message and an exit code."""

    exit_code = 1


class UsageError(TrtcheckError):
    """Bad command line: a path that does not exist, an unknown backend, an unwritable out dir."""

    exit_code = 2


class ConfigError(TrtcheckError):
    """Bad configuration: unknown keys, invalid values, contradictory settings."""

    exit_code = 2


class RecordError(TrtcheckError):
    """A results record that cannot be read or has an unknown schema."""

    exit_code = 2
