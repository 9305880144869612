from __future__ import annotations

import os
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, each worker's trtcheck processes take their device locks (in the
    temporary folder) apart from the other worker's: one worker's timing must not wait behind,
    and time out behind, the other's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        folder = Path(tempfile.gettempdir()) / f"trtcheck-tests-{worker}"
        folder.mkdir(exist_ok=True)
        os.environ["TMPDIR"] = str(folder)
        tempfile.tempdir = None


# The slowest files, slowest first (seconds of one CI run): the test workers take files in the
# order they were collected, so a slow file collected last would leave one worker running it
# alone at the end while the other waits.
SLOWEST_FIRST = ("test_reduce_buried.py",  # 255 s
                 "test_reduce.py",  # 285 s
                 "test_benchmarks.py",  # 230 s
                 "test_e2e.py",  # 215 s
                 "test_ab.py",  # 180 s
                 "test_benchmarks_gate.py")  # 67 s


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


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


def assert_headlines(out: Path, code: int, terminal: str) -> None:
    """Every headline of a job's reports in ``out`` says what its exit ``code`` says: the
    terminal's last verdict line, report.md, comment.md and report.html start with PASS (0) or
    FAIL (1), and junit.xml holds a failing testcase exactly when the job failed."""
    import xml.etree.ElementTree as ET

    word = {0: "PASS", 1: "FAIL"}[code]
    said = [line for line in terminal.splitlines() if line.startswith(("PASS: ", "FAIL: "))]
    assert said and said[-1].startswith(f"{word}: "), terminal
    assert f"**Result: {word}**" in (out / "report.md").read_text(encoding="utf-8")
    comment = (out / "comment.md").read_text(encoding="utf-8").splitlines()[0]
    assert comment.startswith(f"### trtcheck: {'✅' if code == 0 else '❌'} {word}: "), comment
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f'<span class="verdict v-{word.lower()}">{word}</span>' in page
    junit = ET.parse(out / "junit.xml").getroot()
    failing = int(junit.get("failures") or 0) + int(junit.get("errors") or 0)
    assert (failing >= 1) == (code == 1), ET.tostring(junit, encoding="unicode")[:2000]
