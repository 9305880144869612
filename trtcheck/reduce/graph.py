"""A failing case's exported graph, eager's value at every node, and its subgraphs as modules.

The graph is the exported program made functional (``run_decompositions({})``: in-place ops
replaced, no op decomposed), so its ops are the ones every backend is handed for the row, and
Torch-TensorRT decomposes and converts each candidate as it did the whole model (its
``scaled_dot_product_attention`` converter sees that op, not torch's decomposition of it); its
nodes are the ``call_function`` nodes, in the graph's (topological) order. A subgraph is a set of those nodes:
a value it uses but does not compute is fed in as an input (eager's recorded value), or held as a
buffer when it is one of the model's weights; its outputs are its tensor nodes that no node of the
set uses, and those the model returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.fx import _pytree as fx_pytree
from torch.utils import _pytree as pytree

from trtcheck.tensors import decompose, op_name

_WEIGHTS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


class NotAGraph(Exception):
    """A set of nodes that cannot stand as a module of its own (it needs a non-tensor value)."""


def functional(program: ExportedProgram) -> ExportedProgram:
    """``program`` at the level reduction cuts: functional, nothing decomposed."""
    return decompose(program, {})


def count_nodes(program: ExportedProgram) -> int:
    """The ``call_function`` nodes of ``program`` made :func:`functional`."""
    return sum(n.op == "call_function" for n in functional(program).graph.nodes)


@dataclass
class Recorded:
    """The functional graph, its nodes in order, and eager's value at each node and placeholder."""

    module: fx.GraphModule
    graph: fx.Graph
    nodes: list[fx.Node]
    values: dict[str, Any]
    weights: frozenset[str]  # placeholders that are parameters, buffers or constants
    outputs: list[fx.Node]  # the user outputs that are nodes, in output order

    @property
    def names(self) -> list[str]:
        return [n.name for n in self.nodes]

    def node(self, name: str) -> fx.Node:
        return self._by_name[name]

    def __post_init__(self) -> None:
        self._by_name = {n.name: n for n in self.graph.nodes}

    def cone(self, outputs: Iterable[str]) -> set[str]:
        """The nodes that ``outputs`` depend on, themselves included."""
        seen: set[str] = set()
        todo = [self.node(n) for n in outputs]
        while todo:
            node = todo.pop()
            if node.name in seen or node.op != "call_function":
                continue
            seen.add(node.name)
            todo.extend(node.all_input_nodes)
        return seen

    def ordered(self, keep: Iterable[str]) -> list[str]:
        """``keep`` in the graph's order."""
        chosen = set(keep)
        return [n for n in self.names if n in chosen]

    def sinks(self, keep: Iterable[str]) -> list[str]:
        """The subgraph's outputs: the tensor nodes of ``keep`` that no node of ``keep`` uses,
        and those the model returns."""
        chosen = set(keep)
        returned = {n.name for n in self.outputs}
        return [n for n in self.ordered(chosen)
                if isinstance(self.values[n], torch.Tensor)
                and (n in returned or not any(u.name in chosen for u in self.node(n).users))]

    def op(self, name: str) -> str:
        """The op of node ``name`` as Torch names it (``aten.sub.Tensor``)."""
        return op_name(self.node(name).target, module=True)


