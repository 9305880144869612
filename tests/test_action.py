"""The GitHub Action: inputs reach the CLI only through environment variables, never the script."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import yaml
from conftest import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}


def test_no_expression_is_pasted_into_a_script() -> None:
    for step in ACTION["runs"]["steps"]:
        for field in ("run", "script"):
            body = step.get(field) or step.get("with", {}).get(field) or ""
            assert "${{" not in body, f"step {step['name']!r} pastes an expression into {field}"


def test_every_input_is_used() -> None:
    text = (REPO / "action.yml").read_text()
    for name in ACTION["inputs"]:
        assert re.search(rf"inputs\.{re.escape(name)}\b", text), name


def test_run_step_maps_inputs_to_flags_without_injection(tmp_path: Path) -> None:
    """Run the step's own bash script with a recording stand-in for the trtcheck command."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    recorder = bin_dir / "trtcheck"
    recorder.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$ARGS_FILE"\n'
                        'mkdir -p "$TRTCHECK_OUT"; echo "# report" > "$TRTCHECK_OUT/report.md"\n'
                        "exit 1\n")
    recorder.chmod(recorder.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "ARGS_FILE": str(tmp_path / "args"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "TRTCHECK_PATHS": "models/ $(touch pwned) zoo;rm",
        "TRTCHECK_BACKENDS": "emulate eager *",
        "TRTCHECK_PROFILES": "default truncate_double",
        "TRTCHECK_VARIANTS": "",
        "TRTCHECK_DEVICE": "cpu",
        "TRTCHECK_OUT": str(tmp_path / "out"),
    }
    script = STEPS["Run trtcheck"]["run"]
    proc = subprocess.run(["bash", "-e", "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args == ["run", "--out", str(tmp_path / "out"), "--device", "cpu",
                    "--backend", "emulate", "--backend", "eager", "--backend", "*",
                    "--profile", "default", "--profile", "truncate_double",
                    "--", "models/", "$(touch", "pwned)", "zoo;rm"]
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "output").read_text() == "exit-code=1\n"
    assert (tmp_path / "summary").read_text() == "# report\n"
