"""The graph-level (dryrun) compile of a Torch-TensorRT release, made to behave like a real one.

``dynamo.compile(..., dryrun=True)`` runs the release's real lowering and partitioning and builds
no engine; :func:`compiled` runs it as a real compile goes (:meth:`.release.Release.as_real`, its
early return) and then applies to each TensorRT block what conversion and the engine would do and
dryrun skips (:func:`as_engines`): a complex value left in a block, float64 without
``truncate_double``, the engine's input checks and output dtypes. Each block then runs with
PyTorch (:class:`Engine`). A prediction at the graph level; no converter runs here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.lowering.release import Rejected, Release, node_value
from trtcheck.backends.torch_tensorrt.inspection import partition_summary
from trtcheck.tensors import op_name

_COMPLEX_TO_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64,
                    torch.complex32: torch.float16}


def compiled(release: Release, program: torch.export.ExportedProgram, call: dict[str, Any],
            settings: dict[str, Any], device: str) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The compiled module, and evidence: partition, notes, the early return if taken."""
    seen: dict[str, Any] = {}
    module, notes = release.compile(program, call, settings, seen, dryrun=True)
    if "early_return" in seen:
        notes.append(seen["early_return"])
    else:
        notes += as_engines(release, module, bool(seen["settings"].truncate_double))
    module = module.to(device)
    split = partition_summary(module)
    return module, {"notes": notes, "engines": split.engines, "fallbacks": split.fallbacks,
                    "boundaries": split.boundaries}


class Engine(torch.nn.Module):
    """A TensorRT block run by PyTorch, with the input checks and output dtypes of an engine."""

    def __init__(self, block: torch.fx.GraphModule, inputs: list[tuple[str, torch.dtype | None]],
                 outputs: list[torch.dtype | None], where: str) -> None:
        super().__init__()
        self.block = block
        self.inputs = inputs
        self.outputs = outputs
        self.where = where

    def forward(self, *args: Any) -> Any:
        for (name, expected), value in zip(self.inputs, args, strict=False):
            if isinstance(value, torch.Tensor) and expected is not None and value.dtype != expected:
                # The runtime's own check, with its own message (self.where).
                raise AssertionError(f"Dtype mismatch for input {name}. Expect {expected}, got "
                                     f"{value.dtype}. [{self.where}]")
        result = self.block(*args)
        leaves, spec = pytree.tree_flatten(result)
        cast = [leaf.to(dtype) if isinstance(leaf, torch.Tensor) and dtype is not None else leaf
                for leaf, dtype in zip(leaves, self.outputs, strict=False)]
        return pytree.tree_unflatten(cast, spec)



def _engine_dtype(dtype: torch.dtype) -> torch.dtype:
    """An engine tensor's dtype: complex as its real layout; float64 as float32 (inputs: repaired by
    truncate_double, or refused before this; outputs: built as float32 by ``use_default``)."""
    dtype = _COMPLEX_TO_REAL.get(dtype, dtype)
    return torch.float32 if dtype == torch.float64 else dtype


def _fetch(module: torch.nn.Module, target: str) -> Any:
    owner = module
    for part in target.split("."):
        owner = getattr(owner, part)
    return owner


def _set(module: torch.nn.Module, target: str, value: torch.Tensor) -> None:
    *path, name = target.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    if isinstance(getattr(owner, name), torch.nn.Parameter):
        value = torch.nn.Parameter(value, requires_grad=False)
    setattr(owner, name, value)


def _doubles(block: torch.fx.GraphModule) -> Iterator[str]:
    """The float64 (or complex128) values a TensorRT block holds, named for a message."""
    for node in block.graph.nodes:
        if node.op == "get_attr":
            value = _fetch(block, str(node.target))
            if isinstance(value, torch.Tensor) and value.dtype in (torch.float64, torch.complex128):
                yield f"constant {node.target}"
        elif node.op in ("placeholder", "call_function"):
            val = node_value(node)
            if isinstance(val, torch.Tensor) and val.dtype in (torch.float64, torch.complex128):
                kind = "input" if node.op == "placeholder" else f"result of {op_name(node.target)}"
                yield f"{kind} {node.name}"


