"""The GitHub Action: manifests, linters, its shell steps run under a simulated runner, and the
comment script run by node against a fake GitHub client."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO
from test_github import read_outputs

MANIFESTS = [REPO / "action.yml", REPO / "comment" / "action.yml"]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}
# The only actions used, each pinned to the commit of a node24 release.
PINS = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "actions/download-artifact": ("3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1"),
    "actions/github-script": ("ed597411d8f924073f98dfc5c65a23a2325f34cd", "v8.0.0"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
}
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+?)(?:@(\S+))?(?:\s+#\s*(\S+))?\s*$", re.M)


def readme_workflows() -> dict[str, str]:
    """The example workflows of the README and the docs: the YAML block after each
    ``readme-workflow`` marker."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    found = re.findall(r"<!-- readme-workflow: ([\w-]+) -->\n```yaml\n(.*?)```", text, re.S)
    return dict(found)


def _tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.skip(f"{name} is not installed (it comes with the dev extra)")
    return path


# --- manifests and pins ----------------------------------------------------------------------

@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: str(p.relative_to(REPO)))
def test_manifest(manifest: Path) -> None:
    text = manifest.read_text()
    action = yaml.safe_load(text)
    assert len(action["description"]) < 125 and action["author"]
    assert action["runs"]["using"] == "composite"
    assert "github.action_path" not in text, "use $GITHUB_ACTION_PATH: it works in containers"
    for step in action["runs"]["steps"]:
        for body in (step.get("run"), step.get("with", {}).get("script")):
            assert "${{" not in (body or ""), f"step {step['name']!r} pastes an expression"
    for name in action["inputs"]:
        assert re.search(rf"inputs\.{re.escape(name)}\b", text), f"input {name} is unused"


def test_outputs_of_the_main_action() -> None:
    assert set(ACTION["outputs"]) == {"status", "exit-code", "passed", "failed", "errors",
                                      "report-dir", "comment-file", "results-json"}
    assert ACTION["inputs"]["comment"]["default"] == "false"
    assert ACTION["inputs"]["device"]["default"] == ACTION["inputs"]["out"]["default"] == ""
    token_steps = [s["name"] for s in ACTION["runs"]["steps"] if "inputs.github-token" in str(s)]
    assert token_steps == ["Sticky pull-request comment"]
    assert ACTION["runs"]["steps"][-2]["name"] == "Sticky pull-request comment"


