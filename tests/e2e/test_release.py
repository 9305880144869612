"""release.yml's shell steps, run for real by bash with a fake ``gh`` on PATH (tests/fake_gh.py)
that answers from a state of the repository and records its calls: the default-branch check,
the CI wait, the plan (whether the major tag moves and may be moved), the release and the tag
move, for a new major, a backport, a pre-1.0, a re-run after a partial release."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO, REPOSITORY, USES, read_outputs, readme_workflows, tool
from trtcheck.config.files import tomllib

RELEASE = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
JOBS = RELEASE["jobs"]
SHA = "c" * 40
OLD = "a" * 40
PLAN = "Plan the release and check that the major tag can be moved"

# The workflow's steps run with the fake gh, which needs jq.
NEEDS_JQ = pytest.mark.skipif(shutil.which("jq") is None, reason="the fake gh needs jq")


def _run(sha: str, conclusion: str, run_id: int, attempt: int = 1,
         status: str = "completed") -> dict[str, Any]:
    return {"databaseId": run_id, "attempt": attempt, "status": status, "conclusion": conclusion,
            "url": f"https://github.com/o/r/actions/runs/{run_id}", "headSha": sha}


class Repo:
    """The fake GitHub repository a step runs against, and what the steps did to it."""

    def __init__(self, tmp_path: Path, *, tag: str, tag_token: str = "", **state: Any) -> None:
        self.tmp = tmp_path
        self.tag = tag
        self.tag_token = tag_token  # RELEASE_TAG_TOKEN's value, "" when it is not set
        self.state_file = tmp_path / "gh-state.json"
        self.calls_file = tmp_path / "gh-calls.jsonl"
        self.state_file.write_text(json.dumps({"repo": "o/r", **state}))
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        gh = bin_dir / "gh"
        gh.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "tests" / "fake_gh.py"}" "$@"\n')
        gh.chmod(0o755)
        self.path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
        self.outputs: dict[str, dict[str, str]] = {}

    @property
    def state(self) -> dict[str, Any]:
        return json.loads(self.state_file.read_text())

    def calls(self) -> list[list[str]]:
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]

    def _expressions(self) -> dict[str, str]:
        """The values of the expressions release.yml's steps use."""
        preflight = self.outputs.get("preflight", {})
        return {
            "github.token": "workflow-token", "github.ref_name": self.tag, "github.sha": SHA,
            "github.event.repository.default_branch": "main",
            "secrets.RELEASE_TAG_TOKEN": self.tag_token,
            "secrets.RELEASE_TAG_TOKEN || github.token": self.tag_token or "workflow-token",
            **{f"needs.preflight.outputs.{k}": v for k, v in preflight.items()},
        }

    def step(self, job: str, name: str) -> subprocess.CompletedProcess[str]:
        """One step's script, run as the runner runs it (bash -e -o pipefail), with its env."""
        (step,) = [s for s in JOBS[job]["steps"] if s.get("name") == name]
        values = self._expressions()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
        for key, value in step.get("env", {}).items():
            expr = re.fullmatch(r"\$\{\{ (.*) \}\}", str(value))
            env[key] = values[expr.group(1)] if expr else str(value)
        output = self.tmp / f"output-{job}"
        env.update(PATH=self.path, FAKE_GH_STATE=str(self.state_file),
                   FAKE_GH_CALLS=str(self.calls_file), GITHUB_REPOSITORY="o/r",
                   GITHUB_OUTPUT=str(output), POLL_SECONDS="0")
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              env=env, cwd=self.tmp, capture_output=True, text=True, check=False)
        if output.exists():
            self.outputs[job] = read_outputs(output)
        return proc

    def job(self, job: str) -> list[subprocess.CompletedProcess[str]]:
        """The job's run steps in order, until one fails; a step's ``if:`` on the preflight's
        outputs is honoured."""
        done = []
        for step in JOBS[job]["steps"]:
            if "run" not in step:
                continue
            condition = re.fullmatch(r"\$\{\{ (\S+) == '(\w+)' \}\}", step.get("if", ""))
            if condition and self._expressions()[condition.group(1)] != condition.group(2):
                continue
            done.append(self.step(job, step["name"]))
            if done[-1].returncode != 0:
                break
        return done


