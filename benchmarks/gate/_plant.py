"""Planted slowdowns for ``bench_gate.py``: real work on the model's own device, sized per row.

A planted row does extra work after its forward, on the output's device: a kernel that spins
on the GPU for a given number of clock cycles (``torch.cuda._sleep``: one launch, its length
any size), or a busy loop on a CPU. After the forward, not before it:
on a GPU the calls of small models are launch-bound, and work queued while the host still
launches the model's kernels would hide in the gaps between them. Compiled, the work is the
custom op ``trtcheck_gate::burn`` on the output (a copy of it comes back), opaque to
``torch.compile`` (inductor calls it as an extern kernel); eagerly it is a plain call, no op and
no copy, so that the smallest eager plant costs almost nothing. Both read their size when they
run, so a plan can be resized without recompiling.

A plan maps a case id to units of work: ``{"compiled": u}`` is the speedup metric's plant,
work inside the compiled graph only (dynamo traces ``torch.compiler.is_compiling()`` as true),
eager untouched; ``{"compiled": u, "eager": v}`` is the latency metric's, the whole model
slower. Exporting never plants. The plan is ``plant.json`` beside this file (a tree whose zoo
carries the plant), or the file ``TRTCHECK_PLANT`` names; ``benchmarks/bench_plant.py`` sizes
one per row to 15 % of the row's figure. Without either, every model is returned as it is.

The name starts with ``_`` so that trtcheck does not import this file as a zoo file: the op is
registered once, by the one module ``models.py`` imports.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

PLAN = Path(__file__).resolve().parent / "plant.json"
SIDES = ("compiled", "eager")
SLEEP_CYCLES = 10_000  # one unit on a GPU: this many clock cycles of a spinning kernel
SPIN_S = 10e-6  # one unit on a CPU: this long a busy loop
UNIT = {"cuda": f"a kernel spinning {SLEEP_CYCLES:,} cycles", "cpu": f"{SPIN_S * 1e6:g} µs of busy loop"}

# Units of work per "case_id/side", read by the op on every call.
SIZES: dict[str, float] = {}

_LIB = torch.library.Library("trtcheck_gate", "DEF")
_LIB.define("burn(Tensor x, str key) -> Tensor")


def burn_on(device: torch.device, units: float) -> None:
    """The planted work itself, on ``device``: ``units`` of it, any fraction; none for 0."""
    if units <= 0:
        return
    if device.type == "cuda":
        torch.cuda._sleep(max(1, round(units * SLEEP_CYCLES)))
        return
    end = time.perf_counter() + units * SPIN_S
    while time.perf_counter() < end:
        pass


def _burn(x: torch.Tensor, key: str) -> torch.Tensor:
    burn_on(x.device, SIZES.get(key, 0.0))
    return x.clone()


_LIB.impl("burn", _burn, "CompositeExplicitAutograd")
torch.library.register_fake("trtcheck_gate::burn", lambda x, key: torch.empty_like(x), lib=_LIB)


def load(path: Path | None = None) -> dict[str, dict[str, float]]:
    """The plan in force: ``path``, else ``TRTCHECK_PLANT``, else ``plant.json`` here; {} without."""
    named = os.environ.get("TRTCHECK_PLANT")
    path = path or (Path(named) if named else PLAN)
    if not path.exists():
        return {}
    return {case: {side: float(u) for side, u in sizes.items() if side in SIDES}
            for case, sizes in json.loads(path.read_text())["sizes"].items()}


def use(plan: dict[str, dict[str, float]]) -> None:
    """Make ``plan`` the sizes in force (models built afterwards are planted by it)."""
    SIZES.clear()
    SIZES.update({f"{case}/{side}": u for case, sizes in plan.items() for side, u in sizes.items()})


def _exporting() -> bool:
    return bool(torch.compiler.is_exporting())


def planted(case_id: str, module: torch.nn.Module) -> torch.nn.Module:
    """``module``, planted where the sizes in force plant ``case_id``: its class becomes a
    subclass whose ``forward`` runs the original, then the planted work, compiled and/or
    eagerly. A subclass, not a wrapping module: a second module call would cost eager about
    2.4 µs (a third of a 6.5 µs RoPE on the 2-core CPU). Which sides are planted is fixed here,
    so a compiled graph holds the op exactly when it is planted."""
    compiled, eager = (f"{case_id}/{side}" for side in SIDES)
    in_compiled, in_eager = compiled in SIZES, eager in SIZES
    if not (in_compiled or in_eager):
        return module
    original = type(module)

    def forward(self: torch.nn.Module, *args: torch.Tensor) -> torch.Tensor:
        out = original.forward(self, *args)
        if _exporting():
            return out
        if not (isinstance(out, torch.Tensor) and out.is_floating_point()):
            raise ValueError(f"{case_id}: the plant needs a floating-point tensor output")
        if torch.compiler.is_compiling():
            return torch.ops.trtcheck_gate.burn(out, compiled) if in_compiled else out
        if in_eager:
            burn_on(out.device, SIZES.get(eager, 0.0))
        return out

    module.__class__ = type(f"Planted{original.__name__}", (original,), {"forward": forward})
    return module


use(load())
