"""``eager``: the control. Timed, the user's module called as the reference calls it, so that it
reads 1.00×; compared, the exported program's module, which proves the export round trip."""

from __future__ import annotations

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.core.traits import TRAITS
from trtcheck.results.rows import Evidence


class EagerBackend(Backend):
    traits = TRAITS["eager"]

    def compile(self, job: CompileJob) -> Compiled:
        return Compiled(job.program.module(), Evidence(notes=[
            "eager: the model timed against itself (the control); the exported program's module "
            "is what is compared (the export round trip), and its own cost is the export figure"]),
            timed=job.model, cost_label="export")
