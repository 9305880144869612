"""The config file: finding the nearest ``trtcheck.toml`` or ``pyproject.toml`` with
``[tool.trtcheck]``, and reading its table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from trtcheck.errors import ConfigError, UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest ``trtcheck.toml``, or ``pyproject.toml`` with ``[tool.trtcheck]``, at or above start."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for d in (here, *here.parents):
        own = d / "trtcheck.toml"
        if own.is_file():
            return own, _read_toml(own)
        pyproject = d / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject).get("tool", {}).get("trtcheck")
            if data is not None:
                return pyproject, data
    return None


def read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UsageError(f"config file {path} does not exist")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("trtcheck", {})
    return data.get("tool", {}).get("trtcheck", data) if "tool" in data else data


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def config_for(paths: tuple[Path, ...], given: Path | None) -> tuple[Path | None, dict[str, Any]]:
    """The config file named, else the nearest one, and its table."""
    if given is not None:
        return Path(given), read_config(Path(given))
    found = find_config(paths[0]) if paths else None
    return found if found else (None, {})
