"""The torch part of Torch-TensorRT's ``torch_compile`` front-end (:data:`trtcheck.core.frontends.
TORCH_COMPILE`): ``torch.compile(model, backend="tensorrt", options=...)``, the release's own
registered Dynamo backend, and what it did graph by graph.

Run the same way by the ``tensorrt`` backend (in the worker, on TensorRT) and by the lowering
host (over the TensorRT stand-in). Dynamo traces the user's module and hands Torch-TensorRT one
graph per stretch between graph breaks; a call at another shape may compile again. What each
graph became (engines, ops left to PyTorch, a conversion that failed and left the whole graph
to PyTorch), the graph breaks with the user's ``file:line`` and the recompiles come from Dynamo's
and Torch-TensorRT's own accounting."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends import graph_breaks
from trtcheck.backends.base import CompileJob
from trtcheck.backends.torch_tensorrt.inspection import Partition, partition_summary
from trtcheck.backends.torch_tensorrt.logs import logged
from trtcheck.core.frontends import TORCH_COMPILE
from trtcheck.program.shapes import plan_shapes, resize
from trtcheck.tensors import clone

# The name Torch-TensorRT registers its Dynamo backend under (dynamo/backend/backends.py).
BACKEND = "tensorrt"
HOW = f'torch.compile(model, backend="{BACKEND}", options=settings)'
FRONTEND_NOTE = (f"Torch-TensorRT's torch.compile front-end: {HOW}, the release's own Dynamo "
                 "backend, on the user's module (not its exported program)")
# Where Torch-TensorRT logs a graph whose conversion failed, then returned to run in PyTorch
# (pass_through_build_failures off, its default).
_BACKEND_LOGGER = "torch_tensorrt.dynamo.backend.backends"
_FAILED = "TRT conversion failed"

Inputs = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass
class Graph:
    """One graph Dynamo handed Torch-TensorRT, what Torch-TensorRT returned for it, the shapes
    of the call that compiled it, and why its conversion failed (its graph then runs in PyTorch)."""

    handed: torch.fx.GraphModule
    returned: Any
    shape: str
    failure: str = ""
    error: BaseException | None = None  # the exception its conversion failed with, where logged

    @property
    def partition(self) -> Partition:
        return partition_summary(self.returned)

    def dtypes(self) -> set[torch.dtype]:
        """The dtypes Dynamo traced in the graph (its inputs, weights and every value)."""
        return {leaf.dtype for node in self.handed.graph.nodes
                for leaf in pytree.tree_leaves(node.meta.get("example_value"))
                if isinstance(leaf, torch.Tensor)}


def unwrapped(exc: BaseException) -> BaseException:
    """The exception a Dynamo backend raised, where Dynamo wrapped it (``BackendCompilerFailed``,
    whose own message only says which backend raised): what a row's message, owner and status
    come from; else ``exc``."""
    from torch._dynamo.exc import BackendCompilerFailed

    seen: set[int] = set()
    while isinstance(exc, BackendCompilerFailed) and id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        if inner is None:
            break
        exc = inner
    return exc


@dataclass
class TorchCompile:
    """``torch.compile`` of a module with the release's registered backend; each graph Dynamo
    hands that backend is kept with what it returned (the backend is called as Dynamo would call
    it, by its name, with the same options)."""

    model: torch.nn.Module
    options: Mapping[str, Any]
    graphs: list[Graph] = field(default_factory=list)
    breaks: list[graph_breaks.GraphBreak] = field(default_factory=list)
    recompiles: list[dict[str, Any]] = field(default_factory=list)
    _shape: str = "example"

    def __post_init__(self) -> None:
        self.fn: Callable[..., Any] = torch.compile(self.model, backend=self._backend,
                                                    options=dict(self.options))

    def _backend(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                 **kwargs: Any) -> Any:
        from torch._dynamo import lookup_backend

        with logged(_BACKEND_LOGGER, logging.WARNING) as warned:
            returned = lookup_backend(BACKEND)(gm, example_inputs, **kwargs)
        failed, error = "", None
        if any(_FAILED in m for m in warned):
            failed = warned.exceptions[-1] if warned.exceptions else "no exception logged"
            error = warned.raised[-1] if warned.raised else None
        self.graphs.append(Graph(gm, returned, self._shape, failed, error))
        return returned

    def run(self, calls: Sequence[tuple[str, Inputs]]) -> list[Any]:
        """Call the compiled module once at each ``(label, inputs)`` (the example first) on a
        copy of its inputs, compiling as it goes; the outputs. A graph compiled at a call
        after the first is a recompile, with Dynamo's reasons."""
        from torch._dynamo.utils import guard_failures  # Dynamo's record, cleared by its reset

        outputs = []
        for i, (label, inputs) in enumerate(calls):
            self._shape, before = label, len(self.graphs)
            seen = {code: len(reasons) for code, reasons in guard_failures.items()}
            args, kwargs = clone(inputs)
            with graph_breaks.watch() as breaks, torch.no_grad():
                try:
                    outputs.append(self.fn(*args, **kwargs))
                except Exception as exc:  # Dynamo's wrapper says only which backend raised
                    inner = unwrapped(exc)
                    if inner is exc:
                        raise
                    raise inner from exc
            self.breaks += breaks
            if i and len(self.graphs) > before:
                reasons = [r for code, found in guard_failures.items()
                           for r in found[seen.get(code, 0):]]
                self.recompiles.append({"shape": label, "graphs": len(self.graphs) - before,
                                        "reasons": list(dict.fromkeys(reasons))})
        return outputs

    def evidence(self) -> dict[str, Any]:
        """What the compiles did, plain data (the lowering host sends it to the worker):
        the ``path`` step naming the front-end and its graphs, ``engines``, ``fallbacks``,
        ``boundaries`` over all graphs, ``dtypes``, ``notes``, the ``remark`` a row's message
        carries, and ``details``, whose ``differences`` name what this front-end did that the
        export front-end does not (graph breaks, a graph left to PyTorch after its conversion
        failed, recompiles): where a row may differ from its export twin."""
        splits = [g.partition for g in self.graphs]
        engines = sum(s.engines for s in splits)
        notes = [FRONTEND_NOTE]
        per_graph = []
        for i, (graph, split) in enumerate(zip(self.graphs, splits, strict=True)):
            entry: dict[str, Any] = {"shape": graph.shape, "engines": split.engines,
                                     "fallbacks": split.fallbacks}
            where = f"graph {i + 1} of {len(self.graphs)} (compiled at the {graph.shape} shapes)"
            if graph.failure:
                entry["failure"] = graph.failure
                notes.append(f"{where}: Torch-TensorRT's conversion failed and the graph runs in "
                             f"PyTorch: {graph.failure}")
            else:
                left = f"; left to PyTorch: {', '.join(split.fallbacks)}" if split.fallbacks else ""
                notes.append(f"{where}: {split.engines} TensorRT engine"
                             f"{'s' * (split.engines != 1)}{left}")
            per_graph.append(entry)
        for again in self.recompiles:
            why = f" (Dynamo: {'; '.join(again['reasons'])})" if again["reasons"] else ""
            notes.append(f"recompiled at {again['shape']}: {again['graphs']} more graph"
                         f"{'s' * (again['graphs'] != 1)}{why}")
        failed = sum(bool(g.failure) for g in self.graphs)
        if not self.graphs:
            said = "Dynamo handed Torch-TensorRT no graph"
        elif not engines:
            said = "Torch-TensorRT built no TensorRT engine: every graph runs in PyTorch"
        elif failed:
            said = (f"Torch-TensorRT's conversion failed for {failed} of {len(self.graphs)} "
                    f"graphs, which run in PyTorch")
        else:
            said = ""
        remark = "; ".join(filter(None, [said, graph_breaks.summary(self.breaks)]))
        first = sum(g.shape == self.graphs[0].shape for g in self.graphs) if self.graphs else 0
        step = f"torch.compile, {first} graph{'s' * (first != 1)}"
        if self.recompiles:
            step += (f", recompiled at {len(self.recompiles)} shape"
                     f"{'s' * (len(self.recompiles) != 1)}")
        fallbacks = sorted(set().union(*(s.fallbacks for s in splits)))
        differences = [*(["graph break"] if self.breaks else []),
                       *(["conversion failed: a graph runs in PyTorch"] if failed else []),
                       *(["recompiled"] if self.recompiles else []),
                       *([f"left to PyTorch in Dynamo's graph: {', '.join(fallbacks)}"]
                         if fallbacks else [])]
        return {
            "path": step,
            "engines": engines,
            "fallbacks": fallbacks,
            "boundaries": sorted(set().union(*(s.boundaries for s in splits))),
            "dtypes": sorted({str(d) for g in self.graphs for d in g.dtypes()}),
            "notes": notes,
            "remark": remark,
            "details": {"frontend": TORCH_COMPILE.name, "compiled_as": HOW, "graphs": per_graph,
                        "graph_breaks": list(dict.fromkeys(b.describe() for b in self.breaks)),
                        "recompiles": self.recompiles, "differences": differences},
        }


def evidence_fields(found: Mapping[str, Any]) -> dict[str, Any]:
    """What :meth:`TorchCompile.evidence` gives :func:`~trtcheck.backends.torch_tensorrt.compat.
    compiled_evidence`, by its keywords, on either backend."""
    return {"engines": found["engines"], "fallbacks": found["fallbacks"],
            "boundaries": found["boundaries"], "dtypes": found["dtypes"],
            "steps": [found["path"]], "remark": found["remark"]}


def shape_calls(job: CompileJob) -> list[tuple[str, Inputs]]:
    """The inputs the torch_compile front-end's compile is called with: the example, then the
    case's other declared shapes (read from its exported program; none where it did not export)."""
    inputs = (job.args, job.kwargs)
    if job.program is None or not job.ranges:
        return [("example", inputs)]
    sets = plan_shapes(job.program, inputs).sets
    return [("example", inputs), *((at.describe(), resize(job.program, inputs, at))
                                   for at in sets[1:])]

