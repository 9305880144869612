"""``report.html``: the run at a glance, in one self-contained page (a pure function of the record).

Accuracy, speed and memory are drawn as SVG charts (:mod:`trtcheck.render.svg`), failures and
the environment as text; predictions carry the same mark and words as every other report. A big
record is cut: each chart shows its :data:`CHART_LIMIT` most telling rows and the table its
first :data:`TABLE_LIMIT`, and the page says how many it left out."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trtcheck.errors import REPORT_CONVERTER, innermost
from trtcheck.render import findings
from trtcheck.render.abtext import SPEED_IN_CHANGES, side_label
from trtcheck.render.changes import (
    ACCURACY_OVER_PROCESSES,
    EAGER_OUTPUTS,
    KERNEL_SETS,
    change_text,
    count_line,
    figure_name,
    kernel_notes,
    ordered,
)
from trtcheck.render.escape import plain
from trtcheck.render.link import RunLink, commit_of
from trtcheck.render.page import num_cell, page, section, table
from trtcheck.render.svg import Mark, Reference, Scale, esc, interval_chart, log_scale
from trtcheck.render.text import (
    HTML,
    KIND_NOTES,
    NO_SPEEDUP,
    NONE,
    NONFINITE_NOTE,
    PREDICTION_MARK,
    ROW_FIGURES,
    UNSTABLE_MARK,
    evidence_lines,
    fallback_text,
    headline,
    kinds_present,
    latency_note,
    memory_floors,
    memory_measures,
    no_engine_text,
    nonfinite_text,
    num,
    speedup_text,
    stack_facts,
    stack_warnings,
    status_text,
    warned,
)
from trtcheck.results.ab import speed_over_processes
from trtcheck.results.baseline import (
    IMPROVEMENT,
    PROCESSES,
    REGRESSION,
    Diff,
    LatencyChange,
    RowChange,
    read,
)
from trtcheck.results.figures import LATENCY_FIGURES
from trtcheck.results.metrics import MAX_ABS, MAX_REL, MIN_ATOL, MIN_RTOL
from trtcheck.results.processes import SIDES
from trtcheck.results.record import Record
from trtcheck.results.rows import Row, RowKey
from trtcheck.results.verdict import JobVerdict, Judged
from trtcheck.status import Status

CHART_LIMIT = 300  # rows per chart; beyond it, the most telling ones and a line saying so
TABLE_LIMIT = 5000  # rows in the table of every row; beyond it, failing rows first
FAILURE_LIMIT = 500  # failing rows given a section each
TOLERANCE_AXIS = 1.5  # the accuracy chart's axis ends here (×tolerance); beyond: an arrow


@dataclass(frozen=True)
class Used:
    """How much of its tolerance a row's worst output used, from the recorded figures.

    The gate passes an element when ``|a - e| <= atol + rtol·|e|``; the record keeps, per
    output, the smallest atol that passes with rtol fixed (``min_atol``), the smallest rtol with
    atol fixed (``min_rtol``) and the worst absolute and relative errors. Whatever the element,
    its share of the allowed error is at most ``min(max_abs/atol, max_rel/rtol)`` (``high``).
    A passing output used at most all of it, and at least ``max(min_atol/atol, min_rtol/rtol)``
    (``low``); a failing one used more than all of it (``low`` 1). ``exact`` outputs (integers,
    bool, zero tolerance) have no share: 0 when they match, infinite when they do not."""

    low: float
    high: float
    passed: bool
    exact: bool = False

    @property
    def value(self) -> float:
        """The figure drawn: the share a passing output used for sure, a failing one's most."""
        return self.low if self.passed else self.high


def tolerance_used(outputs: Sequence[dict[str, Any]]) -> Used | None:
    """The worst output's share of its tolerance (failing outputs first), or None without one."""
    shares = [u for o in outputs if (u := _used(o)) is not None]
    return max(shares, key=lambda u: (not u.passed, u.value)) if shares else None


