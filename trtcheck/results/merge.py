"""Merge the records of several shards (``--shard I/N``, :mod:`trtcheck.execution.shard`) into one,
refusing what cannot be combined."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtcheck.errors import RecordError
from trtcheck.results.record import Record, gc_paused, load
from trtcheck.results.rows import Row, file_row

MERGE = "(merge)"


def _device_kind(rec: Record) -> str:
    env = rec.environment
    kind = str(env.get("device", "")).split(":")[0]
    return f"{kind} ({env.get('device_name')})" if kind == "cuda" else kind


# What must be equal for records to be combined besides the settings that change rows:
# (name in messages, how to read it). ``out``, ``workers`` and the device index may differ.
COMPATIBLE: tuple[tuple[str, Callable[[Record], Any]], ...] = (
    ("trtcheck version", lambda r: r.environment.get("trtcheck")),
    ("record schema", lambda r: r.source_schema),
    ("torch version", lambda r: r.environment.get("torch")),
    ("torch_tensorrt version", lambda r: r.environment.get("torch_tensorrt")),
    ("TensorRT version", lambda r: r.environment.get("tensorrt")),
    ("device kind", _device_kind),
    ("git commit", lambda r: r.environment.get("git_commit")),
)
# The settings that change rows yet may differ between the records merged: each shard runs its
# own part; the device is compared by kind above; the shards' collection fingerprint covers
# -k, and whole runs may split a zoo by it.
MAY_DIFFER = frozenset({"shard", "device", "devices", "keyword"})


def _checks(row_settings: Mapping[str, str]) -> list[tuple[str, Callable[[Record], Any]]]:
    def option(key: str) -> Callable[[Record], Any]:
        return lambda r: r.options.get(key)

    return [*COMPATIBLE, *((name, option(key)) for key, name in row_settings.items()
                           if key not in MAY_DIFFER)]


@dataclass(frozen=True)
class _Part:
    path: Path
    record: Record

    @property
    def shard(self) -> dict[str, Any]:
        """The shard's description (:func:`trtcheck.execution.shard.describe`); empty for a whole run."""
        return self.record.environment.get("shard") or {}


@gc_paused()  # the records' objects are made by the million and hold no cycles
def merge(paths: Sequence[Path], row_settings: Mapping[str, str]) -> Record:
    """One record from the records of several runs (usually the shards of one run).

    ``row_settings``: the record's options that change rows, each with its name in messages
    (:data:`trtcheck.config.settings.ROW_SETTINGS`); records must agree on them.
    RecordError when they cannot be combined (naming the field that differs), when they
    overlap, or when sharded and unsharded records are mixed. A missing shard becomes one
    ``error`` row saying so, so that the merged reports cannot pass for a whole run."""
    parts = [_Part(p, load(p)) for p in paths]
    if not parts:
        raise RecordError("merge: no records given")
    first = parts[0]
    for part in parts[1:]:
        for name, read in _checks(row_settings):
            mine, theirs = read(first.record), read(part.record)
            if mine != theirs:
                raise RecordError(f"cannot merge {part.path} with {first.path}: they differ in "
                                  f"{name} ({theirs!r} against {mine!r})")
    parts, missing = _in_shard_order(parts)
    seen: dict[tuple[str, str, str], _Part] = {}  # a row's key -> the record giving it
    rows: list[Row] = []
    analyses: dict[str, Any] = {}
    for part in parts:
        for row in part.record.rows:
            other = seen.setdefault(row.key, part)
            if other is not part:  # one record given twice overlaps itself
                raise RecordError(f"cannot merge: {part.path} and {other.path} overlap: both hold "
                                  f"{row.case_id} on {row.backend} (profile {row.profile})")
            rows.append(row)
        analyses.update(part.record.analyses)
    rows += [file_row(f"{MERGE}::shard {i}/{n}", MERGE, MERGE, stage="merge",
                      message=f"shard {i}/{n} is missing: its cases are not in these reports")
             for i, n in missing]
    environment = {k: v for k, v in first.record.environment.items() if k != "shard"}
    environment["duration_s"] = max(p.record.environment.get("duration_s", 0.0) for p in parts)
    environment["merged"] = [{"record": str(p.path), "shard": p.shard,
                              "duration_s": p.record.environment.get("duration_s")} for p in parts]
    options = {**first.record.options, "shard": None}
    return Record(environment, options, rows, analyses)


def _in_shard_order(parts: list[_Part]) -> tuple[list[_Part], list[tuple[int, int]]]:
    """Shards sorted by index, and the ``(index, count)`` of each one missing; RecordError
    when they come from different collections or one shard is given twice."""
    sharded = [p for p in parts if p.shard]
    if not sharded:
        return parts, []
    if len(sharded) < len(parts):
        plain = next(p for p in parts if not p.shard)
        raise RecordError(f"cannot merge: {plain.path} is a whole run, not a shard; merging it "
                          f"with the shards of {sharded[0].path} would overlap")
    first = sharded[0]
    by_index: dict[int, _Part] = {}
    for part in sharded:
        for key in ("count", "fingerprint"):
            if part.shard[key] != first.shard[key]:
                raise RecordError(
                    f"cannot merge {part.path} with {first.path}: they are shards of different "
                    f"collections ({key} {part.shard[key]!r} against "
                    f"{first.shard[key]!r}): the same zoo, -k and variants must be collected")
        twin = by_index.setdefault(part.shard["index"], part)
        if twin is not part:
            raise RecordError(f"cannot merge: {part.path} and {twin.path} overlap: both are shard "
                              f"{part.shard['index']}/{part.shard['count']}")
    count = first.shard["count"]
    missing = [(i, count) for i in range(1, count + 1) if i not in by_index]
    return [by_index[i] for i in sorted(by_index)], missing
