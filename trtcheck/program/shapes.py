"""The shapes a case runs at: its example shape, and the ends of each dynamic dimension it declares.

``torch.export`` records each declared ``Dim`` as a symbol with a range (``range_constraints``)
and each input's dimensions as expressions of those symbols. :func:`plan_shapes` picks, besides
the example, every symbol at its lowest and at its highest value (twice the example for a ``Dim``
declared without a max, so that an unbounded one stays small), and keeps only the assignments the
program's own input checks accept. :func:`resize` makes inputs of such a shape from the example
inputs, by cropping and tiling their values (so ids stay valid ids).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy
import torch
from torch.export import ExportedProgram
from torch.export._tree_utils import reorder_kwargs
from torch.utils import _pytree as pytree

Shape = tuple[int, ...]
Inputs = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True)
class ShapeRange:
    """A dynamic input's shapes for Torch-TensorRT's ``Input``: lowest, example (opt), highest."""

    min_shape: Shape
    opt_shape: Shape
    max_shape: Shape
    dtype: torch.dtype


@dataclass(frozen=True)
class ShapeSet:
    """One assignment of the program's dynamic dimensions: every input's shape under it."""

    name: str  # "example", "min", "max"
    shapes: dict[str, Shape]  # by the program's input name

    def describe(self) -> str:
        """``x=(2, 8), ids=(2, 8)``: what a message names."""
        return ", ".join(f"{k}=({', '.join(map(str, s))}{',' if len(s) == 1 else ''})"
                         for k, s in self.shapes.items())

    def to_dict(self) -> dict[str, list[int]]:
        return {k: list(s) for k, s in self.shapes.items()}


@dataclass(frozen=True)
class ShapePlan:
    """The shape sets a case runs at (the example first) and each dynamic input's range."""

    sets: tuple[ShapeSet, ...]
    ranges: dict[str, ShapeRange]  # the dynamic inputs', by input name

    @property
    def dynamic(self) -> bool:
        return len(self.sets) > 1


def _user_inputs(program: ExportedProgram) -> list[torch.fx.Node]:
    names = set(program.graph_signature.user_inputs)
    return [n for n in program.graph.nodes if n.op == "placeholder" and n.name in names]


def _leaves(program: ExportedProgram, inputs: Inputs) -> list[Any]:
    """The inputs' leaves in the order of the program's placeholders."""
    args, kwargs = inputs
    return pytree.tree_leaves((tuple(args), reorder_kwargs(kwargs, program.call_spec.in_spec)))


def _expr(dim: Any) -> sympy.Expr:
    return dim.node.expr if isinstance(dim, torch.SymInt) else sympy.Integer(int(dim))


