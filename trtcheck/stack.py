"""torch, Torch-TensorRT and TensorRT as one matched set: the releases trtcheck knows, what an
interpreter has, and whether installing trtcheck would change it.

On a GPU runner the three come together (an NGC container, a conda environment, a team's venv)
and trtcheck checks that set, never a replacement. The Action's install step runs this file as a
script with the workflow's ``python`` (standard library only, so it runs before anything is
installed): it reports what that interpreter imports, stops with exit code 2 when the requested
extras would install or change any of the three, and writes the ``.pth`` file that lets the
Action's venv import them and the pip constraints that hold them. Run: ``python stack.py
--extras tensorrt --install-torch false --out DIR``.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and sys.path and sys.path[0] == __file__.rpartition("/")[0]:
    # Run as a script, this file's directory would come first on sys.path: its siblings are
    # trtcheck's modules, which must not stand in for the standard library's.
    sys.path.pop(0)

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import site
from dataclasses import asdict, dataclass

Minor = tuple[int, int]


@dataclass(frozen=True)
class Release:
    """A Torch-TensorRT release and the torch and TensorRT minors its wheel pins."""

    torch_tensorrt: str
    torch: Minor
    tensorrt: Minor


# From the wheels' metadata (Requires-Dist: torch, tensorrt).
RELEASES = (
    Release("2.12.1", (2, 12), (10, 16)),
    Release("2.13.0", (2, 13), (11, 0)),
    Release("2.14.0", (2, 14), (11, 1)),
)
# The three, by module name, and the distribution name each has on the package index.
MODULES = {"torch": "torch", "torch_tensorrt": "torch-tensorrt", "tensorrt": "tensorrt"}
# What installing trtcheck asks for (pyproject.toml; a test keeps the two equal): torch always,
# and per extra the modules it brings.
TORCH_MINIMUM: Minor = (2, 5)
EXTRA_MODULES = {"tensorrt": ("torch_tensorrt", "tensorrt")}
# Written into the Action's venv by the install step: what the runner's interpreter had.
MARKER = "trtcheck-runner.json"
PTH = "trtcheck-runner.pth"
CONSTRAINTS = "constraints.txt"


def minor(version: str | None) -> Minor | None:
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _text(m: Minor) -> str:
    return f"{m[0]}.{m[1]}"


def release_for_torch(torch_version: str | None) -> Release | None:
    """The known Torch-TensorRT release built for ``torch_version``'s minor."""
    return next((r for r in RELEASES if r.torch == minor(torch_version)), None)


def release_of(ttrt_version: str | None) -> Release | None:
    """The known release line of an installed Torch-TensorRT version."""
    return next((r for r in RELEASES if minor(r.torch_tensorrt) == minor(ttrt_version)), None)


def built_for(ttrt_version: str | None) -> Minor | None:
    """The torch minor a Torch-TensorRT release is built for: from the table, else its own
    minor (every 2.x release pins the torch minor of the same number)."""
    known = release_of(ttrt_version)
    m = minor(ttrt_version)
    return known.torch if known else (m if m and m[0] >= 2 else None)


def known_releases() -> str:
    return ", ".join(f"torch-tensorrt {r.torch_tensorrt} for torch {_text(r.torch)} "
                     f"(TensorRT {_text(r.tensorrt)})" for r in RELEASES)


def advice(torch_version: str | None) -> str:
    """What to install for ``torch_version``: the matching Torch-TensorRT release, or why none."""
    r = release_for_torch(torch_version)
    if r is None:
        return (f"trtcheck knows no Torch-TensorRT release built for torch {torch_version}; "
                f"known: {known_releases()}")
    return (f"the matching release is torch-tensorrt=={r.torch_tensorrt} with TensorRT "
            f"{_text(r.tensorrt)} (built for torch {_text(r.torch)})")


