"""The Shape layer of the behaving TensorRT stand-in (operators/Shape.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer, tensors
from trtcheck.backends.lowering.trt.network import ILayer, Meta
from trtcheck.backends.lowering.trt.types import DataType, LayerType


@layer(LayerType.SHAPE, ("add_shape", tensors("input")))
class IShapeLayer(ILayer):
    """``tensorrt.IShapeLayer`` (Layers.html#ishapelayer; operators/Shape.html): INT64 dims."""


    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        value = tuple(d if d >= 0 else None for d in meta.shape)
        return [Meta((meta.rank,), DataType.INT64, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.tensor(ins[0].shape, dtype=torch.int64).to(ins[0].device)]  # made on the host, copied
