"""The import layers written in docs/architecture.md hold: no upward import, no cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "trtcheck"


def _layers() -> dict[str, int]:
    """Top-level module or package name -> layer index, 0 at the bottom."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layers -->\n```\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no layers block"
    lines = block.group(1).strip().splitlines()
    return {name: len(lines) - 1 - i for i, line in enumerate(lines) for name in line.split()}


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every trtcheck module a file imports, at any depth in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "trtcheck":
                # ``from pkg import submodule`` imports the submodule, not just the package
                found |= {f"{node.module}.{a.name}" if _is_module(f"{node.module}.{a.name}")
                          else node.module for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("trtcheck")}
    return found


def _is_module(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _unit(module: str, layers: dict[str, int]) -> str:
    """The name the layers list uses for a module: the longest of its names under trtcheck that
    the list holds (``config.profiles`` before ``config``), else ``trtcheck``."""
    parts = module.split(".")[1:]
    return next((".".join(parts[:n]) for n in range(len(parts), 0, -1)
                 if ".".join(parts[:n]) in layers), "trtcheck")


def _upward(imports: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """Each import of a module from a layer above its own."""
    problems = []
    for module, deps in sorted(imports.items()):
        name = _unit(module, layers)
        for imported in sorted(deps):
            target = _unit(imported, layers)
            if layers[target] > layers[name]:
                problems.append(f"{module} (layer {name}) imports {imported} (layer {target})")
    return problems


def test_every_module_has_a_layer_and_imports_only_downwards() -> None:
    layers = _layers()
    imports = {_module(p): _imports(p) for p in PACKAGE.rglob("*.py")}
    for module in imports:
        parts = module.split(".")
        assert len(parts) == 1 or parts[1] in layers or _unit(module, layers) != "trtcheck", \
            f"{module} has no layer in docs/architecture.md"
    assert not _upward(imports, layers)


def test_no_import_cycle() -> None:
    graph = {_module(p): {i for i in _imports(p) if i != "trtcheck.__version__"}
             for p in PACKAGE.rglob("*.py")}
    graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph[module]):
            # A package's __init__ importing its own submodules is how packages are built.
            if dep.startswith(module + "."):
                continue
            if state.get(dep) == 1:
                raise AssertionError(" -> ".join([*trail, module, dep]))
            if dep not in state:
                visit(dep, [*trail, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])


def test_an_upward_import_is_caught() -> None:
    layers = _layers()
    assert _upward({"trtcheck.errors": {"trtcheck.render.text"}}, layers) == [
        "trtcheck.errors (layer errors) imports trtcheck.render.text (layer render)"]
    assert _upward({"trtcheck.render.text": {"trtcheck.errors"}}, layers) == []
    assert _upward({"trtcheck.core.profiles": {"trtcheck.config.options"}}, layers) == [
        "trtcheck.core.profiles (layer core) imports trtcheck.config.options (layer config)"]
