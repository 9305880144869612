"""The pull-request comment: compact Markdown that puts what needs attention first.

Order: a headline; changes against a baseline, when a caller gives them; the rows that need
attention; one accuracy line and one latency line per case; a speedup chart; the
remaining non-passing rows in a collapsed ``<details>``; the commit and the run. The comment
never exceeds ``limit`` characters: tables are cut at row boundaries, pointing at the artifact.

Text from the zoo is escaped with :func:`inert`: Markdown, table characters and HTML as in
``report.md``, and also mentions, issue references and autolinks, so that a pull request cannot
ping people or plant links through a model name.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from importlib import resources
from typing import Any

from trtcheck.core.traits import NO_BACKEND
from trtcheck.render import findings
from trtcheck.render.abtext import side_label
from trtcheck.render.escape import md
from trtcheck.render.link import RunLink, commit_of
from trtcheck.render.text import (
    NONE,
    NONFINITE_MARK,
    NONFINITE_NOTE,
    PREDICTION_MARK,
    cut,
    deploy_counts,
    evidence_lines,
    fallback_text,
    headline,
    no_engine_text,
    num,
    reduction_text,
    shortened,
    speedup_text,
    stack_facts,
    stack_warnings,
    status_text,
    warned,
)
from trtcheck.results.ab import speed_over_processes
from trtcheck.results.metrics import MAX_ABS, MAX_REL, MIN_ATOL, MIN_RTOL, severity
from trtcheck.results.record import Record
from trtcheck.results.rows import NO_PROFILE, Row, RowKey
from trtcheck.results.verdict import JobVerdict, Judged
from trtcheck.status import Status, Verdict

# The comment's size limit, shared with comment/sticky.js.
LIMIT: int = json.loads(resources.files("trtcheck").joinpath("limits.json").read_text("utf-8"))["comment"]
TITLE = "trtcheck"
ARTIFACT_NOTE = ("the full report is `report.md` in the run's report artifact, and its charts "
                 "`report.html` (open it in a browser)")
ATTENTION = frozenset({Status.FAIL, Status.ERROR, Status.CRASH, Status.TIMEOUT, Status.XPASS})

NEWLY = " · newly failing"  # an ab record's row that failed on the head and not on the base
_ZWJ = "\u200d"
# Mentions (@user, @org/team, emails), references (#1, GH-1) and autolinks (scheme://, www.):
# a zero-width joiner after the trigger character stops GitHub from acting on them.
_TRIGGERS = re.compile(r"(@|#|(?i:\bgh)-)(?=\w)|(?i:\b(https?|ftp|mailto|xmpp|www)(?=[:.]))")
_MESSAGE_CHARS = 160
_BAR_WIDTH = 20


def inert(text: object) -> str:
    """:func:`md`, plus a zero-width joiner that defuses mentions, references and autolinks."""
    return _TRIGGERS.sub(lambda m: m.group(0) + _ZWJ, md(text))


@dataclass
class _Block:
    """A piece of the comment: lines always kept, then rows that may be cut from the end."""

    head: list[str]
    rows: list[str]
    tail: list[str]

    def text(self, n_rows: int) -> str:
        cut = len(self.rows) - n_rows
        more = [f"| … {cut} more rows: {ARTIFACT_NOTE} |"] if cut else []
        return "\n".join(self.head + self.rows[:n_rows] + more + self.tail)


def render_comment(judged: Judged, *, link: RunLink | None = None,
                   changes: str = "", limit: int = LIMIT) -> str:
    """The comment for the judged record; ``changes`` is Markdown on changes against a
    baseline, placed first after the headline (empty: no baseline)."""
    record = judged.record
    blocks = [
        _Block([_headline(record, judged.verdict), "", _facts(record)], [], []),
        _Block([changes], [], []) if changes else None,
        _attention(record, judged.verdict.newly_failing),
        _accuracy(record),
        _latency(record),
        _chart(record),
        _findings(record),
        _others(record),
        _reduced(record, link),
        _Block([_footer(record, link)], [], []),
    ]
    return _fit([b for b in blocks if b is not None], limit)


def _fit(blocks: list[_Block], limit: int) -> str:
    """Join the blocks, cutting table rows from the last blocks first until the text fits."""
    kept = [len(b.rows) for b in blocks]

    def joined() -> str:
        return "\n\n".join(b.text(n) for b, n in zip(blocks, kept, strict=True)) + "\n"

    text = joined()
    for i in reversed(range(len(blocks))):
        if len(text) <= limit:
            break
        low, high = 0, kept[i]  # the most rows of block i that fit: a binary search
        while low < high:
            kept[i] = (low + high + 1) // 2
            low, high = (kept[i], high) if len(joined()) <= limit else (low, kept[i] - 1)
        kept[i] = low
        text = joined()
    return text if len(text) <= limit else text[:limit - len(ARTIFACT_NOTE) - 4] + f"\n\n{ARTIFACT_NOTE}\n"


def _headline(record: Record, job: JobVerdict) -> str:
    result, why = job.verdict, job.why
    mark = {Verdict.PASS: "✅", Verdict.FAIL: "❌"}.get(result, "⚠️")
    verdict = f"{mark} {result.title}: {why}"
    counts = " · ".join(f"{s} {n}{no_engine_text(record, s)}" for s, n in record.status_counts())
    fallback = f"\n\n⚠️ **{inert(fallback_text(record))}**" if fallback_text(record) else ""
    return f"### {TITLE}: {verdict}" + (f"\n\n{counts}" if counts else "") + fallback


def _facts(record: Record) -> str:
    """The backends, each measured or predicted and with the Torch-TensorRT release(s) whose
    code ran, then the versions and the GPU."""
    env = record.environment
    kinds: dict[str, bool] = {}
    for row in record.rows:
        if row.backend != NO_BACKEND:
            kinds[row.backend] = kinds.get(row.backend, False) or row.prediction
    ran = record.releases()

    def described(backend: str, predicted: bool) -> str:
        code = ", ".join(ran.get(backend, []))
        return (f"{inert(backend)} ({'predicted ' + PREDICTION_MARK if predicted else 'measured'}"
                + (f"; Torch-TensorRT {inert(code)}'s code" if code else "") + ")")

    backends = ", ".join(described(b, p) for b, p in kinds.items()) or NONE
    device = env.get("device") or NONE
    gpu = env.get("device_name") if str(device).startswith("cuda") else f"none ({device})"
    facts = f"Backends: {backends}<br>{' · '.join(stack_facts(env, inert))} · GPU: {inert(gpu)}"
    deployed = deploy_counts(record)
    return "<br>".join([facts, *([f"Saved and loaded again: {inert(deployed)}"] if deployed else []),
                        *stack_warnings(env, inert)])


def _row_name(row: Row) -> str:
    mark = f" {PREDICTION_MARK}" if row.prediction else ""
    profile = "" if row.profile in (NO_PROFILE, "default") else f" · {inert(row.profile)}"
    return f"{inert(row.backend)}{mark}{profile}"


def _attention(record: Record, newly: frozenset[RowKey] | None) -> _Block | None:
    """Failing rows, then rows that passed with NaN or Inf in an output; of an ``ab`` record,
    the rows the head broke (``newly``) first, marked, then the others in the zoo's case
    order."""
    rows = [r for r in record.rows if r.status in ATTENTION or warned(r)]
    if not rows:
        return None
    order = {s: i for i, s in enumerate((Status.CRASH, Status.TIMEOUT, Status.ERROR,
                                         Status.FAIL, Status.XPASS, Status.PASS))}
    rows.sort(key=lambda r: (r.key not in newly, 0) if newly is not None
              else (False, order[r.status]))
    lines = [f"| {inert(r.case_id)} | {_row_name(r)} | "
             f"{_bold(r, record.fails(r))}{NEWLY if newly and r.key in newly else ''} | "
             f"{inert(shortened(r, headline(r), _MESSAGE_CHARS))}{_evidence(r)} |"
             for r in rows]
    tail = ["", NONFINITE_NOTE] if any(warned(r) for r in rows) else []
    return _Block(["#### Needs attention", "", "| case | backend | status | what happened |",
                   "|---|---|---|---|"], lines, tail)


def _evidence(row: Row) -> str:
    """The row's first evidence line, cut, and how many more report.md holds; ``""`` if none."""
    found = evidence_lines(row)
    if not found:
        return ""
    more = f" (+{len(found) - 1} more in report.md)" if len(found) > 1 else ""
    return f"<br>evidence: {inert(cut(found[0], _MESSAGE_CHARS))}{more}"


