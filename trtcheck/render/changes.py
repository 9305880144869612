"""Changes against a baseline, as Markdown shared by ``report.md`` and ``comment.md``: status
changes first, then latency regressions, new and removed rows, improvements, accuracy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from trtcheck.render.abtext import side_label
from trtcheck.render.escape import md
from trtcheck.render.text import NONE, PREDICTION_MARK, num
from trtcheck.results.ab import TEST
from trtcheck.results.baseline import (
    ACCURACY_FACTOR,
    EAGER,
    FAR_APART,
    IMPROVEMENT,
    INPUTS_CHANGED,
    NOT_COMPARABLE,
    NOT_GATED,
    NOT_REPRODUCIBLE,
    OUTPUT_CHANGED,
    PROCESSES,
    REGRESSION,
    SMALL,
    UNDECIDED,
    Diff,
    LatencyChange,
    RowChange,
    read,
)
from trtcheck.results.processes import SIDES
from trtcheck.results.record import Record
from trtcheck.status import FAILING, Status

Escape = Callable[[object], str]


def render_changes(record: Record, *, heading: str = "##", escape: Escape = md) -> str:
    """The record's changes against its baseline, or ``""`` when it was not compared."""
    diff = read(record.baseline)
    if diff is None:
        return ""
    shown = [c for c in ordered(diff) if c.shown]
    cuda = str(record.environment.get("device", "")).startswith("cuda")
    title = "Head against base" if diff.rule == PROCESSES else "Changes against the baseline"
    lines = [f"{heading} {title}", "", _gate(diff, escape, cuda, record.ab)]
    lines += [f"- ⚠️ {escape(w)}" for w in diff.warnings]
    lines += ["", count_line(diff) + "."]
    if diff.rule == PROCESSES:
        table = _process_table(diff, escape)
        lines += ["", *table] if table else []
        notes = kernel_notes(diff)
        if notes:
            lines += ["", KERNEL_SETS, "", *(f"- {escape(n)}" for n in notes)]
        # the rows the process table holds already: only status, accuracy and eager output
        # changes, without latency columns (their one figure per side is the process table's)
        shown = [c for c in shown if c.status_changed or c.accuracy_changed or c.eager]
        if shown:
            lines += ["", "| case | backend | profile | status | worst rel err | "
                          f"{EAGER_OUTPUTS} |", "|---|---|---|---|---|---|"]
            lines += [_line(c, escape, latency=False) for c in shown]
    elif shown:
        # the backend's ms beside the speedup, as information; under the latency metric they
        # are the gated figure already
        speed = diff.metric == "speedup"
        figure = "speedup" if speed else "backend ms (median)"
        lines += ["", "| case | backend | profile | status | worst rel err | "
                      f"{figure} [95% interval], baseline → this run | change |"
                      + (" backend ms (median), baseline → this run |" if speed else ""),
                  "|---|---|---|---|---|---|---|" + ("---|" if speed else "")]
        lines += [_line(c, escape, info=speed) for c in shown]
    return "\n".join(lines)


# Each category of :meth:`Diff.tally`, in the singular and the plural.
def _categories(metric: str) -> dict[str, tuple[str, str]]:
    """Each category of :meth:`Diff.tally`, in the singular and the plural, under ``metric``."""
    other = figure_name("latency" if metric == "speedup" else "speedup")
    return {
        REGRESSION: (f"{metric} regression", f"{metric} regressions"),
        "status": ("status change", "status changes"),
        "new": ("new row", "new rows"),
        "removed": ("removed row", "removed rows"),
        IMPROVEMENT: (f"row with {metric} improved", f"rows with {metric} improved"),
        "accuracy": ("accuracy change", "accuracy changes"),
        OUTPUT_CHANGED: ("output change", "output changes"),
        INPUTS_CHANGED: ("row whose inputs changed", "rows whose inputs changed"),
        NOT_REPRODUCIBLE: ("row not reproducible", "rows not reproducible"),
        "other": (f"row whose {other} worsened (not gated)",
                  f"rows whose {other} worsened (not gated)"),
        NOT_COMPARABLE: ("row with figures not comparable", "rows with figures not comparable"),
        UNDECIDED: ("row with not enough evidence", "rows with not enough evidence"),
        NOT_GATED: ("change not gated (within noise or unstable)",
                    "changes not gated (within noise or unstable)"),
        "unchanged": ("row unchanged", "rows unchanged"),
    }


