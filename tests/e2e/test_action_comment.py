"""The sticky pull-request comment (comment/sticky.js, the comment action's script), run by node
against a fake GitHub client: created once with its marker, updated, defused, cut at the limit,
skipped without a token."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import MANIFESTS, REPO, read_outputs, runner_env, tool

PR_EVENT = {"pull_request": {"number": 4, "head": {"sha": "d" * 40, "repo": {"full_name": "o/r"}}},
            "repository": {"full_name": "o/r"}}


def sticky(tmp_path: Path, **scenario: Any) -> dict[str, Any]:
    node = tool("node")
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
    assert not done["comments"]
    if "fail_status" not in scenario:  # a token that may not write may still have tried
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


def test_two_jobs_at_once_leave_one_comment(tmp_path: Path) -> None:
    """Both find no comment and both create one: the re-find after creating keeps one."""
    files = []
    for i in range(2):
        files.append(tmp_path / f"comment{i}.md")
        files[-1].write_text(f"### trtcheck: job {i}\n")
    done = sticky(tmp_path, jobs=2, job_env=[{"TRTCHECK_COMMENT_FILE": str(f)} for f in files])
    assert len(_calls(done, "createComment")) == 2  # the race did happen
    (left,) = done["comments"]
    assert left["body"].startswith("<!-- trtcheck-sticky-comment:trtcheck -->\n### trtcheck: job ")
    assert sorted(done["results"]) == ["created", "updated"]
    # a later job finds that one comment and updates it
    again = sticky(tmp_path, comments=done["comments"])
    assert again["result"] == "updated" and not _calls(again, "createComment")


def _node_limit() -> int:
    node = tool("node")
    code = f"console.log(require({str(REPO / 'comment' / 'sticky.js')!r}).LIMIT)"
    return int(subprocess.run([node, "-e", code], capture_output=True, text=True,
                              check=True).stdout)


def test_python_and_js_cut_at_one_limit_in_code_points(tmp_path: Path) -> None:
    from trtcheck.render.comment import LIMIT

    assert _node_limit() == LIMIT
    marker = "<!-- trtcheck-sticky-comment:trtcheck -->\n"
    # 59,013 code points, 89,013 UTF-16 units: within the limit, so posted whole
    text = "🔥" * 30_000 + "x" * 29_013
    (tmp_path / "comment.md").write_text(text, encoding="utf-8")
    env = {"TRTCHECK_COMMENT_FILE": str(tmp_path / "comment.md")}
    (created,) = _calls(sticky(tmp_path, env=env), "createComment")
    assert created["body"] == marker + text
    # over it: cut to the limit, never between the two halves of a surrogate pair
    (tmp_path / "comment.md").write_text("a" + "🔥" * LIMIT, encoding="utf-8")
    (created,) = _calls(sticky(tmp_path, env=env), "createComment")
    body = created["body"].removeprefix(marker)
    assert len(body) == LIMIT and body.endswith("… cut: see the report artifact.\n")
    body.encode("utf-8")  # a lone surrogate would not encode


def test_the_posted_comment_makes_no_live_reference(tmp_path: Path) -> None:
    """comment.md comes from a job that ran pull-request code: it is defused again."""
    hostile = ("see #1, org/repo#12, GH-5 and gh-6; ping &#64;user, &#x40;team, &commat;x, "
               "@user, @org/team; ![pixel](https://e.x/p.png) <img src=https://e.x/p.png> "
               "<IMG SRC=x> <a href=x>a</a>\n<details><summary>kept</summary>\n</details><br>")
    (tmp_path / "comment.md").write_text(hostile)
    done = sticky(tmp_path, env={"TRTCHECK_COMMENT_FILE": str(tmp_path / "comment.md")})
    (created,) = _calls(done, "createComment")
    body = created["body"].split("\n", 1)[1]
    assert not re.search(r"#\d|gh-\d|@\w|&#0*64;|&#x0*40;|&commat;|!\[|<img|<a ", body, re.I), body
    assert "<details><summary>kept</summary>" in body and body.endswith("</details><br>")
    assert body.replace("\u200d", "").replace("&amp;", "&").replace("&lt;", "<") == hostile


def test_an_empty_token_skips_the_comment_with_a_warning(tmp_path: Path) -> None:
    """A fork's pull request gets no secret: an empty github-token must not fail the job."""
    for manifest in MANIFESTS:
        steps = {s["name"]: s for s in yaml.safe_load(manifest.read_text())["runs"]["steps"]}
        post = steps["Sticky pull-request comment"]
        assert "inputs.github-token != ''" in post["if"] and post["continue-on-error"] is True
        skip = steps["No token for the comment"]
        assert skip["if"].endswith("inputs.github-token == '' }}") and "env" not in skip
        env = runner_env(tmp_path)
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", skip["run"]],
                              env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0
        assert proc.stdout.startswith("::warning title=trtcheck::comment skipped: github-token is empty")
        assert read_outputs(tmp_path / "output") == {"result": "skipped"}
        (tmp_path / "output").unlink()
    comment = yaml.safe_load((REPO / "comment" / "action.yml").read_text())
    assert comment["outputs"]["result"]["value"] == (
        "${{ steps.post.outputs.result || steps.no-token.outputs.result || 'failed' }}")


# The three kinds of token: whom each comments as, and what GraphQL's viewer answers for it.
TOKENS = {
    "workflow": ("github-actions[bot]", {"__typename": "Bot", "login": "github-actions"}),
    "app": ("trtcheck-ci[bot]", {"__typename": "Bot", "login": "trtcheck-ci[bot]"}),
    "personal": ("alice", {"__typename": "User", "login": "alice"}),
}


MARKER = "<!-- trtcheck-sticky-comment:trtcheck -->"


@pytest.mark.parametrize("kind", [*TOKENS, "viewer refused"])
def test_three_runs_with_any_token_leave_one_comment(tmp_path: Path, kind: str) -> None:
    """No comment-author: the script finds whom its token comments as, and updates that one
    comment; someone else's comment with the same marker is left alone."""
    login, viewer = TOKENS.get(kind, ("some-app[bot]", None))
    others = [{"id": 1, "user": {"login": "mallory"}, "body": f"{MARKER}\nfake"},
              {"id": 2, "user": {"login": "github-actions[bot]" if login != "github-actions[bot]"
                                 else "other[bot]"}, "body": f"{MARKER}\nanother token's"}]
    comments = others
    results = []
    for run in range(3):
        (tmp_path / "comment.md").write_text(f"### trtcheck: run {run}\n")
        done = sticky(tmp_path, comments=comments, login=login, viewer=viewer,
                      env={"TRTCHECK_COMMENT_FILE": str(tmp_path / "comment.md")})
        comments = done["comments"]
        results.append(done["result"])
        assert not done["warnings"]
    assert results == ["created", "updated", "updated"]
    mine = [c for c in comments if c["user"]["login"] == login]
    assert [c["body"] for c in mine] == [f"{MARKER}\n### trtcheck: run 2\n"]
    assert [c for c in comments if c["id"] < 1000] == others


def test_comment_author_still_overrides(tmp_path: Path) -> None:
    comments = [{"id": 5, "user": {"login": "release-bot"}, "body": f"{MARKER}\nold"}]
    done = sticky(tmp_path, comments=comments, login="release-bot", viewer=None,
                  env={"TRTCHECK_COMMENT_AUTHOR": "release-bot"})
    assert done["result"] == "updated" and [c["name"] for c in done["calls"]] == [
        "listComments", "updateComment"]
