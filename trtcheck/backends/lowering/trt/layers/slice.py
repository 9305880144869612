"""The Slice layer of the behaving TensorRT stand-in (operators/Slice.html): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import all_known, check_type, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import INTS, Dims, LayerType, SampleMode


@layer(LayerType.SLICE, "add_slice",
       attributes=("mode", "shape", "start", "stride"))
class ISliceLayer(ILayer):
    """``tensorrt.ISliceLayer`` (Layers.html#islicelayer; operators/Slice.html): start, shape and
    stride (or inputs 1-3), out-of-bounds handling by ``mode``, input 4 the fill value, input 5
    the axes."""


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
                check_type("ISliceLayer", f"input {i}", ins[i].dtype, INTS)  # type: ignore[union-attr]
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
        if self.mode == SampleMode.STRICT_BOUNDS and all_known(meta.shape) and all_known(shape):
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
        if meta.value is not None and meta.rank == 1 and all_known(shape):
            start = self._param(ins, 1, self.start)
            stride = self._param(ins, 3, self.stride)
            if None not in (start[0], stride[0]):
                idx = [start[0] + i * stride[0] for i in range(shape[0])]
                if all(0 <= i < len(meta.value) for i in idx):
                    value = tuple(meta.value[i] for i in idx)
        return [with_value(shape, meta.dtype, value)]

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
        index = [torch.arange(n, device=x.device) * s + b
                 for b, n, s in zip(start, size, stride, strict=True)]
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
            value = ins[4].reshape(()) if given else torch.zeros((), dtype=x.dtype, device=x.device)
            for axis, outside in fill:
                shape = [1] * x.dim()
                shape[axis] = -1
                out = torch.where(outside.reshape(shape), value.to(x.dtype), out)
        return [out]
