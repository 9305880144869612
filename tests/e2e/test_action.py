"""The GitHub Action: manifests, linters, its shell steps run under a simulated runner, and its
Marketplace listing. The comment script's tests are in test_action_comment.py, the release
workflow's in test_release.py."""

from __future__ import annotations

import importlib.util
import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import (
    ACTION,
    MANIFESTS,
    REPO,
    REPOSITORY,
    USES,
    read_outputs,
    readme_workflows,
    run_step,
    runner_env,
    step_env,
    tagged_checkout,
    tool,
)

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
TRTCHECK = str(Path(sys.executable).parent / "trtcheck")  # this venv's console script
# The only actions used, each pinned to the commit of a node24 release.
PINS = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "actions/download-artifact": ("3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1"),
    "actions/github-script": ("ed597411d8f924073f98dfc5c65a23a2325f34cd", "v8.0.0"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "pypa/gh-action-pypi-publish": ("ed0c53931b1dc9bd32cbe73a98c7f6766f8a527e", "v1.13.0"),
}


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
    assert set(ACTION["outputs"]) == {"status", "exit-code", "passed", "failed", "errors", "verdict",
                                      "regressions", "report-dir", "comment-file", "results-json"}
    assert ACTION["inputs"]["comment"]["default"] == "false"
    assert ACTION["inputs"]["device"]["default"] == ACTION["inputs"]["out"]["default"] == ""
    # the token's value reaches only the comment step (another step only tests it for empty)
    token_steps = [s["name"] for s in ACTION["runs"]["steps"]
                   if "inputs.github-token" in str([s.get("with"), s.get("env"), s.get("run")])]
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
    actionlint = tool("actionlint")
    examples = readme_workflows()
    assert set(examples) == {"minimal", "two-job", "workflow-run", "one-job", "baseline", "ab",
                             "matrix", "gpu-ngc", "gpu-venv", "gpu-conda", "gpu-empty", "pytest"}
    for name, text in examples.items():
        (tmp_path / f"readme-{name}.yml").write_text(text)
    files = [str(p) for p in WORKFLOWS] + sorted(str(p) for p in tmp_path.iterdir())
    proc = subprocess.run([actionlint, "-no-color", "-config-file",
                           str(REPO / ".github" / "actionlint.yaml"), *files],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing_at_low_or_higher(tmp_path: Path) -> None:
    """The actions, .github/ and every example of the README and the docs, extracted to files."""
    zizmor = tool("zizmor")
    examples = tmp_path / "examples" / ".github" / "workflows"
    examples.mkdir(parents=True)
    for name, text in readme_workflows().items():
        (examples / f"{name}.yml").write_text(text)
    proc = subprocess.run([zizmor, "--offline", "--min-severity", "low", "--no-progress",
                           "action.yml", "comment/action.yml", ".github/", str(tmp_path / "examples")],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout
    # the check itself: an unpinned example is found
    (examples / "bad.yml").write_text("on: push\npermissions: {}\njobs:\n  a:\n    runs-on: x\n"
                                      f"    steps:\n      - uses: {REPOSITORY}@v1\n")
    bad = subprocess.run([zizmor, "--offline", "--min-severity", "low", "--no-progress",
                          str(tmp_path / "examples")], capture_output=True, text=True, check=False)
    assert bad.returncode != 0 and "unpinned-uses" in bad.stdout


def test_examples_pin_trtcheck_by_commit_with_the_tag_in_a_comment() -> None:
    for name, text in readme_workflows().items():
        uses = [(n, ref, tag) for n, ref, tag in USES.findall(text) if n.startswith(REPOSITORY)]
        assert uses, name
        for n, ref, tag in uses:
            assert re.fullmatch(r"[0-9a-f]{40}", ref) and re.fullmatch(r"v\d+\.\d+\.\d+", tag), \
                (name, n, ref, tag)


def test_pull_request_recipes_are_safe_as_written() -> None:
    for name, text in readme_workflows().items():
        workflow = yaml.safe_load(text)
        triggers = workflow[True] if True in workflow else workflow["on"]  # YAML reads `on` as True
        assert "pull_request_target" not in str(triggers), name
        assert "always()" not in text, f"{name}: use !cancelled(), which a cancelled run skips"
        if "pull_request" in str(triggers):
            assert "github.event.pull_request.number" in workflow["concurrency"]["group"], name
            for job_name, job in workflow["jobs"].items():
                if "self-hosted" in str(job.get("runs-on")):
                    # the base workflow's second look at a fork's job (the approval setting is
                    # what GitHub enforces: docs/action.md)
                    assert "head.repo.full_name != github.repository" in str(job["environment"]), \
                        (name, job_name)
        if "workflow_run" in str(triggers):
            for job in workflow["jobs"].values():
                assert "github.event.workflow_run.conclusion != 'skipped'" in job["if"], name
            assert "actions/checkout" not in text, f"{name} must run no code of the pull request"


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: str(p.relative_to(REPO)))
def test_shellcheck_on_the_action_scripts(manifest: Path, tmp_path: Path) -> None:
    shellcheck = tool("shellcheck")
    for i, step in enumerate(yaml.safe_load(manifest.read_text())["runs"]["steps"]):
        if "run" in step:
            script = tmp_path / f"step{i}.sh"
            script.write_text("#!/usr/bin/env bash\n" + step["run"])
            proc = subprocess.run([shellcheck, "-s", "bash", str(script)],
                                  capture_output=True, text=True, check=False)
            assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}"