def _errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith("::error")]


# --- the order of the jobs -------------------------------------------------------------------

@NEEDS_JQ
def test_nothing_is_announced_before_it_is_published() -> None:
    needs = {name: job.get("needs") for name, job in JOBS.items()}
    assert needs == {"preflight": None, "build": "preflight", "publish": "build",
                     "release": ["preflight", "publish"]}
    steps = [s.get("name") for s in JOBS["release"]["steps"]]
    assert steps[1:] == ["Create the release", "Move the major tag"]
    assert "gh release create" in JOBS["release"]["steps"][1]["run"]
    # every gh release and tag change is in the release job, which needs the publish job;
    # preflight's one write is the tag token's trial, to a commit that cannot exist
    for name, job in JOBS.items():
        text = str(job)
        if name != "release":
            assert "gh release create" not in text, name
            assert text.count("git/refs") == (name == "preflight"), name
    assert f"sha={'0' * 40}" in str(JOBS["preflight"])
    publish = JOBS["publish"]["steps"][-1]
    assert publish["with"]["skip-existing"] is True


# --- preflight: the default branch -----------------------------------------------------------

@NEEDS_JQ
@pytest.mark.parametrize(("status", "ok"), [("behind", True), ("identical", True),
                                            ("ahead", False), ("diverged", False), (None, False)])
def test_a_tag_off_the_default_branch_fails_at_once(tmp_path: Path, status: str | None,
                                                    ok: bool) -> None:
    compare = {f"main...{SHA}": {"status": status, "files": []}} if status else {}
    repo = Repo(tmp_path, tag="v1.2.3", compare=compare)
    proc = repo.step("preflight", "The tagged commit is on the default branch")
    assert (proc.returncode == 0) is ok, proc.stdout + proc.stderr
    if not ok:
        (error,) = _errors(proc)
        assert f"v1.2.3 is on {SHA}, which is not a commit of main" in error
    assert len(repo.calls()) == 1  # one look, no waiting
    assert JOBS["preflight"]["steps"][0]["name"] == "The tagged commit is on the default branch"


# --- preflight: the CI run -------------------------------------------------------------------

WAIT = "Wait for the ci workflow's run on this commit"


@NEEDS_JQ
@pytest.mark.parametrize(("runs", "ok", "calls"), [
    # a failed run, then a newer successful one: the newer one decides
    ([[_run(SHA, "failure", 10), _run(SHA, "success", 11)]], True, 1),
    # a successful run, then a newer failed one: fails at once
    ([[_run(SHA, "success", 10), _run(SHA, "failure", 11)]], False, 1),
    # the latest attempt of the one run (gh lists a run as of its latest attempt)
    ([[_run(SHA, "success", 10, attempt=2)]], True, 1),
    # still running, then done
    ([[_run(SHA, "", 10, status="in_progress")], [_run(SHA, "success", 10)]], True, 2),
    # no run yet, then a cancelled one
    ([[], [_run(SHA, "cancelled", 12)]], False, 2),
])
def test_the_ci_wait_reads_the_one_run_of_the_commit(tmp_path: Path, runs: list[Any], ok: bool,
                                                     calls: int) -> None:
    repo = Repo(tmp_path, tag="v1.2.3", runs=runs)
    proc = repo.step("preflight", WAIT)
    assert (proc.returncode == 0) is ok, proc.stdout + proc.stderr
    assert len(repo.calls()) == calls
    (call, *_) = repo.calls()
    assert call[:2] == ["run", "list"] and call[call.index("--commit") + 1] == SHA
    assert call[call.index("--workflow") + 1] == "ci.yml"
    assert call[call.index("--event") + 1] == "push" and call[call.index("--branch") + 1] == "main"
    if not ok:
        (error,) = _errors(proc)
        assert re.search(r"ci concluded (failure|cancelled) on c+ \(attempt 1 of https://", error)


