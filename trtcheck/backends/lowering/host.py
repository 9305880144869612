"""The lowering host: a subprocess that runs Torch-TensorRT's real Python code on PyTorch.

A child of :mod:`trtcheck.process`, started with the code directory of one release as its argument
(empty for an installed ``torch_tensorrt``). It puts the release's code on ``sys.path``, installs the
``tensorrt`` stand-in and CUDA shims (:mod:`trtcheck.backends.lowering.standin`, or with ``behaving``
the one that builds and runs engines, :mod:`trtcheck.backends.lowering.trt`; they patch torch, which
is why this is a separate process), imports ``torch_tensorrt`` and serves requests:

Each compile request is named by the front-end it runs (:mod:`trtcheck.core.frontends`):

- ``("export", key, program_bytes, call, settings, device, graph_level, example)``: with
  ``graph_level`` (``--lowering-dryrun``), ``dynamo.compile(program, **call, **settings,
  dryrun=True)`` with what a real compile does differently reproduced (:mod:`.dryrun`); without
  (the default), the real compile through the behaving
  stand-in (converters, builder, runtime), its engines called once on ``example`` to read the
  dtypes they hand back (:mod:`.converted`). The module is kept under ``key`` in place of the one
  before (a compiled module serves one row); the reply is the evidence;
- ``("torch_compile", key, case, device, digest, state, options, calls)``: Torch-TensorRT's
  torch.compile front-end on the user's module through the behaving stand-in
  (:mod:`.torch_compile`): the case's module built here from its zoo factory (never pickled),
  checked against the worker's ``digest`` of its parameters and buffers (``state``: the
  worker's ``state_dict``, sent where the host asked for it), compiled and called at each of
  ``calls``; kept under ``key`` like an export compile's;
- ``("call", key, args, kwargs)``: runs the kept module with PyTorch; the reply is
  ``(outputs, (args, kwargs))``, the inputs as they are after the call;
- ``("save", key, path, format, call)``: ``torch_tensorrt.save`` of the kept module, for the
  deploy stage (:func:`trtcheck.backends.deploy.save`).

Replies are ``("ok", payload)``, ``("unsupported", reason)`` or ``("error", Failure)``. The first
reply, before any request, says whether the import worked.

Every result is a prediction: at the graph level with ``graph_level`` (Torch-TensorRT's own
lowering and partitioning, each TensorRT block run by PyTorch), at the converters and engine
without (the release's converters build each network, the stand-in's builder and runtime run
it with PyTorch's numbers). TensorRT itself never runs here.
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
from trtcheck.backends.torch_tensorrt.nodes import note_executing
from trtcheck.core.frontends import EXPORT, FRONT_ENDS, TORCH_COMPILE
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
            note_executing(exc)  # its frames are live only here
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


def _export(release: Release, blob: bytes, call: dict[str, Any], settings: dict[str, Any],
            device: str, graph_level: bool, example: Any) -> tuple[Any, dict[str, Any]]:
    program = torch.export.load(io.BytesIO(blob))
    return (dryrun.compiled(release, program, call, settings, device) if graph_level else
            converted.compiled(release, program, call, settings, device, example))


# How each front-end's request compiles (one entry per registered front-end).
COMPILES: dict[str, Callable[..., tuple[Any, dict[str, Any]]]] = {
    EXPORT.name: _export, TORCH_COMPILE.name: torch_compile.compiled}
if set(COMPILES) != set(FRONT_ENDS):  # a registered front-end the host cannot run
    raise RuntimeError(f"the lowering host compiles {sorted(COMPILES)}, the registered "
                       f"front-ends are {sorted(FRONT_ENDS)}")


def _handle(request: tuple[Any, ...], release: Release, modules: dict[int, Any]) -> Any:
    kind, key, *rest = request
    if kind in COMPILES:
        modules.clear()
        modules[key], evidence = COMPILES[kind](release, *rest)
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
