"""The distribution's own name, the collision with the index's other ``trtcheck``, no install
line that installs that other project."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO, trtcheck
from trtcheck import distribution
from trtcheck.config.files import tomllib

_spec = importlib.util.spec_from_file_location("repository", REPO / ".ci" / "repository.py")
assert _spec is not None and _spec.loader is not None
_repository = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_repository)

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
    proc = trtcheck("--version", env=env)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"trtcheck \S+ \(distribution torch-trtcheck\)\n", proc.stdout)
    assert proc.stdout.split()[1] == distribution.version() != distribution.UNKNOWN_VERSION
    (warning,) = proc.stderr.splitlines()
    assert warning.startswith("trtcheck: warning: the distribution trtcheck 1.1.0")
    assert "Fix: pip uninstall -y trtcheck torch-trtcheck" in warning
    # both distributions' metadata: theirs, and our own version
    assert f"whichever of it and torch-trtcheck {distribution.version()} was installed" in warning
    # every command warns at start-up, before it does anything else
    listing = trtcheck("list", tmp_path / "none", env=env)
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


# --- versions, the licence, the metadata, the repository's name ------------------------------

def _scm_version(where: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "setuptools_scm"], cwd=where, capture_output=True,
                          text=True, check=True)
    return proc.stdout.strip()


def _archive_version(repo: Path, ref: str, into: Path) -> str:
    """The version of a `git archive` of ``ref``, as `uses: OWNER/NAME@ref` downloads it."""
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", ref],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return _scm_version(into)


def _describe_patterns() -> tuple[str, str]:
    """The describe command's glob and exclude, which .git_archival.txt repeats."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools_scm"]
    command = config["scm"]["git"]["describe_command"]
    match, exclude = (command[command.index(flag) + 1] for flag in ("--match", "--exclude"))
    assert f"match={match},exclude={exclude})" in (REPO / ".git_archival.txt").read_text()
    return match, exclude


@pytest.mark.parametrize(("tag", "version"), [
    ("v2.0.0-beta", "2.0.0b0"), ("v2.0.0rc1", "2.0.0rc1"), ("v2.0.0-rc.2", "2.0.0rc2"),
    ("v2.0.0a1", "2.0.0a1"), ("v2.0.0.post1", "2.0.0.post1"),
    ("v2.0.0.dev3", None),  # left out of the lookup: the version is the untagged one
])
def test_a_pre_release_tag_gives_its_version(tmp_path: Path, tag: str, version: str | None) -> None:
    """A tag the describe glob finds is read as its PEP 440 version, from a checkout and from a
    `git archive`, on its commit and on a later one; a .devN tag is not looked at."""
    from packaging.version import Version

    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("pyproject.toml", ".git_archival.txt", ".gitattributes"):
        shutil.copy2(REPO / name, repo / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    # no tag yet: a checkout builds 0.1.devN+g<commit>, an archive 0.0
    untagged = _scm_version(repo)
    assert re.fullmatch(r"0\.1\.dev1\+g[0-9a-f]{7,}", untagged)
    assert _archive_version(repo, "HEAD", tmp_path / "untagged") == "0.0"
    subprocess.run([*git, "tag", tag], check=True)
    assert _scm_version(repo) == (version or untagged)
    assert _archive_version(repo, tag, tmp_path / "tagged") == (version or "0.0")
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "after"], check=True)
    after = _scm_version(repo)
    assert ".dev1+g" in after if version else after.startswith("0.1.dev2+g")
    assert Version(after) > Version(version or untagged)
    archived = _archive_version(repo, "HEAD", tmp_path / "after")  # its own abbreviation
    assert archived == "0.0" if version is None else archived.split("+g")[0] == after.split("+g")[0]


@pytest.mark.slow
def test_a_pre_release_tag_builds(tmp_path: Path) -> None:
    from tests.helpers import tagged_checkout

    clone = tagged_checkout(tmp_path, "v2.0.0-beta")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir",
                           str(tmp_path / "dist"), str(clone)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [p.name for p in (tmp_path / "dist").iterdir()] == [
        "torch_trtcheck-2.0.0b0-py3-none-any.whl"]


def test_the_version_pattern_takes_every_tag_the_describe_glob_finds() -> None:
    import fnmatch

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools_scm"]
    regex = re.compile(config["tag"]["regex"])
    match, exclude = _describe_patterns()

    def found(tag: str) -> bool:
        return fnmatch.fnmatchcase(tag, match) and not fnmatch.fnmatchcase(tag, exclude)

    for tag in ("v1.2.3", "v2.0.0-beta", "v2.0.0-beta.2", "v2.0.0rc1", "v2.0.0.post1",
                "v10.20.30-rc.4"):
        assert found(tag) and regex.fullmatch(tag), tag
    for tag in ("v1", "v1.2", "1.2.3", "latest", "v2.0.0.dev3", "v2.0.0-dev"):
        assert not found(tag), tag
    assert regex.fullmatch("0.0")  # setuptools-scm's stand-in where no tag is found


