"""trtcheck ab's decision rule (results/ab.py) on synthetic per-process figures: the t
distribution, A/A false alarms at the stated rate over a whole zoo and every look, a 15% shift
flagged, undecided rows counted; and the reports' words for it."""

from __future__ import annotations

import math
import random
import re
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from trtcheck.render.changes import count_line, decision_lines, render_changes
from trtcheck.render.html import render_html
from trtcheck.results import ab, kernelsets, processes
from trtcheck.results.ab import (
    FASTER,
    SLOWER,
    UNCHANGED,
    UNDECIDED,
    Level,
    decide,
    sequential,
)
from trtcheck.results.baseline import PROCESSES, Diff, compare
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.processes import ProcessFigure
from trtcheck.results.record import Record
from trtcheck.results.rows import Row, RowKey
from trtcheck.results.stats import t_quantile, t_sf
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

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
    assert "**speedup over eager worsened -" in text and "slower" not in text
    assert "not enough evidence after 6 processes" in text
    assert "Bonferroni" in text
    page = render_html(Judged.of(head))
    assert "1 of 2 rows decided" in page and "speedup over eager worsened -" in page


def _ab_record(speedups: dict[str, list[float]], head_speedups: dict[str, list[float]]) -> Record:
    """An ab record as run_ab writes it, with the given per-process speedups a side."""
    rows = [_row(name, statistics.median(v)) for name, v in head_speedups.items()]
    base_rows = [_row(name, statistics.median(v)) for name, v in speedups.items()]
    section = {"level": Level(ALPHA, len(rows), 1).to_dict(), "base_rows":
               [r.to_dict() for r in base_rows],
               "rows": [{"case_id": r.case_id, "backend": r.backend, "profile": r.profile,
                         "base": processes.side_dict([ProcessFigure(i, "pass", s) for i, s in
                                               enumerate(speedups[r.model])]),
                         "head": processes.side_dict([ProcessFigure(i, "pass", s) for i, s in
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


def _planted(metric: str, fail_on: str = "regression", *, sides: dict | None = None) -> Record:
    """An ab record, judged as run_ab judges it, whose head made the model six times slower in
    eager and compiled alike: the speedup over eager went from 0.5 to about 1.2, the backend's
    latency from 0.2 ms to about 1.2 ms, six processes a side."""
    rng = random.Random(3)
    base, head = _row("mlp", 0.5), _row("mlp", 1.2)
    figures = {base.key: {
        "base": [ProcessFigure(i, "pass", s, 0.2 * f) for i, (s, f) in
                 enumerate(zip(_draw(rng, 6, 0.0, 0.02), _draw(rng, 6, 0.0, 0.02), strict=True))],
        "head": [ProcessFigure(i, "pass", 1.2 * s, 1.2 * f) for i, (s, f) in
                 enumerate(zip(_draw(rng, 6, 0.0, 0.02), _draw(rng, 6, 0.0, 0.02), strict=True))]}}
    base_rec = Record({}, {}, [base])
    head_rec = Record({"started": "2026-12-02T05:00:00+00:00"},
                      {"gate": {"fail_on": fail_on, "metric": metric, "threshold": THRESHOLD}},
                      [head])
    level = Level(ALPHA, 1, 4)
    _, diff = ab.judge(base_rec, head_rec, figures, metric=metric, threshold=THRESHOLD,
                       level=level)
    head_rec.baseline = diff.to_dict()
    head_rec.ab = {"level": level.to_dict(), "base_rows": [base.to_dict()],
                   "sides": sides or {"base": {"ref": "v0", "commit": "b" * 40, "tree": "1" * 40},
                                      "head": {"ref": "working tree", "commit": "b" * 40,
                                               "tree": None, "dirty": True}},
                   "same_tree": False,
                   "rows": [{"case_id": base.case_id, "backend": base.backend,
                             "profile": base.profile,
                             **{s: processes.side_dict(figures[base.key][s]) for s in ("base", "head")}}]}
    return head_rec


@pytest.mark.parametrize(("metric", "fail_on", "code", "headline"), [
    ("latency", "regression", 1, "FAIL: 1 latency regression"),
    ("latency", "failures", 0, "PASS: 1 rows, none fails the run; 1 latency regression not "
                               "gated (--fail-on failures)"),
    ("speedup", "regression", 0, "PASS: 1 rows, none fails the run"),
])
def test_a_planted_ab_heads_every_report_as_its_exit_code_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], metric: str, fail_on: str,
        code: int, headline: str) -> None:
    """A head six times slower in eager and compiled alike, re-rendered by ``trtcheck report``
    in-process: the exit code and every headline agree; under the speedup metric the row's
    speedup over eager improved, and every report says it got slower on the same line."""
    from tests.helpers import reported

    out = tmp_path / "rep"
    exit_code, terminal = reported(_planted(metric, fail_on), out, capsys)
    assert exit_code == code and headline in terminal.splitlines()
    report = (out / "report.md").read_text()
    line = next(li for li in report.split("## Head against base")[1].splitlines()
                if li.startswith("| zoo::mlp"))
    assert "slower +" in line and "faster" not in report
    if metric == "speedup":
        assert "speedup over eager improved +" in line and "; slower +" in line
    page = (out / "report.html").read_text()
    changes = page.split('id="changes"')[1].split("</section>")[0]
    assert '<g class="pass">' not in changes and "started 2026-12-02T05:00:00+00:00" in changes
    assert '<a href="#changes">head against base</a>' in page


def test_each_side_is_labelled_for_what_it_ran(tmp_path: Path) -> None:
    """A dirty working tree is "working tree (uncommitted changes on COMMIT)" in every report;
    one tree on both sides is "same tree" in the headline."""
    from trtcheck.render import render_comment, render_markdown
    from trtcheck.render.terminal import render_summary

    record = _planted("latency")
    label = f"working tree (uncommitted changes on {'b' * 40})"
    for text in (render_markdown(Judged.of(record)), render_html(Judged.of(record)),
                 render_comment(Judged.of(record), changes=render_changes(record))):
        text = text.replace("\\", "")  # Markdown's escapes
        assert label in text and f"v0 ({'b' * 40})" in text
    same = _planted("latency", sides={s: {"ref": r, "commit": c * 40, "tree": "1" * 40}
                                      for s, r, c in (("base", "v0", "b"), ("head", "v1", "c"))})
    same.ab["same_tree"] = True
    assert render_summary(Judged.of(same)).splitlines()[-1].endswith(
        "; same tree: base and head ran the same code")
    assert "same tree" in render_markdown(Judged.of(same)).split("**Result:")[1][:300]


# --- the kernel lottery: rows judged like with like ------------------------------------------

def _lottery(rng: random.Random, n: int, shift: float, *, sets: dict[str, float],
             first: int = 0) -> list[ProcessFigure]:
    """``n`` processes, each drawing one of ``sets`` (its fingerprint → its speedup), 2% apart
    between processes, the head ``shift`` slower."""
    out = []
    for i in range(n):
        name = rng.choice(list(sets))
        speedup = sets[name] * math.exp(rng.gauss(-math.log1p(shift), 0.02))
        out.append(ProcessFigure(first + i, "pass", speedup,
                                 kernels={"eager": "e0", "backend": name}))
    return out


LOTTERY = {"b1": 1.05, "b2": 1.48}  # the H200's conv row: two clusters with the same code


def test_a_kernel_lottery_on_both_sides_raises_no_false_alarm_and_is_named() -> None:
    """Identical code whose processes draw one of two kernel sets (a 40% apart lottery): over
    200 A/A rows at the corrected level, judged within the sets, none is flagged, where the
    mixed figures (two clusters, far from the t test's normal) flag some either way."""
    rng = random.Random(11)
    level = Level(ALPHA, 8, 4).per_test
    verdicts, mixed = [], []
    for _ in range(200):
        base, head = _lottery(rng, 6, 0.0, sets=LOTTERY), _lottery(rng, 6, 0.0, sets=LOTTERY,
                                                                    first=6)
        verdicts.append(ab.decide_row(base, head, metric="speedup", threshold=THRESHOLD,
                                      level=level).verdict)
        mixed.append(decide(processes.figures_of(base, "speedup"), processes.figures_of(head, "speedup"),
                            metric="speedup", threshold=THRESHOLD, level=level).verdict)
    assert SLOWER not in verdicts and FASTER not in verdicts
    assert mixed.count(SLOWER) + mixed.count(FASTER) > 0


def test_a_shift_within_each_kernel_set_is_slower_and_each_set_is_counted() -> None:
    rng = random.Random(12)
    base = _lottery(rng, 12, 0.0, sets=LOTTERY)
    head = _lottery(rng, 12, 0.15, sets=LOTTERY, first=12)
    decision = ab.decide_row(base, head, metric="speedup", threshold=THRESHOLD,
                             level=Level(ALPHA, 4, 4).per_test)
    assert decision.verdict == SLOWER
    assert decision.change == pytest.approx(1.15, rel=0.04)
    assert "judged within the kernel sets both sides ran" in decision.why
    sets = kernelsets.kernel_sets(base, head, "speedup")
    assert [k.letter for k in sets] == ["A", "B"] and all(k.shared for k in sets)
    assert sum(k.count() for k in sets) == 24


def test_a_kernel_set_one_side_alone_ran_is_named_and_left_out_of_the_verdict() -> None:
    """The base ran set A in every process; the head ran A in 4 and, in 3, a set of its own
    twice as slow: the verdict compares A with A (unchanged), and the report names B as the
    head's alone."""
    rng = random.Random(13)
    base = _lottery(rng, 6, 0.0, sets={"b1": 1.5})
    head = [*_lottery(rng, 4, 0.0, sets={"b1": 1.5}, first=6),
            *_lottery(rng, 3, 0.0, sets={"b9": 0.75}, first=10)]
    decision = ab.decide_row(base, head, metric="speedup", threshold=THRESHOLD,
                             level=Level(ALPHA, 1, 1).per_test)
    assert decision.verdict == UNCHANGED and decision.processes == (6, 4)
    line = kernelsets.kernel_line(kernelsets.kernel_sets(base, head, "speedup"), "speedup")
    assert re.fullmatch(r"2 kernel sets: A in 10 processes, 1\.5\d×; "
                        r"B in 3 processes, 0\.7\d× \(head only\)", line), line
    # every report names the sets
    before, after = Record({}, {}, [_row("conv", 1.5)]), Record({}, {}, [_row("conv", 1.5)])
    _, diff = ab.judge(before, after, {before.rows[0].key: {"base": base, "head": head}},
                       metric="speedup", threshold=THRESHOLD, level=Level(ALPHA, 1, 1))
    after.baseline = diff.to_dict()
    assert "2 kernel sets: A in 10 processes, 1.50×; B in 3 processes" in render_changes(after)
    assert line in render_html(Judged.of(after))
    assert any(line in text for text in decision_lines(Diff.from_dict(after.baseline)))


def test_kernels_the_head_changed_everywhere_are_judged_together() -> None:
    """A head whose code changed the kernels in every process (no set on both sides): the
    kernels are part of its change, judged over all processes as before."""
    rng = random.Random(14)
    base = _lottery(rng, 6, 0.0, sets={"b1": 1.5})
    head = _lottery(rng, 6, 0.3, sets={"b2": 1.5}, first=6)
    assert ab.decide_row(base, head, metric="speedup", threshold=THRESHOLD,
                         level=Level(ALPHA, 1, 1).per_test).verdict == SLOWER


def test_the_names_that_tell_kernel_sets_apart() -> None:
    names = {"e/b1": {"eager": ["aten::mm ×1"], "backend": ["gemm_a ×1", "relu ×1"]},
             "e/b2": {"eager": ["aten::mm ×1"], "backend": ["gemm_b ×1", "relu ×1"]}}
    assert kernelsets.differing(names) == {"e/b1": {"eager": [], "backend": ["gemm_a ×1"]},
                                   "e/b2": {"eager": [], "backend": ["gemm_b ×1"]}}


def test_process_figures_round_trip_and_older_records_load() -> None:
    figures = [ProcessFigure(0, "pass", 1.2, 0.5, "h", {"eager": "e", "backend": "b"}, 1e-6),
               ProcessFigure(3, "pass", 1.3, 0.4, "h", {"reason": "no kernels taken"}, None)]
    assert processes.side_from_dict(processes.side_dict(figures)) == figures
    old = {k: v for k, v in processes.side_dict(figures).items()
           if k not in ("process_kernels", "process_max_rel")}
    assert [f.kernels for f in processes.side_from_dict(old)] == [None, None]


# --- accuracy across processes -----------------------------------------------------------------

def _accuracy_record(errors: list[float]) -> Record:
    row = replace(_row("conv", 1.5), outputs=[{"path": "", "passed": True,
                                               "max_rel": max(errors)}])
    return Record({}, {}, [row])


def test_an_accuracy_lottery_on_both_sides_is_no_change_and_the_worst_is_shown() -> None:
    """The H200's conv row: 2.3e-3 in one process and 1.8e-5 in another, with identical code:
    no accuracy change while the head stays within the base's spread; one beyond it is."""
    base_errors, same, worse = [2.3e-3, 1.8e-5, 2e-5], [1.9e-5, 2.2e-3, 2.1e-5], [9e-3, 2e-5, 1e-2]
    base = _accuracy_record(base_errors)

    def diff(head_errors: list[float]) -> Diff:
        key = base.rows[0].key
        figures = {key: {"base": [ProcessFigure(i, "pass", 1.5, max_rel=e)
                                  for i, e in enumerate(base_errors)],
                         "head": [ProcessFigure(3 + i, "pass", 1.5, max_rel=e)
                                  for i, e in enumerate(head_errors)]}}
        return ab.to_diff(base, _accuracy_record([head_errors[1]]), {}, figures,
                          metric="speedup", threshold=THRESHOLD, level=Level(ALPHA, 1, 1))

    clean = diff(same)
    (change,) = clean.changes
    assert not change.accuracy_changed and clean.tally()["accuracy"] == 0
    assert (change.before_error, change.after_error) == (2.3e-3, 2.2e-3)  # each side's worst
    changed = Diff.from_dict(diff(worse).to_dict())
    assert changed.changes[0].accuracy_changed and changed.tally()["accuracy"] == 1
    base.baseline = clean.to_dict()
    base.baseline["rule"] = PROCESSES
    assert "worst over its processes" in render_changes(base)


def test_an_error_in_a_kernel_set_the_head_alone_ran_is_no_accuracy_change() -> None:
    """Like with like: the base drew the precise algorithm in all 3 processes, the head in 2
    and a TF32 one in the third (its error 100 times larger): the sets are named, and the
    accuracy compared within the set both ran is unchanged; its worst is still shown."""
    base = _accuracy_record([1.8e-5])
    key = base.rows[0].key

    def fig(i: int, kernel: str, error: float) -> ProcessFigure:
        return ProcessFigure(i, "pass", 1.5, kernels={"eager": "e", "backend": kernel},
                             max_rel=error)

    figures = {key: {"base": [fig(0, "a", 1.8e-5), fig(3, "a", 1.9e-5), fig(4, "a", 1.7e-5)],
                     "head": [fig(1, "a", 1.8e-5), fig(2, "b", 2.3e-3), fig(5, "a", 1.8e-5)]}}
    (change,) = ab.to_diff(base, _accuracy_record([2.3e-3]), {}, figures, metric="speedup",
                           threshold=THRESHOLD, level=Level(ALPHA, 1, 1)).changes
    assert not change.accuracy_changed and change.after_error == 2.3e-3
    figures[key]["head"][0] = fig(1, "a", 2.3e-3)  # within the shared set: a change
    (change,) = ab.to_diff(base, _accuracy_record([2.3e-3]), {}, figures, metric="speedup",
                           threshold=THRESHOLD, level=Level(ALPHA, 1, 1)).changes
    assert change.accuracy_changed


@pytest.mark.parametrize(("rtol", "changed"), [(5e-3, False), (1e-5, True), (None, True)])
def test_an_accuracy_change_is_one_that_matters_against_the_row_s_tolerance(
        rtol: float | None, changed: bool) -> None:
    """A GNN row whose base read 0 in every process and whose head reads 2.72e-06, a few float32
    ulps: far inside an rtol of 5e-3, no change; against a tolerance it nears, one."""
    def record(error: float) -> Record:
        return Record({}, {}, [replace(_row("sage", 1.5), outputs=[
            {"path": "", "passed": True, "max_rel": error, **({"rtol": rtol} if rtol else {})}])])

    base = record(0.0)
    figures = {base.rows[0].key: {
        "base": [ProcessFigure(i, "pass", 1.5, max_rel=0.0) for i in range(3)],
        "head": [ProcessFigure(3 + i, "pass", 1.5, max_rel=2.72e-6) for i in range(3)]}}
    (change,) = ab.to_diff(base, record(2.72e-6), {}, figures, metric="speedup",
                           threshold=THRESHOLD, level=Level(ALPHA, 1, 1)).changes
    assert change.accuracy_changed is changed and change.rtol == rtol


def test_a_process_timeline_adds_up_to_its_wall_with_the_workers_marks_among_the_parents() -> None:
    """The worker's marks (its imports, collection) arrive after the fact and fall in place."""
    from trtcheck.execution.isolate import Timeline

    line = Timeline()
    line.mark("interpreter", 10.0)
    line.mark("compile", 14.0)  # the parent hears a stage
    line.marks += [(10.1, "imports"), (12.5, "collection"), (13.0, "idle")]  # the worker's
    line.mark("compile", 15.0)
    line.mark("teardown", 16.5)
    parts = line.parts(17.0)
    assert parts == pytest.approx({"interpreter": 0.1, "imports": 2.4, "collection": 0.5,
                                   "idle": 1.0, "compile": 2.5, "teardown": 0.5})
    assert sum(parts.values()) == pytest.approx(7.0)


# --- what the pull request changed: newly failing rows, speed judged or not, one figure -------

def _broken(status: str = "fail") -> Row:
    return replace(_row("broken", 1.0), status=Status(status), latency=None)


def _changed_ab(tmp_path: Path) -> Record:
    """An ab record whose head broke one row (``c_broken``: pass → fail) while another failed
    on both sides (``b_old``: fail → error), a third timed and unchanged (``a_fine``); each
    side's rows in the zoo's case order (a, b, c), written as run_ab writes them."""
    from trtcheck.results.verdict import in_report_order

    rng = random.Random(21)
    fine = _row("a_fine", 1.5)
    old = replace(_row("b_old", 1.0), status=Status.FAIL, latency=None)
    ok, broken = (replace(_row("c_broken", 1.0), status=Status(s), latency=None)
                  for s in ("pass", "fail"))
    base_rec = Record({}, {}, [fine, old, ok])
    head_rec = Record({}, {"gate": {"fail_on": "failures", "metric": "speedup",
                                    "threshold": THRESHOLD}},
                      [fine, replace(old, status=Status.ERROR), broken])
    figures = {fine.key: {side: [ProcessFigure(i, "pass", s, 0.2) for i, s in
                                 enumerate(_draw(rng, 6, 0.0, 0.01))] for side in processes.SIDES}}
    level = Level(ALPHA, 1, 4)
    head_rec.ab = {"level": level.to_dict(), "base_rows": [r.to_dict() for r in base_rec.rows],
                   "rows": [{"case_id": k.case_id, "backend": k.backend, "profile": k.profile,
                             **{s: processes.side_dict(figures[k][s]) for s in processes.SIDES}}
                            for k in figures]}
    in_report_order(head_rec)
    _, diff = ab.judge(base_rec, head_rec, figures, metric="speedup", threshold=THRESHOLD,
                       level=level)
    head_rec.baseline = diff.to_dict()
    return head_rec


def test_the_headline_counts_the_rows_the_head_broke_apart_from_those_failing_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """comment.md's first line, the terminal's last and every other headline say what the
    pull request did, the exit code's rule unchanged (1: a row fails on the head); the row the
    head broke comes first in every table, marked in "Needs attention"."""
    from tests.helpers import reported

    record = _changed_ab(tmp_path)
    assert [r.model for r in record.rows] == ["c_broken", "a_fine", "b_old"]
    out = tmp_path / "rep"
    code, terminal = reported(record, out, capsys)
    assert code == 1
    said = "FAIL: 1 newly failing, 1 already failing on the base"
    assert [li for li in terminal.splitlines() if li.startswith("FAIL")][-1] == said
    comment = (out / "comment.md").read_text()
    assert comment.splitlines()[0] == f"### trtcheck: ❌ {said}"
    attention = comment.split("#### Needs attention")[1].split("\n\n")[1].splitlines()[2:]
    assert [line.split(" | ")[0] for line in attention] == [
        "| zoo::c\\_broken\\[float32\\]", "| zoo::b\\_old\\[float32\\]"]
    assert "newly failing" in attention[0] and "newly failing" not in attention[1]
    report = (out / "report.md").read_text()
    changes = report.split("## Head against base")[1]
    assert changes.index("c\\_broken") < changes.index("b\\_old")
    assert "FAIL</span> 1 newly failing, 1 already failing on the base" in (
        out / "report.html").read_text()


def test_a_process_gives_its_rows_in_the_zoos_case_order_whatever_order_they_ran() -> None:
    from trtcheck.execution.ab import Process

    rows = [_row(name, 1.0) for name in ("c", "a", "b")]
    process = Process(0, "base", 1, [r.case_id for r in rows], rows=rows,
                      collected=[f"zoo::{n}[float32]" for n in "abc"])
    assert [r.model for r in process.in_case_order()] == ["a", "b", "c"]


def test_with_only_predictions_no_report_counts_speed_regressions_or_unchanged_rows() -> None:
    """Prediction backends time nothing: the count line names no speed category (no "0 speedup
    regressions", no "rows unchanged") and says why speed was not judged."""
    from trtcheck.core.traits import Kind
    from trtcheck.render import render_comment, render_markdown

    rows = [replace(_row(n, 1.0), backend="lowering", kind=Kind.LOWERED) for n in ("a", "b")]
    base_rec, head_rec = Record({}, {}, rows), Record({}, {}, rows)
    _, diff = ab.judge(base_rec, head_rec, {}, metric="speedup", threshold=THRESHOLD,
                       level=Level(ALPHA, 0, 1))
    head_rec.baseline = diff.to_dict()
    head_rec.ab = {"level": Level(ALPHA, 0, 1).to_dict(),
                   "base_rows": [r.to_dict() for r in rows], "rows": []}
    line = count_line(diff)
    assert line == ("0 status changes; speed not judged: every backend predicts, and a "
                    "prediction times nothing a gate could use; statuses alone are compared")
    for text in (render_changes(head_rec), render_markdown(Judged.of(head_rec)),
                 render_html(Judged.of(head_rec)),
                 render_comment(Judged.of(head_rec), changes=render_changes(head_rec))):
        assert "regression" not in text and "unchanged" not in text
        assert "speed not judged" in text.lower()


def test_no_ab_report_shows_a_pair_and_a_change_of_opposite_sign() -> None:
    """Noisy processes (a far-off process on either side, as on a busy runner): each row's
    base → head pair and its change come from one statistic, so that their signs agree on
    every line, where the plain geometric means (the figures shown before) disagree with the
    change for some rows; the latency is beside them, and no other table repeats either."""
    from trtcheck.render import render_comment, render_markdown
    from trtcheck.render.junit import render_junit

    rng = random.Random(22)
    names = [f"m{i}" for i in range(30)]
    base_rec = Record({}, {}, [_row(n, 1.0) for n in names])
    head_rec = Record({}, {}, [_row(n, 1.0) for n in names])
    figures = {}
    for row in base_rec.rows:
        per = {side: [ProcessFigure(i, "pass", s, 0.5 / s) for i, s in
                      enumerate(_draw(rng, 6, shift, 0.05))]
               for side, shift in (("base", 0.0), ("head", rng.uniform(-0.1, 0.1)))}
        side = rng.choice(processes.SIDES)  # one process reads far off
        per[side][0] = replace(per[side][0], speedup=per[side][0].speedup * rng.choice((0.1, 8)))
        figures[row.key] = per
    level = Level(ALPHA, len(names), 4)
    _, diff = ab.judge(base_rec, head_rec, figures, metric="speedup", threshold=THRESHOLD,
                       level=level)
    head_rec.baseline = diff.to_dict()
    head_rec.ab = {"level": level.to_dict(), "base_rows": [], "rows": []}
    table = render_changes(head_rec).split("| processes |")[1].splitlines()[2:]
    assert len(table) == len(names)
    for line in table:
        cells = line.split(" | ")
        before, after = (float(x.rstrip("×")) for x in cells[3].split(" → "))
        change = float(re.search(r"([+-]\d+\.\d)%", cells[4]).group(1))
        assert (after > before and change > 0) or (after < before and change < 0) \
            or (after == before and abs(change) < 1), line
        assert re.fullmatch(r"\d\S* ms → \d\S* ms", cells[5]), line

    def plain_mean(per: list[ProcessFigure]) -> float:
        return statistics.geometric_mean([f.speedup for f in per])

    assert any((plain_mean(per["head"]) > plain_mean(per["base"]))
               != (c.latency.slowdown < 1) for c, per in zip(diff.changes, figures.values(),
                                                              strict=True))
    comment = render_comment(Judged.of(head_rec), changes=render_changes(head_rec))
    assert "#### Latency" not in comment and "Speedup by backend" not in comment
    assert "speedup [95% interval]" not in render_markdown(Judged.of(head_rec))
    assert "speedup [95% interval]" not in render_junit(head_rec)
