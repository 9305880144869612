"""The TopK layer of the behaving TensorRT stand-in (operators/TopK.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, mask_axes
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import TORCH, DataType, LayerType, TopKOperation


@layer(LayerType.TOPK, "add_topk",
       attributes=("axes", "indices_type", "k", "op"))
class ITopKLayer(ILayer):
    """``tensorrt.ITopKLayer`` (Layers.html#itopklayer; operators/TopK.html): values and INT32
    indices along one axis; ``k`` may come from input 1."""

    num_outputs_of = 2
    _TYPES = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.INT32, DataType.INT64})

    def __init__(self, network: INetworkDefinition, input: ITensor, op: Any, k: int, axes: int) -> None:
        super().__init__(network, [input])
        self.op = op
        self.k = k
        self.axes = axes
        self.indices_type = DataType.INT32

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        meta = ins[0]
        assert meta is not None
        check_type("ITopKLayer", "input", meta.dtype, self._TYPES)
        axes = mask_axes(self.axes, meta.rank)
        if len(axes) != 1:
            raise LayerError("Error Code 4: API Usage Error (ITopKLayer: exactly one reduction axis)")
        k: int = self.k
        if len(ins) > 1 and ins[1] is not None:
            k = ins[1].value[0] if ins[1].value and ins[1].value[0] is not None else -1
        elif not 0 < k <= 3840:
            raise LayerError(f"Error Code 4: API Usage Error (ITopKLayer: k {k} must be in [1, 3840])")
        shape = list(meta.shape)
        shape[axes[0]] = k
        return [Meta(tuple(shape), meta.dtype), Meta(tuple(shape), self.indices_type)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        k = int(ins[1].reshape(-1)[0]) if len(ins) > 1 and ins[1] is not None else self.k
        (axis,) = mask_axes(self.axes, x.dim())
        values, indices = torch.topk(x, k, dim=axis, largest=self.op == TopKOperation.MAX, sorted=True)
        return [values, indices.to(TORCH[self.indices_type])]
