"""``emulate``: trtcheck's emulation of the complex guide and the autocast RFC, run by PyTorch.

A prediction, not TensorRT."""

from __future__ import annotations

from trtcheck import emulation
from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.core.traits import TRAITS
from trtcheck.emulation import converters
from trtcheck.emulation.dtype_policy import fp64_problem
from trtcheck.errors import ConfigError, Unsupported
from trtcheck.results.rows import Evidence


class EmulateBackend(Backend):
    """The complex-to-real rewrite and the int64/float64 policies, on CPU or GPU."""

    traits = TRAITS["emulate"]

    def compile(self, job: CompileJob) -> Compiled:
        profile = job.profile
        if problem := profile.contradiction():
            raise ConfigError(f"profile {profile.name!r}: {problem}")
        lowered = emulation.lower(job.program, profile)
        # TensorRT's type system, which the rewrite itself does not model: no FP64 in an engine.
        table = converters.table()
        if not profile.truncate_double and (
                problem := fp64_problem(lowered.graph_module.graph, table)):
            raise Unsupported(problem)
        found = lowered.evidence
        return Compiled(lowered, Evidence(
            path=found["path"], fallbacks=found["fallbacks"], boundaries=found["casts"],
            details={"complex_subgraphs": found["complex_subgraphs"], "rewritten": found["rewritten"],
                     "converter_table": table.source},
        ))
