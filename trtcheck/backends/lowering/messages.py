"""What the lowering host's parent (:mod:`.client`) and the host (:mod:`.host`) say to each other:
requests and replies, one frozen dataclass for each kind, answered in
:func:`trtcheck.process.answer`.

Each compile request names the front-end it runs (``front_end``); the host's ``COMPILES``
holds one for each registered front-end. A compile keeps its module under ``key`` in place of
the one before (a compiled module serves one row), and :class:`Call` runs it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from trtcheck.core.frontends import EXPORT, TORCH_COMPILE, FrontEnd
from trtcheck.zoo.cases import Case

# The torch_compile compile's reply asking for the worker's state_dict: its build of the module
# differs from it.
STATE_DIFFERS = {"state": "differs"}

# A case as the worker names it to the host: (zoo root, zoo file, model name, variant).
CaseRef = tuple[str, str, str, str]


def case_ref(case: Case) -> CaseRef:
    """How the host finds the case's factory: its zoo file, under the root it was imported from."""
    return str(case.file.root), str(case.file.path), case.spec.name, case.variant


@dataclass(frozen=True)
class ExportCompile:
    """The exported ``program`` (``torch.export.save``'s bytes) compiled: with ``graph_level``
    (``--lowering-dryrun``) ``dynamo.compile(..., dryrun=True)`` made to behave like a real
    compile, else the real compile through the behaving stand-in, its engines called once on
    ``example`` (args, kwargs). The reply is the evidence."""

    front_end: ClassVar[FrontEnd] = EXPORT
    key: int
    program: bytes
    call: dict[str, Any]
    settings: dict[str, Any]
    device: str
    graph_level: bool
    example: Any


@dataclass(frozen=True)
class TorchCompileCompile:
    """The user's module, built in the host from its zoo factory (``case``; never pickled) and
    checked against the worker's ``digest`` of its parameters and buffers (``state``: the
    worker's ``state_dict``, sent where the host asked for it with :data:`STATE_DIFFERS`),
    compiled by the torch.compile front-end with ``options`` and called at each of ``calls``.
    The reply is the evidence."""

    front_end: ClassVar[FrontEnd] = TORCH_COMPILE
    key: int
    case: CaseRef
    device: str
    digest: str
    state: bytes | None
    options: dict[str, Any]
    calls: list[Any]


CompileRequest = ExportCompile | TorchCompileCompile


@dataclass(frozen=True)
class Call:
    """The module kept under ``key`` called with PyTorch; the reply is ``(outputs, (args,
    kwargs))``, the inputs as they are after the call."""

    key: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class Save:
    """The module kept under ``key`` saved by ``torch_tensorrt.save`` to ``path`` in ``format``,
    with the compile's ``call`` (its inputs), for the deploy stage
    (:func:`trtcheck.backends.deploy.save`); the reply says how that went."""

    key: int
    path: str
    format: str
    call: dict[str, Any]


@dataclass(frozen=True)
class Ok:
    """A request's answer; the first, before any request, says what the import found."""

    payload: Any


@dataclass(frozen=True)
class Refused:
    """The release refused the request (:class:`trtcheck.errors.Unsupported` in the parent)."""

    reason: str