# --- preflight: the plan and the major tag's permission --------------------------------------

def _released(*tags: str, draft: str = "") -> list[dict[str, Any]]:
    return [{"tagName": t, "isDraft": t == draft, "isPrerelease": False} for t in tags]


@NEEDS_JQ
@pytest.mark.parametrize(("tag", "released", "plan"), [
    ("v1.3.0", ["v1.2.3", "v1.2.4"], {"major": "v1", "move": "true", "latest": "true"}),
    # a backport below the highest 1.x release: v1 stays, and it is not "latest" either
    ("v1.2.5", ["v1.2.4", "v1.3.0"], {"major": "v1", "move": "false", "latest": "false"}),
    # a new major
    ("v2.0.0", ["v1.9.9"], {"major": "v2", "move": "true", "latest": "true"}),
    # a fix of the old major after the new one: v1 moves, latest stays with 2.x
    ("v1.9.10", ["v1.9.9", "v2.0.0"], {"major": "v1", "move": "true", "latest": "false"}),
    # pre-1.0: no v0
    ("v0.9.0", [], {"major": "v0", "move": "false", "latest": "true"}),
    ("v0.9.1", ["v1.0.0"], {"major": "v0", "move": "false", "latest": "false"}),
    # a draft is not released
    ("v1.3.0", ["v1.2.3", "v1.4.0"], {"major": "v1", "move": "true", "latest": "true"}),
])
def test_the_major_tag_moves_only_forward(tmp_path: Path, tag: str, released: list[str],
                                          plan: dict[str, str]) -> None:
    compare = {f"{SHA}...main": {"status": "ahead", "files": []},
               f"{OLD}...{SHA}": {"status": "ahead", "files": []}}
    repo = Repo(tmp_path, tag=tag, compare=compare,
                releases=_released(*released, draft="v1.4.0"))
    proc = repo.step("preflight", PLAN)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert repo.outputs["preflight"] == {k: plan[k] for k in ("major", "move")}
    if plan["move"] == "false" and plan["major"] == "v1":
        assert "::notice title=release::v1 stays on v1.3.0, above v1.2.5" in proc.stdout
    # the whole release job on that plan: the tag is created, moved or left alone
    repo.state_file.write_text(json.dumps({**repo.state, "refs": {"v1": OLD}}))
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "torch_trtcheck-x.tar.gz").write_text("x")
    (tmp_path / "release-notes.md").write_text("- notes\n")
    assert [p.returncode for p in repo.job("release")] == [0] * (2 if plan["move"] == "true" else 1)
    refs = repo.state["refs"]
    assert refs.get(plan["major"]) == (SHA if plan["move"] == "true" else
                                       {"v1": OLD}.get(plan["major"]))
    assert "v0" not in refs
    (made,) = [r for r in repo.state["releases"] if r["tagName"] == tag]
    assert made["latest"] == plan["latest"] and made["notes"] == "- notes\n"


