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

from trtcheck import zoo
from trtcheck.errors import last_line, location

SKIP_FILES = frozenset({"conftest.py", "setup.py"})


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


def zoo_files(paths: Iterable[Path]) -> Iterator[ZooFile]:
    """Every zoo file under the given paths, sorted; a path that is a file is its own zoo."""
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
    return f"trtcheck_zoo_{digest}_{file.path.stem}"


def load(file: ZooFile) -> Discovered | ImportFailure:
    """Import one zoo file with its root on ``sys.path``; never raises for errors in user code."""
    name = module_name(file)
    root = str(file.root)
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
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
    return Discovered(file, tuple(collector.specs))

