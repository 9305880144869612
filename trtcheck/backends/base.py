"""The backend interface: one small class per way of compiling an exported program."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from torch.export import ExportedProgram

from trtcheck.config.options import Profile
from trtcheck.program.shapes import ShapeRange
from trtcheck.results.rows import Evidence, Kind

__all__ = ["Backend", "CompileJob", "Compiled"]


@dataclass
class Compiled:
    """What a backend returns: a callable with the user's signature, evidence of the path
    taken, and the device memory of its compiled artifact where the backend exposes it
    (bytes outside PyTorch's allocator, e.g. TensorRT engines)."""

    fn: Callable[..., Any]
    evidence: Evidence = field(default_factory=Evidence)
    memory: int | None = None


@dataclass(frozen=True)
class CompileJob:
    """Everything a backend may use to compile one case."""

    program: ExportedProgram
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    profile: Profile
    device: str
    engine_cache: bool = False  # save and reuse engines in Torch-TensorRT's engine cache
    cache_dir: str | None = None  # its directory; None: Torch-TensorRT's default
    # The shapes each dynamic input runs at, by the program's input name; empty: static shapes.
    ranges: Mapping[str, ShapeRange] = field(default_factory=dict)


class Backend(ABC):
    """Compile an exported program into a callable that is compared against eager."""

    name: ClassVar[str]
    # A measurement, or a prediction of TensorRT's behaviour made without running TensorRT.
    kind: ClassVar[Kind] = Kind.MEASURED
    # False when settings profiles do not change what this backend does (one row per case).
    uses_profiles: ClassVar[bool] = False

    def unavailable_reason(self, device: str) -> str | None:
        """Why this backend cannot run here (rows become ``skipped``), or None."""
        return None

    @abstractmethod
    def compile(self, job: CompileJob) -> Compiled:
        """Compile; raise :class:`Unsupported` for a known limitation."""
