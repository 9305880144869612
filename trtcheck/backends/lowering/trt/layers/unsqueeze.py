"""The Unsqueeze layer of the behaving TensorRT stand-in (operators/Unsqueeze.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer, tensors
from trtcheck.backends.lowering.trt.layers.rules import with_value
from trtcheck.backends.lowering.trt.layers.squeeze import AxesLayer
from trtcheck.backends.lowering.trt.network import Meta
from trtcheck.backends.lowering.trt.types import LayerType


@layer(LayerType.UNSQUEEZE, ("add_unsqueeze", tensors("input", "axes")))
class IUnsqueezeLayer(AxesLayer):
    """``tensorrt.IUnsqueezeLayer`` (Layers.html#iunsqueezelayer; operators/Unsqueeze.html)."""


    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x = ins[0]
        assert x is not None
        axes = self._axes_of(ins[1], x.rank + len(ins[1].value or ()))  # type: ignore[union-attr]
        shape = list(x.shape)
        for a in axes:
            shape.insert(a, 1)
        return [with_value(tuple(shape), x.dtype, x.value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        axes = sorted(int(a) % (x.dim() + ins[1].numel()) for a in ins[1].tolist())
        for a in axes:
            x = x.unsqueeze(a)
        return [x]
