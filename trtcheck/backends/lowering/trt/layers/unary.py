"""The Unary layer of the behaving TensorRT stand-in (operators/Unary.html): NOT TensorRT."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import (
    FLOATS,
    INTS,
    SHAPE_TYPES,
    DataType,
    LayerType,
    UnaryOperation,
)

U = UnaryOperation


_UNARY: dict[Any, Callable[[torch.Tensor], torch.Tensor]] = {
    U.EXP: torch.exp, U.LOG: torch.log, U.SQRT: torch.sqrt, U.RECIP: torch.reciprocal, U.ABS: torch.abs,
    U.NEG: torch.neg, U.SIN: torch.sin, U.COS: torch.cos, U.TAN: torch.tan, U.SINH: torch.sinh,
    U.COSH: torch.cosh, U.ASIN: torch.asin, U.ACOS: torch.acos, U.ATAN: torch.atan, U.ASINH: torch.asinh,
    U.ACOSH: torch.acosh, U.ATANH: torch.atanh, U.CEIL: torch.ceil, U.FLOOR: torch.floor, U.ERF: torch.erf,
    U.NOT: torch.logical_not, U.SIGN: torch.sign, U.ROUND: torch.round, U.ISINF: torch.isinf,
    U.ISNAN: torch.isnan,
}


_INT_UNARY: dict[Any, Callable[[int], int]] = {
    U.ABS: abs, U.NEG: operator.neg, U.SIGN: lambda v: (v > 0) - (v < 0), U.NOT: lambda v: int(not v),
}


@layer(LayerType.UNARY, "add_unary",
       attributes=("op",))
class IUnaryLayer(ILayer):
    """``tensorrt.IUnaryLayer`` (Layers.html#iunarylayer; operators/Unary.html): NOT takes BOOL;
    ABS, NEG and SIGN take INT32/INT64 too; ISINF/ISNAN give BOOL; the rest take floats."""


    def __init__(self, network: INetworkDefinition, input: ITensor, op: Any) -> None:
        super().__init__(network, [input])
        self.op = op

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        if self.op == U.NOT:
            allowed: set[DataType] = {DataType.BOOL}
        elif self.op in (U.ABS, U.NEG, U.SIGN):
            allowed = set(FLOATS | INTS | {DataType.INT8})
        else:
            allowed = set(FLOATS)
        check_type(f"IUnaryLayer {self.op.name}", "input", meta.dtype, allowed)
        out = DataType.BOOL if self.op in (U.ISINF, U.ISNAN) else meta.dtype
        fn = _INT_UNARY.get(self.op)
        value = None
        if meta.value is not None and fn is not None and meta.dtype in SHAPE_TYPES:
            value = tuple(None if v is None else fn(v) for v in meta.value)
        return [with_value(meta.shape, out, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        if self.op == U.ROUND:  # half to even, as TensorRT's ROUND
            return [torch.round(x)]
        return [_UNARY[self.op](x)]
