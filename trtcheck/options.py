"""Options, resolved once from config file and command line into frozen dataclasses."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from trtcheck.errors import ConfigError, UsageError, did_you_mean
from trtcheck.zoo import VARIANTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


# Keyed by the effective floating dtype (complex64 is judged as float32, complex128 as float64).
# float32: Torch-TensorRT's own tests compare float32 outputs at rtol = atol = 5e-3.
# float64: tight enough that a float64 model computed in float32 (unit roundoff 6e-8) fails.
DEFAULT_TOLERANCES: Mapping[str, Tolerance] = {
    "float32": Tolerance(rtol=5e-3, atol=5e-3),
    "float64": Tolerance(rtol=1e-9, atol=1e-9),
    "float16": Tolerance(rtol=1e-2, atol=1e-2),
    "bfloat16": Tolerance(rtol=1.6e-2, atol=1e-2),
}

INT64_POLICIES = ("native", "int32")
COVERAGE_MODES = ("broad", "seed")


@dataclass(frozen=True)
class Profile:
    """A named set of Torch-TensorRT compile settings plus trtcheck's emulation settings."""

    name: str
    truncate_double: bool = False
    int64: str = "native"
    coverage: str = "broad"
    require_full_compilation: bool = False
    min_block_size: int = 1
    settings: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: (dict(v) if isinstance(v := getattr(self, f.name), Mapping) else v)
                for f in fields(self)}

    def describe(self) -> str:
        """What this profile makes ``emulate`` predict, and which releases behave that way."""
        parts = [
            "int64 truncated to int32 at engine boundaries and cast back (the autocast RFC's "
            "casting: the TorchScript frontend, and Torch-TensorRT before 2.3 with "
            "truncate_long_and_double)" if self.int64 == "int32" else
            "int64 native (TensorRT 10; Torch-TensorRT's dynamo path from 2.3)",
            "float64 and complex128 computed in float32 (truncate_double)"
            if self.truncate_double else "float64 native",
            "complex rewrite of the guide's supported patterns only; anything else unsupported "
            "(Torch-TensorRT 2.8 to 2.11 rewrote little more than mul)" if self.coverage == "seed"
            else "broad complex rewrite, other complex ops run in PyTorch (Torch-TensorRT 2.12+)",
        ]
        if self.require_full_compilation:
            parts.append("require_full_compilation: a PyTorch fallback is unsupported")
        return "; ".join(parts)


BUILTIN_PROFILES: Mapping[str, Profile] = {
    "default": Profile("default"),
    "truncate_double": Profile("truncate_double", truncate_double=True),
    "int64_as_int32": Profile("int64_as_int32", int64="int32"),
    "seed": Profile("seed", coverage="seed"),
}


@dataclass(frozen=True)
class Timing:
    """Latency measurement: at least ``warmup`` calls and ``warmup_s`` seconds of warm-up, then
    at least ``repeats`` calls and ``min_time_s`` seconds measured, at most ``max_repeats``."""

    warmup: int = 3
    repeats: int = 20
    warmup_s: float = 0.05
    min_time_s: float = 0.2
    max_repeats: int = 10_000


@dataclass(frozen=True)
class Options:
    """Everything a run needs, resolved once."""

    paths: tuple[Path, ...]
    backends: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    keyword: str | None = None
    profiles: tuple[Profile, ...] = (BUILTIN_PROFILES["default"],)
    tolerances: Mapping[str, Tolerance] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    timing: Timing = Timing()
    device: str = "cpu"
    out: Path = Path("trtcheck-report")
    strict_xfail: bool = False
    isolate: bool = True
    timeout: float = 300.0
    resume: bool = False
    memory_limit: int | None = None
    verbosity: int = 0
    config_file: Path | None = None
    backend_note: str | None = None

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
            "out": str(self.out),
            "strict_xfail": self.strict_xfail,
            "isolate": self.isolate,
            "timeout": self.timeout,
            "memory_limit": self.memory_limit,
            "config_file": str(self.config_file) if self.config_file else None,
        }


# Config schema: key -> expected type (a tuple of allowed values for enumerations).
_TOP_KEYS: dict[str, Any] = {
    "backends": list,
    "variants": list,
    "profiles": dict,
    "run_profiles": list,
    "tolerances": dict,
    "timing": dict,
    "device": str,
    "out": str,
    "strict_xfail": bool,
    "isolate": bool,
    "timeout": (int, float),
    "memory_limit_mb": int,
}
_PROFILE_KEYS: dict[str, Any] = {
    "truncate_double": bool,
    "int64": INT64_POLICIES,
    "coverage": COVERAGE_MODES,
    "require_full_compilation": bool,
    "min_block_size": int,
    "settings": dict,
}
_TIMING_KEYS: dict[str, Any] = {"warmup": int, "repeats": int, "warmup_s": (int, float),
                                "min_time_s": (int, float), "max_repeats": int}
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
        base = known.get(name, Profile(name))
        profile = replace(base, **table)
        if profile.int64 == "int32" and profile.require_full_compilation:
            raise ConfigError(
                f"{where}.profiles.{name}: int64 = \"int32\" casts around engines, which "
                "contradicts require_full_compilation = true (the autocast RFC's edge case: "
                "the casts cannot run inside a fully compiled engine)"
            )
        known[name] = profile
    return known


