"""On CUDA, as a user runs it: out of GPU memory is an error row and the next case passes; a leak
replaces the worker; ``lowering`` through the TensorRT stand-in gives on CUDA the statuses it gives
on the CPU. The rest of the CUDA tests are in tests/unit/measure/test_cuda.py."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest
import torch

from tests.helpers import FIXTURES, rows, trtcheck

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


_OOM_ZOO = """
import torch
import trtcheck

LEAKED = []


class Hog(torch.nn.Module):
    def forward(self, x):
        self.held = []
        while True:
            self.held.append(torch.empty(2**30, dtype=torch.uint8, device=x.device))


class Leak(torch.nn.Module):
    def forward(self, x):
        if not LEAKED:  # once, in the eager stage
            LEAKED.append(torch.ones(2**27, device=x.device))
        return x + 1


class Small(torch.nn.Module):
    def forward(self, x):
        return x @ x.T


@trtcheck.model
def a_hog(variant):
    return Hog(), (torch.randn(4, 4),)


@trtcheck.model
def b_after_hog(variant):
    return Small(), (torch.randn(64, 64),)


@trtcheck.model
def c_leak(variant):
    return Leak(), (torch.randn(4, 4),)


@trtcheck.model
def d_after_leak(variant):
    return Small(), (torch.randn(64, 64),)
"""


def test_out_of_gpu_memory_is_an_error_and_the_next_case_passes(tmp_path: Path) -> None:
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    (zoo / "hogs.py").write_text(textwrap.dedent(_OOM_ZOO))
    out = tmp_path / "out"
    proc = trtcheck("run", zoo, "--device", "cuda", "--backend", "eager", "--out", out)
    assert "Traceback" not in proc.stdout + proc.stderr
    rows = {r["model"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    hog = rows["a_hog"]
    assert hog["status"] == "error" and hog["stage"] == "eager"
    assert hog["message"].startswith("out of GPU memory at eager: requested 1024.00 MiB, "
                                     "reserved by PyTorch "), hog["message"]
    assert "total " in hog["message"] and "unknown" not in hog["message"]
    assert rows["b_after_hog"]["status"] == "pass", rows["b_after_hog"]["message"]
    leak = rows["c_leak"]
    assert leak["status"] == "pass"
    (note,) = leak["memory"]["notes"]
    assert re.match(r"case hogs::c_leak\[default\] left 51\d\.\d MiB allocated on cuda", note), note
    log = (out / "worker.log").read_text()
    assert re.search(r"worker replaced: 51\d\.\d MiB of GPU memory still allocated after "
                     r"hogs::c_leak\[default\]", log), log
    assert rows["d_after_leak"]["status"] == "pass"


def test_lowering_gives_the_statuses_on_cuda_that_it_gives_on_the_cpu(tmp_path: Path) -> None:
    """fixtures/ through Torch-TensorRT 2.13.0's converters and the stand-in's engines: every
    constant, index and shape tensor the stand-in makes meets CUDA data on the GPU. The CPU run
    sees no GPU, as on a machine without one."""
    statuses: dict[str, dict[str, tuple[str, str]]] = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        hidden = {"CUDA_VISIBLE_DEVICES": ""} if device == "cpu" else {}
        proc = trtcheck("run", FIXTURES, "--backend", "lowering", "--torch-tensorrt", "2.13.0", "--device",
                        device, "--out", out, env={**os.environ, **hidden})
        assert "Traceback" not in proc.stdout + proc.stderr
        statuses[device] = {r["case_id"]: (r["status"], r.get("message") or "")
                            for r in rows(out) if r["backend"] == "lowering"}
    assert statuses["cpu"] and {k: v[0] for k, v in statuses["cuda"].items()} == \
        {k: v[0] for k, v in statuses["cpu"].items()}, statuses
