"""Changes against a baseline, as Markdown shared by ``report.md`` and ``comment.md``: status
changes first, then latency regressions, new and removed rows, improvements, accuracy."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.render.text import NONE, PREDICTION_MARK, md, num
from trtcheck.results.baseline import (
    IMPROVEMENT,
    NOT_COMPARABLE,
    REGRESSION,
    Diff,
    LatencyChange,
    RowChange,
    read,
)
from trtcheck.results.record import Record
from trtcheck.status import FAILING, Status

Escape = Callable[[object], str]


def render_changes(record: Record, *, heading: str = "##", escape: Escape = md) -> str:
    """The record's changes against its baseline, or ``""`` when it was not compared."""
    diff = read(record.baseline)
    if diff is None:
        return ""
    shown = sorted((c for c in diff.changes if c.shown), key=_order)
    cuda = str(record.environment.get("device", "")).startswith("cuda")
    lines = [f"{heading} Changes against the baseline", "", _gate(diff, escape, cuda)]
    lines += [f"- ⚠️ {escape(w)}" for w in diff.warnings]
    lines += ["", count_line(diff) + "."]
    if shown:
        lines += ["", "| case | backend | profile | status | worst rel err | "
                      f"{'speedup' if diff.metric == 'speedup' else 'backend ms'} [95% interval] "
                      "| change | backend ms (info) |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [_line(c, escape) for c in shown]
    return "\n".join(lines)


# Each category of :meth:`Diff.tally`, in the singular and the plural.
_CATEGORIES = {
    REGRESSION: ("latency regression", "latency regressions"),
    "status": ("status change", "status changes"),
    "new": ("new row", "new rows"),
    "removed": ("removed row", "removed rows"),
    IMPROVEMENT: ("faster row", "faster rows"),
    "accuracy": ("accuracy change", "accuracy changes"),
    NOT_COMPARABLE: ("row with figures not comparable", "rows with figures not comparable"),
    "unchanged": ("row unchanged", "rows unchanged"),
}


def count_line(diff: Diff) -> str:
    """The changes counted by category: the same words in the terminal and every report. A
    category with no rows is left out, but for regressions, status changes and unchanged rows."""
    parts = [f"{n} {_CATEGORIES[what][n != 1]}" for what, n in diff.tally().items()
             if n or what in (REGRESSION, "status", "unchanged")]
    return ", ".join(parts[:-1]) + f"; {parts[-1]}"


def _gate(diff: Diff, escape: Escape, cuda: bool) -> str:
    base = diff.base
    what = ("the speedup (backend normalised by eager in the same run)" if diff.metric == "speedup"
            else f"the backend's absolute {'GPU' if cuda else 'CPU'} time")
    rule = (f"A row regresses when {what} is more than {diff.threshold:.0%} slower and beyond "
            "both runs' 95% intervals." if diff.comparable else
            f"Its speedup, latency and memory figures are {NOT_COMPARABLE} with this run's: "
            "nothing is gated on them.")
    return (f"Baseline: commit {escape(base.get('git_commit') or NONE)} on "
            f"{escape(base.get('device_name') or NONE)}, torch {escape(base.get('torch') or NONE)}. "
            + rule)


def _order(change: RowChange) -> tuple[int, ...]:
    became_failing = change.after is not None and Status(change.after) in FAILING \
        and (change.before is None or Status(change.before) not in FAILING)
    return (not became_failing, not change.regressed,
            not (change.status_changed and change.before and change.after),
            change.before is not None, change.after is not None,
            not (change.latency and change.latency.verdict == IMPROVEMENT))


def _line(c: RowChange, escape: Escape) -> str:
    lat = c.latency
    cells = [escape(c.case_id), escape(c.backend) + (f" {PREDICTION_MARK}" if c.prediction else ""),
             escape(c.profile), _status(c),
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


def change_text(lat: LatencyChange) -> str:
    """The change as a ratio to the baseline, then in words: ``0.83× of the baseline, 17%
    slower`` for a speedup (the new speedup over the old), ``1.2× the baseline's time, 20%
    longer`` for a time; past a factor of 2, ``N times slower`` (or faster, longer, shorter)."""
    if not lat.slowdown or lat.slowdown == float("inf"):
        return NONE
    speed = lat.metric == "speedup"
    ratio = 1 / lat.slowdown if speed else lat.slowdown
    text = num(ratio, "×") + (" of the baseline" if speed else " the baseline's time")
    more, less = ("faster", "slower") if speed else ("longer", "shorter")
    if abs(ratio - 1) < 0.0005:
        return f"{text}, the same"
    if 0.5 <= ratio <= 2:
        return f"{text}, {abs(ratio - 1):.0%} {more if ratio > 1 else less}"
    return f"{text}, {num(max(ratio, 1 / ratio))} times {more if ratio > 1 else less}"


def _verdict(lat: LatencyChange) -> str:
    text = change_text(lat)
    if lat.verdict == REGRESSION:
        return f"**{text}: regression**"
    return f"{text}: improvement" if lat.verdict == IMPROVEMENT else f"{text} ({lat.verdict})"
