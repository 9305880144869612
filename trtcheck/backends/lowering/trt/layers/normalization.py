"""The Normalization layer of the behaving TensorRT stand-in (operators/Normalization.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, mask_axes, same_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, DataType, LayerType


@layer(LayerType.NORMALIZATION, "add_normalization",
       attributes=("axes", "epsilon", "num_groups"),
       ignored={"compute_precision": "the precision TensorRT computes in, which changes rounding, not the "
                                     "output's type or shape; the stand-in computes in the input's type"})
class INormalizationLayer(ILayer):
    """``tensorrt.INormalizationLayer`` (Layers.html#inormalizationlayer;
    operators/Normalization.html): ``(x - mean) / sqrt(var + epsilon) * scale + bias`` over the
    axes, per group when ``num_groups`` > 1."""


    def __init__(self, network: INetworkDefinition, input: ITensor, scale: ITensor, bias: ITensor,
                 axesMask: int) -> None:
        super().__init__(network, [input, scale, bias])
        self.axes = axesMask
        self.epsilon = 1e-5
        self.num_groups = 1
        self.compute_precision = DataType.FLOAT

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x, scale, bias = ins
        assert x is not None and scale is not None and bias is not None
        dtype = same_type("INormalizationLayer", [x, scale, bias])
        check_type("INormalizationLayer", "input", dtype, FLOATS)
        return [Meta(x.shape, dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x, scale, bias = ins
        axes = mask_axes(self.axes, x.dim())
        g = self.num_groups
        if g > 1:  # scale and bias are per group, shape (1, G, 1, ...)
            grouped = x.reshape(x.shape[0], g, -1)
            mean = grouped.mean(-1, keepdim=True)
            var = grouped.var(-1, unbiased=False, keepdim=True)
            normed = (grouped - mean) / torch.sqrt(var + self.epsilon)
            return [(normed * scale.reshape(1, g, 1) + bias.reshape(1, g, 1)).reshape(x.shape)]
        mean = x.mean(axes, keepdim=True)
        var = x.var(axes, unbiased=False, keepdim=True)
        return [(x - mean) / torch.sqrt(var + self.epsilon) * scale + bias]
