"""The IPluginV3 layer of the behaving TensorRT stand-in (Layers.html#ipluginv3layer): NOT TensorRT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.plugins.registry import NativePlugin
from trtcheck.backends.lowering.trt.types import LayerType


def _add_plugin_v3(cls: type[IPluginV3Layer], network: INetworkDefinition, inputs: Sequence[ITensor],
                   shape_inputs: Sequence[ITensor], plugin: NativePlugin) -> IPluginV3Layer:
    """``add_plugin_v3(inputs, shape_inputs, plugin)``."""
    return cls(network, list(inputs), list(shape_inputs), plugin)


@layer(LayerType.PLUGIN_V3, ("add_plugin_v3", _add_plugin_v3),
       attributes=("num_shape_inputs", "plugin"))
class IPluginV3Layer(ILayer):
    """``tensorrt.IPluginV3Layer`` (Layers.html#ipluginv3layer): a plugin over its inputs; the number,
    types and shapes of its outputs are the plugin's (``NativePlugin.infer``), and so is its
    computation. Only the plugins in the stand-in's registry can be made
    (:mod:`trtcheck.backends.lowering.trt.plugins`)."""

    def __init__(self, network: INetworkDefinition, inputs: Sequence[ITensor],
                 shape_inputs: Sequence[ITensor], plugin: NativePlugin) -> None:
        if not isinstance(plugin, NativePlugin):
            raise TypeError(f"add_plugin_v3: {type(plugin).__name__} is not a plugin the TensorRT stand-in "
                            "runs (trtcheck runs only the plugins of its registry)")
        super().__init__(network, [*inputs, *shape_inputs])
        self.num_shape_inputs = len(shape_inputs)
        self.plugin = plugin
        object.__setattr__(self, "num_outputs_of", plugin.num_outputs)

    def get_plugin(self) -> NativePlugin:
        return self.plugin

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        given = [m for m in ins if m is not None]
        return self.plugin.infer(given[:len(given) - self.num_shape_inputs])

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return self.plugin.run(ins[:len(ins) - self.num_shape_inputs])
