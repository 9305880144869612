"""The kernel sets of an ``ab`` row: its processes grouped by the kernels they ran (eager's and
the backend's fingerprints, :mod:`trtcheck.measure.kernels`), so that the rule judges like with
like, the names of the kernels that tell the sets apart, and the sets in the words a record's
change keeps."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trtcheck.results.jsontext import finite
from trtcheck.results.processes import SIDES, ProcessFigure, figures_of
from trtcheck.results.stats import mean


@dataclass(frozen=True)
class KernelSet:
    """The processes of a row that ran one set of kernels: its letter (A, B, … in the order the
    sets first ran), fingerprint, the processes of each side, and its geometric mean of the
    gated figure over them."""

    letter: str
    fingerprint: str
    processes: Mapping[str, tuple[int, ...]]
    figure: float | None

    @property
    def shared(self) -> bool:
        """Whether both sides ran it."""
        return all(self.processes.get(side) for side in SIDES)

    def count(self) -> int:
        return sum(len(v) for v in self.processes.values())

    def to_dict(self) -> dict[str, Any]:
        return {"set": self.letter, "fingerprint": self.fingerprint,
                "processes": {side: list(v) for side, v in self.processes.items()},
                "figure": finite(self.figure) if self.figure is not None else None}


def kernel_sets(base: Sequence[ProcessFigure], head: Sequence[ProcessFigure],
                metric: str) -> list[KernelSet]:
    """The row's kernel sets over both sides' processes, in the order they first ran; one set
    or none (no fingerprints) means every process ran the same kernels as far as can be told."""
    ordered = sorted([(f, side) for side, per in zip(SIDES, (base, head), strict=True)
                      for f in per], key=lambda fs: fs[0].process)
    found: dict[str, dict[str, list[ProcessFigure]]] = {}
    for f, side in ordered:
        if f.kernel_set is not None:
            found.setdefault(f.kernel_set, {s: [] for s in SIDES})[side].append(f)
    sets = []
    for i, (key, per) in enumerate(found.items()):
        values = [v for side in SIDES for v in figures_of(per[side], metric) if v > 0]
        figure = math.exp(mean([math.log(v) for v in values])) if values else None
        sets.append(KernelSet(_letter(i), key,
                              {side: tuple(f.process for f in per[side]) for side in SIDES},
                              figure))
    return sets


def differing(names: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, dict[str, list[str]]]:
    """For each kernel set (by fingerprint), the names of eager's and the backend's kernels
    that not every set ran: what tells the sets apart."""
    out: dict[str, dict[str, list[str]]] = {}
    for who in ("eager", "backend"):
        lists = [set(per.get(who) or ()) for per in names.values()]
        common = set.intersection(*lists) if lists else set()
        for key, per in names.items():
            out.setdefault(key, {})[who] = sorted(set(per.get(who) or ()) - common)
    return out


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"S{i + 1}"


def kernel_line(sets: Sequence[KernelSet], metric: str) -> str:
    """``2 kernel sets: A in 7 processes, 1.05×; B in 5 processes, 1.48× (head only)``, or
    ``""`` when every process ran one set."""
    if len(sets) < 2:
        return ""
    def one(k: KernelSet) -> str:
        where = "" if k.shared else f" ({'base' if k.processes.get('base') else 'head'} only)"
        n = k.count()
        figure = ("" if k.figure is None else f", {k.figure:.2f}×" if metric == "speedup"
                  else f", {k.figure:.3g} ms")
        return f"{k.letter} in {n} process{'es' if n != 1 else ''}{figure}{where}"

    return f"{len(sets)} kernel sets: " + "; ".join(one(k) for k in sets)