def _used(o: dict[str, Any]) -> Used | None:
    atol, rtol, passed = o.get("atol") or 0.0, o.get("rtol") or 0.0, bool(o.get("passed"))
    need_a, need_r = MIN_ATOL.of(o), MIN_RTOL.of(o)
    if (need_a is None and need_r is None) or not (atol or rtol):
        if "passed" not in o or MAX_ABS.of(o) is None:
            return None
        share = 0.0 if passed else math.inf
        return Used(share, share, passed, exact=True)
    high = min(_ratio(MAX_ABS.of(o), atol, math.inf), _ratio(MAX_REL.of(o), rtol, math.inf))
    if not passed:
        return Used(1.0, max(high, 1.0), passed)
    low = min(max(_ratio(need_a, atol, 0.0), _ratio(need_r, rtol, 0.0)), 1.0)
    return Used(low, max(min(high, 1.0), low), passed)


def _ratio(x: float | None, tol: float, missing: float) -> float:
    if x is None or math.isnan(x):
        return missing
    return x / tol if tol else (0.0 if x == 0 else math.inf)


def render_html(judged: Judged, *, link: RunLink | None = None) -> str:
    """The judged record as one HTML page: headline, changes, accuracy, speed, memory,
    failures, every row, environment and settings."""
    record = judged.record
    sha = commit_of(link, record.environment)
    shares = {id(r): tolerance_used(r.outputs) for r in record.rows}
    head_label = side_label(record.ab, "head")  # an ab record: what its head ran
    body = [
        '<header><h1>trtcheck report</h1>',
        f'<p class="facts">{esc(head_label or f"commit {sha or NONE}")} · '
        f'{esc(record.environment.get("device_name") or NONE)}'
        f' · started {esc(record.environment.get("started") or NONE)}'
        + (f' · <a href="{esc(link.url)}">run</a>' if link and link.url else "") + "</p>",
        '<nav><a href="#summary">summary</a>'
        + (f'<a href="#changes">{"head against base" if record.ab else "changes"}</a>'
           if record.baseline else "")
        + '<a href="#accuracy">accuracy</a><a href="#speed">speed</a>'
        '<a href="#memory">memory</a><a href="#failures">failures</a><a href="#rows">every row</a>'
        '<a href="#environment">environment</a></nav></header>',
        _summary(record, judged.verdict),
        _changes(record),
        _accuracy(record, shares),
        _findings(record),
        _speed(record),
        _memory(record),
        _failures(record),
        _rows(record, shares, judged.verdict.newly_failing),
        _environment(record),
    ]
    return page("trtcheck report", body)


def _tone(row: Row, failing: bool) -> str:
    if failing:
        return "fail"
    if row.prediction:
        return "pred"
    return "warn" if warned(row) or row.status is Status.XPASS else (
        "pass" if row.status is Status.PASS else "muted")


def _name(row: Row) -> str:
    """``case · backend · profile``, the backend marked when it predicts."""
    mark = f" {PREDICTION_MARK}" if row.prediction else ""
    return f"{row.case_id} · {row.backend}{mark} · {row.profile}"


def _status_html(row: Row) -> str:
    return f'<span class="s-{esc(row.status.value)}">{esc(status_text(row))}</span>'


def _summary(record: Record, verdict: JobVerdict) -> str:
    result, why = verdict.verdict, verdict.why
    counts = record.status_counts()
    parts = [f'<p><span class="verdict v-{esc(result.value)}">{esc(result.title)}</span> '
             f'{esc(why)} (strict xfail {"on" if record.xpass_fails else "off"}).</p>',
             table([esc(s) for s, _ in counts] + ["total"],
                   [[esc(f"{n}{no_engine_text(record, s)}") for s, n in counts] + [esc(len(record.rows))]])]
    ran = record.releases()
    backends = list(dict.fromkeys(r.backend for r in record.rows if r.backend != "-"))
    kinds = {r.backend: r.kind for r in record.rows}
    items = []
    for b in backends:
        mark = f"{PREDICTION_MARK} ({kinds[b]})" if kinds[b] in KIND_NOTES else ""
        rel = f"Torch-TensorRT {', '.join(ran[b])}" if ran.get(b) else ""
        items.append(f"<li><code>{esc(b)}</code> {esc(' · '.join(x for x in (mark, rel) if x))}</li>")
    if items:
        parts.append(f"<p>Backends that ran:</p><ul>{''.join(items)}</ul>")
    if fallback_text(record):
        parts.append(f'<p class="box warn">⚠ {esc(fallback_text(record))}</p>')
    parts += [f'<p class="box"><strong>{PREDICTION_MARK} Predictions, not measurements.</strong> '
              f"Each {PREDICTION_MARK} row of kind {esc(kind)} is {esc(KIND_NOTES[kind])}.</p>"
              for kind in kinds_present(record)]
    if any(warned(r) for r in record.rows):
        parts.append(f'<p class="box warn">{esc(NONFINITE_NOTE.replace("`", ""))}</p>')
    return section("summary", "Summary", *parts)


