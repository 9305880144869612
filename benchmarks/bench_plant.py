"""Size the gate's planted slowdowns: per row, device work that makes the figure each metric
gates 15 % worse, calibrated in this process.

For every row of ``benchmarks/gate`` the model is built clean and planted
(``benchmarks/gate/_plant.py``), compiled as trtcheck's ``inductor`` backend compiles it
(``torch.compile`` on the module), and timed by trtcheck's own interleaved timing on the device.
Each plant is sized on the figure its metric reads, its call timed against the clean one's
interleaved call by call in one measurement (two measurements, each with its own state of a
shared machine, would differ by more than the plant): the row measured, the work sized from
the plant's measured cost, the row re-measured and the size adjusted (secant steps) until the
figure is 15 % ± 1 % worse, or the steps run out:

- the compiled call's time: the speedup plant (work in the compiled graph only, eager
  untouched, so the speedup, eager ÷ compiled, falls by the same factor) and the latency
  plant's compiled side;
- the eager call's time: the latency plant's eager side (with the compiled side, the whole
  model slower).

Each row prints the size reached and the change it makes, with its interval. The smallest
compiled plant is the op's call and its copy of the output, no work: a row so fast that even
that exceeds 17 % is shown as such, not hidden. ``--out`` gets ``speedup.json`` and
``latency.json``, the plans ``bench_gate.py`` puts into the head side's tree.

    python benchmarks/bench_plant.py --device cuda --out /tmp/gate-cuda/plans
    python benchmarks/bench_plant.py --device cpu --quick --out /tmp/plans    # a check, 1 row
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GATE = REPO / "benchmarks" / "gate"
TARGET, TOLERANCE, ALLOWED = 0.15, 0.01, 0.02  # aim within ±1 %, accept within ±2 %
STEPS = 8


@dataclass
class Sized:
    """One side's plant: its units of work and the change they made, with its interval."""

    units: float
    change: float
    low: float
    high: float
    clean: float  # the clean figure: ms, or the speedup
    steps: int

    @property
    def within(self) -> bool:
        return abs(self.change - TARGET) <= ALLOWED


Change = tuple[float, float, float, float]  # change, its interval, the clean figure


def changed(clean: Callable[..., Any], planted: Callable[..., Any], args: tuple[Any, ...],
            kwargs: dict[str, Any], device: str, timing: Any) -> Change:
    """Planted's device median over clean's, less 1, both timed interleaved call by call as
    trtcheck times a row; and clean's median, ms."""
    from trtcheck.measure.timing import measure

    lat = measure((clean, planted), args, kwargs, timing=timing, device=device,
                  fresh_inputs=(False, False))
    # the "speedup" is clean ÷ planted: its interval turns into the change's
    return (1 / lat.speedup - 1, 1 / lat.speedup_high - 1, 1 / lat.speedup_low - 1,
            lat.eager_device.median_ms)


def unit_ms(device: str) -> float:
    """The device time of one unit of planted work, in ms."""
    import _plant
    import torch

    dev = torch.device(device)
    sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else (lambda: None)
    _plant.burn_on(dev, 1.0)
    sync()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(10):
            _plant.burn_on(dev, 1.0)
        sync()
        times.append((time.perf_counter() - t0) * 1e3 / 10)
    return sorted(times)[2]


def calibrate(key: str, measure_at: Callable[[], Change], per_unit_ms: float) -> Sized:
    """Size ``key``'s work: measure the smallest plant (the op's call and its copy alone, no
    work; it also gives the clean time), then close in on the target. Below it, the next size
    is at least twice the largest tried: work shorter than what the host still does after
    queueing it hides behind that, so small sizes can read as no change at all. Once a size
    overshoots, the target is bracketed and each step interpolates between the nearest sizes
    either side of it."""
    import _plant

    _plant.SIZES[key] = 0.0
    tried: list[Sized] = []
    for step in range(1, STEPS + 1):
        change, low, high, clean = measure_at()
        tried.append(Sized(_plant.SIZES[key], change, low, high, clean, step))
        if abs(change - TARGET) <= TOLERANCE or (step == 1 and change > TARGET + TOLERANCE):
            break  # there, or the smallest plant is already too much
        below = max((s for s in tried if s.change < TARGET), key=lambda s: s.units)
        above = [s for s in tried if s.change > TARGET and s.units > below.units]
        if above:
            over = min(above, key=lambda s: s.units)
            share = (TARGET - below.change) / (over.change - below.change)
            units = below.units + min(0.9, max(0.1, share)) * (over.units - below.units)
        else:  # the missing change from the plant's measured cost, at least twice the size
            units = max(2 * below.units, (TARGET - below.change) * clean / per_unit_ms)
        _plant.SIZES[key] = units
    best = min(tried, key=lambda s: abs(s.change - TARGET))
    _plant.SIZES[key] = best.units
    return replace(best, steps=len(tried))


