"""Find what the complex-to-real rewrite has to deal with in an ExportedProgram's graph.

:func:`scan` finds the complex subgraphs the way the complex guide does (anchor on
``view_as_real``, walk backwards through complex nodes, merge subgraphs that share
nodes) and also the complex nodes that never reach a ``view_as_real``.

Coverage ``seed`` accepts exactly the guide's *Supported Patterns* table: complex
placeholders of every kind (user inputs, and parameters, buffers and constants, which the
guide sees as ``get_attr``), ``aten.mul.Tensor`` between two complex tensors,
``view_as_complex``, ``view_as_real`` and ``permute.default``, all inside a
``view_as_real``-anchored subgraph, plus ``sym_size.int``, the shape query export adds
under dynamic shapes. No other plumbing is admitted: in the guide's own RoPE example the
``reshape`` and ``flatten`` act on real tensors, outside the complex subgraph, so a complex
``reshape``/``slice``/``view`` (as in Llama's ``freqs_cis[:seq].view(...)``) is predicted
unsupported. :func:`check_seed` raises :class:`Unsupported` quoting the guide's limitation.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram

from trtcheck.emulation.graph import dtype_name, input_kinds, is_complex, output_node
from trtcheck.emulation.limitations import (
    ANCHOR,
    CONV_BN,
    PATTERNS,
    SEED_OPS,
    STANDALONE_VIEW_AS_COMPLEX,
)
from trtcheck.errors import Unsupported
from trtcheck.tensors import op_name

aten = torch.ops.aten

# Assertions about dtype and device: erased, since after the rewrite they no longer hold.
NOOPS = frozenset({aten._assert_tensor_metadata.default})


def is_conv_or_batch_norm(target: Any) -> bool:
    """Whether an op is a convolution or a batch norm (any overload, any backend's name)."""
    base = op_name(target).split(".")[1] if isinstance(target, torch._ops.OpOverload) else ""
    return base.lstrip("_").startswith(("conv", "cudnn_conv", "mkldnn_conv")) or (
        "batch_norm" in base
    )


def is_tensor_node(arg: Any) -> bool:
    """Whether an argument is a node whose value is one tensor."""
    return isinstance(arg, fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor)


def is_complex_node(arg: Any) -> bool:
    """Whether an argument is a node whose value is one complex tensor."""
    return is_tensor_node(arg) and arg.meta["val"].dtype.is_complex


@dataclass
class Subgraph:
    """Connected complex nodes: anchored on ``view_as_real`` nodes, or on none."""

    anchors: list[fx.Node]
    nodes: list[fx.Node]
    inputs: list[fx.Node]

    def to_dict(self, kinds: dict[str, str]) -> dict[str, Any]:
        """Node names; each input with its kind (``computed`` unless a placeholder)."""
        return {
            "anchors": [n.name for n in self.anchors],
            "nodes": [n.name for n in self.nodes],
            "inputs": [
                {
                    "node": n.name,
                    "kind": kinds.get(n.name, "computed") if n.op == "placeholder" else "computed",
                    "dtype": dtype_name(n.meta["val"].dtype),
                }
                for n in self.inputs
            ],
        }


@dataclass
class Scan:
    """What the rewrite has to deal with in one graph."""

    subgraphs: list[Subgraph]
    ops: list[fx.Node]
    unanchored: set[fx.Node]
    outputs: list[fx.Node]
    kinds: dict[str, str]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[fx.Node, fx.Node] = {}

    def find(self, x: fx.Node) -> fx.Node:
        root = self.parent.setdefault(x, x)
        while root != self.parent[root]:
            root = self.parent[root]
        self.parent[x] = root
        return root

    def union(self, a: fx.Node, b: fx.Node) -> None:
        self.parent[self.find(a)] = self.find(b)


def scan(program: ExportedProgram) -> Scan:
    """Find complex subgraphs, complex ops and complex outputs (``_assert`` no-ops ignored)."""
    graph = program.graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    cplx = {n for n in graph.nodes if n.op != "output" and is_complex(n.meta.get("val"))}
    ops = [
        n for n in graph.nodes
        if n.op == "call_function" and n.target not in NOOPS and n.target is not operator.getitem
        and (n in cplx or any(i in cplx for i in n.all_input_nodes))
    ]
    anchors = [n for n in ops if n.target is aten.view_as_real.default]

    groups = _UnionFind()
    reached: set[fx.Node] = set()
    for anchor in anchors:
        groups.find(anchor)
        stack = [i for i in anchor.all_input_nodes if i in cplx]
        while stack:
            node = stack.pop()
            groups.union(node, anchor)
            if node not in reached:
                reached.add(node)
                stack.extend(i for i in node.all_input_nodes if i in cplx)
    unanchored = cplx - reached
    for node in unanchored:
        groups.find(node)
        for i in node.all_input_nodes:
            if i in unanchored:
                groups.union(node, i)

    members: dict[fx.Node, list[fx.Node]] = {}
    for node in sorted(groups.parent, key=order.__getitem__):
        members.setdefault(groups.find(node), []).append(node)
    subgraphs = []
    for group in members.values():
        nodes = [n for n in group if n in cplx]
        feeding = {i for n in nodes for i in n.all_input_nodes if i not in cplx}
        feeding |= {n for n in nodes if n.op == "placeholder"}
        subgraphs.append(Subgraph(
            anchors=[n for n in group if n not in cplx],
            nodes=nodes,
            inputs=sorted(feeding, key=order.__getitem__),
        ))
    returned = [a for a in output_node(graph).all_input_nodes if a in cplx]
    return Scan(subgraphs, ops, unanchored, returned, input_kinds(program))


def seed_problem(node: fx.Node, found: Scan) -> str | None:
    """Why seed coverage cannot rewrite this complex op (the ``Unsupported`` message), or None."""
    if node in found.unanchored:
        limit = (STANDALONE_VIEW_AS_COMPLEX if node.target is aten.view_as_complex.default
                 else ANCHOR)
    elif is_conv_or_batch_norm(node.target):
        limit = CONV_BN
    elif node.target not in SEED_OPS or (
        node.target is aten.mul.Tensor and not all(is_complex_node(a) for a in node.args[:2])
    ):
        limit = PATTERNS
    else:
        return None
    return f"unsupported complex op {op_name(node.target)} (node {node.name}): {limit.short}"


def seed_problems(found: Scan) -> list[str]:
    """Every reason seed coverage cannot lower the graph (empty when it can)."""
    problems = [p for n in found.ops if (p := seed_problem(n, found))]
    ops = set(found.ops)
    problems += [f"unsupported complex output (node {n.name}): {ANCHOR.short}"
                 for n in found.outputs if n not in ops]
    return problems


def check_seed(found: Scan) -> None:
    """Raise :class:`Unsupported` with the first problem unless seed coverage can lower it."""
    problems = seed_problems(found)
    if problems:
        raise Unsupported(problems[0])
