"""``trtcheck ab`` as a user runs it, on a git repository of two commits: a planted slowdown of
the compiled module only is flagged and named, a commit of the same tree never is, and ``diff``
judges the ab record by the same rule."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import assert_headlines, trtcheck
from trtcheck.results.baseline import Diff

ZOO = '''\
import torch

import trtcheck


class Chain(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(256, 256) / 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(x @ self.w)
        y = torch.tanh(y @ self.w)
        y = torch.tanh(y @ self.w)
        return y


@trtcheck.model(variants=["float32"])
def chain(variant):
    return Chain(), (torch.randn(256, 256),)
'''
# Eight more matrix products, done only by the compiled module (each on the last one's result,
# so that none can be shared): about 3.7 times its work, where eager, and so the speedup's
# numerator, is untouched. A slowdown that size is decided at 4 processes a side whatever the
# machine's load; the rule's power for smaller ones is measured by benchmarks/bench_gate.py.
PLANT = ("        y = torch.tanh(y @ self.w)\n        return y\n",
         "        y = torch.tanh(y @ self.w)\n"
         "        if torch.compiler.is_compiling():\n"
         "            for _ in range(8):\n"
         "                y = y + (y @ self.w) * 0.0\n"
         "        return y\n")
QUICK = ("--backend", "inductor", "--device", "cpu", "--fail-on", "regression", "--seed", "1")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


# Two nn.Sequential models: torch.compile traces one Sequential.forward for both, so in a process
# that ran the other first each would be a recompile with dynamic shapes, its code depending on
# the shuffled case order.
CONTAINERS = '''

@trtcheck.model(variants=["float32"])
def seq_linear(variant):
    return torch.nn.Sequential(torch.nn.Linear(16, 16)), (torch.randn(4, 16),)


@trtcheck.model(variants=["float32"])
def seq_conv(variant):
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3)), (torch.randn(1, 3, 9, 9),)
'''


def _repo(tmp_path: Path, *, planted: bool, zoo: str = ZOO) -> Path:
    """A repository whose HEAD~1 holds the zoo and whose HEAD plants a compiled-only slowdown
    in it, or is a commit of the same tree."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "models" / "mm.py").write_text(zoo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    if planted:
        (repo / "models" / "mm.py").write_text(ZOO.replace(*PLANT))
    _git(repo, "commit", "-qam", "head", "--allow-empty")
    return repo


def _ab(repo: Path, out: Path, processes: int) -> subprocess.CompletedProcess:
    # One thread a process: on two cores shared with the test runner, a compiled kernel's
    # OpenMP barrier waiting on a preempted thread reads as a tenfold slowdown of one process.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return trtcheck("ab", "--base", "HEAD~1", "models/", *QUICK, "--processes", str(processes),
                    "--max-processes", str(processes), "--out", out, cwd=repo, env=env)


@pytest.mark.slow
def test_ab_flags_a_compiled_only_slowdown_and_names_the_row(tmp_path: Path) -> None:
    out = tmp_path / "report"
    processes = 4
    proc = _ab(_repo(tmp_path, planted=True), out, processes)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "mm::chain[float32] inductor -: speedup over eager worsened -" in proc.stdout
    assert "1 of 1 rows decided" in proc.stdout
    # the exit code, the terminal's verdict, every report's headline and junit.xml agree
    assert_headlines(out, 1, proc.stdout)
    assert "FAIL: 1 speedup regression" in proc.stdout
    record = json.loads((out / "results.json").read_text())
    section = record["ab"]
    # the sides alternate, base first: base head, head base, base head, ...
    assert [p["side"] for p in section["processes"]] == [
        side for k in range(processes) for side in (("base", "head"), ("head", "base"))[k % 2]]
    assert all(p["code_hash"] for p in section["processes"])
    assert section["settings"]["compile_cache"]["inductor"] == "shared"
    (row,) = section["rows"]
    for side in ("base", "head"):
        assert len(row[side]["process_speedups"]) == len(row[side]["process_latency_ms"]) == processes
    assert row["decision"]["verdict"] == "slower"
    # the plant is the compiled module's alone: eager's outputs are the same in every process
    digests = row["base"]["process_eager_digests"] + row["head"]["process_eager_digests"]
    assert len(digests) == 2 * processes and digests[0] and len(set(digests)) == 1, digests
    assert section["eager_differences"] == {} and "output changed" not in proc.stdout
    assert record["baseline"]["rule"] == "processes"
    for report in ("report.md", "comment.md"):
        assert "rows decided" in (out / report).read_text(), report
    # diff judges an ab record's sides by the same rule
    again = trtcheck("diff", out / "results.json", "--fail-on", "regression", timeout=120)
    assert again.returncode == 1 and "**speedup over eager worsened -" in again.stdout, \
        again.stdout + again.stderr
    assert again.stdout.splitlines()[-1] == "FAIL: 1 speedup regression"


@pytest.mark.slow
def test_ab_of_the_same_zoo_tree_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "report"
    # however few processes, it must never flag
    proc = _ab(_repo(tmp_path, planted=False, zoo=ZOO + CONTAINERS), out, 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "; same tree: base and head ran the same code" in proc.stdout
    assert "ab: processes fork from a parent" in proc.stderr
    record = json.loads((out / "results.json").read_text())
    section = record["ab"]
    assert section["same_tree"] and section["sides"]["base"]["commit"] != \
        section["sides"]["head"]["commit"]
    assert "slower" not in [r["decision"]["verdict"] for r in section["rows"]]
    # the processes ran the cases in different orders ...
    assert len({tuple(p["cases"]) for p in section["processes"]}) > 1
    # ... and one shared cache: the process that compiled and those that loaded hash the same
    # code, row by row, whatever case ran before it
    assert len(section["rows"]) == 3
    for row in section["rows"]:
        hashes = row["base"]["process_code_hashes"] + row["head"]["process_code_hashes"]
        assert len(hashes) == 4 and hashes[0] and len(set(hashes)) == 1, (row["case_id"], hashes)
        for side in ("base", "head"):  # on a CPU: the operators each process's extra call ran
            assert all(k.get("eager") and k.get("backend") for k in row[side]["process_kernels"])
    for p in section["processes"]:  # where each process's wall went
        parts = p["wall_parts_s"]
        assert {"imports", "compile", "timing", "teardown"} <= parts.keys(), parts
        assert parts["imports"] < 0.5, parts  # forked with torch and inductor imported
        assert sum(parts.values()) == pytest.approx(p["duration_s"], rel=0.1)
    # the later processes of each side skip the export, analysis and drift the first ran
    assert [("export" in p["wall_parts_s"], "drift" in p["wall_parts_s"])
            for p in section["processes"]] == [(True, True)] * 2 + [(False, False)] * 2
    # accuracy judged over each side's processes: none changed between identical trees
    diff = Diff.from_dict(record["baseline"])
    assert diff.changes[0].before_errors is not None and diff.tally()["accuracy"] == 0
    for report in ("report.md", "comment.md"):
        assert not re.search(r"\d+ accuracy change", (out / report).read_text()), report