@pytest.mark.parametrize("path", MANIFESTS + WORKFLOWS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_action_is_pinned_to_a_known_release(path: Path) -> None:
    for name, ref, comment in USES.findall(path.read_text()):
        if name.startswith("./"):
            continue
        assert name in PINS, f"{name} is not one of the pinned actions"
        assert (ref, comment) == PINS[name], f"{name}@{ref} # {comment}"


def test_dependabot_watches_the_actions() -> None:
    config = yaml.safe_load((REPO / ".github" / "dependabot.yml").read_text())
    (update,) = config["updates"]
    assert update["package-ecosystem"] == "github-actions"
    assert set(update["directories"]) == {"/", "/comment"}


# --- linters ---------------------------------------------------------------------------------

def test_actionlint_on_the_workflows_and_the_readme(tmp_path: Path) -> None:
    actionlint = _tool("actionlint")
    examples = readme_workflows()
    assert set(examples) == {"minimal", "two-job", "workflow-run", "one-job", "baseline",
                            "matrix"}
    for name, text in examples.items():
        (tmp_path / f"readme-{name}.yml").write_text(text)
    files = [str(p) for p in WORKFLOWS] + sorted(str(p) for p in tmp_path.iterdir())
    proc = subprocess.run([actionlint, "-no-color", "-config-file",
                           str(REPO / ".github" / "actionlint.yaml"), *files],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing_at_medium_or_higher() -> None:
    zizmor = _tool("zizmor")
    proc = subprocess.run([zizmor, "--offline", "--min-severity", "medium", "--no-progress",
                           "action.yml", "comment/action.yml", ".github/"],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: str(p.relative_to(REPO)))
def test_shellcheck_on_the_action_scripts(manifest: Path, tmp_path: Path) -> None:
    shellcheck = _tool("shellcheck")
    for i, step in enumerate(yaml.safe_load(manifest.read_text())["runs"]["steps"]):
        if "run" in step:
            script = tmp_path / f"step{i}.sh"
            script.write_text("#!/usr/bin/env bash\n" + step["run"])
            proc = subprocess.run([shellcheck, "-s", "bash", str(script)],
                                  capture_output=True, text=True, check=False)
            assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}"


# --- the shell steps under a simulated runner ------------------------------------------------

def runner_env(tmp_path: Path, *, fork: bool = False, **extra: str) -> dict[str, str]:
    """What a runner gives a step: GitHub's variables, files, and a pull_request event."""
    head = "someone/r" if fork else "o/r"
    event = {"pull_request": {"number": 4, "head": {"sha": "d" * 40, "repo": {"full_name": head}}},
             "repository": {"full_name": "o/r"}}
    (tmp_path / "event.json").write_text(json.dumps(event))
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    return {**base, "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
            "GITHUB_WORKSPACE": str(REPO), "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_SHA": "e" * 40, "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "77",
            "RUNNER_TEMP": str(tmp_path / "runner-temp"), **extra}


def run_step(name: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A step's script, run as the runner runs composite steps: bash -e -o pipefail."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                           STEPS[name]["run"]], env=env, cwd=cwd, capture_output=True,
                          text=True, check=False)


def step_env(name: str, inputs: dict[str, str], outputs: dict[str, str]) -> dict[str, str]:
    """The step's ``env:``, with ``inputs.*`` and ``steps.*.outputs.*`` filled in."""
    defaults = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    values = {**defaults, **inputs}
    env = {}
    for key, expr in STEPS[name].get("env", {}).items():
        ref = re.fullmatch(r"\$\{\{ (inputs|steps\.\w+\.outputs)\.([\w-]+) \}\}", expr)
        assert ref, expr
        env[key] = values[ref.group(2)] if ref.group(1) == "inputs" else outputs.get(ref.group(2), "")
    return env


def _recorder(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "bin" / "python"
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_install_step_makes_a_venv_that_reuses_site_packages(tmp_path: Path) -> None:
    venv = tmp_path / "runner-temp" / "trtcheck-venv"
    python = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE.venv"\n'
                                 f'mkdir -p "{venv}/bin"; cp "$0.pip" "{venv}/bin/python"\n')
    pip = Path(f"{python}.pip")
    pip.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$ARGS_FILE.pip"\n')
    pip.chmod(0o755)
    inputs = {"python": str(python), "extras": "tensorrt,dev",
              "torch-index-url": "https://download.pytorch.org/whl/cpu $(touch pwned)"}
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Install trtcheck", inputs, {})}
    proc = run_step("Install trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args.venv").read_text().splitlines() == [
        "-m", "venv", "--system-site-packages", str(venv)]
    assert (tmp_path / "args.pip").read_text().splitlines() == [
        "-m", "pip", "install", "--disable-pip-version-check", "--extra-index-url",
        "https://download.pytorch.org/whl/cpu $(touch pwned)", f"{REPO}[tensorrt,dev]"]
    assert read_outputs(tmp_path / "output") == {"python": f"{venv}/bin/python"}
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(("inputs", "message"), [
    ({"extras": "tensorrt] --index-url=https://evil"}, "extras must be"),
    ({"fail-on": "regressions"}, "fail-on must be failures, regression or never"),
    ({"summary": "yes"}, "summary must be true or false"),
])
def test_install_step_rejects_bad_inputs(tmp_path: Path, inputs: dict[str, str],
                                         message: str) -> None:
    python = _recorder(tmp_path, 'touch "$ARGS_FILE"\n')
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "ran")),
           **step_env("Install trtcheck", {"python": str(python), **inputs}, {})}
    proc = run_step("Install trtcheck", env, tmp_path)
    assert proc.returncode == 2
    assert f"::error title=trtcheck::{message}" in proc.stdout
    assert not (tmp_path / "ran").exists()


def test_run_step_maps_hostile_inputs_to_arguments(tmp_path: Path) -> None:
    python = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\nexit 1\n')
    inputs = {"paths": "models/ $(touch pwned) zoo;rm", "backends": "emulate eager *",
              "profiles": "default truncate_double", "config": "ci/trtcheck.toml",
              "args": "-k\nnot (slow or \"$(touch pwned)\")\r\n\n--timeout\n60\n"}
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", inputs, {"python": str(python)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().splitlines() == [
        "-m", "trtcheck", "run", "--backend", "emulate", "--backend", "eager", "--backend", "*",
        "--profile", "default", "--profile", "truncate_double",
        "--config", "ci/trtcheck.toml", "-k", 'not (slow or "$(touch pwned)")',
        "--timeout", "60", "--", "models/", "$(touch", "pwned)", "zoo;rm"]
    assert not (tmp_path / "pwned").exists()
    # the stand-in wrote no outputs, as a crash would not: the step still says what happened
    assert read_outputs(tmp_path / "output") == {"exit-code": "1", "status": "error"}


