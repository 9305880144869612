"""Runs the ``tensorrt`` backend's own code on a real Torch-TensorRT release, without TensorRT.

A subprocess per release (started by :class:`RealRelease`, the lowering host's machinery with this
file as its entry point) imports the release's real Python code over the behaving ``tensorrt``
stand-in and CUDA shims (:mod:`trtcheck.backends.lowering.trt`; they patch the process, hence a
subprocess). Two kinds of request:

:class:`StandinCompile` (:meth:`RealRelease.real_compile`): a real ``dynamo.compile``, no dryrun, through the
stand-in: the release's interpreter and converters build the network, the stand-in's builder and
runtime build and run it with PyTorch, called by the release's own runtime module. Its outputs are
predictions with PyTorch's numbers, never TensorRT's.

A :class:`BackendCompile`: ``TensorRTBackend().compile`` unchanged: settings adaptation, call
arguments, the release's own ``dynamo.compile`` with its signature, warnings and logs, partition
reading, the engine cache and its outcome, the first call's output check, the module it times
and the engine memory it records. ``dynamo.compile`` is wrapped to record its arguments and, with
``dryrun`` (the default), to add ``dryrun=True`` with the real compile's early return reproduced
(``Release.as_real``); without, the release's real compile runs through the behaving stand-in.
Under a profile of the torch.compile front-end the module itself goes to the subprocess (pickled;
the repository root is on its path, so that the tests' classes resolve), and the backend's
``torch.compile`` of it runs there through the behaving stand-in, as a user's would on TensorRT.

Dryrun builds no TensorRT engine. With ``engines=True`` each ``_run_on_acc_*`` block is replaced
by the dryrun level's ``Engine`` (:mod:`trtcheck.backends.lowering.dryrun`): a STAND-IN for a
TensorRT engine that runs the block with PyTorch, with an engine's input checks and output dtypes.
It is the only stand-in here, and its numbers are PyTorch's, never TensorRT's.
"""

from __future__ import annotations

import contextlib
import functools
import io
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trtcheck.backends.base import CompileJob
from trtcheck.backends.lowering.client import LoweringHost
from trtcheck.backends.lowering.code import CodeSource
from trtcheck.backends.lowering.dryrun import as_engines
from trtcheck.backends.lowering.host import main
from trtcheck.backends.lowering.release import Release
from trtcheck.backends.torch_tensorrt.compat import plain_setting
from trtcheck.backends.torch_tensorrt.tensorrt_backend import TensorRTBackend
from trtcheck.core.profiles import Profile
from trtcheck.program.shapes import plan_shapes, resize
from trtcheck.results.rows import Evidence
from trtcheck.tensors import clone


@dataclass
class Result:
    """What the backend returned on the real release, and what ``dynamo.compile`` was given."""

    evidence: Evidence
    call: dict[str, Any]  # dynamo.compile's keyword arguments, inputs left out
    outputs: Any  # the compiled module's first call, on copies of the inputs
    checked: bool  # whether compiled.fn checks its outputs (a complex output)
    inputs: list[Any]  # dynamo.compile's arg_inputs: a tensor's shape, or an Input's shape dict
    at_shapes: list[tuple[Any, Any]]  # at each shape set other than the example: (inputs, outputs)
    timed: str  # the class of the module trtcheck times (the one dynamo.compile returned)
    timed_outputs: Any  # that module's call on copies of the inputs, as the timing loop makes it
    memory: int | None  # the engines' device memory, as the run records it


@dataclass(frozen=True)
class BackendCompile:
    """The ``tensorrt`` backend's compile of ``module`` (pickled) or the exported ``program``."""

    program: bytes
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    profile: Profile
    engines: bool
    dryrun: bool
    cache_dir: str | None
    module: bytes | None


@dataclass(frozen=True)
class StandinCompile:
    """A real ``dynamo.compile`` of ``program`` through the behaving stand-in, called at each
    of ``calls``; ``dynamic``: input index -> (min, opt, max) of its first dimension."""

    program: bytes
    args: tuple[Any, ...]
    dynamic: dict[int, tuple[int, int, int]]
    calls: list[tuple[Any, ...]]


class RealRelease:
    """One subprocess holding one Torch-TensorRT release; ``compile`` runs the backend there."""

    def __init__(self, source: CodeSource) -> None:
        self.host = LoweringHost(source, target=str(Path(__file__).resolve()))

    def compile(self, model: torch.nn.Module, args: tuple[Any, ...], profile: Profile | None = None,
                kwargs: dict[str, Any] | None = None, engines: bool = True,
                dynamic_shapes: Any = None, dryrun: bool = True,
                cache_dir: str | None = None) -> Result:
        """``dynamic_shapes``: exported with them, and the backend given the shape plan a run
        makes (:func:`trtcheck.program.shapes.plan_shapes`); without ``dryrun``, the release's
        real compile through the behaving stand-in; ``cache_dir``: the engine cache on, there."""
        kwargs, profile = kwargs or {}, profile or Profile("default")
        blob = io.BytesIO()
        if not profile.front_end.compiles_module or dynamic_shapes is not None:  # else no program
            torch.export.save(torch.export.export(model, args, kwargs,
                                                  dynamic_shapes=dynamic_shapes), blob)
        module = pickle.dumps(model) if profile.front_end.compiles_module else None
        return Result(**self.host.request(BackendCompile(blob.getvalue(), args, kwargs, profile,
                                                         engines, dryrun, cache_dir, module)))

    def real_compile(self, model: torch.nn.Module, args: tuple[Any, ...],
                     dynamic: dict[int, tuple[int, int, int]] | None = None,
                     at: list[tuple[Any, ...]] | None = None) -> dict[str, Any]:
        """A real ``dynamo.compile`` of ``model`` exported at ``args`` through the behaving stand-in;
        ``dynamic``: input index -> (min, opt, max) of its first dimension. The compiled module is
        called on each of ``at`` (else ``args``); the reply holds its outputs, the class of each
        engine module and the TensorRT version the stand-in reports."""
        shapes = None
        if dynamic:
            dims = {i: torch.export.Dim(f"d{i}", min=lo, max=hi) for i, (lo, _, hi) in dynamic.items()}
            shapes = tuple({0: dims[i]} if i in dims else None for i in range(len(args)))
        blob = io.BytesIO()
        torch.export.save(torch.export.export(model, args, dynamic_shapes=shapes), blob)
        return self.host.request(StandinCompile(blob.getvalue(), args, dynamic or {}, at or [args]))

    def close(self) -> None:
        self.host.close()


