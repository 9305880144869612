"""Options, resolved once into frozen dataclasses by one cascade: defaults, then the config
file, then the command line, each value remembering where it came from for its messages.

Each setting is declared once, in :mod:`trtcheck.config.settings`; this module reads the config
file against that declaration and turns the values into :class:`Options`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from trtcheck.config.settings import BY_KEY, CONFIG_SCHEMA, FAIL_ON, GATE_METRICS, SETTINGS
from trtcheck.config.timing import TIMING_KEYS, Timing
from trtcheck.core.build import cpu_only
from trtcheck.core.profiles import (
    BUILTIN_PROFILES,
    COVERAGE_MODES,
    DEFAULT_TOLERANCES,
    INT64_POLICIES,
    Profile,
    Tolerance,
)
from trtcheck.core.traits import NAMES, BackendRef
from trtcheck.core.variants import VARIANTS
from trtcheck.errors import ConfigError, UsageError, did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib




@dataclass(frozen=True)
class Gate:
    """What fails a run compared with a baseline: ``fail_on`` ``regression`` adds regressions to
    failing rows; ``metric`` and ``threshold`` decide what a regression is."""

    fail_on: str = "failures"
    metric: str = "speedup"
    threshold: float = 0.07


COMMAND_LINE = "command line"


@dataclass(frozen=True)
class Options:
    """Everything a run needs, resolved once."""

    paths: tuple[Path, ...]
    backends: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    keyword: str | None = None
    profiles: tuple[Profile, ...] = (BUILTIN_PROFILES["default"],)
    known_profiles: tuple[str, ...] = tuple(BUILTIN_PROFILES)  # built in and configured
    tolerances: Mapping[str, Tolerance] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    timing: Timing = field(default_factory=Timing)
    device: str = "cpu"
    devices: tuple[str, ...] = ()  # every listed GPU, one worker each; () means (device,)
    workers: int = 1
    shard: tuple[int, int] | None = None  # (index from 1, count)
    engine_cache: bool = False
    cache_dir: Path | None = None
    out: Path = Path("trtcheck-report")
    strict_xfail: bool = False
    dtype_drift: bool = True
    allow_empty: bool = False
    allow_skipped: bool = False
    isolate: bool = True
    timeout: float = 300.0
    resume: bool = False
    memory_limit: int | None = None
    verbosity: int = 0
    config_file: Path | None = None
    backend_note: str | None = None
    nan: str = "warn"
    fallback: str = "emulate"
    ci: bool = False  # the CI environment variable is set
    fallback_note: str | None = None  # which backend ran instead of the default, and why
    torch_tensorrt: tuple[str, ...] = ()
    baseline: Path | None = None
    gate: Gate = field(default_factory=Gate)
    reduce: bool = False
    reduce_budget: float = 600.0
    reduce_row_budget: float = 120.0
    reduce_attempts: int = 200
    keep_real_values: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "paths": [str(p) for p in self.paths],
            "backends": list(self.backends),
            "variants": list(self.variants),
            "keyword": self.keyword,
            "profiles": [p.to_dict() for p in self.profiles],
            "tolerances": {k: {"rtol": t.rtol, "atol": t.atol} for k, t in self.tolerances.items()},
            "timing": asdict(self.timing),
            "device": self.device,
            "devices": list(self.devices or (self.device,)),
            "workers": self.workers,
            "shard": f"{self.shard[0]}/{self.shard[1]}" if self.shard else None,
            "engine_cache": self.engine_cache,
            "cache_dir": str(self.cache_dir) if self.cache_dir else None,
            "out": str(self.out),
            "strict_xfail": self.strict_xfail,
            "dtype_drift": self.dtype_drift,
            "allow_empty": self.allow_empty,
            "allow_skipped": self.allow_skipped,
            "isolate": self.isolate,
            "timeout": self.timeout,
            "memory_limit": self.memory_limit,
            "config_file": str(self.config_file) if self.config_file else None,
            "torch_tensorrt": list(self.torch_tensorrt),
            "baseline": str(self.baseline) if self.baseline else None,
            "gate": asdict(self.gate),
            "nan": self.nan,
            "fallback": self.fallback,
            "fallback_note": self.fallback_note,
            "reduce": self.reduce,
            "reduce_budget": self.reduce_budget,
            "reduce_row_budget": self.reduce_row_budget,
            "reduce_attempts": self.reduce_attempts,
            "keep_real_values": self.keep_real_values,
        }


_PROFILE_KEYS: dict[str, Any] = {
    "truncate_double": bool,
    "int64": INT64_POLICIES,
    "coverage": COVERAGE_MODES,
    "require_full_compilation": bool,
    "min_block_size": int,
    "settings": dict,
}
_TOL_KEYS: dict[str, Any] = {"rtol": (int, float), "atol": (int, float)}


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest ``trtcheck.toml``, or ``pyproject.toml`` with ``[tool.trtcheck]``, at or above start."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for d in (here, *here.parents):
        own = d / "trtcheck.toml"
        if own.is_file():
            return own, _read_toml(own)
        pyproject = d / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject).get("tool", {}).get("trtcheck")
            if data is not None:
                return pyproject, data
    return None


def read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UsageError(f"config file {path} does not exist")
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("trtcheck", {})
    return data.get("tool", {}).get("trtcheck", data) if "tool" in data else data


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _check(table: Mapping[str, Any], schema: Mapping[str, Any], where: str) -> None:
    for key, value in table.items():
        if key not in schema:
            raise ConfigError(f"{where}: unknown key {key!r}{did_you_mean(key, schema)}")
        expected = schema[key]
        if isinstance(expected, tuple) and all(isinstance(e, str) for e in expected):
            if value not in expected:
                raise ConfigError(
                    f"{where}.{key}: {value!r} is not one of {', '.join(map(repr, expected))}"
                )
        elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            names = (" or ".join(t.__name__ for t in expected) if isinstance(expected, tuple)
                     else expected.__name__)
            raise ConfigError(f"{where}.{key}: expected {names}, got {value!r}")


def _profiles(config: Mapping[str, Any], where: str) -> dict[str, Profile]:
    known = dict(BUILTIN_PROFILES)
    for name, table in config.get("profiles", {}).items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}.profiles.{name}: expected a table")
        _check(table, _PROFILE_KEYS, f"{where}.profiles.{name}")
        profile = replace(known.get(name, Profile(name)), **table)
        if profile.int64 == "int32" and profile.require_full_compilation:
            raise ConfigError(
                f"{where}.profiles.{name}: int64 = \"int32\" casts around engines, which "
                "contradicts require_full_compilation = true (the autocast RFC's edge case: "
                "the casts cannot run inside a fully compiled engine)"
            )
        known[name] = profile
    return known


def _tolerances(config: Mapping[str, Any], where: str) -> dict[str, Tolerance]:
    tolerances = dict(DEFAULT_TOLERANCES)
    for dtype, table in config.get("tolerances", {}).items():
        _pick([dtype], DEFAULT_TOLERANCES, "tolerance dtype", where)
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}.tolerances.{dtype}: expected a table with rtol and atol")
        _check(table, _TOL_KEYS, f"{where}.tolerances.{dtype}")
        tolerances[dtype] = replace(tolerances[dtype], **{k: float(v) for k, v in table.items()})
    return tolerances


def _pick(names: list[str], known: Mapping[str, Any] | tuple[str, ...], what: str,
          where: str) -> None:
    for n in names:
        if n not in known:
            raise ConfigError(f"{where}: unknown {what} {n!r}{did_you_mean(n, known)} "
                              f"(known: {', '.join(known)})")


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


def resolve(paths: tuple[Path, ...], **given: Any) -> Options:
    """Resolve defaults, config file and ``given`` (the command line's values, by setting key;
    None or empty for not given); ConfigError/UsageError on anything invalid.

    An empty ``backends`` stays empty: the default backend is chosen by
    :func:`trtcheck.backends.choose`, which knows what can run here."""
    unknown = set(given) - set(BY_KEY)
    if unknown:
        raise TypeError(f"resolve() got unknown settings {sorted(unknown)}")
    for p in paths:
        if not p.exists():
            raise UsageError(f"path {p} does not exist")
    config_path, config = _config(paths, given.get("config"))
    where = str(config_path) if config_path else "config"
    if config_path and config_path.name == "pyproject.toml":
        where += " [tool.trtcheck]"
    _check(config, CONFIG_SCHEMA, where)
    _check(config.get("timing", {}), TIMING_KEYS, f"{where}.timing")
    value = _Cascade(config, where, {k: list(v) if isinstance(v, tuple) else v
                                     for k, v in given.items()}).get

    known_profiles = _profiles(config, where)
    profile_names, source = value("run_profiles")
    _pick(profile_names, known_profiles, "profile", source)
    backend_names, source = value("backends")
    _pick([BackendRef.parse(b).name for b in backend_names], NAMES, "backend", source)
    variant_names, source = value("variants")
    _pick(variant_names, VARIANTS, "variant", source)
    shard = parse_shard(value("shard")[0]) if value("shard")[0] is not None else None
    devices = resolve_devices(*value("device"))  # imports torch: after the checks that need none
    cache_path, use_cache = value("cache_dir")[0], value("engine_cache")[0]
    base = _baseline(*value("baseline"))
    ci = in_ci()
    return Options(
        paths=tuple(p.resolve() for p in paths),
        backends=tuple(dict.fromkeys(backend_names)),
        variants=tuple(variant_names),
        keyword=value("keyword")[0],
        profiles=tuple(known_profiles[n] for n in dict.fromkeys(profile_names)),
        known_profiles=tuple(known_profiles),
        tolerances=_tolerances(config, where),
        timing=Timing.from_config(config.get("timing", {}), f"{where}.timing"),
        device=devices[0],
        devices=devices if len(devices) > 1 else (),
        workers=_workers(devices, *value("workers"), isolate=value("isolate")[0]),
        shard=shard,
        engine_cache=bool(cache_path) if use_cache is None else use_cache,
        cache_dir=Path(cache_path) if cache_path else None,
        out=Path(value("out")[0]),
        strict_xfail=value("strict_xfail")[0],
        dtype_drift=value("dtype_drift")[0],
        allow_empty=value("allow_empty")[0],
        allow_skipped=value("allow_skipped")[0],
        isolate=value("isolate")[0],
        timeout=_timeout(*value("timeout"), devices[0]),
        resume=bool(value("resume")[0]),
        memory_limit=_memory_limit(*value("memory_limit_mb"), devices[0]),
        verbosity=int(value("verbose")[0]) - int(value("quiet")[0]),
        config_file=config_path,
        torch_tensorrt=tuple(dict.fromkeys(_lowering_code(*value("torch_tensorrt"), backend_names))),
        baseline=base,
        gate=gate(value("fail_on"), value("regression_metric"), value("regression_threshold")),
        nan=value("nan")[0],
        fallback=value("fallback")[0] or ("none" if ci else "emulate"),
        ci=ci,
        reduce=bool(value("reduce")[0]),
        reduce_budget=_positive(*value("reduce_budget"), "reduce_budget"),
        reduce_row_budget=_positive(*value("reduce_row_budget"), "reduce_row_budget"),
        reduce_attempts=int(_positive(*value("reduce_attempts"), "reduce_attempts")),
        keep_real_values=bool(value("keep_real_values")[0]),
    )


def in_ci() -> bool:
    """Whether the ``CI`` environment variable is set (GitHub Actions and most CI services
    set ``CI=true``); ``false``, ``0`` and empty count as unset."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _config(paths: tuple[Path, ...], given: Path | None) -> tuple[Path | None, dict[str, Any]]:
    """The config file named, else the nearest one, and its table."""
    if given is not None:
        return Path(given), read_config(Path(given))
    found = find_config(paths[0]) if paths else None
    return found if found else (None, {})