# --- the shell steps under a simulated runner ------------------------------------------------


def _recorder(tmp_path: Path, body: str, name: str = "python") -> Path:
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def install(tmp_path: Path, action_path: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The install step under a simulated runner, with the action at ``action_path`` and, unless
    ``python`` is given, this test's interpreter (a venv holding torch) as the runner's."""
    inputs = {"python": sys.executable, **inputs}
    env = {**runner_env(tmp_path, GITHUB_ACTION_PATH=str(action_path),
                        PIP_CACHE_DIR=str(tmp_path / "pip-cache")),
           **step_env("Install trtcheck", inputs, {})}
    return run_step("Install trtcheck", env, tmp_path)


def _installed_version(venv: Path) -> str:
    proc = subprocess.run([str(venv / "bin" / "trtcheck"), "--version"],
                          capture_output=True, text=True, check=True, cwd=venv)
    return proc.stdout.split()[1]


@pytest.mark.slow
def test_install_from_a_tagged_clone_keeps_the_runners_torch(tmp_path: Path) -> None:
    """``uses: ./`` (a git checkout): version 9.8.7 from the tag; the runner's python is a venv
    holding torch, which the Action's venv imports and pip leaves alone."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tagged_checkout(tmp_path)), str(clone)], check=True)
    proc = install(tmp_path, clone)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    venv = tmp_path / "runner-temp" / "trtcheck-venv"
    assert read_outputs(tmp_path / "output") == {"trtcheck": f"{venv}/bin/trtcheck"}
    assert _installed_version(venv) == "9.8.7"
    assert "trtcheck 9.8.7 (distribution torch-trtcheck)" in proc.stdout
    # the log says which interpreter, how its packages are seen, what was found and held
    import torch

    assert f"python {sys.executable} (" in proc.stdout and ") is a venv at " in proc.stdout
    assert f"found torch {torch.__version__} (" in proc.stdout
    assert f"held to them by constraints: torch=={torch.__version__}" in proc.stdout
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert not (site / "torch").exists() and not list(site.glob("torch-*.dist-info"))
    assert "Requirement already satisfied: torch" in proc.stdout
    # nothing built in the action's folder
    assert subprocess.run(["git", "-C", str(clone), "status", "--porcelain", "--ignored"],
                          capture_output=True, text=True, check=True).stdout == ""
    # the run reports the runner's torch, and where it came from
    out = tmp_path / "report"
    inputs = {"paths": "fixtures/", "backends": "eager", "device": "cpu", "out": str(out),
              "args": "-k\nid_hash\n--no-isolate"}
    run = run_step("Run trtcheck", {**runner_env(tmp_path, GITHUB_ACTION_PATH=str(clone)),
                                    **step_env("Run trtcheck", inputs, read_outputs(
                                        tmp_path / "output"))}, clone)
    assert run.returncode == 0, run.stdout + run.stderr
    environment = json.loads((out / "results.json").read_text())["environment"]
    assert (environment["trtcheck"], environment["torch"]) == ("9.8.7", torch.__version__)
    assert environment["sources"] == {"torch": "runner"}
    header = (out / "report.md").read_text().splitlines()[2]
    assert header.startswith(f"trtcheck 9.8.7 · torch {torch.__version__} (from the runner) · "
                             "Torch-TensorRT not installed · TensorRT not installed")
    assert f"torch {torch.__version__} (from the runner)" in (out / "comment.md").read_text()


@pytest.mark.slow
def test_install_from_a_git_archive_of_the_tag(tmp_path: Path) -> None:
    """``uses: OWNER/NAME@v9.8.7`` downloads a tarball made by git archive: no .git."""
    origin = tagged_checkout(tmp_path)
    unpacked = tmp_path / "org" / "trtcheck" / "v9.8.7"
    unpacked.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(origin), "archive", "--format=tar", "v9.8.7"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(unpacked)], input=archive, check=True)
    assert "describe-name: v9.8.7" in (unpacked / ".git_archival.txt").read_text()
    before = sorted(p.relative_to(unpacked) for p in unpacked.rglob("*"))
    # the workspace (the step's folder) holds modules named as the ones the step runs
    decoy = f"open({str(tmp_path / 'decoy-ran')!r}, 'a').write(__name__ + '\\n')\n"
    (tmp_path / "pip").mkdir()
    for name in ("__init__.py", "__main__.py"):
        (tmp_path / "pip" / name).write_text(decoy)
    for name in ("venv.py", "sysconfig.py", "ensurepip.py"):
        (tmp_path / name).write_text(decoy + "raise SystemExit(0)\n")
    proc = install(tmp_path, unpacked)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _installed_version(tmp_path / "runner-temp" / "trtcheck-venv") == "9.8.7"
    assert sorted(p.relative_to(unpacked) for p in unpacked.rglob("*")) == before
    assert not (tmp_path / "decoy-ran").exists()


