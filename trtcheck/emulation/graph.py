"""Graph helpers for the emulation: node values, op names, fake-tensor evaluation, invariants.

While lowering, every node the passes create gets ``meta["val"]`` by running its op on
the fake values of its inputs (:func:`evaluate`), so the next pass and the final
invariant check see the dtypes and shapes the graph really produces.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterable
from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.utils import _pytree as pytree

from trtcheck.errors import InternalError
from trtcheck.tensors import op_name

COMPLEX_DTYPES = frozenset({torch.complex32, torch.complex64, torch.complex128})

# Where a placeholder of an ExportedProgram comes from.
KIND_NAMES = {
    InputKind.USER_INPUT: "user_input",
    InputKind.PARAMETER: "parameter",
    InputKind.BUFFER: "buffer",
    InputKind.CONSTANT_TENSOR: "constant",
    InputKind.CUSTOM_OBJ: "custom_obj",
    InputKind.TOKEN: "token",
}

# Marks in node.meta["trtcheck"] for nodes the invariant check lets through.
FALLBACK = "fallback"  # a complex op run by PyTorch
INT64_ISLAND = "int64 island"  # an op that needs int64 indices, fed by casts back to int64
NARROWED = "narrowed"  # computed wide and cast to the engine's dtype right after


def tensor_leaves(val: Any) -> list[torch.Tensor]:
    """The tensors in a node's ``meta["val"]`` (a tensor, a list/tuple of them, or none)."""
    return [v for v in pytree.tree_leaves(val) if isinstance(v, torch.Tensor)]


def is_complex(val: Any) -> bool:
    """Whether a node's ``meta["val"]`` holds a complex tensor."""
    return any(t.dtype in COMPLEX_DTYPES for t in tensor_leaves(val))


def dtype_of(val: Any) -> torch.dtype | None:
    return val.dtype if isinstance(val, torch.Tensor) else None


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def output_node(graph: fx.Graph) -> fx.Node:
    return next(n for n in reversed(graph.nodes) if n.op == "output")


def input_kinds(program: ExportedProgram) -> dict[str, str]:
    """Placeholder name -> ``user_input``, ``parameter``, ``buffer``, ``constant``, ..."""
    return {spec.arg.name: KIND_NAMES[spec.kind] for spec in program.graph_signature.input_specs}


def fake_mode(graph: fx.Graph) -> Any:
    """The fake-tensor mode the graph's values live in (a no-op context if there are none)."""
    for node in graph.nodes:
        for t in tensor_leaves(node.meta.get("val")):
            mode = getattr(t, "fake_mode", None)
            if mode is not None:
                return mode
    return contextlib.nullcontext()


def evaluate(node: fx.Node, mode: Any) -> bool:
    """Set ``node.meta["val"]`` by running its op on fake inputs; False if it cannot run.

    Only ATen ops and ``getitem`` are run: other call targets may have side effects
    (``torch._C._set_grad_enabled``) and keep the value they were exported with.
    """
    target = node.target
    if node.op != "call_function" or not (
        isinstance(target, torch._ops.OpOverload) or target is operator.getitem
    ):
        return False
    args, kwargs = fx.node.map_arg((node.args, node.kwargs), lambda n: n.meta.get("val"))
    try:
        with mode:
            node.meta["val"] = target(*args, **kwargs)
    except Exception:  # any failure only means "cannot tell here"; callers decide
        return False
    return True


def check_invariants(graph: fx.Graph, forbidden: Iterable[torch.dtype]) -> None:
    """Fail if a node TensorRT could not hold is left outside a declared island.

    Complex dtypes are always forbidden (only fallbacks may keep them); the dtype
    policy adds int64 and float64 (allowed only in islands and narrowed nodes).
    """
    banned = COMPLEX_DTYPES | set(forbidden)
    allowed = {FALLBACK: banned, INT64_ISLAND: {torch.int64}, NARROWED: set(forbidden)}
    for node in graph.nodes:
        if node.op == "output":
            continue
        exempt = allowed.get(node.meta.get("trtcheck"), set())
        for t in tensor_leaves(node.meta.get("val")):
            if t.dtype in banned and t.dtype not in exempt:
                raise InternalError(
                    f"emulate's lowering left node {node.name} ({op_name(node.target)}) with dtype "
                    f"{t.dtype} outside a declared fallback or island"
                )
