"""The frozen options a run is given: :class:`Options` and the regression :class:`Gate`, resolved
once by :func:`trtcheck.config.cascade.resolve`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trtcheck.config import ab as ab_settings
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import BUILTIN_PROFILES, DEFAULT_TOLERANCES, Profile, Tolerance


@dataclass(frozen=True)
class Gate:
    """What fails a run compared with a baseline: ``fail_on`` ``regression`` adds regressions to
    failing rows; ``metric`` and ``threshold`` decide what a regression is."""

    fail_on: str = "failures"
    metric: str = "speedup"
    threshold: float = 0.07


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
    time_predictions: bool = False
    ab: ab_settings.ABSettings = field(default_factory=ab_settings.defaults)

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
            "time_predictions": self.time_predictions,
            "ab": self.ab.to_dict(),
        }

