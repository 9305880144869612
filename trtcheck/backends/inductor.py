"""``inductor``: ``torch.compile`` on the user's module, the way its users compile it."""

from __future__ import annotations

import torch

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.core.traits import TRAITS
from trtcheck.results.rows import Evidence
from trtcheck.tensors import clone

HOW = "torch.compile on the module (backend inductor, default mode)"


class InductorBackend(Backend):
    traits = TRAITS["inductor"]

    def compile(self, job: CompileJob) -> Compiled:
        fn = torch.compile(job.model, backend="inductor")
        # torch.compile is lazy: one call here so compile time lands in the compile stage.
        args, kwargs = clone((job.args, job.kwargs))
        with torch.no_grad():
            fn(*args, **kwargs)
        return Compiled(fn, Evidence(notes=[f"inductor: {HOW}"], details={"compiled_as": HOW}))
