"""What the layers' rules share: type checks, TensorRT's broadcast, known values and shapes.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trtcheck.backends.lowering.trt.network import VALUE_LIMIT, LayerError, Meta, Value
from trtcheck.backends.lowering.trt.types import DataType


def check_type(layer: str, what: str, dtype: DataType, allowed: frozenset[DataType] | set[DataType]) -> None:
    """Refuse ``dtype`` (of ``layer``'s ``what``) unless it is one of ``allowed``."""
    if dtype not in allowed:
        names = ", ".join(sorted(t.name for t in allowed))
        raise LayerError(f"Error Code 4: API Usage Error ({layer} {what} has type {dtype.name}, which "
                         f"this layer does not take; it takes {names})")


def same_type(layer: str, metas: Sequence[Meta]) -> DataType:
    """The one type of ``metas``; a strongly typed network refuses inputs of different types."""
    types = {m.dtype for m in metas}
    if len(types) > 1:
        raise LayerError(f"Error Code 4: API Usage Error ({layer}: inputs must have the same type in a "
                         f"strongly typed network, got {', '.join(sorted(t.name for t in types))})")
    return metas[0].dtype


def _dim(a: int, b: int, layer: str) -> int:
    if a == b:
        return a
    if a == 1:
        return b
    if b == 1:
        return a
    if a == -1:
        return b if b > 1 else -1
    if b == -1:
        return a if a > 1 else -1
    raise LayerError(f"Error Code 4: API Usage Error ({layer}: dimensions {a} and {b} cannot be broadcast)")


def broadcast(layer: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """TensorRT's broadcast: equal ranks (TensorRT adds no leading dimensions), sizes equal or 1."""
    ranks = {len(s) for s in shapes}
    if len(ranks) > 1:
        raise LayerError(f"Error Code 4: API Usage Error ({layer}: inputs must have the same rank, got "
                         f"{', '.join(str(s) for s in shapes)})")
    out = list(shapes[0])
    for shape in shapes[1:]:
        out = [_dim(a, b, layer) for a, b in zip(out, shape, strict=True)]
    return tuple(out)


def all_known(shape: Sequence[int]) -> bool:
    """Whether every dimension is known at build time."""
    return all(d >= 0 for d in shape)


def volume_of(shape: Sequence[int]) -> int:
    """The number of elements of ``shape``."""
    return math.prod(shape)


def with_value(shape: tuple[int, ...], dtype: DataType, value: Value | None) -> Meta:
    """A meta keeping ``value`` only where it fits the shape and is small enough to follow."""
    if value is not None and (not all_known(shape) or volume_of(shape) != len(value)
                              or len(value) > VALUE_LIMIT):
        value = None
    return Meta(shape, dtype, value)


def mask_axes(mask: int, rank: int) -> list[int]:
    """The axes set in a TensorRT axes bit mask."""
    return [i for i in range(rank) if mask >> i & 1]


def permutation(value: Any, rank: int) -> list[int]:
    """A transpose's order of ``rank`` dimensions (identity where unset or short)."""
    perm = list(value) if value is not None else list(range(rank))
    return perm[:rank] if len(perm) >= rank else perm + list(range(len(perm), rank))


def spread_value(value: Value | None, n: int) -> Value | None:
    """A value broadcast to ``n`` elements (one element repeated), or None when it cannot be."""
    if value is None or len(value) not in (1, n):
        return None
    return value * n if len(value) == 1 else value
