"""Charts as SVG text, written by Python: readable with JavaScript off and under a strict
Content-Security-Policy, since nothing runs in the browser to draw them.

Two shapes cover every chart of ``report.html`` and the history page: an *interval chart*
(a row per label: a value, its interval, a reference line; :func:`interval_chart`) and a
*series chart* (points over commits with their intervals and marks; :func:`series_chart`).
Colours and fonts come from the page's stylesheet through classes: no ``style`` attribute,
which a strict policy would refuse. Every text is escaped by :func:`esc`.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from trtcheck.render.escape import plain
from trtcheck.render.text import cut

ROW_HEIGHT = 16
LABEL_WIDTH = 330  # px for a row's label, left of the plot
NOTE_WIDTH = 190  # px at least for a row's note, right of the plot
NOTE_CHAR = 7.2  # px a note's character may take (11 px sans-serif)
NOTE_WIDE = 11.0  # px for the characters wider than that: % alone is about 10 px
WIDE_CHARS = frozenset("%@MW—…×⚠")
PLOT_WIDTH = 420
LABEL_CHARS = 52  # a longer label is cut; its <title> keeps it whole


def esc(text: object) -> str:
    """Text made safe inside HTML or SVG, as content and as a quoted attribute: control and
    bidirectional-override characters dropped, ``& < > " '`` escaped."""
    return _esc(str(text))


@functools.lru_cache(maxsize=1 << 16)  # a big report escapes the same ids and names many times
def _esc(text: str) -> str:
    return html.escape(plain(text), quote=True)


def _f(x: float) -> str:
    """A coordinate, short: whole pixels to one decimal."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Scale:
    """Values ``low``..``high`` onto ``0``..``width`` pixels, linear or logarithmic; values
    outside are clamped to the edge (and :meth:`clamped` says so)."""

    low: float
    high: float
    log: bool = False
    width: float = PLOT_WIDTH

    def _t(self, v: float) -> float:
        return math.log10(v) if self.log else v

    def x(self, v: float) -> float:
        v = min(max(v, self.low), self.high)
        lo, hi = self._t(self.low), self._t(self.high)
        return (self._t(v) - lo) / (hi - lo) * self.width if hi > lo else 0.0

    def clamped(self, v: float) -> bool:
        return v < self.low or v > self.high

    def ticks(self) -> list[float]:
        if self.log:
            lo, hi = math.floor(math.log10(self.low)), math.ceil(math.log10(self.high))
            steps = [10.0 ** e * m for e in range(lo, hi + 1) for m in (1, 2, 5)]
            return [t for t in steps if self.low <= t <= self.high][:12] or [self.low, self.high]
        step = _nice((self.high - self.low) / 5)
        first = math.ceil(self.low / step) * step
        return [round(first + i * step, 10) for i in range(int((self.high - first) / step) + 1)]


def _nice(raw: float) -> float:
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def log_scale(values: Sequence[float], *, around: float = 1.0, width: float = PLOT_WIDTH) -> Scale:
    """A logarithmic scale holding ``values`` (positive ones) and ``around``, padded a little."""
    finite = [v for v in values if v > 0 and math.isfinite(v)] + [around]
    low, high = min(finite) / 1.25, max(finite) * 1.25
    return Scale(low, high, log=True, width=width)


def tick_text(v: float, unit: str = "") -> str:
    return f"{v:.3g}{unit}"


@dataclass(frozen=True)
class Mark:
    """One row of an interval chart: ``value`` (None: no figure, only the note), its interval
    ``low``..``high`` when known, ``tone`` a CSS class (``pass``, ``fail``, ``warn``, ``pred``,
    ``muted``), ``note`` the text right of the plot, ``title`` the hover text (the whole label
    and figures), ``band`` a second, lighter interval drawn under the first (a baseline's)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    tone: str = "pass"
    note: str = ""
    title: str = ""
    band: tuple[float, float] | None = None
    symbol: str = ""  # drawn at the value instead of a dot: ``⚠`` for NaN/Inf


@dataclass(frozen=True)
class Reference:
    value: float
    label: str


def note_width(text: str) -> float:
    """The px a note may take, each character at the most it may: the chart is made that much
    wider, so that no note is cut at its edge."""
    return sum(NOTE_WIDE if c in WIDE_CHARS else NOTE_CHAR for c in plain(text))


def interval_chart(marks: Sequence[Mark], scale: Scale, *, refs: Sequence[Reference] = (),
                   unit: str = "", caption: str = "", css: str = "chart") -> str:
    """A horizontal chart, a row per mark: its interval as a bar, its value as a dot, with
    reference lines across every row and an axis of ticks at the top."""
    top = 22
    height = top + ROW_HEIGHT * len(marks) + 18  # the reference lines' labels go below the rows
    notes = max((note_width(m.note) for m in marks), default=0.0)
    width = LABEL_WIDTH + scale.width + max(NOTE_WIDTH, 8 + notes)
    x0 = LABEL_WIDTH
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css}" width="{_f(width)}" '
             f'height="{height}" viewBox="0 0 {_f(width)} {height}" role="img" '
             f'aria-label="{esc(caption)}">', f"<title>{esc(caption)}</title>"]
    for i in range(0, len(marks), 2):  # zebra stripes help the eye along a long row
        parts.append(f'<rect class="stripe" x="0" y="{top + i * ROW_HEIGHT}" width="{_f(width)}" '
                     f'height="{ROW_HEIGHT}"/>')
    for t in scale.ticks():
        x = x0 + scale.x(t)
        parts.append(f'<line class="grid" x1="{_f(x)}" y1="{top - 4}" x2="{_f(x)}" y2="{height - 4}"/>'
                     f'<text class="tick" x="{_f(x)}" y="{top - 8}">{esc(tick_text(t, unit))}</text>')
    for ref in refs:
        x = x0 + scale.x(ref.value)
        parts.append(f'<line class="ref" x1="{_f(x)}" y1="{top - 4}" x2="{_f(x)}" y2="{height - 2}"/>'
                     f'<text class="reflabel" x="{_f(x + 3)}" y="{height - 3}">{esc(ref.label)}</text>')
    for i, m in enumerate(marks):
        parts.append(_row(m, scale, x0, top + i * ROW_HEIGHT))
    parts.append("</svg>")
    return "".join(parts)


