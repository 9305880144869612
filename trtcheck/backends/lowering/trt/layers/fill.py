"""The Fill layer of the behaving TensorRT stand-in (operators/Fill.html): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import all_known, check_type, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, Meta, run_device
from trtcheck.backends.lowering.trt.types import INTS, TORCH, DataType, Dims, FillOperation, LayerType


@layer(LayerType.FILL, "add_fill",
       attributes=("alpha", "beta", "operation", "shape", "to_type"))
class IFillLayer(ILayer):
    """``tensorrt.IFillLayer`` (Layers.html#ifilllayer; operators/Fill.html): LINSPACE
    ``alpha + beta * index`` (input 0 the shape, 1 the start, 2 the delta); the random fills."""


    def __init__(self, network: INetworkDefinition, shape: Sequence[int], op: Any,
                 output_type: DataType = DataType.FLOAT) -> None:
        super().__init__(network, [])
        self.shape = Dims(shape)
        self.operation = op
        self.to_type = output_type
        self.alpha: Any = 0.0
        self.beta: Any = 1.0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        # The output types each operation takes (operators/Fill.html, "Data Types"); alpha and beta
        # inputs are of any type, converted to the output's.
        allowed = {DataType.FLOAT, DataType.INT32, DataType.INT64} \
            if self.operation == FillOperation.LINSPACE else {DataType.FLOAT, DataType.HALF}
        check_type(f"IFillLayer {self.operation.name}", "output", self.to_type, allowed)
        if ins and ins[0] is not None:
            given = ins[0]
            shape = tuple(-1 if v is None else v for v in given.value) if given.value is not None \
                else tuple([-1] * max(given.shape[0], 0))
        else:
            shape = tuple(self.shape)
        value = None
        if self.operation == FillOperation.LINSPACE and self.to_type in INTS and not (len(ins) > 1) \
                and all_known(shape) and len(shape) == 1:
            value = tuple(int(self.alpha) + int(self.beta) * i for i in range(shape[0]))
        return [with_value(shape, self.to_type, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        shape = [int(v) for v in ins[0].tolist()] if ins and ins[0] is not None else list(self.shape)
        dtype = TORCH[self.to_type]
        device = run_device(ins)
        if self.operation == FillOperation.LINSPACE:
            given = [ins[i] if len(ins) > i and ins[i] is not None else None for i in (1, 2)]
            start = given[0] if given[0] is not None else torch.tensor(self.alpha, dtype=dtype).to(device)
            delta = given[1] if given[1] is not None else torch.tensor(self.beta, dtype=dtype).to(device)
            delta = delta.reshape(-1) if delta.dim() else delta.reshape(1).expand(len(shape))
            out = start.reshape(()).to(dtype) + torch.zeros(shape, dtype=dtype, device=device)
            for axis, step in enumerate(delta.tolist()):
                view = [1] * len(shape)
                view[axis] = -1
                out = out + (torch.arange(shape[axis], device=device) * step).to(dtype).reshape(view)
            return [out]
        if self.operation == FillOperation.RANDOM_UNIFORM:
            low, high = float(self.alpha), float(self.beta)
            return [torch.rand(shape, device=device).mul(high - low).add(low).to(dtype)]
        return [torch.randn(shape, device=device).mul(float(self.beta)).add(float(self.alpha)).to(dtype)]
