"""``history.html``: each row over commits, one self-contained page (``trtcheck history``).

Per row: the speedup and the backend's latency at each commit with their intervals (repeats
of one commit drawn at the same place, so their spread shows), the commits where its status
changed, and those where the gate flagged a regression: the record's own baseline comparison
where it has one (``--baseline``), else this commit against the one before, by the same rule
and the record's saved gate settings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

from trtcheck.render.page import page, section, table
from trtcheck.render.svg import Flag, Point, Scale, Series, SeriesChart, esc, log_scale, series_chart
from trtcheck.render.text import KIND_NOTES, NONE, PREDICTION_MARK, num
from trtcheck.results.history import Commit, row_keys
from trtcheck.results.rows import Row, RowKey

ROW_LIMIT = 200  # rows drawn; beyond it, those that changed or regressed first, and a line


def render_history(commits: Sequence[Commit], *, unread: Sequence[str] = ()) -> str:
    """The page for ``commits`` (in order, :func:`trtcheck.results.history.order`, the rows
    the gate flagged marked by :func:`~trtcheck.results.history.flag`); ``unread``
    names the records that could not be read, and why."""
    index = [[{r.key: r for r in rec.rows} for rec in c.records] for c in commits]
    regressions = [c.regressions for c in commits]
    keys = row_keys(commits)
    statuses = {k: [_statuses(at, k) for at in index] for k in keys}
    changes = {k: _status_changes(statuses[k]) for k in keys}
    keys.sort(key=lambda k: (not any(k in r for r in regressions), not changes[k]))
    shown = keys[:ROW_LIMIT]
    n_records = sum(len(c.records) for c in commits)
    labels = [f"{c.label} ({c.time or 'time unknown'}; {len(c.records)} record"
              f"{'s' if len(c.records) != 1 else ''})" for c in commits]
    body = [
        "<header><h1>trtcheck history</h1>",
        f'<p class="facts">{len(commits)} commits, {n_records} records, {len(keys)} rows; '
        "ordered by the commit's time, then the record's start time.</p></header>",
        *(f'<p class="box warn">⚠ not read: {esc(u)}</p>' for u in unread),
        section("commits", "Commits", _commits(commits, regressions)),
        section("rows", "Rows over commits",
                '<p class="note">Each row: the speedup over eager (top; the dashed line is '
                "1.00×) and the backend's latency in ms (bottom), a dot per record with its 95% "
                "interval, the line through each commit's median record; several dots at one "
                "commit are repeats, their spread is the run-to-run noise. Red flags: the gate "
                "flagged a regression at that commit; amber dashed flags: the status changed. "
                "Hover a flag or the chart for the commit.</p>",
                f'<p class="note">Showing {ROW_LIMIT} of {len(keys)} rows, those that regressed '
                "or changed status first.</p>" if len(keys) > ROW_LIMIT else "",
                *(_row(k, commits, index, regressions, statuses[k], changes[k], labels)
                  for k in shown)),
    ]
    return page("trtcheck history", body)


def _statuses(records: list[dict[RowKey, Row]], key: RowKey) -> str:
    """The row's status at one commit: one word, or each repeat's where they differ."""
    found = list(dict.fromkeys(str(at[key].status) for at in records if key in at))
    return "/".join(found) if found else NONE


def _status_changes(statuses: list[str]) -> list[tuple[int, str]]:
    seen = [(i, s) for i, s in enumerate(statuses) if s != NONE]
    return [(i, f"{before} → {after}") for (_, before), (i, after) in pairwise(seen)
            if before != after]


def _point(at: int, value: float, low: float | None, high: float | None) -> Point | None:
    """A point to draw, or None for a value that cannot be (NaN, infinite); an interval that
    cannot be drawn is left out."""
    if not math.isfinite(value):
        return None
    drawn = low is not None and high is not None and math.isfinite(low) and math.isfinite(high)
    return Point(at, value, low if drawn else None, high if drawn else None)


def _commits(commits: Sequence[Commit], regressions: list[set[RowKey]]) -> str:
    rows = []
    for i, c in enumerate(commits):
        verdicts = ", ".join(str(v.verdict) for v in c.verdicts)
        rows.append([esc(i + 1), f"<code>{esc(c.label)}</code>", esc(c.time or NONE),
                     esc(len(c.records)), esc(verdicts),
                     f'<span class="s-fail">{len(regressions[i])}</span>' if regressions[i] else "0"])
    return table(["#", "commit", "time", "records", "verdicts", "rows flagged"], rows)


def _row(key: RowKey, commits: Sequence[Commit], index: list[list[dict[RowKey, Row]]],
         regressions: list[set[RowKey]], statuses: list[str], changes: list[tuple[int, str]],
         labels: list[str]) -> str:
    name = " · ".join(key)
    rows = [(i, at[key]) for i, records in enumerate(index) for at in records if key in at]
    prediction = next((r for _, r in rows if r.prediction), None)
    flags = [Flag(i, "warn", f"{labels[i]}: {what}") for i, what in changes]
    flags += [Flag(i, "fail", f"{labels[i]}: the gate flagged a regression")
              for i in range(len(commits)) if key in regressions[i]]
    latest = next((s for s in reversed(statuses) if s != NONE), NONE)
    head = (f"<h3>{esc(name)}{f' {PREDICTION_MARK}' if prediction else ''}</h3>"
            f'<p class="note">latest status {esc(latest)}'
            + (f"; status changes: {esc('; '.join(f'{labels[i]}: {w}' for i, w in changes))}"
               if changes else "") + "</p>")
    if prediction is not None:  # no speedup, and its latency is PyTorch's, not TensorRT's
        return head + f'<p class="note">{PREDICTION_MARK} {esc(KIND_NOTES[prediction.kind])}: ' \
                      "no speedup or latency is drawn.</p>"
    speed = [_point(i, r.latency.speedup, *(r.latency.interval or (None, None)))
             for i, r in rows if r.latency is not None]
    ms = []
    for i, r in rows:
        side = r.latency and (r.latency.backend_device or r.latency.backend)
        if side:
            ms.append(_point(i, side.median_ms, side.ci_low_ms, side.ci_high_ms))
    speed, ms = [p for p in speed if p], [p for p in ms if p]
    charts = []
    for points, unit, ref, what in ((speed, "×", 1.0, "speedup"), (ms, " ms", None, "backend ms")):
        if not points:
            charts.append(f'<p class="note">no {what} recorded</p>')
            continue
        values = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
        scale = (log_scale(values, around=ref or values[0], width=100.0) if min(values) > 0
                 else Scale(min(values), max(values) or 1.0, width=100.0))
        chart = SeriesChart([Series(f"{name}: {what}", points, "s0" if ref else "s1",
                                    frozenset(i for i, _ in rows) - {p.at for p in points})],
                            scale,
                            len(commits), flags, (commits[0].label, commits[-1].label), unit, ref)
        latest_point = points[-1]
        caption = f"{name}: {what} over {len(commits)} commits, latest {num(latest_point.value, unit)}"
        charts.append(series_chart(chart, caption))
    return head + '<div class="pair">' + "\n".join(charts) + "</div>"
