"""The emulated engine at call time: the lowered graph, called with the user's values.

:class:`Lowered` plays the part of Torch-TensorRT's runtime module and of the auxiliary
Torch blocks of the autocast RFC: complex inputs go through ``torch.view_as_real``, inputs
are cast to the engine's dtypes (as new tensors, so the caller's tensors are never modified
or re-typed), and outputs are cast back to eager's dtypes, complex ones rebuilt as complex.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from trtcheck.emulation.dtype_policy import WRAPPED
from trtcheck.emulation.graph import KIND_NAMES, dtype_name, dtype_of, output_node
from trtcheck.errors import Unsupported, last_line


def to_engine(value: Any, dtype: torch.dtype | None) -> Any:
    """A caller's value as the engine takes it: complex as a real ``(..., 2)`` view, then cast.

    ``Tensor.to`` returns a new tensor whenever the dtype changes, so the caller's
    tensor is never re-typed in place.
    """
    if not isinstance(value, torch.Tensor):
        return value
    if value.is_complex():
        value = torch.view_as_real(value.resolve_conj())
    return value if dtype is None else value.to(dtype)


NOT_NARROWED: Mapping[torch.dtype, torch.dtype] = {}


def from_engine(value: Any, eager: Any,
                narrowed: Mapping[torch.dtype, torch.dtype] = NOT_NARROWED) -> Any:
    """An engine value back in eager's dtype (or the narrower one ``narrowed`` maps it to);
    a real ``(..., 2)`` view back to complex."""
    if not isinstance(value, torch.Tensor) or not isinstance(eager, torch.Tensor):
        return value
    dtype = narrowed.get(eager.dtype, eager.dtype)
    if dtype.is_complex:
        return torch.view_as_complex(value.to(dtype.to_real()).contiguous())
    return value.to(dtype)


def describe(role: str, source: Any, dest: Any) -> str | None:
    """One ``casts`` line for a boundary value whose dtype or layout changes, else None."""
    if not isinstance(source, torch.Tensor) or not isinstance(dest, torch.Tensor):
        return None
    before, after = dtype_name(source.dtype), dtype_name(dest.dtype)
    if source.dtype.is_complex:
        after += " (..., 2)"
    elif dest.dtype.is_complex:
        before += " (..., 2)"
    elif source.dtype == dest.dtype:
        return None
    return f"{role}: {before} -> {after}"


def user_input_names(program: ExportedProgram) -> list[str]:
    """The placeholder names of the user's inputs, in call order."""
    specs = program.graph_signature.input_specs
    return [s.arg.name for s in specs if s.kind == InputKind.USER_INPUT]


def flatten_inputs(program: ExportedProgram, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> list[Any]:
    """The user's (args, kwargs) flattened in the order of the program's user inputs."""
    in_spec = program.call_spec.in_spec
    _, kw_template = pytree.tree_unflatten([None] * in_spec.num_leaves, in_spec)
    if set(kwargs) != set(kw_template):
        raise TypeError(
            f"keyword arguments {sorted(kwargs)} do not match the exported {sorted(kw_template)}"
        )
    flat, spec = pytree.tree_flatten((tuple(args), {k: kwargs[k] for k in kw_template}))
    if spec != in_spec:
        raise TypeError(f"arguments do not match the exported signature {in_spec}")
    return flat


def _lifted_value(program: ExportedProgram, target: str) -> Any:
    if target in program.state_dict:
        return program.state_dict[target]
    return program.constants[target]


class Lowered:
    """The lowered program, callable with the user's (args, kwargs) like ``program.module()``.

    ``graph_module`` is the "engine" graph: real dtypes only (complex values as
    ``(..., 2)`` tensors), int32/float32 where the policy says so, with all parameters,
    buffers and constants as leading placeholders.
    """

    def __init__(self, graph_module: fx.GraphModule, program: ExportedProgram,
                 returned: Mapping[torch.dtype, torch.dtype] = NOT_NARROWED) -> None:
        self.graph_module = graph_module
        self._returned = returned
        self.evidence: dict[str, Any] = {}
        self._program = program
        signature = program.graph_signature
        if any(s.kind == InputKind.TOKEN for s in signature.input_specs):
            raise Unsupported("effect tokens (side-effecting ops) are not emulated")
        engine = [n.meta.get("val") for n in graph_module.graph.nodes if n.op == "placeholder"]
        eager = [n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder"]
        self._inputs = list(zip(signature.input_specs, eager, engine, strict=True))
        self._lifted = {
            spec.target: to_engine(_lifted_value(program, spec.target), dtype_of(val))
            for spec, _, val in self._inputs
            if spec.kind != InputKind.USER_INPUT
        }
        self._user_index = {name: i for i, name in enumerate(user_input_names(program))}
        self._outputs = list(zip(signature.output_specs, _outputs(program.graph),
                                 _outputs(graph_module.graph), strict=True))

    def boundary_casts(self) -> list[str]:
        """The casts at the engine's boundary: inputs on entry, outputs on the way out."""
        lines = [describe(f"{'input' if s.kind == InputKind.USER_INPUT else KIND_NAMES[s.kind]}"
                          f" {s.arg.name}", eager, engine)
                 for s, eager, engine in self._inputs]
        user = 0
        for spec, eager, engine in self._outputs:
            if spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION):
                role = f"mutation of {spec.target}"
            else:
                role, user = f"output {user}", user + 1
            lines.append(describe(role, engine, eager))
        return [line for line in lines if line]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat = flatten_inputs(self._program, args, kwargs)
        values = []
        for spec, _, engine in self._inputs:
            if spec.kind == InputKind.USER_INPUT:
                values.append(to_engine(flat[self._user_index[spec.arg.name]], dtype_of(engine)))
            else:
                values.append(self._lifted[spec.target])
        try:
            results = self.graph_module(*values)
        except Exception as exc:
            wrapped = self.graph_module.meta.get(WRAPPED)
            if not wrapped:
                raise
            # Promise 4: a loss of int64 values is named as the overflow it is.
            raise OverflowError(f"int64 constants outside the int32 range wrap under int64 = "
                                f"\"int32\", as TensorRT truncates them: {'; '.join(wrapped)}; "
                                f"then {last_line(exc)}") from exc
        user_outputs = []
        for (spec, eager, _), value in zip(self._outputs, results, strict=True):
            if spec.kind == OutputKind.BUFFER_MUTATION:
                self._lifted[spec.target] = value
            elif spec.kind == OutputKind.USER_INPUT_MUTATION:
                # eager mutates the caller's tensor in place; so does the lowered module
                flat[self._user_index[spec.target]].copy_(from_engine(value, eager))
            else:
                user_outputs.append(from_engine(value, eager, self._returned))
        return pytree.tree_unflatten(user_outputs, self._program.call_spec.out_spec)


def _outputs(graph: fx.Graph) -> list[Any]:
    return [a.meta.get("val") if isinstance(a, fx.Node) else a
            for a in output_node(graph).args[0]]