def _bold(row: Row, failing: bool) -> str:
    return f"**{row.status}**" if failing else status_text(row)


def _cases(record: Record) -> dict[str, list[Row]]:
    cases: dict[str, list[Row]] = {}
    for row in record.rows:
        cases.setdefault(row.case_id, []).append(row)
    return cases


def _verdict(output: dict[str, Any]) -> str:
    if output.get("passed"):
        return "within"
    if MIN_ATOL.of(output) is None and MIN_RTOL.of(output) is None:
        return "**mismatch**"
    return f"**needs** atol ≥ {num(MIN_ATOL.of(output))} or rtol ≥ {num(MIN_RTOL.of(output))}"


def _accuracy(record: Record) -> _Block | None:
    """The worst output of each case over its rows (:func:`severity`), or its worst row that
    failed before any output was compared: an error there is worse than any compared output."""
    lines = []
    paths = False
    for case_id, rows in _cases(record).items():
        uncompared = [r for r in rows if not r.outputs and r.status in ATTENTION]
        compared = [(row, o) for row in rows for o in row.outputs]
        if uncompared:
            row = uncompared[0]
            lines.append(f"| {inert(case_id)} | {NONE} | {NONE} | **{row.status}**, no outputs "
                         f"compared | {_row_name(row)} |")
            continue
        if not compared:
            lines.append(f"| {inert(case_id)} | {NONE} | {NONE} | no outputs compared | {NONE} |")
            continue
        row, o = max(compared, key=lambda ro: severity(ro[1]))
        tol = (f"rtol {num(o.get('rtol'))}, atol {num(o.get('atol'))}"
               if _positive(o.get("atol")) or _positive(o.get("rtol")) else "exact")
        mark = f" {NONFINITE_MARK}" if any(warned(r) for r in rows) else ""
        paths = paths or bool(o.get("path"))
        lines.append(f"| {inert(case_id)} | {num(MAX_ABS.of(o))} / {num(MAX_REL.of(o))} | "
                     f"{tol} | {_verdict(o)}{mark} | {_row_name(row)}{_output_path(o)} |")
    if not lines:
        return None
    tail = ["", "*where*: the row; for a model returning several tensors, also which output: "
            "`[1]` is item 1 (from 0) of the tuple or list it returns, `['x']` the value at "
            "key `x` of its dict."] if paths else []
    return _Block(["#### Accuracy: worst output of each case", "",
                   "| case | max abs / rel err | tolerance | result | where |",
                   "|---|---|---|---|---|"], lines, tail)


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and value > 0


