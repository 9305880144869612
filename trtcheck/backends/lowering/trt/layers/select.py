"""The Select layer of the behaving TensorRT stand-in (operators/Select.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer, tensors
from trtcheck.backends.lowering.trt.layers.rules import (
    all_known,
    broadcast,
    check_type,
    same_type,
    spread_value,
    volume_of,
    with_value,
)
from trtcheck.backends.lowering.trt.network import ILayer, Meta
from trtcheck.backends.lowering.trt.types import DataType, LayerType


@layer(LayerType.SELECT, ("add_select", tensors("condition", "then_input", "else_input")))
class ISelectLayer(ILayer):
    """``tensorrt.ISelectLayer`` (Layers.html#iselectlayer; operators/Select.html): a BOOL
    condition, two inputs of one type, broadcast."""


    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        cond, then, other = ins
        assert cond is not None and then is not None and other is not None
        check_type("ISelectLayer", "condition", cond.dtype, {DataType.BOOL})
        dtype = same_type("ISelectLayer", [then, other])
        shape = broadcast("ISelectLayer", cond.shape, then.shape, other.shape)
        value = None
        if cond.value is not None and then.value is not None and other.value is not None and all_known(shape):
            n = volume_of(shape)
            picks = [spread_value(m.value, n) for m in (cond, then, other)]
            if None not in picks:
                value = tuple(None if c is None else (t if c else e)
                              for c, t, e in zip(*picks, strict=True))  # type: ignore[call-overload]
        return [with_value(shape, dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.where(ins[0], ins[1], ins[2])]
