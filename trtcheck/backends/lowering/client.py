"""The parent's side of one lowering host (:mod:`trtcheck.backends.lowering.host`): requests
(:mod:`.messages`), the modules it keeps, and what its death says."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable
from typing import IO, Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.lowering.code import CodeSource
from trtcheck.backends.lowering.messages import Call, CompileRequest, Ok, Refused
from trtcheck.errors import Unsupported
from trtcheck.process import Child, Failure

# The host's OpenMP threads sleep when it waits for a request, instead of spinning on the
# worker's cores for a while after each one (libgomp's and Intel's default).
HOST_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}

HOST = "trtcheck.backends.lowering.host"

class HostDied(RuntimeError):
    """The lowering host exited while it held a request."""


class LoweringHost:
    """One lowering host process for one Torch-TensorRT release."""

    def __init__(self, source: CodeSource, target: str = HOST, behaving: bool = False,
                 wait: bool = True) -> None:
        """``target``: the module or script the child runs (its ``main`` serves the requests);
        ``behaving``: over the TensorRT stand-in that builds and runs engines; ``wait`` False:
        return once the child is started, and :meth:`wait` for its imports later."""
        self.source = source
        self.log: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self.child = Child(target, str(source.path or ""), *(["behaving"] if behaving else []),
                           log=self.log,
                           env={**os.environ, **HOST_ENV})
        self.keys = itertools.count()
        self.info: dict[str, Any] = {}
        if wait:
            self.wait()

    def wait(self) -> None:
        """Wait for the child's first reply, how its import went (``info``), once."""
        if self.info:
            return
        try:
            self.info = self._reply()
        except BaseException:
            self.close()
            raise

    def alive(self) -> bool:
        return self.child.alive()

    def request(self, message: Any) -> Any:
        """Send one request and return its payload; raise what the host raised."""
        try:
            self.child.send(message)
        except OSError as exc:
            raise self._died() from exc
        return self._reply()

    def compile(self, request: Callable[..., CompileRequest], *fields: Any,
                structure: pytree.TreeSpec | None = None) -> tuple[Module, Any]:
        """Compile in the host: ``request``, the compile request of the front-end it runs
        (:mod:`.messages`), made with a new key and ``fields``; the module it keeps, and the
        evidence. ``structure``: the output structure the module's flat outputs are rebuilt
        into (None: they come back as they are)."""
        key = next(self.keys)
        return Module(self, key, structure), self.request(request(key, *fields))

    def _reply(self) -> Any:
        try:
            reply: Ok | Refused | Failure = self.child.receive()
        except (EOFError, OSError) as exc:
            raise self._died() from exc
        match reply:
            case Ok(payload):
                return payload
            case Refused(reason):
                raise Unsupported(reason)
        raise reply.exception()

    def _died(self) -> HostDied:
        code = self.child.kill()
        self.log.seek(0)
        tail = " | ".join(line.strip() for line in self.log.read().splitlines()[-3:] if line.strip())
        return HostDied(f"the lowering host for Torch-TensorRT {self.source.version} exited with code "
                        f"{code}" + (f": {tail}" if tail else ""))

    def close(self) -> None:
        self.child.stop(grace=5)
        self.log.close()


class Module:
    """A compiled module kept by the host: a call sends the inputs there, runs it, and copies the
    values the module changed back into the caller's tensors; with a ``structure``, its outputs
    are rebuilt into it, leaf by leaf."""

    def __init__(self, host: LoweringHost, key: int, structure: pytree.TreeSpec | None = None) -> None:
        self.host = host
        self.key = key
        self.structure = structure

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs, after = self.host.request(Call(self.key, args, kwargs))
        for mine, theirs in zip(pytree.tree_leaves((args, kwargs)), pytree.tree_leaves(after),
                                strict=True):
            if (isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor)
                    and mine.shape == theirs.shape and not torch.equal(mine, theirs)):
                mine.copy_(theirs)
        if self.structure is not None:
            leaves = pytree.tree_leaves(outputs)
            if len(leaves) == self.structure.num_leaves:  # else left for the compare to name
                return pytree.tree_unflatten(leaves, self.structure)
        return outputs