@pytest.mark.parametrize("exists", [True, False], ids=["baseline", "no-baseline-yet"])
def test_run_step_passes_the_baseline_and_the_regression_gate(tmp_path: Path, exists: bool) -> None:
    python = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\n')
    base = tmp_path / "base dir" / "results.json"
    if exists:
        base.parent.mkdir()
        base.write_text("{}")
    inputs = {"paths": "models/", "baseline": str(base), "fail-on": "regression"}
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", inputs, {"python": str(python)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    gate = ["--baseline", str(base)] if exists else []
    assert (tmp_path / "args").read_text().splitlines() == [
        "-m", "trtcheck", "run", *gate, "--fail-on", "regression", "--", "models/"]
    assert ("::notice title=trtcheck::no baseline file" in proc.stdout) is not exists


@pytest.mark.parametrize(("nan", "expected"), [("fail", ["--nan", "fail"]), ("", [])])
def test_run_step_passes_the_nan_policy_only_when_given(tmp_path: Path, nan: str,
                                                        expected: list[str]) -> None:
    python = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\n')
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", {"paths": "models/", "nan": nan}, {"python": str(python)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().splitlines() == [
        "-m", "trtcheck", "run", *expected, "--", "models/"]


@pytest.mark.slow
@pytest.mark.parametrize("fork", [False, True], ids=["pull_request", "fork"])
def test_simulated_run_on_the_sample_zoo(tmp_path: Path, fork: bool) -> None:
    """The run, summary and fail steps on fixtures/, with trtcheck from this checkout."""
    out = tmp_path / "report"
    inputs = {"paths": "fixtures/", "backends": "eager emulate", "device": "cpu",
              "profiles": "default int64_as_int32", "out": str(out),
              "args": "-k\nid_hash or scatter\n--no-isolate"}
    env = runner_env(tmp_path, fork=fork)
    proc = run_step("Run trtcheck", {**env, **step_env("Run trtcheck", inputs,
                                                         {"python": sys.executable})}, REPO)
    assert proc.returncode == 0, proc.stderr
    outputs = read_outputs(tmp_path / "output")
    assert outputs == {
        "status": "fail", "exit-code": "1", "passed": "5", "failed": "1", "errors": "0",
        "report-dir": str(out), "comment-file": str(out / "comment.md"),
        "results-json": str(out / "results.json"),
    }
    assert "::group::indices.py (2 cases)" in proc.stdout.splitlines()  # CI progress folds
    assert [x for x in proc.stdout.splitlines() if x.startswith("::error")] == [
        "::error file=fixtures/indices.py,line=47,title=trtcheck%3A indices%3A%3Aid_hash[int64] "
        "emulate%3Aint64_as_int32::fail at compare: 2 of 2 outputs failed; worst: out[0]: 30 "
        "of 30 int64 values differ (max abs diff 1.04022e+12); eager has 30 values outside the "
        "int32 range (int64 truncated to int32?)"]
    comment = (out / "comment.md").read_text()
    assert comment.startswith("### trtcheck: ❌ FAIL: 1 of 6 rows fail the run")
    assert f"commit {'d' * 40} · [run](https://github.com/o/r/actions/runs/77)" in comment

    summary = run_step("Job summary", {**env, **step_env("Job summary", {}, outputs)}, REPO)
    assert summary.returncode == 0, summary.stderr
    assert (tmp_path / "summary").read_text() == (out / "report.md").read_text()

    fail = run_step("Fail on failing rows", {**env, **step_env("Fail on failing rows", {}, outputs)},
                    REPO)
    assert fail.returncode == 1 and "trtcheck exited 1" in fail.stdout
    never = step_env("Fail on failing rows", {"fail-on": "never"}, outputs)
    assert run_step("Fail on failing rows", {**env, **never}, REPO).returncode == 0


@pytest.mark.parametrize(("outputs", "expected"), [
    ({"exit-code": "5", "report-dir": "x"}, 1),  # no case ran: a failure too
    ({"exit-code": "0"}, 0),
    ({}, 1),  # trtcheck never ran
])
def test_fail_step(tmp_path: Path, outputs: dict[str, str], expected: int) -> None:
    env = {**runner_env(tmp_path), **step_env("Fail on failing rows", {}, outputs)}
    assert run_step("Fail on failing rows", env, tmp_path).returncode == expected


