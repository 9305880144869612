"""The Concatenation layer of the behaving TensorRT stand-in (operators/Concatenation.html): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import same_type, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import LayerType


@layer(LayerType.CONCATENATION, "add_concatenation",
       attributes=("axis",))
class IConcatenationLayer(ILayer):
    """``tensorrt.IConcatenationLayer`` (Layers.html#iconcatenationlayer; operators/Concatenation.html)."""


    def __init__(self, network: INetworkDefinition, inputs: Sequence[ITensor]) -> None:
        super().__init__(network, inputs)
        self.axis = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        metas = [m for m in ins if m is not None]
        dtype = same_type("IConcatenationLayer", metas)
        rank = metas[0].rank
        axis = self.axis % rank if rank else 0
        if any(m.rank != rank for m in metas):
            raise LayerError("Error Code 4: API Usage Error (IConcatenationLayer: all inputs must have "
                             "the same rank)")
        shape = list(metas[0].shape)
        for m in metas[1:]:
            for d in range(rank):
                if d == axis:
                    shape[d] = -1 if -1 in (shape[d], m.shape[d]) else shape[d] + m.shape[d]
                elif shape[d] == -1:
                    shape[d] = m.shape[d]
                elif m.shape[d] not in (-1, shape[d]):
                    raise LayerError(f"Error Code 4: API Usage Error (IConcatenationLayer: dimension {d} "
                                     f"differs: {shape[d]} and {m.shape[d]})")
        value = None
        if rank == 1 and all(m.value is not None for m in metas):
            value = tuple(v for m in metas for v in m.value)  # type: ignore[union-attr]
        return [with_value(tuple(shape), dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.cat(ins, dim=self.axis)]
