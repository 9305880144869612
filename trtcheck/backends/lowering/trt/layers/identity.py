"""The Identity layer of the behaving TensorRT stand-in (operators/Identity.html): NOT TensorRT."""

from __future__ import annotations

from trtcheck.backends.lowering.trt.catalogue import layer, tensors
from trtcheck.backends.lowering.trt.network import PassThroughLayer
from trtcheck.backends.lowering.trt.types import LayerType


@layer(LayerType.IDENTITY, ("add_identity", tensors("input")))
class IIdentityLayer(PassThroughLayer):
    """``tensorrt.IIdentityLayer`` (Layers.html#iidentitylayer; operators/Identity.html): in a
    strongly typed network its output has its input's type."""

    kind = LayerType.IDENTITY
