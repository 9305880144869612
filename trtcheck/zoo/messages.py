"""What the zoo collector's parent and child (:mod:`trtcheck.zoo.collector`) say to each other:
one frozen dataclass for each kind, in a module of their own, which no child runs as
``__main__`` (a class pickled by reference is found by its module's name)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trtcheck.zoo.discover import Discovered, ImportFailure


@dataclass(frozen=True)
class LoadFile:
    """The request: import one zoo file, under the root it was found in."""

    root: Path
    path: Path


@dataclass(frozen=True)
class Importing:
    """The reply that the child has started importing the file: its clock starts now."""


@dataclass(frozen=True)
class Imported:
    """The reply with what the file declared, or how its import failed."""

    found: Discovered | ImportFailure
