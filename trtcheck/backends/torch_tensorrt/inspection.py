"""What a compiled Torch-TensorRT module shows: its partition into TensorRT engines and PyTorch
fallbacks, engine memory, output dtypes, and the complex I/O adapters a release forgot."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.utils import _pytree as pytree

from trtcheck.tensors import op_name

# Ops Torch-TensorRT inserts between its engines and the caller: truncate_double's casts
# (conversion/truncate_double.py) and complex I/O views (_compiler._insert_complex_io_adapters).
_BOUNDARY_OPS = frozenset({"aten._to_copy.default", "aten.to.dtype", "aten.view_as_real.default",
                           "aten.view_as_complex.default"})


@dataclass(frozen=True)
class Partition:
    """How a compiled module splits between TensorRT and PyTorch."""

    engines: int
    fallbacks: list[str]  # ops that run in PyTorch
    boundaries: list[str]  # casts and complex views Torch-TensorRT put around its engines


def partition_summary(module: Any) -> Partition:
    """Read a compiled module: Torch-TensorRT names TensorRT engines ``_run_on_acc_*`` and PyTorch
    submodules ``_run_on_gpu_*``; ops in the top-level graph also run in PyTorch.

    Only a ``_run_on_acc_*`` child that is not a GraphModule is an engine (a converted TensorRT
    module); one that is still a GraphModule (a dryrun) runs in PyTorch, its ops as fallbacks.
    The lowering host replaces each dryrun block with its own engine module before reading the
    partition, so that its predicted engines count here the same way."""
    if not isinstance(module, torch.fx.GraphModule):
        return Partition(0, [], [])
    engines, inner = 0, []
    for name, child in module.named_children():
        if name.startswith("_run_on_acc") and not isinstance(child, torch.fx.GraphModule):
            engines += 1
        elif isinstance(child, torch.fx.GraphModule):
            inner.append(child.graph)
    # Around engines, the top level holds the casts (truncate_double) and complex I/O views
    # (2.12+) that Torch-TensorRT inserts; with no engine, it is the user's whole graph. 2.14 on
    # torch >= 2.14 leaves view_as_real of a complex input to a _run_on_gpu_* block of its own,
    # as TensorRT has no converter for it: a boundary there too.
    ops = [_ops(module.graph), *(_ops(graph) for graph in inner)]
    boundaries = set().union(*(found & _BOUNDARY_OPS for found in ops)) if engines else set()
    fallbacks = set().union(*ops) - boundaries
    return Partition(engines, sorted(fallbacks), sorted(boundaries))


def engine_memory(module: Any) -> dict[str, int | None] | None:
    """The device memory of a compiled module's TensorRT engines, outside PyTorch's allocator;
    None when it has no engine.

    ``plan_bytes``: the engines' serialized plans (their weights, which TensorRT loads onto the
    device), from each ``_run_on_acc_*`` module's ``serialized_engine`` (Torch-TensorRT 2.12 to
    2.14, both runtimes). ``activation_bytes``: what an execution context needs besides
    (``ICudaEngine.device_memory_size_v2``), only where the runtime holds the ``ICudaEngine`` in
    Python: ``engine`` of 2.12's ``PythonTorchTensorRTModule``, ``engine.cuda_engine`` from 2.13;
    the C++ runtime does not expose it (None)."""
    if not isinstance(module, torch.nn.Module):
        return None
    engines = [child for name, child in module.named_children() if name.startswith("_run_on_acc")]
    if not engines:
        return None
    plans = [getattr(e, "serialized_engine", None) for e in engines]
    activations = [_activation_bytes(e) for e in engines]
    return {"plan_bytes": sum(len(p) for p in plans if isinstance(p, (bytes, bytearray))),
            "activation_bytes": (None if any(a is None for a in activations)
                                 else sum(a for a in activations if a is not None))}


def _activation_bytes(engine_module: Any) -> int | None:
    engine = getattr(engine_module, "engine", None)
    try:  # a TorchScript class (the C++ runtime) raises its own error for an unknown attribute
        cuda_engine = getattr(engine, "cuda_engine", engine)
        size = getattr(cuda_engine, "device_memory_size_v2", None)
    except Exception:
        return None
    return size if isinstance(size, int) else None


def program_dtypes(program: ExportedProgram) -> set[torch.dtype]:
    return {leaf.dtype for node in program.graph.nodes
            for leaf in pytree.tree_leaves(node.meta.get("val"))
            if isinstance(leaf, torch.Tensor)}


def output_dtypes(program: ExportedProgram) -> list[torch.dtype | None]:
    """The dtype of each of the program's user outputs, in the order a call returns them."""
    vals = {node.name: node.meta.get("val") for node in program.graph.nodes}
    return [getattr(vals.get(name), "dtype", None) for name in program.graph_signature.user_outputs]


def unadapted_complex(expected: list[torch.dtype | None], actual: list[Any], cause: str) -> list[str]:
    """A note for each output that should be complex and came back as its real ``(..., 2)`` layout."""
    notes = []
    for i, (dtype, leaf) in enumerate(zip(expected, actual, strict=False)):
        if (dtype is not None and dtype.is_complex and isinstance(leaf, torch.Tensor)
                and leaf.dtype == dtype.to_real() and leaf.dim() > 0 and leaf.shape[-1] == 2):
            notes.append(f"Torch-TensorRT returned {str(leaf.dtype).removeprefix('torch.')} (..., 2) "
                         f"for a {str(dtype).removeprefix('torch.')} output out[{i}]: {cause}")
    return notes


def _partitioned(module: Any) -> bool:
    return any(name.startswith("_run_on_") for name, _ in getattr(module, "named_children", list)())


def retyped_inputs(module: Any) -> list[str]:
    """Complex inputs of a graph returned unpartitioned (fewer TensorRT-convertible ops than
    min_block_size) that the complex rewrite already turned into ``(..., 2)`` placeholders."""
    if not isinstance(module, torch.fx.GraphModule) or _partitioned(module):
        return []
    return [n.name.removesuffix("_unpacked_complex") for n in module.graph.nodes
            if n.op == "placeholder" and n.name.endswith("_unpacked_complex")]


def _unadapted_cause(module: Any) -> str:
    if _partitioned(module):
        return ("its complex I/O adapters add view_as_complex only to an output taken straight from "
                "a block, not to one that leaves a TensorRT block through getitem (a block with "
                "several outputs)")
    return ("the graph came back unpartitioned (fewer TensorRT-convertible ops than min_block_size), "
            "after the complex rewrite and before the complex I/O adapters")


class CheckedOutputs:
    """The compiled module; its first call notes complex outputs that came back as ``(..., 2)``
    real tensors. The outputs are returned as Torch-TensorRT gave them, so the row fails the
    dtype check, as a caller of the compiled module would."""

    def __init__(self, module: Callable[..., Any], expected: list[torch.dtype | None],
                 notes: list[str]) -> None:
        self.module = module
        self.expected: list[torch.dtype | None] | None = expected
        self.notes = notes  # the evidence's notes, which the row carries

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs = self.module(*args, **kwargs)
        if self.expected is not None:
            expected, self.expected = self.expected, None
            self.notes += unadapted_complex(expected, pytree.tree_leaves(outputs),
                                            _unadapted_cause(self.module))
        return outputs

def _ops(graph: torch.fx.Graph) -> set[str]:
    return {op_name(node.target) for node in graph.nodes
            if node.op == "call_function" and node.target is not operator.getitem}
