"""The lowering host: a subprocess that runs Torch-TensorRT's real Python code on PyTorch.

A child of :mod:`trtcheck.process`, started with the code directory of one release as its argument
(empty for an installed ``torch_tensorrt``). It puts the release's code on ``sys.path``, installs the
``tensorrt`` stand-in and CUDA shims (:mod:`trtcheck.backends.lowering.standin`, or with ``behaving``
the one that builds and runs engines, :mod:`trtcheck.backends.lowering.trt`; they patch torch, which
is why this is a separate process), imports ``torch_tensorrt`` and serves the requests of
:mod:`.messages`, each handled by the entry of its type in :data:`HANDLERS`:

Each compile request names the front-end it runs (:mod:`trtcheck.core.frontends`), and
:data:`COMPILES` holds how each registered front-end compiles:

- :class:`ExportCompile`: with ``graph_level`` (``--lowering-dryrun``),
  ``dynamo.compile(program, **call, **settings, dryrun=True)`` with what a real compile does
  differently reproduced (:mod:`.dryrun`); without (the default), the real compile through the
  behaving stand-in (converters, builder, runtime), its engines called once on ``example`` to
  read the dtypes they hand back (:mod:`.converted`). The module is kept under ``key`` in place
  of the one before (a compiled module serves one row); the reply is the evidence;
- :class:`TorchCompileCompile`: Torch-TensorRT's torch.compile front-end on the user's module
  through the behaving stand-in (:mod:`.torch_compile`): the case's module built here from its
  zoo factory (never pickled), checked against the worker's ``digest`` of its parameters and
  buffers (``state``: the worker's ``state_dict``, sent where the host asked for it), compiled
  and called at each of ``calls``; kept under ``key`` like an export compile's;
- :class:`Call`: runs the kept module with PyTorch; the reply is ``(outputs, (args, kwargs))``,
  the inputs as they are after the call;
- :class:`Save`: ``torch_tensorrt.save`` of the kept module, for the deploy stage
  (:func:`trtcheck.backends.deploy.save`).

Replies are :class:`Ok` (the payload), :class:`Refused` (the reason) or a
:class:`~trtcheck.process.Failure`. The first reply, before any request, says whether the
import worked.

Every result is a prediction: at the graph level with ``graph_level`` (Torch-TensorRT's own
lowering and partitioning, each TensorRT block run by PyTorch), at the converters and engine
without (the release's converters build each network, the stand-in's builder and runtime run
it with PyTorch's numbers). TensorRT itself never runs here.
"""


from __future__ import annotations

import io
import sys
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, get_args

import torch

from trtcheck.backends import deploy
from trtcheck.backends.lowering import converted, dryrun, torch_compile
from trtcheck.backends.lowering.messages import (
    Call,
    CompileRequest,
    ExportCompile,
    Ok,
    Refused,
    Save,
    TorchCompileCompile,
)
from trtcheck.backends.lowering.release import Rejected, Release, load
from trtcheck.backends.lowering.trt.network import standin_gap
from trtcheck.backends.torch_tensorrt.nodes import note_executing
from trtcheck.core.frontends import EXPORT, FRONT_ENDS, TORCH_COMPILE
from trtcheck.errors import PredictionGap
from trtcheck.process import Parent, answer, exit_now, freeze_imports

# How the host answers one type of request: (the request, the release, the kept modules by
# key) -> the payload of its Ok reply.
Handler = Callable[[Any, Release, dict[int, Any]], Any]


def serve(parent: Parent, code_dir: str, handlers: Mapping[type, Handler] | None = None,
          behaving: bool = False) -> None:
    """Load the release (over the behaving stand-in with ``behaving``), reply how that went, then
    answer each request with the entry of its type in ``handlers`` (:data:`HANDLERS`)."""
    handlers = HANDLERS if handlers is None else handlers
    try:
        ttrt, info = load(code_dir, behaving)
        release = Release(ttrt)
    except BaseException as exc:  # reported to the parent, which decides
        parent.fail(exc)
        return
    freeze_imports()
    parent.send(Ok(info))
    modules: dict[int, Any] = {}

    def replying(handle: Handler) -> Callable[[Any], None]:
        def reply(request: Any) -> None:
            try:
                parent.send(Ok(handle(request, release, modules)))
            except Rejected as exc:
                parent.send(Refused(str(exc)))
            except Exception as exc:
                note_executing(exc)  # its frames are live only here
                parent.fail(_as_gap(exc) if behaving else exc)
        return reply

    unknown = answer(parent, {kind: replying(handle) for kind, handle in handlers.items()})
    if unknown is not None:  # trtcheck's own mistake: said, and the host ends
        parent.fail(TypeError(f"the lowering host takes no {type(unknown).__name__} request"))


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


def _export(release: Release, r: ExportCompile) -> tuple[Any, dict[str, Any]]:
    program = torch.export.load(io.BytesIO(r.program))
    return (dryrun.compiled(release, program, r.call, r.settings, r.device) if r.graph_level else
            converted.compiled(release, program, r.call, r.settings, r.device, r.example))


def _torch_compile(release: Release, r: TorchCompileCompile) -> tuple[Any, dict[str, Any]]:
    return torch_compile.compiled(release, r.case, r.device, r.digest, r.state, r.options, r.calls)


# How each front-end's request compiles (one entry per registered front-end), and the request
# types that name them (:data:`.messages.CompileRequest`).
COMPILES: dict[str, Callable[[Release, Any], tuple[Any, dict[str, Any]]]] = {
    EXPORT.name: _export, TORCH_COMPILE.name: _torch_compile}
REQUESTS = get_args(CompileRequest)
if set(COMPILES) != set(FRONT_ENDS) or {r.front_end.name for r in REQUESTS} != set(FRONT_ENDS):
    raise RuntimeError(f"the lowering host compiles {sorted(COMPILES)} from requests of "
                       f"{sorted(r.front_end.name for r in REQUESTS)}, the registered "
                       f"front-ends are {sorted(FRONT_ENDS)}")


def compile_request(request: CompileRequest, release: Release, modules: dict[int, Any]) -> Any:
    """Compile, keeping the module under the request's key in place of the one before; the
    evidence."""
    modules.clear()
    modules[request.key], evidence = COMPILES[request.front_end.name](release, request)
    return evidence


def call(request: Call, release: Release, modules: dict[int, Any]) -> Any:
    """The kept module's outputs, and the inputs as they are after the call."""
    if request.key not in modules:
        raise LookupError(f"compiled module {request.key} was replaced by a later compile")
    with torch.no_grad():
        outputs = modules[request.key](*request.args, **request.kwargs)
    return outputs, (request.args, request.kwargs)


def save(request: Save, release: Release, modules: dict[int, Any]) -> Any:
    """The kept module saved for the deploy stage."""
    return deploy.save(release.ttrt, modules[request.key], request.path, request.format,
                       request.call)


# What the host answers: each compile request, a call of the module it keeps, and its save.
HANDLERS: dict[type, Handler] = {**dict.fromkeys(REQUESTS, compile_request), Call: call,
                                 Save: save}


def main(argv: list[str], handlers: Mapping[type, Handler] | None = None,
         behaving: bool = False) -> NoReturn:
    parent = Parent(argv)
    serve(parent, parent.args[0] if parent.args else "", handlers,
          behaving or "behaving" in parent.args[1:])
    exit_now()


if __name__ == "__main__":
    main(sys.argv[1:])
