"""The backend interface: one small class per way of compiling an exported program."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import torch
from torch.export import ExportedProgram
from torch.utils import _pytree as pytree

from trtcheck.core.profiles import Profile
from trtcheck.core.traits import Kind, Traits
from trtcheck.program.shapes import ShapeRange
from trtcheck.results.rows import Evidence

if TYPE_CHECKING:
    from trtcheck.zoo.cases import Case

__all__ = ["Backend", "CompileJob", "Compiled", "Deployable"]


class ArtifactLoader(Protocol):
    """A process that loads saved artifacts and calls them (:class:`trtcheck.backends.deploy.Loader`)."""

    def ready(self) -> object: ...
    def load(self, path: str, fmt: str) -> dict[str, Any]: ...
    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class Deployable:
    """What a compiled row gives the deploy stage: ``save(path, format)`` writes the artifact
    where the compiled module lives and returns ``{"save_s": ...}`` or ``{"not_applicable":
    why}``; ``loader`` loads and calls it in a fresh process
    (:class:`trtcheck.backends.deploy.Loader`)."""

    save: Callable[[str, str], dict[str, Any]]
    loader: Callable[[], ArtifactLoader]
    level: str  # what the round trip goes through, for the row's evidence
    # the output structure the compiled module's flat outputs are rebuilt into, as the
    # lowering backend's are (:func:`trtcheck.backends.lowering.lowering_backend.sendable`)
    structure: pytree.TreeSpec | None = None

    def rebuilt(self, outputs: Any) -> Any:
        """The loaded artifact's outputs in the compiled module's structure, leaf by leaf."""
        if self.structure is None:
            return outputs
        leaves = pytree.tree_leaves(outputs)
        if len(leaves) != self.structure.num_leaves:  # left for the comparison to name
            return outputs
        return pytree.tree_unflatten(leaves, self.structure)


@dataclass
class Compiled:
    """What a backend returns: a callable with the user's signature whose outputs are compared
    with eager's (``fn``), evidence of the path taken, and the device memory of its compiled
    artifact where the backend exposes it (bytes outside PyTorch's allocator, e.g. TensorRT
    engines).

    ``timed`` is what a user of the backend calls, timed against eager and measured for memory,
    when it is not ``fn``; with a ``cost_label``, ``fn``'s extra cost per call is measured too and
    shown as its own figure, ``"{cost_label} adds X ms a call"``, never as a speedup.

    ``deploy``: how the deploy stage saves and loads it (:mod:`trtcheck.backends.deploy`), why it
    has no saved form (a row of Torch-TensorRT's that is not applicable), or None for a backend
    that deploys nothing (eager, inductor, emulate)."""

    fn: Callable[..., Any]
    evidence: Evidence = field(default_factory=Evidence)
    memory: int | None = None
    timed: Callable[..., Any] | None = None
    cost_label: str = ""
    deploy: Deployable | str | None = None

    @property
    def called(self) -> Callable[..., Any]:
        """The callable timed: what a user calls."""
        return self.fn if self.timed is None else self.timed


@dataclass(frozen=True)
class CompileJob:
    """Everything a backend may use to compile one case."""

    # None: not exported, in a process that gives figures only and whose backends all compile
    # the user's module (their ``from_module`` trait), or for a backend that compiles the
    # user's module under this profile (:meth:`Backend.compiles_module`) when export failed
    program: ExportedProgram | None
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    profile: Profile
    device: str
    engine_cache: bool = False  # save and reuse engines in Torch-TensorRT's engine cache
    cache_dir: str | None = None  # its directory; None: Torch-TensorRT's default
    # The shapes each dynamic input runs at, by the program's input name; empty: static shapes.
    ranges: Mapping[str, ShapeRange] = field(default_factory=dict)
    module: torch.nn.Module | None = None  # the user's module, on the device, in eval mode
    # the case it was built for: what a process other than the worker builds the same module
    # from (the lowering host's torch.compile front-end, from the zoo's factory)
    case: Case | None = None
    # whether the deploy stage saves this compile: a backend may start its loader meanwhile
    deploy: bool = False

    @property
    def model(self) -> torch.nn.Module:
        """The model as its users call it: the user's module, else the exported program's."""
        if self.module is not None:
            return self.module
        assert self.program is not None  # a case is exported unless every backend has its module
        return self.program.module()


class Backend(ABC):
    """Compile an exported program into a callable that is compared against eager.

    A subclass declares its entry of :data:`trtcheck.core.traits.TRAITS` as ``traits``;
    ``name``, ``kind`` (a measurement, or a prediction of TensorRT's behaviour) and
    ``uses_profiles`` (False: one row per case) are read from it."""

    traits: ClassVar[Traits]
    # Modules its compile needs, imported before the first case rather than in it, and by a
    # fork server once for all the processes it forks.
    preload: ClassVar[tuple[str, ...]] = ()
    name: ClassVar[str]
    kind: ClassVar[Kind]
    uses_profiles: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "traits" in cls.__dict__:
            cls.name, cls.kind, cls.uses_profiles = (cls.traits.name, cls.traits.kind,
                                                     cls.traits.uses_profiles)

    def unavailable_reason(self, device: str) -> str | None:
        """Why this backend cannot run here (rows become ``skipped``), or None: by default,
        a backend whose traits need CUDA on another device."""
        if self.traits.needs_cuda and not device.startswith("cuda"):
            return f"the {self.name} backend needs a CUDA device; this run uses {device}"
        return None

    def not_applicable(self, profile: Profile) -> str | None:
        """Why ``profile`` asks nothing of this backend (its rows become ``skipped``), or None:
        by default, a front-end this backend does not run."""
        return profile.front_end.not_applicable(self.name)

    def compiles_module(self, profile: Profile | None) -> bool:
        """Whether, under ``profile``, it compiles the user's module rather than the exported
        program (so that its row runs where the case does not export): its ``from_module``
        trait, or the profile's front-end's, where this backend runs that front-end."""
        return self.traits.from_module or bool(
            profile and profile.front_end.compiles_module
            and self.name in profile.front_end.backends)

    @abstractmethod
    def compile(self, job: CompileJob) -> Compiled:
        """Compile; raise :class:`Unsupported` for a known limitation."""

    def activate(self) -> None:
        """Before the first case of a run: import :attr:`preload`, and acquire what the backend
        keeps across cases (a subclass that does calls this too)."""
        for module in self.preload:
            importlib.import_module(module)

    def deactivate(self) -> None:  # noqa: B027 (an optional hook)
        """After the last case: release it (a child process, say)."""
