"""The per-output accuracy metrics, declared once: every renderer and the baseline read them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Metric:
    """A per-output figure of :class:`LeafResult`, declared once for every renderer.

    ``row_label`` names its worst value over a row's outputs (``worst`` picks it) in the
    accuracy table and JUnit's system-out, or is None to leave it out there; ``output_label``
    names it in the per-output tables and failure lines, or is None likewise."""

    field: str
    row_label: str | None
    output_label: str | None
    worst: Callable[[list[float]], float] = max

    def of(self, output: dict[str, Any]) -> float | None:
        """The figure of one saved output, or None when it has none."""
        value = output.get(self.field)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def of_row(self, outputs: list[dict[str, Any]]) -> float | None:
        """The worst value over a row's saved outputs, or None when no output has one."""
        values = [v for o in outputs if (v := self.of(o)) is not None]
        return self.worst(values) if values else None


MAX_ABS = Metric("max_abs", "worst abs err", "max abs")
MAX_REL = Metric("max_rel", "worst rel err", "max rel")
MIN_ATOL = Metric("min_atol", None, "min atol")
MIN_RTOL = Metric("min_rtol", None, "min rtol")
# NaN and Inf elements of eager's output and the backend's, summed over a row's outputs
# (:mod:`trtcheck.results.nonfinite` says them in words).
NONFINITE = tuple(Metric(f, None, None, worst=sum) for f in ("eager_nan", "eager_inf", "nan", "inf"))
# Every figure a compared output carries (measure.compare.LeafResult), and where it shows.
METRICS = (
    MAX_ABS,
    MAX_REL,
    Metric("cosine", "min cosine", None, worst=min),
    MIN_ATOL,
    MIN_RTOL,
    Metric("frac_mismatch", None, None),
    Metric("max_mag_err", None, None),
    Metric("max_phase_err", None, None),
    Metric("n_diff", None, None),
    Metric("int32_overflow", None, None),
    *NONFINITE,
)
ROW_METRICS = tuple(m for m in METRICS if m.row_label)
OUTPUT_METRICS = tuple(m for m in METRICS if m.output_label)


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0


def severity(output: Mapping[str, Any]) -> tuple[float, ...]:
    """The one order of outputs, worst last (``max`` picks the worst): failed; then returned as
    another type or shape; then in another dtype; then the larger share of the tolerance given
    that passing would need (the atol needed over the atol given, or the same for rtol); then
    the larger fraction of elements mismatched, relative error and absolute error. The row's
    message and every report name the same worst output by it."""
    dtype = str(output.get("dtype", ""))
    wrong_form = output.get("shape") != output.get("eager_shape") or not dtype.startswith("torch.")
    shares = []
    for given, needed in (("atol", MIN_ATOL), ("rtol", MIN_RTOL)):
        allowed, need = _number(output.get(given)), _number(output.get(needed.field))
        if allowed > 0 and need >= 0:
            shares.append(need / allowed)
    return (float(not output.get("passed")), float(wrong_form),
            float(dtype != output.get("eager_dtype")), max(shares, default=-1.0),
            _number(output.get("frac_mismatch")), _number(output.get(MAX_REL.field)),
            _number(output.get(MAX_ABS.field)))
