"""The deploy stage's backend side: a compiled module saved as ``torch_tensorrt.save`` saves it,
then loaded in a fresh process, the loader, that imports torch and Torch-TensorRT and no zoo file.

- :func:`save` runs where the compiled module lives (the lowering host, the tensorrt backend's
  worker): ``torch_tensorrt.save(module, path, output_format=..., arg_inputs=...)`` with the
  inputs the compile was given, or why the release and runtime have no such format here;
- :class:`Loader` is the parent's side of the loader, one child per run and release, started on
  first use and reused across rows (:class:`~trtcheck.backends.lowering.client.LoweringHost`'s
  protocol, another target);
- :data:`HANDLERS` answer the loader's requests, :class:`LoadArtifact` and :class:`CallArtifact`:
  the loader (:mod:`trtcheck.backends.lowering.loader`) imports the release exactly as
  the lowering host does, over the same TensorRT stand-in for ``lowering``, whose serialized
  engines the artifact holds;
- what a compiled row offers the stage is a :class:`~trtcheck.backends.base.Deployable`.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from trtcheck.backends.lowering.client import LoweringHost
from trtcheck.backends.lowering.code import CodeSource
from trtcheck.backends.torch_tensorrt.compat import INPUT_KEYS, torch_tensorrt_inputs
from trtcheck.backends.torch_tensorrt.frames import PACKAGE
from trtcheck.backends.torch_tensorrt.logs import logged

LOADER = "trtcheck.backends.lowering.loader"

# The file each format is saved to, named as Torch-TensorRT's documentation names them.
FILE_NAMES = {"exported_program": "model.ep", "torchscript": "model.ts",
              "aot_inductor": "model.pt2"}

# What a lowering row's artifact holds: a prediction of the saved graph, never of TensorRT's plan.
STANDIN_ENGINES = "the TensorRT stand-in's serialized engines (a prediction, not TensorRT plans)"
TENSORRT_ENGINES = "TensorRT engines"


def cannot_save(ttrt: ModuleType, fmt: str) -> str | None:
    """Why release ``ttrt`` with the runtime it has here writes no ``fmt`` artifact, or None.

    Without Torch-TensorRT's C++ runtime (always over the stand-in) its engines run on the
    Python runtime: ``torchscript`` traces them into an op TorchScript cannot hold ("unsupported
    input type: PyObject"), and ``aot_inductor`` compiles them into C++ that has no such op."""
    features = getattr(getattr(ttrt, "_features", None), "ENABLED_FEATURES", None)
    if fmt != "exported_program" and not getattr(features, "torch_tensorrt_runtime", False):
        return (f"not applicable: the {fmt} format needs Torch-TensorRT's C++ runtime "
                f"(torch.classes.tensorrt.Engine), absent here: Torch-TensorRT {ttrt.__version__}'s "
                "engines run on its Python runtime, which only exported_program saves")
    return None


def save(ttrt: ModuleType, module: torch.nn.Module, path: str, fmt: str,
         call: dict[str, Any]) -> dict[str, Any]:
    """``torch_tensorrt.save`` of a compiled module in ``fmt``, with the inputs the compile was
    given (``call``, as the release's ``dynamo.compile`` took them, as its documentation saves a
    dynamic-shape module) and the release's defaults otherwise: how long it took, the
    artifact's size and what Torch-TensorRT warned meanwhile, or why this release and runtime
    have no ``fmt`` here."""
    reason = cannot_save(ttrt, fmt)
    if reason:
        return {"not_applicable": reason}
    accepted = inspect.signature(ttrt.save).parameters
    inputs = {k: v for k, v in torch_tensorrt_inputs(call, ttrt).items()
              if k in INPUT_KEYS and k in accepted}
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), \
            logged(PACKAGE, logging.WARNING) as warned:
        ttrt.save(module, path, output_format=fmt, **inputs)
    saved: dict[str, Any] = {"save_s": time.perf_counter() - started,
                             "size_bytes": os.path.getsize(path)}
    if warned:
        saved["notes"] = [f"Torch-TensorRT warned: {m}" for m in dict.fromkeys(warned)]
    if fmt == "exported_program" and dynamic_dims(module):  # read back: what the file holds
        saved["dynamic_dims"] = dynamic_dims(torch.export.load(path))
    return saved


