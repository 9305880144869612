"""End to end: ``pytest --trtcheck`` in a subprocess on a two-model zoo, one model wrong, as a user
runs it: pytest-xdist's workers, JUnit XML, ``--lf``, ``-k``, ``-x`` and trtcheck's own reports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from trtcheck.core.traits import Kind
from trtcheck.render.text import KIND_NOTES

ZOO = {
    "models/good.py": """
        import torch
        import trtcheck

        class Affine(torch.nn.Module):
            def forward(self, x):
                return x * 2 + 1

        @trtcheck.model(variants=("float32",))
        def affine(variant):
            return Affine(), (torch.randn(4, 8),)
    """,
    "models/wrong.py": """
        import torch
        import trtcheck

        class Noisy(torch.nn.Module):
            def forward(self, x):
                return x + torch.rand_like(x)

        @trtcheck.model(variants=("float32",))
        def noisy(variant):
            return Noisy(), (torch.randn(4, 8),)
    """,
}
BACKENDS = ("--trtcheck-backend", "eager", "--trtcheck-backend", "emulate", "--trtcheck-device", "cpu")


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pytest ARGS`` as a user runs it in ``cwd``, none of this suite's pytest settings passed on
    (hypothesis's plugin left out: its summary imports hypothesis, seconds in each process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:hypothesispytest", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def test_the_zoo_runs_as_test_items_and_writes_trtchecks_reports(
        make_zoo: Callable[[dict[str, str]], Path]) -> None:
    root = make_zoo(ZOO)
    proc = _pytest(root, "--trtcheck", "models/", *BACKENDS, "-n", "2", "-v", "--junitxml=junit.xml")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    # pytest-xdist kept each case on one worker, which ran its eager reference once for both rows
    ran = re.findall(r"\[(gw\d)\] \[ *\d+%\] \w+ models/(\w+)\.py::", out)  # (worker, file)
    assert len(ran) == 4 and len(set(ran)) == 2, out
    cases = {c.get("name"): c for c in ET.parse(root / "junit.xml").getroot().iter("testcase")}
    assert set(cases) == {"affine[float32-eager]", "affine[float32-emulate]",
                          "noisy[float32-eager]", "noisy[float32-emulate]"}, out
    assert not list(cases["affine[float32-eager]"]) and cases["affine[float32-eager]"].get(
        "classname") == "models.good"
    note = f"† this row is {KIND_NOTES[Kind.EMULATED]}"
    props = {p.get("name"): p.get("value") for p in cases["affine[float32-emulate]"].iter("property")}
    assert props == {"prediction": note}  # a passing prediction says so too
    # the controller wrote trtcheck's reports from both workers' rows, in collection order
    report = root / "trtcheck-report"
    record = json.loads((report / "results.json").read_text())
    assert [(r["case_id"], r["backend"], r["status"]) for r in record["rows"]] == [
        ("good::affine[float32]", "eager", "pass"), ("good::affine[float32]", "emulate", "pass"),
        ("wrong::noisy[float32]", "eager", "fail"), ("wrong::noisy[float32]", "emulate", "fail")]
    assert set(record["analyses"]) == {"good::affine[float32]", "wrong::noisy[float32]"}
    assert (report / "comment.md").read_text().startswith("### trtcheck: ❌ FAIL: 2 of 4 rows")
    assert (report / "report.md").is_file() and (report / "report.html").is_file()
    for backend, row in zip(("eager", "emulate"), record["rows"][2:], strict=True):
        failure = cases[f"noisy[float32-{backend}]"].find("failure")
        assert failure is not None and failure.text is not None
        assert failure.text.startswith(f"fail at compare: {row['message']}"), failure.text
        assert failure.text.endswith(note) == (backend == "emulate"), failure.text
    assert "FAIL: 2 of 4 rows fail the run" in proc.stdout  # trtcheck's verdict closes the summary

    # The last failures again (pytest's cache, by node id), -k picking one, -x, another --out:
    # only that row runs, only its backend, and the record holds it alone.
    again = _pytest(root, "--trtcheck", "models/", *BACKENDS, "--lf", "-k", "eager", "-x",
                    "--trtcheck-out", "again")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "1 failed, 1 deselected" in again.stdout, again.stdout
    rows = json.loads((root / "again" / "results.json").read_text())["rows"]
    assert [(r["case_id"], r["backend"], r["status"]) for r in rows] == [
        ("wrong::noisy[float32]", "eager", "fail")]