def count_line(diff: Diff) -> str:
    """The changes counted by category: the same words in the terminal and every report. A
    category with no rows is left out, but for regressions, status changes and unchanged rows;
    where the speed was not judged, no speed category is counted, and the line says why."""
    names = _categories(diff.metric)
    unjudged = speed_not_judged(diff)
    parts = [f"{n} {names[what][n != 1]}" for what, n in diff.tally().items()
             if (n or what in (REGRESSION, "status", "unchanged"))
             and not (unjudged and what not in _NOT_SPEED)]
    if unjudged:
        return ", ".join(parts) + f"; {unjudged}"
    line = ", ".join(parts[:-1]) + f"; {parts[-1]}"
    if diff.rule == PROCESSES:
        decided, gated = diff.decided()
        line += f"; {decided} of {gated} rows decided"
    return line


# The categories of :meth:`Diff.tally` that say nothing of speed.
_NOT_SPEED = ("status", "new", "removed", "accuracy", *EAGER)


def speed_not_judged(diff: Diff) -> str:
    """Over processes, where no row was timed on both sides: ``speed not judged: …`` with the
    reason; ``""`` where the speed was judged (or the diff is against a baseline)."""
    if diff.rule != PROCESSES or (diff.level or {}).get("rows"):
        return ""
    why = ("every backend predicts, and a prediction times nothing a gate could use"
           if diff.changes and all(c.prediction for c in diff.changes)
           else "no row was timed on both sides")
    return f"speed not judged: {why}; statuses alone are compared"


def figure_name(metric: str) -> str:
    """What a metric's figure is called: ``latency``, or ``speedup over eager``."""
    return "latency" if metric == "latency" else "speedup over eager"


def _pct(metric: str, slowdown: float | None) -> str:
    """The change of the figure itself in percent (``+524.3%``: the latency grew, or the
    speedup over eager grew), from how many times slower the head is."""
    if slowdown is None or slowdown != slowdown or slowdown <= 0 or slowdown == float("inf"):
        return NONE
    change = slowdown if metric == "latency" else 1 / slowdown
    return f"{change - 1:+.1%}"


def verdict_words(metric: str, verdict: str) -> str:
    """A verdict in words: ``slower`` and ``faster`` for the latency alone; a change of the
    speedup over eager is named as such (``speedup over eager improved``)."""
    if verdict in (REGRESSION, IMPROVEMENT):
        if metric == "latency":
            return "slower" if verdict == REGRESSION else "faster"
        return f"{figure_name(metric)} {'worsened' if verdict == REGRESSION else 'improved'}"
    return f"{figure_name(metric)} {verdict}"


def change_text(lat: LatencyChange, *, interval: bool = True, processes: bool = True) -> str:
    """The change of the gated figure, the one way every report writes it: ``slower +524.3%
    [+236.2%, +1059.3%]``, ``speedup over eager improved +95.3%``, ``latency +2.1% (below
    threshold)``; the interval, under the rule over processes, in the same sense. When the other
    figure moved beyond the threshold too, it follows on the same line (``...; slower +512.6%``).
    ``interval`` and ``processes`` False leave out the interval and, for an undecided row, the
    processes it had (where the line says them otherwise)."""
    text = _said(lat.metric, lat.verdict, lat.slowdown, lat.interval if interval else None,
                 lat.processes if processes else None)
    if lat.other_metric and lat.other_verdict in (REGRESSION, IMPROVEMENT):
        text += "; " + _said(lat.other_metric, lat.other_verdict, lat.other_slowdown, None, None)
    return text


def _said(metric: str, verdict: str, slowdown: float | None,
          interval: tuple[float, float] | None, processes: tuple[int, int] | None) -> str:
    figure = _pct(metric, slowdown)
    if interval is not None:
        ends = sorted((_value(metric, interval[0]), _value(metric, interval[1])))
        figure += f" [{ends[0]:+.1%}, {ends[1]:+.1%}]"
    if verdict in (REGRESSION, IMPROVEMENT):
        return f"{verdict_words(metric, verdict)} {figure}"
    if verdict == UNDECIDED and processes:
        verdict += f" after {max(processes)} processes"
    return f"{figure_name(metric)} {figure} ({verdict})"


