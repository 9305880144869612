"""The Constant layer of the behaving TensorRT stand-in (operators/Constant.html): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import volume_of, with_value
from trtcheck.backends.lowering.trt.network import VALUE_LIMIT, ILayer, INetworkDefinition, LayerError, Meta
from trtcheck.backends.lowering.trt.types import SHAPE_TYPES, Dims, LayerType, WeightsRole, weights_tensor


@layer(LayerType.CONSTANT, "add_constant", roles=[("weights", WeightsRole.CONSTANT)],
       attributes=("dtype", "shape"))
class IConstantLayer(ILayer):
    """``tensorrt.IConstantLayer`` (Layers.html#iconstantlayer; operators/Constant.html)."""


    def __init__(self, network: INetworkDefinition, shape: Sequence[int], weights: Any) -> None:
        super().__init__(network, [])
        tensor, dtype = weights_tensor(weights)
        self.shape = Dims(shape)
        self.weights = tensor
        self.dtype = dtype

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        shape = tuple(self.shape)
        if volume_of(shape) != self.weights.numel() and not (self.weights.numel() == 1 and shape == ()):
            raise LayerError(f"Error Code 4: API Usage Error (IConstantLayer: weights count "
                             f"{self.weights.numel()} does not match volume of {shape})")
        value = None
        if self.dtype in SHAPE_TYPES and self.weights.numel() <= VALUE_LIMIT:
            value = tuple(int(v) for v in self.weights.tolist())
        return [with_value(shape, self.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [self.weights.reshape(tuple(self.shape))]
