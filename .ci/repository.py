#!/usr/bin/env python3
"""The repository's GitHub name (``owner/name``), declared once: ``[project.urls] Source`` in
pyproject.toml. The example workflows (``uses: owner/name@…``, the README's among them),
mkdocs.yml and the changelog's links carry copies, which this script writes.

    python .ci/repository.py               # prints the declared name
    python .ci/repository.py acme/trtcheck # moves the declaration and every copy to acme/trtcheck

tests/test_distribution.py checks that every reference to the repository names the declared
one, so a copy left behind fails the tests.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
_SOURCE = re.compile(r'^Source = "https://github\.com/([^"]+)"$', re.M)
_TEXT = (".md", ".yml", ".yaml", ".toml", ".txt", ".py", ".js", ".json", "run")


def declared(root: Path = ROOT) -> str:
    """The ``owner/name`` of ``[project.urls] Source``."""
    match = _SOURCE.search((root / "pyproject.toml").read_text(encoding="utf-8"))
    if match is None:
        raise SystemExit('pyproject.toml has no `Source = "https://github.com/OWNER/NAME"`')
    return match.group(1)


def references(text: str) -> list[str]:
    """Every ``owner/name`` this text points at as a GitHub repository: a github.com URL, or an
    action reference (``owner/name@``, ``owner/name/comment@``)."""
    url = re.findall(r"github\.com/(" + NAME.pattern + r")", text)
    uses = re.findall(r"(?<![\w./-])(" + NAME.pattern + r")(?:/comment)?@", text)
    return [name.removesuffix(".git") for name in url + uses]


def text_files(root: Path = ROOT) -> list[Path]:
    """The files git tracks (or would), that are text."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, check=True).stdout.decode()
    return sorted(root / p for p in out.split("\0")
                  if p.endswith(_TEXT) and (root / p).is_file())


def move(new: str, root: Path = ROOT) -> list[Path]:
    """Rewrite the declaration and every copy of it to ``new``; returns the files changed."""
    if not NAME.fullmatch(new):
        raise SystemExit(f"{new!r} is not a GitHub owner/name")
    old = declared(root)
    pattern = re.compile(r"(?<![\w.-])" + re.escape(old) + r"(?![\w.-])")
    changed = []
    for path in text_files(root):
        text = path.read_text(encoding="utf-8")
        moved = pattern.sub(new, text)
        if moved != text:
            path.write_text(moved, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    if len(sys.argv) == 1:
        print(declared())
    else:
        for path in move(sys.argv[1]):
            print(path.relative_to(ROOT))
