"""What convolution, deconvolution and pooling share: the window, its stride, padding and dilation.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trtcheck.backends.lowering.trt.network import ILayer, LayerError
from trtcheck.backends.lowering.trt.types import Dims, PaddingMode


def repeated(value: Any, n: int, default: int) -> list[int]:
    if value is None:
        return [default] * n
    values = list(value)
    return values if len(values) == n else [values[0]] * n if len(values) == 1 else values


class Windowed(ILayer):
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
        pre, post = repeated(self.pre_padding, n, 0), repeated(self.post_padding, n, 0)
        if self.padding_mode in (PaddingMode.SAME_UPPER, PaddingMode.SAME_LOWER):
            stride, dil = repeated(self.stride_nd, n, 1), repeated(self.dilation_nd, n, 1)
            pre, post = [], []
            for d, k, s, r in zip(spatial, self.window, stride, dil, strict=True):
                total = max((math.ceil(d / s) - 1) * s + (k - 1) * r + 1 - d, 0)
                small, large = total // 2, total - total // 2
                pre.append(small if self.padding_mode == PaddingMode.SAME_UPPER else large)
                post.append(large if self.padding_mode == PaddingMode.SAME_UPPER else small)
        return pre, post

    def _spatial_out(self, spatial: Sequence[int]) -> list[int]:
        n = len(self.window)
        stride, dil = repeated(self.stride_nd, n, 1), repeated(self.dilation_nd, n, 1)
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
