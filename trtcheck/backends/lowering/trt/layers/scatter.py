"""The Scatter layer of the behaving TensorRT stand-in (operators/Scatter.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, same_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import INTS, LayerType, ScatterMode


@layer(LayerType.SCATTER, "add_scatter",
       attributes=("axis", "mode"))
class IScatterLayer(ILayer):
    """``tensorrt.IScatterLayer`` (Layers.html#iscatterlayer; operators/Scatter.html): ELEMENT
    (along ``axis``) or ND; updates of the data's type, INT32/INT64 indices."""


    def __init__(self, network: INetworkDefinition, data: ITensor, indices: ITensor, updates: ITensor,
                 mode: Any) -> None:
        super().__init__(network, [data, indices, updates])
        self.mode = mode
        self.axis = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        data, index, updates = ins
        assert data is not None and index is not None and updates is not None
        check_type("IScatterLayer", "indices", index.dtype, INTS)
        same_type("IScatterLayer", [data, updates])
        if self.mode == ScatterMode.ELEMENT and not data.rank == index.rank == updates.rank:
            # ELEMENT: "s = q = r", the ranks of updates, indices and data (IScatterLayer's page)
            raise LayerError(f"Error Code 4: API Usage Error (IScatterLayer in ELEMENT mode needs data, "
                             f"indices and updates of one rank, got data {data.shape}, indices "
                             f"{index.shape}, updates {updates.shape})")
        if (self.mode == ScatterMode.ND and index.rank and index.shape[-1] >= 0
                and updates.rank != data.rank + index.rank - index.shape[-1] - 1):
            raise LayerError(f"Error Code 4: API Usage Error (IScatterLayer in ND mode needs updates of "
                             f"rank {data.rank + index.rank - index.shape[-1] - 1} for data {data.shape} "
                             f"and indices {index.shape}, got updates {updates.shape})")
        return [Meta(data.shape, data.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        data, index, updates = ins[0], ins[1].long(), ins[2]
        out = data.clone()
        if self.mode == ScatterMode.ELEMENT:
            axis = self.axis % data.dim()
            index = torch.where(index < 0, index + data.shape[axis], index)
            return [out.scatter(axis, index, updates)]
        last = index.shape[-1]
        out[tuple(index[..., k] for k in range(last))] = updates
        return [out]