def test_tensorrt_extra_without_a_matching_torch_tensorrt_stops_before_pip(tmp_path: Path) -> None:
    """This interpreter has torch and no Torch-TensorRT: the extra would bring another torch."""
    import torch

    pytest.importorskip("torch")
    if importlib.util.find_spec("torch_tensorrt") is not None:
        pytest.skip("Torch-TensorRT is installed here")
    proc = install(tmp_path, REPO, extras="tensorrt")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (error,) = [x for x in proc.stdout.splitlines() if x.startswith("::error")]
    assert f"torch {torch.__version__}, torch_tensorrt not installed, tensorrt not installed" in error
    assert "torch-tensorrt==2.13.0 with TensorRT 11.0" in error and "install-torch: true" in error
    assert read_outputs(tmp_path / "output") == {"exit-code": "2", "status": "error"}
    # stopped before any venv or download
    assert not (tmp_path / "runner-temp" / "trtcheck-venv").exists()
    assert not (tmp_path / "pip-cache").exists()


@pytest.mark.parametrize(("inputs", "message"), [
    ({"extras": "tensorrt] --index-url=https://evil"}, "extras must be"),
    ({"fail-on": "regressions"}, "fail-on must be failures, regression, output-change, narrowing or never"),
    ({"summary": "yes"}, "summary must be true or false"),
    ({"reduce": "1"}, "reduce must be true or false"),
    ({"install-torch": "yes"}, "install-torch must be true or false"),
    ({"cache": "off"}, "cache must be true or false"),
    ({"allow-pull-request-target": "yes"}, "allow-pull-request-target must be true or false"),
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
    assert read_outputs(tmp_path / "output") == {"exit-code": "2", "status": "error"}


@pytest.mark.parametrize(("event", "allow", "refused"), [
    ("pull_request_target", "false", True), ("pull_request_target", "true", False),
    ("pull_request", "false", False)])
def test_pull_request_target_is_refused_unless_the_caller_accepts_it(
        tmp_path: Path, event: str, allow: str, refused: bool) -> None:
    python = _recorder(tmp_path, 'touch "$ARGS_FILE"\n')
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "ran"), GITHUB_EVENT_NAME=event),
           **step_env("Install trtcheck", {"python": str(python),
                                            "allow-pull-request-target": allow}, {})}
    proc = run_step("Install trtcheck", env, tmp_path)
    errors = [x for x in proc.stdout.splitlines() if x.startswith("::error")]
    assert (tmp_path / "ran").exists() is not refused, proc.stdout + proc.stderr
    if refused:
        assert proc.returncode == 2
        (error,) = errors
        assert error.startswith("::error title=trtcheck::refusing to run under "
                                "pull_request_target: the job holds a write token")
        assert "allow-pull-request-target: true" in error
        assert read_outputs(tmp_path / "output") == {"exit-code": "2", "status": "error"}
    else:
        assert not [e for e in errors if "pull_request_target" in e]


