"""The results record: every row and each case's analysis, saved as versioned JSON.

Rows and analyses are appended to ``results.jsonl`` as each case finishes; ``results.json``
and every other report are rendered from the record at the end.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import trtcheck
from trtcheck.core.profiles import Profile
from trtcheck.core.traits import NO_BACKEND
from trtcheck.errors import LockedError, OutputError, RecordError
from trtcheck.results.jsontext import dumps, json_safe
from trtcheck.results.rows import PREDICTION_TIMING, Analysis, Row
from trtcheck.status import ORDER, Status, Verdict, is_failure, verdict

LOCK_FILE = ".trtcheck.lock"
SCHEMA_VERSION = 3
# Schema 1 kept each case's analysis in every row's evidence and marked predictions there.
# Schema 3 changed what the control, the speedup and the memory figures mean (steady-state
# peaks, the eager backend timed as the reference is) and counts NaN and Inf per output; a
# prediction row keeps its timings apart, without a speedup. Figures of schemas 1 and 2 are
# not comparable with schema 3's (see :data:`FIGURES_SCHEMA`).
READABLE_SCHEMAS = (1, 2, 3)
FIGURES_SCHEMA = 3  # the first schema whose speedup, latency and memory figures mean today's


@dataclass
class Record:
    """A whole run: environment, resolved options, every row, and each case's analysis."""

    environment: dict[str, Any]
    options: dict[str, Any]
    rows: list[Row]
    analyses: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION
    # Changes against a baseline record (``trtcheck.results.baseline.Diff`` as a dict), when compared.
    baseline: dict[str, Any] | None = None
    # ``trtcheck ab``'s sides, processes and per-process figures (trtcheck.results.ab), when it
    # made the record; ``rows`` are then the head's.
    ab: dict[str, Any] | None = None
    # The schema of the file it was read from: where it came from, not what it holds.
    source_schema: int = field(default=SCHEMA_VERSION, compare=False)

    @property
    def interrupted(self) -> bool:
        """Whether the run was stopped (Ctrl-C or SIGTERM) before every case finished."""
        return bool(self.environment.get("interrupted"))

    @property
    def stopped(self) -> bool:
        """Whether the run ended before its end: interrupted, or its output could not be
        written. Nothing runs after such a run (no reduction keeps the user waiting)."""
        return self.interrupted or "output_error" in self.environment

    @property
    def xpass_fails(self) -> bool:
        """Whether an xpass fails the run: the ``strict_xfail`` setting it ran under."""
        return bool(self.options.get("strict_xfail"))

    def fails(self, row: Row) -> bool:
        """Whether ``row`` makes the run exit 1 (an xpass only where :attr:`xpass_fails`)."""
        return is_failure(row.status, strict_xfail=self.xpass_fails)

    def failing_rows(self) -> list[Row]:
        """The rows that make the run exit 1, in order."""
        return [r for r in self.rows if self.fails(r)]

    def status_counts(self) -> list[tuple[Status, int]]:
        """How many rows have each status, worst first, statuses with no rows left out."""
        counts = Counter(r.status for r in self.rows)
        return [(s, counts[s]) for s in ORDER if counts[s]]

    def releases(self) -> dict[str, list[str]]:
        """Each backend's Torch-TensorRT releases whose code ran, from its rows' evidence."""
        found: dict[str, list[str]] = {}
        for row in self.rows:
            if row.backend != NO_BACKEND:
                versions = found.setdefault(row.backend, [])
                version = row.evidence.versions.get("torch_tensorrt")
                if version and version not in versions:
                    versions.append(str(version))
        return found

    def verdict(self) -> Verdict:
        """The rows' verdict, under the options the record ran with (``strict_xfail``,
        ``allow_empty``, ``allow_skipped``); the job's is :func:`trtcheck.results.verdict.job_verdict`."""
        return verdict((r.status for r in self.rows), strict_xfail=self.xpass_fails,
                       interrupted=self.interrupted,
                       allow_empty=bool(self.options.get("allow_empty")),
                       allow_skipped=bool(self.options.get("allow_skipped")))

    def to_dict(self) -> dict[str, Any]:
        return json_safe(self._plain())

    def _plain(self) -> dict[str, Any]:
        """The record as a dict whose floats may still be NaN or infinite."""
        return {**self._parts(), "rows": [r.to_dict() for r in self.rows]}

    def _parts(self) -> dict[str, Any]:
        """The record's parts in the order saved, its rows as :class:`Row` objects."""
        return {
            "schema": self.schema,
            "environment": self.environment,
            "options": self.options,
            "rows": self.rows,
            "analyses": self.analyses,
            **({"baseline": self.baseline} if self.baseline is not None else {}),
            **({"ab": self.ab} if self.ab is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, nonfinite: bool = True) -> Record:
        """The record of a saved dict; ``nonfinite`` False says it holds no NaN or infinity
        saved as text, which spares turning each row's numbers back."""
        schema = d.get("schema")
        if schema not in READABLE_SCHEMAS:
            raise RecordError(f"results record has schema {schema!r}; this trtcheck reads "
                              f"{', '.join(map(str, READABLE_SCHEMAS))}")
        raw_rows = d.get("rows", [])
        analyses = dict(d.get("analyses") or d.get("paths") or {})
        for r in raw_rows:  # schema 1: each row carried its case's analysis
            legacy = (r.get("evidence") or {}).get("analysis")
            if legacy is not None:
                analyses.setdefault(r["case_id"], legacy)
        options = dict(d.get("options", {}))
        options["profiles"] = [_described(p) for p in options.get("profiles", [])]
        return cls(
            environment=d.get("environment", {}),
            options=options,
            rows=[Row.from_dict(_restore_numbers(r) if nonfinite else r) for r in raw_rows],
            analyses=analyses,
            baseline=d.get("baseline"),
            ab=d.get("ab"),
            source_schema=schema,
        )


_TEXT_FIELDS = frozenset({"path", "kind", "eager_dtype", "dtype", "message", "timer"})


def _described(profile: dict[str, Any]) -> dict[str, Any]:
    """A saved profile with its description; schema 1 saved none, so it is made from the fields."""
    if "description" in profile:
        return profile
    known = {f.name for f in fields(Profile)}
    try:
        return {**profile, "description": Profile(**{k: v for k, v in profile.items()
                                                      if k in known}).describe()}
    except TypeError:  # not a profile this trtcheck can read: shown without a description
        return profile


# A value that json_safe saved as text: where none is, no row's numbers need turning back.
_SAVED_NONFINITE = re.compile(r'":\s*"(?:-?inf|nan)"')


def _number(value: Any) -> Any:
    """Undo :func:`~trtcheck.results.jsontext.json_safe` for a numeric field: "inf", "-inf"
    and "nan" become floats."""
    return float(value) if value in ("inf", "-inf", "nan") else value


def _restore_numbers(row: dict[str, Any]) -> dict[str, Any]:
    """A saved row with the numbers of its outputs and latency back to floats."""
    row = dict(row)
    row["outputs"] = [{k: v if k in _TEXT_FIELDS else _number(v) for k, v in o.items()}
                      for o in row.get("outputs", [])]
    for timed in ("latency", PREDICTION_TIMING):
        if row.get(timed):
            row[timed] = {key: ({k: v if k in _TEXT_FIELDS else _number(v) for k, v in side.items()}
                                if isinstance(side, dict) else _number(side))
                          for key, side in row[timed].items()}
    return row


def read_row(line: str) -> Row:
    """A row from its line of JSON (:attr:`Row.json_line`), its NaN and infinities restored."""
    return Row.from_dict(_restore_numbers(json.loads(line)))


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


@contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold an advisory lock on a report directory, so that two runs never write into it at
    once. The kernel releases it when the process ends, even by SIGKILL, so a killed run never
    blocks ``--resume``; a run that ends otherwise removes the lock file. Raises
    :class:`LockedError` naming the holder's PID."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise LockedError(f"{out_dir} is in use by another trtcheck run (pid {holder}); "
                              "wait for it to finish, or give another --out") from None
        # The holder before us may have removed the file between our open and our lock: the
        # lock is ours only while the path still names the file we locked.
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held, so no other run holds this file
        os.close(fd)  # closing the only descriptor releases the lock


@contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection held off while a big record's many small objects are made or
    read: they form no cycles, and each collection would walk them all again (half the time of
    merging and rendering 10,000 rows)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def save(record: Record, path: Path) -> None:
    """``results.json``: a key per line, and each row on a line of its own."""
    with gc_paused():
        _save(record, path)


def _save(record: Record, path: Path) -> None:
    parts = []
    for key, value in record._parts().items():
        if key == "rows":
            text = "[\n" + ",\n".join(row.json_line for row in value) + "\n]" if value else "[]"
        else:
            text = dumps(value)
        parts.append(f"{json.dumps(key)}: {text}")
    write_atomic(path, "{\n" + ",\n".join(parts) + "\n}\n")


_ROWS_LINE = '"rows": ['


def _keep_lines(record: Record, text: str) -> None:
    """Give each row of ``record``, read from ``text``, the line it was saved as, so that saving
    it again copies the line rather than encoding the row anew (most of the time of merging
    shards). Only for text this trtcheck wrote in its own layout (:func:`save`), whose first row
    encodes to its line again; otherwise each row keeps encoding itself."""
    rows = record.rows
    if not rows or record.source_schema != SCHEMA_VERSION \
            or record.environment.get("trtcheck") != trtcheck.__version__:
        return
    lines = text.splitlines()
    try:
        start = lines.index(_ROWS_LINE) + 1
    except ValueError:
        return
    saved = [line.removesuffix(",") for line in lines[start:start + len(rows)]]
    end = lines[start + len(rows)] if start + len(rows) < len(lines) else ""
    if len(saved) != len(rows) or end not in ("]", "],") or saved[0] != rows[0].json_line:
        return
    for row, line in zip(rows[1:], saved[1:], strict=True):
        row.__dict__["json_line"] = line  # the cached_property's own slot


