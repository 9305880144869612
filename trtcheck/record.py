"""The results record: one row per (case, backend, profile), saved as versioned JSON.

Rows are appended to ``results.jsonl`` as each case finishes; ``results.json`` and
every other report are rendered from the rows at the end.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from trtcheck.errors import RecordError
from trtcheck.status import Status

SCHEMA_VERSION = 1

# What every report says of a row whose ``evidence["prediction"]`` is set.
PREDICTION_NOTE = ("a prediction of TensorRT's dtype behaviour, made by trtcheck's emulate "
                   "backend with PyTorch, not a TensorRT measurement")


@dataclass(frozen=True)
class Stats:
    """Latency of one callable: fixed fields, all in milliseconds."""

    timer: str
    warmup: int
    repeats: int
    median_ms: float
    p90_ms: float
    min_ms: float
    mean_ms: float
    stdev_ms: float


@dataclass(frozen=True)
class Latency:
    eager: Stats
    backend: Stats

    @property
    def speedup(self) -> float:
        """Eager median over backend median: above 1 means the backend is faster."""
        return self.eager.median_ms / self.backend.median_ms if self.backend.median_ms else math.inf


@dataclass
class Row:
    """One result: a case run on one backend under one settings profile."""

    case_id: str
    file: str
    model: str
    variant: str
    backend: str
    profile: str = "default"
    status: Status = Status.PASS
    message: str = ""
    stage: str | None = None
    location: str | None = None
    traceback: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    latency: Latency | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    # Where the model is declared, for annotations: its file relative to the workspace (the
    # GitHub workspace, else the working directory) and the line of its ``@trtcheck.model``.
    source: str | None = None
    line: int | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case_id, self.backend, self.profile)

    @property
    def prediction(self) -> bool:
        """True when the backend predicts TensorRT's behaviour rather than running TensorRT."""
        return bool(self.evidence.get("prediction"))

    def worst(self, metric: str) -> float | None:
        """The largest value of a per-output metric, or None when no output has it."""
        values = [o[metric] for o in self.outputs if o.get(metric) is not None]
        return max(values) if values else None

    def min_cosine(self) -> float | None:
        values = [o["cosine"] for o in self.outputs if o.get("cosine") is not None]
        return min(values) if values else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        if self.latency is not None:
            d["latency"]["speedup"] = _finite(self.latency.speedup)
        return _json_safe(d)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Row:
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in d.items() if k in known}
        data["status"] = Status(data.get("status", "error"))
        data["outputs"] = [{k: v if k in _TEXT_FIELDS else _number(v) for k, v in o.items()}
                           for o in data.get("outputs", [])]
        lat = data.get("latency")
        if lat:
            data["latency"] = Latency(*(Stats(**{k: _number(v) for k, v in lat[side].items()})
                                        for side in ("eager", "backend")))
        return cls(**data)


@dataclass
class Record:
    """A whole run: environment, resolved options, and every row."""

    environment: dict[str, Any]
    options: dict[str, Any]
    rows: list[Row]
    paths: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    @classmethod
    def of(cls, environment: dict[str, Any], options: dict[str, Any], rows: list[Row]) -> Record:
        """A record whose ``paths`` are the analyses the rows carry, one per case."""
        paths = {r.case_id: r.evidence["analysis"] for r in rows if "analysis" in r.evidence}
        return cls(environment=environment, options=options, rows=rows, paths=paths)

    @property
    def has_predictions(self) -> bool:
        return any(r.prediction for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "environment": self.environment,
            "options": self.options,
            "rows": [r.to_dict() for r in self.rows],
            "paths": _json_safe(self.paths),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        if d.get("schema") != SCHEMA_VERSION:
            raise RecordError(
                f"results record has schema {d.get('schema')!r}; this trtcheck reads {SCHEMA_VERSION}"
            )
        return cls(
            environment=d.get("environment", {}),
            options=d.get("options", {}),
            rows=[Row.from_dict(r) for r in d.get("rows", [])],
            paths=d.get("paths", {}),
        )


_TEXT_FIELDS = frozenset({"path", "kind", "eager_dtype", "dtype", "message", "timer"})


def _number(value: Any) -> Any:
    """Undo :func:`_json_safe` for a numeric field: "inf", "-inf" and "nan" become floats."""
    return float(value) if value in ("inf", "-inf", "nan") else value


def _finite(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _json_safe(obj: Any) -> Any:
    """Make floats JSON-portable: NaN and infinities become strings."""
    if isinstance(obj, float):
        return _finite(obj)
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see the old or the new content, never a partial one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; reports are ordinary files
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(record: Record, path: Path) -> None:
    write_atomic(path, json.dumps(record.to_dict(), indent=2, sort_keys=False) + "\n")


def load(path: Path) -> Record:
    """Read ``results.json``, or rebuild a record from a partial ``results.jsonl``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror}") from None
    if path.suffix == ".jsonl":
        return _from_jsonl(text.splitlines(), path)
    try:
        return Record.from_dict(json.loads(text))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"{path}: not a trtcheck results record ({exc})") from None


class Journal:
    """Append-only ``results.jsonl``: a header line, then one line per row, flushed as written."""

    def __init__(self, path: Path, environment: dict[str, Any], options: dict[str, Any],
                 *, resume: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not (resume and path.exists()):
            header = {"schema": SCHEMA_VERSION, "environment": environment, "options": options}
            path.write_text(json.dumps(_json_safe(header)) + "\n", encoding="utf-8")
        self._fh = path.open("a", encoding="utf-8")

    def append(self, rows: Iterable[Row]) -> None:
        for row in rows:
            self._fh.write(json.dumps(row.to_dict()) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def _from_jsonl(lines: list[str], path: Path) -> Record:
    parsed = list(_parse_lines(lines))
    if not parsed or "schema" not in parsed[0]:
        raise RecordError(f"{path}: no trtcheck journal header")
    header, *rows = parsed
    # A resumed run appends again: the last row for a key wins, in first-seen order.
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        latest[(row.get("case_id"), row.get("backend"), row.get("profile"))] = row
    base = Record.from_dict({**header, "rows": list(latest.values())})
    return Record.of(base.environment, base.options, base.rows)


def _parse_lines(lines: list[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill mid-write
