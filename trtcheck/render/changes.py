"""Changes against a baseline, as Markdown shared by ``report.md`` and ``comment.md``: status
changes first, then latency regressions, new and removed rows, improvements, accuracy."""

from __future__ import annotations

from collections.abc import Callable

from trtcheck.render.text import NONE, PREDICTION_MARK, md, num
from trtcheck.results.ab import TEST
from trtcheck.results.baseline import (
    ACCURACY_FACTOR,
    IMPROVEMENT,
    NOT_COMPARABLE,
    PROCESSES,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
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
    title = "Head against base" if diff.rule == PROCESSES else "Changes against the baseline"
    lines = [f"{heading} {title}", "", _gate(diff, escape, cuda)]
    lines += [f"- ⚠️ {escape(w)}" for w in diff.warnings]
    lines += ["", count_line(diff) + "."]
    if diff.rule == PROCESSES:
        lines += ["", *_process_table(diff, escape)]
        notes = kernel_notes(diff)
        if notes:
            lines += ["", KERNEL_SETS, "", *(f"- {escape(n)}" for n in notes)]
        shown = [c for c in shown if c.status_changed or c.accuracy_changed]
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
    UNDECIDED: ("row with not enough evidence", "rows with not enough evidence"),
    "unchanged": ("row unchanged", "rows unchanged"),
}


def count_line(diff: Diff) -> str:
    """The changes counted by category: the same words in the terminal and every report. A
    category with no rows is left out, but for regressions, status changes and unchanged rows."""
    parts = [f"{n} {_CATEGORIES[what][n != 1]}" for what, n in diff.tally().items()
             if n or what in (REGRESSION, "status", "unchanged")]
    line = ", ".join(parts[:-1]) + f"; {parts[-1]}"
    if diff.rule == PROCESSES:
        decided, gated = diff.decided()
        line += f"; {decided} of {gated} rows decided"
    return line


STATUSES_ONLY = ("No row has a latency to judge (the backends predict, or no row was timed on both "
                 "sides): statuses alone are compared.")


def statuses_only(diff: Diff) -> bool:
    """Whether a diff over processes judged no latency at all (prediction backends)."""
    return diff.rule == PROCESSES and not (diff.level or {}).get("rows")


# How the rule over processes names each latency verdict.
WORDS = {REGRESSION: "slower", IMPROVEMENT: "faster", UNCHANGED: "unchanged",
         UNDECIDED: "not enough evidence"}


def decision_text(lat: LatencyChange) -> str:
    """A verdict over processes in words, the undecided ones with the processes they had."""
    word = WORDS.get(lat.verdict, lat.verdict)
    if lat.verdict == UNDECIDED and lat.processes:
        word += f" after {max(lat.processes)} processes"
    return word


def interval_text(lat: LatencyChange) -> str:
    """The change over processes, ``+12% [+8%, +16%]`` (positive: slower), in the metric's
    sense: the speedup's loss, or the time's gain."""
    def pct(x: float) -> str:
        return f"{x - 1:+.1%}" if x == x else NONE  # NaN: no figure

    if lat.interval is None:
        return pct(lat.slowdown)
    return f"{pct(lat.slowdown)} [{pct(lat.interval[0])}, {pct(lat.interval[1])}]"


def decision_lines(diff: Diff) -> list[str]:
    """One plain line per row judged over processes: what the terminal prints."""
    return [f"{decision_text(c.latency)}: {c.case_id} {c.backend} {c.profile}: "
            f"{interval_text(c.latency)} over {'+'.join(map(str, c.latency.processes or ()))} "
            "processes" + (f"; {c.latency.kernels}" if c.latency.kernels else "")
            for c in sorted(diff.changes, key=_order) if c.latency is not None]


def kernel_notes(diff: Diff) -> list[str]:
    """One plain line per row whose processes ran several kernel sets, naming them: every
    report shows these, since a set only one side ran is a change of its own."""
    return [f"{c.case_id} {c.backend} {c.profile}: {c.latency.kernels}"
            for c in sorted(diff.changes, key=_order) if c.latency and c.latency.kernels]


# How an accuracy change is judged over processes, which every report of an ab job says.
ACCURACY_OVER_PROCESSES = (
    "Each side's worst relative error is its worst over its processes; an accuracy change is "
    f"one where the head's processes fall outside the spread of the base's by more than "
    f"×{ACCURACY_FACTOR:g}.")
KERNEL_SETS = ("Processes that ran different kernels (cuDNN's or cuBLAS's choice, another "
               "generated kernel) are judged like with like: within each kernel set both sides "
               "ran; a set one side alone ran is a change of its own.")


def _process_table(diff: Diff, escape: Escape) -> list[str]:
    """Every row judged over processes: its figure on each side, the change with its interval
    and the verdict. Rows not judged (predictions, a side missing) are in the changes table."""
    figure = "speedup" if diff.metric == "speedup" else "backend ms"
    lines = [f"| case | backend | profile | {figure} base → head | change (+ slower) "
             "[interval] | verdict | processes |", "|---|---|---|---|---|---|---|"]
    for c in sorted(diff.changes, key=_order):
        lat = c.latency
        if lat is None:
            continue
        unit = "×" if lat.metric == "speedup" else ""
        verdict = decision_text(lat)
        cells = [escape(c.case_id), escape(c.backend), escape(c.profile),
                 f"{num(lat.before, unit)} → {num(lat.after, unit)}", interval_text(lat),
                 f"**{verdict}**" if lat.verdict == REGRESSION else verdict,
                 " + ".join(map(str, lat.processes or ()))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _gate(diff: Diff, escape: Escape, cuda: bool) -> str:
    base = diff.base
    what = ("the speedup (backend normalised by eager in the same run)" if diff.metric == "speedup"
            else f"the backend's absolute {'GPU' if cuda else 'CPU'} time")
    if not diff.comparable:
        rule = (f"Its speedup, latency and memory figures are {NOT_COMPARABLE} with this run's: "
                "nothing is gated on them.")
    elif statuses_only(diff):
        rule = STATUSES_ONLY
    elif diff.rule == PROCESSES:
        level = diff.level or {}
        rule = (f"Base and head measured in one job, in fresh processes. A row is slower when "
                f"{what} changed by more than {diff.threshold:.0%} and significantly across "
                f"processes: {TEST}, each at level {level.get('per_test', 0):.2g} (a "
                f"{level.get('alpha', 0):g} chance over the whole zoo, "
                f"{level.get('correction', '')}: {level.get('rows')} rows × "
                f"{level.get('looks')} looks). Intervals are at that level. "
                + ACCURACY_OVER_PROCESSES)
    else:
        rule = (f"Rule over runs: a row regresses when {what} is more than {diff.threshold:.0%} "
                "slower and beyond both runs' 95% intervals. Those intervals hold one process "
                "each, blind to what moves between processes (compiled kernels, memory layout, "
                "clocks): a weaker rule than `trtcheck ab`'s over processes.")
    return (f"{'Base' if diff.rule == PROCESSES else 'Baseline'}: commit "
            f"{escape(base.get('git_commit') or NONE)} on "
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
