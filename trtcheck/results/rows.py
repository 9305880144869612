"""The row contract: what one result is, how it is keyed, which rows a case gets, and its evidence.

A *row* is a case run on one backend under one settings profile. Its key is
``(case_id, backend, profile)``; a backend that ignores profiles has one slot per case, with
profile :data:`NO_PROFILE`. Rows made before any backend applied (a zoo file that failed to
import) have backend :data:`NO_BACKEND` and variant :data:`NO_VARIANT`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from trtcheck.core.profiles import Profile
from trtcheck.core.traits import NO_BACKEND, BackendRef, Kind
from trtcheck.results.figures import Latency, Memory, by_field
from trtcheck.results.jsontext import dumps
from trtcheck.results.metrics import ROW_METRICS
from trtcheck.results.nonfinite import NonFinite, count
from trtcheck.status import Status, apply_xfail

if TYPE_CHECKING:  # a case's rows are made where it runs; the results layer needs no torch
    from trtcheck.zoo.cases import Case

NO_PROFILE = "-"  # the backend ignores settings profiles
NO_VARIANT = "-"  # the row stands for a whole zoo file
# Where a prediction row keeps its timings in the record: eager's and PyTorch running the
# backend's rewritten graph, without any speedup (schema 3 on).
PREDICTION_TIMING = "prediction_timing"
# The deploy stage's own stages: saving, loading in a fresh process, calling what was loaded.
DEPLOY_STAGES = ("save", "load", "deploy")


class RowKey(NamedTuple):
    case_id: str
    backend: str
    profile: str


class BackendTraits(Protocol):
    """What planning needs of a backend, which its traits line (an isolated run's parent loads
    no backend) and a loaded backend both hold: whether profiles change it, and its kind."""

    uses_profiles: bool
    kind: Kind


@dataclass(frozen=True)
class Slot:
    """A place for one row of a case: a backend, and a profile unless the backend ignores them."""

    backend: str
    profile: Profile | None
    kind: Kind = Kind.MEASURED

    @property
    def profile_name(self) -> str:
        return self.profile.name if self.profile else NO_PROFILE

    def key(self, case_id: str) -> RowKey:
        return RowKey(case_id, self.backend, self.profile_name)


def plan(backends: Mapping[str, BackendTraits], profiles: Iterable[Profile]) -> list[Slot]:
    """The slots of every case: a backend that ignores profiles gets one, profile ``-``."""
    profiles = tuple(profiles)
    return [Slot(name, p, backend.kind) for name, backend in backends.items()
            for p in (profiles if backend.uses_profiles else (None,))]


@dataclass
class Evidence:
    """The path a backend took, filled the same way by every backend.

    ``path`` is the dtype path in short steps; ``fallbacks`` the ops left to PyTorch;
    ``boundaries`` the casts and complex views put around compiled blocks; ``engines`` the
    number of compiled blocks (None when the backend has no such notion); ``notes`` what the
    backend says of settings and versions; ``settings`` what it passed; ``versions`` the
    releases whose code ran; ``details`` figures of one backend's own; ``drift`` what a call
    with the sibling dtypes did (:mod:`trtcheck.measure.drift`); ``remark`` what the compile did
    that changes what the row's figures mean (graph breaks, nothing compiled), which the row's
    message says too, whatever its status. ``deploy``: the deploy stage's round trip, one entry
    per format: ``format``, ``status`` (pass, fail, error, not applicable, not run), the
    ``step`` it stopped at (save, load, run, compare) and that step's ``owner``, ``message``,
    the artifact's ``size_bytes``, ``save_s`` and ``load_s``, the ``shapes`` it ran at, and
    ``kept``: whether the complex and int64 outputs kept their dtypes and shapes (older records
    have no entry).
    """

    path: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    boundaries: list[str] = field(default_factory=list)
    engines: int | None = None
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str | None] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    drift: dict[str, str] | None = None
    remark: str = ""
    deploy: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Evidence:
        return cls(**by_field(d, _EVIDENCE_FIELDS))


@dataclass
class Row:
    """One result: a case run on one backend under one settings profile."""

    case_id: str
    file: str
    model: str
    variant: str
    backend: str
    profile: str = NO_PROFILE
    kind: Kind = Kind.MEASURED
    status: Status = Status.PASS
    message: str = ""
    stage: str | None = None
    location: str | None = None
    traceback: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    latency: Latency | None = None
    memory: Memory | None = None
    evidence: Evidence = field(default_factory=Evidence)
    tags: list[str] = field(default_factory=list)
    # Where the model is declared, for annotations: its file relative to the workspace (the
    # GitHub workspace, else the working directory) and the line of its ``@trtcheck.model``.
    source: str | None = None
    line: int | None = None
    # A dynamic case's input shapes the row ran at, by input name, the example first.
    shapes: list[dict[str, list[int]]] | None = None
    # What ``trtcheck reduce`` made of a failing row: its bundle, or how far it got.
    reduction: dict[str, Any] | None = None

    @property
    def key(self) -> RowKey:
        return RowKey(self.case_id, self.backend, self.profile)

    @property
    def prediction(self) -> bool:
        """True when the backend predicts TensorRT's behaviour rather than running TensorRT."""
        return self.kind is not Kind.MEASURED

    @property
    def no_engine(self) -> bool:
        """A pass whose compile built no TensorRT engine (every graph ran in PyTorch): it says
        nothing of TensorRT, and every summary counts it apart."""
        return self.status in (Status.PASS, Status.XPASS) and self.evidence.engines == 0

    @cached_property
    def nonfinite(self) -> NonFinite:
        """The NaN and Inf in the row's outputs, counted once: every report asks. A row is not
        changed in place once made (:func:`dataclasses.replace` makes another)."""
        return count(self.outputs)

    @cached_property
    def worst(self) -> dict[str, float | None]:
        """The worst value over the row's outputs of each metric the reports show for a row
        (:data:`ROW_METRICS`), by field, or None where no output has one; found once."""
        return {m.field: m.of_row(self.outputs) for m in ROW_METRICS}

    @cached_property
    def json_line(self) -> str:
        """The row as one line of JSON, as ``results.json`` holds it; a row read from a record
        this trtcheck saved keeps the line it was read from (:func:`trtcheck.results.record.load`)."""
        return dumps(self.to_dict())

    @property
    def memory_ratio(self) -> float | None:
        """Backend over eager memory peak, for measured rows only: a prediction's memory is
        PyTorch running a rewritten graph, not the compiled module's."""
        return None if self.prediction or self.memory is None else self.memory.ratio

    def to_dict(self) -> dict[str, Any]:
        """The row as plain data for JSON. It shares the row's lists and dicts (its outputs,
        timings, evidence lists), as rows are not changed in place: copy a part to change it.
        Field by field and without copies: dataclasses.asdict deep-copies every output's
        metrics, and even shallow copies were a third of the time of saving 10,000 rows."""
        d = {name: getattr(self, name) for name in _ROW_FIELDS}
        d["status"] = self.status.value
        d["kind"] = self.kind.value
        d["evidence"] = {name: getattr(self.evidence, name) for name in _EVIDENCE_FIELDS}
        if self.latency is not None and self.prediction:
            # No speedup, interval or ratio: a dashboard reading the JSON must not take PyTorch
            # running a rewritten graph for a TensorRT measurement.
            d["latency"] = None
            d[PREDICTION_TIMING] = {k: v for k, v in self.latency.to_dict().items()
                                    if isinstance(v, dict) or k in ("method", "schedule")}
        elif self.latency is not None:
            d["latency"] = self.latency.to_dict()
        if self.memory is not None:
            d["memory"] = {**self.memory.__dict__, "notes": list(self.memory.notes)}
            if not self.prediction:
                d["memory"]["ratio"] = self.memory_ratio
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Row:
        """A row from its dict; schema 1's untyped evidence (with ``prediction``) is read too."""
        data = by_field(d, _ROW_FIELDS)
        data["status"] = Status(data.get("status", "error"))
        evidence = data.get("evidence") or {}
        legacy_kind = Kind.EMULATED if evidence.get("prediction") else Kind.MEASURED
        data["kind"] = Kind(data["kind"]) if "kind" in data else legacy_kind
        data["evidence"] = Evidence.from_dict(evidence)
        timed = data.get("latency") or d.get(PREDICTION_TIMING)
        data["latency"] = Latency.from_dict(timed) if timed else None
        mem = data.get("memory")
        if mem:
            data["memory"] = Memory(**by_field(mem, _MEMORY_FIELDS))
        return cls(**data)


