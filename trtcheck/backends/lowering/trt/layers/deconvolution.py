"""The Deconvolution layer of the behaving TensorRT stand-in (operators/Deconvolution.html): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.convolution import IConvolutionLayer
from trtcheck.backends.lowering.trt.layers.window import repeated
from trtcheck.backends.lowering.trt.types import LayerType, WeightsRole


@layer(LayerType.DECONVOLUTION, "add_deconvolution_nd",
       roles=[("kernel", WeightsRole.KERNEL), ("bias", WeightsRole.BIAS)],
       attributes=("dilation_nd", "padding_mode", "post_padding", "pre_padding", "stride_nd", "window",
                   "num_groups", "num_output_maps"))
class IDeconvolutionLayer(IConvolutionLayer):
    """``tensorrt.IDeconvolutionLayer`` (Layers.html#ideconvolutionlayer;
    operators/Deconvolution.html): output ``(in - 1) * stride + (kernel - 1) * dilation + 1 -
    pre - post`` per spatial dimension; kernel laid out (C_in, C_out / groups, k...)."""


    def _spatial_out(self, spatial: Sequence[int]) -> list[int]:
        n = len(self.window)
        stride, dil = repeated(self.stride_nd, n, 1), repeated(self.dilation_nd, n, 1)
        pre, post = repeated(self.pre_padding, n, 0), repeated(self.post_padding, n, 0)
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
        stride, dil = repeated(self.stride_nd, n, 1), repeated(self.dilation_nd, n, 1)
        full = conv(x, kernel, bias, stride, 0, 0, groups, dil)
        pre, post = repeated(self.pre_padding, n, 0), repeated(self.post_padding, n, 0)
        index = [slice(None)] * (full.dim() - n) + [slice(a, full.shape[full.dim() - n + i] - b)
                                                     for i, (a, b) in enumerate(zip(pre, post, strict=True))]
        return [full[tuple(index)]]
