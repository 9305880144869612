"""The parent's side of one lowering host (:mod:`trtcheck.backends.lowering.host`): requests, the
modules it keeps, and what its death says."""

from __future__ import annotations

import itertools
import os
import tempfile
from typing import IO, Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.lowering.code import CodeSource
from trtcheck.core.frontends import EXPORT
from trtcheck.errors import Unsupported
from trtcheck.process import Child
from trtcheck.zoo.cases import Case

# The host's OpenMP threads sleep when it waits for a request, instead of spinning on the
# worker's cores for a while after each one (libgomp's and Intel's default).
HOST_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}

HOST = "trtcheck.backends.lowering.host"

# The host's reply asking for the worker's state_dict: its build of the module differs from it.
STATE_DIFFERS = {"state": "differs"}

# A case as the worker names it to the host: (zoo root, zoo file, model name, variant).
CaseRef = tuple[str, str, str, str]


def case_ref(case: Case) -> CaseRef:
    """How the host finds the case's factory: its zoo file, under the root it was imported from."""
    return str(case.file.root), str(case.file.path), case.spec.name, case.variant


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

    def request(self, *message: Any) -> Any:
        """Send one request and return its payload; raise what the host raised."""
        try:
            self.child.send(message)
        except OSError as exc:
            raise self._died() from exc
        return self._reply()

    def compile(self, *request: Any, structure: pytree.TreeSpec | None = None,
                kind: str = EXPORT.name) -> tuple[Module, Any]:
        """Compile in the host (``kind``: the request, named by the front-end it runs); the
        module it keeps, and the evidence. ``structure``: the output structure
        the module's flat outputs are rebuilt into (None: they come back as they are)."""
        key = next(self.keys)
        return Module(self, key, structure), self.request(kind, key, *request)

    def _reply(self) -> Any:
        try:
            reply = self.child.receive()
        except (EOFError, OSError) as exc:
            raise self._died() from exc
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "unsupported":
            raise Unsupported(reply[1])
        raise reply[1].exception()

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
        outputs, after = self.host.request("call", self.key, args, kwargs)
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
