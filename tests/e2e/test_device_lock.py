"""The device lock between processes: an exclusive lock waits for another process that holds
it, and the listener hears that wait."""

from __future__ import annotations

import fcntl
import subprocess
import sys

from trtcheck.measure import device_lock
from trtcheck.measure.device_lock import lock_for, lock_path

HOLD_SHARED = """
import sys, time
from trtcheck.measure.device_lock import lock_for
with lock_for(sys.argv[1]).shared():
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_exclusive_waits_for_another_process_that_is_busy() -> None:
    device = "cuda:97"  # a lock no real run uses
    busy = subprocess.Popen([sys.executable, "-c", HOLD_SHARED, device, "1.0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout is not None and busy.stdout.readline().strip() == "held"
        with open(lock_path(device), "ab") as probe:
            try:  # the other process holds it shared: no exclusive hold now
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                raise AssertionError("exclusive lock taken while another process was busy")
            except BlockingIOError:
                pass
        with lock_for(device).shared(), lock_for(device).exclusive():  # waits, then converts
            # the busy process let go: an exclusive hold of its own is refused now
            assert busy.wait(timeout=10) == 0
    finally:
        busy.wait()


def test_the_listener_hears_a_wait_for_another_process_and_nothing_else() -> None:
    device = "cuda:96"  # a lock no real run uses
    heard: list[bool] = []
    device_lock.listen(heard.append)
    try:
        with lock_for(device).shared(), lock_for(device).exclusive():
            pass
        assert heard == []  # nobody else held it: no wait
        busy = subprocess.Popen([sys.executable, "-c", HOLD_SHARED, device, "0.5"],
                                stdout=subprocess.PIPE, text=True)
        assert busy.stdout is not None and busy.stdout.readline().strip() == "held"
        with lock_for(device).exclusive():
            assert heard == [True, False] and busy.wait(timeout=10) == 0  # it let go first
    finally:
        device_lock.listen(lambda waiting: None)
