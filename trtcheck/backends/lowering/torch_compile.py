"""Torch-TensorRT's torch_compile front-end in the lowering host, through the behaving stand-in.

The front-end compiles the user's module, not an exported program, so the host needs the module
itself, and it never receives it pickled (a module holding a lambda, a closure or a local class
does not pickle): it builds the case's module from the zoo's factory as the worker did (the zoo
file imported under the module name and root the worker imported it with,
:mod:`trtcheck.zoo.discover`; the same variant and seed, :func:`trtcheck.zoo.cases.build`), and
compares a digest of its parameters and buffers with the worker's. Where they differ (a factory
that is not deterministic) it asks for the worker's ``state_dict``, which always serializes. That
runs the zoo file's top-level code and the factory here as in the worker; the module's own code
then runs under Dynamo here as in a user's process. (Running the front-end in the worker instead
would install the stand-in and a release's ``torch_tensorrt`` there, beside the ``tensorrt``
backend's real one and any other release the run checks.)

Dynamo traces it, the release's registered backend lowers, partitions and converts each graph,
and the stand-in's builder and runtime run the engines with PyTorch, watched as the export
front-end's compile is (:class:`~trtcheck.backends.lowering.converted.Watch`): a prediction at the
converters and engine, NOT TensorRT.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import torch

from trtcheck.backends.lowering.converted import LEVEL, Watch, converter_stage, engine_layers
from trtcheck.backends.lowering.messages import STATE_DIFFERS, CaseRef
from trtcheck.backends.lowering.release import Release
from trtcheck.backends.torch_tensorrt.torch_compile import Inputs, TorchCompile
from trtcheck.errors import PredictionGap, last_line
from trtcheck.tensors import StateSnapshot, state_digest
from trtcheck.zoo.cases import Case, build
from trtcheck.zoo.discover import IMPORTED, ImportFailure, ZooFile


def module_for(ref: CaseRef, device: str, digest: str, state: bytes | None) -> torch.nn.Module | None:
    """The case's module built here from its factory, on ``device`` in eval mode, with the
    worker's parameters and buffers (``digest``); loaded from ``state`` where the build differs,
    or None where it differs and no state was sent. A module that cannot be built or loaded is a
    :class:`PredictionGap`: no fault of the model's nor Torch-TensorRT's."""
    root, path, name, variant = ref
    file = ZooFile(Path(root), Path(path))
    spec = IMPORTED.spec(file, name)
    if isinstance(spec, ImportFailure):
        raise PredictionGap(f"the lowering host could not import {path} to build the module: "
                            f"{spec.message}")
    try:
        model = build(Case(file, spec, variant)).module.to(device).eval()
    except Exception as exc:
        raise PredictionGap(f"the lowering host could not build the module from its factory: "
                            f"{last_line(exc)}") from exc
    if state_digest(model) == digest:
        return model
    if state is None:
        return None
    try:
        model.load_state_dict(torch.load(io.BytesIO(state), map_location=device, weights_only=True))
    except Exception as exc:
        raise PredictionGap(f"the lowering host's build of the module differs from the worker's "
                            f"and does not take its state_dict: {last_line(exc)}") from exc
    if state_digest(model) != digest:
        raise PredictionGap("the lowering host's build of the module differs from the worker's "
                            "even with its state_dict (a buffer outside the state_dict differs)")
    return model


def compiled(release: Release, ref: CaseRef, device: str, digest: str, state: bytes | None,
             options: dict[str, Any], calls: list[tuple[str, Inputs]]) -> tuple[Any, dict[str, Any]]:
    """The case's module (:func:`module_for`) compiled by ``torch.compile`` with the release's
    backend and called at each of ``calls``: the compiled module and the evidence; or no module
    and :data:`STATE_DIFFERS` where the worker must send its state."""
    model = module_for(ref, device, digest, state)
    if model is None:
        return None, STATE_DIFFERS
    torch.compiler.reset()  # each row's compile starts fresh, as in the worker
    before = StateSnapshot(model)
    compiling = TorchCompile(model, options)
    watch = Watch()
    with watch.converting(), watch.running(), release.as_real(watch.seen), \
            contextlib.redirect_stdout(io.StringIO()):
        compiling.run(calls)
    before.restore()
    evidence = compiling.evidence()
    for i, graph in enumerate(compiling.graphs):
        refused = watch.swallowed(graph.error) if graph.error is not None else None
        if refused:
            evidence["notes"].append(f"graph {i + 1}: {refused}")
    layers = {f"graph {i + 1} {name}": found
              for i, graph in enumerate(compiling.graphs) if isinstance(graph.returned, torch.nn.Module)
              for name, found in engine_layers(graph.returned).items()}
    evidence["notes"] += watch.notes()
    evidence["remark"] = "; ".join(filter(None, [evidence["remark"], *watch.remarks()]))
    evidence["details"].update(level=LEVEL, stage=converter_stage(layers), engine_layers=layers)
    return compiling.fn, evidence