def _pick(names: list[str], known: Mapping[str, Any], what: str) -> None:
    for n in names:
        if n not in known:
            raise ConfigError(f"unknown {what} {n!r}{did_you_mean(n, known)} (known: {', '.join(known)})")


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
    verbosity: int = 0,
    known_backends: Mapping[str, Any],
    default_backends: Callable[[str], tuple[tuple[str, ...], str]],
) -> Options:
    """Merge config file and command line; raise ConfigError/UsageError on anything invalid."""
    for p in paths:
        if not p.exists():
            raise UsageError(f"path {p} does not exist")
    if config_path is not None:
        where, config = str(config_path), read_config(config_path)
    else:
        found = find_config(paths[0]) if paths else None
        config_path, config = found if found else (None, {})
        where = str(config_path) if config_path else "config"
    where = f"{where} [tool.trtcheck]" if config_path and config_path.name == "pyproject.toml" else where
    _check(config, _TOP_KEYS, where)
    _check(config.get("timing", {}), _TIMING_KEYS, f"{where}.timing")

    tolerances = dict(DEFAULT_TOLERANCES)
    for dtype, table in config.get("tolerances", {}).items():
        if dtype not in DEFAULT_TOLERANCES:
            _pick([dtype], DEFAULT_TOLERANCES, "tolerance dtype")
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}.tolerances.{dtype}: expected a table with rtol and atol")
        _check(table, _TOL_KEYS, f"{where}.tolerances.{dtype}")
        tolerances[dtype] = replace(tolerances[dtype], **{k: float(v) for k, v in table.items()})

    known_profiles = _profiles(config, where)
    profile_names = list(profiles or config.get("run_profiles", ["default"]))
    _pick(profile_names, known_profiles, "profile")

    resolved_device = resolve_device(device or config.get("device", "auto"))
    backend_names = list(backends or config.get("backends", []))
    note = None
    if not backend_names:
        chosen, note = default_backends(resolved_device)
        backend_names = list(chosen)
    _pick(backend_names, known_backends, "backend")

    variant_names = list(variants or config.get("variants", []))
    _pick(variant_names, dict.fromkeys(VARIANTS), "variant")

    timing = Timing(**config.get("timing", {}))
    if timing.repeats < 1 or timing.warmup < 0 or timing.max_repeats < timing.repeats:
        raise ConfigError(f"{where}.timing: repeats must be >= 1, warmup >= 0 and "
                          "max_repeats >= repeats")
    if timing.warmup_s < 0 or timing.min_time_s < 0:
        raise ConfigError(f"{where}.timing: warmup_s and min_time_s must be >= 0")
    # TensorRT builds on a GPU take minutes; a CPU case that runs past 5 minutes is stuck.
    default_timeout = 900.0 if resolved_device.startswith("cuda") else 300.0
    resolved_timeout = float(timeout if timeout is not None else config.get("timeout", default_timeout))
    if resolved_timeout <= 0:
        raise ConfigError(f"{where}.timeout: must be positive, got {resolved_timeout}")

    limit_mb = memory_limit_mb if memory_limit_mb is not None else config.get("memory_limit_mb")
    if limit_mb is not None and limit_mb <= 0:
        raise ConfigError(f"{where}.memory_limit_mb: must be positive, got {limit_mb}")
    if limit_mb and resolved_device.startswith("cuda"):
        raise ConfigError("memory_limit_mb caps the worker's address space, which CUDA reserves "
                          "in bulk: use it with device cpu")
    return Options(
        paths=tuple(p.resolve() for p in paths),
        backends=tuple(dict.fromkeys(backend_names)),
        variants=tuple(variant_names),
        keyword=keyword,
        profiles=tuple(known_profiles[n] for n in dict.fromkeys(profile_names)),
        tolerances=tolerances,
        timing=timing,
        device=resolved_device,
        out=Path(out or config.get("out", "trtcheck-report")),
        strict_xfail=bool(config.get("strict_xfail", False)),
        isolate=config.get("isolate", True) if isolate is None else isolate,
        timeout=resolved_timeout,
        resume=resume,
        memory_limit=limit_mb * 2**20 if limit_mb else None,
        verbosity=verbosity,
        config_file=config_path,
        backend_note=note,
    )


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
