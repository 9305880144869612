"""The runner's torch / Torch-TensorRT / TensorRT set: what would change it, what pins it, where
each came from, and the known releases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
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


def test_interpreter_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    assert stack.interpreter()["kind"] == "system"
    (tmp_path / "conda-meta").mkdir()
    assert stack.interpreter()["kind"] == "conda"
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    (tmp_path / "conda-meta").rmdir()
    assert stack.interpreter()["kind"] == "venv"


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


