from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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