def _output_path(output: dict[str, Any]) -> str:
    path = output.get("path")
    return f" · output {inert(path)}" if path else ""


def _speedup(row: Row) -> str:
    ratio = row.memory_ratio  # figures and fixed words only: nothing from the zoo
    return speedup_text(row) + (f" · mem {num(ratio, '×')}" if ratio is not None else "")


def _latency(record: Record) -> _Block | None:
    """One line per case: each backend's speedup; none for an ``ab`` record judged over
    processes, whose figures are the changes' (one figure per fact)."""
    backends = list(dict.fromkeys(r.backend for r in record.rows if r.latency or r.prediction))
    if not backends or speed_over_processes(record):
        return None
    if all(r.prediction for r in record.rows if r.backend in backends):
        return _Block(["#### Latency", "", "No speedup: every backend of this run predicts "
                       f"rather than measures ({', '.join(map(inert, backends))} "
                       f"{PREDICTION_MARK}); their latency is PyTorch running a rewritten "
                       "graph, not TensorRT."], [], [])
    lines = []
    for case_id, rows in _cases(record).items():
        first = {}
        for row in rows:
            first.setdefault(row.backend, row)  # the first profile's row stands for the backend
        cells = [_speedup(first[b]) if b in first else NONE for b in backends]
        lines.append(f"| {inert(case_id)} | " + " | ".join(cells) + " |")
    header = "| case | " + " | ".join(inert(b) for b in backends) + " |"
    return _Block(["#### Latency: speedup over eager [95% interval], first profile", "",
                   header, "|---|" + "---|" * len(backends)], lines, [])