def _self_test(clone: Path, version: str) -> int:
    """ci.yml's check that the Action reported the version of the commit it ran."""
    import yaml

    ci = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    (step,) = [s for s in ci["jobs"]["action"]["steps"]
               if s.get("name") == "The Action reports the version of this commit"]
    (clone / "results.json").write_text(json.dumps({"environment": {"trtcheck": version}}))
    return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=clone,
                          env={**os.environ, "RESULTS_JSON": str(clone / "results.json")},
                          capture_output=True, text=True, check=False).returncode


@pytest.mark.slow
def test_the_major_tag_on_the_same_commit_is_never_the_version(tmp_path: Path) -> None:
    """The release tags v1.2.3 and then moves v1 onto the same commit: setuptools-scm, a
    `git archive` of either tag, the sdist and the wheel all say 1.2.3, and carry the licence."""
    from tests.helpers import tagged_checkout

    clone = tagged_checkout(tmp_path, "v1.2.3")
    subprocess.run(["git", "-C", str(clone), "tag", "v1"], check=True)
    # the trap: plain `git describe --tags` picks the major tag
    assert subprocess.run(["git", "-C", str(clone), "describe", "--tags"], capture_output=True,
                          text=True, check=True).stdout.strip() == "v1"
    assert _scm_version(clone) == "1.2.3"
    assert _self_test(clone, "1.2.3") == 0 and _self_test(clone, "1") != 0
    for ref in ("v1", "v1.2.3"):  # `uses: …@v1` downloads the archive of v1
        unpacked = tmp_path / f"archive-{ref}"
        unpacked.mkdir()
        archive = subprocess.run(["git", "-C", str(clone), "archive", "--format=tar", ref],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(unpacked)], input=archive, check=True)
        assert "describe-name: v1.2.3\n" in (unpacked / ".git_archival.txt").read_text()
        assert _scm_version(unpacked) == "1.2.3"
    dist = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist),
                           str(clone)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in dist.iterdir()) == [
        "torch_trtcheck-1.2.3-py3-none-any.whl", "torch_trtcheck-1.2.3.tar.gz"]
    licence = (REPO / "LICENSE").read_bytes()
    with zipfile.ZipFile(dist / "torch_trtcheck-1.2.3-py3-none-any.whl") as wheel:
        assert wheel.read("torch_trtcheck-1.2.3.dist-info/licenses/LICENSE") == licence
        metadata = wheel.read("torch_trtcheck-1.2.3.dist-info/METADATA").decode()
    with tarfile.open(dist / "torch_trtcheck-1.2.3.tar.gz") as sdist:
        member = sdist.extractfile("torch_trtcheck-1.2.3/LICENSE")
        assert member is not None and member.read() == licence
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert "Version: 1.2.3" in headers and "License-Expression: Apache-2.0" in headers
    assert "License-File: LICENSE" in headers
    source = f"https://github.com/{_repository.declared()}"
    urls = {h.split(": ", 1)[1].split(", ", 1)[0]: h.split(", ", 1)[1]
            for h in headers if h.startswith("Project-URL: ")}
    assert urls == {"Source": source, "Documentation": f"{source}/tree/main/docs",
                    "Changelog": f"{source}/blob/main/CHANGELOG.md", "Issues": f"{source}/issues"}
    assert any(h.startswith("Classifier: Topic :: Software Development :: Testing") for h in headers)


def test_the_licence_is_apache_2_and_no_classifier_repeats_it() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text and len(text) > 11_000
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    # a licence expression and a License :: classifier together are refused by the index
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_the_repository_is_named_in_one_place() -> None:
    """Every reference to this repository names the one declared in pyproject.toml; copies
    are written by .ci/repository.py."""
    name = _repository.declared()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["urls"]["Source"] == f"https://github.com/{name}"
    found = 0
    for path in _repository.text_files(REPO):
        for ref in _repository.references(path.read_text(encoding="utf-8", errors="replace")):
            if ref.split("/")[1] in ("trtcheck", name.split("/")[1]):
                found += 1
                assert ref == name, f"{path.relative_to(REPO)} names {ref}, not {name}"
    assert found > 20


def test_moving_the_repository_leaves_no_copy_behind(tmp_path: Path) -> None:
    """What an owner runs once: `python .ci/repository.py acme/checker`."""
    copy = tmp_path / "repo"
    for path in _repository.text_files(REPO):
        target = copy / path.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    subprocess.run(["git", "init", "-q", str(copy)], check=True)
    old = _repository.declared()
    proc = subprocess.run([sys.executable, str(copy / ".ci" / "repository.py"), "acme/checker"],
                          cwd=copy, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert {"pyproject.toml", "README.md", "mkdocs.yml", "docs/action.md"} <= set(
        proc.stdout.split())
    assert _repository.declared(copy) == "acme/checker"
    for path in _repository.text_files(copy):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert old not in text or path.name == "test_distribution.py", path
        refs = [r for r in _repository.references(text) if r.split("/")[1] in ("trtcheck", "checker")]
        assert set(refs) <= {"acme/checker"}, (path, refs)
