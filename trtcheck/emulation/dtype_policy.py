"""Torch-TensorRT's autocast RFC's dtype policies: int64 and float64 around engines.

Per profile:

- ``int64 = "native"`` keeps int64; ``int64 = "int32"`` runs the engine in int32. Inputs
  are cast on entry (values beyond int32 wrap, exactly like ``Tensor.to(torch.int32)``),
  outputs are cast back to int64 on the way out.
- ``truncate_double`` runs float64 (and complex128, whose views are float64) in float32.

Inside the engine every node is retyped, not only the boundary:

- dtype arguments (``.to(torch.int64)``, ``arange(..., dtype=torch.float64)``) name the
  engine's dtype, and the Python integers an int64 op takes as values (not its dims,
  sizes or indices) wrap to int32, as TensorRT truncates int64 constants;
- an op that still yields a wide dtype from narrow inputs (``cumsum``/``sum`` of int32,
  ``argmax``, ``arange``) is cast to the engine's dtype right after it, and an op of several
  results (the indices of ``topk``, ``sort``, ``max.dim``, ``unique``) where each result is
  taken out. For int64 this is bit-identical to int32 arithmetic: wrapping commutes with +,
  - and ×, indices fit in int32, and every other op already sees int32 inputs;
- an op PyTorch only runs on int64 indices (``one_hot``, ``nll_loss``) becomes an *int64
  island*: its truncated int32 inputs are cast back to int64 for that op alone, as the
  RFC's Torch blocks do around an engine.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

from trtcheck.core.profiles import Profile
from trtcheck.emulation.converters import ConverterTable
from trtcheck.emulation.graph import (
    COMPLEX_DTYPES,
    FALLBACK,
    INT64_ISLAND,
    NARROWED,
    dtype_name,
    dtype_of,
    evaluate,
    fake_mode,
    input_kinds,
    output_node,
    tensor_leaves,
)
from trtcheck.tensors import INT32_MIN, op_name

aten = torch.ops.aten

PATHS = ("complex rewrite", "int64", "float64")


@dataclass(frozen=True)
class Policy:
    """Which wide dtypes the engine narrows."""

    int32: bool = False
    truncate_double: bool = False

    @classmethod
    def from_profile(cls, profile: Profile) -> Policy:
        """The policy a settings profile asks for."""
        return cls(int32=profile.int64 == "int32", truncate_double=profile.truncate_double)

    @property
    def narrowing(self) -> dict[torch.dtype, torch.dtype]:
        """Wide dtype -> the engine's dtype, for each dtype the policy narrows."""
        pairs = {torch.int64: torch.int32} if self.int32 else {}
        if self.truncate_double:
            pairs |= {torch.float64: torch.float32, torch.complex128: torch.complex64}
        return pairs

    def engine_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype a value of this dtype has inside the engine."""
        return self.narrowing.get(dtype, dtype)


def fp64_problem(graph: fx.Graph, converters: ConverterTable) -> str | None:
    """Why TensorRT cannot build this engine graph without truncate_double, or None.

    TensorRT has no FP64: Torch-TensorRT refuses float64 tensors and constants in a TensorRT
    block unless ``truncate_double`` is on (complex128 values are float64 views here). A node
    holds float64 when its value or one of its tensor inputs is float64; it is in a TensorRT block
    when the release converts its op (``converters``). Ops that run in PyTorch may hold float64:
    complex fallbacks, ops with no converter, and ops whose converter's validator refuses them."""
    for node in graph.nodes:
        if node.op != "call_function" or node.meta.get("trtcheck") == FALLBACK:
            continue
        if not any(t.dtype == torch.float64 for t in _held(node)):
            continue
        why = converters.reaches_tensorrt(node)
        if why:
            return (f"TensorRT has no FP64: node {node.name} ({op_name(node.target)}) holds "
                    f"float64 and {why}; truncate_double = true computes it in float32")
    return None