def _value(metric: str, slowdown: float) -> float:
    return (slowdown if metric == "latency" else 1 / slowdown) - 1 if slowdown > 0 else math.inf


def decision_lines(diff: Diff) -> list[str]:
    """One plain line per row whose latency was judged (under the rule over runs, per row that
    moved beyond the threshold) or whose eager outputs changed: what the terminal prints."""
    lines = []
    for c in ordered(diff):
        lat = c.latency
        said = [c.eager_text] if c.eager else []
        if lat is not None and not (diff.rule != PROCESSES and lat.verdict == SMALL
                                    and lat.other_verdict in (SMALL, None)):
            over = (f" over {'+'.join(map(str, lat.processes))} processes" if lat.processes
                    else " between two runs")
            kernels = f"; {lat.kernels}" if lat.kernels else ""
            said.insert(0, f"{change_text(lat, processes=False)}{over}{kernels}")
        if said:
            lines.append(f"{c.case_id} {c.backend} {c.profile}: {'; '.join(said)}")
    return lines


def kernel_notes(diff: Diff) -> list[str]:
    """One plain line per row whose processes ran several kernel sets, naming them: every
    report shows these, since a set only one side ran is a change of its own."""
    return [f"{c.case_id} {c.backend} {c.profile}: {c.latency.kernels}"
            for c in ordered(diff) if c.latency and c.latency.kernels]


# How an accuracy change is judged over processes, which every report of an ab job says.
ACCURACY_OVER_PROCESSES = (
    "Each side's worst relative error is its worst over its processes; an accuracy change is "
    f"one where the head's processes fall outside the spread of the base's by more than "
    f"×{ACCURACY_FACTOR:g}.")
EAGER_OUTPUTS = "eager outputs, head against base (same seeded inputs)"
KERNEL_SETS = ("Processes that ran different kernels (cuDNN's or cuBLAS's choice, another "
               "generated kernel) are judged like with like: within each kernel set both sides "
               "ran; a set one side alone ran is a change of its own.")


