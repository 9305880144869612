"""The Squeeze layer of the behaving TensorRT stand-in (operators/Squeeze.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer, tensors
from trtcheck.backends.lowering.trt.layers.rules import with_value
from trtcheck.backends.lowering.trt.network import ILayer, LayerError, Meta
from trtcheck.backends.lowering.trt.types import LayerType


class AxesLayer(ILayer):
    """What squeeze and unsqueeze share: input 1, a 1-D shape tensor of build-time axes."""

    def _axes_of(self, meta: Meta | None, rank: int) -> list[int]:
        if meta is None or meta.value is None or None in meta.value:
            raise LayerError(f"Error Code 4: API Usage Error ({type(self).__name__}: the axes must be "
                             "known at build time)")
        return sorted(int(a) % rank for a in meta.value)  # type: ignore[arg-type]


@layer(LayerType.SQUEEZE, ("add_squeeze", tensors("input", "axes")))
class ISqueezeLayer(AxesLayer):
    """``tensorrt.ISqueezeLayer`` (Layers.html#isqueezelayer; operators/Squeeze.html)."""


    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x = ins[0]
        assert x is not None
        axes = self._axes_of(ins[1], x.rank)
        return [with_value(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype, x.value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        return [x.squeeze(tuple(int(a) % x.dim() for a in ins[1].tolist()))]
