"""``lowering``: a Torch-TensorRT release's own compile, from its real Python code, over a stand-in.

The code of the user's Torch-TensorRT release (:mod:`trtcheck.backends.lowering.code`) runs in a
host subprocess (:mod:`trtcheck.backends.lowering.host`). By default it runs the release's real
``dynamo.compile`` over the behaving TensorRT stand-in (:mod:`trtcheck.backends.lowering.trt`):
decompositions, complex rewrite, partitioner, then the converters build each network and the
stand-in's builder and runtime run it with PyTorch, a prediction at the converters and engine.
With ``dryrun`` (``--lowering-dryrun``) it stops at ``dynamo.compile(dryrun=True)`` and each
TensorRT block runs in PyTorch: a prediction at the graph level. Neither sees TensorRT's kernel
numerics.
Settings go through the same version-aware code as the ``tensorrt`` backend.
"""

from __future__ import annotations

import copy
import dataclasses
import io
from collections.abc import Callable
from functools import cached_property
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.utils import _pytree as pytree

from trtcheck.backends.base import Backend, Compiled, CompileJob, Deployable
from trtcheck.backends.deploy import STANDIN_ENGINES, Loader, loader_for
from trtcheck.backends.lowering.client import LoweringHost
from trtcheck.backends.lowering.code import CodeSource, CodeUnavailable, locate
from trtcheck.backends.lowering.messages import (
    STATE_DIFFERS,
    ExportCompile,
    Save,
    TorchCompileCompile,
    case_ref,
)
from trtcheck.backends.torch_tensorrt.compat import (
    compiled_evidence,
    complex_rewrite,
    drop_unaccepted,
    parse_version,
    profile_not_applicable,
    release_call,
    torch_compile_options,
)
from trtcheck.backends.torch_tensorrt.inspection import program_dtypes
from trtcheck.backends.torch_tensorrt.torch_compile import evidence_fields, shape_calls
from trtcheck.core.profiles import Profile
from trtcheck.core.traits import TRAITS
from trtcheck.errors import InternalError, last_line
from trtcheck.results.rows import Evidence
from trtcheck.tensors import state_digest


