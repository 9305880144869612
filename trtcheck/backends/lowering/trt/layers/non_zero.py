"""The NonZero layer of the behaving TensorRT stand-in (operators/NonZero.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import TORCH, DataType, LayerType


@layer(LayerType.NON_ZERO, "add_non_zero",
       attributes=("indices_type",))
class INonZeroLayer(ILayer):
    """``tensorrt.INonZeroLayer`` (Layers.html#inonzerolayer; operators/NonZero.html): the
    indices of non-zero elements as (rank, N), N known only at run time."""


    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.indices_type = DataType.INT64

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        return [Meta((x.rank, -1), self.indices_type)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.nonzero(ins[0]).t().contiguous().to(TORCH[self.indices_type])]
