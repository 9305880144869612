"""Torch-TensorRT's ScatterAdd plugin (``torch_tensorrt`` namespace, version 1), computed with
PyTorch: NOT TensorRT, and not Torch-TensorRT's native code.

Torch-TensorRT converts ``index_put(..., accumulate=True)`` to it (2.12 on: ``impl/select.py``,
``index_put_scatter_add_plugin``). As its plugin library documents it (``core/plugins/impl/
scatter_add_plugin.cpp``): inputs ``[src, index_0, ..., index_{N-1}, values]``, ``src`` and
``values`` of one type among FLOAT, HALF and BF16, the indices INT32 or INT64; one output of
``src``'s shape and type, ``index_put(src, indices, values, accumulate=True)``.
"""

from __future__ import annotations

import torch

from trtcheck.backends.lowering.trt.network import LayerError, Meta
from trtcheck.backends.lowering.trt.plugins.registry import IPluginCreatorV3One, NativePlugin, native
from trtcheck.backends.lowering.trt.types import FLOATS, INTS


class ScatterAddPlugin(NativePlugin):
    """The ScatterAdd plugin: src with values added at the indices, duplicates accumulating."""

    def infer(self, ins: list[Meta]) -> list[Meta]:
        if len(ins) < 3:
            raise LayerError(f"Error Code 4: API Usage Error (ScatterAdd plugin: {len(ins)} inputs; it takes "
                             "src, one or more indices and values)")
        src, *indices, values = ins
        if src.dtype not in FLOATS or values.dtype != src.dtype:
            raise LayerError(f"Error Code 4: API Usage Error (ScatterAdd plugin: no supported format "
                             f"combination for src {src.dtype.name} and values {values.dtype.name}; it takes "
                             "FLOAT, HALF or BF16, both of one type)")
        for i, index in enumerate(indices, 1):
            if index.dtype not in INTS:
                raise LayerError(f"Error Code 4: API Usage Error (ScatterAdd plugin: input {i}, an index, "
                                 f"has type {index.dtype.name}; it takes INT32 or INT64)")
        return [Meta(src.shape, src.dtype)]

    def run(self, ins: list[torch.Tensor]) -> list[torch.Tensor]:
        src, *indices, values = ins
        return [torch.index_put(src, [i.long() for i in indices], values, accumulate=True)]


@native
class ScatterAddPluginCreator(IPluginCreatorV3One):
    name = "ScatterAdd"
    plugin_version = "1"
    plugin_namespace = "torch_tensorrt"
    plugin = ScatterAddPlugin
