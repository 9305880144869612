"""The backend registry. A backend whose dependency is missing reports why instead of failing to import."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.backends.base import Backend, Compiled, CompileJob, Unsupported
from trtcheck.backends.eager import EagerBackend
from trtcheck.backends.inductor import InductorBackend

REGISTRY: dict[str, Callable[[], Backend]] = {
    EagerBackend.name: EagerBackend,
    InductorBackend.name: InductorBackend,
}


def get(name: str) -> Backend:
    return REGISTRY[name]()


def default_backends() -> tuple[tuple[str, ...], str]:
    """The backends a run uses when none is named, and one line saying why."""
    return ("eager",), "no backend named: using eager (the exported program run by PyTorch)"


__all__ = [
    "REGISTRY",
    "Backend",
    "CompileJob",
    "Compiled",
    "Unsupported",
    "default_backends",
    "get",
]
