"""The Reduce layer of the behaving TensorRT stand-in (operators/Reduce.html): NOT TensorRT."""

from __future__ import annotations

import math
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, mask_axes, volume_of, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import DataType, LayerType, ReduceOperation


@layer(LayerType.REDUCE, "add_reduce",
       attributes=("axes", "keep_dims", "op"))
class IReduceLayer(ILayer):
    """``tensorrt.IReduceLayer`` (Layers.html#ireducelayer; operators/Reduce.html)."""

    _TYPES = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.INT32, DataType.INT64})

    def __init__(self, network: INetworkDefinition, input: ITensor, op: Any, axes: int,
                 keep_dims: bool) -> None:
        super().__init__(network, [input])
        self.op = op
        self.axes = axes
        self.keep_dims = keep_dims

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        check_type("IReduceLayer", "input", meta.dtype, self._TYPES)
        axes = mask_axes(self.axes, meta.rank)
        shape = tuple(1 if i in axes else d for i, d in enumerate(meta.shape)) if self.keep_dims else \
            tuple(d for i, d in enumerate(meta.shape) if i not in axes)
        value = None
        if meta.value is not None and meta.rank == 1 and axes == [0] and None not in meta.value:
            fn = {ReduceOperation.SUM: sum, ReduceOperation.PROD: math.prod, ReduceOperation.MAX: max,
                  ReduceOperation.MIN: min}.get(self.op)
            value = (fn(meta.value),) if fn and meta.value else None  # type: ignore[operator]
        return [with_value(shape, meta.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        axes = mask_axes(self.axes, x.dim())
        if not axes:
            return [x]
        op = self.op
        if op == ReduceOperation.SUM:
            out = x.sum(axes, keepdim=self.keep_dims, dtype=x.dtype)
        elif op == ReduceOperation.AVG:
            out = x.mean(axes, keepdim=True) if x.is_floating_point() else \
                torch.div(x.sum(axes, keepdim=True), volume_of([x.shape[a] for a in axes]),
                          rounding_mode="trunc")
            out = out if self.keep_dims else out.squeeze(axes)
        elif op == ReduceOperation.PROD:
            out = x
            for a in sorted(axes, reverse=True):
                out = out.prod(a, keepdim=True)
            out = out if self.keep_dims else out.squeeze(axes)
        elif x.numel() == 0:  # MAX/MIN over nothing: the identity, -inf or +inf (or the int bounds)
            shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
            lowest = op == ReduceOperation.MAX
            fill = (-math.inf if lowest else math.inf) if x.is_floating_point() else \
                (torch.iinfo(x.dtype).min if lowest else torch.iinfo(x.dtype).max)
            out = torch.full(shape, fill, dtype=x.dtype, device=x.device)
            out = out if self.keep_dims else out.squeeze(axes)
        else:
            fn = torch.amax if op == ReduceOperation.MAX else torch.amin
            out = fn(x, axes, keepdim=self.keep_dims)
        return [out.to(x.dtype)]
