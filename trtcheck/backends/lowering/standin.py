"""A generated stand-in for the ``tensorrt`` module, and CUDA shims, so that Torch-TensorRT's
Python code imports on a CPU-only torch.

THIS IS NOT TENSORRT. The stand-in has no behaviour: every name looked up on it is a placeholder
class that accepts any arguments and builds nothing. It exists so that Torch-TensorRT's lowering
and partitioning (``dynamo.compile(..., dryrun=True)``), which never call TensorRT, can run; any
code that does call TensorRT gets placeholders back, never an engine. The CUDA shims make
Torch-TensorRT believe device 0 is a GPU while every tensor stays on the CPU.

:func:`install` patches ``sys.modules`` and torch process-wide, so it is only ever called inside
the lowering host subprocess (:mod:`trtcheck.backends.lowering.host`), never in the trtcheck process.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any

import torch

# What the shimmed torch.cuda.get_device_capability reports: a data-centre GPU (sm_90), so that no
# Jetson (8.7, 7.2) or Thor (11.0) branch of torch_tensorrt/_utils.py is taken.
CAPABILITY = (9, 0)
# What the shimmed torch.cuda.mem_get_info reports as free and total: 1 TiB, so no memory warning.
_MEMORY = 1 << 40
# Names whose presence would tell torch_tensorrt it runs on TensorRT-RTX (_TensorRTProxyModule.py).
_ABSENT = frozenset({"tensorrt_rtx"})


class _PlaceholderType(type):
    """Metaclass: any attribute of a placeholder class is another placeholder class, made once."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        child = _PlaceholderType(name, (Placeholder,), {"__qualname__": f"{cls.__qualname__}.{name}",
                                                          "__module__": "tensorrt"})
        setattr(cls, name, child)
        return child

    def __int__(cls) -> int:
        return 0

    def __index__(cls) -> int:
        return 0

    def __or__(cls, other: object) -> _PlaceholderType:
        return cls

    __ror__ = __or__


class Placeholder(metaclass=_PlaceholderType):
    """A stand-in for any TensorRT class or enum member: constructible, subclassable, inert."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(type(self), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Placeholder:
        return Placeholder()


class StandInModule(types.ModuleType):
    """The ``tensorrt`` stand-in: names it does not hold are placeholder classes, made on demand."""

    def __getattr__(self, name: str) -> Any:
        if (name.startswith("__") and name.endswith("__")) or name in _ABSENT:
            raise AttributeError(name)
        value = _PlaceholderType(name, (Placeholder,), {"__qualname__": name, "__module__": "tensorrt"})
        setattr(self, name, value)
        self.TOUCHED.append(name)
        return value


def make_tensorrt(version: str, kind: type[StandInModule] = StandInModule) -> types.ModuleType:
    """A new ``tensorrt`` stand-in module (of class ``kind``) reporting ``version`` (the release's
    TensorRT version).

    It has no behaviour and is not TensorRT; ``STANDIN`` is True on it so that readers can tell."""
    module = kind("tensorrt", "A stand-in for TensorRT with no behaviour (trtcheck); not TensorRT.")
    module.__version__ = version
    module.__spec__ = importlib.machinery.ModuleSpec("tensorrt", loader=None, is_package=True)
    module.__path__ = []  # a package with no submodules: find_spec("tensorrt.plugin") is None
    module.__file__ = None
    module._package_name = "tensorrt"
    module.tensorrt = module  # torch_tensorrt reads classes as trt.tensorrt.ITensor too
    module.STANDIN = True
    module.TOUCHED = []  # the names looked up on it, in order: what Torch-TensorRT needs of TensorRT
    return module


def install(tensorrt_version: str, shim_cuda: bool = True,
            module: types.ModuleType | None = None) -> types.ModuleType:
    """Put the stand-in (``module``, else a new inert one) in ``sys.modules["tensorrt"]`` and, with
    ``shim_cuda`` (a torch without a usable GPU), shim ``torch.cuda``'s device queries.

    Call :func:`shim_device` after importing torch_tensorrt for its ``Device.to``."""
    module = module or make_tensorrt(tensorrt_version)
    sys.modules["tensorrt"] = module
    if not shim_cuda:
        return module
    torch.cuda.get_device_capability = lambda device=None: CAPABILITY
    torch.cuda.current_device = lambda: 0
    torch.cuda.mem_get_info = lambda device=None: (_MEMORY, _MEMORY)  # dynamo/_compiler.py compile()
    if not hasattr(torch._C, "_CudaDeviceProperties"):  # a CPU build; annotations in runtime/_utils.py
        torch._C._CudaDeviceProperties = _PlaceholderType("_CudaDeviceProperties", (Placeholder,), {})
    return module


def shim_device(torch_tensorrt: types.ModuleType) -> None:
    """Make torch_tensorrt's ``Device.to(torch.device)`` give the CPU, where the graphs run."""

    def to(self: Any, t: type) -> torch.device:
        if t is torch.device:
            return torch.device("cpu")
        raise TypeError("Unsupported target type for device conversion")

    torch_tensorrt.Device.to = to
