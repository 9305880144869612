"""Getting Torch-TensorRT's Python code for the ``lowering`` backend, without TensorRT.

The ``torch-tensorrt`` wheels are small (about 4 MB); their Python code runs on a CPU-only torch
once the native libraries are left out (see :mod:`trtcheck.backends.lowering.standin`). This module finds that
code: an installed ``torch_tensorrt`` where there is one, else a release fetched once with the
user's own pip configuration and kept, Python files only, in a per-version cache directory. It never
installs anything into site-packages and never fetches TensorRT itself.
"""

from __future__ import annotations

import compileall
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from trtcheck.errors import TrtcheckError
from trtcheck.stack import RELEASES

Version = tuple[int, int]

# Releases trtcheck knows, and the torch minor each was built for (its ``Requires-Dist: torch``).
KNOWN_RELEASES: dict[str, Version] = {r.torch_tensorrt: r.torch for r in RELEASES}
PACKAGE = "torch_tensorrt"
_RECORD = "trtcheck-source.json"


class CodeUnavailable(TrtcheckError):
    """Torch-TensorRT's code cannot be had here: a one-line reason and the command that fixes it."""

    def __init__(self, reason: str, fix: str, offline: bool = False) -> None:
        super().__init__(f"{reason}; fix: {fix}")
        self.reason = reason
        self.fix = fix
        self.offline = offline  # no package index could be reached


@dataclass(frozen=True)
class CodeSource:
    """Where Torch-TensorRT's Python code comes from, and for which torch it was built."""

    version: str  # the Torch-TensorRT release, e.g. "2.13.0"
    path: Path | None  # the directory holding ``torch_tensorrt/``; None: the installed package
    origin: str  # "installed", "cache", "fetched" (by this call), "wheel" or "directory"
    built_for: Version | None  # the torch minor the release requires; None when unknown
    torch: Version  # the running torch's minor
    requires: tuple[str, ...] = ()  # modules its code imports besides torch and tensorrt

    def missing(self) -> list[str]:
        """The modules the code needs that this Python cannot import."""
        return [name for name in self.requires if importlib.util.find_spec(name) is None]

    @property
    def mismatched(self) -> bool:
        """Whether the release was built for another torch minor than the one running it."""
        return self.built_for is not None and self.built_for != self.torch

    @property
    def note(self) -> str | None:
        """One line for the report when the pairing is mismatched, else None."""
        if not self.mismatched or self.built_for is None:
            return None
        return (f"mismatched pairing: Torch-TensorRT {self.version} was built for torch "
                f"{_text(self.built_for)}, its code ran on torch {_text(self.torch)}")


# A release as a user names one: ``2.13``, ``2.13.0``, ``2.13.*``, ``2.14.0.dev20260101``.
VERSION = re.compile(r"\d+\.\d+(\.\d+)?(\.\*)?|\d+\.\d+\.\d+[\w.+-]*")


def _text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def torch_minor() -> Version:
    """``(major, minor)`` of the running torch."""
    match = re.match(r"(\d+)\.(\d+)", torch.__version__)
    if match is None:
        raise ValueError(f"cannot read torch's version from {torch.__version__!r}")
    return int(match[1]), int(match[2])


def cache_root() -> Path:
    """``$TRTCHECK_CACHE``, else ``$XDG_CACHE_HOME/trtcheck``, else ``~/.cache/trtcheck``."""
    if env := os.environ.get("TRTCHECK_CACHE"):
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trtcheck"


def cache_dir(version: str) -> Path:
    """The cache directory of one release (it holds ``torch_tensorrt/`` once fetched)."""
    return cache_root() / "torch-tensorrt" / version


def default_release(torch_version: Version) -> str:
    """The release for a torch minor: the newest known patch, else a ``X.Y.*`` pin pip resolves."""
    known = [v for v, t in KNOWN_RELEASES.items() if t == torch_version]
    if known:
        return max(known, key=lambda v: tuple(int(p) for p in v.split(".")))
    return f"{_text(torch_version)}.*"


def fetch_command(version: str) -> str:
    """The trtcheck command that fetches a release (given in error messages)."""
    return f"trtcheck fetch torch-tensorrt {version}"


