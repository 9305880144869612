"""What trtcheck's subprocesses share: pickled messages over pipes, and dying with the parent."""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
from multiprocessing.connection import Connection
from typing import Any


def send(conn: Connection, message: Any) -> None:
    """Pickle by value (tensors included) and send; never torch's shared-memory reductions,
    which do not work between processes that did not fork from each other."""
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def receive(conn: Connection) -> Any:
    return pickle.loads(conn.recv_bytes())


def die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this process when trtcheck dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
