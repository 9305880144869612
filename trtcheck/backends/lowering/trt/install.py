"""Installing the behaving stand-in as ``tensorrt``, with the CUDA shims a CPU run needs.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). :func:`install` patches ``sys.modules``
and torch process-wide, so it is only ever called inside a host subprocess
(:mod:`trtcheck.backends.lowering.host`), never in the trtcheck process.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

from trtcheck.backends.lowering import standin
from trtcheck.backends.lowering.trt import catalogue, engine, network, refit
from trtcheck.backends.lowering.trt import types as trt_types
from trtcheck.backends.lowering.trt.layers import conditional, loop, shuffle
from trtcheck.backends.lowering.trt.plugins import registry

# Names of the stand-in besides the enums and the layers (Graph/*, Core/*, FoundationalTypes/* of the
# Python API); the layer classes are the catalogue's (:mod:`.catalogue`).
_CLASSES: dict[str, Any] = {
    "Dims": trt_types.Dims, "Dims2": trt_types.Dims, "Dims3": trt_types.Dims, "Dims4": trt_types.Dims,
    "DimsHW": trt_types.Dims, "DimsExprs": trt_types.Dims, "Weights": trt_types.Weights,
    "ILogger": trt_types.ILogger, "Logger": trt_types.Logger, "volume": trt_types.volume,
    "Permutation": shuffle.Permutation, "ITensor": network.ITensor, "ILayer": network.ILayer,
    "INetworkDefinition": network.INetworkDefinition, "Builder": engine.Builder,
    "IBuilderConfig": engine.IBuilderConfig, "IOptimizationProfile": engine.IOptimizationProfile,
    "ITimingCache": engine.ITimingCache, "Runtime": engine.Runtime, "ICudaEngine": engine.ICudaEngine,
    "IExecutionContext": engine.IExecutionContext, "IOutputAllocator": engine.IOutputAllocator,
    "IHostMemory": engine.IHostMemory, "ISerializationConfig": engine.ISerializationConfig,
    "EngineInspector": engine.EngineInspector, "Refitter": refit.Refitter, "ILoop": loop.ILoop,
    "IIfConditional": conditional.IIfConditional, "get_plugin_registry": registry.get_plugin_registry,
    "init_libnvinfer_plugins": registry.init_libnvinfer_plugins, "PluginField": registry.PluginField,
    "PluginFieldCollection": registry.PluginFieldCollection, "IPluginV3": registry.IPluginV3,
    "IPluginCreatorV3One": registry.IPluginCreatorV3One, "IPluginRegistry": registry.IPluginRegistry,
}
# A layer class's name (IShuffleLayer, IAttention...): one the catalogue lacks is an error, not a
# placeholder, so that a converter using it fails where it uses it, saying so.
_LAYER_NAME = re.compile(r"I[A-Z]\w*Layer|IAttention\w*")


class _BehavingModule(standin.StandInModule):
    """The behaving ``tensorrt``: a layer class it lacks raises ``AttributeError`` naming those it
    has; other names it lacks are the inert stand-in's placeholders (builder flags, memory pools,
    tactic sources: settings nothing here reads)."""

    def __getattr__(self, name: str) -> Any:
        if _LAYER_NAME.fullmatch(name):
            raise network.lacks(f"tensorrt.{name}", catalogue.exports())
        return super().__getattr__(name)


def make_tensorrt(version: str) -> types.ModuleType:
    """A ``tensorrt`` module that behaves: the names above and the catalogue's layers, with the inert
    stand-in's placeholders (:mod:`trtcheck.backends.lowering.standin`) for the settings nothing
    here reads (builder flags, memory pools, tactic sources)."""
    module = standin.make_tensorrt(version, _BehavingModule)
    module.__doc__ = "A behaving stand-in for TensorRT (trtcheck): layers run by PyTorch; not TensorRT."
    for name, value in {**trt_types.ENUMS, **trt_types.ALIASES, **_CLASSES, **catalogue.exports()}.items():
        setattr(module, name, value)
    module.BEHAVES = True
    return module


# CUDA on a CPU-only torch: streams and events that do nothing, and "cuda" allocations on the CPU.

class _Stream:
    """``torch.cuda.Stream`` on the CPU: one ordered stream, so waiting is nothing."""

    cuda_stream = 0

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("cpu")

    def wait_stream(self, stream: Any) -> None:
        pass

    def wait_event(self, event: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> _Event:
        return event or _Event()

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Stream)

    def __hash__(self) -> int:
        return 0


class _Event:
    """``torch.cuda.Event`` on the CPU."""

    def __init__(self, enable_timing: bool = False, **kwargs: Any) -> None:
        pass

    def record(self, stream: Any = None) -> None:
        pass

    def wait(self, stream: Any = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, other: Any) -> float:
        return 0.0


class _Properties:
    """``torch.cuda.get_device_properties`` of the shimmed device 0."""

    major, minor = standin.CAPABILITY
    name = "trtcheck CPU stand-in device (not a GPU)"
    total_memory = 1 << 40
    multi_processor_count = 1


_DEFAULT = _Stream()


def _cpu(device: Any) -> Any:
    """A device argument with CUDA (``"cuda"``, ``"cuda:0"``, ``0``, a cuda device) as the CPU."""
    if isinstance(device, int) and not isinstance(device, bool):
        return torch.device("cpu")
    if isinstance(device, (str, torch.device)) and torch.device(device).type == "cuda":
        return torch.device("cpu")
    return device


def _on_cpu(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        return fn(*args, **kwargs)

    return wrapped


_FACTORIES = ("empty", "zeros", "ones", "full", "tensor", "as_tensor", "arange", "rand", "randn", "randint",
              "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like",
              "linspace", "eye", "empty_strided", "randperm", "normal", "tril_indices", "triu_indices")


@contextlib.contextmanager
def _nothing(*args: Any, **kwargs: Any) -> Iterator[None]:
    yield


def shim_cpu_cuda() -> None:
    """What a CPU run of Torch-TensorRT's runtime needs of ``torch.cuda`` besides the device
    queries: streams, events, device properties, and CUDA allocations and moves kept on the CPU."""
    cuda = torch.cuda
    cuda.Stream = _Stream  # type: ignore[misc,assignment]
    cuda.Event = _Event  # type: ignore[misc,assignment]
    cuda.current_stream = lambda device=None: _DEFAULT  # type: ignore[assignment]
    cuda.default_stream = lambda device=None: _DEFAULT  # type: ignore[assignment]
    cuda.stream = _nothing  # type: ignore[assignment]
    cuda.synchronize = lambda device=None: None
    cuda.set_device = lambda device: None
    cuda.get_device_properties = lambda device=None: _Properties()  # type: ignore[assignment,return-value]
    cuda.get_device_name = lambda device=None: _Properties.name
    cuda.empty_cache = lambda: None
    for name in _FACTORIES:
        setattr(torch, name, _on_cpu(getattr(torch, name)))
    tensor = torch.Tensor
    tensor.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]
    to = tensor.to

    @functools.wraps(to)
    def moved(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if args and (isinstance(args[0], (str, torch.device))
                     or (isinstance(args[0], int) and not isinstance(args[0], bool))):
            args = (_cpu(args[0]), *args[1:])
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        return to(self, *args, **kwargs)

    tensor.to = moved  # type: ignore[method-assign]
    torch.nn.Module.cuda = lambda self, device=None: self  # type: ignore[method-assign]


def install(tensorrt_version: str, shim_cuda: bool = True) -> types.ModuleType:
    """Put the behaving stand-in in ``sys.modules["tensorrt"]``; with ``shim_cuda`` (no usable GPU)
    add the inert stand-in's device queries and :func:`shim_cpu_cuda`, and run engines on the CPU;
    else engines run on CUDA at the addresses they are given."""
    module = standin.install(tensorrt_version, shim_cuda, module=make_tensorrt(tensorrt_version))
    engine.DEVICE["device"] = torch.device("cpu" if shim_cuda else "cuda")
    if shim_cuda:
        shim_cpu_cuda()
    sys.modules["tensorrt"] = module
    return module
