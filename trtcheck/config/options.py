"""The frozen options a run is given: :class:`Options` and the regression :class:`Gate`, resolved
once by :func:`trtcheck.config.cascade.resolve`.

A field that holds a setting takes its default from :data:`trtcheck.config.settings.SETTINGS`
(:func:`setting`); the record's options (:meth:`Options.to_dict`) are made from the fields."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from trtcheck.config import ab as ab_settings
from trtcheck.config.settings import BY_KEY, SAME
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import BUILTIN_PROFILES, DEFAULT_TOLERANCES, Profile, Tolerance


def setting(key: str, make: Callable[[Any], Any] | None = None, *, record: bool = True) -> Any:
    """The field of setting ``key``: its default is the table's (or its ``undecided`` value),
    through ``make`` when the field holds it in another form (a tuple for a list); ``record``
    False leaves it out of the record's options."""
    s = BY_KEY[key]
    default = s.default if s.undecided is SAME else s.undecided
    if make is None:
        make = tuple if isinstance(default, list) else Path if s.type is Path and default else None
    value = make(default) if make else default
    meta = {"setting": key, "record": record}
    if isinstance(value, (list, dict)) or dataclasses.is_dataclass(value):
        return dataclasses.field(default_factory=lambda: make(default) if make else default,
                                 metadata=meta)
    return dataclasses.field(default=value, metadata=meta)


def unrecorded(default: Any = None, factory: Callable[[], Any] | None = None) -> Any:
    """A field the record's options leave out (it says how the run was driven, not what it did)."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"record": False})
    return dataclasses.field(default=default, metadata={"record": False})


@dataclass(frozen=True)
class Gate:
    """What fails a run compared with a baseline: ``fail_on`` ``regression`` adds regressions to
    failing rows, ``output-change`` (``ab``) rows whose eager outputs changed; ``metric`` and
    ``threshold`` decide what a regression is."""

    fail_on: tuple[str, ...] = setting("fail_on")
    metric: str = setting("metric")
    threshold: float = setting("threshold", float)


def _profiles(names: list[str]) -> tuple[Profile, ...]:
    return tuple(BUILTIN_PROFILES[n] for n in names)


@dataclass(frozen=True)
class Options:
    """Everything a run needs, resolved once."""

    paths: tuple[Path, ...]
    backends: tuple[str, ...] = setting("backends")
    variants: tuple[str, ...] = setting("variants")
    keyword: str | None = setting("keyword")
    profiles: tuple[Profile, ...] = setting("run_profiles", _profiles)
    # the built-in profiles and the configured ones
    known_profiles: tuple[str, ...] = setting("profiles", lambda _: tuple(BUILTIN_PROFILES),
                                              record=False)
    tolerances: Mapping[str, Tolerance] = setting("tolerances",
                                                  lambda _: dict(DEFAULT_TOLERANCES))
    timing: Timing = setting("timing", lambda table: Timing(**table))
    # Every device the run uses: one, or the listed GPUs (one worker each); a worker's, its own.
    devices: tuple[str, ...] = setting("device")
    workers: int = setting("workers")
    shard: tuple[int, int] | None = setting("shard")  # (index from 1, count)
    engine_cache: bool = setting("engine_cache")
    cache_dir: Path | None = setting("cache_dir")
    out: Path = setting("out")
    strict_xfail: bool = setting("strict_xfail")
    dtype_drift: bool = setting("dtype_drift")
    allow_empty: bool = setting("allow_empty")
    allow_skipped: bool = setting("allow_skipped")
    isolate: bool = setting("isolate")
    timeout: float = setting("timeout")
    resume: bool = setting("resume", record=False)
    memory_limit: int | None = setting("memory_limit_mb")
    verbosity: int = unrecorded(BY_KEY["verbose"].default - BY_KEY["quiet"].default)
    config_file: Path | None = setting("config")
    backend_note: str | None = unrecorded()
    config_warnings: tuple[str, ...] = unrecorded(())  # e.g. a config key under its old name
    nan: str = setting("nan")
    fallback: str = setting("fallback")
    ci: bool = unrecorded(False)  # the CI environment variable is set
    fallback_note: str | None = None  # which backend ran instead of the default, and why
    torch_tensorrt: tuple[str, ...] = setting("torch_tensorrt")
    baseline: Path | None = setting("baseline")
    gate: Gate = dataclasses.field(default_factory=Gate)
    reduce: bool = setting("reduce")
    reduce_budget: float = setting("reduce_budget", float)
    reduce_row_budget: float = setting("reduce_row_budget", float)
    reduce_attempts: int = setting("reduce_attempts")
    keep_real_values: bool = setting("keep_real_values")
    releases: tuple[str, ...] = setting("releases")
    time_predictions: bool = setting("time_predictions")
    lowering_dryrun: bool = setting("lowering_dryrun")
    deploy: bool = setting("deploy")
    deploy_formats: tuple[str, ...] = setting("deploy_formats")
    ab: ab_settings.ABSettings = dataclasses.field(default_factory=ab_settings.defaults)
    # An ``ab`` process after the first of its side: its figures and its comparison with eager
    # are wanted, the export (where no backend compiles from it), the analysis and the dtype
    # drift check are the first process's.
    figures_only: bool = unrecorded(False)
    # ``ab``: the kernels of one extra call of eager and of each timed backend, after the timing
    # (trtcheck.measure.kernels), so that processes that ran other kernels can be told apart.
    kernels: bool = unrecorded(False)
    # ``ab``: the folder where the process keeps each case's eager digests (and, in the first
    # process of a side, its eager outputs: trtcheck.measure.outputs); None: kept nowhere.
    eager_outputs: Path | None = unrecorded(None)

    @property
    def device(self) -> str:
        """The device this process runs on: the first listed (a worker's only one)."""
        return self.devices[0]

    def deploy_formats_for(self, profile: Profile) -> tuple[str, ...]:
        """The formats the deploy stage saves a row of ``profile`` in: none under
        ``--no-deploy``, else ``--deploy-format``'s, else the profile's ``deploy`` key."""
        return () if not self.deploy else self.deploy_formats or profile.deploy

    def to_dict(self) -> dict[str, Any]:
        """The options a record keeps: every field but those marked unrecorded, as JSON."""
        out = {f.name: _plain(getattr(self, f.name)) for f in fields(self)
               if f.metadata.get("record", True)}
        out["device"] = self.device  # as records before the list was one field held it
        out["shard"] = f"{self.shard[0]}/{self.shard[1]}" if self.shard else None
        return out


def _plain(value: Any) -> Any:
    """A field's value as JSON: paths as text, tuples as lists, dataclasses as tables."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return asdict(value)
    return value
