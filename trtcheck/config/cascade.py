"""The cascade that resolves options once into the frozen :class:`Options`: defaults, then the
config file, then the command line, each value remembering where it came from for its messages.

Each setting is declared once, in :mod:`trtcheck.config.settings`; this module reads the config
file against that declaration and turns the values into :class:`Options`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trtcheck.config import ab as ab_settings
from trtcheck.config import validation
from trtcheck.config.devices import resolve_devices
from trtcheck.config.files import config_for
from trtcheck.config.options import Gate, Options
from trtcheck.config.settings import (
    BY_KEY,
    CONFIG_SCHEMA,
    RENAMED,
    SAME,
    SETTINGS,
    Setting,
    listed,
)
from trtcheck.config.timing import TIMING_KEYS, Timing
from trtcheck.config.validation import COMMAND_LINE
from trtcheck.core.traits import NAMES, BackendRef
from trtcheck.core.variants import VARIANTS
from trtcheck.errors import ConfigError, UsageError
from trtcheck.zoo.cases import keyword_matcher


class _Cascade:
    """Each setting's value from the last layer that sets it (defaults, config, command line),
    with the name of that layer for messages."""

    def __init__(self, config: Mapping[str, Any], config_where: str, cli: Mapping[str, Any]) -> None:
        self.layers = [("default", {s.key: s.default for s in SETTINGS}),
                       (config_where, config),
                       (COMMAND_LINE, {k: v for k, v in cli.items() if v not in (None, (), [])})]

    def get(self, key: str) -> tuple[Any, str]:
        for where, layer in reversed(self.layers):
            if key in layer:
                return layer[key], where
        raise KeyError(key)


def resolve(paths: tuple[Path, ...], *, reads_baseline: bool = True, **given: Any) -> Options:
    """Resolve defaults, config file and ``given`` (the command line's values, by setting key;
    None or empty for not given); ConfigError/UsageError on anything invalid. A command that
    never reads the baseline (``reads_baseline`` false) neither checks it nor keeps it.

    An empty ``backends`` stays empty: the default backend is chosen by
    :func:`trtcheck.backends.choose`, which knows what can run here."""
    unknown = set(given) - set(BY_KEY)
    if unknown:
        raise TypeError(f"resolve() got unknown settings {sorted(unknown)}")
    for p in paths:
        if not p.exists():
            raise UsageError(f"path {p} does not exist")
        if p.is_file() and p.suffix != ".py":
            raise UsageError(f"{p} is not a zoo file: a zoo file is a Python file (.py) that "
                             "declares models with @trtcheck.model; give such files, or folders "
                             "that hold them")
    config_path, config = config_for(paths, given.get("config"))
    where = str(config_path) if config_path else "config"
    if config_path and config_path.name == "pyproject.toml":
        where += " [tool.trtcheck]"
    config, renamed = _renamed(config, where)
    validation.check_keys(config, CONFIG_SCHEMA, where)
    validation.check_keys(config.get("timing", {}), TIMING_KEYS, f"{where}.timing")
    value = _Cascade(config, where, {k: listed(BY_KEY[k], list(v) if isinstance(v, tuple) else v)
                                     for k, v in given.items()}).get

    known_profiles = validation.configured_profiles(config, where)
    profile_names, source = value("run_profiles")
    validation.check_names(profile_names, known_profiles, "profile", source)
    backend_names, source = value("backends")
    validation.check_names([BackendRef.parse(b).name for b in backend_names], NAMES, "backend", source)
    variant_names, source = value("variants")
    validation.check_names(variant_names, VARIANTS, "variant", source)
    if value("keyword")[0]:
        keyword_matcher(value("keyword")[0])  # a bad expression stops the run before it starts
    shard = validation.parse_shard(value("shard")[0]) if value("shard")[0] is not None else None
    devices = resolve_devices(*value("device"))  # imports torch: after the checks that need none
    cache_path, use_cache = value("cache_dir")[0], value("engine_cache")[0]
    base = validation.baseline(*value("baseline")) if reads_baseline else None
    ci = in_ci()
    # The settings that need more than their value: checked, converted, or read together.
    worked_out: dict[str, Any] = dict(
        backends=tuple(dict.fromkeys(backend_names)),
        profiles=tuple(known_profiles[n] for n in dict.fromkeys(profile_names)),
        known_profiles=tuple(known_profiles),
        tolerances=validation.configured_tolerances(config, where),
        timing=Timing.from_config(config.get("timing", {}), f"{where}.timing"),
        devices=devices,
        workers=validation.workers(devices, *value("workers"), isolate=value("isolate")[0]),
        shard=shard,
        engine_cache=bool(cache_path) if use_cache is None else use_cache,
        timeout=validation.timeout(*value("timeout"), devices[0]),
        memory_limit=validation.memory_limit(*value("memory_limit_mb"), devices[0]),
        verbosity=int(value("verbose")[0]) - int(value("quiet")[0]),
        config_file=config_path,
        torch_tensorrt=tuple(dict.fromkeys(
            validation.lowering_code(*value("torch_tensorrt"), backend_names))),
        baseline=base,
        gate=validation.gate(value("fail_on"), value("metric"), value("threshold")),
        config_warnings=renamed,
        fallback=value("fallback")[0] or ("none" if ci else BY_KEY["fallback"].undecided),
        reduce_budget=validation.positive(*value("reduce_budget"), "reduce_budget"),
        reduce_row_budget=validation.positive(*value("reduce_row_budget"), "reduce_row_budget"),
        reduce_attempts=int(validation.positive(*value("reduce_attempts"), "reduce_attempts")),
        ab=ab_settings.resolve(value, validation.setting_name),
        deploy_formats=validation.deploy_formats(*value("deploy_formats")),
    )
    # Every other setting as it is; one that Options has no field for is a TypeError here.
    as_given = {s.attr: _as_field(s, value(s.key)[0]) for s in SETTINGS
                if s.attr not in worked_out}
    return Options(paths=tuple(p.resolve() for p in paths), ci=ci, **worked_out, **as_given)


def _renamed(config: Mapping[str, Any], where: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The config with each renamed key (:data:`RENAMED`) read under its new name, and a warning
    for each; both names at once is an error."""
    config, warnings = dict(config), []
    for old, new in RENAMED.items():
        if old not in config:
            continue
        if new in config:
            raise ConfigError(f"{where}: {old} and {new} are one setting: keep {new}")
        config[new] = config.pop(old)
        warnings.append(f"{where}: {old} is now called {new}; the old name is still read")
    return config, tuple(warnings)


def _as_field(s: Setting, value: Any) -> Any:
    """A setting's value in its field's form: a tuple for a list, a Path for a path, a bool."""
    if isinstance(value, list):
        return tuple(value)
    if s.type is Path and value is not None:
        return Path(value)
    return bool(value) if s.type is bool and s.undecided is SAME else value


def in_ci() -> bool:
    """Whether the ``CI`` environment variable is set (GitHub Actions and most CI services
    set ``CI=true``); ``false``, ``0`` and empty count as unset."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

def saved_gate(saved: Mapping[str, Any], **cli: Any) -> Gate:
    """The gate for ``trtcheck diff``: the command line, else what the record's run used, else
    the defaults."""
    recorded = saved.get("gate") or {}
    keys = {"fail_on": "fail_on", "metric": "metric", "threshold": "threshold"}
    pairs = [(listed(BY_KEY[k], cli[k]), COMMAND_LINE) if cli.get(k) not in (None, ()) else
             (recorded[f], "the record's options") if f in recorded else
             (BY_KEY[k].default, "default") for k, f in keys.items()]
    return validation.gate(*pairs)

