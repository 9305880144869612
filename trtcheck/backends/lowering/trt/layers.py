"""The layers of the behaving stand-in, each with TensorRT's documented shape and type rules
(``infer``) and its computation with PyTorch (``run``).

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Each class cites its entry of TensorRT's
Python API (``Layers.html#...``: https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/Graph/Layers.html)
and its page of the operator reference (``operators/X.html``:
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/operators/X.html), whose "Data Types"
and "Shape Information" sections give the rules followed here. ``bind`` puts the
``add_*`` methods on :class:`~trtcheck.backends.lowering.trt.network.INetworkDefinition`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trtcheck.backends.lowering.trt.loops import add_if_conditional, add_loop
from trtcheck.backends.lowering.trt.modes import outside_modes
from trtcheck.backends.lowering.trt.network import (
    VALUE_LIMIT,
    ILayer,
    INetworkDefinition,
    ITensor,
    LayerError,
    Meta,
    PassThroughLayer,
    Value,
)
from trtcheck.backends.lowering.trt.types import (
    FLOATS,
    INTS,
    SHAPE_TYPES,
    TORCH,
    ActivationType,
    CausalMaskKind,
    DataType,
    Dims,
    ElementWiseOperation,
    FillOperation,
    GatherMode,
    InterpolationMode,
    LayerType,
    MatrixOperation,
    PaddingMode,
    PoolingType,
    ReduceOperation,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
    SampleMode,
    ScaleMode,
    ScatterMode,
    TopKOperation,
    UnaryOperation,
    weights_tensor,
)

E = ElementWiseOperation
U = UnaryOperation
A = ActivationType


def _types(layer: str, what: str, dtype: DataType, allowed: frozenset[DataType] | set[DataType]) -> None:
    if dtype not in allowed:
        names = ", ".join(sorted(t.name for t in allowed))
        raise LayerError(f"Error Code 4: API Usage Error ({layer} {what} has type {dtype.name}, which "
                         f"this layer does not take; it takes {names})")


def _same(layer: str, metas: Sequence[Meta]) -> DataType:
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


def _known(shape: Sequence[int]) -> bool:
    return all(d >= 0 for d in shape)


def _numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def _value_meta(shape: tuple[int, ...], dtype: DataType, value: Value | None) -> Meta:
    if value is not None and (not _known(shape) or _numel(shape) != len(value) or len(value) > VALUE_LIMIT):
        value = None
    return Meta(shape, dtype, value)


def _axes(mask: int, rank: int) -> list[int]:
    return [i for i in range(rank) if mask >> i & 1]


def _perm(value: Any, rank: int) -> list[int]:
    perm = list(value) if value is not None else list(range(rank))
    return perm[:rank] if len(perm) >= rank else perm + list(range(len(perm), rank))


class Permutation(list):
    """``tensorrt.Permutation`` (FoundationalTypes/Permutation.html): an order of dimensions."""


# The layers --------------------------------------------------------------------------------------

class IConstantLayer(ILayer):
    """``tensorrt.IConstantLayer`` (Layers.html#iconstantlayer; operators/Constant.html)."""

    kind = LayerType.CONSTANT

    def __init__(self, network: INetworkDefinition, shape: Sequence[int], weights: Any) -> None:
        super().__init__(network, [])
        tensor, dtype = weights_tensor(weights)
        self.shape = Dims(shape)
        self.weights = tensor
        self.dtype = dtype

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        shape = tuple(self.shape)
        if _numel(shape) != self.weights.numel() and not (self.weights.numel() == 1 and shape == ()):
            raise LayerError(f"Error Code 4: API Usage Error (IConstantLayer: weights count "
                             f"{self.weights.numel()} does not match volume of {shape})")
        value = None
        if self.dtype in SHAPE_TYPES and self.weights.numel() <= VALUE_LIMIT:
            value = tuple(int(v) for v in self.weights.tolist())
        return [_value_meta(shape, self.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [self.weights.reshape(tuple(self.shape))]


class IShapeLayer(ILayer):
    """``tensorrt.IShapeLayer`` (Layers.html#ishapelayer; operators/Shape.html): INT64 dims."""

    kind = LayerType.SHAPE

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        value = tuple(d if d >= 0 else None for d in meta.shape)
        return [Meta((meta.rank,), DataType.INT64, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.tensor(ins[0].shape, dtype=torch.int64)]


class IIdentityLayer(PassThroughLayer):
    """``tensorrt.IIdentityLayer`` (Layers.html#iidentitylayer; operators/Identity.html): in a
    strongly typed network its output has its input's type."""

    kind = LayerType.IDENTITY


class ICastLayer(ILayer):
    """``tensorrt.ICastLayer`` (Layers.html#icastlayer; operators/Cast.html)."""

    kind = LayerType.CAST
    _CASTABLE = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.INT32, DataType.INT64,
                           DataType.INT8, DataType.UINT8, DataType.BOOL, DataType.FP8})

    def __init__(self, network: INetworkDefinition, input: ITensor, to_type: DataType) -> None:
        super().__init__(network, [input])
        self.to_type = to_type

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        _types("ICastLayer", "input", meta.dtype, self._CASTABLE)
        _types("ICastLayer", "to_type", self.to_type, self._CASTABLE)
        value = meta.value
        if value is not None and self.to_type not in SHAPE_TYPES:
            value = None
        elif value is not None and self.to_type == DataType.BOOL:
            value = tuple(None if v is None else int(bool(v)) for v in value)
        return [_value_meta(meta.shape, self.to_type, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [ins[0].to(TORCH[self.to_type])]


class IShuffleLayer(ILayer):
    """``tensorrt.IShuffleLayer`` (Layers.html#ishufflelayer; operators/Shuffle.html): first
    transpose, reshape (0 copies an input dimension when ``zero_is_placeholder``, -1 is inferred),
    second transpose; the reshape dimensions may come from input 1, a shape tensor."""

    kind = LayerType.SHUFFLE

    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.first_transpose: Any = None
        self.second_transpose: Any = None
        self.reshape_dims: Any = None
        self.zero_is_placeholder = True

    def _target(self, ins: list[Meta | None]) -> list[int | None] | None:
        if len(ins) > 1 and ins[1] is not None:
            dims = ins[1]
            if dims.rank != 1 or dims.shape[0] < 0:
                raise LayerError("Error Code 4: API Usage Error (IShuffleLayer: the reshape dimensions "
                                 "must be a 1-D shape tensor of build-time length)")
            return list(dims.value) if dims.value is not None else [None] * dims.shape[0]
        if self.reshape_dims is None:
            return None
        return [int(d) for d in self.reshape_dims]

    def _reshape(self, shape: list[int], target: list[int | None]) -> list[int]:
        out: list[int] = []
        for i, d in enumerate(target):
            if d == 0 and self.zero_is_placeholder:
                if i >= len(shape):
                    raise LayerError("Error Code 4: API Usage Error (IShuffleLayer: a 0 placeholder has "
                                     "no input dimension to copy)")
                out.append(shape[i] if shape[i] >= 0 else -2)
            else:
                out.append(-2 if d is None else d)  # -2: known at run time; -1: inferred
        if out.count(-1) > 1:
            raise LayerError("Error Code 4: API Usage Error (IShuffleLayer: at most one -1 in the "
                             "reshape dimensions)")
        if -1 in out:
            # Dynamic dimensions copied by a 0 placeholder cancel out of the volume.
            copied = {i for i, d in enumerate(target) if d == 0 and self.zero_is_placeholder and shape[i] < 0}
            given = [d for i, d in enumerate(shape) if i not in copied]
            rest = [d for i, d in enumerate(out) if d != -1 and i not in copied]
            if _known(given) and all(d >= 0 for d in rest):
                total, part = _numel(given), _numel(rest)
                if part == 0 or total % part:
                    raise LayerError(f"Error Code 4: API Usage Error (IShuffleLayer: cannot reshape "
                                     f"{tuple(shape)} to {tuple(out)})")
                out[out.index(-1)] = total // part
            else:
                out[out.index(-1)] = -2
        elif _known(shape) and all(d >= 0 for d in out) and _numel(out) != _numel(shape):
            raise LayerError(f"Error Code 4: API Usage Error (IShuffleLayer: reshape changes the volume: "
                             f"{tuple(shape)} to {tuple(out)})")
        return [-1 if d == -2 else d for d in out]

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        meta = ins[0]
        assert meta is not None
        shape = [meta.shape[p] for p in _perm(self.first_transpose, meta.rank)]
        value = meta.value
        if _perm(self.first_transpose, meta.rank) != list(range(meta.rank)):
            value = None
        target = self._target(ins)
        if target is not None:
            shape = self._reshape(shape, target)
        second = _perm(self.second_transpose, len(shape))
        if second != list(range(len(shape))):
            value = None
        shape = [shape[p] for p in second]
        return [_value_meta(tuple(shape), meta.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        x = x.permute(_perm(self.first_transpose, x.dim()))
        if len(ins) > 1 and ins[1] is not None:
            target: list[int] = [int(v) for v in ins[1].tolist()]
        elif self.reshape_dims is not None:
            target = [int(d) for d in self.reshape_dims]
        else:
            target = None  # type: ignore[assignment]
        if target is not None:
            shape = [x.shape[i] if d == 0 and self.zero_is_placeholder else d for i, d in enumerate(target)]
            x = x.reshape(shape)
        return [x.permute(_perm(self.second_transpose, x.dim()))]


class ISliceLayer(ILayer):
    """``tensorrt.ISliceLayer`` (Layers.html#islicelayer; operators/Slice.html): start, shape and
    stride (or inputs 1-3), out-of-bounds handling by ``mode``, input 4 the fill value, input 5
    the axes."""

    kind = LayerType.SLICE

    def __init__(self, network: INetworkDefinition, input: ITensor, start: Sequence[int],
                 shape: Sequence[int], stride: Sequence[int]) -> None:
        super().__init__(network, [input])
        self.start = Dims(start)
        self.shape = Dims(shape)
        self.stride = Dims(stride)
        self.mode = SampleMode.STRICT_BOUNDS

    def _param(self, ins: list[Any], index: int, default: Sequence[int]) -> list[Any]:
        if len(ins) > index and ins[index] is not None:
            given = ins[index]
            if isinstance(given, Meta):
                return list(given.value) if given.value is not None else [None] * max(given.shape[0], 0)
            return [int(v) for v in given.tolist()]
        return list(default)

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        meta = ins[0]
        assert meta is not None
        for i in (1, 2, 3):
            if len(ins) > i and ins[i] is not None:
                _types("ISliceLayer", f"input {i}", ins[i].dtype, INTS)  # type: ignore[union-attr]
        if len(ins) > 5 and ins[5] is not None:
            size = self._param(ins, 2, self.shape)
            axes = self._param(ins, 5, [])
            shape = list(meta.shape)
            for axis, s in zip(axes, size, strict=False):
                if axis is None:
                    return [Meta(tuple(-1 for _ in shape), meta.dtype)]
                shape[axis % meta.rank] = -1 if s is None else s
            return [Meta(tuple(shape), meta.dtype)]
        size = self._param(ins, 2, self.shape)
        if len(size) != meta.rank:
            raise LayerError(f"Error Code 4: API Usage Error (ISliceLayer: slice of rank {len(size)} "
                             f"for an input of rank {meta.rank})")
        shape = tuple(-1 if s is None else s for s in size)
        if self.mode == SampleMode.STRICT_BOUNDS and _known(meta.shape) and _known(shape):
            start = self._param(ins, 1, self.start)
            stride = self._param(ins, 3, self.stride)
            for axis, (b, n, s, d) in enumerate(zip(start, shape, stride, meta.shape, strict=True)):
                if None in (b, s) or n == 0:
                    continue
                last = b + (n - 1) * s
                if not (0 <= b < d and 0 <= last < d):
                    raise LayerError(f"Error Code 4: API Usage Error (ISliceLayer: out of bounds slice, "
                                     f"axis {axis}: start {b}, size {n}, stride {s} for dimension {d})")
        value = None
        if meta.value is not None and meta.rank == 1 and _known(shape):
            start = self._param(ins, 1, self.start)
            stride = self._param(ins, 3, self.stride)
            if None not in (start[0], stride[0]):
                idx = [start[0] + i * stride[0] for i in range(shape[0])]
                if all(0 <= i < len(meta.value) for i in idx):
                    value = tuple(meta.value[i] for i in idx)
        return [_value_meta(shape, meta.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        size = self._param(ins, 2, self.shape)
        start = self._param(ins, 1, self.start)
        stride = self._param(ins, 3, self.stride)
        if len(ins) > 5 and ins[5] is not None:
            axes = [int(a) % x.dim() for a in ins[5].tolist()]
            full_start, full_size, full_stride = [0] * x.dim(), list(x.shape), [1] * x.dim()
            for a, b, n, s in zip(axes, start, size, stride, strict=False):
                full_start[a], full_size[a], full_stride[a] = b, n, s
            start, size, stride = full_start, full_size, full_stride
        if any(n == 0 for n in size):
            return [x.new_empty(size)]
        index = [torch.arange(n) * s + b for b, n, s in zip(start, size, stride, strict=True)]
        fill = None
        for axis, idx in enumerate(index):
            d = x.shape[axis]
            if self.mode == SampleMode.CLAMP:
                idx = idx.clamp(0, d - 1)
            elif self.mode == SampleMode.WRAP:
                idx = idx % d
            elif self.mode == SampleMode.REFLECT:
                period = 2 * (d - 1) if d > 1 else 1
                idx = idx % period
                idx = torch.where(idx >= d, period - idx, idx)
            elif self.mode == SampleMode.FILL:
                fill = fill if fill is not None else []
                fill.append((axis, (idx < 0) | (idx >= d)))
                idx = idx.clamp(0, d - 1)
            index[axis] = idx
        out = x[torch.meshgrid(*index, indexing="ij")] if index else x.clone()
        if fill:
            given = len(ins) > 4 and ins[4] is not None
            value = ins[4].reshape(()) if given else torch.zeros((), dtype=x.dtype)
            for axis, outside in fill:
                shape = [1] * x.dim()
                shape[axis] = -1
                out = torch.where(outside.reshape(shape), value.to(x.dtype), out)
        return [out]


class IConcatenationLayer(ILayer):
    """``tensorrt.IConcatenationLayer`` (Layers.html#iconcatenationlayer; operators/Concatenation.html)."""

    kind = LayerType.CONCATENATION

    def __init__(self, network: INetworkDefinition, inputs: Sequence[ITensor]) -> None:
        super().__init__(network, inputs)
        self.axis = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        metas = [m for m in ins if m is not None]
        dtype = _same("IConcatenationLayer", metas)
        rank = metas[0].rank
        axis = self.axis % rank if rank else 0
        if any(m.rank != rank for m in metas):
            raise LayerError("Error Code 4: API Usage Error (IConcatenationLayer: all inputs must have "
                             "the same rank)")
        shape = list(metas[0].shape)
        for m in metas[1:]:
            for d in range(rank):
                if d == axis:
                    shape[d] = -1 if -1 in (shape[d], m.shape[d]) else shape[d] + m.shape[d]
                elif shape[d] == -1:
                    shape[d] = m.shape[d]
                elif m.shape[d] not in (-1, shape[d]):
                    raise LayerError(f"Error Code 4: API Usage Error (IConcatenationLayer: dimension {d} "
                                     f"differs: {shape[d]} and {m.shape[d]})")
        value = None
        if rank == 1 and all(m.value is not None for m in metas):
            value = tuple(v for m in metas for v in m.value)  # type: ignore[union-attr]
        return [_value_meta(tuple(shape), dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.cat(ins, dim=self.axis)]


def _index_value(data: Meta, index: Meta) -> Value | None:
    if data.value is None or index.value is None or data.rank != 1:
        return None
    out = []
    for i in index.value:
        out.append(None if i is None or not -len(data.value) <= i < len(data.value) else data.value[i])
    return tuple(out)


class IGatherLayer(ILayer):
    """``tensorrt.IGatherLayer`` (Layers.html#igatherlayer; operators/Gather.html): DEFAULT,
    ELEMENT and ND modes; indices INT32 or INT64."""

    kind = LayerType.GATHER

    def __init__(self, network: INetworkDefinition, input: ITensor, indices: ITensor, axis: int = 0,
                 mode: Any = GatherMode.DEFAULT) -> None:
        super().__init__(network, [input, indices])
        self.axis = axis
        self.mode = mode
        self.num_elementwise_dims = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        data, index = ins[0], ins[1]
        assert data is not None and index is not None
        _types("IGatherLayer", "indices", index.dtype, INTS)
        if self.mode == GatherMode.ELEMENT:
            return [Meta(index.shape, data.dtype)]
        if self.mode == GatherMode.ND:
            b = self.num_elementwise_dims
            last = index.shape[-1]
            if last < 0:
                raise LayerError("Error Code 4: API Usage Error (IGatherLayer ND: the last dimension "
                                 "of the indices must be known at build time)")
            return [Meta(index.shape[:-1] + data.shape[b + last:], data.dtype)]
        axis = self.axis % data.rank
        b = self.num_elementwise_dims
        shape = data.shape[:axis] + index.shape[b:] + data.shape[axis + 1:]
        value = _index_value(data, index) if axis == 0 else None
        return [_value_meta(shape, data.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        data, index = ins[0], ins[1].long()
        if self.mode == GatherMode.ELEMENT:
            axis = self.axis % data.dim()
            return [torch.gather(data, axis, torch.where(index < 0, index + data.shape[axis], index))]
        if self.mode == GatherMode.ND:
            b = self.num_elementwise_dims
            last = index.shape[-1]
            if b:
                batch = data.shape[:b]
                flat_data = data.reshape(-1, *data.shape[b:])
                flat_index = index.reshape(-1, *index.shape[b:])
                outs = [d[tuple(i.unbind(-1))] for d, i in zip(flat_data, flat_index, strict=True)]
                out = torch.stack(outs)
                return [out.reshape(*batch, *out.shape[1:])]
            return [data[tuple(index[..., k] for k in range(last))]]
        axis = self.axis % data.dim()
        index = torch.where(index < 0, index + data.shape[axis], index)
        # Out of bounds, TensorRT's result is undefined (operators/Gather.html); the stand-in gives
        # zeros rather than failing, as a kernel would not fail.
        outside = (index < 0) | (index >= data.shape[axis])
        picked = torch.index_select(data, axis, index.clamp(0, max(data.shape[axis] - 1, 0)).reshape(-1))
        picked = picked.reshape(data.shape[:axis] + index.shape + data.shape[axis + 1:])
        if bool(outside.any()):
            view = [1] * axis + list(index.shape) + [1] * (data.dim() - axis - 1)
            picked = picked.masked_fill(outside.reshape(view), 0)
        return [picked]


class IReduceLayer(ILayer):
    """``tensorrt.IReduceLayer`` (Layers.html#ireducelayer; operators/Reduce.html)."""

    kind = LayerType.REDUCE
    _TYPES = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.INT32, DataType.INT64})

    def __init__(self, network: INetworkDefinition, input: ITensor, op: Any, axes: int,
                 keep_dims: bool) -> None:
        super().__init__(network, [input])
        self.op = op
        self.axes = axes
        self.keep_dims = keep_dims

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        _types("IReduceLayer", "input", meta.dtype, self._TYPES)
        axes = _axes(self.axes, meta.rank)
        shape = tuple(1 if i in axes else d for i, d in enumerate(meta.shape)) if self.keep_dims else \
            tuple(d for i, d in enumerate(meta.shape) if i not in axes)
        value = None
        if meta.value is not None and meta.rank == 1 and axes == [0] and None not in meta.value:
            fn = {ReduceOperation.SUM: sum, ReduceOperation.PROD: math.prod, ReduceOperation.MAX: max,
                  ReduceOperation.MIN: min}.get(self.op)
            value = (fn(meta.value),) if fn and meta.value else None  # type: ignore[operator]
        return [_value_meta(shape, meta.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        axes = _axes(self.axes, x.dim())
        if not axes:
            return [x]
        op = self.op
        if op == ReduceOperation.SUM:
            out = x.sum(axes, keepdim=self.keep_dims, dtype=x.dtype)
        elif op == ReduceOperation.AVG:
            out = x.mean(axes, keepdim=True) if x.is_floating_point() else \
                torch.div(x.sum(axes, keepdim=True), _numel([x.shape[a] for a in axes]),
                          rounding_mode="trunc")
            out = out if self.keep_dims else out.squeeze(axes)
        elif op == ReduceOperation.PROD:
            out = x
            for a in sorted(axes, reverse=True):
                out = out.prod(a, keepdim=True)
            out = out if self.keep_dims else out.squeeze(axes)
        elif x.numel() == 0:  # MAX/MIN over nothing: the identity, -inf or +inf (or the int bounds)
            shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
            lowest = op == ReduceOperation.MAX
            fill = (-math.inf if lowest else math.inf) if x.is_floating_point() else \
                (torch.iinfo(x.dtype).min if lowest else torch.iinfo(x.dtype).max)
            out = torch.full(shape, fill, dtype=x.dtype)
            out = out if self.keep_dims else out.squeeze(axes)
        else:
            fn = torch.amax if op == ReduceOperation.MAX else torch.amin
            out = fn(x, axes, keepdim=self.keep_dims)
        return [out.to(x.dtype)]


class ITopKLayer(ILayer):
    """``tensorrt.ITopKLayer`` (Layers.html#itopklayer; operators/TopK.html): values and INT32
    indices along one axis; ``k`` may come from input 1."""

    kind = LayerType.TOPK
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
        _types("ITopKLayer", "input", meta.dtype, self._TYPES)
        axes = _axes(self.axes, meta.rank)
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
        (axis,) = _axes(self.axes, x.dim())
        values, indices = torch.topk(x, k, dim=axis, largest=self.op == TopKOperation.MAX, sorted=True)
        return [values, indices.to(TORCH[self.indices_type])]


class ISelectLayer(ILayer):
    """``tensorrt.ISelectLayer`` (Layers.html#iselectlayer; operators/Select.html): a BOOL
    condition, two inputs of one type, broadcast."""

    kind = LayerType.SELECT

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        cond, then, other = ins
        assert cond is not None and then is not None and other is not None
        _types("ISelectLayer", "condition", cond.dtype, {DataType.BOOL})
        dtype = _same("ISelectLayer", [then, other])
        shape = broadcast("ISelectLayer", cond.shape, then.shape, other.shape)
        value = None
        if cond.value is not None and then.value is not None and other.value is not None and _known(shape):
            n = _numel(shape)
            picks = [_spread(m.value, n) for m in (cond, then, other)]
            if None not in picks:
                value = tuple(None if c is None else (t if c else e)
                              for c, t, e in zip(*picks, strict=True))  # type: ignore[call-overload]
        return [_value_meta(shape, dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.where(ins[0], ins[1], ins[2])]


def _spread(value: Value | None, n: int) -> Value | None:
    """A value broadcast to ``n`` elements (one element repeated), or None when it cannot be."""
    if value is None or len(value) not in (1, n):
        return None
    return value * n if len(value) == 1 else value


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


class IElementWiseLayer(ILayer):
    """``tensorrt.IElementWiseLayer`` (Layers.html#ielementwiselayer; operators/ElementWise.html):
    both inputs one type and one rank; AND/OR/XOR take BOOL; comparisons give BOOL; integer DIV
    truncates toward zero, FLOOR_DIV rounds down."""

    kind = LayerType.ELEMENTWISE

    def __init__(self, network: INetworkDefinition, input1: ITensor, input2: ITensor, op: Any) -> None:
        super().__init__(network, [input1, input2])
        self.op = op

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        a, b = ins
        assert a is not None and b is not None
        dtype = _same(f"IElementWiseLayer {self.op.name}", [a, b])
        if self.op in _LOGICAL:
            _types(f"IElementWiseLayer {self.op.name}", "input", dtype, {DataType.BOOL})
        elif self.op == E.EQUAL:
            _types(f"IElementWiseLayer {self.op.name}", "input", dtype, _NUMERIC | {DataType.BOOL})
        else:
            _types(f"IElementWiseLayer {self.op.name}", "input", dtype, _NUMERIC)
        shape = broadcast("IElementWiseLayer", a.shape, b.shape)
        out = DataType.BOOL if self.op in _COMPARE else dtype
        value = None
        if a.value is not None and b.value is not None and dtype in SHAPE_TYPES and _known(shape):
            fn = _int_div if self.op == E.DIV else _ELEMENTWISE.get(self.op)
            if fn is not None:
                n = _numel(shape)
                xs, ys = _spread(a.value, n), _spread(b.value, n)
                if xs is not None and ys is not None:
                    value = tuple(None if x is None or y is None or (self.op == E.FLOOR_DIV and y == 0)
                                  else fn(x, y) for x, y in zip(xs, ys, strict=True))
        return [_value_meta(shape, out, value)]

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


class IUnaryLayer(ILayer):
    """``tensorrt.IUnaryLayer`` (Layers.html#iunarylayer; operators/Unary.html): NOT takes BOOL;
    ABS, NEG and SIGN take INT32/INT64 too; ISINF/ISNAN give BOOL; the rest take floats."""

    kind = LayerType.UNARY

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
        _types(f"IUnaryLayer {self.op.name}", "input", meta.dtype, allowed)
        out = DataType.BOOL if self.op in (U.ISINF, U.ISNAN) else meta.dtype
        fn = _INT_UNARY.get(self.op)
        value = None
        if meta.value is not None and fn is not None and meta.dtype in SHAPE_TYPES:
            value = tuple(None if v is None else fn(v) for v in meta.value)
        return [_value_meta(meta.shape, out, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        if self.op == U.ROUND:  # half to even, as TensorRT's ROUND
            return [torch.round(x)]
        return [_UNARY[self.op](x)]


class IActivationLayer(ILayer):
    """``tensorrt.IActivationLayer`` (Layers.html#iactivationlayer; operators/Activation.html):
    float inputs; ``alpha`` and ``beta`` as each type documents them."""

    kind = LayerType.ACTIVATION

    def __init__(self, network: INetworkDefinition, input: ITensor, type: Any) -> None:
        super().__init__(network, [input])
        self.type = type
        self.alpha = 0.0
        self.beta = 0.0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        _types(f"IActivationLayer {self.type.name}", "input", meta.dtype, FLOATS | {DataType.INT8})
        return [Meta(meta.shape, meta.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        a, b, t = self.alpha, self.beta, self.type
        if t == A.RELU:
            return [F.relu(x)]
        if t == A.SIGMOID:
            return [torch.sigmoid(x)]
        if t == A.TANH:
            return [torch.tanh(x)]
        if t == A.LEAKY_RELU:
            return [torch.where(x >= 0, x, x * a)]
        if t == A.ELU:
            return [torch.where(x >= 0, x, a * (torch.exp(x) - 1))]
        if t == A.SELU:
            return [b * torch.where(x >= 0, x, a * (torch.exp(x) - 1))]
        if t == A.SOFTSIGN:
            return [x / (1 + x.abs())]
        if t == A.SOFTPLUS:
            return [a * torch.log1p(torch.exp(b * x))]
        if t == A.CLIP:
            return [x.clamp(a, b)]
        if t == A.HARD_SIGMOID:
            return [(a * x + b).clamp(0, 1)]
        if t == A.SCALED_TANH:
            return [a * torch.tanh(b * x)]
        if t == A.THRESHOLDED_RELU:
            return [torch.where(x > a, x, torch.zeros_like(x))]
        if t == A.GELU_ERF:
            return [F.gelu(x)]
        return [F.gelu(x, approximate="tanh")]


class IParametricReLULayer(ILayer):
    """``tensorrt.IParametricReLULayer`` (Layers.html#iparametricrelulayer; operators/ParametricReLU.html)."""

    kind = LayerType.PARAMETRIC_RELU

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x, slope = ins
        assert x is not None and slope is not None
        dtype = _same("IParametricReLULayer", [x, slope])
        _types("IParametricReLULayer", "input", dtype, FLOATS)
        return [Meta(broadcast("IParametricReLULayer", x.shape, slope.shape), dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.where(ins[0] >= 0, ins[0], ins[0] * ins[1])]


class IMatrixMultiplyLayer(ILayer):
    """``tensorrt.IMatrixMultiplyLayer`` (Layers.html#imatrixmultiplylayer;
    operators/MatrixMultiply.html): NONE, TRANSPOSE or VECTOR per input, batch dims broadcast,
    both inputs one float type."""

    kind = LayerType.MATRIX_MULTIPLY

    def __init__(self, network: INetworkDefinition, input0: ITensor, op0: Any, input1: ITensor,
                 op1: Any) -> None:
        super().__init__(network, [input0, input1])
        self.op0 = op0
        self.op1 = op1

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        a, b = ins
        assert a is not None and b is not None
        dtype = _same("IMatrixMultiplyLayer", [a, b])
        _types("IMatrixMultiplyLayer", "input", dtype, FLOATS)
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


def _nd(value: Any, n: int, default: int) -> list[int]:
    if value is None:
        return [default] * n
    values = list(value)
    return values if len(values) == n else [values[0]] * n if len(values) == 1 else values


class _Windowed(ILayer):
    """What convolution, deconvolution and pooling share: stride, padding (pre/post, or the
    padding mode's), dilation; ``padding_nd`` sets both pre and post padding."""

    def _window_init(self, window: Sequence[int]) -> None:
        n = len(window)
        self.window = list(window)
        self.stride_nd = Dims([1] * n)
        self.pre_padding = Dims([0] * n)
        self.post_padding = Dims([0] * n)
        self.dilation_nd = Dims([1] * n)
        self.padding_mode = PaddingMode.EXPLICIT_ROUND_DOWN

    @property
    def padding_nd(self) -> Dims:
        return self.pre_padding

    @padding_nd.setter
    def padding_nd(self, value: Sequence[int]) -> None:
        self.pre_padding = Dims(value)
        self.post_padding = Dims(value)

    def _pads(self, spatial: Sequence[int]) -> tuple[list[int], list[int]]:
        n = len(self.window)
        pre, post = _nd(self.pre_padding, n, 0), _nd(self.post_padding, n, 0)
        if self.padding_mode in (PaddingMode.SAME_UPPER, PaddingMode.SAME_LOWER):
            stride, dil = _nd(self.stride_nd, n, 1), _nd(self.dilation_nd, n, 1)
            pre, post = [], []
            for d, k, s, r in zip(spatial, self.window, stride, dil, strict=True):
                total = max((math.ceil(d / s) - 1) * s + (k - 1) * r + 1 - d, 0)
                small, large = total // 2, total - total // 2
                pre.append(small if self.padding_mode == PaddingMode.SAME_UPPER else large)
                post.append(large if self.padding_mode == PaddingMode.SAME_UPPER else small)
        return pre, post

    def _spatial_out(self, spatial: Sequence[int]) -> list[int]:
        n = len(self.window)
        stride, dil = _nd(self.stride_nd, n, 1), _nd(self.dilation_nd, n, 1)
        if any(d < 0 for d in spatial):
            known = [d if d >= 0 else 1 for d in spatial]
            pre, post = self._pads(known)
        else:
            pre, post = self._pads(spatial)
        up = self.padding_mode in (PaddingMode.EXPLICIT_ROUND_UP, PaddingMode.SAME_UPPER,
                                   PaddingMode.SAME_LOWER)
        out = []
        for d, k, s, r, a, b in zip(spatial, self.window, stride, dil, pre, post, strict=True):
            if d < 0:
                out.append(-1)
                continue
            span = d + a + b - ((k - 1) * r + 1)
            if span < 0:
                raise LayerError(f"Error Code 4: API Usage Error ({type(self).__name__}: the window "
                                 f"{k} (dilation {r}) does not fit the padded dimension {d + a + b})")
            out.append((math.ceil(span / s) if up else span // s) + 1)
        return out


class IConvolutionLayer(_Windowed):
    """``tensorrt.IConvolutionLayer`` (Layers.html#iconvolutionlayer; operators/Convolution.html):
    kernel and bias as weights or as inputs 1 and 2, of the input's float type."""

    kind = LayerType.CONVOLUTION

    def __init__(self, network: INetworkDefinition, input: ITensor, num_output_maps: int,
                 kernel_shape: Sequence[int], kernel: Any, bias: Any = None) -> None:
        super().__init__(network, [input])
        self._window_init(kernel_shape)
        self.num_output_maps = num_output_maps
        self.kernel = weights_tensor(kernel)[0] if kernel is not None else torch.empty(0)
        self.bias = weights_tensor(bias)[0] if bias is not None else torch.empty(0)
        self.num_groups = 1

    @property
    def kernel_size_nd(self) -> Dims:
        return Dims(self.window)

    def _weights(self, ins: list[Any]) -> tuple[Any, Any]:
        kernel = ins[1] if len(ins) > 1 and ins[1] is not None else self.kernel
        bias = ins[2] if len(ins) > 2 and ins[2] is not None else (self.bias if self.bias.numel() else None)
        return kernel, bias

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x = ins[0]
        assert x is not None
        _types(type(self).__name__, "input", x.dtype, FLOATS | {DataType.INT8, DataType.FP8})
        for i in (1, 2):
            if len(ins) > i and ins[i] is not None and ins[i].dtype != x.dtype:  # type: ignore[union-attr]
                raise LayerError(f"Error Code 4: API Usage Error ({type(self).__name__}: input {i} has "
                                 f"type {ins[i].dtype.name}, the input {x.dtype.name})")  # type: ignore[union-attr]
        n = len(self.window)
        if x.rank < n + 1:
            raise LayerError(f"Error Code 4: API Usage Error ({type(self).__name__}: input of rank "
                             f"{x.rank} for a {n}-D window)")
        spatial = self._spatial_out(x.shape[-n:])
        return [Meta((*x.shape[:-n - 1], self.num_output_maps, *spatial), x.dtype)]

    def _padded(self, x: torch.Tensor) -> torch.Tensor:
        n = len(self.window)
        pre, post = self._pads(x.shape[-n:])
        pads = [p for a, b in zip(reversed(pre), reversed(post), strict=True) for p in (a, b)]
        if any(p < 0 for p in pads):  # negative padding crops
            x = F.pad(x, [min(p, 0) for p in pads])
            pads = [max(p, 0) for p in pads]
        return F.pad(x, pads) if any(pads) else x

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        n = len(self.window)
        groups = self.num_groups
        kernel, bias = self._weights(ins)
        kernel = kernel.reshape(self.num_output_maps, x.shape[-n - 1] // groups, *self.window).to(x.dtype)
        bias = bias.reshape(-1).to(x.dtype) if bias is not None else None
        conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
        stride, dil = _nd(self.stride_nd, n, 1), _nd(self.dilation_nd, n, 1)
        out = conv(self._padded(x), kernel, bias, stride, 0, dil, groups)
        if self.padding_mode == PaddingMode.EXPLICIT_ROUND_UP:
            want = self._spatial_out(x.shape[-n:])
            if list(out.shape[-n:]) != want:
                padded = F.pad(self._padded(x), [p for d, w, o in zip(reversed(stride), reversed(want),
                               reversed(out.shape[-n:]), strict=True) for p in (0, (w - o) * d)])
                out = conv(padded, kernel, bias, stride, 0, dil, groups)
        return [out]


class IDeconvolutionLayer(IConvolutionLayer):
    """``tensorrt.IDeconvolutionLayer`` (Layers.html#ideconvolutionlayer;
    operators/Deconvolution.html): output ``(in - 1) * stride + (kernel - 1) * dilation + 1 -
    pre - post`` per spatial dimension; kernel laid out (C_in, C_out / groups, k...)."""

    kind = LayerType.DECONVOLUTION

    def _spatial_out(self, spatial: Sequence[int]) -> list[int]:
        n = len(self.window)
        stride, dil = _nd(self.stride_nd, n, 1), _nd(self.dilation_nd, n, 1)
        pre, post = _nd(self.pre_padding, n, 0), _nd(self.post_padding, n, 0)
        return [-1 if d < 0 else (d - 1) * s + (k - 1) * r + 1 - a - b
                for d, k, s, r, a, b in zip(spatial, self.window, stride, dil, pre, post, strict=True)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        n = len(self.window)
        groups = self.num_groups
        kernel, bias = self._weights(ins)
        kernel = kernel.reshape(x.shape[-n - 1], self.num_output_maps // groups, *self.window).to(x.dtype)
        bias = bias.reshape(-1).to(x.dtype) if bias is not None else None
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        stride, dil = _nd(self.stride_nd, n, 1), _nd(self.dilation_nd, n, 1)
        full = conv(x, kernel, bias, stride, 0, 0, groups, dil)
        pre, post = _nd(self.pre_padding, n, 0), _nd(self.post_padding, n, 0)
        index = [slice(None)] * (full.dim() - n) + [slice(a, full.shape[full.dim() - n + i] - b)
                                                     for i, (a, b) in enumerate(zip(pre, post, strict=True))]
        return [full[tuple(index)]]


class IPoolingLayer(_Windowed):
    """``tensorrt.IPoolingLayer`` (Layers.html#ipoolinglayer; operators/Pooling.html): MAX or
    AVERAGE; padding counted in the average unless ``average_count_excludes_padding``."""

    kind = LayerType.POOLING

    def __init__(self, network: INetworkDefinition, input: ITensor, type: Any,
                 window_size: Sequence[int]) -> None:
        super().__init__(network, [input])
        self._window_init(window_size)
        self.stride_nd = Dims(window_size)
        self.type = type
        self.average_count_excludes_padding = True
        self.blend_factor = 0.0

    @property
    def window_size_nd(self) -> Dims:
        return Dims(self.window)

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        _types("IPoolingLayer", "input", x.dtype, FLOATS | {DataType.INT8})
        n = len(self.window)
        return [Meta(x.shape[:-n] + tuple(self._spatial_out(x.shape[-n:])), x.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        n = len(self.window)
        want = self._spatial_out(x.shape[-n:])
        stride = _nd(self.stride_nd, n, 1)
        pre, post = self._pads(x.shape[-n:])
        # Pad after each window's reach, so that ROUND_UP windows exist; padding never counts for MAX.
        extra = [max(0, (w - 1) * s + k - (d + a + b))
                 for w, s, k, d, a, b in zip(want, stride, self.window, x.shape[-n:], pre, post, strict=True)]
        pads = [p for a, b, e in zip(reversed(pre), reversed(post), reversed(extra), strict=True)
                for p in (a, b + e)]
        if self.type == PoolingType.MAX:
            padded = F.pad(x, pads, value=-math.inf) if any(pads) else x
            pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
            return [pool(padded, self.window, stride)]
        ones = torch.ones((1, 1, *x.shape[-n:]), dtype=x.dtype)
        padded = F.pad(x, pads) if any(pads) else x
        inside = F.pad(ones, pads)
        if not self.average_count_excludes_padding:
            inside = F.pad(F.pad(ones, [p for a, b in zip(reversed(pre), reversed(post), strict=True)
                                        for p in (a, b)], value=1.0),
                           [p for e in reversed(extra) for p in (0, e)])
        pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[n - 1]
        total = pool(padded, self.window, stride) * math.prod(self.window)
        count = pool(inside.reshape(1, *inside.shape[-n - 1:]) if n == 1 else inside, self.window, stride) \
            * math.prod(self.window)
        return [total / count.reshape(count.shape[-n - 1:] if n > 1 else count.shape)]


class ISoftMaxLayer(ILayer):
    """``tensorrt.ISoftMaxLayer`` (Layers.html#isoftmaxlayer; operators/SoftMax.html): one axis,
    a bit mask; by default the last."""

    kind = LayerType.SOFTMAX

    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.axes: int | None = None

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        _types("ISoftMaxLayer", "input", x.dtype, FLOATS)
        return [Meta(x.shape, x.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        axes = _axes(self.axes, x.dim()) if self.axes is not None else [x.dim() - 1]
        return [torch.softmax(x, axes[0])]


class IScaleLayer(ILayer):
    """``tensorrt.IScaleLayer`` (Layers.html#iscalelayer; operators/Scale.html):
    ``(x * scale + shift) ** power`` per UNIFORM, CHANNEL or ELEMENTWISE mode."""

    kind = LayerType.SCALE

    def __init__(self, network: INetworkDefinition, input: ITensor, mode: Any, shift: Any = None,
                 scale: Any = None, power: Any = None, channel_axis: int = 1) -> None:
        super().__init__(network, [input])
        self.mode = mode
        self.shift = _maybe(shift)
        self.scale = _maybe(scale)
        self.power = _maybe(power)
        self.channel_axis = channel_axis

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        _types("IScaleLayer", "input", x.dtype, FLOATS | {DataType.INT8})
        return [Meta(x.shape, x.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]

        def shaped(value: torch.Tensor | None) -> torch.Tensor | None:
            if value is None or value.numel() == 0:
                return None
            value = value.to(x.dtype)
            if self.mode == ScaleMode.CHANNEL:
                shape = [1] * x.dim()
                shape[self.channel_axis] = -1
                return value.reshape(shape)
            if self.mode == ScaleMode.ELEMENTWISE:
                return value.reshape(x.shape[self.channel_axis:])
            return value.reshape(())

        out = x
        scale, shift, power = shaped(self.scale), shaped(self.shift), shaped(self.power)
        if scale is not None:
            out = out * scale
        if shift is not None:
            out = out + shift
        if power is not None:
            out = out ** power
        return [out]


def _maybe(weights: Any) -> torch.Tensor | None:
    return None if weights is None else weights_tensor(weights)[0]


class IResizeLayer(ILayer):
    """``tensorrt.IResizeLayer`` (Layers.html#iresizelayer; operators/Resize.html): output shape
    from ``shape``, ``scales`` (floor of dim * scale) or input 1; NEAREST (with its rounding),
    LINEAR or CUBIC over the innermost resized dimensions, coordinates mapped as
    ``coordinate_transformation`` says."""

    kind = LayerType.RESIZE

    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.shape: Any = None
        self.scales: Any = None
        self.resize_mode = InterpolationMode.NEAREST
        self.coordinate_transformation = ResizeCoordinateTransformation.ASYMMETRIC
        self.selector_for_single_pixel = ResizeSelector.FORMULA
        self.nearest_rounding = ResizeRoundMode.FLOOR
        self.cubic_coeff = -0.75
        self.exclude_outside = False

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x = ins[0]
        assert x is not None
        _types("IResizeLayer", "input", x.dtype, FLOATS | {DataType.INT8})
        if len(ins) > 1 and ins[1] is not None:
            given = ins[1]
            if given.dtype in INTS:
                shape = tuple(-1 if v is None else v for v in given.value) if given.value is not None \
                    else tuple([-1] * x.rank)
                return [Meta(shape, x.dtype)]
            return [Meta(tuple(-1 for _ in x.shape), x.dtype)]
        if self.shape is not None:
            return [Meta(tuple(int(d) for d in self.shape), x.dtype)]
        scales = list(self.scales) if self.scales is not None else [1.0] * x.rank
        return [Meta(tuple(-1 if d < 0 else math.floor(d * s) for d, s in zip(x.shape, scales,
                                                                                  strict=True)), x.dtype)]

    def _out_shape(self, x: torch.Tensor, ins: list[Any]) -> tuple[list[int], list[float]]:
        if len(ins) > 1 and ins[1] is not None:
            given = ins[1]
            if given.is_floating_point():
                scales = [float(s) for s in given.tolist()]
                return [math.floor(d * s) for d, s in zip(x.shape, scales, strict=True)], scales
            shape = [int(v) for v in given.tolist()]
        elif self.shape is not None:
            shape = [int(d) for d in self.shape]
        else:
            scales = [float(s) for s in self.scales]
            return [math.floor(d * s) for d, s in zip(x.shape, scales, strict=True)], scales
        return shape, [o / i if i else 1.0 for o, i in zip(shape, x.shape, strict=True)]

    def _coords(self, out: int, size: int, scale: float) -> torch.Tensor:
        i = torch.arange(out, dtype=torch.float64)
        mode = self.coordinate_transformation
        if mode == ResizeCoordinateTransformation.ALIGN_CORNERS:
            return i * ((size - 1) / (out - 1)) if out > 1 else torch.zeros(out, dtype=torch.float64)
        if mode == ResizeCoordinateTransformation.HALF_PIXEL:
            if out == 1 and self.selector_for_single_pixel == ResizeSelector.UPPER:
                return torch.zeros(1, dtype=torch.float64)
            return (i + 0.5) / scale - 0.5
        return i / scale

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        shape, scales = self._out_shape(x, ins)
        out = x
        for axis in range(x.dim()):
            if shape[axis] == x.shape[axis] and scales[axis] == 1.0:
                continue
            out = self._resize_axis(out, axis, shape[axis], scales[axis])
        return [out]

    def _resize_axis(self, x: torch.Tensor, axis: int, out: int, scale: float) -> torch.Tensor:
        size = x.shape[axis]
        coords = self._coords(out, size, scale)
        if self.resize_mode == InterpolationMode.NEAREST:
            rounding = self.nearest_rounding
            if rounding == ResizeRoundMode.FLOOR:
                index = torch.floor(coords)
            elif rounding == ResizeRoundMode.CEIL:
                index = torch.ceil(coords)
            elif rounding == ResizeRoundMode.HALF_UP:
                index = torch.floor(coords + 0.5)
            else:
                index = torch.ceil(coords - 0.5)
            return x.index_select(axis, index.long().clamp(0, size - 1))
        if self.resize_mode == InterpolationMode.LINEAR:
            coords = coords.clamp(min=0)
            low = torch.floor(coords).long().clamp(0, size - 1)
            high = (low + 1).clamp(max=size - 1)
            frac = (coords - low).clamp(0, 1).to(x.dtype)
            shape = [1] * x.dim()
            shape[axis] = -1
            frac = frac.reshape(shape)
            return x.index_select(axis, low) * (1 - frac) + x.index_select(axis, high) * frac
        a = self.cubic_coeff
        base = torch.floor(coords)
        t = coords - base
        total = None
        for k in (-1, 0, 1, 2):
            d = (t - k).abs()
            w = torch.where(d <= 1, (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1,
                            torch.where(d < 2, a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a,
                                        torch.zeros_like(d)))
            index = (base + k).long()
            if self.exclude_outside:
                w = torch.where((index < 0) | (index >= size), torch.zeros_like(w), w)
            shape = [1] * x.dim()
            shape[axis] = -1
            term = x.index_select(axis, index.clamp(0, size - 1)) * w.to(x.dtype).reshape(shape)
            total = term if total is None else total + term
        assert total is not None
        return total


class INormalizationLayer(ILayer):
    """``tensorrt.INormalizationLayer`` (Layers.html#inormalizationlayer;
    operators/Normalization.html): ``(x - mean) / sqrt(var + epsilon) * scale + bias`` over the
    axes, per group when ``num_groups`` > 1."""

    kind = LayerType.NORMALIZATION

    def __init__(self, network: INetworkDefinition, input: ITensor, scale: ITensor, bias: ITensor,
                 axesMask: int) -> None:
        super().__init__(network, [input, scale, bias])
        self.axes = axesMask
        self.epsilon = 1e-5
        self.num_groups = 1
        self.compute_precision = DataType.FLOAT

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x, scale, bias = ins
        assert x is not None and scale is not None and bias is not None
        dtype = _same("INormalizationLayer", [x, scale, bias])
        _types("INormalizationLayer", "input", dtype, FLOATS)
        return [Meta(x.shape, dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x, scale, bias = ins
        axes = _axes(self.axes, x.dim())
        g = self.num_groups
        if g > 1:  # scale and bias are per group, shape (1, G, 1, ...)
            grouped = x.reshape(x.shape[0], g, -1)
            mean = grouped.mean(-1, keepdim=True)
            var = grouped.var(-1, unbiased=False, keepdim=True)
            normed = (grouped - mean) / torch.sqrt(var + self.epsilon)
            return [(normed * scale.reshape(1, g, 1) + bias.reshape(1, g, 1)).reshape(x.shape)]
        mean = x.mean(axes, keepdim=True)
        var = x.var(axes, unbiased=False, keepdim=True)
        return [(x - mean) / torch.sqrt(var + self.epsilon) * scale + bias]


class IScatterLayer(ILayer):
    """``tensorrt.IScatterLayer`` (Layers.html#iscatterlayer; operators/Scatter.html): ELEMENT
    (along ``axis``) or ND; updates of the data's type, INT32/INT64 indices."""

    kind = LayerType.SCATTER

    def __init__(self, network: INetworkDefinition, data: ITensor, indices: ITensor, updates: ITensor,
                 mode: Any) -> None:
        super().__init__(network, [data, indices, updates])
        self.mode = mode
        self.axis = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        data, index, updates = ins
        assert data is not None and index is not None and updates is not None
        _types("IScatterLayer", "indices", index.dtype, INTS)
        _same("IScatterLayer", [data, updates])
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


class IFillLayer(ILayer):
    """``tensorrt.IFillLayer`` (Layers.html#ifilllayer; operators/Fill.html): LINSPACE
    ``alpha + beta * index`` (input 0 the shape, 1 the start, 2 the delta); the random fills."""

    kind = LayerType.FILL

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
        _types(f"IFillLayer {self.operation.name}", "output", self.to_type, allowed)
        if ins and ins[0] is not None:
            given = ins[0]
            shape = tuple(-1 if v is None else v for v in given.value) if given.value is not None \
                else tuple([-1] * max(given.shape[0], 0))
        else:
            shape = tuple(self.shape)
        value = None
        if self.operation == FillOperation.LINSPACE and self.to_type in INTS and not (len(ins) > 1) \
                and _known(shape) and len(shape) == 1:
            value = tuple(int(self.alpha) + int(self.beta) * i for i in range(shape[0]))
        return [_value_meta(shape, self.to_type, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        shape = [int(v) for v in ins[0].tolist()] if ins and ins[0] is not None else list(self.shape)
        dtype = TORCH[self.to_type]
        if self.operation == FillOperation.LINSPACE:
            start = ins[1] if len(ins) > 1 and ins[1] is not None else torch.tensor(self.alpha, dtype=dtype)
            delta = ins[2] if len(ins) > 2 and ins[2] is not None else torch.tensor(self.beta, dtype=dtype)
            delta = delta.reshape(-1) if delta.dim() else delta.reshape(1).expand(len(shape))
            out = start.reshape(()).to(dtype) + torch.zeros(shape, dtype=dtype)
            for axis, step in enumerate(delta.tolist()):
                view = [1] * len(shape)
                view[axis] = -1
                out = out + (torch.arange(shape[axis]) * step).to(dtype).reshape(view)
            return [out]
        if self.operation == FillOperation.RANDOM_UNIFORM:
            low, high = float(self.alpha), float(self.beta)
            return [torch.rand(shape).mul(high - low).add(low).to(dtype)]
        return [torch.randn(shape).mul(float(self.beta)).add(float(self.alpha)).to(dtype)]


class INonZeroLayer(ILayer):
    """``tensorrt.INonZeroLayer`` (Layers.html#inonzerolayer; operators/NonZero.html): the
    indices of non-zero elements as (rank, N), N known only at run time."""

    kind = LayerType.NON_ZERO

    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.indices_type = DataType.INT64

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (x,) = ins
        assert x is not None
        return [Meta((x.rank, -1), self.indices_type)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [torch.nonzero(ins[0]).t().contiguous().to(TORCH[self.indices_type])]


class IGridSampleLayer(ILayer):
    """``tensorrt.IGridSampleLayer`` (Layers.html#igridsamplelayer; operators/GridSample.html)."""

    kind = LayerType.GRID_SAMPLE

    def __init__(self, network: INetworkDefinition, input: ITensor, grid: ITensor) -> None:
        super().__init__(network, [input, grid])
        self.interpolation_mode = InterpolationMode.LINEAR
        self.align_corners = False
        self.sample_mode = SampleMode.FILL

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x, grid = ins
        assert x is not None and grid is not None
        dtype = _same("IGridSampleLayer", [x, grid])
        _types("IGridSampleLayer", "input", dtype, FLOATS)
        return [Meta(x.shape[:2] + grid.shape[1:3], dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        mode = {InterpolationMode.NEAREST: "nearest", InterpolationMode.LINEAR: "bilinear",
                InterpolationMode.CUBIC: "bicubic"}[self.interpolation_mode]
        padding = {SampleMode.FILL: "zeros", SampleMode.CLAMP: "border",
                   SampleMode.REFLECT: "reflection"}.get(self.sample_mode, "zeros")
        return [F.grid_sample(ins[0], ins[1], mode=mode, padding_mode=padding,
                              align_corners=self.align_corners)]


class _AxesLayer(ILayer):
    """What squeeze and unsqueeze share: input 1, a 1-D shape tensor of build-time axes."""

    def _axes_of(self, meta: Meta | None, rank: int) -> list[int]:
        if meta is None or meta.value is None or None in meta.value:
            raise LayerError(f"Error Code 4: API Usage Error ({type(self).__name__}: the axes must be "
                             "known at build time)")
        return sorted(int(a) % rank for a in meta.value)  # type: ignore[arg-type]


class IUnsqueezeLayer(_AxesLayer):
    """``tensorrt.IUnsqueezeLayer`` (Layers.html#iunsqueezelayer; operators/Unsqueeze.html)."""

    kind = LayerType.UNSQUEEZE

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x = ins[0]
        assert x is not None
        axes = self._axes_of(ins[1], x.rank + len(ins[1].value or ()))  # type: ignore[union-attr]
        shape = list(x.shape)
        for a in axes:
            shape.insert(a, 1)
        return [_value_meta(tuple(shape), x.dtype, x.value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        axes = sorted(int(a) % (x.dim() + ins[1].numel()) for a in ins[1].tolist())
        for a in axes:
            x = x.unsqueeze(a)
        return [x]


class ISqueezeLayer(_AxesLayer):
    """``tensorrt.ISqueezeLayer`` (Layers.html#isqueezelayer; operators/Squeeze.html)."""

    kind = LayerType.SQUEEZE

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x = ins[0]
        assert x is not None
        axes = self._axes_of(ins[1], x.rank)
        return [_value_meta(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype, x.value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        return [x.squeeze(tuple(int(a) % x.dim() for a in ins[1].tolist()))]


class IAttention(ILayer):
    """``tensorrt.IAttention`` (Layers.html#iattention; operators/Attention.html):
    ``normalize(query @ key^T + mask) @ value``, the query already scaled; a BOOL mask keeps where
    True, a float mask is added; ``causal_kind`` UPPER_LEFT keeps key positions ``j <= i``,
    LOWER_RIGHT ``j <= i + (s_kv - s_q)`` (``causal``, the older switch, means UPPER_LEFT); query,
    key and value of one float type. ``add_attention_v2`` takes the causal kind."""

    kind = LayerType.ATTENTION

    def __init__(self, network: INetworkDefinition, query: ITensor, key: ITensor, value: ITensor,
                 norm_op: Any, causal: Any) -> None:
        super().__init__(network, [query, key, value])
        self.normalization_operation = norm_op
        self.causal_kind = causal if isinstance(causal, CausalMaskKind) else \
            CausalMaskKind.UPPER_LEFT if causal else CausalMaskKind.NONE
        self.decomposable = False
        self.normalization_quantize_scale: Any = None
        self.normalization_quantize_to_type: Any = None

    @property
    def causal(self) -> bool:
        return self.causal_kind != CausalMaskKind.NONE

    @causal.setter
    def causal(self, value: bool) -> None:
        self.causal_kind = CausalMaskKind.UPPER_LEFT if value else CausalMaskKind.NONE

    @property
    def mask(self) -> ITensor | None:
        return self.get_input(3)

    @mask.setter
    def mask(self, tensor: ITensor) -> None:
        self.set_input(3, tensor)

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        q, k, v = ins[0], ins[1], ins[2]
        assert q is not None and k is not None and v is not None
        dtype = _same("IAttention", [q, k, v])
        _types("IAttention", "query", dtype, FLOATS)
        mask = ins[3] if len(ins) > 3 else None
        if mask is not None:
            if mask.dtype != DataType.BOOL and mask.dtype != dtype:
                raise LayerError(f"Error Code 4: API Usage Error (IAttention: a mask of type "
                                 f"{mask.dtype.name} for a query of type {dtype.name}; it takes BOOL or "
                                 "the query's type)")
            if self.causal:
                raise LayerError("Error Code 4: API Usage Error (IAttention: causal with a mask)")
        return [Meta((*q.shape[:-1], v.shape[-1]), dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        q, k, v = ins[0], ins[1], ins[2]
        scores = torch.matmul(q, k.transpose(-1, -2))
        mask = ins[3] if len(ins) > 3 else None
        if self.causal:
            rows, cols = scores.shape[-2:]
            offset = cols - rows if self.causal_kind == CausalMaskKind.LOWER_RIGHT else 0
            mask = torch.ones((rows, cols), dtype=torch.bool).tril(offset)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
        if self.normalization_operation.name == "SOFTMAX":
            scores = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        return [torch.matmul(scores, v)]


# add_* methods ------------------------------------------------------------------------------------

def _adder(cls: type[ILayer]) -> Any:
    def add(self: INetworkDefinition, *args: Any, **kwargs: Any) -> ILayer:
        return self.add(cls(self, *args, **kwargs))

    add.__doc__ = f"Record a {cls.__name__} (see its class)."
    return add


def _add_concatenation(self: INetworkDefinition, inputs: Sequence[ITensor]) -> ILayer:
    return self.add(IConcatenationLayer(self, list(inputs)))


def _add_select(self: INetworkDefinition, condition: ITensor, then_input: ITensor,
                else_input: ITensor) -> ILayer:
    return self.add(ISelectLayer(self, [condition, then_input, else_input]))


def _add_shape(self: INetworkDefinition, input: ITensor) -> ILayer:
    return self.add(IShapeLayer(self, [input]))


def _add_identity(self: INetworkDefinition, input: ITensor) -> ILayer:
    return self.add(IIdentityLayer(self, [input]))


def _add_parametric_relu(self: INetworkDefinition, input: ITensor, slopes: ITensor) -> ILayer:
    return self.add(IParametricReLULayer(self, [input, slopes]))


def _add_unsqueeze(self: INetworkDefinition, input: ITensor, axes: ITensor) -> ILayer:
    return self.add(IUnsqueezeLayer(self, [input, axes]))


def _add_squeeze(self: INetworkDefinition, input: ITensor, axes: ITensor) -> ILayer:
    return self.add(ISqueezeLayer(self, [input, axes]))


def _add_gather_v2(self: INetworkDefinition, input: ITensor, indices: ITensor, mode: Any) -> ILayer:
    return self.add(IGatherLayer(self, input, indices, 0, mode))


def _add_fill(self: INetworkDefinition, shape: Sequence[int], op: Any,
              output_type: DataType = DataType.FLOAT) -> ILayer:
    return self.add(IFillLayer(self, shape, op, output_type))


def _add_convolution(self: INetworkDefinition, input: ITensor, num_output_maps: int,
                     kernel_shape: Sequence[int], kernel: Any = None, bias: Any = None) -> ILayer:
    return self.add(IConvolutionLayer(self, input, num_output_maps, kernel_shape, kernel, bias))


def _add_deconvolution(self: INetworkDefinition, input: ITensor, num_output_maps: int,
                       kernel_shape: Sequence[int], kernel: Any = None, bias: Any = None) -> ILayer:
    return self.add(IDeconvolutionLayer(self, input, num_output_maps, kernel_shape, kernel, bias))


ADDERS: dict[str, Any] = {
    "add_constant": _adder(IConstantLayer), "add_shape": _add_shape, "add_identity": _add_identity,
    "add_cast": _adder(ICastLayer), "add_shuffle": _adder(IShuffleLayer), "add_slice": _adder(ISliceLayer),
    "add_concatenation": _add_concatenation, "add_gather": _adder(IGatherLayer),
    "add_gather_v2": _add_gather_v2,
    "add_reduce": _adder(IReduceLayer), "add_topk": _adder(ITopKLayer), "add_select": _add_select,
    "add_elementwise": _adder(IElementWiseLayer), "add_unary": _adder(IUnaryLayer),
    "add_activation": _adder(IActivationLayer), "add_parametric_relu": _add_parametric_relu,
    "add_matrix_multiply": _adder(IMatrixMultiplyLayer), "add_convolution_nd": _add_convolution,
    "add_deconvolution_nd": _add_deconvolution, "add_pooling_nd": _adder(IPoolingLayer),
    "add_softmax": _adder(ISoftMaxLayer), "add_scale_nd": _adder(IScaleLayer),
    "add_scale": _adder(IScaleLayer),
    "add_resize": _adder(IResizeLayer), "add_normalization": _adder(INormalizationLayer),
    "add_scatter": _adder(IScatterLayer), "add_fill": _add_fill, "add_non_zero": _adder(INonZeroLayer),
    "add_grid_sample": _adder(IGridSampleLayer), "add_attention": _adder(IAttention),
    "add_attention_v2": _adder(IAttention),
    "add_unsqueeze": _add_unsqueeze, "add_squeeze": _add_squeeze,
}

LAYER_CLASSES = {cls.__name__: cls for cls in (
    IConstantLayer, IShapeLayer, IIdentityLayer, ICastLayer, IShuffleLayer, ISliceLayer, IConcatenationLayer,
    IGatherLayer, IReduceLayer, ITopKLayer, ISelectLayer, IElementWiseLayer, IUnaryLayer, IActivationLayer,
    IParametricReLULayer, IMatrixMultiplyLayer, IConvolutionLayer, IDeconvolutionLayer, IPoolingLayer,
    ISoftMaxLayer, IScaleLayer, IResizeLayer, INormalizationLayer, IScatterLayer, IFillLayer, INonZeroLayer,
    IGridSampleLayer, IUnsqueezeLayer, ISqueezeLayer, IAttention)}


def bind() -> None:
    """Put the ``add_*`` methods on ``INetworkDefinition``."""
    for name, method in {**ADDERS, "add_loop": add_loop, "add_if_conditional": add_if_conditional}.items():
        setattr(INetworkDefinition, name, outside_modes(method))