def _held(node: fx.Node) -> list[torch.Tensor]:
    """The tensors a node takes and makes."""
    inputs = [t for i in node.all_input_nodes for t in tensor_leaves(i.meta.get("val"))]
    return inputs + tensor_leaves(node.meta.get("val"))


def returned_dtypes(program: ExportedProgram) -> dict[torch.dtype, torch.dtype]:
    """The dtypes outputs come back in under truncate_double, as Torch-TensorRT returns them.

    Its ``repair_double_inputs`` (``conversion/truncate_double.py``) casts a block's outputs
    back to float64 only when the block has a float64 input: a float64 made inside the engine
    from float32 inputs comes back float32. complex128 outputs come back complex64."""
    user = {s.arg.name for s in program.graph_signature.input_specs
            if s.kind == InputKind.USER_INPUT}
    wide_input = any(n.op == "placeholder" and n.name in user and dtype_of(n.meta.get("val")) in
                     (torch.float64, torch.complex128) for n in program.graph.nodes)
    narrowed = {torch.complex128: torch.complex64}
    return narrowed if wide_input else {**narrowed, torch.float64: torch.float32}


def wrap_int32(value: int) -> int:
    """An integer as int32 holds it after truncation (two's complement wrap-around)."""
    return (value - INT32_MIN) % 2**32 + INT32_MIN


def retype(graph_module: fx.GraphModule, policy: Policy) -> list[str]:
    """Give every node of the graph the engine's dtypes, in place; one line per cast added."""
    if not policy.narrowing:
        return []
    graph = graph_module.graph
    mode = fake_mode(graph)
    before = {n: n.meta.get("val") for n in graph.nodes}
    notes: list[str] = []
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if node.op == "placeholder" and isinstance(val, torch.Tensor):
            with mode:
                node.meta["val"] = val.to(policy.engine_dtype(val.dtype))
        if node.op != "call_function":
            continue
        node.args, node.kwargs = fx.node.map_aggregate(
            (node.args, node.kwargs),
            lambda a: policy.engine_dtype(a) if isinstance(a, torch.dtype) else a)
        if policy.int32 and dtype_of(val) == torch.int64:
            wrapped = _wrap_values(node)
            notes += [f"int64 constant outside the int32 range wrapped: {w}" for w in wrapped]
            graph_module.meta.setdefault(WRAPPED, []).extend(wrapped)
        runs = evaluate(node, mode) or not isinstance(node.target, torch._ops.OpOverload)
        if not runs and policy.int32 and _int64_island(node, before, mode):
            notes.append(f"node {node.name} ({op_name(node.target)}): int32 -> int64 "
                         "(needs int64 inputs)")
        _mark_wide_parts(node, policy)
        notes.extend(_narrow_output(node, policy, mode))
    graph_module.recompile()
    return notes


# Schema types of the arguments an op takes as values (dims, sizes and indices are "int").
_VALUE_SLOTS = frozenset({"Tensor", "number", "Optional[Tensor]", "Optional[number]"})


# The key of ``GraphModule.meta`` under which ``retype`` lists the constants it wrapped.
WRAPPED = "trtcheck_wrapped_constants"


def _wrap_values(node: fx.Node) -> list[str]:
    """Wrap the Python ints an int64 op takes as values, as TensorRT truncates constants; for
    each constant outside the int32 range, which wrapping changes, ``value → wrapped in node``.

    Dims, sizes and indices stay: ``x[1:]`` slices to ``2**63 - 1``, which must not wrap.
    """
    if not isinstance(node.target, torch._ops.OpOverload):
        return []
    slots = node.target._schema.arguments
    changed: list[str] = []

    def wrap(slot: Any, value: Any) -> Any:
        is_value = type(value) is int and str(slot.type) in _VALUE_SLOTS
        if not is_value or wrap_int32(value) == value:
            return value
        changed.append(f"{value} → {wrap_int32(value)} in node {node.name} "
                       f"({op_name(node.target)})")
        return wrap_int32(value)

    by_name = {slot.name: slot for slot in slots}
    node.args = tuple(wrap(slot, v) for slot, v in zip(slots, node.args, strict=False))
    node.kwargs = {k: wrap(by_name[k], v) for k, v in node.kwargs.items()}
    return changed


