"""The Activation layer of the behaving TensorRT stand-in (operators/Activation.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, ActivationType, DataType, LayerType

A = ActivationType


@layer(LayerType.ACTIVATION, "add_activation",
       attributes=("alpha", "beta"))
class IActivationLayer(ILayer):
    """``tensorrt.IActivationLayer`` (Layers.html#iactivationlayer; operators/Activation.html):
    float inputs; ``alpha`` and ``beta`` as each type documents them."""


    def __init__(self, network: INetworkDefinition, input: ITensor, type: Any) -> None:
        super().__init__(network, [input])
        self.type = type
        self.alpha = 0.0
        self.beta = 0.0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        check_type(f"IActivationLayer {self.type.name}", "input", meta.dtype, FLOATS | {DataType.INT8})
        return [Meta(meta.shape, meta.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        a, b, t = self.alpha, self.beta, self.type
        if t == A.RELU:
            return [F.relu(x)]
        if t == A.SIGMOID:
            return [torch.sigmoid(x)]
        if t == A.TANH:
            return [torch.tanh(x)]
        if t == A.LEAKY_RELU:
            return [torch.where(x >= 0, x, x * a)]
        if t == A.ELU:
            return [torch.where(x >= 0, x, a * (torch.exp(x) - 1))]
        if t == A.SELU:
            return [b * torch.where(x >= 0, x, a * (torch.exp(x) - 1))]
        if t == A.SOFTSIGN:
            return [x / (1 + x.abs())]
        if t == A.SOFTPLUS:
            return [a * torch.log1p(torch.exp(b * x))]
        if t == A.CLIP:
            return [x.clamp(a, b)]
        if t == A.HARD_SIGMOID:
            return [(a * x + b).clamp(0, 1)]
        if t == A.SCALED_TANH:
            return [a * torch.tanh(b * x)]
        if t == A.THRESHOLDED_RELU:
            return [torch.where(x > a, x, torch.zeros_like(x))]
        if t == A.GELU_ERF:
            return [F.gelu(x)]
        return [F.gelu(x, approximate="tanh")]
