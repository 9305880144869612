"""``trtcheck ab``'s per-process figures as its record holds them: each process's figures of a
row (:class:`ProcessFigure`), a side's as lists in results.json, and an ``ab`` record's two sides
read back as records of their own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trtcheck.results.jsontext import finite
from trtcheck.results.record import Record
from trtcheck.results.rows import Row, RowKey

SIDES = ("base", "head")


@dataclass(frozen=True)
class ProcessFigure:
    """One row's figures in one process: its status, speedup (eager ÷ backend, interleaved in
    that process), the backend's latency (device median, ms), the hash of the code the
    backend generated there, the fingerprints of the kernels eager and the backend ran
    (``{"eager": …, "backend": …}``, or ``{"reason": …}`` where none was taken), the worst
    relative error of its comparison with eager, and the digests of the case's seeded inputs
    and of eager's outputs on them (``INPUTS/OUTPUTS``, :mod:`trtcheck.measure.outputs`)."""

    process: int
    status: str
    speedup: float | None = None
    latency_ms: float | None = None
    code_hash: str | None = None
    kernels: Mapping[str, Any] | None = None
    max_rel: float | None = None
    eager: str | None = None

    @property
    def kernel_set(self) -> str | None:
        """The kernels this process ran, eager's and the backend's fingerprints together; None
        where neither was taken."""
        k = self.kernels or {}
        if not (k.get("eager") or k.get("backend")):
            return None
        return f"{k.get('eager') or '-'}/{k.get('backend') or '-'}"


def figures_of(per_process: Sequence[ProcessFigure], metric: str) -> list[float]:
    """The gated figure of each process that gave one."""
    values = [f.speedup if metric == "speedup" else f.latency_ms for f in per_process]
    return [v for v in values if v is not None]


def side_dict(per_process: Sequence[ProcessFigure]) -> dict[str, list[Any]]:
    """A row's figures on one side as results.json holds them: a list per figure, one entry per
    process, in the order the processes ran."""
    return {"process_ids": [f.process for f in per_process],
            "process_statuses": [f.status for f in per_process],
            "process_speedups": [finite(f.speedup) if f.speedup is not None else None
                                 for f in per_process],
            "process_latency_ms": [f.latency_ms for f in per_process],
            "process_code_hashes": [f.code_hash for f in per_process],
            "process_kernels": [dict(f.kernels) if f.kernels is not None else None
                                for f in per_process],
            "process_max_rel": [finite(f.max_rel) if f.max_rel is not None else None
                                for f in per_process],
            "process_eager_digests": [f.eager for f in per_process]}


def side_from_dict(d: Mapping[str, Any]) -> list[ProcessFigure]:
    """Undo :func:`side_dict` (a record written before a list was added has None for it)."""
    def number(v: Any) -> float | None:
        return float(v) if isinstance(v, str) else v

    ids = d.get("process_ids", [])

    def column(key: str) -> list[Any]:
        return d.get(key) or [None] * len(ids)

    return [ProcessFigure(p, s, number(sp), number(ms), h, k, number(e), g)
            for p, s, sp, ms, h, k, e, g in zip(
                ids, d.get("process_statuses", []), d.get("process_speedups", []),
                d.get("process_latency_ms", []), column("process_code_hashes"),
                column("process_kernels"), column("process_max_rel"),
                column("process_eager_digests"), strict=True)]


def row_entries(section: Mapping[str, Any]) -> dict[RowKey, dict[str, list[ProcessFigure]]]:
    """Each row's per-process figures by side, from a record's ``ab`` section."""
    return {RowKey(r["case_id"], r["backend"], r["profile"]):
            {side: side_from_dict(r.get(side) or {}) for side in SIDES}
            for r in section.get("rows", [])}


def sides(record: Record) -> tuple[Record, Record, dict[RowKey, dict[str, list[ProcessFigure]]]]:
    """An ``ab`` record's base and head as records of their own, and each row's per-process
    figures by side."""
    section = record.ab or {}
    base_env = {**record.environment,
                "git_commit": (section.get("sides") or {}).get("base", {}).get("commit")}
    base = Record(base_env, record.options,
                  [Row.from_dict(r) for r in section.get("base_rows", [])], {})
    return base, record, row_entries(section)
