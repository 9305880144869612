"""``lowering``: Torch-TensorRT's own lowering and partitioning, from its real Python code, run by PyTorch.

The code of the user's Torch-TensorRT release (:mod:`trtcheck.backends.lowering.code`) runs in a
host subprocess (:mod:`trtcheck.backends.lowering.host`) over a stand-in for ``tensorrt``:
``dynamo.compile(dryrun=True)`` applies the release's decompositions, complex rewrite,
truncate_double repair and partitioner, and each TensorRT block runs in PyTorch. This catches
rewrite, partition and dtype-boundary bugs of that
release on any machine, but cannot see TensorRT's kernel numerics: a prediction at the graph level.
Settings go through the same version-aware code as the ``tensorrt`` backend.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import io
import itertools
import os
import subprocess
import sys
import tempfile
import weakref
from functools import cached_property
from multiprocessing.connection import Connection
from typing import IO, Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.backends.lowering.code import CodeSource, CodeUnavailable, locate
from trtcheck.backends.torch_tensorrt.backend import (
    adapt_settings,
    call_arguments,
    check_inputs,
    complex_rewrite,
    drop_unaccepted,
    parse_version,
    path_steps,
    plain_setting,
    program_dtypes,
)
from trtcheck.errors import Unsupported, last_line
from trtcheck.process import receive, send
from trtcheck.results.rows import Evidence, Kind

_INPUT_KEYS = ("arg_inputs", "kwarg_inputs", "inputs")
# The host's OpenMP threads sleep when it waits for a request, instead of spinning on the
# worker's cores for a while after each one (libgomp's and Intel's default).
HOST_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


class _RemoteTraceback(Exception):
    """The lowering host's traceback, chained under the error it raised."""

    def __str__(self) -> str:
        return str(self.args[0])


class HostDied(RuntimeError):
    """The lowering host exited while it held a request."""


def _raised(type_name: str, message: str) -> Exception:
    """The host's exception as a local one: a builtin type keeps its name, others say theirs."""
    kind = getattr(builtins, type_name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except TypeError:  # a builtin whose constructor wants more than a message
            pass
    return RuntimeError(f"{type_name}: {message}")


class LoweringHost:
    """One ``python -m trtcheck.backends.lowering.host`` for one Torch-TensorRT release."""

    def __init__(self, source: CodeSource,
                 entry: tuple[str, ...] = ("-m", "trtcheck.backends.lowering.host")) -> None:
        """``entry``: what ``python`` runs, given the host's four arguments."""
        self.source = source
        self.log: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        to_host_r, to_host_w = os.pipe()
        to_us_r, to_us_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, *entry, str(to_host_r), str(to_us_w), str(os.getpid()),
             str(source.path or "")],
            pass_fds=(to_host_r, to_us_w), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            env={**os.environ, **HOST_ENV},
        )
        os.close(to_host_r)
        os.close(to_us_w)
        self.requests = Connection(to_host_w, readable=False)
        self.replies = Connection(to_us_r, writable=False)
        self.keys = itertools.count()
        self.dropped: list[int] = []
        try:
            self.info: dict[str, Any] = self._reply()
        except BaseException:
            self.close()
            raise

    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, *message: Any) -> Any:
        """Send one request and return its payload; raise what the host raised."""
        try:
            send(self.requests, message)
        except OSError as exc:
            raise self._died() from exc
        return self._reply()

    def _reply(self) -> Any:
        try:
            reply = receive(self.replies)
        except (EOFError, OSError) as exc:
            raise self._died() from exc
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "unsupported":
            raise Unsupported(reply[1])
        _, type_name, message, trace = reply
        raise _raised(type_name, message) from _RemoteTraceback(trace)

    def _died(self) -> HostDied:
        code = self.proc.wait()
        self.log.seek(0)
        tail = " | ".join(line.strip() for line in self.log.read().splitlines()[-3:] if line.strip())
        return HostDied(f"the lowering host for Torch-TensorRT {self.source.version} exited with code "
                        f"{code}" + (f": {tail}" if tail else ""))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.requests.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.replies.close()
        self.log.close()


# One host per release and code directory, shared by every backend instance of this process; a
# host that failed to start is remembered, so that each later case does not pay the import again.
_HOSTS: dict[tuple[str, str], LoweringHost | Exception] = {}


