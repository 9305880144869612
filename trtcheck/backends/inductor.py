"""``inductor``: ``torch.compile`` of the exported program's module."""

from __future__ import annotations

import torch

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.results.backends import TRAITS
from trtcheck.tensors import clone


class InductorBackend(Backend):
    traits = TRAITS["inductor"]

    def compile(self, job: CompileJob) -> Compiled:
        fn = torch.compile(job.program.module(), backend="inductor")
        # torch.compile is lazy: one call here so compile time lands in the compile stage.
        args, kwargs = clone((job.args, job.kwargs))
        with torch.no_grad():
            fn(*args, **kwargs)
        return Compiled(fn)