def _limited(marks: list[Mark], what: str) -> tuple[list[Mark], str]:
    if len(marks) <= CHART_LIMIT:
        return marks, ""
    return marks[:CHART_LIMIT], (f'<p class="note">Showing the first {CHART_LIMIT} of {len(marks)} '
                                 f"rows {esc(what)}; the table of every row below and report.md "
                                 "hold them all.</p>")


def _accuracy(record: Record, shares: dict[int, Used | None]) -> str:
    marks: list[tuple[tuple[bool, float], Mark]] = []
    for r in record.rows:
        used = shares[id(r)]
        nonfinite = nonfinite_text(r)
        if used is None and not nonfinite:
            continue
        figure = NONE if used is None else _share(used)
        note = figure + (" · ⚠ NaN/Inf" if nonfinite else "")
        title = f"{_name(r)}: {status_text(r)}; tolerance used {figure}" + (
            f"; {nonfinite}" if nonfinite else "")
        value = 0.0 if used is None else used.value
        order = (used is None or used.passed, -value if math.isfinite(value) else -math.inf)
        marks.append((order, Mark(
            _name(r), value, None if used is None or used.exact else used.low,
            None if used is None or used.exact else used.high, _tone(r, record.fails(r)), note, title,
            symbol="⚠" if nonfinite else "")))
    if not marks:
        return section("accuracy", "Accuracy", '<p class="note">No row compared an output.</p>')
    marks.sort(key=lambda m: m[0])
    shown, cut_note = _limited([m for _, m in marks], "closest to their tolerance")
    chart = interval_chart(shown, Scale(0.0, TOLERANCE_AXIS), refs=[Reference(1.0, "tolerance")],
                           unit="×", caption="worst error as a share of the tolerance, per row")
    return section(
        "accuracy", "Accuracy",
        '<p class="note">Each row\'s worst output: how much of its allowed error '
        "(atol + rtol·|eager|) its worst element used, 1.0 being the tolerance. The record bounds "
        "it: the bar runs from what a passing output used for sure (the smallest atol, or rtol, "
        "that passes, over the one given) to what it may have used at most (the worst error over "
        "atol, or the worst relative error over rtol); the dot is the first for a passing row, "
        "the second for a failing one (more than 1). Failing rows first, then the closest to "
        "their tolerance; » marks a share past the axis; ⚠ marks NaN or Inf in an output.</p>",
        chart, cut_note)


def _findings(record: Record) -> str:
    """The passing rows' narrowings and remarks, a list per converter; none: no section."""
    grouped = findings.groups(record)
    if not grouped:
        return ""
    parts = [f'<p class="note">{esc(findings.INTRO)}</p>']
    for converter, found in grouped.items():
        parts.append(f"<h3>{esc(converter)}</h3><ul>" + "".join(
            f"<li>{esc(f.text)} — {esc('; '.join(map(findings.row_name, rows)))}</li>"
            for f, rows in found) + "</ul>")
    return section("findings", findings.TITLE, *parts)


def _share(u: Used) -> str:
    if u.exact:
        return "exact: " + ("match" if u.passed else "differs")
    if not u.passed:
        return f">1, at most {num(u.high)}"
    return num(u.low) if u.high - u.low < 0.005 else f"{num(u.low)}–{num(u.high)}"


