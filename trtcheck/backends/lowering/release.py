"""A Torch-TensorRT release loaded in the lowering host, and what both compile levels share.

:func:`load` imports the release's real Python code over a ``tensorrt`` stand-in and the CUDA
shims; :class:`Release` runs its ``dynamo.compile`` as a real compile goes (the early return
dryrun skips), and cites the release's own lines (:class:`Sources`) for what trtcheck mirrors. The
two levels built on it are :mod:`.dryrun` (the graph level) and :mod:`.converted` (the converters
and engine, through the behaving stand-in); :mod:`.host` serves them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import inspect
import io
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from trtcheck.backends.lowering import standin as ttrt_standin
from trtcheck.backends.lowering import trt as behaving_standin
from trtcheck.backends.lowering.code import compile_bytecode
from trtcheck.backends.torch_tensorrt.compat import torch_tensorrt_inputs

_BACKENDS = "torch_tensorrt.dynamo.backend.backends"


class Rejected(Exception):
    """What real Torch-TensorRT would refuse and dryrun lets through: the row is ``unsupported``."""


class Sources:
    """The release's source text, to cite ``torch_tensorrt/...py:LINE`` for what trtcheck mirrors."""

    def __init__(self, ttrt: ModuleType) -> None:
        root = Path(inspect.getsourcefile(ttrt) or "").parent
        self.files = {path.relative_to(root.parent).as_posix(): path.read_text(errors="replace")
                      for path in sorted(root.rglob("*.py"))}

    def cite(self, needle: str, *prefer: str) -> str:
        """Where ``needle`` first appears, looking first in files ending as ``prefer`` says, in order."""
        def rank(rel: str) -> int:
            return next((i for i, end in enumerate(prefer) if rel.endswith(end)), len(prefer))

        for rel in sorted(self.files, key=rank):
            text = self.files[rel]
            at = text.find(needle)
            if at >= 0:
                return f"{rel}:{text.count(chr(10), 0, at) + 1}"
        return f"no line of this release reads {needle!r}"


def load(code_dir: str, behaving: bool = False) -> tuple[ModuleType, dict[str, Any]]:
    """Import torch_tensorrt from ``code_dir`` (installed when empty; its bytecode written first)
    over the stand-in and shims; ``behaving``: the stand-in that builds and runs engines
    (:mod:`trtcheck.backends.lowering.trt`)."""
    started = time.perf_counter()
    standin = True
    if code_dir:
        compile_bytecode(Path(code_dir))
        sys.path.insert(0, code_dir)
        text = (Path(code_dir) / "torch_tensorrt" / "_version.py").read_text()
        match = re.search(r"""__tensorrt_version__\s*=\s*["']([^"']+)""", text)
        installer = behaving_standin.install if behaving else ttrt_standin.install
        installer(match[1] if match else "0.0.0", shim_cuda=not torch.cuda.is_available())
    elif importlib.util.find_spec("tensorrt") is None:
        ttrt_standin.install("0.0.0", shim_cuda=not torch.cuda.is_available())
    else:
        standin = False
    with contextlib.redirect_stdout(io.StringIO()):
        ttrt = importlib.import_module("torch_tensorrt")
    if standin and not (behaving and torch.cuda.is_available()):
        # On a GPU the behaving stand-in's engines run on CUDA, where the runtime's Device says.
        ttrt_standin.shim_device(ttrt)
    parameters = [p.name for p in inspect.signature(ttrt.dynamo.compile).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    options = [f.name for f in dataclasses.fields(ttrt.dynamo.CompilationSettings)]
    trt = sys.modules.get("tensorrt")
    return ttrt, {"version": str(ttrt.__version__), "parameters": parameters, "options": options,
                  "standin": standin,
                  "tensorrt": getattr(trt, "__version__", None),
                  "tensorrt_names": list(getattr(trt, "TOUCHED", [])),
                  "import_s": time.perf_counter() - started}



def node_value(node: torch.fx.Node) -> Any:
    """What a node holds, as export recorded it (``val``, else ``tensor_meta``)."""
    return node.meta.get("val", node.meta.get("tensor_meta"))


class Release:
    """One loaded release's ``dynamo.compile``, run as its real compile would go."""

    def __init__(self, ttrt: ModuleType) -> None:
        self.ttrt = ttrt
        self.version = str(ttrt.__version__)
        self.compiler = importlib.import_module("torch_tensorrt.dynamo._compiler")
        self.partitioning = importlib.import_module("torch_tensorrt.dynamo.partitioning")
        self.sources = Sources(ttrt)

    def compile(self, program: torch.export.ExportedProgram, call: dict[str, Any], settings: dict[str, Any],
                seen: dict[str, Any], **extra: Any) -> tuple[torch.nn.Module, list[str]]:
        """``dynamo.compile(program, **call, **settings, **extra)`` within :meth:`as_real` (``seen``
        gets what it says), its prints swallowed; with a note for each warning Torch-TensorRT gave."""
        with self.as_real(seen), warnings.catch_warnings(record=True) as caught, \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("always")
            module = self.ttrt.dynamo.compile(program, **torch_tensorrt_inputs(call, self.ttrt), **settings,
                                              **extra)
        notes = list(dict.fromkeys(f"Torch-TensorRT warned: {w.message}" for w in caught
                                   if "torch_tensorrt" in Path(w.filename).parts))
        return module, notes

    @contextlib.contextmanager
    def as_real(self, seen: dict[str, Any]) -> Iterator[None]:
        """Within this, ``dynamo.compile(dryrun=True)`` returns early where a real compile does;
        ``seen`` gets the compile's ``settings`` and, if taken, the ``early_return`` note."""
        original = self.compiler.compile_module
        # The torch_compile front-end's registered backend calls it under the name it imported.
        holders = [m for m in (self.compiler, sys.modules.get(_BACKENDS))
                   if m is not None and getattr(m, "compile_module", None) is original]
        for holder in holders:
            holder.compile_module = self._early_returning(original, seen)
        try:
            yield
        finally:
            for holder in holders:
                holder.compile_module = original

    def _early_returning(self, original: Callable[..., Any], seen: dict[str, Any]) -> Callable[..., Any]:
        """``compile_module`` as a real compile runs it: dryrun partitions a graph with fewer
        convertible ops than ``min_block_size``, a real compile returns it unpartitioned."""
        where = self.sources.cite("num_supported_ops < settings.min_block_size", "_compiler.py")

        def compile_module(*args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(original).bind(*args, **kwargs)
            bound.apply_defaults()
            gm, options = bound.arguments["gm"], bound.arguments["settings"]
            supported, total = self.partitioning.get_graph_converter_support(
                gm, options.torch_executed_ops)
            seen["settings"] = options
            if supported == 0 or supported < options.min_block_size:
                why = ("no op is TensorRT-convertible" if supported == 0 else
                       f"{supported} of {total} ops TensorRT-convertible, fewer than min_block_size "
                       f"{options.min_block_size} (dryrun alone would partition it)")
                seen["early_return"] = (
                    f"{why}: compile_module returns the lowered graph unpartitioned ({where}), its "
                    "complex inputs already retyped to (..., 2) and no complex I/O adapters added")
                return gm
            return original(*args, **kwargs)

        return compile_module