def test_run_step_maps_hostile_inputs_to_arguments(tmp_path: Path) -> None:
    trtcheck = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\nexit 1\n', "trtcheck")
    inputs = {"paths": "models/ $(touch pwned) zoo;rm", "backends": "emulate eager *",
              "profiles": "default truncate_double", "config": "ci/trtcheck.toml",
              "args": "-k\nnot (slow or \"$(touch pwned)\")\r\n\n--timeout\n60\n"}
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", inputs, {"trtcheck": str(trtcheck)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().splitlines() == [
        "run", "--backend", "emulate", "--backend", "eager", "--backend", "*",
        "--profile", "default", "--profile", "truncate_double",
        "--config", "ci/trtcheck.toml", "-k", 'not (slow or "$(touch pwned)")',
        "--timeout", "60", "--", "models/", "$(touch", "pwned)", "zoo;rm"]
    assert not (tmp_path / "pwned").exists()
    # the stand-in wrote no outputs, as a crash would not: the step still says what happened
    assert read_outputs(tmp_path / "output") == {"exit-code": "1", "status": "error"}


@pytest.mark.parametrize("exists", [True, False], ids=["baseline", "no-baseline-yet"])
def test_run_step_passes_the_baseline_and_the_regression_gate(tmp_path: Path, exists: bool) -> None:
    trtcheck = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\n', "trtcheck")
    base = tmp_path / "base dir" / "results.json"
    if exists:
        base.parent.mkdir()
        base.write_text("{}")
    inputs = {"paths": "models/", "baseline": str(base), "fail-on": "regression"}
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", inputs, {"trtcheck": str(trtcheck)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    gate = ["--baseline", str(base)] if exists else []
    assert (tmp_path / "args").read_text().splitlines() == [
        "run", *gate, "--fail-on", "regression", "--", "models/"]
    assert ("::notice title=trtcheck::no baseline file" in proc.stdout) is not exists


def test_run_step_runs_ab_against_the_base_commit_instead_of_a_baseline(tmp_path: Path) -> None:
    trtcheck = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\n', "trtcheck")
    base = tmp_path / "results.json"
    base.write_text("{}")
    inputs = {"paths": "models/", "ab-base": "0" * 40, "fail-on": "regression output-change",
              "baseline": str(base), "reduce": "true"}
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", inputs, {"trtcheck": str(trtcheck)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().splitlines() == [
        "ab", "--base", "0" * 40, "--fail-on", "regression", "--fail-on", "output-change", "--",
        "models/"]
    assert "baseline and reduce are not used" in proc.stdout


