"""NaN and Inf in a row's outputs, counted from its saved comparison and said in words.

Every report says the same words for a row whose eager or backend output holds NaN or Inf
("eager output holds 10 NaN and 1 Inf, backend output 10 NaN and 1 Inf"), so that a row never
passes on non-finite values unseen. ``nan = "warn"`` (the default) lets matching NaN and Inf
pass with :data:`MARK`; ``nan = "fail"`` fails every such row."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trtcheck.results.metrics import NONFINITE

MARK = "⚠"


@dataclass(frozen=True)
class NonFinite:
    """NaN and Inf elements over a row's outputs, in eager's output and in the backend's;
    ``where`` names the outputs that hold any."""

    eager_nan: int = 0
    eager_inf: int = 0
    nan: int = 0
    inf: int = 0
    where: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.eager_nan or self.eager_inf or self.nan or self.inf)

    def describe(self, n_outputs: int = 1) -> str:
        """``""``, or the counts in words; with several outputs, which of them hold them."""
        if not self:
            return ""
        eager, backend = _holds(self.eager_nan, self.eager_inf), _holds(self.nan, self.inf)
        text = (f"eager output holds {eager}, backend output {backend}" if eager and backend
                else f"eager output holds {eager}, backend output none" if eager
                else f"backend output holds {backend}, eager output none")
        return f"{text} (in {', '.join(self.where)})" if n_outputs > 1 else text


NONE_FOUND = NonFinite()
_FIELDS = tuple(m.field for m in NONFINITE)


def _holds(nan: int, inf: int) -> str:
    return " and ".join(part for part in (f"{nan} NaN" if nan else "",
                                          f"{inf} Inf" if inf else "") if part)


def count(outputs: Iterable[Mapping[str, Any]]) -> NonFinite:
    """The counts over a row's saved outputs (records without them count none)."""
    outputs = list(outputs)
    if not any(any(map(o.get, _FIELDS)) for o in outputs):  # most rows: a quick none
        return NONE_FOUND
    totals = {m.field: int(m.of_row(outputs) or 0) for m in NONFINITE}
    where = tuple(f"out{o.get('path') or ''}" for o in outputs
                  if any(m.of(o) for m in NONFINITE))
    return NonFinite(**totals, where=where)


def describe(outputs: list[Mapping[str, Any]]) -> str:
    """``""``, or a row's NaN and Inf counts in words."""
    return count(outputs).describe(len(outputs))