def _process_table(diff: Diff, escape: Escape) -> list[str]:
    """Every row judged over processes: the gated figure on each side and the change the rule
    judged, both from one statistic (each side's processes' geometric mean, trimmed as the test
    trims them), the change's interval and verdict; the other figure on each side beside it;
    the processes. Rows not judged (predictions, a side missing) are in the changes table;
    nothing judged, no table."""
    judged = [c for c in ordered(diff) if c.latency is not None]
    if not judged:
        return []
    other = "latency" if diff.metric == "speedup" else "speedup"
    statistic = "geometric mean over processes, 25% trimmed each end"
    lines = [f"| case | backend | profile | {figure_name(diff.metric)}, base → head ({statistic}) "
             f"| change [interval] | {figure_name(other)}, base → head | processes |",
             "|---|---|---|---|---|---|---|"]
    for c in judged:
        lat = c.latency
        assert lat is not None
        text = escape(change_text(lat))
        cells = [escape(c.case_id), escape(c.backend), escape(c.profile),
                 _pair(lat.before, lat.after, diff.metric),
                 f"**{text}**" if lat.worsened else text,
                 _pair(lat.other_before, lat.other_after, other),
                 " + ".join(map(str, lat.processes or ()))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _pair(before: float | None, after: float | None, metric: str) -> str:
    """``0.822× → 1.03×``, ``1.2 ms → 1.5 ms``; ``—`` for a side without a figure."""
    unit = "×" if metric == "speedup" else " ms"

    def one(x: float | None) -> str:
        return num(x, unit) if x is not None and math.isfinite(x) else NONE

    return f"{one(before)} → {one(after)}"


def gate_rule(diff: Diff, cuda: bool) -> str:
    """What the gate judged, and by which rule, in one paragraph."""
    what = ("the speedup over eager (the backend normalised by eager in the same process)"
            if diff.metric == "speedup"
            else f"the backend's absolute {'GPU' if cuda else 'CPU'} time (latency)")
    worse = "falls" if diff.metric == "speedup" else "grows"
    if not diff.comparable:
        return (f"Its speedup, latency and memory figures are {NOT_COMPARABLE} with this run's: "
                "nothing is gated on them.")
    if speed_not_judged(diff):  # the count line says why
        return ("Base and head run in one job, in fresh processes; their statuses, accuracy and "
                "the model's own eager outputs compared.")
    if diff.rule == PROCESSES:
        level = diff.level or {}
        return (f"Base and head measured in one job, in fresh processes. A row regresses when "
                f"{what} {worse} by more than {diff.threshold:.0%} and significantly across "
                f"processes: {TEST}, each at level {level.get('per_test', 0):.2g} (a "
                f"{level.get('alpha', 0):g} chance over the whole zoo, "
                f"{level.get('correction', '')}: {level.get('rows')} rows × "
                f"{level.get('looks')} looks). Intervals are at that level. The other figure is "
                "judged the same way and shown, not gated. " + ACCURACY_OVER_PROCESSES)
    return (f"Rule over runs: a row regresses when {what} {worse} by more than "
            f"{diff.threshold:.0%} and beyond both runs' 95% intervals. A row whose interval is "
            "wider than `unstable_ci` in either run is not gated (unstable) unless the "
            f"intervals' nearest ends alone differ by more than {FAR_APART:g} times. Those "
            "intervals hold one process each, blind to what moves between processes (compiled kernels, "
            "memory layout, clocks): a weaker rule than `trtcheck ab`'s over processes.")


def _gate(diff: Diff, escape: Escape, cuda: bool, ab: dict[str, Any] | None) -> str:
    base = diff.base
    labels = [side_label(ab, side) for side in SIDES]
    if labels[0] and labels[1]:
        sides = f"Base: {escape(labels[0])}; head: {escape(labels[1])}"
        if (ab or {}).get("same_tree"):
            sides += " (same tree: both sides ran the same code)"
        where = f"{sides}; on {escape(base.get('device_name') or NONE)}, torch " \
                f"{escape(base.get('torch') or NONE)}. "
    else:
        where = (f"{'Base' if diff.rule == PROCESSES else 'Baseline'}: commit "
                 f"{escape(base.get('git_commit') or NONE)} on "
                 f"{escape(base.get('device_name') or NONE)}, torch "
                 f"{escape(base.get('torch') or NONE)}. ")
    return where + gate_rule(diff, cuda)  # trtcheck's own words: nothing to escape


def ordered(diff: Diff) -> list[RowChange]:
    """The rows of a diff in the order every report gives them. Over processes (``trtcheck
    ab``), the record's own: the rows the head broke first, then the zoo's case order, then the
    rows only the base has; against a baseline, what needs attention first."""
    return list(diff.changes) if diff.rule == PROCESSES else sorted(diff.changes, key=_order)


def _order(change: RowChange) -> tuple[int, ...]:
    became_failing = change.after is not None and Status(change.after) in FAILING \
        and (change.before is None or Status(change.before) not in FAILING)
    return (not became_failing, not change.regressed,
            not (change.status_changed and change.before and change.after),
            change.before is not None, change.after is not None,
            not (change.latency and change.latency.verdict == IMPROVEMENT))


def _line(c: RowChange, escape: Escape, *, latency: bool = True, info: bool = True) -> str:
    lat = c.latency
    cells = [escape(c.case_id), escape(c.backend) + (f" {PREDICTION_MARK}" if c.prediction else ""),
             escape(c.profile), _status(c),
             _arrow(num(c.before_error), num(c.after_error)) if c.accuracy_changed
             else num(c.after_error if c.after is not None else c.before_error)]
    if latency:
        cells += [_figure(lat) if lat else NONE, _verdict(lat, escape) if lat else NONE]
        if info:
            cells.append(_arrow(num(lat.before_ms), num(lat.after_ms)) if lat else NONE)
    else:
        cells.append(f"**{escape(c.eager_text)}**" if c.eager == OUTPUT_CHANGED
                     else escape(c.eager_text) or NONE)
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


def _verdict(lat: LatencyChange, escape: Escape) -> str:
    text = escape(change_text(lat))
    return f"**{text}**" if lat.worsened else text
