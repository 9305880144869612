"""Which ATen ops reach TensorRT, from the committed table of one Torch-TensorRT release.

Torch-TensorRT refuses float64 only inside TensorRT blocks: an op with no converter, or whose
converter's validator refuses the node, runs in PyTorch, where float64 is fine. ``emulate`` runs
where Torch-TensorRT's code is not available, so it reads ``converters.json``, generated from
that release's real converter registry by ``python -m trtcheck.backends.lowering.converter_table``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import fx
from torch.fx.experimental.proxy_tensor import make_fx

TABLE = Path(__file__).with_name("converters.json")


@dataclass(frozen=True)
class ConverterTable:
    """The converters and decompositions of one Torch-TensorRT release."""

    release: str
    converters: Mapping[str, Mapping[str, Any]]
    decomposed: frozenset[str]

    @property
    def source(self) -> str:
        """Where the table comes from, for a row's evidence."""
        return f"Torch-TensorRT {self.release}'s converter registry (trtcheck/emulation/{TABLE.name})"

    def reaches_tensorrt(self, node: fx.Node) -> str | None:
        """Why this node would be converted to TensorRT, or None if it runs in PyTorch.

        A validator that refused the probe shaped like this node (its input and dtype argument),
        and accepted another, keeps the node in PyTorch; one the probes could not tell about is
        taken to accept it, as it does the nodes it was written for. An op the release
        decomposes is taken to become ops it converts."""
        target = node.target
        if not isinstance(target, torch._ops.OpOverload):
            return None
        name = str(target)
        entry = self.converters.get(name) or self.converters.get(str(target.overloadpacket))
        if entry is None and name in self.decomposed:
            return f"Torch-TensorRT {self.release} decomposes {name} before partitioning"
        if entry is None and _composite(target):
            # decomposed by every run_decompositions (aten.to.dtype becomes aten._to_copy)
            parts = _decompose(node)
            if parts is None:
                return f"Torch-TensorRT {self.release} decomposes {name} before partitioning"
            return next((f"{name} becomes {part.target} and {why}" for part in parts
                         if (why := self.reaches_tensorrt(part))), None)
        if entry is None:
            return None
        accepts = entry["accepts"]
        if accepts.get(node_key(node)) is False and any(accepts.values()):
            return None
        return f"Torch-TensorRT {self.release} converts {name}"


def _composite(target: torch._ops.OpOverload) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), "CompositeImplicitAutograd")


def _decompose(node: fx.Node) -> list[fx.Node] | None:
    """The ATen nodes a composite op's node becomes, traced on meta tensors; None if it cannot be
    traced here (symbolic sizes)."""
    def meta(value: Any) -> Any:
        if isinstance(value, fx.Node):
            value = value.meta.get("val")
            if not isinstance(value, torch.Tensor):
                raise TypeError("not a tensor")
            return torch.empty([int(d) for d in value.shape], dtype=value.dtype, device="meta")
        return value

    try:
        args, kwargs = fx.node.map_aggregate((node.args, node.kwargs), meta)
        traced = make_fx(lambda *a: node.target(*a, **kwargs))(*args)
    except Exception:  # a symbolic size, a non-tensor input: cannot tell here
        return None
    return [n for n in traced.graph.nodes if n.op == "call_function"]


def probe_key(source: torch.dtype | None, dtype: torch.dtype | None) -> str:
    """``float64>float32``: a node's tensor dtype and its dtype argument (``-`` for none)."""
    return ">".join(str(d).removeprefix("torch.") if d is not None else "-" for d in (source, dtype))


def node_key(node: fx.Node) -> str:
    """The :func:`probe_key` of a node: its first tensor input's dtype and its dtype argument."""
    source = next((v.dtype for i in node.all_input_nodes
                   if isinstance(v := i.meta.get("val"), torch.Tensor)), None)
    dtype = next((a for a in (*node.args, *node.kwargs.values()) if isinstance(a, torch.dtype)),
                 None)
    return probe_key(source, dtype)


@functools.cache
def table() -> ConverterTable:
    """The committed table."""
    data = json.loads(TABLE.read_text())
    return ConverterTable(data["release"], data["converters"], frozenset(data["decomposed"]))