def _row(m: Mark, scale: Scale, x0: float, y: float) -> str:
    mid = y + ROW_HEIGHT / 2
    out = [f'<g class="{esc(m.tone)}"><title>{esc(m.title or m.label)}</title>',
           f'<text class="label" x="{x0 - 6}" y="{_f(mid + 4)}">'
           f'{esc(cut(plain(m.label), LABEL_CHARS))}</text>']
    if m.band is not None:
        a, b = (x0 + scale.x(v) for v in m.band)
        out.append(f'<rect class="band" x="{_f(a)}" y="{_f(y + 3)}" width="{_f(max(b - a, 1))}" '
                   f'height="{ROW_HEIGHT - 6}"/>')
    if m.low is not None and m.high is not None:
        a, b = (x0 + scale.x(v) for v in (m.low, m.high))
        out.append(f'<rect class="bar" x="{_f(a)}" y="{_f(y + 5)}" width="{_f(max(b - a, 1))}" '
                   f'height="{ROW_HEIGHT - 10}"/>')
    if m.value is not None and not math.isnan(m.value):
        x = x0 + scale.x(m.value)
        if m.symbol:
            out.append(f'<text class="symbol" x="{_f(x)}" y="{_f(mid + 4)}">{esc(m.symbol)}</text>')
        else:
            out.append(f'<circle class="dot" cx="{_f(x)}" cy="{_f(mid)}" r="3.5"/>')
        if scale.clamped(m.value):  # beyond the axis: an arrow at the edge says so
            edge = x0 + (scale.width if m.value > scale.high else 0)
            arrow = "»" if m.value > scale.high else "«"
            out.append(f'<text class="beyond" x="{_f(edge)}" y="{_f(mid + 4)}">{arrow}</text>')
    out.append(f'<text class="note" x="{_f(x0 + scale.width + 8)}" y="{_f(mid + 4)}">'
               f'{esc(m.note)}</text></g>')
    return "".join(out)


@dataclass(frozen=True)
class Point:
    """One record's figure in a series: at commit ``at`` (its position), ``value`` and its
    interval; several points may share ``at`` (repeats of one commit)."""

    at: int
    value: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Flag:
    """A mark above the series at commit ``at``: ``tone`` a CSS class, ``title`` its hover text."""

    at: int
    tone: str
    title: str


