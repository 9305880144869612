"""The Convolution layer of the behaving TensorRT stand-in (operators/Convolution.html): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type
from trtcheck.backends.lowering.trt.layers.window import Windowed, repeated
from trtcheck.backends.lowering.trt.network import INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import (
    FLOATS,
    DataType,
    Dims,
    LayerType,
    PaddingMode,
    WeightsRole,
    weights_tensor,
)


@layer(LayerType.CONVOLUTION, "add_convolution_nd",
       roles=[("kernel", WeightsRole.KERNEL), ("bias", WeightsRole.BIAS)],
       attributes=("dilation_nd", "padding_mode", "post_padding", "pre_padding", "stride_nd", "window",
                   "num_groups", "num_output_maps"))
class IConvolutionLayer(Windowed):
    """``tensorrt.IConvolutionLayer`` (Layers.html#iconvolutionlayer; operators/Convolution.html):
    kernel and bias as weights or as inputs 1 and 2, of the input's float type."""


    def __init__(self, network: INetworkDefinition, input: ITensor, num_output_maps: int,
                 kernel_shape: Sequence[int], kernel: Any = None, bias: Any = None) -> None:
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
        check_type(type(self).__name__, "input", x.dtype, FLOATS | {DataType.INT8, DataType.FP8})
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
        stride, dil = repeated(self.stride_nd, n, 1), repeated(self.dilation_nd, n, 1)
        out = conv(self._padded(x), kernel, bias, stride, 0, dil, groups)
        if self.padding_mode == PaddingMode.EXPLICIT_ROUND_UP:
            want = self._spatial_out(x.shape[-n:])
            if list(out.shape[-n:]) != want:
                padded = F.pad(self._padded(x), [p for d, w, o in zip(reversed(stride), reversed(want),
                               reversed(out.shape[-n:]), strict=True) for p in (0, (w - o) * d)])
                out = conv(padded, kernel, bias, stride, 0, dil, groups)
        return [out]