def plan_shapes(program: ExportedProgram, inputs: Inputs) -> ShapePlan:
    """The example shapes, then the lowest and the highest of every declared range."""
    nodes = _user_inputs(program)
    leaves = _leaves(program, inputs)
    example = ShapeSet("example", {n.name: tuple(v.shape) for n, v in zip(nodes, leaves, strict=False)
                                   if isinstance(v, torch.Tensor)})
    tensors = [v for v in leaves if isinstance(v, torch.Tensor)]
    static = ShapePlan((example,), {})
    if len(nodes) != len(leaves):
        return static
    symbols = {s: r for s, r in program.range_constraints.items() if isinstance(s, sympy.Symbol)}
    values: dict[sympy.Symbol, int] = {}
    dims: list[tuple[str, list[sympy.Expr]]] = []
    for node, leaf in zip(nodes, leaves, strict=True):
        val = node.meta.get("val")
        if not (isinstance(val, torch.Tensor) and isinstance(leaf, torch.Tensor)):
            continue
        exprs = [_expr(d) for d in val.shape]
        dims.append((node.name, exprs))
        for expr, size in zip(exprs, leaf.shape, strict=True):
            if isinstance(expr, sympy.Symbol):
                values[expr] = int(size)
    free = [s for s in symbols if s in values]
    if not free:
        return static

    def lowest(s: sympy.Symbol) -> int:
        return max(int(symbols[s].lower), 1)

    def highest(s: sympy.Symbol) -> int:
        """The declared max; twice the example (at least the lowest) for a Dim without one."""
        upper = symbols[s].upper
        return int(upper) if getattr(upper, "is_Integer", False) else max(2 * values[s], lowest(s))

    sets = [example]
    for name, pick in (("min", lowest), ("max", highest)):
        assigned = {s: pick(s) for s in free}
        shapes = {n: tuple(int(e.subs({**values, **assigned})) for e in exprs) for n, exprs in dims}
        candidate = ShapeSet(name, shapes)
        if all(candidate.shapes != s.shapes for s in sets) and _accepted(program, inputs, candidate):
            sets.append(candidate)
    if len(sets) == 1:
        return static
    low = sets[1] if sets[1].name == "min" else example
    high = sets[-1] if sets[-1].name == "max" else example
    ranges = {name: ShapeRange(low.shapes[name], shape, high.shapes[name], leaf.dtype)
              for (name, shape), leaf in zip(example.shapes.items(), tensors, strict=True)
              if not low.shapes[name] == shape == high.shapes[name]}
    return ShapePlan(tuple(sets), ranges)


def _accepted(program: ExportedProgram, inputs: Inputs, shapes: ShapeSet) -> bool:
    """Whether the program's own input checks accept inputs of these shapes."""
    args, kwargs = resize(program, inputs, shapes, empty=True)
    flat, _ = pytree.tree_flatten_with_path((args, reorder_kwargs(kwargs, program.call_spec.in_spec)))
    try:
        program._check_input_constraints(flat)
    except Exception:
        return False
    return True


def resize(program: ExportedProgram, inputs: Inputs, shapes: ShapeSet, empty: bool = False) -> Inputs:
    """The example inputs at ``shapes``: each tensor cropped, or tiled then cropped, along each
    dimension, so its values stay the kind the model was given; ``empty`` leaves them unset."""
    def fit(name: str, leaf: torch.Tensor) -> Any:
        shape = shapes.shapes.get(name)
        if shape is None or tuple(leaf.shape) == shape:
            return leaf
        if empty:
            return torch.empty(shape, dtype=leaf.dtype, device=leaf.device)
        return _fit(leaf, shape)

    return map_inputs(program, inputs, fit)


def map_inputs(program: ExportedProgram, inputs: Inputs,
               fn: Callable[[str, torch.Tensor], Any]) -> Inputs:
    """``inputs`` with each tensor replaced by ``fn(its input name, it)``."""
    names = iter(n.name for n in _user_inputs(program))
    args, kwargs = inputs
    leaves, spec = pytree.tree_flatten((tuple(args), reorder_kwargs(kwargs, program.call_spec.in_spec)))
    out = [fn(name, leaf) if isinstance(leaf, torch.Tensor) else leaf
           for leaf, name in zip(leaves, names, strict=False)]
    new_args, new_kwargs = pytree.tree_unflatten(out, spec)
    return new_args, {k: new_kwargs[k] for k in kwargs}


def _fit(tensor: torch.Tensor, shape: Shape) -> torch.Tensor:
    repeats = [max(1, math.ceil(want / have)) if have else 1
               for want, have in zip(shape, tensor.shape, strict=True)]
    tiled = tensor.repeat(*repeats) if any(r > 1 for r in repeats) else tensor
    index = tuple(slice(0, n) for n in shape)
    return tiled[index].clone().contiguous()


def shapes_record(plan: ShapePlan, ran: int) -> list[dict[str, list[int]]] | None:
    """What a row records under ``shapes``: the first ``ran`` sets of a dynamic plan, else None."""
    return [s.to_dict() for s in plan.sets[:ran]] if plan.dynamic else None