@dataclass(frozen=True)
class Series:
    """A row's figure over commits; ``breaks``: commits where the row ran without a figure (it
    errored there), at which its line is broken, not drawn through."""

    name: str
    points: Sequence[Point]
    css: str = "s0"
    breaks: frozenset[int] = frozenset()


@dataclass(frozen=True)
class SeriesChart:
    """A small chart of one row over commits: ``series`` share the y ``scale``; ``flags`` mark
    status changes and flagged regressions; ``ends`` name the first and the last commit."""

    series: Sequence[Series]
    scale: Scale
    n: int
    flags: Sequence[Flag] = field(default_factory=tuple)
    ends: tuple[str, str] = ("", "")
    unit: str = ""
    ref: float | None = None


SERIES_WIDTH = 560
SERIES_HEIGHT = 110


def series_chart(chart: SeriesChart, caption: str) -> str:
    """The chart: x the commit positions, y its scale (drawn upward); each point's interval as
    a vertical line, the median of each commit's points joined by a line, flags above."""
    left, top, plot_h = 44, 14, SERIES_HEIGHT - 30
    plot_w = SERIES_WIDTH - left - 8
    step = plot_w / max(chart.n - 1, 1)

    def x(at: int) -> float:
        return left + at * step if chart.n > 1 else left + plot_w / 2

    def y(v: float) -> float:
        return top + plot_h - chart.scale.x(v) / chart.scale.width * plot_h

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="series" width="{SERIES_WIDTH}" '
             f'height="{SERIES_HEIGHT}" viewBox="0 0 {SERIES_WIDTH} {SERIES_HEIGHT}" role="img" '
             f'aria-label="{esc(caption)}"><title>{esc(caption)}</title>']
    for t in chart.scale.ticks()[::2] if len(chart.scale.ticks()) > 6 else chart.scale.ticks():
        parts.append(f'<line class="grid" x1="{left}" y1="{_f(y(t))}" x2="{left + plot_w}" '
                     f'y2="{_f(y(t))}"/><text class="ytick" x="{left - 4}" y="{_f(y(t) + 3)}">'
                     f'{esc(tick_text(t, chart.unit))}</text>')
    if chart.ref is not None:
        parts.append(f'<line class="ref" x1="{left}" y1="{_f(y(chart.ref))}" x2="{left + plot_w}" '
                     f'y2="{_f(y(chart.ref))}"/>')
    for f in chart.flags:
        parts.append(f'<g class="{esc(f.tone)}"><title>{esc(f.title)}</title>'
                     f'<line class="flag" x1="{_f(x(f.at))}" y1="{top - 6}" x2="{_f(x(f.at))}" '
                     f'y2="{top + plot_h}"/><path class="flaghead" d="M{_f(x(f.at) - 4)} {top - 10}'
                     f'h8l-4 6z"/></g>')
    for s in chart.series:
        whiskers = "".join(f"M{_f(x(p.at))} {_f(y(p.low))}V{_f(y(p.high))}" for p in s.points
                           if p.low is not None and p.high is not None)
        if whiskers:
            parts.append(f'<path class="{s.css} whisker" d="{whiskers}"/>')
        by_commit: dict[int, list[float]] = {}
        for p in s.points:
            by_commit.setdefault(p.at, []).append(p.value)
        segments: list[list[str]] = []
        previous = None
        for at, vs in sorted(by_commit.items()):
            if previous is None or any(previous < b < at for b in s.breaks):
                segments.append([])
            segments[-1].append(f"{_f(x(at))},{_f(y(sorted(vs)[len(vs) // 2]))}")
            previous = at
        for segment in segments:
            parts.append(f'<polyline class="{s.css} line" points="{" ".join(segment)}"/>')
        dots = "".join(f"M{_f(x(p.at))} {_f(y(p.value))}h0.01" for p in s.points)
        parts.append(f'<path class="{s.css} dots" d="{dots}"><title>{esc(s.name)}</title></path>')
    first, last = chart.ends
    parts.append(f'<text class="ytick" x="{left + 40}" y="{SERIES_HEIGHT - 3}">{esc(first)}</text>'
                 f'<text class="ytick" x="{left + plot_w}" y="{SERIES_HEIGHT - 3}">{esc(last)}</text>'
                 "</svg>")
    return "".join(parts)
