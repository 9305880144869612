"""The README and the docs site: a short README whose commands are the ones CI runs, and a
site whose every page is in the nav and builds with ``mkdocs build --strict``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"


def _steps(command: str) -> list[str]:
    """A shell ``a && b && c`` line as its commands, each normalised (quiet flags and extra
    whitespace dropped), so the README's and CI's spellings compare."""
    return [" ".join(w for w in shlex.split(part) if w not in ("-q", "--quiet"))
            for part in command.split("&&")]


def _quick_start() -> tuple[list[str], list[str]]:
    """The README's two commands: the one that runs the sample zoo and the one that runs the tests."""
    block = re.search(r"^## Quick start\n\n(.*?)```bash\n(.*?)```", README, re.S | re.M)
    assert block, "the README has no Quick start block"
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.group(2).splitlines()]
    run, test = (_steps(line) for line in lines if line)
    return run, test


def _ci_command() -> list[str]:
    """The chain of commands ``.ci/run`` runs after making its venv."""
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [line for line in text.splitlines() if line.startswith("pip install")]
    return _steps(line)


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def test_the_readme_reads_in_five_minutes() -> None:
    assert len(README.splitlines()) <= 300


def test_the_readmes_command_list_names_every_command() -> None:
    from trtcheck.cli import cli

    block = re.search(r"^## Commands\n\n```\n(.*?)```", README, re.S | re.M)
    assert block, "the README has no Commands block"
    listed = re.findall(r"^trtcheck (\w+)", block[1], re.M)
    assert sorted(listed) == sorted(cli.commands)


def test_ci_runs_the_readmes_test_command() -> None:
    run, test = _quick_start()
    ci = _ci_command()
    assert test[-1] == "pytest"
    # between them, CI waits for the Chromium it installs in the background (the browser tests')
    assert ci == [*test[:-1], "ruff check trtcheck tests benchmarks", "wait_for_browser", "pytest"]
    # The sample zoo's command sets up the same way, without the dev extra.
    assert run == [*(step.replace(".[dev]", ".") for step in test[:-1]), "trtcheck run fixtures/"]


def test_ci_builds_the_docs_after_the_tests() -> None:
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "mkdocs build --strict" in text
    assert text.index("mkdocs build --strict") > text.index("pytest -q")


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert len(set(nav)) == len(nav), "a page is in the nav twice"


def test_the_readmes_links_into_the_docs_exist() -> None:
    """Relative, so that they work on the repository's page and in a clone alike."""
    from tests.helpers import REPOSITORY

    assert f"github.com/{REPOSITORY}/blob/" not in README, "an absolute link into the repository"
    links = re.findall(r"\]\((?!https?://)([^)#\s]+)(?:#[^)]*)?\)", README)
    assert len([link for link in links if link.startswith("docs/")]) >= 10
    for link in links:
        assert (REPO / link).is_file(), f"README links to {link}, which does not exist"


def test_the_reference_pages_config_example_loads_as_written(tmp_path: Path) -> None:
    """The example config, copied whole into a project, is a valid configuration."""
    from trtcheck.config.cascade import resolve

    page = (DOCS / "reference.md").read_text(encoding="utf-8")
    example = re.search(r"^```toml\n(\[tool\.trtcheck\]\n.*?)```", page, re.S | re.M)
    assert example, "the reference page has no [tool.trtcheck] example"
    (tmp_path / "pyproject.toml").write_text(example.group(1), encoding="utf-8")
    (tmp_path / "zoo").mkdir()
    opts = resolve((tmp_path / "zoo",), device="cpu")
    assert opts.config_file == tmp_path / "pyproject.toml"
    assert opts.torch_tensorrt == ("2.13.0", "2.14.0") and "lowering" in opts.backends
    assert "fast_ids" in opts.known_profiles and opts.timing.method == "calls"


@pytest.mark.parametrize("page", [REPO / "README.md", DOCS / "index.md"])
def test_the_cpu_index_comes_before_the_commands_that_install_torch(page: Path) -> None:
    """A reader pastes the quick start's commands: the note on torch's multi-GB CUDA build and
    the CPU index must come before them."""
    text = page.read_text(encoding="utf-8")
    start = re.search(r"^## Quick start\n\n(.*?)```bash\n", text, re.S | re.M)
    assert start, f"{page.name} has no Quick start block"
    assert "download.pytorch.org/whl/cpu" in start.group(1)
    assert "CUDA build of\nseveral GB" in start.group(1) or "CUDA build of several GB" in \
        " ".join(start.group(1).split())


def test_the_readme_says_where_the_sample_limitations_are_declared_xfail() -> None:
    """Each (backend, profile) key under which fixtures/limitations.py declares an expected
    failure is named, and the limitation that passes by default is said to."""
    from trtcheck.config.cascade import resolve
    from trtcheck.execution.run import collect

    cases = collect(resolve((REPO / "fixtures" / "limitations.py",), device="cpu",
                            reads_baseline=False)).cases
    keys = {key for case in cases for key in (case.spec.xfail or {})}
    words = " ".join(README.split())
    for key in keys:
        for part in key.split(":"):
            assert f"`{part}`" in words, f"the README does not say {part!r} of xfail key {key!r}"
    undeclared = [c.spec.name for c in cases if not any(k.split(":")[0] in ("default", "lowering")
                                                        for k in c.spec.xfail or {})]
    for name in undeclared:
        assert f"`{name}` passes" in words


def test_the_benchmarks_page_counts_the_sample_cases() -> None:
    from trtcheck.config.cascade import resolve
    from trtcheck.execution.run import collect

    n = len(collect(resolve((REPO / "fixtures",), device="cpu", reads_baseline=False)).cases)
    page = " ".join((DOCS / "benchmarks.md").read_text(encoding="utf-8").split())
    counts = re.findall(r"The zoo has (\d+) cases|sample zoo \((\d+) cases\)", page)
    assert counts and all(int(a or b) == n for a, b in counts)


def test_every_listing_of_the_exit_codes_is_the_enum() -> None:
    from trtcheck import errors
    from trtcheck.cli.commands.run import RUN_EPILOG
    from trtcheck.status import Verdict

    codes = {int(e) for e in errors.Exit}
    reference = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    table = reference[reference.index("## Exit codes"):]
    assert {int(c) for c in re.findall(r"^\| `(\d+)` \|", table, re.M)} == codes
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    line = readme[readme.index("Exit codes:"):readme.index("interrupted.", readme.index("Exit codes:"))]
    assert {int(c) for c in re.findall(r"`(\d+)`", line)} == codes
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert {int(c) for c in re.findall(r"\b(\d+) ", action["outputs"]["exit-code"]["description"])} \
        == codes
    flat = " ".join(RUN_EPILOG.split())
    for e in errors.Exit:
        assert f"{int(e)} {' '.join(e.meaning.split())}" in flat
    assert {v.value for v in Verdict} == {v.exit_code.status for v in Verdict}
    raised = [c for c in vars(errors).values()
              if isinstance(c, type) and issubclass(c, errors.TrtcheckError)]
    assert all(isinstance(c.exit_code, errors.Exit) for c in raised)
