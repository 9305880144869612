"""``eager``: the exported program's module run by PyTorch — proves the export round trip."""

from __future__ import annotations

from trtcheck.backends.base import Backend, Compiled, CompileJob


class EagerBackend(Backend):
    name = "eager"

    def compile(self, job: CompileJob) -> Compiled:
        return Compiled(job.program.module())
