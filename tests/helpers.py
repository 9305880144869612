"""What more than one test module uses: the repository's paths, the one way an end-to-end test runs
the CLI, and the simulated GitHub runner the Action's and the release's tests run steps under.
Fixtures live in ``conftest.py``; no test module imports another."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from trtcheck.config.files import tomllib

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
ZOOS = TESTS / "zoos"
FIXTURES = REPO / "fixtures"
DATA = TESTS / "data"


# --- the CLI as a user runs it ------------------------------------------------------------------

def trtcheck_command(*args: str | os.PathLike[str], script: bool = False) -> list[str]:
    """The command line that runs ``trtcheck ARGS``: ``python -m trtcheck`` with this
    interpreter, or with ``script`` this venv's ``trtcheck`` console script."""
    start = [str(Path(sys.executable).with_name("trtcheck"))] if script else [
        sys.executable, "-m", "trtcheck"]
    return [*start, *map(str, args)]


def trtcheck(*args: str | os.PathLike[str], cwd: Path | None = None,
             env: dict[str, str] | None = None, timeout: float = 600,
             script: bool = False) -> subprocess.CompletedProcess[str]:
    """``trtcheck ARGS`` in a process of its own, from ``cwd`` (the repository unless given), its
    output captured as text. ``timeout`` is far longer than the command should take, so that a
    hang fails the test instead of blocking the suite."""
    return subprocess.run(trtcheck_command(*args, script=script), capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=timeout, check=False)


def start_trtcheck(*args: str | os.PathLike[str], cwd: Path | None = None,
                   env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen:
    """``trtcheck ARGS`` started and left running, for a test that signals it."""
    return subprocess.Popen(trtcheck_command(*args), cwd=cwd or REPO, env=env, **popen)


@dataclass(frozen=True)
class Ran:
    """A CLI run that several tests assert on (the ``shared`` fixture in ``tests/conftest.py``):
    its command, exit code and output, kept in its folder, from which it ran."""

    folder: Path
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def out(self) -> Path:
        """The run's ``--out``: ``out/`` in its folder."""
        return self.folder / "out"

    def rows(self) -> list[dict[str, Any]]:
        """The rows of its ``results.json``."""
        return rows(self.out)

    @classmethod
    def into(cls, folder: Path, *args: str | os.PathLike[str], **kwargs: Any) -> Ran:
        """``trtcheck ARGS --out out`` from ``folder`` (``kwargs`` as :func:`trtcheck`'s), kept
        there for :meth:`read`."""
        argv = (*map(str, args), "--out", "out")
        proc = trtcheck(*argv, cwd=folder, **kwargs)
        ran = cls(folder, argv, proc.returncode, proc.stdout, proc.stderr)
        (folder / RAN).write_text(json.dumps({"args": ran.args, "returncode": ran.returncode,
                                              "stdout": ran.stdout, "stderr": ran.stderr}))
        return ran

    @classmethod
    def read(cls, folder: Path) -> Ran:
        """The run :meth:`into` kept in ``folder``."""
        kept = json.loads((folder / RAN).read_text())
        return cls(folder, tuple(kept["args"]), kept["returncode"], kept["stdout"], kept["stderr"])


RAN = "ran.json"


def in_process(capsys: pytest.CaptureFixture[str],
               *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    """``trtcheck ARGS`` in this process (``trtcheck.cli.main``), its output taken from
    ``capsys``: for a unit test of what the CLI prints and exits with."""
    from trtcheck.cli import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["trtcheck", *map(str, args)], code, out, err)


def rows(out: Path) -> list[dict[str, Any]]:
    """The rows of ``out/results.json``."""
    return json.loads((out / "results.json").read_text())["rows"]


def assert_headlines(out: Path, code: int, terminal: str) -> None:
    """Every headline of a job's reports in ``out`` says what its exit ``code`` says: the
    terminal's last verdict line, report.md, comment.md and report.html start with PASS (0) or
    FAIL (1), and junit.xml holds a failing testcase exactly when the job failed."""
    word = {0: "PASS", 1: "FAIL"}[code]
    said = [line for line in terminal.splitlines() if line.startswith(("PASS: ", "FAIL: "))]
    assert said and said[-1].startswith(f"{word}: "), terminal
    assert f"**Result: {word}**" in (out / "report.md").read_text(encoding="utf-8")
    comment = (out / "comment.md").read_text(encoding="utf-8").splitlines()[0]
    assert comment.startswith(f"### trtcheck: {'✅' if code == 0 else '❌'} {word}: "), comment
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f'<span class="verdict v-{word.lower()}">{word}</span>' in page
    junit = ET.parse(out / "junit.xml").getroot()
    failing = int(junit.get("failures") or 0) + int(junit.get("errors") or 0)
    assert (failing >= 1) == (code == 1), ET.tostring(junit, encoding="unicode")[:2000]


def reported(record: Any, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``trtcheck report`` of ``record`` (a :class:`~trtcheck.results.record.Record`) saved in
    ``out``, in this process: its exit code and what the terminal read, every report's
    headline checked against the code (:func:`assert_headlines`)."""
    from trtcheck.cli import main
    from trtcheck.results.record import save

    save(record, out / "results.json")
    capsys.readouterr()
    code = main(["report", str(out)])
    terminal = capsys.readouterr().out
    assert_headlines(out, code, terminal)
    return code, terminal


def tool(name: str) -> str:
    """The path of a command-line tool, from PATH or this venv; the test skips without it."""
    path = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.skip(f"{name} is not installed (it comes with the dev extra)")
    return path


# --- GitHub --------------------------------------------------------------------------------------

# The repository's GitHub name, declared once (.ci/repository.py).
REPOSITORY = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"][
    "Source"].removeprefix("https://github.com/")
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}
MANIFESTS = [REPO / "action.yml", REPO / "comment" / "action.yml"]
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+?)(?:@(\S+))?(?:\s+#\s*(\S+))?\s*$", re.M)


def read_outputs(path: Path) -> dict[str, str]:
    """Parse a ``$GITHUB_OUTPUT`` file: ``name=value`` and ``name<<DELIMITER`` blocks."""
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for body in lines:
                if body == delimiter:
                    break
                value.append(body)
            outputs[name] = "\n".join(value)
        else:
            name, value_ = line.split("=", 1)
            outputs[name] = value_
    return outputs


def readme_workflows() -> dict[str, str]:
    """The example workflows of the README and the docs: the YAML block after each
    ``readme-workflow`` marker."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    found = re.findall(r"<!-- readme-workflow: ([\w-]+) -->\n```yaml\n(.*?)```", text, re.S)
    return dict(found)


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
    """An Action step's script, run as the runner runs composite steps: bash -e -o pipefail."""
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


def tagged_checkout(tmp_path: Path, tag: str = "v9.8.7") -> Path:
    """This working tree committed into a new repository and tagged ``tag``."""
    repo = tmp_path / "origin"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if (REPO / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, repo / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "release"], ["tag", tag]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return repo
