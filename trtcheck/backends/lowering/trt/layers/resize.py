"""The Resize layer of the behaving TensorRT stand-in (operators/Resize.html): NOT TensorRT."""

from __future__ import annotations

import math
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import (
    FLOATS,
    INTS,
    DataType,
    InterpolationMode,
    LayerType,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
)


@layer(LayerType.RESIZE, "add_resize",
       attributes=("coordinate_transformation", "cubic_coeff", "exclude_outside", "nearest_rounding",
                   "resize_mode", "scales", "selector_for_single_pixel", "shape"))
class IResizeLayer(ILayer):
    """``tensorrt.IResizeLayer`` (Layers.html#iresizelayer; operators/Resize.html): output shape
    from ``shape``, ``scales`` (floor of dim * scale) or input 1; NEAREST (with its rounding),
    LINEAR or CUBIC over the innermost resized dimensions, coordinates mapped as
    ``coordinate_transformation`` says."""


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
        check_type("IResizeLayer", "input", x.dtype, FLOATS | {DataType.INT8})
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

    def _coords(self, out: int, size: int, scale: float, device: torch.device) -> torch.Tensor:
        i = torch.arange(out, dtype=torch.float64, device=device)
        mode = self.coordinate_transformation
        if mode == ResizeCoordinateTransformation.ALIGN_CORNERS:
            if out <= 1:
                return torch.zeros(out, dtype=torch.float64, device=device)
            return i * ((size - 1) / (out - 1))
        if mode == ResizeCoordinateTransformation.HALF_PIXEL:
            if out == 1 and self.selector_for_single_pixel == ResizeSelector.UPPER:
                return torch.zeros(1, dtype=torch.float64, device=device)
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
        coords = self._coords(out, size, scale, x.device)
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
