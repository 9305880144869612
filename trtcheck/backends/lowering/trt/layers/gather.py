"""The Gather layer of the behaving TensorRT stand-in (operators/Gather.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.assumptions import OUT_OF_BOUNDS, assume
from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, with_value
from trtcheck.backends.lowering.trt.network import (
    ILayer,
    INetworkDefinition,
    ITensor,
    LayerError,
    Meta,
    Value,
)
from trtcheck.backends.lowering.trt.types import INTS, GatherMode, LayerType


def _index_value(data: Meta, index: Meta) -> Value | None:
    if data.value is None or index.value is None or data.rank != 1:
        return None
    out = []
    for i in index.value:
        out.append(None if i is None or not -len(data.value) <= i < len(data.value) else data.value[i])
    return tuple(out)


def _gather_v2(cls: type[IGatherLayer], network: INetworkDefinition, input: ITensor, indices: ITensor,
               mode: Any) -> IGatherLayer:
    """``add_gather_v2(input, indices, mode)``: the axis is 0 until set."""
    return cls(network, input, indices, 0, mode)


@layer(LayerType.GATHER, "add_gather", ("add_gather_v2", _gather_v2),
       attributes=("axis", "mode", "num_elementwise_dims"))
class IGatherLayer(ILayer):
    """``tensorrt.IGatherLayer`` (Layers.html#igatherlayer; operators/Gather.html): DEFAULT,
    ELEMENT and ND modes; indices INT32 or INT64."""


    def __init__(self, network: INetworkDefinition, input: ITensor, indices: ITensor, axis: int = 0,
                 mode: Any = GatherMode.DEFAULT) -> None:
        super().__init__(network, [input, indices])
        self.axis = axis
        self.mode = mode
        self.num_elementwise_dims = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        data, index = ins[0], ins[1]
        assert data is not None and index is not None
        check_type("IGatherLayer", "indices", index.dtype, INTS)
        if self.mode == GatherMode.ELEMENT:
            return [Meta(index.shape, data.dtype)]
        if self.mode == GatherMode.ND:
            b = self.num_elementwise_dims
            last = index.shape[-1]
            if last < 0:
                raise LayerError("Error Code 4: API Usage Error (IGatherLayer ND: the last dimension "
                                 "of the indices must be known at build time)")
            return [Meta(index.shape[:-1] + data.shape[b + last:], data.dtype)]
        axis = self.axis % data.rank
        b = self.num_elementwise_dims
        shape = data.shape[:axis] + index.shape[b:] + data.shape[axis + 1:]
        value = _index_value(data, index) if axis == 0 else None
        return [with_value(shape, data.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        data, index = ins[0], ins[1].long()
        if self.mode == GatherMode.ELEMENT:
            axis = self.axis % data.dim()
            return [torch.gather(data, axis, torch.where(index < 0, index + data.shape[axis], index))]
        if self.mode == GatherMode.ND:
            b = self.num_elementwise_dims
            last = index.shape[-1]
            if b:
                batch = data.shape[:b]
                flat_data = data.reshape(-1, *data.shape[b:])
                flat_index = index.reshape(-1, *index.shape[b:])
                outs = [d[tuple(i.unbind(-1))] for d, i in zip(flat_data, flat_index, strict=True)]
                out = torch.stack(outs)
                return [out.reshape(*batch, *out.shape[1:])]
            return [data[tuple(index[..., k] for k in range(last))]]
        axis = self.axis % data.dim()
        index = torch.where(index < 0, index + data.shape[axis], index)
        # Out of bounds, TensorRT's result is undefined (operators/Gather.html); the stand-in gives
        # zeros rather than failing, as a kernel would not fail.
        outside = (index < 0) | (index >= data.shape[axis])
        picked = torch.index_select(data, axis, index.clamp(0, max(data.shape[axis] - 1, 0)).reshape(-1))
        picked = picked.reshape(data.shape[:axis] + index.shape + data.shape[axis + 1:])
        if bool(outside.any()):
            fill = assume(OUT_OF_BOUNDS, self)
            view = [1] * axis + list(index.shape) + [1] * (data.dim() - axis - 1)
            picked = picked.masked_fill(outside.reshape(view), fill)
        return [picked]