def fetch(version: str | None = None) -> Path:
    """Fetch a release's Python code into the cache (once) and return its cache directory.

    ``None`` means the release matching the running torch. Uses ``pip download`` with the user's pip
    configuration, for Linux x86-64 wheels (the Python code is the same on every platform)."""
    wanted = version or default_release(torch_minor())
    if _cached(cache_dir(wanted)):
        return cache_dir(wanted)
    prefix = wanted.removesuffix(".*") + "."
    matching = [s for s in cached_releases() if s.version.startswith(prefix)]
    if matching and re.fullmatch(r"\d+\.\d+(\.\*)?", wanted):
        return cache_dir(max(matching, key=lambda s: _release_key(s.version)).version)
    with tempfile.TemporaryDirectory(prefix="trtcheck-fetch-") as tmp:
        wheel = download(wanted, Path(tmp))
        return unpack(wheel)


def download(version: str, into: Path) -> Path:
    """``pip download`` one ``torch-tensorrt`` wheel (a version or a ``X.Y.*`` pin) into ``into``."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--platform", "manylinux_2_28_x86_64", "--python-version", python,
               f"torch-tensorrt=={version}", "-d", str(into), "--quiet"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CodeUnavailable(f"pip download of torch-tensorrt=={version} timed out",
                              _offline_fix(version), offline=True) from exc
    wheels = sorted(into.glob("torch_tensorrt-*.whl"))
    if done.returncode == 0 and wheels:
        return wheels[0]
    output = done.stderr + done.stdout
    listed = re.search(r"\(from versions: ([^)]*)\)", output)
    if listed and listed[1].strip() != "none":
        raise CodeUnavailable(
            f"no torch-tensorrt=={version} wheel for Python {python} on the package index "
            f"(it has {listed[1]})", f"`{fetch_command('VERSION')}` with one of those")
    if listed:  # the index lists no torch-tensorrt at all: it was not reached
        raise CodeUnavailable(f"pip could not reach a package index holding torch-tensorrt=={version}",
                              _offline_fix(version), offline=True)
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()),
                f"pip exited with code {done.returncode}")
    raise CodeUnavailable(f"pip download of torch-tensorrt=={version} failed: {last}",
                          _offline_fix(version), offline=True)


def _offline_fix(version: str) -> str:
    pinned = version if "*" not in version else "VERSION"
    return (f"run `{fetch_command(pinned)}` on a connected machine, then copy "
            f"{cache_root() / 'torch-tensorrt'} here (or set TRTCHECK_CACHE to where it is)")


def unpack(source: Path) -> Path:
    """Copy the Python code of a wheel file or an unpacked release into the cache; return its dir."""
    if source.is_file():
        with zipfile.ZipFile(source) as wheel:
            names = wheel.namelist()
            version = _version_of(wheel.read(f"{PACKAGE}/_version.py").decode())
            metadata = _metadata(wheel.read(n).decode() for n in names
                                 if n.endswith(".dist-info/METADATA"))
            target = cache_dir(version)
            with _staging(target) as stage:
                for name in names:
                    if name.startswith(f"{PACKAGE}/") and _kept(name):
                        path = stage / name
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(wheel.read(name))
                _write_record(stage, version, metadata, str(source.name))
        return target
    package = _package_dir(source)
    version = _version_of((package / "_version.py").read_text())
    metadata = _metadata(p.read_text() for p in package.parent.glob("torch_tensorrt-*.dist-info/METADATA"))
    target = cache_dir(version)
    if package.parent.resolve() == target.resolve():  # already this release's cache directory
        return target
    with _staging(target) as stage:
        for path in package.rglob("*"):
            rel = path.relative_to(package.parent)
            if path.is_file() and _kept(rel.as_posix()):
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, stage / rel)
        _write_record(stage, version, metadata, str(source))
    return target


def _kept(name: str) -> bool:
    """Only Python files: never the native libraries (they need CUDA and TensorRT) nor the C++ SDK."""
    return name.endswith(".py")


class _staging:
    """A sibling temp dir that replaces ``target`` atomically when the block succeeds."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __enter__(self) -> Path:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.target.name}-", dir=self.target.parent))
        return self.tmp

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            if self.target.exists():
                shutil.rmtree(self.target)
            os.replace(self.tmp, self.target)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _package_dir(source: Path) -> Path:
    """The ``torch_tensorrt`` package inside ``source`` (or ``source`` itself)."""
    for candidate in (source / PACKAGE, source):
        if (candidate / "__init__.py").is_file() and (candidate / "_version.py").is_file():
            return candidate
    raise CodeUnavailable(f"{source} holds no torch_tensorrt package (no torch_tensorrt/_version.py)",
                          "point at a torch-tensorrt wheel file or the directory it was unpacked in")


def _version_of(text: str) -> str:
    match = re.search(r"""__version__\s*=\s*["']([^"']+)["']""", text)
    if match is None:
        raise ValueError("torch_tensorrt/_version.py has no __version__")
    return match[1]


