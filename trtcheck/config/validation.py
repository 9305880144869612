"""The checks of each setting's value, with messages naming where it came from: the config
file's tables against their schema, names against what is known, and ranges."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from trtcheck.config.options import Gate
from trtcheck.config.settings import BY_KEY, FAIL_ON, GATE_METRICS
from trtcheck.core.frontends import FRONTENDS
from trtcheck.core.profiles import (
    BUILTIN_PROFILES,
    COVERAGE_MODES,
    DEFAULT_TOLERANCES,
    DEPLOY_FORMATS,
    INT64_POLICIES,
    Profile,
    Tolerance,
)
from trtcheck.core.traits import traits_of
from trtcheck.errors import ConfigError, UsageError, did_you_mean

COMMAND_LINE = "command line"

_PROFILE_KEYS: dict[str, Any] = {
    "truncate_double": bool,
    "int64": INT64_POLICIES,
    "coverage": COVERAGE_MODES,
    "require_full_compilation": bool,
    "min_block_size": int,
    "settings": dict,
    "frontend": FRONTENDS,
    "deploy": list,
}
_TOL_KEYS: dict[str, Any] = {"rtol": (int, float), "atol": (int, float)}


def check_keys(table: Mapping[str, Any], schema: Mapping[str, Any], where: str) -> None:
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


def deploy_formats(formats: list[Any], source: str) -> tuple[str, ...]:
    """The deploy formats named, each one :data:`DEPLOY_FORMATS` knows, in order, once each."""
    check_names([str(f) for f in formats], DEPLOY_FORMATS, "deploy format", source)
    return tuple(dict.fromkeys(formats))


def configured_profiles(config: Mapping[str, Any], where: str) -> dict[str, Profile]:
    known = dict(BUILTIN_PROFILES)
    for name, table in config.get("profiles", {}).items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}.profiles.{name}: expected a table")
        check_keys(table, _PROFILE_KEYS, f"{where}.profiles.{name}")
        if "deploy" in table:
            table = {**table, "deploy": deploy_formats(table["deploy"],
                                                       f"{where}.profiles.{name}.deploy")}
        profile = replace(known.get(name, Profile(name)), **table)
        if problem := profile.contradiction():
            raise ConfigError(f"{where}.profiles.{name}: {problem}")
        known[name] = profile
    return known


def configured_tolerances(config: Mapping[str, Any], where: str) -> dict[str, Tolerance]:
    tolerances = dict(DEFAULT_TOLERANCES)
    for dtype, table in config.get("tolerances", {}).items():
        check_names([dtype], DEFAULT_TOLERANCES, "tolerance dtype", where)
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}.tolerances.{dtype}: expected a table with rtol and atol")
        check_keys(table, _TOL_KEYS, f"{where}.tolerances.{dtype}")
        tolerances[dtype] = replace(tolerances[dtype], **{k: float(v) for k, v in table.items()})
    return tolerances


def check_names(names: list[str], known: Mapping[str, Any] | tuple[str, ...], what: str,
          where: str) -> None:
    for n in names:
        if n not in known:
            raise ConfigError(f"{where}: unknown {what} {n!r}{did_you_mean(n, known)} "
                              f"(known: {', '.join(known)})")


def timeout(seconds: float | None, source: str, device: str) -> float:
    if seconds is None:  # TensorRT builds on a GPU take minutes; a CPU case past 5 is stuck
        seconds = 900.0 if device.startswith("cuda") else float(BY_KEY["timeout"].undecided)
    if seconds <= 0:
        raise ConfigError(f"{setting_name(source, 'timeout')}: must be positive, got {seconds:g}")
    return float(seconds)


def positive(value: float, source: str, key: str) -> float:
    if value <= 0:
        raise ConfigError(f"{setting_name(source, key)}: must be positive, got {value:g}")
    return float(value)


def memory_limit(mib: int | None, source: str, device: str) -> int | None:
    if mib is not None and mib <= 0:
        raise ConfigError(f"{setting_name(source, 'memory_limit_mb')}: must be positive, got {mib}")
    if mib and device.startswith("cuda"):
        raise ConfigError("memory_limit_mb caps the worker's address space, which CUDA reserves "
                          "in bulk: use it with device cpu")
    return mib * 2**20 if mib else None


def baseline(base: str | Path | None, source: str) -> Path | None:
    if base is not None and not Path(base).is_file():
        raise UsageError(f"{setting_name(source, 'baseline')}: {base} is not a file")
    return Path(base) if base is not None else None


def gate(fail_on: tuple[str | Sequence[str], str], metric: tuple[str, str],
         threshold: tuple[float | str, str]) -> Gate:
    """The gate from ``(value, where it came from)`` pairs, ``fail_on`` one word or several;
    ConfigError for values out of range."""
    words = (fail_on[0],) if isinstance(fail_on[0], str) else tuple(fail_on[0])
    for (value, where), key, known in (*(((w, fail_on[1]), "fail_on", FAIL_ON) for w in words),
                                       (metric, "metric", GATE_METRICS)):
        if value not in known:
            raise ConfigError(f"{setting_name(where, key)}: {value!r} is not one of "
                              f"{', '.join(map(repr, known))}")
    return Gate(tuple(dict.fromkeys(words)) or ("failures",), metric[0], fraction(*threshold))


def fraction(value: float | str, where: str) -> float:
    """A threshold as a fraction: ``0.07``, or a percentage written with ``%`` (``"7%"``). A
    bare number of 1 or more is refused: 7 would mean 700%, where 7% was surely meant."""
    name = setting_name(where, "threshold")
    text = str(value).strip()
    try:
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ConfigError(f"{name}: {value!r} is neither a fraction (0.07) nor a percentage "
                          "(7%)") from None
    if isinstance(value, bool) or not 0 <= number < 10 or number != number:
        raise ConfigError(f"{name}: must be a fraction (0.07) or a percentage (7%) between 0 and "
                          f"1000%, got {value!r}")
    if not text.endswith("%") and number >= 1:
        raise ConfigError(f"{name}: {value!r} is a bare number of 1 or more: write a fraction "
                          f"(0.07) or a percentage ({text}%)")
    return number


def lowering_code(specs: list[str], source: str, backends: list[str]) -> list[str]:
    """``torch_tensorrt`` picks the lowering backend's code: named with other backends only,
    it would do nothing, so that is an error."""
    if specs and backends and not any((t := traits_of(b)) and t.releases for b in backends):
        raise ConfigError(f"{setting_name(source, 'torch_tensorrt')}: picks the code of the lowering "
                          "backend, which is not among the backends (add --backend lowering)")
    return specs


def setting_name(source: str, key: str) -> str:
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


def workers(devices: tuple[str, ...], count: int | None, source: str, *, isolate: bool) -> int:
    """How many workers run at once: one per listed GPU on CUDA, ``count`` (default 1) on CPU."""
    cuda = devices[0].startswith("cuda")
    if count is None:
        count = len(devices) if cuda else int(BY_KEY["workers"].undecided)
    elif count < 1:
        raise ConfigError(f"{setting_name(source, 'workers')}: must be at least 1, got {count}")
    elif cuda and count != len(devices):
        raise ConfigError(f"{setting_name(source, 'workers')} = {count} on CUDA needs {count} GPUs listed "
                          f"(--device cuda:0,cuda:1): one worker per GPU, so that no two cases "
                          f"are timed on one GPU at once (listed: {', '.join(devices)})")
    if count > 1 and not isolate:
        raise ConfigError(f"{count} workers run cases in worker subprocesses, which --no-isolate "
                          "turns off")
    return count