def compiled(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``module`` compiled as trtcheck's ``inductor`` backend compiles it, called once."""
    import torch

    fn = torch.compile(module, backend="inductor")
    with torch.no_grad():
        fn(*args, **kwargs)
    return fn


def calibrate_all(device: str, keyword: str | None, min_time_s: float) -> dict[str, Any]:
    """Every row's two plants, sized in this process."""
    import torch

    from trtcheck.config import cascade
    from trtcheck.execution.case import in_full
    from trtcheck.execution.run import collect
    from trtcheck.tensors import to_device
    from trtcheck.zoo.cases import build
    from trtcheck.zoo.discover import ImportFailure

    sys.path.insert(0, str(GATE))
    import _plant

    if device == "cpu":  # one thread, as bench_gate.py runs trtcheck on CPU: on a shared
        torch.set_num_threads(1)  # machine, threads waiting on each other swamp small models
    opts = cascade.resolve((GATE,), device=device, keyword=keyword)
    timing = replace(opts.timing, min_time_s=min_time_s)
    per_unit = unit_ms(device)
    print(f"one unit of planted work ({_plant.UNIT[torch.device(device).type]}) on {device}: "
          f"{per_unit:.4f} ms", flush=True)
    found: dict[str, Any] = {}
    for collected in collect(opts).cases:
        case = in_full(collected)
        if isinstance(case, ImportFailure):
            raise SystemExit(f"{collected.case_id}: {case.message}")
        cid = case.case_id

        def made(sides: tuple[str, ...], cid: str = cid, case: Any = case) -> tuple[Any, ...]:
            """The case built with ``sides`` planted (none: clean), on the device, in eval mode."""
            _plant.SIZES.update({f"{cid}/{s}": _plant.SIZES.get(f"{cid}/{s}", 1.0) for s in sides})
            built = build(case)
            for s in _plant.SIDES:
                if s not in sides:
                    _plant.SIZES.pop(f"{cid}/{s}", None)
            module = built.module.to(device).eval()
            return (module, *to_device((built.args, built.kwargs), device))

        clean, args, kwargs = made(())
        latency_plant, _, _ = made(("compiled", "eager"))
        compiled_s = time.perf_counter()
        clean_c, latency_c = compiled(clean, args, kwargs), compiled(latency_plant, args, kwargs)
        compiled_s = time.perf_counter() - compiled_s
        step = partial(changed, args=args, kwargs=kwargs, device=device, timing=timing)
        sized = {"compiled": calibrate(f"{cid}/compiled", partial(step, clean_c, latency_c),
                                       per_unit),
                 "eager": calibrate(f"{cid}/eager", partial(step, clean, latency_plant), per_unit)}
        found[cid] = {"speedup": {"compiled": sized["compiled"].units},
                      "latency": {s: sized[s].units for s in ("compiled", "eager")},
                      "achieved": {s: vars(z) | {"within": z.within} for s, z in sized.items()},
                      "compile_s": compiled_s}
        print(f"{cid}: " + "; ".join(
            f"{s} {z.clean:.4g} → {z.change:+.1%} [{z.low:+.1%}, {z.high:+.1%}] with "
            f"{z.units:.4g} units ({z.steps} steps){'' if z.within else ' OUTSIDE 15 ± 2 %'}"
            for s, z in sized.items()), flush=True)
        _plant.SIZES.clear()
    return {"device": device, "unit_ms": per_unit, "rows": found}


SHOWN = {"compiled": "compiled ms (the speedup plant, and the latency plant's compiled side)",
         "eager": "eager ms (the latency plant's eager side)"}


def report(found: dict[str, Any]) -> None:
    print(f"\nplanted work, {found['device']}: target {TARGET:.0%} ± {ALLOWED:.0%} worse, "
          "measured in this process (clean against planted); clean figure → change [interval], "
          "units of work\n")
    print("| row | " + " | ".join(SHOWN.values()) + " |")
    print("|---|" + "---|" * len(SHOWN))
    for cid, row in found["rows"].items():
        cells = []
        for side in SHOWN:
            z = row["achieved"][side]
            cells.append(f"{z['clean']:.4g} → {z['change']:+.1%} [{z['low']:+.1%}, "
                         f"{z['high']:+.1%}], {z['units']:.3g}{'' if z['within'] else ' (outside)'}")
        print(f"| {cid} | " + " | ".join(cells) + " |")


def write_plans(found: dict[str, Any], out: Path) -> None:
    """``speedup.json`` (compiled only) and ``latency.json`` (both sides), as ``_plant.load``
    reads them, each with what its sizes achieved."""
    out.mkdir(parents=True, exist_ok=True)
    for name, shown in (("speedup", ("compiled",)), ("latency", ("compiled", "eager"))):
        plan = {"device": found["device"], "metric": name,
                "sizes": {cid: row[name] for cid, row in found["rows"].items()},
                "achieved": {cid: {s: row["achieved"][s] for s in shown}
                             for cid, row in found["rows"].items()}}
        (out / f"{name}.json").write_text(json.dumps(plan, indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", type=Path, required=True, help="folder for the two plans")
    parser.add_argument("--quick", action="store_true",
                        help="one launch-bound row, short timings: checks the code path")
    parser.add_argument("-k", dest="keyword", default=None, help="only the rows this selects")
    parser.add_argument("--min-time-s", type=float, default=None,
                        help="timing per measurement (default 0.5 s; --quick 0.1 s)")
    args = parser.parse_args()
    min_time = args.min_time_s or (0.1 if args.quick else 0.5)
    found = calibrate_all(args.device, "pointwise" if args.quick else args.keyword, min_time)
    write_plans(found, args.out)
    report(found)
    print(f"\nplans: {args.out / 'speedup.json'}, {args.out / 'latency.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