def load(path: Path) -> Record:
    """Read ``results.json``, or rebuild a record from a partial ``results.jsonl``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror}") from None
    if path.suffix == ".jsonl":
        return _from_jsonl(text.splitlines(), path)
    try:
        with gc_paused():
            record = Record.from_dict(json.loads(text),
                                      nonfinite=bool(_SAVED_NONFINITE.search(text)))
            _keep_lines(record, text)
            return record
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"{path}: not a trtcheck results record ({exc})") from None


class Journal:
    """Append-only ``results.jsonl``: a header line, then one line per row or case analysis,
    flushed as written."""

    def __init__(self, path: Path, environment: dict[str, Any], options: dict[str, Any],
                 *, resume: bool = False) -> None:
        self.path = path
        with self._writing():
            path.parent.mkdir(parents=True, exist_ok=True)
            if not (resume and path.exists()):
                header = {"schema": SCHEMA_VERSION, "environment": environment, "options": options}
                path.write_text(dumps(header) + "\n", encoding="utf-8")
            self._fh = path.open("a", encoding="utf-8")

    def append(self, items: Iterable[Row | Analysis]) -> None:
        """Append and flush to disk; :class:`OutputError` when the disk refuses."""
        with self._writing():
            for item in items:
                line = (dumps({"analysis": item.case_id, "data": item.data})
                        if isinstance(item, Analysis) else item.json_line)
                self._fh.write(line + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())

    @contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        with suppress(OSError):  # a write that failed already said why
            self._fh.close()


def _from_jsonl(lines: list[str], path: Path) -> Record:
    parsed = list(_parse_lines(lines))
    if not parsed or "schema" not in parsed[0]:
        raise RecordError(f"{path}: no trtcheck journal header")
    header, *items = parsed
    # A resumed run appends again: the last row for a key wins, in first-seen order.
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    analyses: dict[str, Any] = {}
    for item in items:
        if "analysis" in item:
            analyses[item["analysis"]] = item.get("data")
        else:
            latest[(item.get("case_id"), item.get("backend"), item.get("profile"))] = item
    return Record.from_dict({**header, "rows": list(latest.values()), "analyses": analyses})


def _parse_lines(lines: list[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill mid-write