@NEEDS_JQ
def test_moving_across_a_workflow_change_needs_the_tag_token_before_publishing(
        tmp_path: Path) -> None:
    workflows = {"status": "ahead", "files": [{"filename": ".github/workflows/ci.yml"}]}
    state = {"releases": _released("v1.2.3"), "refs": {"v1": OLD},
             "compare": {f"{SHA}...main": {"status": "ahead", "files": []},
                         f"{OLD}...{SHA}": workflows}}
    (tmp_path / "a").mkdir()
    repo = Repo(tmp_path / "a", tag="v1.3.0", **state)
    proc = repo.step("preflight", PLAN)
    assert proc.returncode == 1
    (error,) = _errors(proc)
    assert f"moving v1 to {SHA} crosses a change of .github/workflows ({OLD}...{SHA})" in error
    assert "Nothing was published" in error and "RELEASE_TAG_TOKEN" in error
    assert "Workflows read and write" in error and "docs/development.md" in error
    # with the token the plan passes, and the move uses it
    (tmp_path / "b").mkdir()
    repo = Repo(tmp_path / "b", tag="v1.3.0", tag_token="tag-token", refuse_moving={
        "v1": "refusing to allow a GitHub App to create or update workflow"}, **state)
    assert repo.step("preflight", PLAN).returncode == 0
    moved = repo.step("release", "Move the major tag")
    assert moved.returncode == 0, moved.stderr
    assert repo.state["refs"]["v1"] == SHA
    # without it the same move is what GitHub refuses: the check above is what stops it first
    repo.tag_token = ""
    repo.state_file.write_text(json.dumps({**repo.state, "refs": {"v1": OLD}}))
    assert repo.step("release", "Move the major tag").returncode == 1


@NEEDS_JQ
def test_a_change_on_the_branch_after_the_commit_counts_too(tmp_path: Path) -> None:
    """A new major tag: nothing to compare with but the branch's tip."""
    changed = {"status": "ahead", "files": [{"filename": "README.md"},
                                             {"filename": ".github/workflows/release.yml"}]}
    repo = Repo(tmp_path, tag="v2.0.0", releases=_released("v1.0.0"),
                compare={f"{SHA}...main": changed})
    proc = repo.step("preflight", PLAN)
    assert proc.returncode == 1 and f"({SHA}...main)" in _errors(proc)[0]


# --- the release job, re-run after a partial release -----------------------------------------

@NEEDS_JQ
def test_rerunning_the_release_job_after_a_partial_release(tmp_path: Path) -> None:
    """The first run created the release and uploaded one file, then stopped before the tag."""
    (tmp_path / "dist").mkdir()
    for name in ("torch_trtcheck-1.3.0.tar.gz", "torch_trtcheck-1.3.0-py3-none-any.whl"):
        (tmp_path / "dist" / name).write_text("x")
    (tmp_path / "release-notes.md").write_text("- one\n")
    partial = {"tagName": "v1.3.0", "isDraft": False, "isPrerelease": False,
               "assets": ["torch_trtcheck-1.3.0.tar.gz"]}
    repo = Repo(tmp_path, tag="v1.3.0", releases=[*_released("v1.2.0"), partial],
                refs={"v1": OLD}, compare={f"{SHA}...main": {"status": "identical", "files": []},
                                           f"{OLD}...{SHA}": {"status": "ahead", "files": []}})
    assert repo.step("preflight", PLAN).returncode == 0
    assert repo.outputs["preflight"]["move"] == "true"
    for _ in range(2):  # the re-run, and one more
        assert [p.returncode for p in repo.job("release")] == [0, 0]
    releases = [r for r in repo.state["releases"] if r["tagName"] == "v1.3.0"]
    assert len(releases) == 1 and releases[0]["assets"] == [
        "torch_trtcheck-1.3.0-py3-none-any.whl", "torch_trtcheck-1.3.0.tar.gz"]
    assert repo.state["refs"]["v1"] == SHA
    verbs = [c[:2] for c in repo.calls()]
    assert ["release", "create"] not in verbs and verbs.count(["release", "upload"]) == 2
    patches = [c for c in repo.calls() if "PATCH" in c]
    assert len(patches) == 1  # the second run found v1 already there
    # and the whole workflow re-run: the plan still moves v1, which is already there
    assert repo.step("preflight", PLAN).returncode == 0
    assert repo.outputs["preflight"] == {"major": "v1", "move": "true"}


