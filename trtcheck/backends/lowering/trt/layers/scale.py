"""The Scale layer of the behaving TensorRT stand-in (operators/Scale.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import (
    FLOATS,
    DataType,
    LayerType,
    ScaleMode,
    WeightsRole,
    weights_tensor,
)


def _maybe(weights: Any) -> torch.Tensor | None:
    return None if weights is None else weights_tensor(weights)[0]


@layer(LayerType.SCALE, "add_scale", "add_scale_nd",
       roles=[("scale", WeightsRole.SCALE), ("shift", WeightsRole.SHIFT)],
       attributes=("channel_axis", "mode", "power"))  # no role for its power
class IScaleLayer(ILayer):
    """``tensorrt.IScaleLayer`` (Layers.html#iscalelayer; operators/Scale.html):
    ``(x * scale + shift) ** power`` per UNIFORM, CHANNEL or ELEMENTWISE mode."""


    def __init__(self, network: INetworkDefinition, input: ITensor, mode: Any, shift: Any = None,
                 scale: Any = None, power: Any = None, channel_axis: int = 1) -> None:
        super().__init__(network, [input])
        self.mode = mode
        self.shift = _maybe(shift)
        self.scale = _maybe(scale)
        self.power = _maybe(power)
        self.channel_axis = channel_axis

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        check_type("IScaleLayer", "input", x.dtype, FLOATS | {DataType.INT8})
        return [Meta(x.shape, x.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]

        def shaped(value: torch.Tensor | None) -> torch.Tensor | None:
            if value is None or value.numel() == 0:
                return None
            value = value.to(x.dtype)
            if self.mode == ScaleMode.CHANNEL:
                shape = [1] * x.dim()
                shape[self.channel_axis] = -1
                return value.reshape(shape)
            if self.mode == ScaleMode.ELEMENTWISE:
                return value.reshape(x.shape[self.channel_axis:])
            return value.reshape(())

        out = x
        scale, shift, power = shaped(self.scale), shaped(self.shift), shaped(self.power)
        if scale is not None:
            out = out * scale
        if shift is not None:
            out = out + shift
        if power is not None:
            out = out ** power
        return [out]
