"""Planted slowdowns for ``bench_gate.py``: extra host work before a model's call, sized per case.

``TRTCHECK_PLANT`` names a JSON file ``{case_id: {"eager_ms": x, "backend_ms": y}}``. Called
eagerly, a planted model spins ``eager_ms`` first; compiled by ``torch.compile``, it spins
``backend_ms`` (dynamo traces ``torch.compiler.is_compiling()`` as true and calls the spin, which
it may not trace, on every call). Exporting never spins. So ``eager_ms`` 0 slows only the
backend's path (a regression the speedup must show) and both set slow the whole model (one the
``latency`` metric must show). Without the variable a model is returned as it is.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch


@torch.compiler.disable
def spin(ms: float) -> None:
    """Busy-wait ``ms`` on the host: with the device idle, per-call timing sees all of it."""
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def _exporting() -> bool:
    is_exporting = getattr(torch.compiler, "is_exporting", None)
    return bool(is_exporting and is_exporting())


def planted(case_id: str, module: torch.nn.Module) -> torch.nn.Module:
    """``module``, planted when ``TRTCHECK_PLANT`` plants a slowdown in ``case_id``: its class
    becomes a subclass whose ``forward`` spins ``eager_ms`` when called eagerly and
    ``backend_ms`` compiled, then runs the original. A subclass, not a wrapping module: a second
    module call would cost eager about 2.4 µs (a third of a 6.5 µs RoPE on the 2-core CPU) and
    cancel most of a backend-only plant."""
    path = os.environ.get("TRTCHECK_PLANT")
    if not path:
        return module
    plan = json.loads(Path(path).read_text()).get(case_id)
    if not plan:
        return module
    eager_ms, backend_ms = float(plan.get("eager_ms", 0.0)), float(plan.get("backend_ms", 0.0))
    original = type(module)

    def forward(self: torch.nn.Module, *args: torch.Tensor) -> torch.Tensor:
        if not _exporting():
            ms = backend_ms if torch.compiler.is_compiling() else eager_ms
            if ms > 0:
                spin(ms)
        return original.forward(self, *args)

    module.__class__ = type(f"Planted{original.__name__}", (original,), {"forward": forward})
    return module
