"""The MatrixMultiply layer of the behaving TensorRT stand-in
(operators/MatrixMultiply.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import broadcast, check_type, same_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, LayerType, MatrixOperation


@layer(LayerType.MATRIX_MULTIPLY, "add_matrix_multiply",
       attributes=("op0", "op1"))
class IMatrixMultiplyLayer(ILayer):
    """``tensorrt.IMatrixMultiplyLayer`` (Layers.html#imatrixmultiplylayer;
    operators/MatrixMultiply.html): NONE, TRANSPOSE or VECTOR per input, batch dims broadcast,
    both inputs one float type."""


    def __init__(self, network: INetworkDefinition, input0: ITensor, op0: Any, input1: ITensor,
                 op1: Any) -> None:
        super().__init__(network, [input0, input1])
        self.op0 = op0
        self.op1 = op1

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        a, b = ins
        assert a is not None and b is not None
        dtype = same_type("IMatrixMultiplyLayer", [a, b])
        check_type("IMatrixMultiplyLayer", "input", dtype, FLOATS)
        sa, sb = list(a.shape), list(b.shape)
        va, vb = self.op0 == MatrixOperation.VECTOR, self.op1 == MatrixOperation.VECTOR
        if self.op0 == MatrixOperation.TRANSPOSE:
            sa[-2], sa[-1] = sa[-1], sa[-2]
        if self.op1 == MatrixOperation.TRANSPOSE:
            sb[-2], sb[-1] = sb[-1], sb[-2]
        ka = sa[-1]
        kb = sb[-1] if vb else sb[-2]
        if ka >= 0 and kb >= 0 and ka != kb:
            raise LayerError(f"Error Code 4: API Usage Error (IMatrixMultiplyLayer: inner dimensions "
                             f"{ka} and {kb} differ)")
        batch_a = sa[:-1] if va else sa[:-2]
        batch_b = sb[:-1] if vb else sb[:-2]
        if len(batch_a) != len(batch_b):
            raise LayerError("Error Code 4: API Usage Error (IMatrixMultiplyLayer: inputs must have the "
                             "same rank)")
        batch = list(broadcast("IMatrixMultiplyLayer", tuple(batch_a), tuple(batch_b)))
        shape = batch + ([] if va else [sa[-2]]) + ([] if vb else [sb[-1]])
        return [Meta(tuple(shape), dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        a, b = ins
        if self.op0 == MatrixOperation.TRANSPOSE:
            a = a.transpose(-1, -2)
        if self.op1 == MatrixOperation.TRANSPOSE:
            b = b.transpose(-1, -2)
        if self.op0 == MatrixOperation.VECTOR:
            a = a.unsqueeze(-2)
        if self.op1 == MatrixOperation.VECTOR:
            b = b.unsqueeze(-1)
        out = torch.matmul(a, b)
        if self.op1 == MatrixOperation.VECTOR:
            out = out.squeeze(-1)
        if self.op0 == MatrixOperation.VECTOR:
            out = out.squeeze(-1 if self.op1 == MatrixOperation.VECTOR else -2)
        return [out]
