"""A warm parent for fresh children: one process imports torch, inductor and trtcheck's worker
once, then forks each child :class:`trtcheck.process.Child` asks it for.

``trtcheck ab`` measures in many fresh processes, and most of a fresh process is importing
torch and inductor (seconds each). A forked child starts with those imported and is still fresh
where a measurement needs it to be: its own CUDA context and allocator (the server never touches
CUDA), its own kernel choices, Dynamo's caches empty. The server is a child of trtcheck like any
other (:func:`trtcheck.process.python_command`); it receives, over a Unix socket, each request
with the child's pipes, its log and a status pipe passed as file descriptors, forks, and writes
the child's exit code to the status pipe when it reaps it. The forked child runs in a process
group of its own (in the server's session, which is not the terminal's), its output to the log,
with the environment of the request, and the kernel kills it when the server dies, as the server
is killed when trtcheck dies.

Where forking is unsafe, the server refuses and the caller starts a fresh interpreter instead:
a platform without ``fork`` or descriptor passing (:func:`unavailable`), a server whose imports
touched CUDA (torch then refuses CUDA to a forked child), or a target the server has not imported
(it forks only children whose module, and its ``main(argv)``, it preloaded).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from trtcheck.process import child_env, die_with_parent, exit_now, freeze_imports, python_command

TARGET = "trtcheck.forkserver"
_MESSAGE = 1 << 20
_FDS = 4  # the child's request and reply pipes, its log, its status pipe
_REAP_S = 0.1


def unavailable() -> str | None:
    """Why this platform cannot fork children from a server, or None."""
    if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
        return "this platform has no fork or no file descriptor passing"
    return None


class Forked:
    """A forked child as :class:`subprocess.Popen` shows one to :class:`trtcheck.process.Child`:
    its pid, its exit code once the server has reaped it, signals and waits."""

    def __init__(self, pid: int, status: int) -> None:
        self.pid = pid
        self.status = status  # read end of the pipe the server writes the exit code to
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._read(0.0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._read(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def _read(self, timeout: float | None) -> int | None:
        if self.returncode is None and select.select([self.status], [], [], timeout)[0]:
            data = os.read(self.status, 32)
            os.close(self.status)
            # nothing written: the server died first, and the kernel killed the child with it
            self.returncode = int(data) if data else -signal.SIGKILL
        return self.returncode


class ForkServer:
    """trtcheck's side of one server: start it (it imports ``preload`` meanwhile), ask it for
    children, close it."""

    def __init__(self, preload: Sequence[str], log: Any = subprocess.DEVNULL,
                 env: Mapping[str, str] | None = None) -> None:
        # one datagram a message, in order: a request or an answer never arrives in pieces
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            python_command(TARGET, str(theirs.fileno()), str(os.getpid()), *preload),
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            env=child_env(env), start_new_session=True)
        theirs.close()
        self.socket = ours
        self.lock = threading.Lock()  # one request and its answer at a time
        self.refused: str | None = None  # why the server forks no child, once it has said

    def start(self, target: str, args: Sequence[str], pipes: tuple[int, int], log: Any,
              env: Mapping[str, str] | None) -> Forked | None:
        """A forked child running ``target`` with ``REQUEST_FD REPLY_FD SERVER_PID ARGS``, its
        ends of ``pipes`` and ``log`` (a file or DEVNULL); None when the server refuses or has
        gone (then :attr:`refused` says why)."""
        if self.refused:
            return None
        status_r, status_w = os.pipe()
        with open(os.devnull, "w") if log == subprocess.DEVNULL else contextlib.nullcontext(log) as out:
            fds = [*pipes, out.fileno(), status_w]
            try:
                with self.lock:
                    socket.send_fds(self.socket,
                                    [pickle.dumps((target, list(args), child_env(env)))], fds)
                    answer = pickle.loads(self.socket.recv(_MESSAGE) or pickle.dumps(
                        ("refused", "the fork server has gone")))
            except OSError as exc:
                answer = ("refused", f"the fork server has gone ({exc})")
            finally:
                os.close(status_w)
        if answer[0] != "forked":
            os.close(status_r)
            self.refused = answer[1]
            return None
        return Forked(answer[1], status_r)

    def close(self) -> None:
        """End the server (and, through it, any child it forked that is still there)."""
        self.socket.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2.0)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def main(argv: list[str]) -> NoReturn:
    control = socket.socket(fileno=int(argv[0]))
    die_with_parent(int(argv[1]))
    # torch.cuda.is_available() asks the CUDA driver for a device count unless told to ask NVML,
    # and torch then marks every later fork as unable to use CUDA: importing inductor's compiler
    # asks (measured on an H200 with torch 2.11).
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    for module in argv[2:]:
        importlib.import_module(module)
    refusal = ("its imports touched CUDA, which a forked child then cannot use"
               if _cuda_refused() else None)
    freeze_imports()
    statuses: dict[int, int] = {}  # child pid -> the write end of its status pipe
    while True:
        _reap(statuses)
        if not select.select([control], [], [], _REAP_S)[0]:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, _MESSAGE, _FDS)
        except OSError:
            break
        if not message:  # trtcheck closed its end
            break
        target, args, env = pickle.loads(message)
        why = refusal or (f"{target} is not a module with a main(argv)"
                          if not hasattr(sys.modules.get(target), "main") else None)
        if why or len(fds) != _FDS:
            for fd in fds:
                os.close(fd)
            control.sendall(pickle.dumps(("refused", why or "a request without its pipes")))
            continue
        pid = os.fork()
        if pid == 0:
            _child(control, statuses, target, args, env, fds)
        with contextlib.suppress(OSError):  # the child does the same: whichever comes first
            os.setpgid(pid, pid)  # its own group before trtcheck hears of it, for killpg
        for fd in fds[:3]:
            os.close(fd)
        statuses[pid] = fds[3]
        control.sendall(pickle.dumps(("forked", pid)))
    exit_now()


def _cuda_refused() -> bool:
    """Whether a child forked now would find CUDA refused to it (torch's bad-fork mark), asked
    of a child forked for that alone."""
    pid = os.fork()
    if pid == 0:
        import torch

        os._exit(1 if torch.cuda._is_in_bad_fork() else 0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0


def _reap(statuses: dict[int, int]) -> None:
    """Write the exit code of every child that has ended to its status pipe."""
    while statuses:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = statuses.pop(pid, None)
        if fd is not None:
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):
                os.write(fd, str(code).encode())
            os.close(fd)


def _child(control: socket.socket, statuses: dict[int, int], target: str, args: list[str],
           env: dict[str, str], fds: list[int]) -> NoReturn:
    """The forked child: a process group, standard streams and an environment of its own, then
    the target's ``main`` as a fresh child runs it."""
    try:
        control.close()
        for fd in statuses.values():
            os.close(fd)
        os.close(fds[3])
        os.setpgid(0, 0)
        requests, replies, log = fds[:3]
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.environ.clear()
        os.environ.update(env)
        module = importlib.import_module(target)  # imported by the server already
        module.STARTED = time.monotonic()  # as trtcheck.process.START gives a fresh child
        module.main([str(requests), str(replies), str(os.getppid()), *args])
    except BaseException:
        import traceback

        traceback.print_exc()
        exit_now(1)
    exit_now()


if __name__ == "__main__":
    main(sys.argv[1:])