class LoweringBackend(Backend):
    """Run the user's Torch-TensorRT release's own compile: by default its converters build each
    network over the behaving TensorRT stand-in, which runs it with PyTorch; with ``dryrun``
    (``--lowering-dryrun``), its lowering and partitioning only, each TensorRT block run by
    PyTorch."""

    traits = TRAITS["lowering"]

    def __init__(self, code: str | None = None, dryrun: bool = False) -> None:
        self.code = code  # a wheel, an unpacked release, a version; None: installed, else fetched
        self.dryrun = dryrun  # graph level only; else the real compile through the stand-in
        self._host: LoweringHost | Exception | None = None
        self._loader: Loader | None = None

    @cached_property
    def _source(self) -> tuple[CodeSource | None, str | None]:
        try:
            source = locate(self.code)
        except CodeUnavailable as exc:
            return None, str(exc)
        missing = source.missing()
        if missing:
            return None, (f"Torch-TensorRT {source.version}'s code imports {', '.join(missing)}, not "
                          f"installed here (pip install {' '.join(missing)})")
        return source, None

    @property
    def version(self) -> str | None:
        """The release whose code this backend runs, once found."""
        source, _ = self._source
        return source.version if source else None

    @property
    def fetched(self) -> str | None:
        """What finding the code fetched from the package index, and where it put it; None when
        nothing was fetched."""
        source, _ = self._source
        if source is None or source.origin != "fetched":
            return None
        return f"fetched Torch-TensorRT {source.version}'s Python code into {source.path}"

    def not_applicable(self, profile: Profile) -> str | None:
        reason = profile.front_end.not_applicable(self.name, graph_level=self.dryrun)
        if reason:
            return reason
        source, _ = self._source
        return profile_not_applicable(parse_version(source.version), profile) if source else None

    def unavailable_reason(self, device: str) -> str | None:
        _, reason = self._source
        if reason is None and torch.device(device).type == "cuda" and not torch.cuda.is_available():
            reason = f"this torch cannot use {device}"
        return reason

    def compile(self, job: CompileJob) -> Compiled:
        source, reason = self._source
        if source is None:
            raise RuntimeError(reason)
        host = self.host(source)
        # How the model reaches the host: its exported program, or the case to build it from.
        compile = self._compile_module if job.profile.front_end.compiles_module else \
            self._compile_program
        return compile(source, host, job)

    def _compile_program(self, source: CodeSource, host: LoweringHost, job: CompileJob) -> Compiled:
        """The export front-end: the exported program, saved, compiled in the host."""
        installed = str(host.info["version"])
        version, torch_version = parse_version(installed), parse_version(torch.__version__)
        call, settings, notes = release_call(version, installed, job)
        settings, dropped = drop_unaccepted(settings, host.info["parameters"], version)
        notes = [*([source.note] if source.note else []), *notes, *dropped]

        blob, structure = sendable(job.program)
        complex_path = (complex_rewrite(version, torch_version,
                                        bool(settings.get("use_complex_decomposition", True)))
                        if any(d.is_complex for d in program_dtypes(job.program))
                        else "no complex tensors")

        def evidence(found: dict[str, Any]) -> Evidence:
            return dataclasses.replace(compiled_evidence(
                version, installed, job, call, settings, engines=found.get("engines", 0),
                fallbacks=found.get("fallbacks", []), boundaries=found.get("boundaries", []),
                notes=notes + found["notes"], passed={"dryrun": self.dryrun},
                details={"complex_path": complex_path, "level": "graph (dryrun)",
                         **found.get("details", {})}), remark=found.get("remark", ""))

        deployable = self._deployable(
            source, lambda path, fmt: host.request(Save(module.key, path, fmt, call)),
            structure)
        if job.deploy and isinstance(deployable, Deployable):
            deployable.loader().prestart()  # its imports beside the compile
        try:
            module, found = host.compile(ExportCompile, blob, call, settings, job.device,
                                         self.dryrun, (job.args, job.kwargs), structure=structure)
        except Exception as exc:  # with the evidence the host gathered before it, where it has any
            if isinstance(getattr(exc, "evidence", None), dict):
                exc.evidence = evidence(exc.evidence)  # type: ignore[attr-defined]
            raise
        # Calls run in the host: timed after eager rather than beside it (see Compiled).
        return Compiled(module, evidence=evidence(found), deploy=deployable)

    def _compile_module(self, source: CodeSource, host: LoweringHost, job: CompileJob) -> Compiled:
        """The torch_compile front-end, in the host (:mod:`.torch_compile`): the host builds the
        case's module from its factory and checks it against this one's digest, and gets this
        one's ``state_dict`` where the two differ; the module itself is never pickled."""
        installed = str(host.info["version"])
        version = parse_version(installed)
        settings, notes = torch_compile_options(version, installed, job, host.info["options"])
        if job.case is None:
            raise InternalError("a torch_compile compile in the lowering host needs its case")
        notes = [*([source.note] if source.note else []), *notes]

        def evidence(found: dict[str, Any]) -> Evidence:
            return compiled_evidence(
                version, installed, job, {}, settings, notes=notes + found["notes"],
                details=found.get("details", {}),
                **(evidence_fields(found) if "path" in found else
                   {"engines": 0, "fallbacks": [], "boundaries": []}))

        request = (case_ref(job.case), job.device, state_digest(job.model))
        try:
            module, found = host.compile(TorchCompileCompile, *request, None, settings,
                                         shape_calls(job))
            if found == STATE_DIFFERS:
                module, found = host.compile(TorchCompileCompile, *request,
                                             _state_bytes(job.model), settings, shape_calls(job))
        except Exception as exc:  # with the evidence the host gathered before it, where it has any
            if isinstance(getattr(exc, "evidence", None), dict):
                exc.evidence = evidence(exc.evidence)  # type: ignore[attr-defined]
            raise
        # Calls run in the host: timed after eager rather than beside it (see Compiled).
        return Compiled(module, evidence=evidence(found), deploy=job.profile.front_end.unsaved)

    def _deployable(self, source: CodeSource, save: Callable[[str, str], dict[str, Any]],
                    structure: pytree.TreeSpec | None) -> Deployable | str:
        """The deploy stage's round trip, through the stand-in's serialized engines: saved in the
        host, loaded in this release's loader over the same stand-in."""
        if self.dryrun:
            return ("not applicable: --lowering-dryrun builds no engines, so there is nothing "
                    "torch_tensorrt.save would save")
        self._loader = loader = loader_for(source, behaving=True)
        return Deployable(save, lambda: loader, level=STANDIN_ENGINES, structure=structure)

    def host(self, source: CodeSource) -> LoweringHost:
        """This backend's host, started on first use (and again if it died); a host that failed
        to start is remembered, so that each later case does not pay the import again."""
        if isinstance(self._host, Exception):
            raise RuntimeError(f"the lowering host for Torch-TensorRT {source.version} failed to "
                               f"start: {last_line(self._host)}") from self._host
        if self._host is None or not self._host.alive():
            if self._host is not None:
                self._host.close()
            try:
                self._host = LoweringHost(source, behaving=not self.dryrun)
            except Exception as exc:
                self._host = exc
                raise
        return self._host

    def deactivate(self) -> None:
        """Stop the host (the kernel also stops it if trtcheck dies, on Linux)."""
        if isinstance(self._host, LoweringHost):
            self._host.close()
        self._host = None
        if self._loader is not None:
            self._loader.close()
        self._loader = None


def _state_bytes(module: torch.nn.Module) -> bytes:
    blob = io.BytesIO()
    torch.save(module.state_dict(), blob)
    return blob.getvalue()


def sendable(program: ExportedProgram) -> tuple[bytes, pytree.TreeSpec | None]:
    """``program`` saved for the host, and the output structure the parent rebuilds, if any.

    ``torch.export.save`` refuses an output structure holding a type with no serialization name
    (``torch.return_types.topk`` and the other structseqs, a namedtuple): such a program goes with
    its outputs as a flat tuple, the same graph, and its structure stays here (None: unchanged)."""
    blob = io.BytesIO()
    try:
        torch.export.save(program, blob)
        return blob.getvalue(), None
    except NotImplementedError:
        structure = program.call_spec.out_spec
        if structure is None:
            raise
    flat = pytree.tree_structure(tuple(range(structure.num_leaves)))
    calls = [dataclasses.replace(entry, signature=dataclasses.replace(entry.signature, out_spec=flat))
             if entry.fqn == "" and entry.signature is not None else entry
             for entry in program.module_call_graph]
    # A copy of the graph: the constructor takes the graph it is given as its own, and edits it.
    flat_program = ExportedProgram(
        root=program.graph_module, graph=copy.deepcopy(program.graph),
        graph_signature=program.graph_signature, state_dict=program.state_dict,
        range_constraints=program.range_constraints, module_call_graph=calls,
        example_inputs=program.example_inputs, constants=program.constants,
        verifiers=program.verifiers)
    blob = io.BytesIO()
    torch.export.save(flat_program, blob)
    return blob.getvalue(), structure
