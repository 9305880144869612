"""Whether a run's timings can be trusted, from its control: the ``eager`` backend's rows time
the user's module against itself and must read 1.00×, and one model's eager median is one
module's time, whichever row measured it. A run whose control failed says so in its headline
(:mod:`trtcheck.results.verdict`), and no speed change is judged from it."""

from __future__ import annotations

from trtcheck.results.record import FIGURES_SCHEMA, Record

CONTROL = "eager"  # the backend whose rows are the control
# The control's band: its speedup interval must reach 1.00× ± this (docs/benchmarks.md, "The
# control reads 1.00×": targets ± 0.05 on the H200, ± 0.10 on a CPU; a loaded 2-core CPU read
# 0.923-1.067).
BAND = 0.10
# How far one model's eager medians may lie apart across the rows of one run: the same module
# timed in one process; between processes medians moved 20-30% at 20 µs on the H200.
SPREAD = 2.0
SHOWN = 2  # reasons a headline names; the rest are counted


def distrust(record: Record) -> list[str]:
    """Why the timings of ``record`` are not to be trusted: a control row whose speedup interval
    lies wholly outside its band, a model whose eager medians lie more than :data:`SPREAD` times
    apart across its measured rows; empty when neither, or when its schema's control meant something else."""
    if record.source_schema < FIGURES_SCHEMA:
        return []
    rows = record.rows
    reasons = []
    for r in rows:
        if r.backend != CONTROL or r.latency is None:
            continue
        low, high = r.latency.interval or (r.latency.speedup, r.latency.speedup)
        if high < 1 / (1 + BAND) or low > 1 + BAND:
            reasons.append(f"the control ({CONTROL}) read {r.latency.speedup:.3g}× on {r.case_id}, "
                           f"outside its band of {1 / (1 + BAND):.2f}–{1 + BAND:.2f}×")
    medians: dict[str, list[float]] = {}
    for r in rows:  # a prediction's timing (--time-predictions) is apart: PyTorch's own
        eager = r.latency and (r.latency.eager_device or r.latency.eager)  # the speedup's figure
        if eager and eager.median_ms > 0 and not r.prediction:
            medians.setdefault(r.case_id, []).append(eager.median_ms)
    for case, ms in medians.items():
        if max(ms) > SPREAD * min(ms):
            reasons.append(f"{case}'s eager median read {min(ms):.3g} ms in one row and "
                           f"{max(ms):.3g} ms in another (more than {SPREAD:g}× apart)")
    return reasons


def distrust_words(reasons: list[str]) -> str:
    """``this run's timings are not trusted (…): speed not judged``, or ``""``."""
    if not reasons:
        return ""
    shown = "; ".join(reasons[:SHOWN]) + (f"; {len(reasons) - SHOWN} more" if len(reasons) > SHOWN
                                          else "")
    return f"this run's timings are not trusted ({shown}): speed not judged"