@NEEDS_JQ
def test_the_first_release_creates_the_major_tag(tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    (tmp_path / "release-notes.md").write_text("- first\n")
    repo = Repo(tmp_path, tag="v1.0.0", runs=[[_run(SHA, "success", 3)]],
                compare={f"main...{SHA}": {"status": "identical", "files": []},
                         f"{SHA}...main": {"status": "identical", "files": []}})
    assert [p.returncode for p in repo.job("preflight")] == [0, 0, 0]
    assert [p.returncode for p in repo.job("release")] == [0, 0]
    assert repo.state["refs"] == {"v1": SHA}
    (post,) = [c for c in repo.calls() if "POST" in c]
    assert "ref=refs/tags/v1" in post and f"sha={SHA}" in post


@NEEDS_JQ
def test_a_rerun_of_an_older_releases_jobs_leaves_the_major_tag_and_latest_alone(
        tmp_path: Path) -> None:
    """v1.2.0's release job failed; v1.3.0 was released and moved v1; then v1.2.0's failed jobs
    are re-run, with the plan its preflight made before v1.3.0 existed."""
    newer = "b" * 40
    repo = Repo(tmp_path, tag="v1.2.0", releases=_released("v1.1.0"), refs={"v1": OLD},
                compare={f"{SHA}...main": {"status": "ahead", "files": []},
                         f"{OLD}...{SHA}": {"status": "ahead", "files": []},
                         f"{newer}...{SHA}": {"status": "behind", "files": []}})
    assert repo.step("preflight", PLAN).returncode == 0
    assert repo.outputs["preflight"] == {"major": "v1", "move": "true"}
    # meanwhile: v1.3.0 released, marked latest, and v1 moved onto its commit
    state = repo.state
    state["releases"].append({"tagName": "v1.3.0", "isDraft": False, "isPrerelease": False,
                              "latest": "true"})
    state["refs"]["v1"] = newer
    repo.state_file.write_text(json.dumps(state))
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "torch_trtcheck-1.2.0.tar.gz").write_text("x")
    (tmp_path / "release-notes.md").write_text("- 1.2.0\n")
    created, moved = repo.job("release")
    assert created.returncode == 0, created.stdout + created.stderr
    assert moved.returncode == 1
    (error,) = _errors(moved)
    assert error == (f"::error title=release::v1 stays on {newer}: v1.2.0's commit {SHA} is not "
                     "after it (behind), and v1 only moves forward")
    assert repo.state["refs"] == {"v1": newer}
    assert not [c for c in repo.calls() if "PATCH" in c or "POST" in c]
    (made,) = [r for r in repo.state["releases"] if r["tagName"] == "v1.2.0"]
    assert made["latest"] == "false"  # v1.3.0 stays the latest


@NEEDS_JQ
@pytest.mark.parametrize(("token", "missing"), [
    ("tag-token", None),
    ("read-only-token", "the permission Contents: read and write on o/r"),
    ("expired-token", "a valid token: it is expired, revoked or mistyped"),
])
def test_the_tag_token_is_tried_before_anything_is_published(
        tmp_path: Path, token: str, missing: str | None) -> None:
    tokens = {"tag-token": ["contents", "workflows"], "read-only-token": [],
              "workflow-token": ["contents"]}
    repo = Repo(tmp_path, tag="v1.3.0", tag_token=token, tokens=tokens, refs={"v1": OLD},
                releases=_released("v1.2.0"),
                compare={f"{SHA}...main": {"status": "ahead", "files": []}})
    proc = repo.step("preflight", PLAN)
    (probe,) = [c for c in repo.calls() if "POST" in c]
    assert probe[:2] == ["api", "--method"] and "ref=refs/tags/v1" in probe
    assert f"sha={'0' * 40}" in probe  # a commit that cannot exist: nothing is ever made
    assert repo.state["refs"] == {"v1": OLD}
    if missing is None:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "RELEASE_TAG_TOKEN may write tags in o/r" in proc.stdout
    else:
        assert proc.returncode == 1
        (error,) = _errors(proc)
        assert error.startswith(f"::error title=release::RELEASE_TAG_TOKEN cannot move v1: it "
                                f"lacks {missing}. Nothing was published.")
        assert "environment release-tag" in error
    # without the secret there is nothing to try
    (tmp_path / "none").mkdir()
    bare = Repo(tmp_path / "none", tag="v1.3.0", tokens=tokens, refs={"v1": OLD},
                releases=_released("v1.2.0"),
                compare={f"{SHA}...main": {"status": "ahead", "files": []},
                         f"{OLD}...{SHA}": {"status": "ahead", "files": []}})
    assert bare.step("preflight", PLAN).returncode == 0
    assert not [c for c in bare.calls() if "POST" in c]


