"""``trtcheck ab``'s settings, resolved once: how many processes, the time budget, the level,
the seed of the row order and each backend's compile cache."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trtcheck.config.settings import BY_KEY, CACHE_DEFAULTS, CACHE_MODES
from trtcheck.core.traits import NAMES, BackendRef
from trtcheck.errors import ConfigError

STEP = 3  # processes a side added at a time for the rows still undecided

Value = Callable[[str], tuple[Any, str]]  # a setting's value and where it came from


@dataclass(frozen=True)
class ABSettings:
    """``start`` processes a side, then ``STEP`` more at a time for undecided rows up to
    ``cap``, none started after ``budget_s``; ``alpha`` the zoo-wide false-alarm rate;
    ``seed`` the row order's (None: drawn and recorded); ``caches`` each backend's compile cache;
    ``fork`` whether the processes fork from a warm parent (:mod:`trtcheck.forkserver`)."""

    start: int
    cap: int
    budget_s: float
    alpha: float
    seed: int | None
    caches: Mapping[str, str]
    fork: bool = True

    def cache(self, backend: str) -> str:
        """``shared`` or ``private``: the compile cache of a backend (``inductor``, ``tensorrt``)."""
        return self.caches.get(BackendRef.parse(backend).name, "shared")

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "cap": self.cap, "step": STEP, "budget_s": self.budget_s,
                "alpha": self.alpha, "seed": self.seed, "compile_cache": dict(self.caches),
                "fork": self.fork}


def resolve(value: Value, name: Callable[[str, str], str]) -> ABSettings:
    """The settings from the cascade's ``value``; ``name`` says how a message names a key."""
    start, where = value("ab_processes")
    cap, cap_where = value("ab_max_processes")
    if start < 2:
        raise ConfigError(f"{name(where, 'ab_processes')}: at least 2 processes a side are needed "
                          f"for a spread, got {start}")
    if cap < start:
        raise ConfigError(f"{name(cap_where, 'ab_max_processes')}: {cap} is fewer than the "
                          f"{start} processes a side started with")
    budget, where = value("ab_budget_s")
    if budget <= 0:
        raise ConfigError(f"{name(where, 'ab_budget_s')}: must be positive, got {budget:g}")
    alpha, where = value("ab_alpha")
    if not 0 < alpha < 0.5:
        raise ConfigError(f"{name(where, 'ab_alpha')}: must lie between 0 and 0.5, got {alpha:g}")
    caches = dict(CACHE_DEFAULTS)
    entries, where = value("compile_cache")
    for entry in entries:
        backend, _, mode = str(entry).partition("=")
        if backend not in NAMES or mode not in CACHE_MODES:
            raise ConfigError(f"{name(where, 'compile_cache')}: {entry!r} is not BACKEND=MODE "
                              f"with a backend of {', '.join(NAMES)} and a mode of "
                              f"{' or '.join(CACHE_MODES)}")
        caches[backend] = mode
    return ABSettings(int(start), int(cap), float(budget), float(alpha), value("ab_seed")[0],
                      caches, bool(value("ab_fork")[0]))



def defaults() -> ABSettings:
    """The settings as declared, for options made without the cascade."""
    return resolve(lambda key: (BY_KEY[key].default, "default"), lambda where, key: key)
