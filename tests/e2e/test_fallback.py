"""One verdict per commit: with CI set, no switch from the default backend to another when
Torch-TensorRT's code can be neither found nor fetched (exit 2 with the fix), unless
``fallback = "emulate"``; outside CI the switch stays, and every report's headline says so.
End to end, the CLI in a subprocess, with an empty cache and an unreachable package index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import REPO, trtcheck

ZOO = '''
import torch, trtcheck

class Twice(torch.nn.Module):
    def forward(self, z):
        return torch.view_as_real(z * 2)

@trtcheck.model(variants=("complex64",))
def twice(variant):
    return Twice(), (torch.randn(4, dtype=torch.complex64),)
'''


def _env(tmp_path: Path, *, ci: bool, offline: bool, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "PIP_")) and k != "CI"}
    if ci:
        env["CI"] = "true"
    if offline:  # an empty cache, and pip can reach no index
        (tmp_path / "empty-cache").mkdir(exist_ok=True)
        env.update(TRTCHECK_CACHE=str(tmp_path / "empty-cache"),
                   PIP_INDEX_URL="http://127.0.0.1:9/", PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull)
    return {**env, **extra}


def _zoo(tmp_path: Path, config: str = "") -> Path:
    zoo = tmp_path / "zoo"
    zoo.mkdir(exist_ok=True)
    (zoo / "twice.py").write_text(ZOO)
    (zoo / "trtcheck.toml").write_text(config)
    return zoo


def test_in_ci_without_the_code_the_run_stops_with_the_fix(tmp_path: Path) -> None:
    outputs = tmp_path / "github-output"
    env = _env(tmp_path, ci=True, offline=True, GITHUB_ACTIONS="true",
               GITHUB_OUTPUT=str(outputs))
    proc = trtcheck("run", str(REPO / "fixtures"), "--out", str(tmp_path / "out"), env=env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the default, lowering, cannot run here" in proc.stderr
    assert "trtcheck fetch torch-tensorrt" in proc.stderr
    assert "--backend emulate" in proc.stderr and 'fallback = "emulate"' in proc.stderr
    assert "CI is set, so trtcheck does not switch backends" in proc.stderr
    assert not (tmp_path / "out" / "results.json").exists()
    assert "status<<" in outputs.read_text() and "\nerror\n" in outputs.read_text()


def test_in_ci_fallback_emulate_runs_emulate_and_says_so(tmp_path: Path) -> None:
    zoo = _zoo(tmp_path, 'fallback = "emulate"\n')
    proc = trtcheck("run", str(zoo), "--out", "out", env=_env(tmp_path, ci=True, offline=True), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads((tmp_path / "out" / "results.json").read_text())["rows"]
    assert {r["backend"] for r in rows} == {"emulate"}
    # a prediction: not timed (--time-predictions would keep its timings apart), no speedup,
    # interval or memory ratio to mistake
    [row] = rows
    assert row["latency"] is None and "prediction_timing" not in row
    assert "timing" not in row["timings"]
    text = json.dumps(row)
    assert all(f'"{key}"' not in text for key in ("speedup", "speedup_low", "ratio"))


def test_outside_ci_the_fallback_is_in_every_headline(tmp_path: Path) -> None:
    zoo = _zoo(tmp_path)
    proc = trtcheck("run", str(zoo), "--out", "out", env=_env(tmp_path, ci=False, offline=True), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = "emulate ran instead of lowering, the default: pip could not reach a package index"
    assert f"note: {said}" in proc.stdout
    out = tmp_path / "out"
    report = (out / "report.md").read_text()
    assert report.index(said) < report.index("## Summary")
    comment = (out / "comment.md").read_text()
    assert comment.index(said) < comment.index("Backends: emulate (predicted †)")
    assert f'name="backend fallback" value="{said}' in (out / "junit.xml").read_text()


def test_fallback_none_stops_outside_ci_too(tmp_path: Path) -> None:
    zoo = _zoo(tmp_path)
    proc = trtcheck("run", str(zoo), "--fallback", "none", "--out", "out",
                env=_env(tmp_path, ci=False, offline=True), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert 'fallback = "none" lets no other backend run in its place' in proc.stderr


@pytest.mark.slow
def test_in_ci_with_the_code_cached_the_rows_equal_an_online_run(
        tmp_path: Path, ttrt_releases: dict[str, Path]) -> None:
    zoo = _zoo(tmp_path)
    cache = str(ttrt_releases["2.13.0"].parent.parent)  # the cache root holding torch-tensorrt/
    online = trtcheck("run", str(zoo), "--out", "online", "--no-deploy",
                  env=_env(tmp_path, ci=False, offline=False, TRTCHECK_CACHE=cache), cwd=tmp_path)
    offline_ci = trtcheck("run", str(zoo), "--out", "ci", "--no-deploy",
                      env=_env(tmp_path, ci=True, offline=True, TRTCHECK_CACHE=cache), cwd=tmp_path)
    assert online.returncode == offline_ci.returncode == 0, offline_ci.stdout + offline_ci.stderr

    def rows(out: str) -> list[tuple[str, ...]]:
        record = json.loads((tmp_path / out / "results.json").read_text())
        return [(r["case_id"], r["backend"], r["profile"], r["status"], r["message"],
                 r["evidence"]["versions"].get("torch_tensorrt")) for r in record["rows"]]

    assert rows("ci") == rows("online")
    assert {r[1] for r in rows("ci")} == {"lowering"}
    comment = (tmp_path / "ci" / "comment.md").read_text()
    assert "Backends: lowering (predicted †; Torch-TensorRT 2.13.0's code)" in comment
    assert "instead of" not in comment
