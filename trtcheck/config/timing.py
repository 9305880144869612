"""The latency measurement's settings: the ``[timing]`` table, checked once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from trtcheck.errors import ConfigError

METHODS = ("calls", "blocks")
CPUS = ("any", "sweep")


@dataclass(frozen=True)
class Timing:
    """Latency measurement: at least ``warmup`` rounds and ``warmup_s`` seconds of warm-up, then
    at least ``repeats`` rounds and ``min_time_s`` seconds measured, at most ``max_repeats``.

    ``method`` ``"calls"`` (the default) times every call on its own, eager's and the backend's
    interleaved call by call (CUDA events around each call on CUDA); ``"blocks"`` times blocks of
    back-to-back calls lasting at least ``block_ms``. A speedup whose interval is wider than
    ±``unstable_ci`` (relative) is flagged unstable and not gated, unless the two runs' intervals
    lie so far apart that their nearest ends differ by more than ``FAR_APART`` (4) times.

    ``cpus`` ``"sweep"`` (CUDA only) moves the timing thread over every CPU the process may
    use, ``repeats`` rounds on each, and keeps the fastest CPU's rounds: on a virtual machine
    whose CPUs a busy neighbour slows by turns, the figure of the machine without that
    neighbour; ``"any"`` (the default) leaves the thread where the system puts it."""

    warmup: int = 3
    repeats: int = 20
    warmup_s: float = 0.05
    min_time_s: float = 0.2
    max_repeats: int = 10_000
    block_ms: float = 1.0
    unstable_ci: float = 0.05
    method: str = "calls"
    cpus: str = "any"

    @classmethod
    def from_config(cls, table: Mapping[str, Any], where: str) -> Timing:
        """The ``[timing]`` table checked and applied over the defaults; ConfigError if invalid."""
        timing = cls(**table)
        if timing.repeats < 1 or timing.warmup < 0 or timing.max_repeats < timing.repeats:
            raise ConfigError(f"{where}: repeats must be >= 1, warmup >= 0 and "
                              "max_repeats >= repeats")
        if min(timing.warmup_s, timing.min_time_s, timing.block_ms) < 0 or timing.unstable_ci <= 0:
            raise ConfigError(f"{where}: warmup_s, min_time_s and block_ms must be >= 0, "
                              "unstable_ci > 0")
        for key, allowed in (("method", METHODS), ("cpus", CPUS)):
            if getattr(timing, key) not in allowed:
                raise ConfigError(f"{where}: {key} must be one of {', '.join(map(repr, allowed))}, "
                                  f"not {getattr(timing, key)!r}")
        return timing


_TYPES: dict[str, Any] = {"float": (int, float), "int": int, "str": str}
# The config schema of the ``[timing]`` table: key -> accepted types.
TIMING_KEYS: dict[str, Any] = {f.name: _TYPES[str(f.type)] for f in fields(Timing)}