def _speed(record: Record) -> str:
    if speed_over_processes(record):
        return section("speed", "Speed", f'<p class="note">{esc(SPEED_IN_CHANGES)}</p>')
    timed = [r for r in record.rows if r.latency is not None and not r.prediction]
    predicted = sum(r.latency is not None and r.prediction for r in record.rows)
    parts = []
    if timed:
        timed.sort(key=lambda r: r.latency.speedup if r.latency else 0.0)
        marks = [Mark(_name(r), r.latency.speedup, *(r.latency.interval or (None, None)),
                      "warn" if r.latency.unstable else "pass" if r.latency.speedup >= 1 else "muted",
                      speedup_text(r), f"{_name(r)}: {speedup_text(r)}")
                 for r in timed if r.latency is not None]
        shown, cut_note = _limited(marks, "slowest first")
        values = [v for m in shown for v in (m.value, m.low, m.high) if v is not None]
        parts += [interval_chart(shown, log_scale(values), refs=[Reference(1.0, "1.00× (eager)")],
                                 unit="×", caption="speedup over eager with its 95% interval"),
                  cut_note,
                  f'<p class="note">{esc(latency_note(record, plain).replace("*", ""))} The '
                  f"dashed line is the control, eager, at 1.00×; {esc(UNSTABLE_MARK)} rows are "
                  "drawn in amber.</p>"]
    if predicted:
        rows = "row is" if predicted == 1 else "rows are"
        parts.append(f'<p class="note">{predicted} {PREDICTION_MARK} prediction {rows} not drawn: '
                     f"their speedup reads “{esc(NO_SPEEDUP)}”, since their latency is PyTorch "
                     "running a rewritten graph, not TensorRT.</p>")
    if not parts:
        parts.append('<p class="note">No row was timed.</p>')
    return section("speed", "Speed", *parts)


def _changes(record: Record) -> str:
    """Against a baseline: each row's speedup (or time) now, its interval, the baseline's
    interval as a grey band, and the verdict; then the status changes."""
    diff = read(record.baseline)
    if diff is None:
        return ""
    if diff.rule == PROCESSES:
        return _ab_changes(record, diff)
    changed = [c for c in diff.changes if c.latency is not None]
    changed.sort(key=lambda c: -(c.latency.slowdown if c.latency else 0.0))
    speed = diff.metric == "speedup"
    marks = [Mark(f"{c.case_id} · {c.backend} · {c.profile}", c.latency.after,
                  *(c.latency.after_interval or (None, None)), _change_tone(c.latency),
                  change_text(c.latency),
                  f"{c.case_id} · {c.backend} · {c.profile}: {num(c.latency.before)} → "
                  f"{num(c.latency.after)}; {change_text(c.latency)}",
                  band=c.latency.before_interval)
             for c in changed if c.latency is not None]
    parts = [f"<p>{esc(count_line(diff))}. Baseline: commit "
             f"{esc(diff.base.get('git_commit') or NONE)}, gated on "
             f"{figure_name(diff.metric)} at {diff.threshold:.0%}.</p>",
             *(f'<p class="box warn">⚠ {esc(w)}</p>' for w in diff.warnings)]
    if marks:
        shown, cut_note = _limited(marks, "most slowed first")
        values = [v for m in shown for v in (m.value, m.low, m.high, *(m.band or ())) if v is not None]
        parts += [interval_chart(shown, log_scale(values, around=values[0] if not speed else 1.0),
                                 refs=[Reference(1.0, "1.00×")] if speed else [],
                                 unit="×" if speed else " ms",
                                 caption="each row now, with its interval, against the baseline's"),
                  cut_note,
                  '<p class="note">The dot and bar: this run\'s figure and 95% interval; the grey '
                  "band: the baseline's interval. Red: the gate's regression; amber: the other "
                  "figure worsened (not gated); green: an improvement beyond both intervals with "
                  "nothing worse.</p>"]
    parts.append(_named_changes(diff))
    return section("changes", "Changes against the baseline", *parts)


