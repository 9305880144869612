"""The Pooling layer of the behaving TensorRT stand-in (operators/Pooling.html): NOT TensorRT."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type
from trtcheck.backends.lowering.trt.layers.window import Windowed, repeated
from trtcheck.backends.lowering.trt.network import INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, DataType, Dims, LayerType, PoolingType


@layer(LayerType.POOLING, "add_pooling_nd",
       attributes=("dilation_nd", "padding_mode", "post_padding", "pre_padding", "stride_nd", "window",
                   "average_count_excludes_padding"))
class IPoolingLayer(Windowed):
    """``tensorrt.IPoolingLayer`` (Layers.html#ipoolinglayer; operators/Pooling.html): MAX or
    AVERAGE; padding counted in the average unless ``average_count_excludes_padding``."""


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
        check_type("IPoolingLayer", "input", x.dtype, FLOATS | {DataType.INT8})
        n = len(self.window)
        return [Meta(x.shape[:-n] + tuple(self._spatial_out(x.shape[-n:])), x.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        n = len(self.window)
        want = self._spatial_out(x.shape[-n:])
        stride = repeated(self.stride_nd, n, 1)
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
        ones = torch.ones((1, 1, *x.shape[-n:]), dtype=x.dtype, device=x.device)
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
