"""The Cast layer of the behaving TensorRT stand-in (operators/Cast.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import SHAPE_TYPES, TORCH, DataType, LayerType


@layer(LayerType.CAST, "add_cast",
       attributes=("to_type",))
class ICastLayer(ILayer):
    """``tensorrt.ICastLayer`` (Layers.html#icastlayer; operators/Cast.html)."""

    _CASTABLE = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.INT32, DataType.INT64,
                           DataType.INT8, DataType.UINT8, DataType.BOOL, DataType.FP8})

    def __init__(self, network: INetworkDefinition, input: ITensor, to_type: DataType) -> None:
        super().__init__(network, [input])
        self.to_type = to_type

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        check_type("ICastLayer", "input", meta.dtype, self._CASTABLE)
        check_type("ICastLayer", "to_type", self.to_type, self._CASTABLE)
        value = meta.value
        if value is not None and self.to_type not in SHAPE_TYPES:
            value = None
        elif value is not None and self.to_type == DataType.BOOL:
            value = tuple(None if v is None else int(bool(v)) for v in value)
        return [with_value(meta.shape, self.to_type, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [ins[0].to(TORCH[self.to_type])]
