"""Torch-TensorRT's torch.compile front-end in the lowering host, through the behaving stand-in.

The front-end compiles the user's module, not an exported program, so the host needs the module
itself: the worker pickles it, and the host first imports the case's zoo file (under the module
name and root the worker imported it with, :mod:`trtcheck.zoo.discover`) so that its classes and
helpers resolve. That runs the zoo file's top-level code here as it ran in the worker; the
module's own code then runs under Dynamo here as in a user's process, which is what the
front-end compiles. (Running the front-end in the worker instead would install the stand-in and
a release's ``torch_tensorrt`` there, beside the ``tensorrt`` backend's real one and any other
release the run checks.)

Dynamo traces it, the release's registered backend lowers, partitions and converts each graph,
and the stand-in's builder and runtime run the engines with PyTorch: a prediction at the
converters and engine, NOT TensorRT.
"""

from __future__ import annotations

import contextlib
import io
import pickle
from pathlib import Path
from typing import Any

import torch

from trtcheck.backends.lowering.converted import (
    converter_stage,
    engine_layers,
    summarize,
    watching_int64,
)
from trtcheck.backends.torch_tensorrt.jit import Inputs, JitCompile
from trtcheck.tensors import StateSnapshot
from trtcheck.zoo.discover import IMPORTED, ImportFailure, ZooFile


def compiled(blob: bytes, zoo_file: tuple[str, str] | None, options: dict[str, Any],
             calls: list[tuple[str, Inputs]]) -> tuple[Any, dict[str, Any]]:
    """The module pickled in ``blob`` (its zoo file ``(root, path)`` imported first) compiled
    by ``torch.compile`` with the release's backend and called at each of ``calls``: the
    compiled module, its buffers as they were before those calls, and the evidence."""
    if zoo_file is not None:
        found = IMPORTED.load(ZooFile(Path(zoo_file[0]), Path(zoo_file[1])))
        if isinstance(found, ImportFailure):
            raise RuntimeError(f"the lowering host could not import {zoo_file[1]} to unpickle "
                               f"its module: {found.message}")
    model = pickle.loads(blob)
    torch.compiler.reset()  # each row's compile starts fresh, as in the worker
    state = StateSnapshot(model)
    jit = JitCompile(model, options)
    narrowed: list[str] = []
    with watching_int64(narrowed), contextlib.redirect_stdout(io.StringIO()):
        jit.run(calls)
    state.restore()
    evidence = jit.evidence()
    layers = {f"graph {i + 1} {name}": found
              for i, graph in enumerate(jit.graphs) if isinstance(graph.returned, torch.nn.Module)
              for name, found in engine_layers(graph.returned).items()}
    evidence["notes"] += summarize(narrowed)
    evidence["details"].update(level="converters and engine (TensorRT stand-in)",
                               stage=converter_stage(layers), engine_layers=layers)
    return jit.fn, evidence
