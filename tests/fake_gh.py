"""A stand-in for the ``gh`` command, for running release.yml's shell steps: it answers the calls
those steps make from a JSON state file (``FAKE_GH_STATE``), changes that state as GitHub would
(a release created, a tag moved), and appends every call to ``FAKE_GH_CALLS`` (one JSON list of
arguments a line). ``--jq`` is applied by the real ``jq``, as gh applies its own.

The state: ``compare`` ({"BASE...HEAD": {"status": …, "files": […]}}), ``runs`` (the answers of
successive ``gh run list`` calls, the last one repeated), ``releases`` ([{"tagName", "isDraft",
"isPrerelease", "latest", …}], in the order they were created), ``refs`` ({"v1": sha}) and,
optionally, ``tokens`` ({GH_TOKEN: [permissions]}): then a write to refs needs a token listed
(else 401) with ``contents`` among its permissions (else 403), as GitHub checks before it reads
the request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


class Refused(Exception):
    """What gh prints and exits 1 with when the API refuses."""


def _options(args: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Positional arguments, and each option's values (``--name=value`` or ``--name value``)."""
    flags = {"--clobber", "--verify-tag"}
    positional: list[str] = []
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg not in flags:
            name, _, value = arg.partition("=")
            if not _:
                i += 1
                value = args[i]
            options.setdefault(name, []).append(value)
        elif arg in flags:
            options.setdefault(arg, []).append("")
        else:
            positional.append(arg)
        i += 1
    return positional, options


def _fields(options: dict[str, list[str]]) -> dict[str, str]:
    return dict(v.split("=", 1) for v in options.get("-f", []) + options.get("-F", []))


def api(state: dict[str, Any], path: str, options: dict[str, list[str]]) -> Any:
    method = options.get("--method", ["GET"])[0]
    repo = f"repos/{state['repo']}/"
    if not path.startswith(repo):
        raise Refused(f"gh: Not Found (HTTP 404) {path}")
    path = path.removeprefix(repo)
    refs: dict[str, str] = state.setdefault("refs", {})
    if method != "GET" and path.startswith("git/refs") and "tokens" in state:
        rights = state["tokens"].get(os.environ.get("GH_TOKEN", ""))
        if rights is None:
            raise Refused("gh: Bad credentials (HTTP 401)")
        if "contents" not in rights:
            raise Refused("gh: Resource not accessible by personal access token (HTTP 403)")
    if method == "GET" and path == "releases/latest":
        shown = latest_release(state.get("releases", []))
        if shown is None:
            raise Refused("gh: Not Found (HTTP 404)")
        return {"tag_name": shown["tagName"]}
    if method == "GET" and path.startswith("compare/"):
        if path.removeprefix("compare/") not in state.get("compare", {}):
            raise Refused("gh: Not Found (HTTP 404)")
        return state["compare"][path.removeprefix("compare/")]
    if method == "GET" and path.startswith("git/ref/tags/"):
        tag = path.removeprefix("git/ref/tags/")
        if tag not in refs:
            raise Refused("gh: Not Found (HTTP 404)")
        return {"ref": f"refs/tags/{tag}", "object": {"sha": refs[tag], "type": "commit"}}
    if method == "PATCH" and path.startswith("git/refs/tags/"):
        tag = path.removeprefix("git/refs/tags/")
        if tag not in refs:
            raise Refused("gh: Reference does not exist (HTTP 422)")
        if tag in state.get("refuse_moving", {}) and os.environ.get("GH_TOKEN") == "workflow-token":
            raise Refused(state["refuse_moving"][tag])
        refs[tag] = _fields(options)["sha"]
        return {"ref": f"refs/tags/{tag}"}
    if method == "POST" and path == "git/refs":
        fields = _fields(options)
        tag = fields["ref"].removeprefix("refs/tags/")
        if tag in refs:
            raise Refused("gh: Reference already exists (HTTP 422)")
        if set(fields["sha"]) == {"0"}:
            raise Refused("gh: Object does not exist (HTTP 422)")
        refs[tag] = fields["sha"]
        return {"ref": fields["ref"]}
    raise Refused(f"fake gh: no answer for {method} {path}")


def latest_release(releases: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The release GitHub shows as latest: the last one created marked so, else the last one
    created that is neither a draft nor a pre-release."""
    published = [r for r in releases if not (r.get("isDraft") or r.get("isPrerelease"))]
    marked = [r for r in published if r.get("latest") == "true"]
    unmarked = [r for r in published if r.get("latest") != "false"]
    return (marked or unmarked or [None])[-1]


def release(state: dict[str, Any], verb: str, positional: list[str],
            options: dict[str, list[str]]) -> Any:
    releases: list[dict[str, Any]] = state.setdefault("releases", [])
    if verb == "list":
        return releases
    tag = positional[0]
    found = next((r for r in releases if r["tagName"] == tag), None)
    if verb == "view":
        if found is None:
            raise Refused("release not found")
        return found
    if verb == "create":
        if found is not None:
            raise Refused("a release with the same tag name already exists: " + tag)
        if tag not in state.get("tags", [tag]):
            raise Refused(f"tag {tag} doesn't exist in the repo")
        notes = Path(options["--notes-file"][0]).read_text()
        releases.append({"tagName": tag, "isDraft": False, "isPrerelease": False,
                         "latest": options.get("--latest", ["auto"])[0], "notes": notes,
                         "assets": sorted(Path(p).name for p in positional[1:])})
        return None
    if verb == "upload":
        if found is None:
            raise Refused("release not found")
        found["assets"] = sorted({*found.get("assets", []), *(Path(p).name for p in positional[1:])})
        return None
    raise Refused(f"fake gh: no answer for release {verb}")


def run_list(state: dict[str, Any]) -> Any:
    answers = state["runs"]
    return answers.pop(0) if len(answers) > 1 else answers[0]


def main(argv: list[str]) -> int:
    state_file = Path(os.environ["FAKE_GH_STATE"])
    state = json.loads(state_file.read_text())
    with open(os.environ["FAKE_GH_CALLS"], "a") as calls:
        calls.write(json.dumps(argv) + "\n")
    positional, options = _options(argv[2:] if argv[0] in ("run", "release") else argv[1:])
    try:
        if argv[0] == "api":
            answer = api(state, positional[0], options)
        elif argv[0] == "release":
            answer = release(state, argv[1], positional, options)
        elif argv[:2] == ["run", "list"]:
            answer = run_list(state)
        else:
            raise Refused(f"fake gh: unknown command {argv}")
    except Refused as refused:
        print(refused, file=sys.stderr)
        return 1
    finally:
        state_file.write_text(json.dumps(state))
    if answer is None:
        return 0
    if "--jq" in options:
        out = subprocess.run(["jq", "-r", options["--jq"][0]], input=json.dumps(answer),
                             capture_output=True, text=True, check=True).stdout
        sys.stdout.write(out)
    else:
        sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