_ROW_FIELDS = tuple(f.name for f in fields(Row))
_EVIDENCE_FIELDS = tuple(f.name for f in fields(Evidence))
_MEMORY_FIELDS = tuple(f.name for f in fields(Memory))


@dataclass(frozen=True)
class Analysis:
    """The dtype-path analysis of one case, recorded once per case (not per row)."""

    case_id: str
    data: dict[str, Any]


def file_row(case_id: str, file: str, model: str, **fields_: Any) -> Row:
    """An error row that stands for more than a case: a zoo file that could not be collected,
    or a shard missing from a merge (no backend, variant or profile)."""
    return Row(case_id, file, model, NO_VARIANT, NO_BACKEND, NO_PROFILE,
               **{"status": Status.ERROR, **fields_})


def row_for(case: Case, slot: Slot, **fields_: Any) -> Row:
    """The row of a case in one slot, with the zoo's expected failure applied to its status."""
    row = Row(case.case_id, case.file.rel, case.spec.name, case.variant, slot.backend,
              slot.profile_name, slot.kind, tags=list(case.spec.tags), source=case.file.source,
              line=case.spec.line, **fields_)
    return finish(case, row)


def finish(case: Case, row: Row) -> Row:
    """The row with the zoo's declared expected failure (xfail) applied to its status."""
    status, message = apply_xfail(row.status, row.message,
                                  case.spec.xfail_reason(case.variant, row.backend, row.profile,
                                                            BackendRef.parse(row.backend).name))
    return replace(row, status=status, message=message)


def rows_for(case: Case, slots: Iterable[Slot], **fields_: Any) -> list[Row]:
    """One row per slot of a case, all with the same fields — for whole-case outcomes."""
    return [row_for(case, slot, **fields_) for slot in slots]