def _int64_island(node: fx.Node, before: dict[fx.Node, Any], mode: Any) -> bool:
    """Feed the op its narrowed int64 inputs as int64 again; True if it then runs."""
    narrowed = [i for i in node.all_input_nodes if dtype_of(before.get(i)) == torch.int64
                and dtype_of(i.meta.get("val")) != torch.int64]
    if not narrowed:
        return False
    graph = node.graph
    for i in narrowed:
        with graph.inserting_before(node):
            cast = graph.call_function(aten._to_copy.default, (i,), {"dtype": torch.int64})
        cast.meta["trtcheck"] = INT64_ISLAND
        evaluate(cast, mode)
        node.replace_input_with(i, cast)
    node.meta["trtcheck"] = INT64_ISLAND
    return evaluate(node, mode)


def _mark_wide_parts(node: fx.Node, policy: Policy) -> None:
    """Mark an op of several results (``topk``, ``sort``, ``max.dim``) that yields a wide dtype.

    Its results are narrowed where the graph takes them apart (each ``getitem``), as a
    single-result op is narrowed right after it."""
    val = node.meta.get("val")
    if isinstance(val, (list, tuple)) and any(
            policy.engine_dtype(t.dtype) != t.dtype for t in tensor_leaves(val)):
        node.meta.setdefault("trtcheck", NARROWED)


def _narrow_output(node: fx.Node, policy: Policy, mode: Any) -> list[str]:
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or policy.engine_dtype(val.dtype) == val.dtype:
        return []
    dtype = policy.engine_dtype(val.dtype)
    with node.graph.inserting_after(node):
        cast = node.graph.call_function(aten._to_copy.default, (node,), {"dtype": dtype})
    node.replace_all_uses_with(cast, delete_user_cb=lambda user: user is not cast)
    node.meta.setdefault("trtcheck", NARROWED)
    evaluate(cast, mode)
    what = op_name(node.target)
    if node.target is operator.getitem and isinstance(node.args[0], fx.Node):
        what = f"{op_name(node.args[0].target)}[{node.args[1]}]"
    return [f"node {node.name} ({what}): {dtype_name(val.dtype)} -> {dtype_name(dtype)}"]


def census(program: ExportedProgram) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The int64 and float64 inputs, ops and (user) outputs of a program."""
    kinds = input_kinds(program)
    graph = program.graph
    user_outputs = [
        a for spec, a in zip(program.graph_signature.output_specs, output_node(graph).args[0],
                             strict=True)
        if spec.kind not in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION)
    ]
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for dtype in (torch.int64, torch.float64):

        def has(node: Any, dtype: torch.dtype = dtype) -> bool:
            return isinstance(node, fx.Node) and any(
                t.dtype == dtype for t in tensor_leaves(node.meta.get("val")))

        found[dtype_name(dtype)] = {
            "inputs": [{"name": n.name, "kind": kinds[n.name]}
                       for n in graph.nodes if n.op == "placeholder" and has(n)],
            "ops": [{"node": n.name, "op": op_name(n.target)}
                    for n in graph.nodes if n.op == "call_function" and has(n)],
            "outputs": [{"output": i, "node": a.name}
                        for i, a in enumerate(user_outputs) if has(a)],
        }
    return found


def path_flags(graph: fx.Graph) -> dict[str, bool]:
    """Which paths a graph goes through: ``complex rewrite``, ``int64``, ``float64``."""
    dtypes = {t.dtype for n in graph.nodes for t in tensor_leaves(n.meta.get("val"))}
    return dict(zip(PATHS, (
        bool(dtypes & COMPLEX_DTYPES),
        torch.int64 in dtypes,
        bool(dtypes & {torch.float64, torch.complex128}),
    ), strict=True))