@pytest.mark.parametrize(("reduce", "expected"), [("true", ["--reduce"]), ("false", [])])
def test_run_step_passes_reduce(tmp_path: Path, reduce: str, expected: list[str]) -> None:
    trtcheck = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\n', "trtcheck")
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", {"paths": "models/", "reduce": reduce},
                      {"trtcheck": str(trtcheck)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().splitlines() == [
        "run", *expected, "--", "models/"]


@pytest.mark.parametrize(("nan", "expected"), [("fail", ["--nan", "fail"]), ("", [])])
def test_run_step_passes_the_nan_policy_only_when_given(tmp_path: Path, nan: str,
                                                        expected: list[str]) -> None:
    trtcheck = _recorder(tmp_path, 'printf "%s\\n" "$@" > "$ARGS_FILE"\n', "trtcheck")
    env = {**runner_env(tmp_path, ARGS_FILE=str(tmp_path / "args")),
           **step_env("Run trtcheck", {"paths": "models/", "nan": nan}, {"trtcheck": str(trtcheck)})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().splitlines() == [
        "run", *expected, "--", "models/"]


def test_run_step_is_not_shadowed_by_a_trtcheck_folder_in_the_workspace(tmp_path: Path) -> None:
    """A repository with its own ``trtcheck/`` (configs, say) still runs the installed package."""
    (tmp_path / "trtcheck").mkdir()
    (tmp_path / "trtcheck" / "__init__.py").write_text("raise SystemExit(99)\n")
    (tmp_path / "trtcheck" / "__main__.py").write_text("raise SystemExit(99)\n")
    env = {**runner_env(tmp_path), **step_env("Run trtcheck", {"paths": "no-such-zoo/"},
                                              {"trtcheck": TRTCHECK})}
    proc = run_step("Run trtcheck", env, tmp_path)
    assert read_outputs(tmp_path / "output")["exit-code"] == "2", proc.stdout + proc.stderr
    assert "no-such-zoo" in proc.stdout + proc.stderr


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
                                                         {"trtcheck": TRTCHECK})}, REPO)
    assert proc.returncode == 0, proc.stderr
    outputs = read_outputs(tmp_path / "output")
    assert outputs == {
        "status": "fail", "exit-code": "1", "passed": "5", "failed": "1", "errors": "0",
        "verdict": "FAIL: 1 of 6 rows fail the run", "regressions": "0",
        "report-dir": str(out), "comment-file": str(out / "comment.md"),
        "results-json": str(out / "results.json"),
    }
    assert "::group::indices.py (2 cases)" in proc.stdout.splitlines()  # CI progress folds
    # the line of id_hash's declaration (its decorator) in the sample zoo
    lines = (REPO / "fixtures" / "indices.py").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if lines[i].startswith("def id_hash("))
    assert [x for x in proc.stdout.splitlines() if x.startswith("::error")] == [
        f"::error file=fixtures/indices.py,line={line},title=trtcheck%3A indices%3A%3Aid_hash[int64] "
        "emulate%3Aint64_as_int32::fail at compare: 2 of 2 outputs failed; worst: out[0]: 30 "
        "of 30 int64 values differ (max abs diff 1.04022e+12); eager has 30 values outside the "
        "int32 range (int64 truncated to int32?)"]
    comment = (out / "comment.md").read_text()
    assert comment.startswith("### trtcheck: ❌ FAIL: 1 of 6 rows fail the run")
    assert f"commit {'d' * 40} · [run](https://github.com/o/r/actions/runs/77)" in comment
    # report.md's header names the same commit: the pull request's head, not the merge commit
    assert (out / "report.md").read_text().splitlines()[2].endswith(f"· commit {'d' * 40}")

    summary = run_step("Job summary", {**env, **step_env("Job summary", {}, outputs)}, REPO)
    assert summary.returncode == 0, summary.stderr
    written = (tmp_path / "summary").read_text()
    assert written.startswith((out / "report.md").read_text())
    assert written.endswith("`report.html` in the artifact `trtcheck-report` of this run (download "
                            "it and open it in a browser).\n")

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
    (tmp_path / "report.html").write_text("<!DOCTYPE html>")
    (tmp_path / "report.md").write_text("# trtcheck report\n")
    env = {**runner_env(tmp_path), **step_env("Job summary", {"artifact": "my-report"}, outputs)}
    assert run_step("Job summary", env, tmp_path).returncode == 0
    summary = (tmp_path / "summary").read_text()
    assert summary.startswith("# trtcheck report\n")
    assert "`report.html` in the artifact `my-report` of this run" in summary
    (tmp_path / "summary").unlink()
    env = {**runner_env(tmp_path), **step_env("Job summary", {}, {"exit-code": "2"})}
    assert run_step("Job summary", env, tmp_path).returncode == 0
    assert "could not run (exit code 2)" in (tmp_path / "summary").read_text()


# --- the Marketplace -------------------------------------------------------------------------


# The Marketplace: GitHub's list of colors, and the icons used here (Feather icon names).
BRANDING_COLORS = {"white", "black", "yellow", "blue", "green", "orange", "red", "purple",
                   "gray-dark"}


def test_marketplace_metadata_of_the_listed_action() -> None:
    """The root action.yml is the one listed; comment/ is a sub-action, used by path."""
    assert not (REPO / "action.yaml").exists()
    assert ACTION["name"] == "trtcheck for Torch-TensorRT"
    assert 0 < len(ACTION["description"]) <= 125
    assert ACTION["branding"] == {"icon": "check-circle", "color": "green"}
    comment = yaml.safe_load((REPO / "comment" / "action.yml").read_text())
    assert comment["name"] != ACTION["name"] and comment["branding"]["color"] in BRANDING_COLORS
    decision = (REPO / "docs" / "action.md").read_text()
    assert "## The Marketplace" in decision and f"{REPOSITORY}/comment@" in decision
