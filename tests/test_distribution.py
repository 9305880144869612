"""The distribution's own name, the collision with the index's other ``trtcheck``, no install
line that installs that other project."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from trtcheck import distribution
from trtcheck.config.options import tomllib

# The other project's wheel (trtcheck 1.1.0 on the index), as its metadata describes it.
OTHER_METADATA = ("Metadata-Version: 2.4\nName: trtcheck\nVersion: 1.1.0\n"
                  "Summary: Static pre-flight checker for ONNX -> TensorRT conversion.\n")
OTHER_ENTRY_POINTS = "[console_scripts]\ntrtcheck = trtcheck.cli:main\n"


def other_dist(site: Path, *, top_level: bool = True, command: bool = True) -> Path:
    """The other project's installed metadata in ``site``, as pip leaves it."""
    info = site / "trtcheck-1.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(OTHER_METADATA)
    (info / "RECORD").write_text("trtcheck/__init__.py,sha256=x,536\ntrtcheck/cli.py,sha256=y,20289\n"
                                 "trtcheck-1.1.0.dist-info/METADATA,,\n")
    if top_level:
        (info / "top_level.txt").write_text("trtcheck\n")
    if command:
        (info / "entry_points.txt").write_text(OTHER_ENTRY_POINTS)
    return site


def test_distribution_name_is_ours_and_the_package_and_command_keep_theirs() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == distribution.DIST == "torch-trtcheck"
    assert project["scripts"] == {"trtcheck": "trtcheck.cli:main"}
    assert "version" in project["dynamic"] and "version" not in project


@pytest.mark.parametrize("top_level", [True, False], ids=["top_level.txt", "RECORD only"])
def test_collision_found_from_the_other_distributions_metadata(
        tmp_path: Path, top_level: bool) -> None:
    (found,) = distribution.collisions([str(other_dist(tmp_path, top_level=top_level))])
    assert (found.name, found.version) == ("trtcheck", "1.1.0")
    assert found.ships == ("a trtcheck/ package", "a trtcheck command")
    warning = found.warning()
    assert "ONNX -> TensorRT" in warning and "pip uninstall -y trtcheck torch-trtcheck" in warning
    assert "pip install torch-trtcheck" in warning and "pip install trtcheck" not in warning


def test_no_collision_without_the_other_distribution(tmp_path: Path) -> None:
    unrelated = tmp_path / "other_tool-1.0.dist-info"
    unrelated.mkdir()
    (unrelated / "METADATA").write_text("Metadata-Version: 2.1\nName: other-tool\nVersion: 1.0\n")
    (unrelated / "RECORD").write_text("other_tool/trtcheck/__init__.py,,\n")
    ours = tmp_path / "torch_trtcheck-1.0.dist-info"
    ours.mkdir()
    (ours / "METADATA").write_text("Metadata-Version: 2.1\nName: torch-trtcheck\nVersion: 1.0\n")
    (ours / "entry_points.txt").write_text(OTHER_ENTRY_POINTS)
    assert distribution.collisions([str(tmp_path)]) == []


def test_version_and_start_up_warn_of_the_collision(tmp_path: Path) -> None:
    site = other_dist(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    proc = subprocess.run([sys.executable, "-m", "trtcheck", "--version"], capture_output=True,
                          text=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"trtcheck \S+ \(distribution torch-trtcheck\)\n", proc.stdout)
    assert proc.stdout.split()[1] == distribution.version() != distribution.UNKNOWN_VERSION
    (warning,) = proc.stderr.splitlines()
    assert warning.startswith("trtcheck: warning: the distribution trtcheck 1.1.0")
    assert "Fix: pip uninstall -y trtcheck torch-trtcheck" in warning
    # both distributions' metadata: theirs, and our own version
    assert f"whichever of it and torch-trtcheck {distribution.version()} was installed" in warning
    # every command warns at start-up, before it does anything else
    listing = subprocess.run([sys.executable, "-m", "trtcheck", "list", str(tmp_path / "none")],
                             capture_output=True, text=True, check=False, env=env)
    assert listing.stderr.splitlines()[0] == warning


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    keep = (".md", ".yml", ".yaml", ".py", ".js", ".toml", ".txt", "run")
    return [REPO / p for p in out if p.endswith(keep) and not p.startswith("tests/")
            and (REPO / p).is_file()]


# An install command naming the other project: `trtcheck` or `trtcheck[extra]` as a requirement.
_OTHER_INSTALL = re.compile(r"pip3? install\b[^\n&;|]*?(?<![\w./-])[\"']?trtcheck(?:\[[^\]]*\])?"
                            r"(?=[\"'\s=<>~!;]|$)", re.M)


def test_no_install_line_installs_the_other_project() -> None:
    for path in _tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "pip install trtcheck" not in text, path
        match = _OTHER_INSTALL.search(text)
        assert match is None, f"{path.relative_to(REPO)}: {match.group(0) if match else ''}"


def test_the_install_line_check_itself() -> None:
    for bad in ('pip install "trtcheck[tensorrt]"', "pip install --no-deps trtcheck click",
                "pip3 install trtcheck==1.0"):
        assert _OTHER_INSTALL.search(bad), bad
    for good in ('pip install "torch-trtcheck[tensorrt]"', "pip install -e .",
                 "pip uninstall -y trtcheck torch-trtcheck", "pip install ./trtcheck/",
                 "pip install -e . && ruff check trtcheck tests"):
        assert not _OTHER_INSTALL.search(good), good
