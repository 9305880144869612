"""GitHub Actions: step outputs written to ``$GITHUB_OUTPUT``, and the link to the run and commit
a report is about, read from the runner's variables and its event file.

Active only when ``GITHUB_ACTIONS=true``; everything here reads the environment the runner
sets, so the action always learns where trtcheck put its reports. The runner's files and tokens
(:data:`trtcheck.process.WORKFLOW_VARIABLES`) are taken out of this process's environment for
as long as a command runs (:func:`withheld`), before any zoo code is imported: with
``--no-isolate`` that code runs in this process. Only this module still sees them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from trtcheck.errors import Exit
from trtcheck.process import WORKFLOW_VARIABLES
from trtcheck.render.escape import plain
from trtcheck.render.link import RunLink
from trtcheck.status import ERRORS, Status

if TYPE_CHECKING:  # the record imports torch; an argument error's outputs must not wait for it
    from trtcheck.results.record import Record
    from trtcheck.results.verdict import Judged

_SHA = re.compile(r"[0-9a-f]{7,64}")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_URL = re.compile(r"https://[A-Za-z0-9.-]+(:[0-9]+)?")

_withheld: dict[str, str] = {}


@contextlib.contextmanager
def withheld() -> Iterator[None]:
    """The runner's files and tokens out of ``os.environ`` while the block runs, kept here for
    :func:`write_outputs`; put back after it (for a caller in the same process)."""
    taken = {name: os.environ.pop(name) for name in sorted(WORKFLOW_VARIABLES)
             if name in os.environ}
    _withheld.update(taken)
    try:
        yield
    finally:
        for name in taken:
            _withheld.pop(name, None)
        os.environ.update(taken)


def active(env: Mapping[str, str] = os.environ) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


def run_link(env: Mapping[str, str], commit: str | None) -> RunLink:
    """The head commit and run URL from the runner's variables, each checked before use;
    the record's git commit when not under GitHub Actions."""
    candidates = (_head_sha(env), env.get("GITHUB_SHA"), commit)
    sha = next((c.lower() for c in candidates if c and _SHA.fullmatch(c.lower())), None)
    server, repo, run_id = (env.get(k, "") for k in
                            ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    ok = _URL.fullmatch(server) and _REPO.fullmatch(repo) and run_id.isdigit()
    return RunLink(sha=sha,
                   url=f"{server}/{repo}/actions/runs/{run_id}" if ok else None)


def link_for(record: Record) -> RunLink:
    """The link the reports of ``record`` show, from this process's environment."""
    return run_link(os.environ, record.environment.get("git_commit"))


def _event(env: Mapping[str, str]) -> dict[str, object]:
    try:
        event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    except (KeyError, OSError, ValueError):
        return {}
    return event if isinstance(event, dict) else {}


def _head_sha(env: Mapping[str, str]) -> str | None:
    """A pull request's head commit: ``GITHUB_SHA`` is the merge commit GitHub made for it."""
    pr = _event(env).get("pull_request")
    head = pr.get("head") if isinstance(pr, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) else None


def write_outputs(code: int, out_dir: Path | None, judged: Judged | None, *,
                  env: Mapping[str, str] | None = None) -> None:
    """Append the step outputs of the judged record to ``$GITHUB_OUTPUT`` (``env``: this
    process's environment and what :func:`withheld` keeps).

    ``out_dir`` is None when trtcheck stopped before it had one (a usage error)."""
    env = {**os.environ, **_withheld} if env is None else env
    if not active(env) or not env.get("GITHUB_OUTPUT"):
        return
    record, verdict = (judged.record, judged.verdict) if judged else (None, None)
    rows = record.rows if record else []
    errors = sum(r.status in ERRORS for r in rows)
    failing = len(record.failing_rows()) if record else 0
    outputs = {
        "status": Exit(code).status if code in set(Exit) else "error",
        "exit-code": str(int(code)),
        # the headline every report starts with; empty when trtcheck stopped before a record,
        # or exits otherwise than the record's verdict says (reduce with nothing to reduce)
        "verdict": plain(verdict.headline) if verdict and verdict.exit_code == code else "",
        "regressions": str(verdict.regressions) if verdict else "0",
        "passed": str(sum(r.status is Status.PASS for r in rows)),
        "failed": str(failing - errors),  # the failing rows that are not errors
        "errors": str(errors),
        "report-dir": "",
        "comment-file": "",
        "results-json": "",
    }
    if out_dir is not None:
        out = out_dir.resolve()
        outputs["report-dir"] = str(out)
        if (out / "comment.md").is_file():
            outputs["comment-file"] = str(out / "comment.md")
        if (out / "results.json").is_file():
            outputs["results-json"] = str(out / "results.json")
    with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as fh:
        for name, value in outputs.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"  # values may hold anything but this
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")