def _change_tone(lat: LatencyChange) -> str:
    """Red for the gate's regression, amber when only the figure not gated worsened, green for
    an improvement with nothing worse: a model that got slower is never drawn green."""
    if lat.verdict == REGRESSION:
        return "fail"
    if lat.worsened:
        return "warn"
    return "pass" if lat.verdict == IMPROVEMENT else "muted"


def _ab_changes(record: Record, diff: Diff) -> str:
    """``trtcheck ab``: when and what it compared, each judged row's change, head over base
    (above 1: worse), with its interval over processes against the band the threshold leaves
    unchanged; then the rows whose status or accuracy changed, named."""
    judged = [c for c in ordered(diff) if c.latency is not None]
    marks = [Mark(f"{c.case_id} · {c.backend} · {c.profile}", c.latency.slowdown,
                  *(c.latency.interval or (None, None)), _change_tone(c.latency),
                  change_text(c.latency, interval=False),
                  f"{c.case_id} · {c.backend} · {c.profile}: {change_text(c.latency)} over "
                  f"{' + '.join(map(str, c.latency.processes or ()))} processes",
                  band=(1 / (1 + diff.threshold), 1 + diff.threshold))
             for c in judged if c.latency is not None and c.latency.slowdown == c.latency.slowdown]
    base, head = (side_label(record.ab, side) for side in SIDES)
    same = " (same tree: both sides ran the same code)" if (record.ab or {}).get("same_tree") \
        else ""
    parts = [f"<p>{esc(count_line(diff))}.</p>",
             f"<p>Base: {esc(base or diff.base.get('git_commit') or NONE)}; head: "
             f"{esc(head or NONE)}{esc(same)}; measured in one job started "
             f"{esc(record.environment.get('started') or NONE)}, process against process, "
             f"gated on {esc(figure_name(diff.metric))} at {diff.threshold:.0%}.</p>"]
    if marks:
        shown, cut_note = _limited(marks, "in the zoo's case order")
        values = [v for m in shown for v in (m.value, m.low, m.high, *(m.band or ()))
                  if v is not None]
        parts += [interval_chart(shown, log_scale(values), refs=[Reference(1.0, "1.00×")],
                                 unit="×", caption="each row's change, head over base"),
                  cut_note,
                  '<p class="note">The dot and bar: how many times worse the head\'s gated '
                  "figure is (above 1: a longer latency, or a lower speedup over eager), with its "
                  "interval over processes at the corrected level; the grey band: within the "
                  "threshold, unchanged. Red: the gate's regression; amber: the figure not gated "
                  "worsened; green: improved with nothing worse. Hover a row for its interval."
                  "</p>"]
    notes = kernel_notes(diff)
    if notes:
        parts.append(f"<p>{esc(KERNEL_SETS)}</p><ul>"
                     + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    parts += [f'<p class="note">{esc(ACCURACY_OVER_PROCESSES)}</p>', _named_changes(diff)]
    return section("changes", "Head against base", *parts)


def _named_changes(diff: Diff) -> str:
    """The table of rows whose status, accuracy or (over processes) eager outputs changed, each
    named; empty when none did."""
    changed = [c for c in ordered(diff) if c.status_changed or c.accuracy_changed or c.eager]
    if not changed:
        return ""
    eager = diff.rule == PROCESSES
    return table(["case", "backend", "profile", "status", "worst rel err",
                  *([esc(EAGER_OUTPUTS)] if eager else [])],
                 [[esc(c.case_id), esc(c.backend), esc(c.profile), _status_change(c),
                   (f"{esc(num(c.before_error))} → <strong>{esc(num(c.after_error))}</strong>"
                    if c.accuracy_changed else esc(num(c.after_error))),
                   *([esc(c.eager_text or NONE)] if eager else [])]
                  for c in changed[:TABLE_LIMIT]])


def _status_change(c: RowChange) -> str:
    if c.before is None:
        return f"new: {esc(c.after)}"
    if c.after is None:
        return f"removed (was {esc(c.before)})"
    return f"{esc(c.before)} → <strong>{esc(c.after)}</strong>"


def _memory(record: Record) -> str:
    rows = [r for r in record.rows if r.memory is not None]
    if not rows:
        return section("memory", "Memory", '<p class="note">No row measured memory.</p>')
    ratios = sorted((r for r in rows if r.memory_ratio is not None),
                    key=lambda r: -(r.memory_ratio or 0.0))
    parts = []
    if ratios:
        marks = [Mark(_name(r), r.memory_ratio, tone="warn" if (r.memory_ratio or 0) > 1 else "pass",
                      note=num(r.memory_ratio, "×"), title=f"{_name(r)}: {num(r.memory_ratio, '×')}")
                 for r in ratios]
        shown, cut_note = _limited(marks, "most memory first")
        parts += [interval_chart(shown, log_scale([m.value for m in shown if m.value]),
                                 refs=[Reference(1.0, "1.00× (eager)")], unit="×",
                                 caption="backend memory over eager's steady-state peak"), cut_note]
    columns = [c for c in ROW_FIGURES if c.memory and HTML in c.reports]
    parts.append(table(["case · backend · profile", *(esc(c.label) for c in columns)],
                       [[esc(_name(r)), *(num_cell(c.text(r), None) for c in columns)]
                        for r in rows[:TABLE_LIMIT]], sortable=True))
    parts.append(f'<p class="note">{esc(", ".join(memory_measures(record)))} of one call after '
                 "warm-up, above what was in use before it (first-call allocations left out; the "
                 "backend's side holds what the compiled module keeps). The ratio is backend ÷ "
                 f"eager, for measured rows only, and only where both exceed {esc(memory_floors())}, "
                 f"else {NONE}.</p>")
    notes = [n for r in rows if r.memory for n in r.memory.notes]
    if notes:
        parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes[:FAILURE_LIMIT]) + "</ul>")
    return section("memory", "Memory", *parts)