@NEEDS_JQ
def test_latest_goes_only_to_the_newest_release(tmp_path: Path) -> None:
    """Each release in turn, decided when it is created: a backport or a fix of an older major
    leaves the latest where it is."""
    (tmp_path / "dist").mkdir()
    (tmp_path / "release-notes.md").write_text("- x\n")
    repo = Repo(tmp_path, tag="v1.3.0", releases=_released("v1.3.0"))
    for tag, latest in (("v1.4.0", "true"), ("v1.3.1", "false"), ("v2.0.0", "true"),
                        ("v1.5.0", "false"), ("v2.0.1", "true")):
        repo.tag = tag
        assert repo.step("release", "Create the release").returncode == 0
        (made,) = [r for r in repo.state["releases"] if r["tagName"] == tag]
        assert made["latest"] == latest, tag


def test_release_runs_on_version_tags_after_ci_and_publishes_by_trusted_publishing() -> None:
    """The job order and what each runs are run for real by the tests above."""
    assert RELEASE[True] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    jobs = RELEASE["jobs"]
    assert [jobs[j].get("needs") for j in ("preflight", "build", "publish", "release")] == [
        None, "preflight", "build", ["preflight", "publish"]]
    assert jobs["preflight"]["permissions"] == {"actions": "read", "contents": "read"}
    assert jobs["release"]["permissions"] == {"contents": "write"}
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["environment"]["name"] == "pypi"
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    # the one secret: a token that may move the major tag across a change of the workflows
    text = (REPO / ".github" / "workflows" / "release.yml").read_text()
    assert set(re.findall(r"secrets\.(\w+)", text)) == {"RELEASE_TAG_TOKEN"}
    (move,) = [s for s in jobs["release"]["steps"] if s.get("name") == "Move the major tag"]
    assert move["env"]["GH_TOKEN"] == "${{ secrets.RELEASE_TAG_TOKEN || github.token }}"
    # kept in an environment limited to release tags, named by the jobs that read it
    for name, job in jobs.items():
        assert ("RELEASE_TAG_TOKEN" in str(job)) is (job.get("environment") == "release-tag"), name


