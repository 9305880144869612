"""The runner's torch / Torch-TensorRT / TensorRT set: what would change it, what pins it, where
each came from, and the known releases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from trtcheck import stack
from trtcheck.config.files import tomllib
from trtcheck.stack import Found


def _found(torch: str | None = "2.13.0", ttrt: str | None = None,
           trt: str | None = None) -> dict[str, Found]:
    def one(module: str, version: str | None) -> Found:
        return Found(module, version, "/site" if version else None,
                     (stack.MODULES[module],) if version else ())
    return {"torch": one("torch", torch), "torch_tensorrt": one("torch_tensorrt", ttrt),
            "tensorrt": one("tensorrt", trt)}


def test_the_requirements_stack_knows_are_pyprojects() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert f"torch>={stack.TORCH_MINIMUM[0]}.{stack.TORCH_MINIMUM[1]}" in project["dependencies"]
    extras = project["optional-dependencies"]
    for extra, needs in extras.items():
        named = {r.split(">")[0].split("=")[0].replace("-", "_") for r in needs}
        brings = set(stack.EXTRA_MODULES.get(extra, ())) & set(stack.MODULES)
        assert ("torch_tensorrt" in named) == ("torch_tensorrt" in brings), extra


@pytest.mark.parametrize(("found", "extras", "words"), [
    (_found(torch=None), set(), ["torch is not installed", "install-torch: true"]),
    (_found(torch="2.4.1"), set(), ["needs torch >= 2.5", "torch 2.4.1"]),
    (_found(), {"tensorrt"}, ["torch 2.13.0, torch_tensorrt not installed",
                              "torch-tensorrt==2.13.0 with TensorRT 11.0"]),
    (_found(torch="2.11.0"), {"tensorrt"}, ["no Torch-TensorRT release built for torch 2.11",
                                            "torch-tensorrt 2.12.1 for torch 2.12 (TensorRT 10.16)"]),
    (_found(torch="2.12.1", ttrt="2.13.0", trt="11.0.0"), {"tensorrt"},
     ["Torch-TensorRT 2.13.0 is built for torch 2.13", "pip would change torch",
      "torch-tensorrt==2.12.1 with TensorRT 10.16"]),
    (_found(ttrt="2.13.0"), {"tensorrt"}, ["without TensorRT", "install TensorRT 11.0"]),
])
def test_what_would_change_the_set_is_refused(found: dict[str, Found], extras: set[str],
                                              words: list[str]) -> None:
    why = stack.refusal(found, extras)
    assert why is not None
    for word in words:
        assert word in why


@pytest.mark.parametrize(("found", "extras"), [
    (_found(), set()),
    (_found(), {"dev"}),
    (_found(ttrt="2.13.0", trt="11.0.1"), {"tensorrt"}),
    (_found(torch="2.14.0+cu130", ttrt="2.14.0", trt="11.1.0"), {"tensorrt", "dev"}),
    # the tensorrt backend is not asked for: a mismatched set is left alone, and warned of
    (_found(torch="2.12.1", ttrt="2.13.0", trt="11.0.0"), set()),
])
def test_a_matched_set_is_installed_against(found: dict[str, Found], extras: set[str]) -> None:
    assert stack.refusal(found, extras) is None


def test_pairing_warnings() -> None:
    assert stack.pairing_warnings({"torch": "2.13.0", "torch_tensorrt": "2.13.0",
                                   "tensorrt": "11.0.0"}) == []
    assert stack.pairing_warnings({"torch": "2.13.0", "torch_tensorrt": None}) == []
    (torch,) = stack.pairing_warnings({"torch": "2.14.0+cu130", "torch_tensorrt": "2.13.0"})
    assert torch.startswith("Torch-TensorRT 2.13.0 is built for torch 2.13, but torch 2.14.0+cu130")
    assert "torch-tensorrt==2.14.0" in torch
    (trt,) = stack.pairing_warnings({"torch": "2.12.0", "torch_tensorrt": "2.12.1",
                                     "tensorrt": "11.0.0"})
    assert trt == "Torch-TensorRT 2.12.1 is built with TensorRT 10.16, but TensorRT 11.0.0 is installed"
    # a release outside the table: its own minor is the torch minor it is built for
    assert "built for torch 2.15" in stack.pairing_warnings({"torch": "2.14.0",
                                                             "torch_tensorrt": "2.15.0"})[0]


def test_installed_torch_is_found_without_importing_it_and_pinned() -> None:
    code = ("import sys, json; from trtcheck import stack; f = stack.find('torch');"
            "print(json.dumps([f.version, f.location, f.dists, 'torch' in sys.modules,"
            " stack.constraints({'torch': f})]))")
    version, location, dists, imported, pins = json.loads(subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    import torch

    assert version == torch.__version__ and not imported
    assert Path(torch.__file__).parent.parent == Path(location)
    assert dists == ["torch"] and pins == [f"torch=={torch.__version__}"]
    assert not stack.find("no_such_module_here").installed


def test_interpreter_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    assert stack.interpreter()["kind"] == "system"
    (tmp_path / "conda-meta").mkdir()
    assert stack.interpreter()["kind"] == "conda"
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    (tmp_path / "conda-meta").rmdir()
    assert stack.interpreter()["kind"] == "venv"


def test_pth_lines_add_site_dirs_with_their_own_pth_files(tmp_path: Path) -> None:
    """A runner's site directory often holds .pth files itself (editable installs): the Action's
    venv processes them too."""
    runner_site, own_site = tmp_path / "runner site", tmp_path / "own"
    (runner_site / "pkg_src").mkdir(parents=True)
    (runner_site / "pkg_src" / "runner_mod.py").write_text("X = 1\n")
    (runner_site / "editable.pth").write_text(str(runner_site / "pkg_src") + "\n")
    own_site.mkdir()
    (own_site / stack.PTH).write_text("\n".join(stack.pth_lines([str(runner_site)])) + "\n")
    code = (f"import site; site.addsitedir({str(own_site)!r}); import runner_mod, sys;"
            f"print(runner_mod.X, sys.path.index({str(runner_site)!r}) > sys.path.index({str(own_site)!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "True"]


def test_sources_say_runner_or_action_only_under_the_action(tmp_path: Path) -> None:
    venv = tmp_path / "trtcheck-venv"
    found = {"torch": Found("torch", "2.13.0", "/opt/runner/site-packages", ("torch",)),
             "torch_tensorrt": Found("torch_tensorrt", "2.13.0",
                                     str(venv / "lib" / "site-packages"), ("torch-tensorrt",)),
             "tensorrt": Found("tensorrt")}
    assert stack.sources(str(venv), found) == {"torch": "environment",
                                               "torch_tensorrt": "environment"}
    venv.mkdir()
    (venv / stack.MARKER).write_text("{}")
    assert stack.sources(str(venv), found) == {"torch": "runner", "torch_tensorrt": "action"}


def test_script_runs_with_the_standard_library_only(tmp_path: Path) -> None:
    """As the install step runs it: by path, before trtcheck or its dependencies are installed."""
    proc = subprocess.run([sys.executable, "-S", str(REPO / "trtcheck" / "stack.py"), "--extras",
                           "dev", "--out", str(tmp_path)], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    # -S: no site-packages at all, so torch is not there and the install would bring one
    assert proc.returncode == 2, proc.stderr
    assert "torch is not installed" in proc.stdout and not proc.stderr
    ok = subprocess.run([sys.executable, str(REPO / "trtcheck" / "stack.py"), "--out",
                         str(tmp_path)], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "found torch " in ok.stdout
    marker = json.loads((tmp_path / stack.MARKER).read_text())
    assert marker["found"]["torch"]["version"] and marker["install_torch"] is False
    assert (tmp_path / stack.CONSTRAINTS).read_text().startswith("torch==")
