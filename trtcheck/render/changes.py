"""Changes against a baseline, as Markdown shared by ``report.md`` and ``comment.md``: status
changes first, then latency regressions, new and removed rows, improvements, accuracy."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.render.text import NONE, md, num
from trtcheck.results.baseline import IMPROVEMENT, REGRESSION, Diff, LatencyChange, RowChange, read
from trtcheck.results.record import Record
from trtcheck.status import FAILING, Status

Escape = Callable[[object], str]


def render_changes(record: Record, *, heading: str = "##", escape: Escape = md) -> str:
    """The record's changes against its baseline, or ``""`` when it was not compared."""
    diff = read(record.baseline)
    if diff is None:
        return ""
    shown = sorted((c for c in diff.changes if c.shown), key=_order)
    counts = [(sum(c.regressed for c in diff.changes), "latency regressions"),
              (sum(c.status_changed and c.before is not None and c.after is not None
                   for c in diff.changes), "status changes"),
              (sum(c.before is None for c in diff.changes), "new rows"),
              (sum(c.after is None for c in diff.changes), "removed rows"),
              (sum(c.latency is not None and c.latency.verdict == IMPROVEMENT
                   for c in diff.changes), "faster rows")]
    lines = [f"{heading} Changes against the baseline", "", _gate(diff, escape)]
    lines += [f"- ⚠️ {escape(w)}" for w in diff.warnings]
    lines += ["", ", ".join(f"{n} {what}" for n, what in counts)
              + f"; {len(diff.changes) - len(shown)} rows unchanged."]
    if shown:
        lines += ["", "| case | backend | profile | status | worst rel err | "
                      f"{'speedup' if diff.metric == 'speedup' else 'backend ms'} [95% interval] "
                      "| change | backend ms (info) |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [_line(c, escape) for c in shown]
    return "\n".join(lines)


def _gate(diff: Diff, escape: Escape) -> str:
    base = diff.base
    what = ("the speedup (backend normalised by eager in the same run)" if diff.metric == "speedup"
            else "the backend's absolute GPU time")
    return (f"Baseline: commit {escape(base.get('git_commit') or NONE)} on "
            f"{escape(base.get('device_name') or NONE)}, torch {escape(base.get('torch') or NONE)}. "
            f"A row regresses when {what} is more than {diff.threshold:.0%} slower and beyond "
            "both runs' 95% intervals.")


def _order(change: RowChange) -> tuple[int, ...]:
    became_failing = change.after is not None and Status(change.after) in FAILING \
        and (change.before is None or Status(change.before) not in FAILING)
    return (not became_failing, not change.regressed,
            not (change.status_changed and change.before and change.after),
            change.before is not None, change.after is not None,
            not (change.latency and change.latency.verdict == IMPROVEMENT))


def _line(c: RowChange, escape: Escape) -> str:
    lat = c.latency
    cells = [escape(c.case_id), escape(c.backend), escape(c.profile), _status(c),
             _arrow(num(c.before_error), num(c.after_error)) if c.accuracy_changed
             else num(c.after_error if c.after is not None else c.before_error),
             _figure(lat) if lat else NONE, _verdict(lat) if lat else NONE,
             _arrow(num(lat.before_ms), num(lat.after_ms)) if lat else NONE]
    return "| " + " | ".join(cells) + " |"


def _status(c: RowChange) -> str:
    if c.before is None:
        return f"new: {_bold(c.after)}"
    if c.after is None:
        return f"removed (was {c.before})"
    return f"{c.before} → {_bold(c.after)}" if c.status_changed else c.after


def _bold(status: str | None) -> str:
    return f"**{status}**" if status and Status(status) in FAILING else str(status)


def _arrow(before: str, after: str) -> str:
    return after if before == after else f"{before} → {after}"


def _figure(lat: LatencyChange) -> str:
    unit = "×" if lat.metric == "speedup" else ""
    return f"{_with_interval(lat.before, lat.before_interval, unit)} → " \
           f"{_with_interval(lat.after, lat.after_interval, unit)}"


def _with_interval(value: float, interval: tuple[float, float] | None, unit: str) -> str:
    text = num(value, unit)
    return f"{text} [{num(interval[0])}–{num(interval[1])}]" if interval else text


def _verdict(lat: LatencyChange) -> str:
    pct = (lat.slowdown - 1) * 100
    text = f"{pct:+.1f}% {'slower' if pct > 0 else 'faster'}" if abs(pct) >= 0.05 else "same"
    if lat.verdict == REGRESSION:
        return f"**{text}: regression**"
    return f"{text} ({lat.verdict})" if lat.verdict != IMPROVEMENT else f"{text}: improvement"