# In the subprocess ------------------------------------------------------------------------------

_STATE: dict[str, Any] = {"engines": True, "dryrun": True, "calls": [], "wrapped": False}


def _dryrun(release: Release) -> None:
    """Wrap the release's ``dynamo.compile`` (keeping its signature) to compile as a dryrun."""
    real = release.ttrt.dynamo.compile

    @functools.wraps(real)
    def compile(program: Any, *args: Any, **kwargs: Any) -> Any:
        _STATE["calls"].append({k: plain_setting(v) for k, v in kwargs.items()
                                if k not in ("arg_inputs", "kwarg_inputs", "inputs")})
        _STATE["inputs"] = [dict(x.shape) if isinstance(x, release.ttrt.Input) else tuple(x.shape)
                            for x in kwargs.get("arg_inputs", kwargs.get("inputs", []))]
        if not _STATE["dryrun"]:  # the real compile: converters, builder, runtime of the stand-in
            with contextlib.redirect_stdout(io.StringIO()):
                return real(program, *args, **kwargs)
        seen: dict[str, Any] = {}
        with release.as_real(seen), contextlib.redirect_stdout(io.StringIO()):
            module = real(program, *args, **kwargs, dryrun=True)
        if _STATE["engines"] and "early_return" not in seen:
            as_engines(release, module, bool(seen["settings"].truncate_double))
        return module

    release.ttrt.dynamo.compile = compile
    _STATE["wrapped"] = True


def real_compile(request: StandinCompile, release: Release, modules: dict[int, Any]) -> dict[str, Any]:
    blob, args, dynamic, calls = request.program, request.args, request.dynamic, request.calls
    ttrt = release.ttrt
    inputs: list[Any] = []
    for i, x in enumerate(args):
        if i in dynamic:
            lo, opt, hi = dynamic[i]
            rest = tuple(x.shape[1:])
            x = ttrt.Input(min_shape=(lo, *rest), opt_shape=(opt, *rest), max_shape=(hi, *rest),
                           dtype=x.dtype)
        inputs.append(x)
    real = release.ttrt.dynamo.compile.__wrapped__ if _STATE["wrapped"] else release.ttrt.dynamo.compile
    with contextlib.redirect_stdout(io.StringIO()):
        compiled = real(torch.export.load(io.BytesIO(blob)), arg_inputs=inputs, min_block_size=1)
    engines = [type(m).__name__ for n, m in compiled.named_children() if n.startswith("_run_on_acc")]
    with torch.no_grad():
        outputs = [compiled(*call) for call in calls]
    return {"outputs": outputs, "engines": engines, "tensorrt": sys.modules["tensorrt"].__version__}


def backend_compile(request: BackendCompile, release: Release,
                    modules: dict[int, Any]) -> dict[str, Any]:
    r = request
    blob, args, kwargs, profile, engines, dryrun, cache_dir, module = (
        r.program, r.args, r.kwargs, r.profile, r.engines, r.dryrun, r.cache_dir, r.module)
    if not _STATE["wrapped"]:
        _dryrun(release)
    _STATE["engines"] = engines
    _STATE["dryrun"] = dryrun
    _STATE["calls"].append({})
    _STATE["inputs"] = []
    program = torch.export.load(io.BytesIO(blob)) if blob else None
    shapes = plan_shapes(program, (args, kwargs)) if program else None
    torch.compiler.reset()  # as the worker does before each row
    compiled = TensorRTBackend().compile(CompileJob(
        program, args, kwargs, profile, "cpu", ranges=shapes.ranges if shapes else {},
        engine_cache=cache_dir is not None, cache_dir=cache_dir,
        module=pickle.loads(module) if module else None))
    inputs = clone((args, kwargs))
    at_shapes = []
    with torch.no_grad():
        outputs = compiled.fn(*inputs[0], **inputs[1])
        timed_inputs = clone((args, kwargs))
        timed_outputs = compiled.called(*timed_inputs[0], **timed_inputs[1])
        for at in shapes.sets[1:] if shapes else ():
            resized = resize(program, (args, kwargs), at)
            at_shapes.append((resized, compiled.fn(*clone(resized)[0], **clone(resized)[1])))
    # the torch_compile front-end calls no dynamo.compile: its call is the options torch.compile passed
    return {"evidence": compiled.evidence, "call": _STATE["calls"][-1] or compiled.evidence.settings,
            "outputs": outputs,
            "checked": not isinstance(compiled.fn, torch.nn.Module), "inputs": _STATE.get("inputs", []),
            "at_shapes": at_shapes, "timed": type(compiled.called).__name__,
            "timed_outputs": timed_outputs, "memory": compiled.memory}


HANDLERS = {BackendCompile: backend_compile, StandinCompile: real_compile}


if __name__ == "__main__":
    # the tests' own classes, the requests' among them as the tests name them (tests.ttrt_contract)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests import ttrt_contract

    main(sys.argv[1:], ttrt_contract.HANDLERS, behaving=True)
