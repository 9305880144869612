"""The import layers written in docs/architecture.md hold: no upward import, and no cycle between
modules or between packages."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path

from tests.helpers import REPO

SOURCES = (REPO / "trtcheck", REPO / "benchmarks")


def _layers() -> dict[str, int]:
    """Package or top-level module name -> layer index, 0 at the bottom."""
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


def _all_imports() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for root in SOURCES for p in root.rglob("*.py")}


def _unit(module: str) -> str:
    """The package a module counts in: ``config`` for ``trtcheck.config.options``, ``errors`` for
    the top-level module ``trtcheck.errors``, ``trtcheck`` for the package's ``__init__``, and
    ``benchmarks`` for every benchmark script."""
    parts = module.split(".")
    return parts[0] if parts[0] != "trtcheck" or len(parts) == 1 else parts[1]


def _upward(imports: Mapping[str, set[str]], layers: Mapping[str, int]) -> list[str]:
    """Each import of a module from a layer above its own."""
    problems = []
    for module, deps in sorted(imports.items()):
        name = _unit(module)
        for imported in sorted(deps):
            target = _unit(imported)
            if layers[target] > layers[name]:
                problems.append(f"{module} (layer {name}) imports {imported} (layer {target})")
    return problems


def _cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph, as the path that closes it, or None."""
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                path = [*trail, node]
                return [*path[path.index(dep):], dep]
            if dep not in state and (found := visit(dep, [*trail, node])):
                return found
        state[node] = 2
        return None

    return next((found for node in sorted(graph) if node not in state
                 and (found := visit(node, [])) is not None), None)


def _package_cycle(imports: Mapping[str, set[str]]) -> str | None:
    """A cycle between packages, each step shown with one import that makes it, or None."""
    edges: dict[tuple[str, str], str] = {}
    for module, deps in sorted(imports.items()):
        for imported in sorted(deps):
            if _unit(module) != _unit(imported):
                edges.setdefault((_unit(module), _unit(imported)), f"{module} imports {imported}")
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    found = _cycle(graph)
    return None if found is None else "; ".join(edges[pair] for pair in pairwise(found))


def test_every_package_has_one_layer_and_imports_only_downwards() -> None:
    layers = _layers()
    imports = _all_imports()
    assert all("." not in name for name in layers), "a layer names a module inside a package"
    units = {_unit(module) for module in imports}
    assert not units - set(layers), f"no layer in docs/architecture.md for {units - set(layers)}"
    assert not set(layers) - units, f"layers name what does not exist: {set(layers) - units}"
    assert not _upward(imports, layers)


def test_core_imports_nothing_else_of_trtcheck() -> None:
    outside = {f"{module} imports {imported}" for module, deps in _all_imports().items()
               if _unit(module) == "core" for imported in deps if _unit(imported) != "core"}
    assert not outside


def test_no_import_cycle_between_modules() -> None:
    graph = {m: {i for i in deps if i != "trtcheck.__version__"} for m, deps in _all_imports().items()}
    # A package's __init__ importing its own submodules is how packages are built.
    graph = {m: {d for d in deps if d in graph and not d.startswith(m + ".")}
             for m, deps in graph.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_no_two_packages_import_each_other() -> None:
    assert _package_cycle(_all_imports()) is None


def test_an_upward_import_is_caught() -> None:
    layers = _layers()
    assert _upward({"trtcheck.errors": {"trtcheck.render.text"}}, layers) == [
        "trtcheck.errors (layer errors) imports trtcheck.render.text (layer render)"]
    assert _upward({"trtcheck.render.text": {"trtcheck.errors"}}, layers) == []
    assert _upward({"trtcheck.core.profiles": {"trtcheck.config.options"}}, layers) == [
        "trtcheck.core.profiles (layer core) imports trtcheck.config.options (layer config)"]


def test_a_package_cycle_is_caught_directly_and_through_others() -> None:
    assert _package_cycle({"trtcheck.config.options": {"trtcheck.results.rows"},
                           "trtcheck.results.rows": {"trtcheck.config.settings"}}) == (
        "trtcheck.config.options imports trtcheck.results.rows; "
        "trtcheck.results.rows imports trtcheck.config.settings")
    through = {"trtcheck.config.options": {"trtcheck.results.rows"},
               "trtcheck.results.rows": {"trtcheck.status"},
               "trtcheck.status": {"trtcheck.config.settings"}}
    assert _package_cycle(through) is not None
    # Modules of one package importing each other is not a cycle between packages.
    assert _package_cycle({"trtcheck.config.options": {"trtcheck.config.settings"},
                           "trtcheck.config.settings": {"trtcheck.core.traits"}}) is None
    assert _package_cycle({**through, "trtcheck.status": {"trtcheck.errors"}}) is None


def test_results_imports_no_torch_and_runs_no_process() -> None:
    """``trtcheck report``, ``diff`` and ``merge`` read records where torch cannot be imported:
    nothing under results/ imports torch (or a backend, by the layers) or subprocess."""
    for path in (REPO / "trtcheck" / "results").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in ("torch", "subprocess"), \
                    f"{path.relative_to(REPO)}:{node.lineno} imports {name}"


def test_renderers_take_a_record_and_nothing_else() -> None:
    """The record answers its own questions (strictness among them): nothing under render/
    imports from config/ or names the strict_xfail setting."""
    imports = _all_imports()
    for path in (REPO / "trtcheck" / "render").rglob("*.py"):
        module = _module(path)
        assert not {m for m in imports[module] if _unit(m) == "config"}, module
        assert "strict_xfail" not in path.read_text(encoding="utf-8"), module


def test_the_cli_is_a_module_per_command_each_short_and_none_judging() -> None:
    """Every module under cli/ is at most 200 lines; a command parses, calls a job of
    execution/ (or a record of results/) and finishes through cli/common.py: none writes the
    reports or compares records itself."""
    cli = REPO / "trtcheck" / "cli"
    for path in cli.rglob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 200, path.relative_to(REPO)
    imports = _all_imports()
    for path in (cli / "commands").glob("*.py"):
        names = {n.id if isinstance(n, ast.Name) else n.attr
                 for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, (ast.Name, ast.Attribute))}
        assert not names & {"write_reports", "compare", "rejudge"}, path.name
        assert not imports[_module(path)] & {"trtcheck.results.baseline", "trtcheck.results.ab",
                                             "trtcheck.execution.run.run"}, path.name


def _imported(tree: ast.AST) -> list[str]:
    """The modules a file imports, by their full names."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return names


def test_no_test_module_imports_another() -> None:
    """What tests share lives in helpers modules and conftest files, never in a test module."""
    found = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        tests = [n for n in _imported(ast.parse(path.read_text(encoding="utf-8")))
                 if n.startswith("tests.") and any(p.startswith("test_") for p in n.split("."))]
        if tests:
            found[path.relative_to(REPO).as_posix()] = tests
    assert found == {}
    assert _imported(ast.parse("from tests.unit.x.test_y import Z")) == [
        "tests.unit.x.test_y", "tests.unit.x.test_y.Z"]
