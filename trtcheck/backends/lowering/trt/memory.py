"""Raw device addresses as tensors, without copies: what the execution context reads and writes.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). TensorRT's runtime is given addresses
(``set_tensor_address``); the stand-in views the memory there as a tensor of the engine's shape and
type. On the CPU through numpy's ``__array_interface__``, on CUDA through ``torch.as_tensor`` over
an object with ``__cuda_array_interface__``: either way the tensor aliases the caller's memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

# numpy's type strings for each torch dtype a TensorRT engine holds; bfloat16 and float8, which numpy
# lacks, are viewed as the unsigned integer of their size and reinterpreted.
_TYPESTR = {torch.float32: "<f4", torch.float16: "<f2", torch.int8: "|i1", torch.int32: "<i4",
            torch.int64: "<i8", torch.bool: "|b1", torch.uint8: "|u1", torch.bfloat16: "<u2",
            torch.float8_e4m3fn: "|u1"}
_REINTERPRET = {torch.bfloat16, torch.float8_e4m3fn}


class _Interface:
    """An object exposing ``address`` as an array of ``shape`` and ``dtype`` to numpy or torch."""

    def __init__(self, address: int, shape: tuple[int, ...], dtype: torch.dtype, cuda: bool,
                 stream: int | None) -> None:
        interface = {"data": (address, False), "shape": shape, "typestr": _TYPESTR[dtype], "version": 3,
                     "strides": None}
        if cuda:
            interface["stream"] = stream if stream else None
            self.__cuda_array_interface__ = interface
        else:
            self.__array_interface__ = interface


def view(address: int, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device,
         stream: int | None = None) -> torch.Tensor:
    """The tensor at ``address`` (contiguous, ``shape``, ``dtype``) on ``device``, sharing its memory."""
    if any(d == 0 for d in shape):
        return torch.empty(shape, dtype=dtype, device=device)
    interface = _Interface(int(address), tuple(int(d) for d in shape), dtype, device.type == "cuda", stream)
    if device.type == "cuda":
        tensor = torch.as_tensor(interface, device=device)
    else:
        tensor = torch.from_numpy(np.asarray(interface))
    return tensor.view(dtype) if dtype in _REINTERPRET else tensor


def stream_context(handle: Any, device: torch.device) -> Any:
    """A context running PyTorch's work on the caller's CUDA stream (``execute_async_v3(stream)``)."""
    if device.type != "cuda" or not handle:
        return _Nothing()
    return torch.cuda.stream(torch.cuda.ExternalStream(int(handle), device=device))


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
