"""Getting Torch-TensorRT's Python code: fetch, cache, locate (real wheels from the package index)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO
from trtcheck.backends.lowering import code as ttrt_code
from trtcheck.backends.lowering.code import CodeSource, CodeUnavailable


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory, ttrt_releases: dict[str, Path]) -> Path:
    """The real torch-tensorrt 2.13.0 wheel file, downloaded once."""
    return ttrt_code.download("2.13.0", tmp_path_factory.mktemp("wheels"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, and no torch_tensorrt installed."""
    monkeypatch.setenv("TRTCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ttrt_code, "installed", lambda: None)
    return tmp_path / "cache"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip may not be run: what is asked must come from the cache."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"pip was run: {args}")

    monkeypatch.setattr(subprocess, "run", refuse)


def test_cache_dir_from_env_then_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TRTCHECK_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ttrt_code.cache_root() == tmp_path / "xdg" / "trtcheck"
    monkeypatch.setenv("TRTCHECK_CACHE", str(tmp_path / "mine"))
    assert ttrt_code.cache_dir("2.13.0") == tmp_path / "mine" / "torch-tensorrt" / "2.13.0"


@pytest.mark.parametrize(("torch_version", "release"), [
    ((2, 12), "2.12.1"), ((2, 13), "2.13.0"), ((2, 14), "2.14.0"), ((2, 15), "2.15.*"),
])
def test_default_release_per_torch_minor(torch_version: tuple[int, int], release: str) -> None:
    assert ttrt_code.default_release(torch_version) == release


def test_wheel_file_is_cached_as_python_only(wheel: Path, cache: Path, no_network: None) -> None:
    source = ttrt_code.locate(str(wheel))
    assert (source.version, source.origin, source.built_for) == ("2.13.0", "wheel", (2, 13))
    assert source.path == cache / "torch-tensorrt" / "2.13.0"
    files = [p for p in source.path.rglob("*") if p.is_file()]
    assert (source.path / "torch_tensorrt" / "dynamo" / "_compiler.py").is_file()
    assert all(p.suffix in (".py", ".json") for p in files), "only Python files are kept"
    assert {"psutil", "dllist", "packaging"} <= set(source.requires)
    assert not any("tensorrt" in name for name in source.requires)
    assert not source.mismatched and source.note is None  # torch 2.13 runs these tests


def test_unpacked_directory_is_copied_without_native_libraries(wheel: Path, cache: Path, tmp_path: Path,
                                                              no_network: None) -> None:
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as whl:
        whl.extractall(unpacked)
    assert list(unpacked.rglob("*.so")), "the real wheel holds native libraries"
    source = ttrt_code.locate(str(unpacked))
    assert (source.version, source.origin, source.built_for) == ("2.13.0", "directory", (2, 13))
    assert source.path is not None and not list(source.path.rglob("*.so"))
    assert ttrt_code.locate(str(unpacked / "torch_tensorrt")).version == "2.13.0"


def test_version_and_default_come_from_the_cache(wheel: Path, cache: Path, no_network: None) -> None:
    ttrt_code.unpack(wheel)
    by_version = ttrt_code.locate("2.13.0")
    assert (by_version.origin, by_version.path) == ("cache", cache / "torch-tensorrt" / "2.13.0")
    assert ttrt_code.locate("2.13") == by_version  # a minor finds its newest cached patch
    assert ttrt_code.locate(None) == by_version  # built for the running torch 2.13
    assert [s.version for s in ttrt_code.cached_releases()] == ["2.13.0"]


def test_fetch_downloads_once(cache: Path, ttrt_releases: dict[str, Path]) -> None:
    path = ttrt_code.fetch("2.12.1")
    assert path == cache / "torch-tensorrt" / "2.12.1"
    source = ttrt_code.locate("2.12.1")
    assert source.built_for == (2, 12) and source.mismatched
    assert source.note == ("mismatched pairing: Torch-TensorRT 2.12.1 was built for torch 2.12, "
                           "its code ran on torch 2.13")


def test_installed_torch_tensorrt_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = CodeSource("2.13.0", None, "installed", (2, 13), (2, 13))
    monkeypatch.setattr(ttrt_code, "installed", lambda: installed)
    assert ttrt_code.locate(None) is installed


def test_installed_is_found_without_importing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    assert ttrt_code.installed() is None  # not installed in the test environment
    assert "torch_tensorrt" not in sys.modules


def test_offline_fetch_names_the_fixing_command(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "2")
    with pytest.raises(CodeUnavailable) as caught:
        ttrt_code.fetch("2.13.0")
    assert caught.value.offline
    assert "pip could not reach a package index" in caught.value.reason
    assert "`trtcheck fetch torch-tensorrt 2.13.0` on a connected machine" in str(caught.value)
    assert str(cache / "torch-tensorrt") in caught.value.fix


def test_release_that_does_not_exist(cache: Path, ttrt_releases: dict[str, Path]) -> None:
    with pytest.raises(CodeUnavailable) as caught:
        ttrt_code.fetch("1.0.7")
    assert not caught.value.offline
    assert "no torch-tensorrt==1.0.7 wheel" in caught.value.reason and "2.13.0" in caught.value.reason
    assert "trtcheck fetch torch-tensorrt VERSION" in caught.value.fix


def test_spec_that_is_nothing(cache: Path) -> None:
    with pytest.raises(CodeUnavailable, match="neither a file, a directory nor a torch-tensorrt version"):
        ttrt_code.locate("no/such/wheel.whl")


def test_first_fetch_is_one_line_of_the_banner(wheel: Path, cache: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The default run that fetches the code says what it fetched and where; a run that finds
    it cached does not."""
    from trtcheck import backends
    from trtcheck.config.cascade import resolve

    fixtures = REPO / "fixtures"
    monkeypatch.setattr(ttrt_code, "download", lambda version, into: wheel)
    first = backends.choose(resolve((fixtures,), device="cpu")).backend_note
    where = cache / "torch-tensorrt" / "2.13.0"
    assert first is not None
    assert first.endswith(f"; fetched Torch-TensorRT 2.13.0's Python code into {where}")
    again = backends.choose(resolve((fixtures,), device="cpu")).backend_note
    assert again is not None and "fetched" not in again


def test_a_release_s_bytecode_is_written_once_even_where_python_writes_none(
        tmp_path: Path, ttrt_releases: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    release = tmp_path / "2.13.0"
    shutil.copytree(ttrt_releases["2.13.0"], release, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE
    ttrt_code.compile_bytecode(release)
    sources = sorted((release / ttrt_code.PACKAGE).rglob("*.py"))
    compiled = [Path(importlib.util.cache_from_source(str(p))) for p in sources]
    assert len(sources) > 100 and all(c.is_file() for c in compiled)
    written = [c.stat().st_mtime_ns for c in compiled]
    ttrt_code.compile_bytecode(release)
    assert [c.stat().st_mtime_ns for c in compiled] == written
