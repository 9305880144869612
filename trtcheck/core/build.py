"""What the installed torch was built with, read from its ``version.py`` without importing it
(about 2 s), so that a CPU run's parent process never loads torch: its workers do."""

from __future__ import annotations

import ast
import importlib.metadata
from functools import cache
from pathlib import Path

_ACCELERATORS = ("cuda", "hip", "rocm", "xpu")


@cache
def torch_build() -> dict[str, str | None]:
    """``__version__`` and the accelerator versions of the installed torch; empty when it
    cannot be read that way (then ask torch itself)."""
    try:
        version_file = Path(str(importlib.metadata.distribution("torch").locate_file("torch/version.py")))
        tree = ast.parse(version_file.read_text())
    except (importlib.metadata.PackageNotFoundError, OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, str | None] = {}
    for node in tree.body:
        target = (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                  else node.target if isinstance(node, ast.AnnAssign) else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and (
                value.value is None or isinstance(value.value, str)):
            found[target.id] = value.value
    return found if "__version__" in found and "cuda" in found else {}


def cpu_only() -> bool:
    """Whether the installed torch is known to be built without any accelerator."""
    build = torch_build()
    return bool(build) and not any(build.get(k) for k in _ACCELERATORS)
