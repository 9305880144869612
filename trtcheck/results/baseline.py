"""Changes against a baseline: a results record of the base branch compared with this run, row
by row — status changes, new and removed rows, accuracy, and a noise-aware latency verdict.

The latency verdict compares the speedup (the backend normalised by eager in the same run,
which cancels the drift of the machine between runs) or, with metric ``latency``, the
backend's absolute time (GPU time on CUDA). A row regresses only when it is slower by more than the
threshold *and* the two runs' intervals do not overlap. A row whose interval, in either run, is
wider than ``[timing] unstable_ci`` (its latency is flagged unstable) is set aside as
:data:`UNSTABLE` unless the intervals lie so far apart that even their nearest ends differ by more
than :data:`FAR_APART` times (:func:`far_apart`): such a change is judged. The other figure (the
latency under metric speedup, the speedup under metric latency) is judged the same way and shown
beside the gated one, never gated. Against a baseline whose
figures meant something else (a record schema before :data:`FIGURES_SCHEMA`), changed figures
are marked "not comparable" and never gated, while status changes still count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from trtcheck.results.control import distrust
from trtcheck.results.metrics import MAX_REL
from trtcheck.results.record import FIGURES_SCHEMA, Record
from trtcheck.results.rows import Row, RowKey

# Environment facts that make absolute figures, and even speedups, incomparable when they differ.
COMPARABLE = {"device_name": "GPU", "driver": "driver", "torch": "torch",
              "torch_tensorrt": "torch_tensorrt"}
ACCURACY_FACTOR = 2.0  # a worst relative error that moved by more than this factor is shown
# ... and only when it matters against the row's tolerance: the worse of the two errors reaches
# this share of the row's rtol (0 to a few ulps of float32, far inside it, is no change).
ACCURACY_MATTERS = 0.1
# An unstable row is judged when the nearest ends of its two intervals differ by more than this
# factor (or the threshold, if larger): between two fresh runs of identical code on the shared
# 2-core CPU, one torch thread a process, a row's latency moved up to 3.3 times, its intervals
# apart (benchmarks/bench_pairs.py); a change beyond 4 times is not that noise.
FAR_APART = 4.0

REGRESSION, IMPROVEMENT, NOISE, SMALL = "regression", "improvement", "within noise", "below threshold"
UNSTABLE = "not gated: unstable"  # an interval too wide to decide, in either run
NOT_GATED = "not gated"  # the tally's name for changes within noise or unstable
NOT_COMPARABLE = "not comparable"  # the baseline's figures meant something else: never gated
# The verdicts only the rule over processes (trtcheck.results.ab) gives: within the threshold
# both ways, and still undecided when the processes ran out.
UNCHANGED, UNDECIDED = "unchanged", "not enough evidence"
# What the rule over processes finds of the model's own eager outputs, head against base
# (trtcheck.results.ab.eager_change), in the order the tally counts them.
OUTPUT_CHANGED, NOT_REPRODUCIBLE, INPUTS_CHANGED = "output changed", "not reproducible", \
    "inputs changed"
EAGER = (OUTPUT_CHANGED, INPUTS_CHANGED, NOT_REPRODUCIBLE)
# Which rule judged the latency: several fresh processes a side (trtcheck ab), or one run a side.
PROCESSES, RUNS = "processes", "runs"


@dataclass(frozen=True)
class LatencyChange:
    """One row's latency against the baseline.

    ``before``/``after`` are the gated figure (the speedup, or the backend's GPU ms);
    ``slowdown`` how many times slower the backend got relative to the baseline (the old
    speedup over the new one, or the new time over the old one), ``verdict`` one of regression,
    improvement, within noise, below threshold, not comparable, not gated: unstable.
    ``before_ms``/``after_ms`` are the backend's absolute times, shown as information."""

    metric: str
    before: float
    after: float
    slowdown: float
    verdict: str
    before_interval: tuple[float, float] | None = None
    after_interval: tuple[float, float] | None = None
    before_ms: float | None = None
    after_ms: float | None = None
    # Under the rule over processes: the slowdown's interval, and the figures each side gave.
    interval: tuple[float, float] | None = None
    processes: tuple[int, int] | None = None
    # The figure not gated (the latency under metric speedup, and the other way round), judged
    # by the same rule and shown beside the gated one: its slowdown and verdict.
    other_metric: str | None = None
    other_slowdown: float | None = None
    other_verdict: str | None = None

    @property
    def worsened(self) -> bool:
        """Whether either figure regressed: such a row is never shown as an improvement."""
        return REGRESSION in (self.verdict, self.other_verdict)
    # Under the rule over processes, where they ran several kernel sets: the sets, in words.
    kernels: str = ""
    # Under the rule over processes: each side's figure of the one not gated, the statistic
    # ``other_slowdown`` is the ratio of.
    other_before: float | None = None
    other_after: float | None = None


@dataclass(frozen=True)
class RowChange:
    """A row of this run against the same row of the baseline (``None`` where it has none)."""

    case_id: str
    backend: str
    profile: str
    before: str | None  # status in the baseline; None: a new row
    after: str | None  # status now; None: the row was removed
    before_error: float | None = None  # worst relative error
    after_error: float | None = None
    latency: LatencyChange | None = None
    prediction: bool = False  # a prediction backend's row (emulate, lowering)
    # Under the rule over processes: each side's lowest and worst relative error over its
    # processes of the kernel sets both sides ran (``before_error``/``after_error`` are then
    # each side's worst over all its processes).
    before_errors: tuple[float, float] | None = None
    after_errors: tuple[float, float] | None = None
    # Under the rule over processes: the model's own eager outputs, head against base on the
    # same seeded inputs (trtcheck.results.ab.eager_change): the verdict (None: they agree, or
    # were not compared) and what it rests on.
    eager: str | None = None
    eager_detail: str = ""
    rtol: float | None = None  # the row's tolerance (its tightest output's), where it has one

    @property
    def status_changed(self) -> bool:
        return self.before != self.after

    @property
    def regressed(self) -> bool:
        return self.latency is not None and self.latency.verdict == REGRESSION

    @property
    def accuracy_changed(self) -> bool:
        """The worst relative error moved by more than :data:`ACCURACY_FACTOR`; over
        processes, a head's error outside the base's processes' spread by that factor. Either
        way only where the worse error reaches :data:`ACCURACY_MATTERS` of the row's rtol."""
        errors = [abs(e) for e in (self.before_error, self.after_error) if e is not None]
        if self.rtol and errors and max(errors) < ACCURACY_MATTERS * self.rtol:
            return False
        if self.before_errors is not None and self.after_errors is not None:
            (b_low, b_high), (h_low, h_high) = self.before_errors, self.after_errors
            return h_high > b_high * ACCURACY_FACTOR or h_low * ACCURACY_FACTOR < b_low
        a, b = self.before_error, self.after_error
        if a is None or b is None:
            return False
        low, high = sorted((abs(a), abs(b)))
        return high > 0 and (low == 0 or high / low > ACCURACY_FACTOR)

    @property
    def eager_text(self) -> str:
        """``output changed: max abs 1.2e+03, 16 of 48 int64 values differ``, or ``""``."""
        return f"{self.eager}: {self.eager_detail}" if self.eager else ""

    @property
    def shown(self) -> bool:
        """Whether the change is worth a line: anything but an unchanged row."""
        return (self.status_changed or self.accuracy_changed or self.eager is not None
                or (self.latency is not None
                    and (self.latency.verdict in (REGRESSION, IMPROVEMENT, NOT_COMPARABLE,
                                                  UNDECIDED, NOISE, UNSTABLE)
                         or self.latency.other_verdict in (REGRESSION, IMPROVEMENT))))

    @property
    def unchanged(self) -> bool:
        """Whether the row was judged unchanged: the same status and accuracy, and a latency
        within the threshold (or none to judge: a prediction's)."""
        return (not self.status_changed and not self.accuracy_changed and self.eager is None
                and (self.latency is None or (self.latency.verdict in (SMALL, UNCHANGED)
                                              and self.latency.other_verdict
                                              not in (REGRESSION, IMPROVEMENT))))


@dataclass(frozen=True)
class Diff:
    """Every row's change against the baseline, the gate's settings and any warnings."""

    metric: str
    threshold: float
    base: dict[str, Any]
    changes: list[RowChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    comparable: bool = True  # False: the baseline's figures meant something else
    rule: str = RUNS  # PROCESSES: judged over processes (trtcheck.results.ab)
    level: dict[str, Any] | None = None  # under PROCESSES: the test's level and its correction

    @property
    def regressions(self) -> list[RowChange]:
        return [c for c in self.changes if c.regressed]

    def decided(self) -> tuple[int, int]:
        """Under the rule over processes: how many gated rows got a verdict, of how many."""
        gated = [c.latency for c in self.changes
                 if c.latency is not None and c.latency.verdict != NOT_COMPARABLE]
        return sum(lat.verdict != UNDECIDED for lat in gated), len(gated)

    def tally(self) -> dict[str, int]:
        """How many rows changed in each category, the same for every report and the
        terminal; a row can count in several (a status change and an accuracy change)."""
        def latency(verdict: str) -> int:
            return sum(c.latency is not None and c.latency.verdict == verdict for c in self.changes)

        return {
            REGRESSION: latency(REGRESSION),
            "status": sum(c.status_changed and c.before is not None and c.after is not None
                          for c in self.changes),
            "new": sum(c.before is None for c in self.changes),
            "removed": sum(c.after is None for c in self.changes),
            IMPROVEMENT: latency(IMPROVEMENT),
            "accuracy": sum(c.accuracy_changed for c in self.changes),
            **{what: sum(c.eager == what for c in self.changes)
               for what in (EAGER if self.rule == PROCESSES else ())},
            "other": sum(c.latency is not None and c.latency.other_verdict == REGRESSION
                         and c.latency.verdict != REGRESSION for c in self.changes),
            NOT_COMPARABLE: latency(NOT_COMPARABLE),
            UNDECIDED: latency(UNDECIDED),
            NOT_GATED: latency(NOISE) + latency(UNSTABLE),
            "unchanged": sum(c.unchanged for c in self.changes),
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Diff:
        def latency(lat: Mapping[str, Any] | None) -> LatencyChange | None:
            if not lat:
                return None
            # infinities come back from JSON as strings
            numbers = {k: float(v) if isinstance(v, str) and k not in _TEXT else v
                       for k, v in lat.items() if k in _LATENCY_FIELDS}
            intervals = {k: tuple(lat[k]) if lat.get(k) else None
                         for k in ("before_interval", "after_interval", "interval", "processes")}
            return LatencyChange(**{**numbers, **intervals})

        def spread(v: Any) -> tuple[float, float] | None:
            return (float(v[0]), float(v[1])) if v else None

        changes = [RowChange(**{**c, "latency": latency(c.get("latency")),
                                **{k: spread(c.get(k)) for k in ("before_errors", "after_errors")}})
                   for c in d.get("changes", [])]
        return cls(d["metric"], float(d["threshold"]), dict(d.get("base") or {}), changes,
                   list(d.get("warnings", [])), bool(d.get("comparable", True)),
                   str(d.get("rule", RUNS)), d.get("level"))


_LATENCY_FIELDS = frozenset(f.name for f in fields(LatencyChange))
_TEXT = frozenset({"metric", "verdict", "other_metric", "other_verdict", "kernels"})


def compare(base: Record, head: Record, *, metric: str = "speedup",
            threshold: float = 0.07) -> Diff:
    """This run (``head``) against the baseline, row by row, in the head's order, then the
    rows only the baseline has. A run whose control failed (:mod:`trtcheck.results.control`)
    gives figures no speed change is judged from."""
    distrusted = [f"{which}'s timings are not trusted: {'; '.join(reasons)}; its speed figures "
                  f"are {NOT_COMPARABLE} and not gated"
                  for which, reasons in (("the baseline", distrust(base)),
                                         ("this run", distrust(head))) if reasons]
    schema = min(base.source_schema, head.source_schema) >= FIGURES_SCHEMA
    comparable = schema and not distrusted
    before = {r.key: r for r in base.rows}
    after = {r.key: r for r in head.rows}
    changes = [_change(k, before.get(k), r, metric, threshold, comparable)
               for k, r in after.items()]
    changes += [_change(k, r, None, metric, threshold, comparable)
                for k, r in before.items() if k not in after]
    env = base.environment
    summary = {k: env.get(k) for k in ("git_commit", "started", "device_name", "torch",
                                       "torch_tensorrt")}
    warnings = [] if schema else [schema_warning(base.source_schema, head.source_schema)]
    warnings += distrusted
    warnings += environment_warnings(base.environment, head.environment)
    return Diff(metric, threshold, summary, changes, warnings, comparable)


def schema_warning(base_schema: int, head_schema: int) -> str:
    """Why the figures of two records cannot be compared."""
    which = ("the baseline" if base_schema < FIGURES_SCHEMA else "this record") \
        + f" was written with record schema {min(base_schema, head_schema)}"
    return (f"{which}, whose control, speedup and memory figures meant something else: changed "
            f"speedup, latency and memory figures are {NOT_COMPARABLE} and not gated; status "
            "changes still count")


def environment_warnings(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """One line per fact that differs between the baseline's machine and this one."""
    return [f"the baseline ran with another {label}: {base[key]} (now {head.get(key)}); "
            "latency changes may come from that"
            for key, label in COMPARABLE.items()
            if base.get(key) is not None and base.get(key) != head.get(key)]


def _change(key: RowKey, before: Row | None, after: Row | None, metric: str,
            threshold: float, comparable: bool) -> RowChange:
    return RowChange(
        *key,
        before=str(before.status) if before else None,
        after=str(after.status) if after else None,
        before_error=MAX_REL.of_row(before.outputs) if before else None,
        after_error=MAX_REL.of_row(after.outputs) if after else None,
        latency=(latency_change(before, after, metric, threshold, comparable=comparable)
                 if before and after else None),
        prediction=any(r is not None and r.prediction for r in (before, after)),
        rtol=min((float(o["rtol"]) for r in (after, before) if r for o in r.outputs
                  if isinstance(o.get("rtol"), (int, float)) and o["rtol"] > 0), default=None),
    )


def latency_change(before: Row, after: Row, metric: str, threshold: float, *,
                   comparable: bool = True) -> LatencyChange | None:
    """The latency verdict for one row; None for predictions (their latency is PyTorch running a
    rewritten graph) and rows without latency in either run. Without both intervals, the
    threshold alone decides. Not ``comparable``: a change beyond the threshold is marked
    :data:`NOT_COMPARABLE` instead of judged. The other metric's verdict comes with it."""
    if before.prediction or after.prediction or not (before.latency and after.latency):
        return None
    b_dev = before.latency.backend_device or before.latency.backend
    a_dev = after.latency.backend_device or after.latency.backend
    old, new, old_iv, new_iv, slowdown, verdict = _judged(before, after, metric, threshold,
                                                          comparable)
    other = "latency" if metric == "speedup" else "speedup"
    *_, other_slowdown, other_verdict = _judged(before, after, other, threshold, comparable)
    return LatencyChange(metric, old, new, slowdown, verdict, old_iv, new_iv,
                         b_dev.median_ms, a_dev.median_ms, other_metric=other,
                         other_slowdown=other_slowdown, other_verdict=other_verdict)


def _judged(before: Row, after: Row, metric: str, threshold: float, comparable: bool) -> tuple[
        float, float, tuple[float, float] | None, tuple[float, float] | None, float, str]:
    """One metric's figures for a row in both runs, their intervals, the slowdown and verdict."""
    b, a = before.latency, after.latency
    assert b is not None and a is not None
    b_dev, a_dev = b.backend_device or b.backend, a.backend_device or a.backend
    old_iv: tuple[float, float] | None
    new_iv: tuple[float, float] | None
    if metric == "speedup":
        old, new = b.speedup, a.speedup
        old_iv, new_iv = b.interval, a.interval
        slowdown = old / new if new > 0 else float("inf")
        # in the slowdown's sense: how much slower the nearest and the farthest ends say
        near = (old_iv[0] / new_iv[1], old_iv[1] / new_iv[0]) if old_iv and new_iv else None
    else:
        old, new = b_dev.median_ms, a_dev.median_ms
        old_iv, new_iv = _ms_interval(b_dev.ci_low_ms, b_dev.ci_high_ms), \
            _ms_interval(a_dev.ci_low_ms, a_dev.ci_high_ms)
        slowdown = new / old if old > 0 else float("inf")
        near = (new_iv[0] / old_iv[1], new_iv[1] / old_iv[0]) if old_iv and new_iv else None
    apart_slower = near is not None and near[0] > 1  # the new interval wholly on the slow side
    apart_faster = near is not None and near[1] < 1
    if slowdown > 1 + threshold:
        verdict = REGRESSION if apart_slower or near is None else NOISE
    elif slowdown < 1 / (1 + threshold):
        verdict = IMPROVEMENT if apart_faster or near is None else NOISE
    else:
        verdict = SMALL
    if verdict != SMALL and (b.unstable or a.unstable) and not far_apart(near, threshold):
        verdict = UNSTABLE
    if not comparable and verdict != SMALL:
        verdict = NOT_COMPARABLE
    return old, new, old_iv, new_iv, slowdown, verdict


def far_apart(near: tuple[float, float] | None, threshold: float) -> bool:
    """Whether two intervals lie so far apart that their nearest ends alone differ by more than
    :data:`FAR_APART` times (or the threshold, if larger), either way (``near``: the slowdown the
    nearest ends give, then the one the farthest give): then however wide they are, the change
    is no run-to-run noise."""
    if near is None:
        return False
    far = max(FAR_APART, 1 + threshold)
    return near[0] > far or near[1] < 1 / far


def _ms_interval(low: float | None, high: float | None) -> tuple[float, float] | None:
    return (low, high) if low is not None and high is not None else None


def read(data: Mapping[str, Any] | None) -> Diff | None:
    """The diff a record carries, if any."""
    return Diff.from_dict(data) if data else None

