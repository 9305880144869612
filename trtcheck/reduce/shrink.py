"""Shrinking a failing graph: cut at the failing outputs' cone, halve it while a half fails,
bisect from the output end and from the input end, then delta debugging over the nodes left.

Every candidate is a set of node names of a :class:`~trtcheck.reduce.graph.Recorded` graph; a
:data:`Trial` runs it and says how it failed. A candidate is kept only when it fails with the
row's :class:`~trtcheck.reduce.signature.Signature`. The first node whose value diverges is found
by the output-end bisection (the earliest node whose graph, cut there, still fails the same
way); until then the signature is compared without its op.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from trtcheck.reduce.graph import NotAGraph, Recorded, Subgraph, subgraph
from trtcheck.reduce.signature import Signature, failing_outputs, signature
from trtcheck.results.rows import Row

# Runs one candidate and returns its row.
Trial = Callable[[Subgraph], Row]
Progress = Callable[[str], None]


class Exhausted(Exception):
    """The row's time budget or attempt cap ran out."""


@dataclass
class Search:
    """The state of one reduction: the best candidate so far and what it cost."""

    rec: Recorded
    trial: Trial
    target: Signature
    budget_s: float
    attempts: int
    progress: Progress = lambda text: None
    best: list[str] = field(default_factory=list)
    best_row: Row | None = None
    tried: int = 0
    phase: str = "start"
    started: float = field(default_factory=time.monotonic)
    seen: dict[frozenset[str], Row | None] = field(default_factory=dict)
    rejected: list[tuple[Signature, int]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def outcome(self, keep: Sequence[str]) -> Row | None:
        """The candidate's row, or None where it is not a graph; memoised; raises
        :class:`Exhausted` past the budget or the cap."""
        key = frozenset(keep)
        if key in self.seen:
            return self.seen[key]
        try:
            sub = subgraph(self.rec, keep)
        except NotAGraph:
            self.seen[key] = None
            return None
        if self.tried >= self.attempts:
            raise Exhausted(f"attempt cap of {self.attempts} reached")
        if self.seconds >= self.budget_s:
            raise Exhausted(f"time budget of {self.budget_s:g} s spent")
        self.tried += 1
        row = self.trial(sub)
        self.seen[key] = row
        return row

    def signature_of(self, keep: Sequence[str], row: Row) -> Signature:
        outputs = self.rec.sinks(keep)
        return signature(row, outputs, {n: self.rec.op(n) for n in self.rec.ordered(keep)})

    def fails(self, keep: Sequence[str], *, op: bool = True) -> bool:
        """Whether the candidate fails the same way; a kept one becomes the best."""
        keep = self.rec.ordered(keep)
        if not keep:
            return False
        row = self.outcome(keep)
        if row is None:
            return False
        found = self.signature_of(keep, row)
        if not self.target.same(found, op=op):
            self.rejected.append((found, len(keep)))
            return False
        if len(keep) < len(self.best) or not self.best:
            self.best, self.best_row = keep, row
            self.progress(f"{self.phase}: {len(keep)} nodes ({self.tried} tried, "
                          f"{self.seconds:.0f} s)")
        return True


def shrink(search: Search) -> None:
    """Shrink ``search.best`` (the whole graph, known to fail) as far as budget and cap allow;
    :class:`Exhausted` leaves the best found so far in ``search``."""
    search.phase = "cone"
    _cone(search)
    search.phase = "halving"
    _halve(search)
    search.phase = "output end"
    _bisect_output_end(search)
    if search.target.mismatch and search.best_row is not None:
        search.target = search.signature_of(search.best, search.best_row)
        _cone(search, op=True)
    search.phase = "input end"
    _bisect_input_end(search)
    search.phase = "delta debugging"
    _ddmin(search)


def _cone(search: Search, *, op: bool = False) -> None:
    """Keep what the failing outputs depend on (every output, for an exception)."""
    rec, row = search.rec, search.best_row
    outputs = rec.sinks(search.best)
    failing = failing_outputs(row, outputs) if row is not None else []
    cone = rec.ordered(rec.cone(failing or outputs) & set(search.best))
    if len(cone) < len(search.best):
        search.fails(cone, op=op)


def _halve(search: Search) -> None:
    """Cut the graph in two while one half fails alone: the later half from the input end (eager's
    values of the earlier fed in), else the earlier half from the output end."""
    while len(search.best) >= 4:
        nodes = search.best
        mid = len(nodes) // 2
        if not (search.fails(nodes[mid:], op=False) or search.fails(nodes[:mid], op=False)):
            return


def _bisect_output_end(search: Search) -> None:
    """The shortest prefix of the graph that still fails: its sinks become the outputs."""
    order = search.best
    lo, hi = 1, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        if search.fails(order[:mid], op=False):
            hi = mid
        else:
            lo = mid + 1


def _bisect_input_end(search: Search) -> None:
    """The shortest suffix that still fails, eager's values of what it cut fed in as inputs."""
    order = search.best
    lo, hi = 0, len(order) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if search.fails(order[mid:]):
            lo = mid
        else:
            hi = mid - 1


def _ddmin(search: Search) -> None:
    """Delta debugging: remove ever smaller chunks of nodes while the failure stays."""
    chunks = 2
    while len(search.best) >= 2:
        nodes = search.best
        size = -(-len(nodes) // chunks)
        for start in range(0, len(nodes), size):
            removed = set(nodes[start:start + size])
            if search.fails([n for n in nodes if n not in removed]):
                chunks = max(chunks - 1, 2)
                break
        else:
            if chunks >= len(nodes):
                return
            chunks = min(2 * chunks, len(nodes))