def test_summary_stays_under_the_limit(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("x" * (1024 * 1024 + 10))
    (tmp_path / "comment.md").write_text("### trtcheck: comment\n")
    outputs = {"report-dir": str(tmp_path), "comment-file": str(tmp_path / "comment.md")}
    env = {**runner_env(tmp_path), **step_env("Job summary", {}, outputs)}
    assert run_step("Job summary", env, tmp_path).returncode == 0
    assert (tmp_path / "summary").read_text() == "### trtcheck: comment\n"
    (tmp_path / "summary").unlink()
    env = {**runner_env(tmp_path), **step_env("Job summary", {}, {"exit-code": "2"})}
    assert run_step("Job summary", env, tmp_path).returncode == 0
    assert "could not run (exit code 2)" in (tmp_path / "summary").read_text()


# --- the comment script, run by node ---------------------------------------------------------

PR_EVENT = {"pull_request": {"number": 4, "head": {"sha": "d" * 40, "repo": {"full_name": "o/r"}}},
            "repository": {"full_name": "o/r"}}


def sticky(tmp_path: Path, **scenario: Any) -> dict[str, Any]:
    node = _tool("node")
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"payload": PR_EVENT, **scenario}))
    proc = subprocess.run([node, str(REPO / "tests" / "js" / "run_sticky.js"), str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _calls(done: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [c["params"] for c in done["calls"] if c["name"] == name]


def test_comment_is_created_with_the_marker(tmp_path: Path) -> None:
    (tmp_path / "comment.md").write_text("### trtcheck: ✅ PASS\n\nping @org/team\n")
    done = sticky(tmp_path, env={"TRTCHECK_COMMENT_FILE": str(tmp_path / "comment.md"),
                                 "TRTCHECK_COMMENT_HEADER": "gpu <!-- x -->"})
    assert done["result"] == "created"
    (created,) = _calls(done, "createComment")
    assert created["issue_number"] == 4
    assert created["body"] == ("<!-- trtcheck-sticky-comment:gpu%20%3C!--%20x%20--%3E -->\n"
                               "### trtcheck: ✅ PASS\n\nping @\u200dorg/team\n")


def test_only_our_own_marked_comment_is_updated(tmp_path: Path) -> None:
    marker = "<!-- trtcheck-sticky-comment:trtcheck -->"
    comments = [
        {"id": 1, "user": {"login": "mallory"}, "body": f"{marker}\nfake"},
        {"id": 2, "user": {"login": "github-actions[bot]"}, "body": "unrelated"},
        {"id": 3, "user": {"login": "github-actions[bot]"}, "body": f"{marker}\nold PASS"},
    ]
    done = sticky(tmp_path, comments=comments)
    assert done["result"] == "updated"
    (updated,) = _calls(done, "updateComment")
    assert updated["comment_id"] == 3
    # no comment file: the comment says trtcheck could not run, so no stale PASS remains
    assert "could not run" in updated["body"] and "actions/runs/42" in updated["body"]
    custom = sticky(tmp_path, comments=comments, env={"TRTCHECK_COMMENT_AUTHOR": "mallory"})
    assert _calls(custom, "updateComment")[0]["comment_id"] == 1


@pytest.mark.parametrize(("scenario", "warning"), [
    ({"payload": {**PR_EVENT, "pull_request": {**PR_EVENT["pull_request"],
                                              "head": {"repo": {"full_name": "fork/r"}}}}},
     "from a fork"),
    ({"actor": "dependabot[bot]"}, "Dependabot"),
    ({"fail_status": 403}, "pull-requests: write"),
    ({"payload": {"push": {}}}, "no pull request"),
])
def test_problems_are_warnings_not_failures(tmp_path: Path, scenario: dict[str, Any],
                                            warning: str) -> None:
    done = sticky(tmp_path, **scenario)
    assert done["result"] in ("skipped", "failed")
    assert len(done["warnings"]) == 1 and warning in done["warnings"][0]
    assert not _calls(done, "createComment") and not _calls(done, "updateComment")


def test_workflow_run_finds_a_fork_pull_request_by_its_head_commit(tmp_path: Path) -> None:
    run = {"head_sha": "f" * 40, "head_branch": "feature", "pull_requests": [],
           "html_url": "https://github.com/o/r/actions/runs/9",
           "head_repository": {"owner": {"login": "someone"}}}
    pulls = [{"number": 8, "head": {"sha": "0" * 40}}, {"number": 9, "head": {"sha": "f" * 40}}]
    done = sticky(tmp_path, payload={"workflow_run": run}, pulls=pulls)
    assert _calls(done, "pulls.list")[0]["head"] == "someone:feature"
    (created,) = _calls(done, "createComment")
    assert created["issue_number"] == 9 and "actions/runs/9" in created["body"]
    stale = sticky(tmp_path, payload={"workflow_run": run}, pulls=pulls[:1])
    assert stale["result"] == "skipped"
