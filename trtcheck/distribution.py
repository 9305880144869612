"""trtcheck's distribution: its name on the package index, its version, and the other project
whose distribution is called ``trtcheck``.

The import package and the command are both ``trtcheck``, but the distribution is
``torch-trtcheck``: the index's ``trtcheck`` is an ONNX-to-TensorRT checker by another author.
Its wheel also ships a ``trtcheck/`` package and a ``trtcheck`` command, so where both are
installed, whichever came last has overwritten the other's files. :func:`collisions` finds
such distributions from their metadata, without importing anything.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass

DIST = "torch-trtcheck"
PACKAGE = COMMAND = "trtcheck"
# What a version reads when trtcheck runs from a source tree that was never installed.
UNKNOWN_VERSION = "0+unknown"
FIX = (f"pip uninstall -y {PACKAGE} {DIST}, then pip install {DIST} "
       f"(or keep the two in separate environments)")


def canonical(name: str) -> str:
    """A distribution name as the index compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version() -> str:
    """trtcheck's version, as installed (derived from the git tag it was built from)."""
    try:
        return importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


@dataclass(frozen=True)
class Collision:
    """Another installed distribution that ships trtcheck's package or command."""

    name: str
    version: str
    summary: str
    ships: tuple[str, ...]

    def warning(self) -> str:
        what = " and ".join(self.ships)
        about = f' ("{self.summary}")' if self.summary else ""
        return (f"trtcheck: warning: the distribution {self.name} {self.version}{about} is "
                f"installed in this environment too and ships {what}: whichever of it and {DIST} "
                f"{version()} was installed last has overwritten the other's files. Fix: {FIX}.")


def _ships(dist: importlib.metadata.Distribution) -> tuple[str, ...]:
    found = []
    top_level = dist.read_text("top_level.txt")  # setuptools writes it; other backends do not
    if (PACKAGE in top_level.split() if top_level is not None
            else re.search(rf"^{PACKAGE}/", dist.read_text("RECORD") or "", re.M)):
        found.append(f"a {PACKAGE}/ package")
    if any(ep.group == "console_scripts" and ep.name == COMMAND for ep in dist.entry_points):
        found.append(f"a {COMMAND} command")
    return tuple(found)


def collisions(path: list[str] | None = None) -> list[Collision]:
    """Installed distributions other than ours that ship a ``trtcheck`` package or command,
    on ``path`` (default ``sys.path``)."""
    seen = {canonical(DIST)}
    found = []
    for dist in importlib.metadata.distributions(**({} if path is None else {"path": path})):
        name = dist.metadata["Name"] or ""
        if not name or canonical(name) in seen:
            continue
        seen.add(canonical(name))
        ships = _ships(dist)
        if ships:
            found.append(Collision(name, dist.version, dist.metadata["Summary"] or "", ships))
    return found