def _metadata(texts: Iterable[str]) -> str:
    """The first METADATA text found, or empty."""
    return next(iter(texts), "")


def _built_for(metadata: str) -> Version | None:
    """The torch minor of ``Requires-Dist: torch<2.14.0,>=2.13.0`` (its lower bound)."""
    for line in metadata.splitlines():
        if re.match(r"Requires-Dist:\s*torch\s*[<>=(]", line):
            match = re.search(r">=\s*(\d+)\.(\d+)", line)
            if match:
                return int(match[1]), int(match[2])
    return None


def _requires(metadata: str) -> list[str]:
    """Import names of the unconditional ``Requires-Dist`` entries other than torch and TensorRT."""
    names = []
    for line in metadata.splitlines():
        match = re.match(r"Requires-Dist:\s*([A-Za-z0-9_.-]+)([^;]*)(;.*)?$", line)
        if match and not (match[3] and "extra" in match[3]):
            name = match[1].lower().replace("-", "_").replace(".", "_")
            if name != "torch" and not name.startswith(("tensorrt", "executorch")):
                names.append(name)
    return names


def _write_record(directory: Path, version: str, metadata: str, origin: str) -> None:
    built_for = _built_for(metadata)
    (directory / _RECORD).write_text(json.dumps(
        {"version": version, "built_for": list(built_for) if built_for else None,
         "requires": _requires(metadata), "from": origin}))


def compile_bytecode(directory: Path) -> None:
    """Write the bytecode of a cached release's code (``__pycache__/*.pyc``), as pip does when it
    installs a package, so that each lowering host imports it rather than compiling the modules
    it imports again, where ``PYTHONDONTWRITEBYTECODE`` is set (as on many CI images): 0.4 s of
    a host's 5.5 s import on the quiet 2-core machine. Files already compiled are left alone
    (about 20 ms in all); a cache that cannot be written is left as it is, and the host compiles
    in memory as before."""
    compileall.compile_dir(directory / PACKAGE, quiet=2)


def _cached(directory: Path) -> bool:
    return (directory / _RECORD).is_file() and (directory / PACKAGE / "__init__.py").is_file()


def _from_cache(directory: Path, origin: str = "cache") -> CodeSource:
    record = json.loads((directory / _RECORD).read_text())
    built = record.get("built_for")
    return CodeSource(record["version"], directory, origin,
                      (built[0], built[1]) if built else KNOWN_RELEASES.get(record["version"]),
                      torch_minor(), tuple(record.get("requires", ())))


def cached_releases() -> list[CodeSource]:
    """Every release in the cache."""
    root = cache_root() / "torch-tensorrt"
    if not root.is_dir():
        return []
    return [_from_cache(d) for d in sorted(root.iterdir()) if _cached(d)]


def installed() -> CodeSource | None:
    """The ``torch_tensorrt`` installed in this Python, found without importing it."""
    if importlib.util.find_spec(PACKAGE) is None:
        return None
    try:
        version = importlib.metadata.version("torch-tensorrt")
        requires = importlib.metadata.requires("torch-tensorrt") or []
    except importlib.metadata.PackageNotFoundError:
        version, requires = "unknown", []
    return CodeSource(version, None, "installed",
                      _built_for("\n".join(f"Requires-Dist: {r}" for r in requires)), torch_minor())


def locate(spec: str | None = None) -> CodeSource:
    """Resolve where the code comes from.

    ``spec`` is a wheel file, an unpacked release directory, a release version (``2.13.0``), or
    None: the installed ``torch_tensorrt``, else a cached release built for the running torch,
    else that release fetched now. Raises :class:`CodeUnavailable` with the fixing command."""
    if spec is None:
        found = installed()
        if found is not None:
            return found
        here = torch_minor()
        matching = [s for s in cached_releases() if s.built_for == here]
        if matching:
            return max(matching, key=lambda s: _release_key(s.version))
        return _fetched(None)
    path = Path(spec)
    if path.is_file():
        return _from_cache(unpack(path), "wheel")
    if path.is_dir():
        return _from_cache(unpack(path), "directory")
    if not VERSION.fullmatch(spec):
        raise CodeUnavailable(f"{spec!r} is neither a file, a directory nor a torch-tensorrt version",
                              f"give a wheel file, an unpacked wheel, or a version such as "
                              f"`{fetch_command(default_release(torch_minor()))}`")
    return _fetched(spec)


def _fetched(version: str | None) -> CodeSource:
    """A release from the cache, fetched into it first when it is not there (origin ``fetched``)."""
    before = {s.path for s in cached_releases()}
    directory = fetch(version)
    return _from_cache(directory, "cache" if directory in before else "fetched")


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])
