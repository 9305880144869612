"""TensorRT's plugin registry, as the behaving stand-in has it: NOT TensorRT.

Written from TensorRT's Python API (Plugin/IPluginRegistry.html, Plugin/IPluginCreatorV3One.html,
Plugin/IPluginV3.html, FoundationalTypes/PluginField.html): creators are registered and found by
name, version and namespace; a creator makes a plugin from a ``PluginFieldCollection``; a network
records a plugin with ``INetworkDefinition.add_plugin_v3`` (:mod:`..layers.plugin_v3`). TensorRT's
plugins are native code; the stand-in's registry holds only the plugins it can run, each a
:class:`NativePlugin` computing with PyTorch what the native one computes (:func:`native` registers
one). A creator it cannot run is absent, so a caller that asks for it is told it is missing, as on a
TensorRT without that plugin library.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import torch

from trtcheck.backends.lowering.trt.network import Meta
from trtcheck.backends.lowering.trt.types import PluginFieldType, TrtEnum


class PluginField:
    """``tensorrt.PluginField``: a named value given to a plugin creator."""

    def __init__(self, name: str = "", data: Any = None, type: TrtEnum = PluginFieldType.UNKNOWN) -> None:
        self.name = name
        self.data = data
        self.type = type
        self.size = 0 if data is None else len(data) if hasattr(data, "__len__") else 1


class PluginFieldCollection(list):
    """``tensorrt.PluginFieldCollection``: the fields given to a plugin creator, a list."""

    def __init__(self, fields: Iterable[PluginField] = ()) -> None:
        super().__init__(fields)


class IPluginV3:
    """``tensorrt.IPluginV3``: a plugin instance; the base of the stand-in's native plugins."""


class NativePlugin(IPluginV3):
    """A plugin of a native library, computed with PyTorch: its output metas (``infer``, by the
    plugin's own rules, ``LayerError`` for inputs it takes no format for) and its outputs (``run``)."""

    num_outputs = 1

    def infer(self, ins: list[Meta]) -> list[Meta]:
        raise NotImplementedError

    def run(self, ins: list[torch.Tensor]) -> list[torch.Tensor]:
        raise NotImplementedError


class IPluginCreatorV3One:
    """``tensorrt.IPluginCreatorV3One``: makes one kind of plugin, ``plugin`` here."""

    name = ""
    plugin_version = "1"
    plugin_namespace = ""
    plugin: type[NativePlugin] = NativePlugin

    def __init__(self) -> None:
        self.field_names = PluginFieldCollection()

    def create_plugin(self, name: str, field_collection: Any, phase: Any = None) -> NativePlugin:
        return self.plugin()


C = TypeVar("C", bound=type[IPluginCreatorV3One])


class IPluginRegistry:
    """``tensorrt.IPluginRegistry``: the creators, by (name, version, namespace)."""

    def __init__(self) -> None:
        self.creators: dict[tuple[str, str, str], Any] = {}
        self.error_recorder: Any = None
        self.parent_search_enabled = True

    def register_creator(self, creator: Any, plugin_namespace: str = "") -> bool:
        key = (creator.name, str(creator.plugin_version), plugin_namespace or creator.plugin_namespace)
        if key in self.creators:
            return False
        self.creators[key] = creator
        return True

    def deregister_creator(self, creator: Any) -> bool:
        keys = [k for k, c in self.creators.items() if c is creator]
        for key in keys:
            del self.creators[key]
        return bool(keys)

    def get_creator(self, name: str, version: str, plugin_namespace: str = "") -> Any:
        """The creator of ``name`` at ``version`` in ``plugin_namespace``; None when there is none."""
        return self.creators.get((name, str(version), plugin_namespace))

    def get_plugin_creator(self, type: str, version: str, plugin_namespace: str = "") -> None:
        """None: the stand-in runs no IPluginV2 plugin (TensorRT's older interface)."""
        return None

    @property
    def all_creators(self) -> list[Any]:
        return list(self.creators.values())

    @property
    def plugin_creator_list(self) -> list[Any]:
        return []  # IPluginV2 creators: none


_NATIVE: list[type[IPluginCreatorV3One]] = []


def native(creator: C) -> C:
    """Register ``creator`` (a class) as a plugin the stand-in runs: in every registry made after."""
    _NATIVE.append(creator)
    return creator


_REGISTRY: list[IPluginRegistry] = []


def get_plugin_registry() -> IPluginRegistry:
    """``tensorrt.get_plugin_registry``: the process's registry, its native creators registered."""
    if not _REGISTRY:
        registry = IPluginRegistry()
        for creator in _NATIVE:
            registry.register_creator(creator())
        _REGISTRY.append(registry)
    return _REGISTRY[0]


def init_libnvinfer_plugins(logger: Any, namespace: str) -> bool:
    """``tensorrt.init_libnvinfer_plugins``: TensorRT's own plugin library; the stand-in runs none
    of its plugins, so none is registered."""
    return True