def _timeout(seconds: float | None, source: str, device: str) -> float:
    if seconds is None:  # TensorRT builds on a GPU take minutes; a CPU case past 5 is stuck
        seconds = 900.0 if device.startswith("cuda") else 300.0
    if seconds <= 0:
        raise ConfigError(f"{_name(source, 'timeout')}: must be positive, got {seconds:g}")
    return float(seconds)


def _positive(value: float, source: str, key: str) -> float:
    if value <= 0:
        raise ConfigError(f"{_name(source, key)}: must be positive, got {value:g}")
    return float(value)


def _memory_limit(mib: int | None, source: str, device: str) -> int | None:
    if mib is not None and mib <= 0:
        raise ConfigError(f"{_name(source, 'memory_limit_mb')}: must be positive, got {mib}")
    if mib and device.startswith("cuda"):
        raise ConfigError("memory_limit_mb caps the worker's address space, which CUDA reserves "
                          "in bulk: use it with device cpu")
    return mib * 2**20 if mib else None


def _baseline(base: str | Path | None, source: str) -> Path | None:
    if base is not None and not Path(base).is_file():
        raise UsageError(f"{_name(source, 'baseline')}: {base} is not a file")
    return Path(base) if base is not None else None


def gate(fail_on: tuple[str, str], metric: tuple[str, str],
         threshold: tuple[float, str]) -> Gate:
    """The gate from ``(value, where it came from)`` pairs; ConfigError for values out of range."""
    for (value, where), key, known in ((fail_on, "fail_on", FAIL_ON),
                                       (metric, "regression_metric", GATE_METRICS)):
        if value not in known:
            raise ConfigError(f"{_name(where, key)}: {value!r} is not one of "
                              f"{', '.join(map(repr, known))}")
    if not 0 <= threshold[0] < 10:
        raise ConfigError(f"{_name(threshold[1], 'regression_threshold')}: must be a fraction "
                          f"between 0 and 10, got {threshold[0]:g}")
    return Gate(fail_on[0], metric[0], float(threshold[0]))


