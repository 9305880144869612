"""The backend registry. A backend whose dependency is missing reports why instead of failing to import."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.backends.eager import EagerBackend
from trtcheck.backends.emulate import EmulateBackend
from trtcheck.backends.inductor import InductorBackend
from trtcheck.backends.lowering import LoweringBackend
from trtcheck.backends.tensorrt import TensorRTBackend
from trtcheck.options import Options

REGISTRY: dict[str, Callable[[], Backend]] = {
    TensorRTBackend.name: TensorRTBackend,
    EmulateBackend.name: EmulateBackend,
    LoweringBackend.name: LoweringBackend,
    InductorBackend.name: InductorBackend,
    EagerBackend.name: EagerBackend,
}


def get(name: str) -> Backend:
    return REGISTRY[name]()


def choose(opts: Options) -> Options:
    """The options with the default backend filled in when none was named, and one line
    (``backend_note``) saying which and why."""
    if opts.backends:
        return opts
    reason = TensorRTBackend().unavailable_reason(opts.device)
    if reason is None:
        return replace(opts, backends=("tensorrt",),
                       backend_note="no backend named: using tensorrt (Torch-TensorRT on CUDA)")
    return replace(opts, backends=("emulate",), backend_note=(
        f"no backend named: using emulate, trtcheck's prediction of TensorRT's dtype behaviour, "
        f"not TensorRT ({reason})"))


__all__ = [
    "REGISTRY",
    "Backend",
    "CompileJob",
    "Compiled",
    "choose",
    "get",
]