_BUNDLE_PATH = re.compile(r"[^A-Za-z0-9._/-]")


def _failures(record: Record) -> str:
    failing = record.failing_rows()
    if not failing:
        return section("failures", "Failures", '<p class="note">No row fails the run.</p>')
    parts = [_failure(r) for r in failing[:FAILURE_LIMIT]]
    if len(failing) > FAILURE_LIMIT:
        parts.append(f'<p class="note">{len(failing) - FAILURE_LIMIT} more failing rows: see '
                     "report.md.</p>")
    return section("failures", "Failures", *parts)


def _failure(row: Row) -> str:
    lines = [f"<h3>{esc(_name(row))}</h3>", f"<p>{_status_html(row)} {esc(headline(row))}</p>"]
    if row.location:
        lines.append(f"<p>location: <code>{esc(row.location)}</code></p>")
    found = innermost(row.traceback or "", "torch_tensorrt")
    if found is not None and REPORT_CONVERTER not in row.message:  # else the message names whom
        frame = found[1]
        code = f": <code>{esc(frame.code)}</code>" if frame.code else ""
        lines.append(f"<p>Torch-TensorRT frame: <code>{esc(frame.within('torch_tensorrt'))}</code>"
                     f"{code}</p>")
    evidence = evidence_lines(row)
    if evidence:
        lines.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in evidence) + "</ul>")
    if row.prediction:
        lines.append(f'<p class="note">{PREDICTION_MARK} {esc(KIND_NOTES[row.kind])}</p>')
    lines.append(_reduction(row))
    if row.traceback:
        lines.append(f"<details><summary>traceback</summary><pre>{_lines(row.traceback)}</pre></details>")
    return "\n".join(x for x in lines if x)


def _lines(text: str) -> str:
    """Several lines of untrusted text, each escaped, the line breaks kept."""
    return "\n".join(esc(line) for line in str(text).splitlines())