def dynamic_dims(program: torch.nn.Module | torch.export.ExportedProgram) -> int:
    """How many dimensions of a graph's inputs are symbolic (dynamic)."""
    graph = program.graph
    return sum(isinstance(size, torch.SymInt)
               for node in graph.nodes if node.op == "placeholder"
               for size in getattr(node.meta.get("val"), "shape", ()))


def load(ttrt: ModuleType, path: str, fmt: str) -> tuple[Callable[..., Any], int | None]:
    """The artifact as its users load it, and its inputs' dynamic dimensions (None where the
    format does not say): ``torch_tensorrt.load`` (``torch.export.load``, the release's Python
    engine ops registered first) for an exported program, ``torch.jit.load`` and
    ``torch._inductor.aoti_load_package`` for the others."""
    if fmt == "torchscript":
        return torch.jit.load(path), None
    if fmt == "aot_inductor":
        return torch._inductor.aoti_load_package(path), None
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            program = ttrt.load(path)
        except ValueError:  # it prints torch.export.load's error and raises its own
            program = None
    if program is None:
        program = torch.export.load(path)  # raises that error itself, with its frames
    return program.module(), dynamic_dims(program)


class Loader:
    """One loader process for one Torch-TensorRT release: started on first use, or ahead by
    :meth:`prestart`, kept across rows, started again if it died."""

    def __init__(self, source: CodeSource, behaving: bool) -> None:
        self.source = source
        self.behaving = behaving
        self._host: LoweringHost | None = None

    def prestart(self) -> None:
        """Start the process without waiting for it: its imports overlap the caller's work."""
        if self._host is None or not self._host.alive():
            if self._host is not None:
                self._host.close()
            self._host = LoweringHost(self.source, target=LOADER, behaving=self.behaving,
                                      wait=False)

    def ready(self) -> LoweringHost:
        """The process, its imports done (what they raised, raised here)."""
        self.prestart()
        assert self._host is not None
        self._host.wait()
        return self._host

    def load(self, path: str, fmt: str) -> dict[str, Any]:
        """Load the artifact there: the seconds loading took (``load_s``) and the loaded
        inputs' ``dynamic_dims`` where the format says."""
        return dict(self.ready().request(LoadArtifact(path, fmt)))

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The loaded artifact's outputs on these inputs."""
        return self.ready().request(CallArtifact(args, kwargs))

    def close(self) -> None:
        if self._host is not None:
            self._host.close()
        self._host = None


_LOADERS: dict[tuple[str, str, bool], Loader] = {}


def loader_for(source: CodeSource, behaving: bool) -> Loader:
    """The loader of one release in this process, shared by the backends that run it (two
    ``lowering`` backends of one release in a process, as in-process runs make, start one)."""
    key = (source.version, str(source.path or ""), behaving)
    if key not in _LOADERS:
        _LOADERS[key] = Loader(source, behaving)
    return _LOADERS[key]


@dataclass(frozen=True)
class LoadArtifact:
    """Load the artifact at ``path``, saved in ``format``, in place of the one before."""

    path: str
    format: str


@dataclass(frozen=True)
class CallArtifact:
    """Call the loaded artifact; the reply is its outputs."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _load(request: LoadArtifact, release: Any, modules: dict[int, Any]) -> dict[str, Any]:
    modules.clear()
    started = time.perf_counter()
    modules[0], dims = load(release.ttrt, request.path, request.format)
    return {"load_s": time.perf_counter() - started,
            **({"dynamic_dims": dims} if dims is not None else {})}


def _call(request: CallArtifact, release: Any, modules: dict[int, Any]) -> Any:
    with torch.no_grad():
        return modules[0](*request.args, **request.kwargs)


# What the loader answers (:func:`trtcheck.backends.lowering.host.serve`).
HANDLERS: dict[type, Any] = {LoadArtifact: _load, CallArtifact: _call}
