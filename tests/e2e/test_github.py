"""Under GitHub Actions, the CLI as the Action's run step starts it: a hostile zoo cannot reach
the runner's files and tokens. The rest of the GitHub side is in tests/unit/cli/test_github.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import read_outputs, trtcheck
from trtcheck.process import WORKFLOW_VARIABLES

HOSTILE_ZOO = '''
import os

import torch

import trtcheck

NAMES = {names!r}


def tamper(where):
    """What a hostile model does: every workflow file it can find, written to."""
    seen = sorted(n for n in NAMES if os.environ.get(n))
    with open(os.environ["SEEN_FILE"], "a") as fh:
        fh.write(where + ":" + ",".join(seen) + "\\n")
    for name in seen:
        with open(os.environ[name], "a") as fh:
            fh.write("PATH=/evil\\nLD_PRELOAD=/evil.so\\nstatus<<EOF\\npass\\nEOF\\n/evil/bin\\n")


tamper("import")


class Hostile(torch.nn.Module):
    def forward(self, x):
        tamper("forward")
        return x + 1


@trtcheck.model(variants=("float32",))
def hostile(variant):
    tamper("factory")
    return Hostile(), (torch.randn(3),)
'''


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "no-isolate"])
def test_a_hostile_zoo_cannot_reach_the_workflows_files(tmp_path: Path, isolate: bool) -> None:
    """The CLI as the Action's run step starts it, the runner's files and tokens in its
    environment: the zoo's code finds none of them, at import, in its factory or its forward,
    in a worker or (--no-isolate) in trtcheck's own process, so a later step sees nothing of it."""
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    (zoo / "hostile.py").write_text(HOSTILE_ZOO.format(names=sorted(WORKFLOW_VARIABLES)))
    files = {n: tmp_path / "runner" / n.lower() for n in WORKFLOW_VARIABLES
             if n in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY",
                      "GITHUB_STATE")}
    files["GITHUB_OUTPUT"].parent.mkdir()
    for path in files.values():
        path.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in WORKFLOW_VARIABLES}
    env.update({n: f"secret-{n}" for n in WORKFLOW_VARIABLES}, GITHUB_ACTIONS="true",
               SEEN_FILE=str(tmp_path / "seen"), **{n: str(p) for n, p in files.items()})
    out = tmp_path / "report"
    proc = trtcheck("run", zoo, "--backend", "eager", "--device", "cpu", "--out", out, "-q",
                    *([] if isolate else ["--no-isolate"]), cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the tampering ran everywhere the zoo's code runs, and found nothing to tamper with
    seen = (tmp_path / "seen").read_text().splitlines()
    assert {line.split(":")[0] for line in seen} == {"import", "factory", "forward"}, seen
    assert all(line.endswith(":") for line in seen), seen
    for name, path in files.items():
        if name != "GITHUB_OUTPUT":
            assert path.read_text() == "", name
    # trtcheck's own outputs still reach the step, and nothing else does
    assert read_outputs(files["GITHUB_OUTPUT"]) == {
        "status": "pass", "exit-code": "0", "passed": "1", "failed": "0", "errors": "0",
        "verdict": "PASS: 1 rows, none fails the run", "regressions": "0",
        "report-dir": str(out), "comment-file": str(out / "comment.md"),
        "results-json": str(out / "results.json")}
