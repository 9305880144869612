"""Options, resolved once into frozen dataclasses by one cascade: defaults, then the config
file, then the command line, each value remembering where it came from for its messages.

:data:`SETTINGS` is the one table of the top-level settings: their config key, type, default
and help text; the CLI's help reads it too."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from trtcheck.config.profiles import (
    BUILTIN_PROFILES,
    COVERAGE_MODES,
    DEFAULT_TOLERANCES,
    INT64_POLICIES,
    Profile,
    Tolerance,
)
from trtcheck.config.timing import TIMING_KEYS, Timing
from trtcheck.errors import ConfigError, UsageError, did_you_mean
from trtcheck.results.backends import NAMES, BackendRef
from trtcheck.zoo.api import VARIANTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib




FAIL_ON = ("failures", "regression")
GATE_METRICS = ("speedup", "latency")


@dataclass(frozen=True)
class Gate:
    """What fails a run compared with a baseline: ``fail_on`` ``regression`` adds regressions to
    failing rows; ``metric`` and ``threshold`` decide what a regression is."""

    fail_on: str = "failures"
    metric: str = "speedup"
    threshold: float = 0.07


@dataclass(frozen=True)
class Setting:
    """A top-level setting: its config type (a tuple of strings for an enumeration), default
    (None: decided later, e.g. from the device) and help text."""

    type: Any
    default: Any
    help: str


SETTINGS: dict[str, Setting] = {
    "backends": Setting(list, [], "Backend to run (repeatable): " + ", ".join(NAMES)
                        + " [tensorrt where it runs, else lowering where Torch-TensorRT's "
                          "code is found or fetched, else emulate]."),
    "variants": Setting(list, [], "Only these variants (repeatable) [all]."),
    "torch_tensorrt": Setting(list, [], "The Torch-TensorRT code the lowering backend runs: a "
                                        "wheel, an unpacked release or a version (repeatable: "
                                        "one set of lowering@VERSION rows per release) [the "
                                        "installed one, else the release for this torch]."),
    "run_profiles": Setting(list, ["default"], "Settings profile (repeatable) [default]."),
    "device": Setting(str, "auto", "cpu, cuda, cuda:N, a list of GPUs cuda:0,cuda:1 (one worker "
                                   "each) or auto [auto: cuda when available]."),
    "out": Setting(str, "trtcheck-report", "Report directory [trtcheck-report]."),
    "dtype_drift": Setting(bool, True, "After the comparison, call the compiled module once more "
                                       "with int32/int64 and float32/float64 inputs swapped "
                                       "[true]."),
    "strict_xfail": Setting(bool, False, "An xpass (a declared expected failure that passed) "
                                         "fails the run [false]."),
    "allow_empty": Setting(bool, False, "Exit 0, not 5, when no case is selected [false]."),
    "allow_skipped": Setting(bool, False, "Exit 0, not 5, when every row is skipped [false]."),
    "isolate": Setting(bool, True, "Run each case in a worker subprocess [isolate]; "
                                   "--no-isolate for debugging."),
    "timeout": Setting((int, float), None, "Seconds per case before it is stopped "
                                           "[900 on CUDA, 300 on CPU]."),
    "memory_limit_mb": Setting(int, None, "Address-space limit of the worker, in MiB "
                                          "(CPU runs only) [none]."),
    "workers": Setting(int, None, "Isolated workers running cases at once [1; on CUDA one per "
                                  "listed GPU, never two cases timed on one GPU]."),
    "cache_dir": Setting(str, None, "Torch-TensorRT engine cache directory; turns the engine "
                                    "cache on [none]."),
    "engine_cache": Setting(bool, None, "Torch-TensorRT's engine cache: build engines refittable, "
                                        "save and reuse them [on when cache_dir is set]."),
    "profiles": Setting(dict, {}, "Settings profiles of your own, by name."),
    "tolerances": Setting(dict, {}, "Tolerances by effective dtype."),
    "timing": Setting(dict, {}, "Latency measurement settings."),
    "baseline": Setting(str, None, "A results.json of the base branch: report each row's "
                                   "changes against it, and --shard balances cases by its "
                                   "recorded stage times [none: shards by count]."),
    "fail_on": Setting(FAIL_ON, "failures", "failures: exit 1 on failing rows; regression: "
                                            "also on latency regressions against --baseline "
                                            "[failures]."),
    "regression_metric": Setting(GATE_METRICS, "speedup",
                                 "speedup: the backend normalised by eager in the same run; "
                                 "latency: the backend's absolute GPU time, for dedicated "
                                 "runners [speedup]."),
    "reduce": Setting(bool, False, "After the run, reduce each failing row to the smallest graph "
                                   "that fails the same way, a bundle each under OUT/repro/ "
                                   "(the verdict stays the run's) [false]."),
    "reduce_budget": Setting((int, float), 600, "Seconds every reduction of a run may take "
                                                "together, with --reduce [600]."),
    "reduce_row_budget": Setting((int, float), 120, "Seconds one row's reduction may take [120]."),
    "reduce_attempts": Setting(int, 200, "Candidate graphs one row's reduction may try [200]."),
    "keep_real_values": Setting(bool, False, "Where random weights and inputs do not reproduce a "
                                             "failure, bundles keep the model's real ones; they "
                                             "may be private: review before sharing [false]."),
    "regression_threshold": Setting((int, float), 0.07,
                                    "A row regresses when slower by more than this fraction "
                                    "and beyond both runs' intervals [0.07]."),
}
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
        self.layers = [("default", {k: s.default for k, s in SETTINGS.items()}),
                       (config_where, config),
                       (COMMAND_LINE, {k: v for k, v in cli.items() if v not in (None, (), [])})]

    def get(self, key: str) -> tuple[Any, str]:
        for where, layer in reversed(self.layers):
            if key in layer:
                return layer[key], where
        raise KeyError(key)


def resolve(
    paths: tuple[Path, ...],
    *,
    config_path: Path | None = None,
    backends: tuple[str, ...] = (),
    variants: tuple[str, ...] = (),
    profiles: tuple[str, ...] = (),
    keyword: str | None = None,
    device: str | None = None,
    out: Path | None = None,
    isolate: bool | None = None,
    timeout: float | None = None,
    resume: bool = False,
    memory_limit_mb: int | None = None,
    allow_empty: bool | None = None,
    allow_skipped: bool | None = None,
    workers: int | None = None,
    shard: str | None = None,
    cache_dir: Path | None = None,
    engine_cache: bool | None = None,
    verbosity: int = 0,
    torch_tensorrt: tuple[str, ...] = (),
    baseline: Path | None = None,
    fail_on: str | None = None,
    reduce: bool | None = None,
    reduce_budget: float | None = None,
    reduce_row_budget: float | None = None,
    reduce_attempts: int | None = None,
    keep_real_values: bool | None = None,
) -> Options:
    """Resolve defaults, config file and command line; ConfigError/UsageError on anything invalid.

    An empty ``backends`` stays empty: the default backend is chosen by
    :func:`trtcheck.backends.choose`, which knows what can run here."""
    for p in paths:
        if not p.exists():
            raise UsageError(f"path {p} does not exist")
    if config_path is not None:
        config = read_config(config_path)
    else:
        found = find_config(paths[0]) if paths else None
        config_path, config = found if found else (None, {})
    where = str(config_path) if config_path else "config"
    if config_path and config_path.name == "pyproject.toml":
        where += " [tool.trtcheck]"
    _check(config, {k: s.type for k, s in SETTINGS.items()}, where)
    _check(config.get("timing", {}), TIMING_KEYS, f"{where}.timing")
    value = _Cascade(config, where, {
        "backends": list(backends), "variants": list(variants), "run_profiles": list(profiles),
        "device": device, "out": out, "isolate": isolate, "timeout": timeout,
        "memory_limit_mb": memory_limit_mb, "baseline": baseline, "fail_on": fail_on,
        "allow_empty": allow_empty, "allow_skipped": allow_skipped, "workers": workers,
        "torch_tensorrt": list(torch_tensorrt),
        "cache_dir": cache_dir, "engine_cache": engine_cache,
        "reduce": reduce, "reduce_budget": reduce_budget, "reduce_row_budget": reduce_row_budget,
        "reduce_attempts": reduce_attempts, "keep_real_values": keep_real_values,
    }).get

    known_profiles = _profiles(config, where)
    profile_names, source = value("run_profiles")
    _pick(profile_names, known_profiles, "profile", source)
    backend_names, source = value("backends")
    _pick([BackendRef.parse(b).name for b in backend_names], NAMES, "backend", source)
    variant_names, source = value("variants")
    _pick(variant_names, VARIANTS, "variant", source)

    shard_of = parse_shard(shard) if shard is not None else None
    devices = resolve_devices(*value("device"))
    resolved_device = devices[0]
    worker_count = _workers(devices, *value("workers"), isolate=value("isolate")[0])
    timeout_s, source = value("timeout")
    if timeout_s is None:  # TensorRT builds on a GPU take minutes; a CPU case past 5 is stuck
        timeout_s = 900.0 if resolved_device.startswith("cuda") else 300.0
    if timeout_s <= 0:
        raise ConfigError(f"{_name(source, 'timeout')}: must be positive, got {timeout_s:g}")
    limit_mb, source = value("memory_limit_mb")
    if limit_mb is not None and limit_mb <= 0:
        raise ConfigError(f"{_name(source, 'memory_limit_mb')}: must be positive, got {limit_mb}")
    if limit_mb and resolved_device.startswith("cuda"):
        raise ConfigError("memory_limit_mb caps the worker's address space, which CUDA reserves "
                          "in bulk: use it with device cpu")
    base, source = value("baseline")
    if base is not None and not Path(base).is_file():
        raise UsageError(f"{_name(source, 'baseline')}: {base} is not a file")
    cache_path = value("cache_dir")[0]
    use_cache = value("engine_cache")[0]
    return Options(
        paths=tuple(p.resolve() for p in paths),
        backends=tuple(dict.fromkeys(backend_names)),
        variants=tuple(variant_names),
        keyword=keyword,
        profiles=tuple(known_profiles[n] for n in dict.fromkeys(profile_names)),
        known_profiles=tuple(known_profiles),
        tolerances=_tolerances(config, where),
        timing=Timing.from_config(config.get("timing", {}), f"{where}.timing"),
        device=resolved_device,
        devices=devices if len(devices) > 1 else (),
        workers=worker_count,
        shard=shard_of,
        engine_cache=bool(cache_path) if use_cache is None else use_cache,
        cache_dir=Path(cache_path) if cache_path else None,
        out=Path(value("out")[0]),
        strict_xfail=value("strict_xfail")[0],
        dtype_drift=value("dtype_drift")[0],
        allow_empty=value("allow_empty")[0],
        allow_skipped=value("allow_skipped")[0],
        isolate=value("isolate")[0],
        timeout=float(timeout_s),
        resume=resume,
        memory_limit=limit_mb * 2**20 if limit_mb else None,
        verbosity=verbosity,
        config_file=config_path,
        torch_tensorrt=tuple(dict.fromkeys(_lowering_code(*value("torch_tensorrt"), backend_names))),
        baseline=Path(base) if base is not None else None,
        gate=gate(value("fail_on"), value("regression_metric"), value("regression_threshold")),
        reduce=value("reduce")[0],
        reduce_budget=_positive(*value("reduce_budget"), "reduce_budget"),
        reduce_row_budget=_positive(*value("reduce_row_budget"), "reduce_row_budget"),
        reduce_attempts=int(_positive(*value("reduce_attempts"), "reduce_attempts")),
        keep_real_values=value("keep_real_values")[0],
    )


def _positive(value: float, where: str, key: str) -> float:
    if value <= 0:
        raise ConfigError(f"{_name(where, key)}: must be positive, got {value:g}")
    return float(value)


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
             (SETTINGS[k].default, "default") for k, f in keys.items()]
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
    return f"--{key.removesuffix('_mb').replace('_', '-')}" if source == COMMAND_LINE else f"{source}.{key}"


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
