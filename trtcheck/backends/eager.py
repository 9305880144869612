"""``eager``: the exported program's module run by PyTorch — proves the export round trip."""

from __future__ import annotations

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.results.backends import TRAITS


class EagerBackend(Backend):
    traits = TRAITS["eager"]

    def compile(self, job: CompileJob) -> Compiled:
        return Compiled(job.program.module())