def pairing_warnings(versions: dict[str, str | None]) -> list[str]:
    """Warnings for a Torch-TensorRT built for another torch minor, or paired with another
    TensorRT minor than its release pins."""
    torch, ttrt, trt = (versions.get(m) for m in MODULES)
    if not ttrt:
        return []
    found = []
    wanted = built_for(ttrt)
    if torch and wanted and minor(torch) != wanted:
        found.append(f"Torch-TensorRT {ttrt} is built for torch {_text(wanted)}, but torch {torch} "
                     f"is installed: {advice(torch)}")
    known = release_of(ttrt)
    if trt and known and minor(trt) != known.tensorrt:
        found.append(f"Torch-TensorRT {ttrt} is built with TensorRT {_text(known.tensorrt)}, but "
                     f"TensorRT {trt} is installed")
    return found


@dataclass(frozen=True)
class Found:
    """One of the three as this interpreter imports it (nothing is imported to find out)."""

    module: str
    version: str | None = None  # None: not importable
    location: str | None = None  # the directory holding the package
    dists: tuple[str, ...] = ()  # the distributions that install it

    @property
    def installed(self) -> bool:
        return self.location is not None


def find(module: str, providers: dict[str, list[str]] | None = None) -> Found:
    """``providers``: ``importlib.metadata.packages_distributions()``, when the caller has it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not (spec.origin or spec.submodule_search_locations):
        return Found(module)
    package = next(iter(spec.submodule_search_locations or []), None)
    location = os.path.dirname(os.path.abspath(package or spec.origin or ""))
    names = (providers if providers is not None
             else importlib.metadata.packages_distributions()).get(module, [])
    dists: list[str] = []
    for name in [MODULES[module], *names]:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if dist.metadata["Name"] and dist.metadata["Name"] not in dists:
            dists.append(dist.metadata["Name"])
    version = importlib.metadata.version(dists[0]) if dists else "unknown"
    return Found(module, version, location, tuple(dists))


def find_all() -> dict[str, Found]:
    """The three, as this interpreter imports them."""
    providers = importlib.metadata.packages_distributions()
    return {m: find(m, providers) for m in MODULES}


def interpreter() -> dict[str, object]:
    """This interpreter: its kind (system, venv or conda), prefixes and site directories."""
    conda = os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
    kind = "conda" if conda else "venv" if sys.prefix != sys.base_prefix else "system"
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return {"python": sys.executable, "version": ".".join(map(str, sys.version_info[:3])),
            "kind": kind, "prefix": sys.prefix, "base_prefix": sys.base_prefix,
            "site_dirs": [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]}


def refusal(found: dict[str, Found], extras: set[str]) -> str | None:
    """Why installing trtcheck with ``extras`` would install or change torch, Torch-TensorRT
    or TensorRT; None when it would not."""
    torch = found["torch"]
    have = ", ".join(f"{m} {f.version}" if f.installed else f"{m} not installed"
                     for m, f in found.items())
    if not torch.installed:
        return (f"torch is not installed for this interpreter ({have}), so installing trtcheck "
                "would install one matched to nothing on the runner. Install the runner's torch "
                "(and for the tensorrt extra Torch-TensorRT and TensorRT) first, or set "
                "install-torch: true on a runner that starts empty")
    torch_minor = minor(torch.version)
    if torch_minor is not None and torch_minor < TORCH_MINIMUM:
        return (f"trtcheck needs torch >= {_text(TORCH_MINIMUM)} and this interpreter has "
                f"{have}: pip would upgrade torch. Use a newer matched set, or set "
                "install-torch: true")
    needed = {m for extra in extras for m in EXTRA_MODULES.get(extra, ())}
    ttrt, trt = found["torch_tensorrt"], found["tensorrt"]
    if "torch_tensorrt" in needed and not ttrt.installed:
        return (f"the tensorrt extra would install Torch-TensorRT, and with it another torch or "
                f"TensorRT, into this interpreter's set ({have}); {advice(torch.version)}. "
                "Install it into the runner's environment first, or set install-torch: true")
    wanted = built_for(ttrt.version) if ttrt.installed else None
    if "torch_tensorrt" in needed and wanted and torch_minor and wanted != torch_minor:
        return (f"Torch-TensorRT {ttrt.version} is built for torch {_text(wanted)} but this "
                f"interpreter has {have}: pip would change torch to match; {advice(torch.version)}")
    if "tensorrt" in needed and not trt.installed:
        known = release_of(ttrt.version)
        which = f"TensorRT {_text(known.tensorrt)}" if known else "the TensorRT it is built with"
        return (f"Torch-TensorRT {ttrt.version} is installed without TensorRT ({have}): pip "
                f"would install a TensorRT of its own choosing; install {which} first")
    return None


def constraints(found: dict[str, Found]) -> list[str]:
    """``name==version`` for every distribution behind the installed ones: pip may not change them."""
    pins = []
    for f in found.values():
        if f.installed and f.version and re.fullmatch(r"[0-9][0-9A-Za-z.+!_-]*", f.version):
            pins += [f"{dist}=={importlib.metadata.version(dist)}" for dist in f.dists]
    return pins


def pth_lines(dirs: list[str]) -> list[str]:
    """``.pth`` lines that add ``dirs`` as site directories (their own ``.pth`` files included)."""
    return [f"import site; site.addsitedir({d!r})" for d in dirs]


def log_lines(info: dict[str, object], found: dict[str, Found], pins: list[str],
              install_torch: bool) -> list[str]:
    kind = {"venv": "a venv", "conda": "a conda environment", "system": "a system Python"}
    lines = [f"trtcheck: python {info['python']} ({info['version']}) is {kind[str(info['kind'])]} "
             f"at {info['prefix']}; the Action's venv imports its packages through {PTH}, which "
             f"adds: {', '.join(map(str, info['site_dirs'])) or 'nothing'}"]
    lines.append("trtcheck: found " + ", ".join(
        f"{m} {f.version} ({f.location})" if f.installed else f"{m} not installed"
        for m, f in found.items()))
    if install_torch:
        lines.append("trtcheck: install-torch is true: pip may install or change torch, "
                     "torch-tensorrt and tensorrt")
    else:
        lines.append("trtcheck: pip is held to them by constraints: " + (", ".join(pins) or "none"))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="")
    parser.add_argument("--install-torch", choices=["true", "false"], default="false")
    parser.add_argument("--out", required=True, help="directory for the .pth, constraints and marker")
    args = parser.parse_args(argv)
    extras = {e.strip() for e in args.extras.split(",") if e.strip()}
    install_torch = args.install_torch == "true"
    found = find_all()
    info = interpreter()
    pins = [] if install_torch else constraints(found)
    for line in log_lines(info, found, pins, install_torch):
        print(line)
    for warning in pairing_warnings({m: f.version for m, f in found.items()}):
        print(f"::warning title=trtcheck::{_escape(warning)}")
    why = None if install_torch else refusal(found, extras)
    if why:
        print(f"::error title=trtcheck::{_escape(why)}")
        return 2
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, PTH), "w", encoding="utf-8") as fh:
        fh.write("".join(f"{line}\n" for line in pth_lines(list(info["site_dirs"]))))  # type: ignore[arg-type]
    with open(os.path.join(args.out, CONSTRAINTS), "w", encoding="utf-8") as fh:
        fh.write("".join(f"{pin}\n" for pin in pins))
    with open(os.path.join(args.out, MARKER), "w", encoding="utf-8") as fh:
        json.dump({**info, "install_torch": install_torch,
                   "found": {m: asdict(f) for m, f in found.items()}}, fh, indent=1)
    return 0


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


# --- at run time, in the environment trtcheck runs in ------------------------------------------

def sources(prefix: str = sys.prefix, found: dict[str, Found] | None = None) -> dict[str, str]:
    """Where each installed one of the three came from: ``runner`` (the runner's environment,
    seen through the Action's ``.pth``), ``action`` (installed by the Action) or ``environment``
    (trtcheck was not installed by the Action: the environment it runs in)."""
    marked = os.path.isfile(os.path.join(prefix, MARKER))
    where = {}
    for module, f in (found if found is not None else find_all()).items():
        if f.installed:
            inside = os.path.abspath(f.location or "").startswith(os.path.abspath(prefix) + os.sep)
            where[module] = ("action" if inside else "runner") if marked else "environment"
    return where


if __name__ == "__main__":
    sys.exit(main())
