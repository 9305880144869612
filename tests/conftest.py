from __future__ import annotations

import compileall
import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from tests.helpers import Ran


def pytest_configure(config: pytest.Config) -> None:
    """Once, in the process that runs or hands out the tests: trtcheck's bytecode written (an
    editable install has none, and where ``PYTHONDONTWRITEBYTECODE`` is set, as on many CI
    images, each of the suite's hundreds of trtcheck processes would compile the package again,
    0.1-0.3 s each). Under pytest-xdist, each worker's trtcheck processes take their device locks
    (in the temporary folder) apart from the other worker's: one worker's timing must not wait
    behind, and time out behind, the other's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        compileall.compile_dir(Path(__file__).resolve().parent.parent / "trtcheck", quiet=2)
        return
    folder = Path(tempfile.gettempdir()) / f"trtcheck-tests-{worker}"
    folder.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that share a folder built :func:`once` (minutes of work) first, the rest in their
    order: started last, such a build would leave one worker running it alone at the end while
    the other has nothing left to steal."""
    items.sort(key=lambda item: "once" not in getattr(item, "fixturenames", ()))


@pytest.fixture
def make_zoo(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Write a zoo of files (relative path -> source) under tmp_path/zoo and return its root."""

    def make(files: dict[str, str]) -> Path:
        root = tmp_path / "zoo"
        for rel, source in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        root.mkdir(exist_ok=True)
        return root

    return make


@pytest.fixture(scope="session")
def once(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[Path], None]], Path]:
    """``once(name, build)``: the folder ``build`` filled, built by one test worker for all of
    them. A worker that needs it while another builds it waits for that build instead of
    repeating it: a module fixture costing minutes (the buried zoo's reductions, the serial run)
    is built once however the scheduler shares its module's tests out."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's own

    def get(name: str, build: Callable[[Path], None]) -> Path:
        folder, done = root / name, root / f"{name}.done"
        with FileLock(str(root / f"{name}.lock")):
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                build(folder)
                done.touch()
        return folder

    return get


@pytest.fixture(scope="session")
def shared(once: Callable[[str, Callable[[Path], None]], Path]) -> Callable[..., Ran]:
    """``shared(name, *args, prepare=None, **kwargs)``: ``trtcheck ARGS --out out`` run once for
    the whole suite (through :func:`once`) from a folder of its own, first filled by
    ``prepare``; ``kwargs`` as :func:`tests.helpers.trtcheck`'s. Every test that asserts on that
    run takes the fixture that names it: an end-to-end CLI run costs 10 to 30 s, an assertion on
    its record nothing. The run asserts nothing itself: each test checks its exit code and
    output, so a run that went wrong fails those tests, once, instead of being run again for each."""

    def get(name: str, *args: str | os.PathLike[str],
            prepare: Callable[[Path], None] | None = None, **kwargs: Any) -> Ran:
        def build(folder: Path) -> None:
            if prepare is not None:
                prepare(folder)
            Ran.into(folder, *args, **kwargs)

        ran = Ran.read(once(name, build))
        assert ran.args == (*map(str, args), "--out", "out"), f"two shared runs named {name}"
        return ran

    return get


@pytest.fixture(scope="session")
def ttrt_releases() -> dict[str, Path]:
    """The Torch-TensorRT releases trtcheck knows, their Python code fetched once into the cache
    (``TRTCHECK_CACHE``, else the user cache dir), which CI keeps. Skips only when no package index
    can be reached."""
    from trtcheck.backends.lowering import code as ttrt_code

    found = {}
    for version in ttrt_code.KNOWN_RELEASES:
        try:
            found[version] = ttrt_code.fetch(version)
        except ttrt_code.CodeUnavailable as exc:
            if exc.offline:
                pytest.skip(f"Torch-TensorRT {version}'s code is not cached and cannot be fetched: {exc}")
            raise
    return found


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say why the browser tests skipped, also under ``-q``: they skip only where no Chromium
    is installed, and a run that skipped them has not tested report.html in a browser."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "test_browser" in r.nodeid]
    if skipped:
        reason = skipped[0].longrepr[2] if isinstance(skipped[0].longrepr, tuple) else ""
        terminalreporter.write_line(f"{len(skipped)} browser tests skipped: {reason}", yellow=True)


