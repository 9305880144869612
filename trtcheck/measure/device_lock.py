"""Nothing is timed beside a busy trtcheck process: a lock per device, shared by every process.

Every stage of a case holds the device's lock *shared*; timing and the steady-state memory
measurement hold it *exclusively*. So two workers on one device (CPU workers share its cores)
never time while the other builds, compiles or runs, and neither do two ``trtcheck run``\\ s on one
machine. The locks are ``flock`` locks on files in the temporary directory, released by the
kernel when a process dies. A waiting exclusive holder first takes a turnstile, which new
shared holders pass through, so that a stream of shared holders cannot starve it.

Time spent waiting for another process is not the case's: a listener (:func:`listen`; the case
worker tells its parent) hears when this process starts and stops waiting, and the parent stops
the case's clock meanwhile.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

# Told True when this process starts waiting for a lock another process holds, False once held.
WaitListener = Callable[[bool], None]
_listeners: list[WaitListener] = []


def listen(listener: WaitListener) -> None:
    """Tell ``listener`` whenever this process waits for a device lock (replaces the last one)."""
    _listeners[:] = [listener]


def _take(file: IO[bytes], mode: int) -> None:
    """``flock`` that tells the listener when it has to wait."""
    try:
        fcntl.flock(file, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    for told in _listeners:
        told(True)
    try:
        fcntl.flock(file, mode)
    finally:
        for told in _listeners:
            told(False)


def lock_path(device: str, suffix: str = "") -> Path:
    """The lock file for ``device`` (``cuda`` is ``cuda:0``; every CPU device is one lock)."""
    name = "cpu" if not device.startswith("cuda") else (device if ":" in device else "cuda:0")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return Path(tempfile.gettempdir()) / f"trtcheck-{os.getuid()}-{safe}{suffix}.lock"


class DeviceLock:
    """This process's hold on one device's lock: none, shared or exclusive, nestable."""

    def __init__(self, device: str) -> None:
        self.device = device
        self._files: tuple[IO[bytes], IO[bytes]] | None = None
        self._mode = fcntl.LOCK_UN

    def _open(self) -> tuple[IO[bytes], IO[bytes]]:
        if self._files is None:
            self._files = (open(lock_path(self.device), "ab"),  # noqa: SIM115
                           open(lock_path(self.device, "-turnstile"), "ab"))  # noqa: SIM115
        return self._files

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the lock shared (or keep the exclusive hold this process already has)."""
        if self._mode != fcntl.LOCK_UN:
            yield
            return
        main, turnstile = self._open()
        _take(turnstile, fcntl.LOCK_SH)  # wait behind an exclusive holder that is waiting
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        _take(main, fcntl.LOCK_SH)
        self._mode = fcntl.LOCK_SH
        try:
            yield
        finally:
            fcntl.flock(main, fcntl.LOCK_UN)
            self._mode = fcntl.LOCK_UN

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lock alone, then return to this process's previous hold."""
        previous = self._mode
        if previous == fcntl.LOCK_EX:
            yield
            return
        main, turnstile = self._open()
        # A shared hold is given up before the turnstile: another process holding it shared
        # may be waiting there too, and would otherwise never let go of it.
        fcntl.flock(main, fcntl.LOCK_UN)
        _take(turnstile, fcntl.LOCK_EX)
        try:
            _take(main, fcntl.LOCK_EX)
            self._mode = fcntl.LOCK_EX
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            if previous == fcntl.LOCK_UN:
                fcntl.flock(main, fcntl.LOCK_UN)
            else:
                _take(main, previous)
            self._mode = previous


_LOCKS: dict[str, DeviceLock] = {}


def lock_for(device: str) -> DeviceLock:
    """The process's lock object for ``device``."""
    key = str(lock_path(device))
    if key not in _LOCKS:
        _LOCKS[key] = DeviceLock(device)
    return _LOCKS[key]
