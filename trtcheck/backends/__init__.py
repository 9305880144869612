"""The backend registry. A backend whose dependency is missing reports why instead of failing to import."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.backends.base import Backend, Compiled, CompileJob, Unsupported
from trtcheck.backends.eager import EagerBackend
from trtcheck.backends.emulate import EmulateBackend
from trtcheck.backends.inductor import InductorBackend
from trtcheck.backends.lowering import LoweringBackend
from trtcheck.backends.tensorrt import TensorRTBackend

REGISTRY: dict[str, Callable[[], Backend]] = {
    TensorRTBackend.name: TensorRTBackend,
    EmulateBackend.name: EmulateBackend,
    LoweringBackend.name: LoweringBackend,
    InductorBackend.name: InductorBackend,
    EagerBackend.name: EagerBackend,
}


def get(name: str) -> Backend:
    return REGISTRY[name]()


def default_backends(device: str) -> tuple[tuple[str, ...], str]:
    """The backend a run uses when none is named, and one line saying why."""
    reason = TensorRTBackend().unavailable_reason(device)
    if reason is None:
        return ("tensorrt",), "no backend named: using tensorrt (Torch-TensorRT on CUDA)"
    return ("emulate",), (f"no backend named: using emulate, trtcheck's prediction of TensorRT's "
                          f"dtype behaviour, not TensorRT ({reason})")


__all__ = [
    "REGISTRY",
    "Backend",
    "CompileJob",
    "Compiled",
    "Unsupported",
    "default_backends",
    "get",
]
