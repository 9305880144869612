"""Planted slowdowns for ``bench_gate.py``: real work on the model's own device, sized per row.

A planted row calls the custom op ``trtcheck_gate::burn`` on its first floating-point input:
``torch.mm`` on scratch buffers on that input's device (CUDA kernels on a GPU, CPU work on a
CPU), then a copy of the input, which the model goes on with. The op is opaque to
``torch.compile`` (inductor calls it as an extern kernel) and reads its size when it runs, so a
plan can be resized without recompiling.

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
import math
import os
from pathlib import Path

import torch

PLAN = Path(__file__).resolve().parent / "plant.json"
SIDES = ("compiled", "eager")
ROWS, DEPTH = 128, 4096  # one unit of work: a (ROWS x DEPTH) @ (DEPTH x ROWS) product

# Units of work per "case_id/side", read by the op on every call.
SIZES: dict[str, float] = {}
_SCRATCH: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}

_LIB = torch.library.Library("trtcheck_gate", "DEF")
_LIB.define("burn(Tensor x, str key) -> Tensor")


def work(units: float) -> tuple[int, int, int]:
    """``units`` as (products, rows, depth): whole units are that many full products; a part
    of one is one product with its rows and depth scaled by the cube root (its cost, rows x
    depth x ``ROWS``, in proportion), down to one row of depth 1; none for 0."""
    if units <= 0:
        return 0, 0, 0
    if units >= 1:
        return math.ceil(units), ROWS, DEPTH
    scale = units ** (1 / 3)
    return 1, max(1, round(ROWS * scale)), max(1, round(DEPTH * scale))


def burn_on(device: torch.device, units: float) -> None:
    """The planted work itself, on ``device``."""
    if device not in _SCRATCH:
        _SCRATCH[device] = (torch.randn(ROWS, DEPTH, device=device),
                            torch.randn(DEPTH, ROWS, device=device))
    a, b = _SCRATCH[device]
    reps, rows, depth = work(units)
    for _ in range(reps):
        torch.mm(a[:rows, :depth], b[:depth, :])


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


def _first_floating(args: tuple, key: str) -> tuple:
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return (*args[:i], torch.ops.trtcheck_gate.burn(a, key), *args[i + 1:])
    raise ValueError(f"{key}: the plant needs a floating-point tensor argument")


def planted(case_id: str, module: torch.nn.Module) -> torch.nn.Module:
    """``module``, planted where the sizes in force plant ``case_id``: its class becomes a
    subclass whose ``forward`` calls the op, compiled and/or eagerly, then runs the original.
    A subclass, not a wrapping module: a second module call would cost eager about 2.4 µs (a
    third of a 6.5 µs RoPE on the 2-core CPU). Which sides are planted is fixed here, so a
    compiled graph holds the op exactly when it is planted."""
    compiled, eager = (f"{case_id}/{side}" for side in SIDES)
    in_compiled, in_eager = compiled in SIZES, eager in SIZES
    if not (in_compiled or in_eager):
        return module
    original = type(module)

    def forward(self: torch.nn.Module, *args: torch.Tensor) -> torch.Tensor:
        if not _exporting():
            if torch.compiler.is_compiling():
                if in_compiled:
                    args = _first_floating(args, compiled)
            elif in_eager:
                args = _first_floating(args, eager)
        return original.forward(self, *args)

    module.__class__ = type(f"Planted{original.__name__}", (original,), {"forward": forward})
    return module


use(load())
