"""One process protocol for every child trtcheck starts: the case worker, the lowering host and
whatever else needs a process of its own (a crash or a hang there costs one row, not the run).

:class:`Child` starts ``python -c CHILD_START TARGET REQUEST_FD REPLY_FD PARENT_PID ARGS...``, where
``TARGET`` is a module name or a script path. ``START`` removes the current directory from
``sys.path`` first (what ``python -P`` does, on every Python), so that a folder named
``trtcheck/`` there, such as ``--out trtcheck`` or the parent of a clone, cannot shadow the
installed package. The child runs in a session of its own (a Ctrl-C on the terminal reaches
trtcheck, which decides) and asks the kernel to kill it when trtcheck dies.

A child's environment is trtcheck's without :data:`WORKFLOW_VARIABLES` (:func:`child_env`): the
zoo's code runs there, and must not find the files through which a GitHub Actions step steers
the steps after it, nor the runner's tokens.

Messages are small frozen dataclasses, one type for each kind of request and reply, pickled by
value over two pipes, so that whatever the child prints cannot corrupt them. Their classes live
in a module no child runs as ``__main__`` (each protocol's ``messages``): pickle names a class
by its module. Every child answers
its requests in one loop, :func:`answer`, which hands each request to the handler of its type. A
child that fails sends a :class:`Failure`: one error format for every child, turned back into an
exception by :meth:`Failure.exception`.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import gc
import os
import pickle
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import IO, Any, NoReturn, Protocol

from trtcheck.errors import ROW_ERRORS

# How long a fresh child may take to start before its first piece of work (Python, torch and
# trtcheck's modules on a busy machine), at least: that time is never counted against a zoo
# file's import or a case, whose timeouts start when the child takes them.
STARTUP_S = 300.0

# The target finds ``STARTED`` among its globals: the time (``time.monotonic``, one clock for
# every process of the machine) its interpreter began to run Python, before any import.
START = ("import runpy, sys, time; started = {'STARTED': time.monotonic()}; "
         "target = sys.argv.pop(1); del sys.path[0]; "
         "runpy.run_path(target, started, '__main__') if target.endswith('.py') else "
         "runpy.run_module(target, started, '__main__', alter_sys=True)")
# A child's imports (torch, inductor, a Torch-TensorRT release) make hundreds of thousands of
# objects and no garbage, yet the garbage collector walks them again and again as they pile up:
# a sixth of the imports' CPU time (3.6 s against 3.0 s for torch, dynamo, inductor's code cache
# and torch.export). A child imports with it off; :func:`freeze_imports` turns it back on.
CHILD_START = "import gc; gc.disable(); " + START


# The runner's files that later steps read (environment variables, PATH entries, outputs, the
# job summary, an action's saved state) and its tokens: never in the environment of a process
# that runs the zoo's code. trtcheck itself writes only $GITHUB_OUTPUT (cli/github.py).
WORKFLOW_VARIABLES = frozenset({
    "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE",
    "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_ENTERPRISE_TOKEN",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL", "ACTIONS_RESULTS_URL", "ACTIONS_CACHE_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
})


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (this process's environment when None) without :data:`WORKFLOW_VARIABLES`."""
    return {k: v for k, v in (os.environ if env is None else env).items()
            if k not in WORKFLOW_VARIABLES}


def python_command(target: str, *args: str, child: bool = True) -> list[str]:
    """This Python running ``target`` (a module name or a script path) with ``args``, the
    current directory off ``sys.path``: for every trtcheck process, a child or (``child``
    False) a fresh run. A child's target calls :func:`freeze_imports` once its imports are done:
    until then its garbage collector is off (:data:`CHILD_START`)."""
    return [sys.executable, "-c", CHILD_START if child else START, target, *args]


def send(conn: Connection, message: Any) -> None:
    """Pickle by value (tensors included) and send; never torch's shared-memory reductions,
    which do not work between processes that did not fork from each other."""
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def receive(conn: Connection) -> Any:
    return pickle.loads(conn.recv_bytes())


