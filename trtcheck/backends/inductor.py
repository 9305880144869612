"""``inductor``: ``torch.compile`` on the user's module, the way its users compile it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import torch

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.core.traits import TRAITS
from trtcheck.results.rows import Evidence
from trtcheck.tensors import clone

HOW = "torch.compile on the module (backend inductor, default mode)"


class InductorBackend(Backend):
    traits = TRAITS["inductor"]

    def compile(self, job: CompileJob) -> Compiled:
        from torch._inductor.codecache import PyCodeCache  # inductor's own, loaded when used

        fn = torch.compile(job.model, backend="inductor")
        loaded = len(PyCodeCache.modules)
        # torch.compile is lazy: one call here so compile time lands in the compile stage.
        args, kwargs = clone((job.args, job.kwargs))
        with torch.no_grad():
            fn(*args, **kwargs)
        details = {"compiled_as": HOW}
        code = code_hash(PyCodeCache.modules[loaded:])
        if code:
            details["code_hash"] = code
        return Compiled(fn, Evidence(notes=[f"inductor: {HOW}"], details=details))


def code_hash(modules: Sequence[ModuleType]) -> str | None:
    """A short hash of the output code inductor generated (or took from its cache) for one
    compile: two processes with the same hash ran the same kernels. None when none was seen."""
    sources = []
    for module in modules:
        try:
            sources.append(Path(module.__file__ or "").read_bytes())
        except OSError:
            continue
    if not sources:
        return None
    return hashlib.sha256(b"\0".join(sorted(sources))).hexdigest()[:16]