def host_for(source: CodeSource) -> LoweringHost:
    """The running host for ``source``, started on first use (and again if it died)."""
    key = (source.version, str(source.path))
    host = _HOSTS.get(key)
    if isinstance(host, Exception):
        raise RuntimeError(f"the lowering host for Torch-TensorRT {source.version} failed to start: "
                           f"{last_line(host)}") from host
    if host is None or not host.alive():
        if host is not None:
            host.close()
        try:
            _HOSTS[key] = host = LoweringHost(source)
        except Exception as exc:
            _HOSTS[key] = exc
            raise
    return host


@atexit.register
def close_hosts() -> None:
    """Stop every lowering host (also done by the kernel if this process dies on Linux)."""
    while _HOSTS:
        host = _HOSTS.popitem()[1]
        if isinstance(host, LoweringHost):
            host.close()


class Proxy:
    """The compiled module, held by the host: a call sends the inputs there, runs it, and copies
    the values the module changed back into the caller's tensors."""

    def __init__(self, host: LoweringHost, key: int) -> None:
        self.host = host
        self.key = key
        weakref.finalize(self, host.dropped.append, key)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs, after = self.host.request("call", self.key, args, kwargs)
        for mine, theirs in zip(pytree.tree_leaves((args, kwargs)), pytree.tree_leaves(after),
                                strict=True):
            if (isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor)
                    and mine.shape == theirs.shape and not torch.equal(mine, theirs)):
                mine.copy_(theirs)
        return outputs


class LoweringBackend(Backend):
    """Run the user's Torch-TensorRT release's lowering and partitioning; blocks run by PyTorch."""

    name = "lowering"
    kind = Kind.LOWERED
    uses_profiles = True

    def __init__(self, code: str | None = None) -> None:
        self.code = code  # a wheel, an unpacked release, a version; None: installed, else fetched

    @cached_property
    def _source(self) -> tuple[CodeSource | None, str | None]:
        try:
            source = locate(self.code)
        except CodeUnavailable as exc:
            return None, str(exc)
        missing = source.missing()
        if missing:
            return None, (f"Torch-TensorRT {source.version}'s code imports {', '.join(missing)}, not "
                          f"installed here (pip install {' '.join(missing)})")
        return source, None

    @property
    def version(self) -> str | None:
        """The release whose code this backend runs, once found."""
        source, _ = self._source
        return source.version if source else None

    def unavailable_reason(self, device: str) -> str | None:
        _, reason = self._source
        if reason is None and torch.device(device).type == "cuda" and not torch.cuda.is_available():
            reason = f"this torch cannot use {device}"
        return reason

    def compile(self, job: CompileJob) -> Compiled:
        source, reason = self._source
        if source is None:
            raise RuntimeError(reason)
        host = host_for(source)
        installed = str(host.info["version"])
        version, torch_version = parse_version(installed), parse_version(torch.__version__)
        check_inputs(version, installed, job)
        call = call_arguments(version, job.args, job.kwargs, job.device)
        settings, notes = adapt_settings(version, job.profile)
        settings, dropped = drop_unaccepted(settings, host.info["parameters"], version)
        notes = [*([source.note] if source.note else []), *notes, *dropped]

        blob = io.BytesIO()
        torch.export.save(job.program, blob)
        key = next(host.keys)
        done, host.dropped[:] = list(host.dropped), []
        found = host.request("compile", key, blob.getvalue(), call, settings, job.device, done)

        passed = {k: v for k, v in call.items() if k not in _INPUT_KEYS}
        passed.update(settings, dryrun=True)
        dtypes = program_dtypes(job.program)
        # Calls run in the host: timed after eager rather than beside it (see Compiled).
        return Compiled(Proxy(host, key), interleave=False, evidence=Evidence(
            path=path_steps(version, torch_version, settings, dtypes, found["engines"],
                            found["fallbacks"]),
            fallbacks=found["fallbacks"],
            engines=found["engines"],
            boundaries=found["boundaries"],
            notes=notes + found["notes"],
            settings={k: plain_setting(v) for k, v in passed.items()},
            versions={"torch_tensorrt": installed},
            details={"complex_path": (
                complex_rewrite(version, torch_version,
                                bool(settings.get("use_complex_decomposition", True)))
                if any(d.is_complex for d in dtypes) else "no complex tensors")},
        ))
