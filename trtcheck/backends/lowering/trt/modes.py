"""The stand-in's own tensor work runs outside whatever torch mode its caller has active.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). TensorRT is C++ and never sees torch's
modes, but the stand-in computes with torch: copying weights, inferring shapes from constant values,
pickling plans, running layers. Torch-TensorRT converts inside Dynamo's ``FakeTensorMode`` on its
``torch.compile`` path (and under an export's proxy modes when a compiled module is re-exported),
where that work would make fake tensors, which cannot be pickled or read. Every entry point that
touches a tensor is wrapped in :func:`outside_modes`.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import torch
from torch.utils._python_dispatch import _disable_current_modes

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def no_modes() -> Iterator[None]:
    """Within this, no torch dispatch mode (fake, proxy, functional, a user's) and no torch
    function mode of the caller applies; they are restored on leaving."""
    with _disable_current_modes(), torch._C.DisableTorchFunction():
        yield


def outside_modes(fn: F) -> F:
    """``fn`` run within :func:`no_modes`."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with no_modes():
            return fn(*args, **kwargs)

    return wrapped  # type: ignore[return-value]
