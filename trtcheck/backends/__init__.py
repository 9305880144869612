"""The backend registry. A backend whose dependency is missing reports why instead of failing to import."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.backends.eager import EagerBackend
from trtcheck.backends.emulate import EmulateBackend
from trtcheck.backends.inductor import InductorBackend
from trtcheck.backends.lowering.code import VERSION, CodeUnavailable, locate
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.backends.torch_tensorrt.tensorrt_backend import TensorRTBackend
from trtcheck.config.options import Options
from trtcheck.core.traits import EMULATE_SCOPE, TRAITS, BackendRef, needs_choice
from trtcheck.errors import NoFallback

REGISTRY: dict[str, type[Backend]] = {cls.name: cls for cls in (
    TensorRTBackend, EmulateBackend, LoweringBackend, InductorBackend, EagerBackend)}
if set(REGISTRY) != set(TRAITS):  # the table the results layer reads must name these classes
    raise RuntimeError(f"backend classes {sorted(REGISTRY)} differ from the traits table "
                       f"{sorted(TRAITS)}")


LOWERING = LoweringBackend.name


def get(name: str) -> Backend:
    """A backend by its registry name, with its defaults."""
    return REGISTRY[name]()


def instantiate(opts: Options) -> dict[str, Backend]:
    """The run's backends by row name; ``lowering@VERSION`` is the lowering backend on the
    ``--torch-tensorrt`` release with that label, ``lowering`` on the only (or default) one."""
    made: dict[str, Backend] = {}
    labels = {lowering_label(spec): spec for spec in opts.torch_tensorrt}
    for name in opts.backends:
        ref = BackendRef.parse(name)
        if ref.name == LOWERING:
            made[name] = LoweringBackend(labels.get(ref.release) if ref.release else
                                         next(iter(opts.torch_tensorrt), None),
                                         dryrun=opts.lowering_dryrun)
        else:
            made[name] = REGISTRY[name]()
    return made


def preloads(names: Iterable[str]) -> tuple[str, ...]:
    """The modules the named backends (``lowering@VERSION`` among them) import before their
    first case, in order, once each."""
    return tuple(dict.fromkeys(m for name in names
                               for m in REGISTRY[BackendRef.parse(name).name].preload))


@contextmanager
def active(made: Mapping[str, Backend]) -> Iterator[None]:
    """The backends activated for the block, and deactivated after it, whatever happens."""
    started: list[Backend] = []
    try:
        for backend in made.values():
            backend.activate()
            started.append(backend)
        yield
    finally:
        for backend in reversed(started):
            backend.deactivate()


def lowering_label(spec: str) -> str:
    """How rows name one Torch-TensorRT release: its version (read from a wheel or directory)."""
    if VERSION.fullmatch(spec):
        return spec
    try:
        return locate(spec).version
    except CodeUnavailable:
        return Path(spec).name


def choose(opts: Options) -> Options:
    """The options with the default backend filled in when none was named, with one line
    (``backend_note``) saying which and why; ``lowering`` becomes one ``lowering@VERSION``
    per release when ``--torch-tensorrt`` names several.

    The default: ``tensorrt`` where Torch-TensorRT runs with TensorRT on CUDA, else ``lowering``
    where Torch-TensorRT's code is installed, cached or can be fetched now, else ``emulate``
    (``fallback_note`` says so), unless ``fallback`` is ``none`` (the default with CI set):
    then :class:`NoFallback`."""
    if not opts.backends:
        opts = _default(opts)
    if needs_choice(opts.backends, opts.torch_tensorrt):
        names: list[str] = []
        for name in opts.backends:
            names += ([f"{LOWERING}@{lowering_label(s)}" for s in opts.torch_tensorrt]
                      if name == LOWERING else [name])
        opts = replace(opts, backends=tuple(dict.fromkeys(names)))
    return opts


def _default(opts: Options) -> Options:
    trt_reason = TensorRTBackend().unavailable_reason(opts.device)
    if trt_reason is None and not opts.torch_tensorrt:
        return replace(opts, backends=("tensorrt",),
                       backend_note="no backend named: using tensorrt (Torch-TensorRT on CUDA)")
    lowering = LoweringBackend(next(iter(opts.torch_tensorrt), None))
    low_reason = lowering.unavailable_reason(opts.device)
    if low_reason is None:
        return replace(opts, backends=(LOWERING,), backend_note=(
            f"no backend named: using lowering, Torch-TensorRT {lowering.version}'s own code "
            + ("(lowering and partitioning, its TensorRT blocks run by PyTorch): a prediction at "
               "the graph level" if opts.lowering_dryrun else
               "(its converters, over a TensorRT stand-in that runs each engine with PyTorch): a "
               "prediction at the converters and engine")
            + f", not TensorRT ({trt_reason or 'a Torch-TensorRT release was named'})"
            + (f"; {lowering.fetched}" if lowering.fetched else "")))
    if opts.fallback == "none":
        raise NoFallback(_no_fallback(opts, low_reason))
    return replace(opts, backends=("emulate",), backend_note=(
        f"no backend named: using emulate, trtcheck's prediction of TensorRT's dtype behaviour, "
        f"not TensorRT (tensorrt: {trt_reason}; lowering: {low_reason})"),
        fallback_note=f"emulate ran instead of lowering, the default: {low_reason}; {EMULATE_SCOPE}")


def _no_fallback(opts: Options, reason: str) -> str:
    """Why no backend runs, and the three ways out."""
    why = ("CI is set, so trtcheck does not switch backends: a commit gets one verdict whether "
           "or not the package index is reachable" if opts.ci else
           'fallback = "none" lets no other backend run in its place')
    return (f"no backend named, and the default, lowering, cannot run here: {reason}. {why}. "
            "Make Torch-TensorRT's code available (`trtcheck fetch torch-tensorrt`, and keep "
            "its cache for the runner), name a backend (--backend emulate), or set "
            'fallback = "emulate" to run emulate instead')


__all__ = [
    "REGISTRY",
    "Backend",
    "CompileJob",
    "Compiled",
    "active",
    "choose",
    "get",
    "instantiate",
    "lowering_label",
    "preloads",
]
