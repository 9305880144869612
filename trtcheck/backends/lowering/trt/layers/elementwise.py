"""The ElementWise layer of the behaving TensorRT stand-in (operators/ElementWise.html): NOT TensorRT."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import (
    all_known,
    broadcast,
    check_type,
    same_type,
    spread_value,
    volume_of,
    with_value,
)
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import SHAPE_TYPES, DataType, ElementWiseOperation, LayerType

E = ElementWiseOperation


_ELEMENTWISE: dict[Any, Callable[[Any, Any], Any]] = {
    E.SUM: operator.add, E.PROD: operator.mul, E.MAX: max, E.MIN: min, E.SUB: operator.sub,
    E.FLOOR_DIV: operator.floordiv, E.EQUAL: lambda a, b: int(a == b), E.GREATER: lambda a, b: int(a > b),
    E.LESS: lambda a, b: int(a < b), E.AND: lambda a, b: int(a and b), E.OR: lambda a, b: int(a or b),
    E.XOR: lambda a, b: int(bool(a) != bool(b)),
}


_LOGICAL = frozenset({E.AND, E.OR, E.XOR})


_COMPARE = frozenset({E.EQUAL, E.GREATER, E.LESS})


_NUMERIC = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.INT32, DataType.INT64,
                      DataType.INT8})


def _int_div(a: int, b: int) -> int | None:
    """TensorRT's integer DIV truncates toward zero (operators/ElementWise.html)."""
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@layer(LayerType.ELEMENTWISE, "add_elementwise",
       attributes=("op",))
class IElementWiseLayer(ILayer):
    """``tensorrt.IElementWiseLayer`` (Layers.html#ielementwiselayer; operators/ElementWise.html):
    both inputs one type and one rank; AND/OR/XOR take BOOL; comparisons give BOOL; integer DIV
    truncates toward zero, FLOOR_DIV rounds down."""


    def __init__(self, network: INetworkDefinition, input1: ITensor, input2: ITensor, op: Any) -> None:
        super().__init__(network, [input1, input2])
        self.op = op

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        a, b = ins
        assert a is not None and b is not None
        dtype = same_type(f"IElementWiseLayer {self.op.name}", [a, b])
        if self.op in _LOGICAL:
            check_type(f"IElementWiseLayer {self.op.name}", "input", dtype, {DataType.BOOL})
        elif self.op == E.EQUAL:
            check_type(f"IElementWiseLayer {self.op.name}", "input", dtype, _NUMERIC | {DataType.BOOL})
        else:
            check_type(f"IElementWiseLayer {self.op.name}", "input", dtype, _NUMERIC)
        shape = broadcast("IElementWiseLayer", a.shape, b.shape)
        out = DataType.BOOL if self.op in _COMPARE else dtype
        value = None
        if a.value is not None and b.value is not None and dtype in SHAPE_TYPES and all_known(shape):
            fn = _int_div if self.op == E.DIV else _ELEMENTWISE.get(self.op)
            if fn is not None:
                n = volume_of(shape)
                xs, ys = spread_value(a.value, n), spread_value(b.value, n)
                if xs is not None and ys is not None:
                    value = tuple(None if x is None or y is None or (self.op == E.FLOOR_DIV and y == 0)
                                  else fn(x, y) for x, y in zip(xs, ys, strict=True))
        return [with_value(shape, out, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        a, b = ins
        op = self.op
        if op == E.SUM:
            return [a + b]
        if op == E.PROD:
            return [a * b]
        if op == E.SUB:
            return [a - b]
        if op == E.MAX:
            return [torch.maximum(a, b)]
        if op == E.MIN:
            return [torch.minimum(a, b)]
        if op == E.DIV:
            return [a / b if a.is_floating_point() else torch.div(a, b, rounding_mode="trunc")]
        if op == E.FLOOR_DIV:
            return [torch.div(a, b, rounding_mode="floor")]
        if op == E.POW:
            return [torch.pow(a, b)]
        if op == E.AND:
            return [a & b]
        if op == E.OR:
            return [a | b]
        if op == E.XOR:
            return [a ^ b]
        if op == E.EQUAL:
            return [a == b]
        if op == E.GREATER:
            return [a > b]
        return [a < b]
