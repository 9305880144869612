"""The lowering host: a subprocess that runs Torch-TensorRT's real Python code on PyTorch.

A child of :mod:`trtcheck.process`, started with the code directory of one release as its argument
(empty for an installed ``torch_tensorrt``). It puts the release's code on ``sys.path``, installs the
``tensorrt`` stand-in and CUDA shims (:mod:`trtcheck.backends.lowering.standin`, or with ``behaving``
the one that builds and runs engines, :mod:`trtcheck.backends.lowering.trt`; they patch torch, which
is why this is a separate process), imports ``torch_tensorrt`` and serves requests:

- ``("compile", key, program_bytes, call, settings, device, dryrun, example)``: with ``dryrun``,
  ``dynamo.compile(program, **call, **settings, dryrun=True)`` with what a real compile does
  differently reproduced (:mod:`.dryrun`); without, the real compile through the behaving
  stand-in (converters, builder, runtime), its engines called once on ``example`` to read the
  dtypes they hand back (:mod:`.converted`). The module is kept under ``key`` in place of the one
  before (a compiled module serves one row); the reply is the evidence;
- ``("jit", key, module_bytes, zoo_file, options, calls)``: Torch-TensorRT's torch.compile
  front-end on the user's module through the behaving stand-in (:mod:`.torch_compile`): the
  case's zoo file imported here first, the module unpickled, compiled and called at each of
  ``calls``; kept under ``key`` like a compile's;
- ``("call", key, args, kwargs)``: runs the kept module with PyTorch; the reply is
  ``(outputs, (args, kwargs))``, the inputs as they are after the call;
- ``("save", key, path, format, call)``: ``torch_tensorrt.save`` of the kept module, for the
  deploy stage (:func:`trtcheck.backends.deploy.save`).

Replies are ``("ok", payload)``, ``("unsupported", reason)`` or ``("error", Failure)``. The first
reply, before any request, says whether the import worked.

Every result is a prediction: at the graph level with dryrun (Torch-TensorRT's own lowering and
partitioning, each TensorRT block run by PyTorch), at the converters and engine without (the
release's converters build each network, the stand-in's builder and runtime run it with PyTorch's
numbers). TensorRT itself never runs here.
"""


from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import torch

from trtcheck.backends import deploy
from trtcheck.backends.lowering import converted, dryrun, torch_compile
from trtcheck.backends.lowering.release import Rejected, Release, load
from trtcheck.backends.lowering.trt.network import standin_gap
from trtcheck.errors import PredictionGap
from trtcheck.process import Parent, exit_now, freeze_imports

Handler = Callable[[tuple[Any, ...], Release, dict[int, Any]], Any]


def serve(parent: Parent, code_dir: str, handle: Handler | None = None, behaving: bool = False) -> None:
    """Load the release (over the behaving stand-in with ``behaving``), reply how that went, then
    answer requests with ``handle``."""
    handle = handle or _handle
    try:
        ttrt, info = load(code_dir, behaving)
        release = Release(ttrt)
    except BaseException as exc:  # reported to the parent, which decides
        parent.fail(exc)
        return
    freeze_imports()
    parent.send(("ok", info))
    modules: dict[int, Any] = {}
    while True:
        try:
            request = parent.receive()
        except EOFError:
            return
        try:
            parent.send(("ok", handle(request, release, modules)))
        except Rejected as exc:
            parent.send(("unsupported", str(exc)))
        except Exception as exc:
            parent.fail(_as_gap(exc) if behaving else exc)


def _as_gap(exc: Exception) -> Exception:
    """``exc``, or the prediction the behaving stand-in could not make in its chain, as a plain
    :class:`PredictionGap` (its reason, the traceback chained under it) that crosses to the
    parent with its type."""
    gap = standin_gap(exc)
    if gap is None:
        return exc
    plain = PredictionGap(gap.reason)
    plain.__cause__ = exc
    plain.evidence = getattr(exc, "evidence", None)  # type: ignore[attr-defined]
    return plain


def _handle(request: tuple[Any, ...], release: Release, modules: dict[int, Any]) -> Any:
    kind, key, *rest = request
    if kind == "compile":
        blob, call, settings, device, graph_level, example = rest
        program = torch.export.load(io.BytesIO(blob))
        modules.clear()
        module, evidence = dryrun.compiled(release, program, call, settings, device) if graph_level else \
            converted.compiled(release, program, call, settings, device, example)
        modules[key] = module
        return evidence
    if kind == "jit":
        modules.clear()
        modules[key], evidence = torch_compile.compiled(*rest)
        return evidence
    if kind == "save":
        return deploy.save(release.ttrt, modules[key], *rest)
    args, kwargs = rest  # "call"
    if key not in modules:
        raise LookupError(f"compiled module {key} was replaced by a later compile")
    with torch.no_grad():
        outputs = modules[key](*args, **kwargs)
    return outputs, (args, kwargs)


def main(argv: list[str], handle: Handler | None = None, behaving: bool = False) -> NoReturn:
    parent = Parent(argv)
    serve(parent, parent.args[0] if parent.args else "", handle,
          behaving or "behaving" in parent.args[1:])
    exit_now()


if __name__ == "__main__":
    main(sys.argv[1:])
