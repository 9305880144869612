"""The KVCacheUpdate layer of the behaving TensorRT stand-in (operators/KVCacheUpdate.html): NOT
TensorRT.

Written from TensorRT's operator page and ``IKVCacheUpdateLayer``'s API reference: the layer writes
the newly computed keys or values (``update``, ``[b, d, s, h]``) into a static cache (``cache``,
``[b, d, s_max, h]``) along the sequence axis, at ``writeIndices[i]`` for each batch element ``i``:
``output[i, :, writeIndices[i] + s, :] = update[i, :, s, :]``. The cache must be a network input
with a static ``s_max``, and the output a network output sharing the cache's memory (the update is
in place): :meth:`ICudaEngine.get_aliased_input_tensor` names the cache for it. LINEAR is the only
cache mode; the padded ``[b, d, s, h]`` update form is the one modelled (the packed form, with
``updateLengths``, is not: setting ``update_form`` is a named prediction gap).
"""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.assumptions import KV_OUT_OF_BOUNDS, assume
from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, same_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import INTS, DataType, KVCacheMode, LayerType

_TYPES = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16})


@layer(LayerType.KV_CACHE_UPDATE, "add_kv_cache_update", attributes=("cache_mode",))
class IKVCacheUpdateLayer(ILayer):
    """``tensorrt.IKVCacheUpdateLayer`` (Layers.html#ikvcacheupdatelayer;
    operators/KVCacheUpdate.html): inputs cache, update, writeIndices; one output, the cache
    updated in place."""

    max_inputs = 3
    aliased_input = 0  # the output shares input 0's memory

    def __init__(self, network: INetworkDefinition, cache: ITensor, update: ITensor, write_indices: ITensor,
                 cache_mode: Any = KVCacheMode.LINEAR) -> None:
        super().__init__(network, [cache, update, write_indices])
        self.cache_mode = cache_mode

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        cache, update, index = ins[:3]
        assert cache is not None and update is not None and index is not None
        name = "IKVCacheUpdateLayer"
        if self.cache_mode != KVCacheMode.LINEAR:
            raise LayerError(f"Error Code 3: API Usage Error ({name}: cache mode {self.cache_mode} is not "
                             "supported; LINEAR is)")
        check_type(name, "cache", cache.dtype, _TYPES)
        same_type(name, [cache, update])
        check_type(name, "writeIndices", index.dtype, INTS)
        if cache.rank != 4 or update.rank != 4:
            raise LayerError(f"Error Code 4: API Usage Error ({name}: cache and update must be 4-D "
                             f"[b, d, s_max, h] and [b, d, s, h], got {cache.shape} and {update.shape})")
        if cache.shape[2] < 0:
            raise LayerError(f"Error Code 4: API Usage Error ({name}: the cache's sequence length (dimension "
                             f"2) must be static, got {cache.shape})")
        for axis in (0, 1, 3):
            a, b = cache.shape[axis], update.shape[axis]
            if a >= 0 and b >= 0 and a != b:
                raise LayerError(f"Error Code 4: API Usage Error ({name}: update {update.shape} and cache "
                                 f"{cache.shape} differ in dimension {axis})")
        if update.shape[2] > cache.shape[2]:
            raise LayerError(f"Error Code 4: API Usage Error ({name}: update length {update.shape[2]} is "
                             f"more than the cache's {cache.shape[2]})")
        batch = cache.shape[0]
        if index.rank != 1 or (index.shape[0] >= 0 and batch >= 0 and index.shape[0] != batch):
            raise LayerError(f"Error Code 4: API Usage Error ({name}: writeIndices must have shape [b] = "
                             f"[{cache.shape[0]}], got {index.shape})")
        return [Meta(cache.shape, cache.dtype)]

    def refusals(self, network: INetworkDefinition) -> list[str]:
        """The cache must be a network input, and the output a network output (they share memory)."""
        out: list[str] = []
        cache = self.inputs[0]
        if cache is None or not cache.is_network_input:
            out.append(f"{self.name}: Error Code 4: API Usage Error (IKVCacheUpdateLayer: the cache must be "
                       "a network input)")
        if self.outputs[0] not in network.outputs:
            out.append(f"{self.name}: Error Code 4: API Usage Error (IKVCacheUpdateLayer: the output must be "
                       "a network output; it shares the cache's memory)")
        return out

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        cache, update, index = ins[0], ins[1], ins[2]
        s_max, length = cache.shape[2], update.shape[2]
        for i, start in enumerate(int(w) for w in index.tolist()):
            inside = not (start < 0 or start + length > s_max) or assume(KV_OUT_OF_BOUNDS, self)
            low, high = max(start, 0), min(start + length, s_max)
            if inside and low < high:
                cache[i, :, low:high, :] = update[i, :, low - start:high - start, :]
        return [cache]
