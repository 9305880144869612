"""Discover the zoo: import each file on its own and collect its ``@trtcheck.model`` declarations."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from trtcheck.errors import last_line, location
from trtcheck.zoo import api as zoo

SKIP_FILES = frozenset({"conftest.py", "setup.py"})
ZOO_MODULE_PREFIX = "trtcheck_zoo_"

# The modules each zoo root's files imported from that root (its helpers), by root: two roots
# that each hold a ``_helpers.py`` must each import their own.
_namespaces: dict[str, dict[str, ModuleType]] = {}


@dataclass(frozen=True)
class ZooFile:
    """One zoo file: where it is, relative to its zoo root."""

    root: Path
    path: Path

    @property
    def rel(self) -> str:
        """Path relative to the zoo root, without ``.py``, with ``/`` separators."""
        return self.path.relative_to(self.root).with_suffix("").as_posix()

    @property
    def source(self) -> str:
        """Path relative to the GitHub workspace, else the working directory, when inside it."""
        base = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()).resolve()
        return (self.path.relative_to(base) if self.path.is_relative_to(base) else self.path).as_posix()


@dataclass(frozen=True)
class ImportFailure:
    """A zoo file that failed to import: the one line to show and the full traceback."""

    file: ZooFile
    location: str
    message: str
    traceback: str


@dataclass(frozen=True)
class Discovered:
    file: ZooFile
    specs: tuple[zoo.ModelSpec, ...]
    invalid: tuple[zoo.Invalid, ...] = ()


def zoo_files(paths: Iterable[Path]) -> Iterator[ZooFile]:
    """Every zoo file under the given paths, sorted; a path that is a file is its own zoo. A
    file named twice (``a/llm.py a/``) is one file, taken where it is first named."""
    seen: set[Path] = set()
    for file in _named(paths):
        if file.path not in seen:
            seen.add(file.path)
            yield file


def _named(paths: Iterable[Path]) -> Iterator[ZooFile]:
    for given in paths:
        given = given.resolve()
        if given.is_file():
            yield ZooFile(given.parent, given)
            continue
        for path in sorted(given.rglob("*.py")):
            rel = path.relative_to(given).parts
            if any(p.startswith(("_", ".")) for p in rel) or path.name in SKIP_FILES:
                continue
            yield ZooFile(given, path)


def module_name(file: ZooFile) -> str:
    """A module name unique to the file's absolute path, so equal file names never collide."""
    digest = hashlib.sha1(str(file.path).encode()).hexdigest()[:12]
    return f"{ZOO_MODULE_PREFIX}{digest}_{file.path.stem}"


def use_root(root: Path) -> None:
    """Make ``root``'s modules the importable ones: the root first on ``sys.path``, the modules
    other zoo roots imported from themselves put aside, this root's own put back."""
    here = str(root)
    _namespaces.setdefault(here, {})
    # One C-level test a module first: a run that imports thousands of modules (torch's) and
    # loads a zoo file from each of many roots (a reduction's candidates) stays linear.
    prefixes = tuple(r + os.sep for r in _namespaces)
    for name, module in list(sys.modules.items()):
        owner = _owner(module, prefixes)
        if owner is not None and owner != here and not name.startswith(ZOO_MODULE_PREFIX):
            _namespaces[owner][name] = sys.modules.pop(name)
    sys.modules.update(_namespaces[here])
    if here in sys.path:
        sys.path.remove(here)
    sys.path.insert(0, here)


def _owner(module: ModuleType, prefixes: tuple[str, ...]) -> str | None:
    """The innermost known zoo root (of ``prefixes``: each root and a separator) that holds the
    module's file, if any."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file.startswith(prefixes):
        return None
    return max((p for p in prefixes if file.startswith(p)), key=len)[:-len(os.sep)]


def load(file: ZooFile) -> Discovered | ImportFailure:
    """Import one zoo file with its root on ``sys.path``; never raises for errors in user code."""
    name = module_name(file)
    use_root(file.root)
    collector = zoo.collecting()
    try:
        spec = importlib.util.spec_from_file_location(name, file.path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        sys.modules.pop(name, None)
        return ImportFailure(file, location(exc, file.root), last_line(exc), traceback.format_exc())
    finally:
        zoo.stop_collecting(collector)
    return Discovered(file, tuple(collector.specs), tuple(collector.invalid))


class Imported:
    """Zoo files imported in this process, each once: the full declaration behind a collected
    case (its factory and dynamic shapes stay where the file was imported)."""

    def __init__(self) -> None:
        self.files: dict[Path, Discovered | ImportFailure] = {}

    def load(self, file: ZooFile) -> Discovered | ImportFailure:
        """:func:`load`, once per file in this process."""
        if file.path not in self.files:
            self.files[file.path] = load(file)
        return self.files[file.path]

    def spec(self, file: ZooFile, name: str) -> zoo.ModelSpec | ImportFailure:
        found = self.load(file)
        if isinstance(found, ImportFailure):
            return found
        spec = next((s for s in found.specs if s.name == name), None)
        if spec is None:
            return ImportFailure(file, str(file.path), f"{file.path.name} no longer declares "
                                 f"the model {name!r} it declared when collected", "")
        return spec


# The zoo files this process imported: to collect them, or to run the cases collected elsewhere.
IMPORTED = Imported()
