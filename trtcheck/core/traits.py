"""What every part of trtcheck knows about a backend without loading it: its name, what its rows
are (a measurement or a prediction), its traits, and how a row names it (``lowering@2.14.0``).

Renderers, options and xfail keys read this table; each backend class in :mod:`trtcheck.backends`
declares its traits by naming its entry here, and the registry checks that every entry has a
class."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

NO_BACKEND = "-"  # the row was made before any backend ran


class Kind(str, Enum):
    """What a backend's results are: a measurement, or a prediction made at which level."""

    MEASURED = "measured"
    EMULATED = "emulated"  # trtcheck's own implementation of the documented rules
    # Torch-TensorRT's own compile from its Python code over trtcheck's TensorRT stand-in: its
    # converters' networks (or, under --lowering-dryrun, its TensorRT blocks) run by PyTorch
    LOWERED = "lowered"

    def __str__(self) -> str:
        return self.value


# What emulate does not model, said on its rows and where it ran in place of lowering.
EMULATE_SCOPE = ("it models the seeds' documented rewrite and casting rules, not Torch-TensorRT's "
                 "converters, so a converter's own bug passes there")


@dataclass(frozen=True)
class Traits:
    """A backend's kind and traits.

    ``rewrites``: it rewrites the graph (complex to real, casts around engines), so its rows show
    the dtype path taken; ``uses_profiles``: settings profiles change what it does (a row per
    profile); ``needs_cuda``: it runs on CUDA only; ``subprocess``: it runs code in a process of
    its own; ``releases``: rows may name a Torch-TensorRT release (``NAME@VERSION``);
    ``from_module``: it compiles the user's module, not the exported program, so a process that
    gives figures only need not export for it; ``on_tensorrt``: its measurements are TensorRT's
    (the other measured backends measure PyTorch)."""

    name: str
    kind: Kind
    rewrites: bool
    uses_profiles: bool
    needs_cuda: bool = False
    subprocess: bool = False
    releases: bool = False
    from_module: bool = False
    on_tensorrt: bool = False


TRAITS: Mapping[str, Traits] = {t.name: t for t in (
    Traits("tensorrt", Kind.MEASURED, rewrites=True, uses_profiles=True, needs_cuda=True,
           on_tensorrt=True),
    Traits("lowering", Kind.LOWERED, rewrites=True, uses_profiles=True, subprocess=True,
           releases=True),
    Traits("emulate", Kind.EMULATED, rewrites=True, uses_profiles=True),
    Traits("inductor", Kind.MEASURED, rewrites=False, uses_profiles=False, from_module=True),
    Traits("eager", Kind.MEASURED, rewrites=False, uses_profiles=False),
)}
NAMES = tuple(TRAITS)

# Torch-TensorRT's default min_block_size: the reports say when a run used another.
TTRT_MIN_BLOCK_SIZE = 5


@dataclass(frozen=True)
class BackendRef:
    """How a row or an option names a backend: ``lowering``, or ``lowering@2.14.0`` for the
    lowering backend on one Torch-TensorRT release."""

    name: str
    release: str | None = None

    @classmethod
    def parse(cls, text: str) -> BackendRef:
        name, _, release = text.partition("@")
        return cls(name, release or None)

    def __str__(self) -> str:
        return f"{self.name}@{self.release}" if self.release else self.name

    @property
    def traits(self) -> Traits | None:
        """The backend's traits, or None for a name trtcheck does not know (or ``-``)."""
        traits = TRAITS.get(self.name)
        return traits if traits and (self.release is None or traits.releases) else None


@functools.lru_cache(maxsize=256)  # the reports ask for every row, of a run's few backends
def traits_of(backend: str) -> Traits | None:
    """The traits of the backend a row names, or None."""
    return BackendRef.parse(backend).traits


def needs_choice(backends: Sequence[str], releases: Sequence[str]) -> bool:
    """Whether :func:`trtcheck.backends.choose` has work to do, decided without loading any
    backend: no backend named, or ``lowering`` with several Torch-TensorRT releases."""
    return not backends or (len(releases) > 1 and "lowering" in backends)


def traits_table(names: Iterable[str]) -> dict[str, Traits]:
    """The traits of each backend a run names, by that name: what the parent of isolated
    workers plans rows with, without loading any backend."""
    table = {}
    for name in names:
        traits = traits_of(name)
        if traits is None:
            raise ValueError(f"unknown backend {name!r}")
        table[name] = traits
    return table
