"""The ParametricReLU layer of the behaving TensorRT stand-in
(operators/ParametricReLU.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer, tensors
from trtcheck.backends.lowering.trt.layers.rules import broadcast, check_type, same_type
from trtcheck.backends.lowering.trt.network import ILayer, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, LayerType


@layer(LayerType.PARAMETRIC_RELU, ("add_parametric_relu", tensors("input", "slopes")))
class IParametricReLULayer(ILayer):
    """``tensorrt.IParametricReLULayer`` (Layers.html#iparametricrelulayer; operators/ParametricReLU.html)."""


    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x, slope = ins
        assert x is not None and slope is not None
        dtype = same_type("IParametricReLULayer", [x, slope])
        check_type("IParametricReLULayer", "input", dtype, FLOATS)
        return [Meta(broadcast("IParametricReLULayer", x.shape, slope.shape), dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.where(ins[0] >= 0, ins[0], ins[0] * ins[1])]