class RemoteTraceback(Exception):
    """A child's traceback, chained under the exception it raised."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Failure:
    """An exception raised in a child, as it crosses the pipe."""

    type: str
    message: str
    traceback: str
    evidence: Any = None  # what the exception gathered before it was raised (its ``evidence``)

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        return cls(type(exc).__name__, str(exc), "".join(traceback.format_exception(exc)),
                   getattr(exc, "evidence", None))

    def exception(self) -> Exception:
        """The child's exception as a local one: a builtin type and a row's own error
        (:data:`trtcheck.errors.ROW_ERRORS`) keep their type, others say theirs; the child's
        traceback is chained under it, and its evidence is its ``evidence``."""
        kind = getattr(builtins, self.type, None) or ROW_ERRORS.get(self.type)
        exc: Exception | None = None
        if isinstance(kind, type) and issubclass(kind, Exception):
            with contextlib.suppress(TypeError):  # a builtin whose constructor wants more
                exc = kind(self.message)
        exc = exc or RuntimeError(f"{self.type}: {self.message}")
        exc.__cause__ = RemoteTraceback(self.traceback)
        if self.evidence is not None:
            exc.evidence = self.evidence  # type: ignore[attr-defined]
        return exc


def send_or_start(child: Child | None, start: Callable[[], Child], message: Any) -> Child:
    """``message`` sent to ``child`` while it is there, else to a new child from ``start``; the
    child that took it. A reusable child (the zoo collector, the case worker) is replaced so."""
    if child is not None:
        if child.alive():
            try:
                child.send(message)
                return child
            except OSError:  # it went meanwhile
                pass
        child.kill()
    fresh = start()
    fresh.send(message)
    return fresh


class Proc(Protocol):
    """A child process as :class:`subprocess.Popen` shows it, or a forked one
    (:class:`trtcheck.forkserver.Forked`)."""

    pid: int

    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...


class Starter(Protocol):
    """What forks children from a warm parent (:class:`trtcheck.forkserver.ForkServer`):
    None when it will not, and the child then starts afresh."""

    def start(self, target: str, args: Sequence[str], pipes: tuple[int, int],
              log: IO[str] | int, env: Mapping[str, str] | None) -> Proc | None: ...


class Child:
    """The parent's side of one child process: a fresh interpreter, or one forked by
    ``server`` when it is given and forks."""

    def __init__(self, target: str, *args: str, log: IO[str] | int = subprocess.DEVNULL,
                 env: Mapping[str, str] | None = None, server: Starter | None = None) -> None:
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        forked = server.start(target, args, (to_child_r, to_parent_w), log, env) if server else None
        self.proc: Proc = forked or subprocess.Popen(
            python_command(target, str(to_child_r), str(to_parent_w), str(os.getpid()), *args),
            pass_fds=(to_child_r, to_parent_w), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            env=child_env(env), start_new_session=True,
        )
        os.close(to_child_r)
        os.close(to_parent_w)
        self.requests = Connection(to_child_w, readable=False)
        self.replies = Connection(to_parent_r, writable=False)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: Any) -> None:
        """Send one message; OSError when the child has gone."""
        send(self.requests, message)

    def poll(self, timeout: float) -> bool:
        """Whether a message (or the child's end) is ready within ``timeout`` seconds."""
        return self.replies.poll(timeout)

    def receive(self) -> Any:
        """The next message; EOFError or OSError when the child has gone."""
        return receive(self.replies)

    def kill(self) -> int:
        """Kill the child and everything it started; its exit code."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait()
        self.requests.close()
        self.replies.close()
        return code

    def stop(self, grace: float = 2.0) -> None:
        """Ask for a clean exit (the end of its requests); kill it if that does not come."""
        with contextlib.suppress(OSError):
            self.requests.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace)
        self.kill()


def ended(returncode: int | None) -> str:
    """How a child ended, in words: ``killed by SIGSEGV``, ``exited with code 3``."""
    if returncode is not None and returncode < 0:
        sig = signal.Signals(-returncode).name
        why = (" (likely out of memory: the kernel's OOM killer sends SIGKILL)"
               if sig == "SIGKILL" else "")
        return f"killed by {sig}{why}"
    return f"exited with code {returncode}"


class Parent:
    """The child's side: its two pipes, from the arguments :class:`Child` started it with."""

    def __init__(self, argv: list[str]) -> None:
        """``argv``: ``REQUEST_FD REPLY_FD PARENT_PID ARGS...``; ``args`` keeps the rest."""
        die_with_parent(int(argv[2]))
        self.requests = Connection(int(argv[0]), writable=False)
        self.replies = Connection(int(argv[1]), readable=False)
        self.args = argv[3:]

    def receive(self) -> Any:
        """The next request; EOFError when the parent has closed its end."""
        return receive(self.requests)

    def send(self, message: Any) -> None:
        send(self.replies, message)

    def fail(self, exc: BaseException) -> None:
        """Tell the parent about an exception, in the one error format."""
        send(self.replies, Failure.of(exc))


# A child's answer to one type of request: it sends its replies itself (none, one or a stream),
# and returns True when the child must end after it (a worker whose memory did not come back).
Handler = Callable[[Any], bool | None]


def answer(parent: Parent, handlers: Mapping[type, Handler]) -> Any:
    """The one request loop of every child: each request goes to the handler of its type, until
    the parent has gone or a handler ends the child (None), or a request comes that no handler
    takes, which is returned for what serves next (a zoo collector's child becoming a worker)."""
    while True:
        try:
            request = parent.receive()
        except EOFError:
            return None
        handle = handlers.get(type(request))
        if handle is None:
            return request
        if handle(request):
            return None


def freeze_imports() -> None:
    """Leave everything imported so far (torch, a Torch-TensorRT release, trtcheck's modules: some
    380,000 objects) out of the garbage collector's later passes: a full collection, which
    Torch-TensorRT asks for after each engine and Python starts as objects pile up, then takes
    milliseconds instead of a third of a second. Those objects live as long as the child does.
    The collector, off while a child imports (:data:`CHILD_START`), is on from here."""
    gc.freeze()
    gc.enable()


def exit_now(code: int = 0) -> NoReturn:
    """End a child without Python's shutdown, its output flushed first: with torch loaded the
    shutdown takes a second or more (torch.export, inductor, a Torch-TensorRT release), which
    the parent waits out in :meth:`Child.stop` on every run. A child holds nothing else to
    flush: what it has to say went over its pipe."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this process when trtcheck dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