def _chart(record: Record) -> _Block | None:
    """A bar per measured backend: geometric-mean speedup over its rows, with the range; none
    for an ``ab`` record judged over processes (its rows' figures are the changes')."""
    if speed_over_processes(record):
        return None
    by_backend: dict[str, list[float]] = {}
    for row in record.rows:
        if row.latency is not None and not row.prediction and math.isfinite(row.latency.speedup) \
                and row.latency.speedup > 0:
            by_backend.setdefault(row.backend, []).append(row.latency.speedup)
    if not by_backend:
        return None
    top = max(statistics.geometric_mean(v) for v in by_backend.values())
    lines = []
    for backend, values in by_backend.items():
        mean = statistics.geometric_mean(values)
        bar = "█" * max(1, round(_BAR_WIDTH * mean / top))
        lines.append(f"| {inert(backend)} | `{bar}` {num(mean, '×')} | "
                     f"{num(min(values), '×')} – {num(max(values), '×')} | {len(values)} |")
    return _Block(["#### Speedup by backend (measured rows; geometric mean)", "",
                   "| backend | speedup | range | rows |", "|---|---|---|---|"], lines, [])


def _findings(record: Record) -> _Block | None:
    """The passing rows' narrowings and remarks, collapsed, their count in the summary line."""
    found = findings.lines(record, inert)
    if not found:
        return None
    return _Block([f"<details><summary>{findings.summary(record)}</summary>", "", findings.INTRO],
                  found, ["", "</details>"])


def _others(record: Record) -> _Block | None:
    rows = [r for r in record.rows if r.status not in ATTENTION and r.status is not Status.PASS]
    if not rows:
        return None
    lines = [f"| {inert(r.case_id)} | {_row_name(r)} | {r.status} | "
             f"{inert(shortened(r, headline(r), _MESSAGE_CHARS))} |" for r in rows]
    return _Block([f"<details><summary>{len(rows)} more rows not passing "
                   "(unsupported, xfail, skipped)</summary>", "",
                   "| case | backend | status | reason |", "|---|---|---|---|"], lines,
                  ["", "</details>"])


def _reduced(record: Record, link: RunLink | None) -> _Block | None:
    """Each reduced row's bundle, as a path inside the run's artifact (a comment cannot link
    into a zip), with a link to the run's artifacts."""
    rows = [r for r in record.rows if r.reduction is not None]
    if not rows:
        return None
    where = f" ([the run's artifacts]({link.url}#artifacts))" if link and link.url else ""
    lines = [f"| {inert(r.case_id)} | {_row_name(r)} | {reduction_text(r, inert)} |" for r in rows]
    return _Block(["#### Reduced", "", "Each bundle (repro.py, a zoo file, ISSUE.md) is a folder "
                   f"of the run's report artifact{where}, at the path shown.", "",
                   "| case | backend | reduction |", "|---|---|---|"], lines, [])


def _footer(record: Record | None, link: RunLink | None) -> str:
    sha = commit_of(link, record.environment if record else None)
    head = side_label(record.ab, "head") if record else None
    parts = [f"head {inert(head)}" if head else f"commit {inert(sha)}" if sha else "commit unknown"]
    if link and link.url:
        parts.append(f"[run]({link.url})")
    parts.append(ARTIFACT_NOTE)
    return "<sub>" + " · ".join(parts) + "</sub>"

