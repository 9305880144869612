"""``trtcheck ab``'s record and its decision rule: base and head measured in one job, the process
the unit of replication.

Each side ran in several fresh processes; each process gave every row it ran one figure (the
speedup, eager ÷ backend interleaved in that process, or the backend's latency). A row is
judged on those figures alone: Welch's one-sided t test on their logarithms, at a level
corrected for every row and every look of the sequential step (Bonferroni), and the change's
point estimate beyond the threshold. No torch, no scipy: the t distribution is
:mod:`trtcheck.results.stats`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from trtcheck.results.baseline import (
    IMPROVEMENT,
    INPUTS_CHANGED,
    NOT_REPRODUCIBLE,
    OUTPUT_CHANGED,
    PROCESSES,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
    Diff,
    LatencyChange,
    RowChange,
    compare,
)
from trtcheck.results.jsontext import finite
from trtcheck.results.kernelsets import kernel_line, kernel_sets
from trtcheck.results.processes import SIDES, ProcessFigure, figures_of, sides
from trtcheck.results.record import Record
from trtcheck.results.rows import Row, RowKey
from trtcheck.results.stats import t_quantile, t_sf, trimmed, trimmed_mean

SLOWER, FASTER = "slower", "faster"  # with baseline's UNCHANGED and UNDECIDED, the four verdicts
DECIDED = (SLOWER, FASTER, UNCHANGED)
TEST = "Welch's one-sided t test on per-process log figures, 25% trimmed (Yuen's)"
# The share of processes cut off each end of a side before the test (Yuen's trimmed means): one
# process of 4 to 7 a side, two of 8 to 11, three of 12 to 15, whatever disturbed them.
TRIM = 0.25


@dataclass(frozen=True)
class Level:
    """The level of each test: ``alpha`` (the chance identical code flags any row in a job)
    split over ``rows`` gated rows and ``looks`` looks of the sequential step."""

    alpha: float
    rows: int
    looks: int

    @property
    def per_test(self) -> float:
        return self.alpha / max(1, self.rows * self.looks)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "per_test": self.per_test,
                "correction": "Bonferroni over rows × looks"}


def looks(start: int, cap: int, step: int) -> int:
    """How many times a row can be judged: at ``start`` processes a side, then every ``step``
    more, the last at ``cap``."""
    return 1 + max(0, math.ceil((cap - start) / step))


@dataclass(frozen=True)
class Decision:
    """One row's verdict over processes.

    ``change`` is how many times slower the head is (above 1: slower; the base's speedup over
    the head's, or the head's latency over the base's), a geometric mean over processes;
    ``low``/``high`` its interval at the corrected level (each side one-sided at ``level``);
    ``processes`` the figures each side gave; ``p_slower`` the one-sided p-value of slower;
    ``base``/``head`` each side's figure the change is the ratio of (the geometric mean of its
    processes' figures, trimmed as the test trims them), so that the two never disagree."""

    verdict: str
    change: float | None
    low: float | None
    high: float | None
    processes: tuple[int, int]
    p_slower: float | None
    level: float
    why: str = ""
    base: float | None = None
    head: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: finite(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Decision:
        values = {k: (float(v) if isinstance(v, str) and k in _NUMBERS else v)
                  for k, v in d.items() if k in _DECISION_FIELDS}
        values["processes"] = tuple(values.get("processes") or (0, 0))
        return cls(**values)


_NUMBERS = ("change", "low", "high", "base", "head")
_DECISION_FIELDS = ("verdict", "change", "low", "high", "processes", "p_slower", "level", "why",
                    "base", "head")


def decide(base: Sequence[float], head: Sequence[float], *, metric: str, threshold: float,
           level: float) -> Decision:
    """Judge one row from each side's per-process figures (speedups, or latencies in ms with
    ``metric`` ``latency``): slower when the change is beyond ``threshold`` and the test says
    slower at ``level``; faster likewise; unchanged when the interval lies within the threshold
    both ways; otherwise not enough evidence. The test is Welch's on the log figures' trimmed
    means (Yuen's: :data:`TRIM` cut off each end), so one disturbed process cannot decide or
    block a verdict alone."""
    b = [math.log(x) for x in base if x is not None and x > 0 and math.isfinite(x)]
    h = [math.log(x) for x in head if x is not None and x > 0 and math.isfinite(x)]
    n = (len(b), len(h))
    if min(n) < 2:
        return Decision(UNDECIDED, None, None, None, n, None, level,
                        "fewer than 2 processes with a figure on a side",
                        math.exp(trimmed_mean(b, TRIM)) if b else None,
                        math.exp(trimmed_mean(h, TRIM)) if h else None)
    (mb, vb, kb), (mh, vh, kh) = trimmed(b, TRIM), trimmed(h, TRIM)
    # d > 0: the head is slower (a lower speedup, or a longer time)
    d = (mb - mh) if metric == "speedup" else (mh - mb)
    se2 = vb + vh
    bound = math.log1p(threshold)
    if se2 <= 0:  # every process read the same on both sides: the change is known exactly
        p = 0.0 if d > 0 else 1.0
        low = high = d
    else:
        se = math.sqrt(se2)
        df = se2 ** 2 / (vb ** 2 / (kb - 1) + vh ** 2 / (kh - 1))
        p = t_sf(d / se, df)
        q = t_quantile(1 - level, df)
        low, high = d - q * se, d + q * se
    if d > bound and low > 0:
        verdict = SLOWER
    elif d < -bound and high < 0:
        verdict = FASTER
    elif -bound < low and high < bound:
        verdict = UNCHANGED
    else:
        verdict = UNDECIDED
    return Decision(verdict, math.exp(d), math.exp(low), math.exp(high), n, p, level,
                    base=math.exp(mb), head=math.exp(mh))


def decide_row(base: Sequence[ProcessFigure], head: Sequence[ProcessFigure], *, metric: str,
               threshold: float, level: float) -> Decision:
    """Judge one row like with like. Where its processes ran several kernel sets and some ran
    on both sides, the change is judged within each such set (at ``level`` split over them,
    Bonferroni), the processes of a set one side alone ran left out (a change in itself, which
    :func:`kernel_line` names); the row is slower (faster) when a set says so and none says the
    opposite, unchanged when every set says so. Where no set ran on both sides (the head's
    code changed the kernels everywhere), or one set ran throughout, all processes are judged
    together (:func:`decide`)."""
    sets = kernel_sets(base, head, metric)
    shared = [k for k in sets if k.shared]
    if len(sets) < 2 or not shared:
        return decide(figures_of(base, metric), figures_of(head, metric), metric=metric,
                      threshold=threshold, level=level)
    judged = []
    for k in shared:
        b = [f for f in base if f.kernel_set == k.fingerprint]
        h = [f for f in head if f.kernel_set == k.fingerprint]
        judged.append((k, decide(figures_of(b, metric), figures_of(h, metric), metric=metric,
                                 threshold=threshold, level=level / len(shared))))
    usable = [(k, d) for k, d in judged if d.p_slower is not None]
    verdicts = {d.verdict for _, d in usable}
    if not usable:
        verdict = UNDECIDED
    elif SLOWER in verdicts and FASTER not in verdicts:
        verdict = SLOWER
    elif FASTER in verdicts and SLOWER not in verdicts:
        verdict = FASTER
    elif verdicts == {UNCHANGED} and len(usable) == len(judged):
        verdict = UNCHANGED
    else:
        verdict = UNDECIDED
    # the figure shown: the set that decided, else the one with the most processes
    _, shown = max(usable or judged, key=lambda kd: (kd[1].verdict == verdict,
                                                     sum(kd[1].processes)))
    why = "judged within the kernel sets both sides ran: " + "; ".join(
        f"{k.letter} {d.verdict} over {d.processes[0]}+{d.processes[1]}" for k, d in judged)
    n = (sum(d.processes[0] for _, d in judged), sum(d.processes[1] for _, d in judged))
    return replace(shown, verdict=verdict, processes=n, level=level, why=why)


def gated(base: Record, head: Record) -> list[RowKey]:
    """The rows whose latency is judged: measured (not a prediction) and timed on both sides
    (a row that failed before its timing has no latency to judge)."""
    before = {r.key: r for r in base.rows}
    return [r.key for r in head.rows
            if r.key in before and not r.prediction and not before[r.key].prediction
            and r.latency is not None and before[r.key].latency is not None]


# The rule's words as the diff's latency verdicts: unchanged and not enough evidence are the same.
_VERDICTS = {SLOWER: REGRESSION, FASTER: IMPROVEMENT}


def to_diff(base: Record, head: Record, decisions: Mapping[RowKey, Decision],
            figures: Mapping[RowKey, Mapping[str, Sequence[ProcessFigure]]], *, metric: str,
            threshold: float, level: Level, differences: Mapping[str, str] | None = None) -> Diff:
    """The head against the base: statuses, rows added and removed, accuracy as
    :func:`trtcheck.results.baseline.compare` reports them, the model's own eager outputs
    (:func:`eager_change`, ``differences`` each case's in words), and each gated row's latency
    as its decision over processes."""
    diff = compare(base, head, metric=metric, threshold=threshold)
    changes = []
    for c in diff.changes:
        key = RowKey(c.case_id, c.backend, c.profile)
        c = _accuracy_over_processes(c, figures.get(key))
        eager = eager_change(figures.get(key) or {}, (differences or {}).get(c.case_id, ""))
        if eager is not None:
            c = replace(c, eager=eager[0], eager_detail=eager[1])
        decision = decisions.get(key)
        if decision is None or c.before is None or c.after is None:
            changes.append(replace(c, latency=None))
            continue
        interval = ((decision.low, decision.high)
                    if decision.low is not None and decision.high is not None else None)
        other = "latency" if metric == "speedup" else "speedup"
        # the figure not gated, judged by the same test at the same level, never gated
        seen = decide(*(figures_of(figures[key][side], other) for side in SIDES), metric=other,
                      threshold=threshold, level=level.per_test)
        latency = decision if metric == "latency" else seen
        changes.append(replace(c, latency=LatencyChange(
            metric, _figure(decision.base), _figure(decision.head),
            decision.change if decision.change is not None else math.nan,
            _VERDICTS.get(decision.verdict, decision.verdict), before_ms=latency.base,
            after_ms=latency.head, interval=interval, processes=decision.processes,
            other_metric=other, other_slowdown=seen.change,
            other_verdict=_VERDICTS.get(seen.verdict, seen.verdict),
            kernels=kernel_line(kernel_sets(figures[key]["base"], figures[key]["head"], metric),
                                metric),
            other_before=seen.base, other_after=seen.head)))
    return replace(diff, changes=changes, rule=PROCESSES, level=level.to_dict())


def eager_change(per: Mapping[str, Sequence[ProcessFigure]],
                 difference: str) -> tuple[str, str] | None:
    """The model's own eager outputs, the head's against the base's on the same seeded inputs:
    None where they agree or were not kept; else the verdict and what it rests on. A side whose
    processes gave more than one digest is not reproducible (its inputs or outputs move from
    one build to the next) and its outputs are not compared; a head that builds other inputs
    is named as such; otherwise the outputs changed, by ``difference`` (the values compared:
    ``max abs 1.2e+03, 16 of 48 int64 values differ``)."""
    seen = {side: list(dict.fromkeys(f.eager for f in per.get(side, ()) if f.eager))
            for side in SIDES}
    if not all(seen.values()):
        return None
    for side in SIDES:
        if len(seen[side]) > 1:
            what = ("inputs" if len({d.partition("/")[0] for d in seen[side]}) > 1
                    else "eager outputs")
            n = sum(1 for f in per[side] if f.eager)
            return NOT_REPRODUCIBLE, (f"the {side}'s {n} processes built {len(seen[side])} "
                                      f"different {what}; its outputs are not compared")
    (base,), (head,) = seen["base"], seen["head"]
    if base == head:
        return None
    if base.partition("/")[0] != head.partition("/")[0]:
        return INPUTS_CHANGED, "the head builds other seeded inputs; outputs not compared"
    return OUTPUT_CHANGED, difference or "eager's outputs differ"


def _figure(value: float | None) -> float:
    return math.nan if value is None else value


def _accuracy_over_processes(change: RowChange,
                             per: Mapping[str, Sequence[ProcessFigure]] | None) -> RowChange:
    """The change with each side's worst relative error over its processes, and the spread
    of each side's errors, by which an accuracy change is judged
    (:attr:`~trtcheck.results.baseline.RowChange.accuracy_changed`): like with like, over the
    processes of the kernel sets both sides ran where some did (another kernel gives other
    rounding: a set one side alone ran is named as a change of its own)."""
    if not per:
        return change
    worst = [[f.max_rel for f in per[side] if f.max_rel is not None] for side in SIDES]
    shared = {k.fingerprint for k in kernel_sets(per["base"], per["head"], "speedup")
              if k.shared}
    alike = [[f.max_rel for f in per[side] if f.max_rel is not None
              and (not shared or f.kernel_set in shared)] for side in SIDES]
    if not all(worst) or not all(alike):
        return change
    b, h = ((min(v), max(v)) for v in alike)
    return replace(change, before_error=max(worst[0]), after_error=max(worst[1]),
                   before_errors=b, after_errors=h)


def judge(base: Record, head: Record,
          figures: Mapping[RowKey, Mapping[str, Sequence[ProcessFigure]]], *, metric: str,
          threshold: float, level: Level,
          differences: Mapping[str, str] | None = None) -> tuple[dict[RowKey, Decision], Diff]:
    """Every gated row decided at once on the figures it has (no sequential step: ``trtcheck
    diff`` of ``ab`` records), and the diff those decisions give."""
    decisions = {key: decide_row(figures[key]["base"], figures[key]["head"], metric=metric,
                                 threshold=threshold, level=level.per_test)
                 for key in gated(base, head) if key in figures}
    return decisions, to_diff(base, head, decisions, figures, metric=metric,
                              threshold=threshold, level=level, differences=differences)


Figures = Mapping[RowKey, Mapping[str, Sequence[ProcessFigure]]]


def sequential(keys: Sequence[RowKey], figures: Callable[[], Figures],
               measure_more: Callable[[list[RowKey], int], bool], *, start: int, cap: int,
               step: int, metric: str, threshold: float, level: Level) -> dict[RowKey, Decision]:
    """The sequential rule: judge every row on its first ``start`` processes a side; while
    rows are undecided and fewer than ``cap`` processes a side have run, ask ``measure_more``
    for ``step`` more a side for those rows (it answers False when the time budget refuses)
    and judge them again. A decided row keeps its verdict; ``level`` counts every look."""
    decisions: dict[RowKey, Decision] = {}
    per_side = start
    while True:
        now = figures()
        for key in keys:
            if key not in decisions or decisions[key].verdict == UNDECIDED:
                per = now.get(key) or {side: [] for side in SIDES}
                decisions[key] = decide_row(per["base"], per["head"], metric=metric,
                                            threshold=threshold, level=level.per_test)
        undecided = [k for k in keys if decisions[k].verdict == UNDECIDED]
        more = min(step, cap - per_side)
        if not undecided or more <= 0 or not measure_more(undecided, more):
            return decisions
        per_side += more


def speed_over_processes(record: Record) -> bool:
    """Whether an ``ab`` record judged its rows' speed over processes: each row's speedup and
    latency are then its figures over every process of each side, and no report shows one
    process's figures for the same facts beside them."""
    return bool(((record.ab or {}).get("level") or {}).get("rows"))


def newly_failing(record: Record) -> set[RowKey] | None:
    """The rows of an ``ab`` record's head that fail the run and did not on the base (a row the
    base has not counts), each side judged under the head's options; None for a record not made
    by ``ab``. Every other row failing the run failed on the base as well: already failing."""
    if record.ab is None:
        return None
    failed = {row.key for row in map(Row.from_dict, record.ab.get("base_rows", []))
              if record.fails(row)}
    return {r.key for r in record.failing_rows() if r.key not in failed}


def rejudge(before: Record, after: Record | None, *, metric: str, threshold: float) -> Diff:
    """``trtcheck diff`` under the rule over processes: an ``ab`` record's own sides (``after``
    None), or the head side of ``before`` against the head side of ``after``. The level is
    that of the record judged, every look of its sequential step counted."""
    if after is None:
        base, head, figures = sides(before)
    else:
        _, base, old = sides(before)
        _, head, new = sides(after)
        figures = {k: {"base": old[k]["head"], "head": new[k]["head"]}
                   for k in new.keys() & old.keys()}
    recorded = (head.ab or {}).get("level") or {}
    keys = gated(base, head)
    level = Level(float(recorded.get("alpha", 0.05)), len(keys), int(recorded.get("looks", 1)))
    # how a record's own sides' outputs differ is known (the job compared the values); across
    # records only whether they do
    differences = (before.ab or {}).get("eager_differences") if after is None else None
    return judge(base, head, figures, metric=metric, threshold=threshold, level=level,
                 differences=differences)[1]
