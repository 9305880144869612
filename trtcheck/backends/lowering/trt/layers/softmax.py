"""The SoftMax layer of the behaving TensorRT stand-in (operators/SoftMax.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, mask_axes
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, LayerType


@layer(LayerType.SOFTMAX, "add_softmax",
       attributes=("axes",))
class ISoftMaxLayer(ILayer):
    """``tensorrt.ISoftMaxLayer`` (Layers.html#isoftmaxlayer; operators/SoftMax.html): one axis,
    a bit mask; by default the last."""


    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.axes: int | None = None

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        check_type("ISoftMaxLayer", "input", x.dtype, FLOATS)
        return [Meta(x.shape, x.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        axes = mask_axes(self.axes, x.dim()) if self.axes is not None else [x.dim() - 1]
        return [torch.softmax(x, axes[0])]