def _reduction(row: Row) -> str:
    red = row.reduction
    if red is None:
        return ""
    if not red.get("reduced"):
        return f"<p>reduce: {esc(red.get('why') or 'not reduced')}</p>"
    bundle = _BUNDLE_PATH.sub("-", str(red["bundle"])).strip("/")
    files = [_BUNDLE_PATH.sub("-", str(f)) for f in red.get("files") or []]
    links = (", ".join(f'<a href="{esc(bundle)}/{esc(f)}">{esc(f)}</a>' for f in files) if files
             else f'<a href="{esc(bundle)}/">{esc(bundle)}/</a>')
    return (f"<p>reduce: {esc(red['reduced_nodes'])} of {esc(red['original_nodes'])} nodes "
            f"({'reproduced' if red.get('reproduced') else 'not reproduced'} in a fresh process); "
            f"bundle <code>{esc(bundle)}/</code>: {links}</p>")


def _rows(record: Record, shares: dict[int, Used | None],
          newly_failing: frozenset[RowKey] | None) -> str:
    newly = newly_failing or set()  # an ab record's rows the head broke come first
    by_failing = sorted(record.rows, key=lambda r: (r.key not in newly, not record.fails(r)))
    shown = by_failing[:TABLE_LIMIT]
    speed = not speed_over_processes(record)  # an ab record's are under Head against base
    headers = ["case", "backend", "profile", "status", "tolerance used",
               *(["speedup [95% interval]", *(esc(f.label) for f in LATENCY_FIGURES)]
                 if speed else []), "memory ratio"]
    cells = []
    for r in shown:
        used = shares[id(r)]
        cells.append([
            esc(r.case_id), esc(r.backend + (f" {PREDICTION_MARK}" if r.prediction else "")),
            esc(r.profile), f'<td data-v="{esc(r.status.value)}">{_status_html(r)}</td>',
            num_cell(NONE if used is None else _share(used), None if used is None else used.value),
            *([num_cell(speedup_text(r),
                        r.latency.speedup if r.latency and not r.prediction else None),
               *(num_cell(num(f.of(r.latency)), f.of(r.latency)) for f in LATENCY_FIGURES)]
              if speed else []),
            num_cell(num(r.memory_ratio, "×"), r.memory_ratio)])
    note = (f'<p class="note">The first {TABLE_LIMIT} of {len(record.rows)} rows, failing rows first; '
            "report.md and results.json hold them all.</p>" if len(by_failing) > TABLE_LIMIT else "")
    return section("rows", "Every row", table(headers, cells, sortable=True), note)


def _environment(record: Record) -> str:
    env, opts = record.environment, record.options
    facts = [f"trtcheck {esc(env.get('trtcheck') or NONE)}", *stack_facts(env, esc),
             f"device {esc(env.get('device') or NONE)} ({esc(env.get('device_name') or NONE)})",
             f"driver {esc(env.get('driver') or NONE)}", f"CUDA {esc(env.get('cuda') or NONE)}",
             f"Python {esc(env.get('python') or NONE)}", f"platform {esc(env.get('platform') or NONE)}",
             f"commit {esc(env.get('git_commit') or NONE)}",
             f"started {esc(env.get('started') or NONE)}, {esc(env.get('duration_s') or NONE)} s"]
    parts = ["<ul>" + "".join(f"<li>{f}</li>" for f in facts) + "</ul>",
             *(f'<p class="box warn">{w}</p>' for w in stack_warnings(env, esc))]
    used = {r.profile for r in record.rows}
    profiles = [[esc(p.get("name")), esc(p.get("description") or NONE)]
                for p in opts.get("profiles", []) if p.get("name") in used]
    if profiles:
        parts += ["<h3>Settings profiles</h3>", table(["profile", "settings"], profiles)]
    tolerances = opts.get("tolerances") or {}
    if tolerances:
        parts += ["<h3>Tolerances</h3>",
                  table(["dtype", "rtol", "atol"],
                        [[esc(k), esc(v.get("rtol")), esc(v.get("atol"))]
                         for k, v in tolerances.items() if isinstance(v, dict)])]
    settings = [[esc(k), f"<code>{esc(_setting(v))}</code>"] for k, v in opts.items()
                if k not in ("profiles", "tolerances", "fallback_note")]
    if settings:
        parts += ["<h3>Settings</h3>", table(["setting", "value"], settings)]
    return section("environment", "Environment and settings", *parts)


def _setting(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} = {_setting(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_setting(v) for v in value) or "[]"
    return str(value)
