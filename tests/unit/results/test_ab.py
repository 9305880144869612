"""trtcheck ab's decision rule (results/ab.py) on synthetic per-process figures: the t
distribution, A/A false alarms at the stated rate over a whole zoo and every look, a 15% shift
flagged, undecided rows counted; and the reports' words for it."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from trtcheck.render.changes import count_line, render_changes
from trtcheck.render.html import render_html
from trtcheck.results import ab
from trtcheck.results.ab import (
    FASTER,
    SLOWER,
    UNCHANGED,
    UNDECIDED,
    Level,
    ProcessFigure,
    decide,
    sequential,
    t_quantile,
    t_sf,
)
from trtcheck.results.baseline import PROCESSES, Diff, compare
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import Record
from trtcheck.results.rows import Row, RowKey

START, CAP, STEP, ALPHA, THRESHOLD = 6, 15, 3, 0.05, 0.07


@pytest.mark.parametrize(("t", "df", "tail"), [(2.0, 1, 0.147584), (2.0, 5, 0.050970),
                                                (2.0, 10, 0.036694), (-1.0, 3, 0.804499),
                                                (0.0, 7, 0.5)])
def test_the_t_distribution_matches_its_tables(t: float, df: float, tail: float) -> None:
    assert t_sf(t, df) == pytest.approx(tail, abs=1e-6)


@pytest.mark.parametrize(("p", "df", "q"), [(0.975, 1, 12.7062), (0.975, 10, 2.2281),
                                             (0.9995, 5, 6.8688), (0.95, 3, 2.3534)])
def test_t_quantiles_invert_the_tail(p: float, df: float, q: float) -> None:
    assert t_quantile(p, df) == pytest.approx(q, rel=1e-4)


def _draw(rng: random.Random, n: int, shift: float, spread: float) -> list[float]:
    """``n`` per-process speedups around ``1 / (1 + shift)`` (a head ``shift`` slower), each
    process off by a log-normal factor of ``spread``."""
    return [math.exp(rng.gauss(-math.log1p(shift), spread)) for _ in range(n)]


def _zoo(rng: random.Random, shifts: list[float], spreads: list[float], *,
         level: Level, threshold: float = THRESHOLD) -> dict[RowKey, ab.Decision]:
    """A whole job, sequential step included, on synthetic processes: row i's head is
    ``shifts[i]`` slower, every process off by ``spreads[i]``."""
    keys = [RowKey(f"zoo::m{i}[float32]", "inductor", "-") for i in range(len(shifts))]
    figures: dict[RowKey, dict[str, list[ProcessFigure]]] = {
        k: {"base": [], "head": []} for k in keys}

    def run(rows: list[RowKey], n: int) -> bool:
        for key in rows:
            i = keys.index(key)
            for side, shift in (("base", 0.0), ("head", shifts[i])):
                figures[key][side] += [ProcessFigure(0, "pass", s)
                                       for s in _draw(rng, n, shift, spreads[i])]
        return True

    run(keys, START)
    return sequential(keys, lambda: figures, run, start=START, cap=CAP, step=STEP,
                      metric="speedup", threshold=threshold, level=level)


def test_identical_code_flags_no_row_in_more_than_one_job_in_ten() -> None:
    """A/A over 200 jobs of 8 rows whose processes spread by 3% to 20%. The threshold would
    hide a loose test, so it is 0 here: the level alone must hold the rate; the uncorrected
    level (one look, one row) over the same jobs flags far more, so this can fail."""
    rows, jobs = 8, 200
    spreads = [0.03, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.04]
    looks = ab.looks(START, CAP, STEP)
    corrected = Level(ALPHA, rows, looks)
    uncorrected = Level(ALPHA, 1, 1)
    alarms = {}
    for name, level in (("corrected", corrected), ("uncorrected", uncorrected)):
        rng = random.Random(7)
        alarms[name] = sum(
            any(d.verdict == SLOWER for d in _zoo(rng, [0.0] * rows, spreads, level=level,
                                                  threshold=0.0).values())
            for _ in range(jobs))
    assert looks == 4
    assert alarms["corrected"] / jobs <= 0.1
    assert alarms["uncorrected"] / jobs > 0.2


def test_a_fifteen_percent_shift_with_a_tight_spread_is_slower_at_the_first_look() -> None:
    rng = random.Random(3)
    decision = decide(_draw(rng, START, 0.0, 0.02), _draw(rng, START, 0.15, 0.02),
                      metric="speedup", threshold=THRESHOLD, level=Level(ALPHA, 40, 4).per_test)
    assert decision.verdict == SLOWER
    assert decision.processes == (START, START)
    assert decision.low is not None and 1.0 < decision.low < 1.15 < decision.high
    assert decision.change == pytest.approx(1.15, rel=0.03)


def test_one_disturbed_process_a_side_neither_hides_a_shift_nor_makes_one() -> None:
    """Processes on a busy runner sometimes read far off (on the 2-core CPU, 2 of 6 read a
    tenth of the others' speedup): the trimmed means cut one process of 6 off each end."""
    rng = random.Random(8)
    level = Level(ALPHA, 40, 4).per_test
    base, head = _draw(rng, START, 0.0, 0.02), _draw(rng, START, 0.15, 0.02)
    assert decide([*base[:-1], 0.1], [*head[:-1], 10.0], metric="speedup", threshold=THRESHOLD,
                  level=level).verdict == SLOWER
    same = _draw(rng, START, 0.0, 0.02)
    assert decide(base, [*same[:-1], 0.05], metric="speedup", threshold=THRESHOLD,
                  level=level).verdict == UNCHANGED


def test_faster_unchanged_and_the_latency_metric() -> None:
    rng = random.Random(4)
    level = Level(ALPHA, 2, 4).per_test
    faster = decide(_draw(rng, 8, 0.0, 0.02), _draw(rng, 8, -0.2, 0.02), metric="speedup",
                    threshold=THRESHOLD, level=level)
    same = decide(_draw(rng, 8, 0.0, 0.01), _draw(rng, 8, 0.0, 0.01), metric="speedup",
                  threshold=THRESHOLD, level=level)
    # latency: a longer time is slower (the figures go the other way from a speedup)
    longer = decide([1.0, 1.01, 0.99, 1.0], [1.2, 1.21, 1.19, 1.2], metric="latency",
                    threshold=THRESHOLD, level=level)
    assert (faster.verdict, same.verdict, longer.verdict) == (FASTER, UNCHANGED, SLOWER)


def test_a_change_beyond_the_threshold_but_within_the_spread_is_undecided_until_the_cap() -> None:
    decisions = _zoo(random.Random(5), [0.1, 0.3], [0.4, 0.02], level=Level(ALPHA, 2, 4))
    wide, tight = decisions.values()
    assert wide.verdict == UNDECIDED and wide.processes == (CAP, CAP)
    assert tight.verdict == SLOWER and tight.processes == (START, START)


def test_fewer_than_two_processes_a_side_decide_nothing() -> None:
    assert decide([1.0], [0.5, 0.5], metric="speedup", threshold=THRESHOLD,
                  level=0.01).verdict == UNDECIDED


def _row(name: str, speedup: float) -> Row:
    stats = Stats("perf_counter", 3, 20, 1.0, 1.0, 1.0, 1.0, 0.0)
    return Row(f"zoo::{name}[float32]", "zoo", name, "float32", "inductor",
               outputs=[{"path": "", "passed": True, "max_rel": 1e-6}],
               latency=Latency(stats, stats, stats, stats, speedup, speedup, speedup))


def test_every_report_counts_the_rows_decided_and_names_the_verdicts() -> None:
    rng = random.Random(6)
    base = Record({}, {}, [_row("tight", 2.0), _row("wide", 2.0)])
    head = Record({}, {}, [_row("tight", 1.6), _row("wide", 1.6)])
    figures = {base.rows[0].key: {"base": [ProcessFigure(i, "pass", s) for i, s in
                                          enumerate(_draw(rng, 6, 0.0, 0.01))],
                                  "head": [ProcessFigure(i, "pass", s) for i, s in
                                          enumerate(_draw(rng, 6, 0.25, 0.01))]},
               base.rows[1].key: {"base": [ProcessFigure(i, "pass", s) for i, s in
                                          enumerate(_draw(rng, 6, 0.0, 0.5))],
                                  "head": [ProcessFigure(i, "pass", s) for i, s in
                                          enumerate(_draw(rng, 6, 0.25, 0.5))]}}
    _, diff = ab.judge(base, head, figures, metric="speedup", threshold=THRESHOLD,
                       level=Level(ALPHA, 2, 4))
    assert diff.rule == PROCESSES and diff.decided() == (1, 2)
    assert [c.case_id for c in diff.regressions] == ["zoo::tight[float32]"]
    head.baseline = diff.to_dict()
    again = Diff.from_dict(head.baseline)
    assert again.decided() == (1, 2) and again.changes[0].latency.processes == (6, 6)
    assert "1 of 2 rows decided" in count_line(again)
    text = render_changes(head)
    assert "**slower**" in text and "not enough evidence after 6 processes" in text
    assert "Bonferroni" in text
    page = render_html(head, strict_xfail=False)
    assert "1 of 2 rows decided" in page and "slower: +" in page


def _ab_record(speedups: dict[str, list[float]], head_speedups: dict[str, list[float]]) -> Record:
    """An ab record as run_ab writes it, with the given per-process speedups a side."""
    rows = [_row(name, statistics.median(v)) for name, v in head_speedups.items()]
    base_rows = [_row(name, statistics.median(v)) for name, v in speedups.items()]
    section = {"level": Level(ALPHA, len(rows), 1).to_dict(), "base_rows":
               [r.to_dict() for r in base_rows],
               "rows": [{"case_id": r.case_id, "backend": r.backend, "profile": r.profile,
                         "base": ab.side_dict([ProcessFigure(i, "pass", s) for i, s in
                                               enumerate(speedups[r.model])]),
                         "head": ab.side_dict([ProcessFigure(i, "pass", s) for i, s in
                                               enumerate(head_speedups[r.model])])}
                        for r in rows]}
    return Record({}, {}, rows, ab=section)


def test_diff_of_two_ab_records_judges_head_side_against_head_side() -> None:
    rng = random.Random(9)
    monday = _ab_record({"m": _draw(rng, 6, 0.0, 0.01)}, {"m": _draw(rng, 6, 0.0, 0.01)})
    tuesday = _ab_record({"m": _draw(rng, 6, 0.0, 0.01)}, {"m": _draw(rng, 6, 0.3, 0.01)})
    # tuesday's own sides: slower; monday's head against tuesday's head: slower too
    assert [c.case_id for c in ab.rejudge(tuesday, None, metric="speedup",
                                          threshold=THRESHOLD).regressions] == ["zoo::m[float32]"]
    across = ab.rejudge(monday, tuesday, metric="speedup", threshold=THRESHOLD)
    assert across.rule == PROCESSES and len(across.regressions) == 1
    assert ab.rejudge(monday, None, metric="speedup", threshold=THRESHOLD).regressions == []


def test_two_plain_runs_are_judged_by_the_weaker_rule_and_say_so() -> None:
    base = Record({}, {}, [_row("m", 2.0)])
    head = Record({}, {}, [_row("m", 1.0)])
    head.baseline = compare(base, head).to_dict()
    text = render_changes(head)
    assert "Rule over runs" in text and "weaker rule than `trtcheck ab`'s" in text
    assert "rows decided" not in text