def _complex(block: torch.fx.GraphModule) -> Iterator[tuple[str, str]]:
    """Complex values in a TensorRT block: ``("scalar", "1j in aten.add.Tensor add")`` for a
    Python complex argument, ``("tensor", "complex64 constant weights")`` for a complex tensor."""
    for node in block.graph.nodes:
        if node.op == "call_function":
            for arg in pytree.tree_leaves((node.args, node.kwargs)):
                if isinstance(arg, complex):
                    yield "scalar", f"{arg!r} in {op_name(node.target)} {node.name}"
        value = _fetch(block, str(node.target)) if node.op == "get_attr" else node_value(node)
        if isinstance(value, torch.Tensor) and value.is_complex():
            yield "tensor", f"{value.dtype} {'constant' if node.op == 'get_attr' else node.op} {node.name}"




def as_engines(release: Release, module: torch.nn.Module, truncate: bool) -> list[str]:
    """Apply to each TensorRT block of ``module`` what conversion and the engine would do and dryrun
    skips."""
    notes: list[str] = []
    cite = release.sources.cite
    constant = cite("TensorRT does not support float64", "converter_utils.py")
    truncation = cite("input_val = input_val.to(torch.float32)", "converter_utils.py")
    runtime = cite("Dtype mismatch for", "dynamo/runtime/_TRTEngine.py",
                   "dynamo/runtime/_PythonTorchTensorRTModule.py")
    default = cite("return trt.DataType.FLOAT", "_enums.py")
    scalar = cite("Cannot convert {input_val} to TRT constant", "converter_utils.py")
    unmapped = cite("Provided an unsupported data type as a data type for translation", "_enums.py")
    for name, block in list(module.named_children()):
        if not (name.startswith("_run_on_acc") and isinstance(block, torch.fx.GraphModule)):
            continue
        for kind, what in _complex(block):
            # What converting the block would raise: get_trt_tensor takes no Python complex,
            # and torch_tensorrt.dtype has no complex member.
            if kind == "scalar":
                raise AssertionError(f"Cannot convert {what.split()[0]} to TRT constant: a complex "
                                     f"Python scalar left in TensorRT block {name} ({what}) by the "
                                     f"complex rewrite; conversion fails there ({scalar})")
            raise TypeError(f"Provided an unsupported data type as a data type for translation: "
                            f"{what} left in TensorRT block {name} by the complex rewrite; "
                            f"TensorRT has no complex dtype ({unmapped})")
        doubles = list(dict.fromkeys(_doubles(block)))
        if doubles and not truncate:
            raise Rejected(
                f"TensorRT has no FP64: TensorRT block {name} holds float64 "
                f"({', '.join(doubles[:4])}{', …' if len(doubles) > 4 else ''}) and truncate_double "
                f"is off; Torch-TensorRT {release.version} refuses float64 constants (\"TensorRT does "
                f"not support float64 (double) precision\", {constant}) and builds float64 inputs "
                f"as float32 engine inputs that its runtime refuses ({runtime})")
        if truncate:
            for node in block.graph.nodes:
                value = _fetch(block, str(node.target)) if node.op == "get_attr" else None
                if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
                    _set(block, str(node.target), value.to(torch.float32))
                    notes.append(f"float64 constant {node.target} in {name} truncated to float32 "
                                 f"(truncate_double, {truncation})")
        inputs = [(n.name, _engine_dtype(node_value(n).dtype)
                   if isinstance(node_value(n), torch.Tensor) else None)
                  for n in block.graph.nodes if n.op == "placeholder"]
        (output,) = [n for n in block.graph.nodes if n.op == "output"]
        outputs = [_engine_dtype(node_value(n).dtype)
                   if isinstance(n, torch.fx.Node) and isinstance(node_value(n), torch.Tensor) else None
                   for n in pytree.tree_leaves(output.args)]
        made = [n.name for n in pytree.tree_leaves(output.args)
                if isinstance(n, torch.fx.Node) and isinstance(node_value(n), torch.Tensor)
                and node_value(n).dtype == torch.float64]
        if made:
            notes.append(f"{name} outputs {', '.join(made)} as float32: TensorRT builds float64 "
                         f"outputs as float32 ({default})")
        setattr(module, name, Engine(block, inputs, outputs, runtime))
    return notes

