"""The per-output accuracy metrics, declared once: every renderer and the baseline read them."""

from __future__ import annotations

from collections.abc import Callable
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

    def of_row(self, outputs: list[dict[str, Any]]) -> float | None:
        """The worst value over a row's saved outputs, or None when no output has one."""
        values = [o[self.field] for o in outputs if isinstance(o.get(self.field), (int, float))]
        return self.worst(values) if values else None


METRICS = (
    Metric("max_abs", "worst abs err", "max abs"),
    Metric("max_rel", "worst rel err", "max rel"),
    Metric("cosine", "min cosine", None, worst=min),
    Metric("min_atol", None, "min atol"),
    Metric("min_rtol", None, "min rtol"),
)
ROW_METRICS = tuple(m for m in METRICS if m.row_label)
OUTPUT_METRICS = tuple(m for m in METRICS if m.output_label)