def saved_gate(saved: Mapping[str, Any], **cli: Any) -> Gate:
    """The gate for ``trtcheck diff``: the command line, else what the record's run used, else
    the defaults."""
    recorded = saved.get("gate") or {}
    keys = {"fail_on": "fail_on", "regression_metric": "metric",
            "regression_threshold": "threshold"}
    pairs = [(cli[k], COMMAND_LINE) if cli.get(k) is not None else
             (recorded[f], "the record's options") if f in recorded else
             (BY_KEY[k].default, "default") for k, f in keys.items()]
    return gate(*pairs)


def _lowering_code(specs: list[str], source: str, backends: list[str]) -> list[str]:
    """``torch_tensorrt`` picks the lowering backend's code: named with other backends only,
    it would do nothing, so that is an error."""
    if specs and backends and not any(BackendRef.parse(b).name == "lowering" for b in backends):
        raise ConfigError(f"{_name(source, 'torch_tensorrt')}: picks the code of the lowering "
                          "backend, which is not among the backends (add --backend lowering)")
    return specs


def _name(source: str, key: str) -> str:
    """How a message names a setting: ``--timeout`` on the command line, else ``FILE.timeout``."""
    flag = BY_KEY[key].flag if key in BY_KEY else None
    if source == COMMAND_LINE and flag:
        return flag.split("/")[0]
    return f"{source}.{key}"


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` as ``(I, N)``, 1 <= I <= N; UsageError otherwise."""
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise UsageError(f"--shard {text!r}: expected I/N, e.g. 1/4") from None
    if not 1 <= i <= n:
        raise UsageError(f"--shard {text!r}: I must be between 1 and N")
    return i, n


def resolve_devices(text: str, source: str = COMMAND_LINE) -> tuple[str, ...]:
    """One device, or a comma-separated list of distinct CUDA devices (one worker each)."""
    devices = tuple(resolve_device(d.strip()) for d in text.split(","))
    if len(devices) > 1:
        if any(not d.startswith("cuda:") for d in devices):
            raise UsageError(f"{_name(source, 'device')}: a list names CUDA devices with their "
                             f"index (cuda:0,cuda:1), got {text!r}")
        if len(set(devices)) < len(devices):
            raise UsageError(f"{_name(source, 'device')}: {text!r} lists a GPU twice; two cases "
                             "timed on one GPU at once would disturb each other's latency")
    return devices


def _workers(devices: tuple[str, ...], count: int | None, source: str, *, isolate: bool) -> int:
    """How many workers run at once: one per listed GPU on CUDA, ``count`` (default 1) on CPU."""
    cuda = devices[0].startswith("cuda")
    if count is None:
        count = len(devices) if cuda else 1
    elif count < 1:
        raise ConfigError(f"{_name(source, 'workers')}: must be at least 1, got {count}")
    elif cuda and count != len(devices):
        raise ConfigError(f"{_name(source, 'workers')} = {count} on CUDA needs {count} GPUs listed "
                          f"(--device cuda:0,cuda:1): one worker per GPU, so that no two cases "
                          f"are timed on one GPU at once (listed: {', '.join(devices)})")
    if count > 1 and not isolate:
        raise ConfigError(f"{count} workers run cases in worker subprocesses, which --no-isolate "
                          "turns off")
    return count


def resolve_device(device: str) -> str:
    if device == "cpu" or (device == "auto" and cpu_only()):  # answered without loading torch
        return "cpu"
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise UsageError(f"invalid device {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"device {device!r} requested but CUDA is not available")
    return str(dev)