def test_no_secret_outside_an_environment() -> None:
    """zizmor's auditor persona, which reports what the default one leaves out."""
    proc = subprocess.run([tool("zizmor"), "--offline", "--persona=auditor", "--no-progress",
                           "--format=plain", "action.yml", "comment/action.yml", ".github/"],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert "completed .github/workflows/release.yml" in proc.stderr + proc.stdout
    assert "secrets-outside-env" not in proc.stdout, proc.stdout


def test_the_release_build_pins_its_tools_within_the_build_requires() -> None:
    from packaging.requirements import Requirement

    (step,) = [s for s in RELEASE["jobs"]["build"]["steps"]
               if s.get("name") == "Build the sdist and the wheel"]
    pins = dict(re.findall(r"\b([A-Za-z][\w.-]*)==([\w.]+)", step["run"]))
    assert {"build", "setuptools", "setuptools-scm"} <= set(pins)
    assert "python -m build --no-isolation" in step["run"]
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    for requirement in map(Requirement, requires):
        assert requirement.specifier.contains(pins[requirement.name]), requirement


def _notes_step() -> str:
    (step,) = [s for s in RELEASE["jobs"]["build"]["steps"]
               if s.get("name") == "The changelog's section for this version"]
    return step["run"]


def test_release_notes_are_the_changelogs_section(tmp_path: Path) -> None:
    (tmp_path / "CHANGELOG.md").write_text(
        "# Changelog\n\n## [Unreleased]\n\n- next\n\n## [1.2.0] - 2026-12-01\n\n### Fixed\n\n"
        "- one\n\n\n- two\n\n## [1.1.0] - 2026-11-01\n\n- older\n\n"
        "[unreleased]: https://x/compare/v1.2.0...HEAD\n[1.2.0]: https://x/compare\n"
        "[1.1.0]: https://x/releases/tag/v1.1.0\n")
    env = {**os.environ, "TAG": "v1.2.0"}
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", _notes_step()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "release-notes.md").read_text() == "### Fixed\n\n- one\n\n\n- two\n"
    # the oldest section ends where the link footers start
    oldest = subprocess.run(["bash", "-eo", "pipefail", "-c", _notes_step()], cwd=tmp_path,
                            env={**env, "TAG": "v1.1.0"}, capture_output=True, text=True,
                            check=False)
    assert oldest.returncode == 0, oldest.stdout + oldest.stderr
    assert (tmp_path / "release-notes.md").read_text() == "- older\n"
    missing = subprocess.run(["bash", "-eo", "pipefail", "-c", _notes_step()], cwd=tmp_path,
                             env={**env, "TAG": "v9.9.9"}, capture_output=True, text=True,
                             check=False)
    assert missing.returncode == 1 and "no section for 9.9.9" in missing.stdout


def test_changelog_keeps_a_changelog() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n") and "keepachangelog.com" in text
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert headings[0] == "[Unreleased]"
    for heading in headings[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", heading), heading
    kinds = set(re.findall(r"^### (.*)$", text, re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    # the newest release is the one the docs' examples pin (before the first, the one the
    # changelog announces), and each has its link; nothing is listed twice
    first = re.search(r"^Nothing is released yet: the first release, (\d+\.\d+\.\d+), is",
                      text, re.M)
    assert (first is None) is (len(headings) > 1)
    newest = first.group(1) if first else headings[1].split("]")[0].lstrip("[")
    tags = {tag for example in readme_workflows().values()
            for name, _, tag in USES.findall(example) if name.startswith(REPOSITORY)}
    assert tags == {f"v{newest}"}
    assert re.search(r"^\[Unreleased\]: https://\S+$", text, re.M)
    entries = re.findall(r"^- (.{30})", text, re.M)
    assert len(entries) == len(set(entries)), "an entry is listed twice"
    for heading in headings[1:]:
        version = heading.split("]")[0].lstrip("[")
        assert re.search(rf"^\[{re.escape(version)}\]: https://\S+/v{re.escape(version)}$", text,
                         re.M), version


def test_the_first_release_notes_are_its_section_exactly(tmp_path: Path) -> None:
    """The first release as docs/development.md cuts it: [Unreleased]'s entries moved under
    the version's dated heading; the notes are that section, from its first kind of change."""
    text = (REPO / "CHANGELOG.md").read_text()
    unreleased = text.split("## [Unreleased]\n\n", 1)[1].split("\n\n[Unreleased]: ")[0]
    entries = unreleased[unreleased.index("### Added"):]
    cut = (text.split("## [Unreleased]")[0] + "## [Unreleased]\n\n## [1.0.0] - 2026-12-31\n\n"
           + entries + "\n\n[1.0.0]: https://github.com/o/r/releases/tag/v1.0.0\n")
    (tmp_path / "CHANGELOG.md").write_text(cut)
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", _notes_step()], cwd=tmp_path,
                          env={**os.environ, "TAG": "v1.0.0"}, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    notes = (tmp_path / "release-notes.md").read_text()
    assert notes.startswith("### Added\n") and notes == entries.strip("\n") + "\n"