def record(program: ExportedProgram, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Recorded:
    """Make ``program`` :func:`functional` and run its graph with PyTorch, keeping every node's
    value."""
    program = functional(program)
    gm = program.graph_module
    users = iter(fx_pytree.tree_flatten_spec((tuple(args), dict(kwargs)), program.call_spec.in_spec))
    constants = {**program.state_dict, **program.constants}
    flat, weights = [], set()
    for spec in program.graph_signature.input_specs:
        if spec.kind is InputKind.USER_INPUT:
            flat.append(next(users))
        elif spec.kind in _WEIGHTS:
            flat.append(constants[spec.target])
            weights.add(spec.arg.name)
        else:
            raise NotAGraph(f"the exported program takes a {spec.kind.name.lower()} input")
    if any(n.op in ("get_attr", "call_module", "call_method") for n in gm.graph.nodes):
        raise NotAGraph("the exported graph holds submodules or attributes (control flow), "
                        "which reduction does not cut")
    values = _run(gm, flat)
    user_outputs = {s.arg.name for s in program.graph_signature.output_specs
                    if s.kind.name == "USER_OUTPUT" and hasattr(s.arg, "name")}
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    outputs = [n for n in pytree.tree_leaves(out.args)
               if isinstance(n, fx.Node) and n.name in user_outputs and n.op == "call_function"]
    return Recorded(gm, gm.graph, [n for n in gm.graph.nodes if n.op == "call_function"], values,
                    frozenset(weights), outputs)


def _run(gm: fx.GraphModule, flat: list[Any]) -> dict[str, Any]:
    """Every node's value (placeholders included) with ``flat`` fed to the placeholders."""
    values: dict[str, Any] = {}

    class Keep(fx.Interpreter):
        def run_node(self, n: fx.Node) -> Any:
            values[n.name] = result = super().run_node(n)
            return result

    with torch.no_grad():
        Keep(gm).run(*flat)
    return values


def replay(rec: Recorded, weights: Mapping[str, torch.Tensor]) -> dict[str, Any]:
    """Eager's value at every node with the model's weights (by placeholder name) replaced by
    ``weights``, on the recorded user inputs: the activations the case's own inputs give
    without the model's real weights."""
    placeholders = [n.name for n in rec.graph.nodes if n.op == "placeholder"]
    return _run(rec.module, [weights.get(n, rec.values[n]) for n in placeholders])


@dataclass
class Subgraph:
    """A set of nodes as a module: its graph, inputs (eager's values), weights and outputs."""

    module: fx.GraphModule
    inputs: list[torch.Tensor]
    weights: dict[str, torch.Tensor]
    outputs: list[str]  # the recorded nodes each output is, in order

    def export(self) -> ExportedProgram:
        """The subgraph exported as its zoo file's module is: a plain module around the graph, on
        copies of the inputs (as the zoo file loads them: a recorded value may be a view of
        another dtype's storage, which export's guards cannot follow)."""
        return torch.export.export(_Calls(self.module), tuple(t.clone() for t in self.inputs))

    def code(self) -> str:
        """The module's ``forward`` as Python source over ``torch.ops.aten``, without the
        statements that free each value after its last use."""
        return _FREES.sub("", self.module.code.strip())


class _Calls(torch.nn.Module):
    def __init__(self, inner: fx.GraphModule) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args: torch.Tensor) -> Any:
        return self.inner(*args)


def subgraph(rec: Recorded, keep: Iterable[str], values: Mapping[str, Any] | None = None
             ) -> Subgraph:
    """The nodes ``keep`` as a module, fed eager's recorded values (or ``values``, by node
    name: a :func:`replay`'s); :class:`NotAGraph` if one needs a non-tensor input."""
    fed = rec.values if values is None else values
    chosen = rec.ordered(keep)
    outputs = rec.sinks(chosen)
    if not outputs:
        raise NotAGraph("no tensor output")
    graph = fx.Graph()
    env: dict[str, fx.Node] = {}
    inputs: list[torch.Tensor] = []
    weights: dict[str, torch.Tensor] = {}
    inside = set(chosen)
    feeds: dict[str, torch.Tensor] = {}  # placeholders first, in the order the nodes need them
    for name in chosen:
        for arg in rec.node(name).all_input_nodes:
            if arg.name in inside or arg.name in feeds:
                continue
            value = fed[arg.name]
            if not isinstance(value, torch.Tensor):
                raise NotAGraph(f"{name} needs {arg.name}, which is not a tensor")
            feeds[arg.name] = value
    for source, value in feeds.items():
        if source in rec.weights:
            attr = f"w{len(weights)}"
            weights[attr] = value
            env[source] = graph.get_attr(attr)
        else:
            env[source] = graph.placeholder(f"x{len(inputs)}")
            inputs.append(value)
    for name in chosen:
        node = rec.node(name)
        env[name] = graph.node_copy(node, lambda n: env[n.name])
        env[name].meta = {}
    graph.output(tuple(env[n] for n in outputs))
    root = torch.nn.Module()
    for attr, value in weights.items():
        root.register_buffer(attr, value)
    module = fx.GraphModule(root, graph, class_name="Reduced")
    return Subgraph(module, inputs, weights, outputs)


_FREES = re.compile(r";\s+(?:\w+ = )+None$", re.MULTILINE)
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A folder name of ``[A-Za-z0-9._-]`` (artifact uploads refuse ``:``, ``[``, ``/``)."""
    return _SAFE.sub("-", text).strip("-.") or "case"
