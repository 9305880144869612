"""``emulate``: trtcheck's emulation of the complex guide and the autocast RFC, run by PyTorch.

A prediction, not TensorRT."""

from __future__ import annotations

from trtcheck import emulation
from trtcheck.backends.base import PREDICTION_NOTE, Backend, Compiled, CompileJob
from trtcheck.errors import ConfigError


class EmulateBackend(Backend):
    """The complex-to-real rewrite and the int64/float64 policies, on CPU or GPU."""

    name = "emulate"
    prediction = True
    uses_profiles = True

    def compile(self, job: CompileJob) -> Compiled:
        profile = job.profile
        if profile.int64 == "int32" and profile.require_full_compilation:
            raise ConfigError(
                f"profile {profile.name!r}: int64 = \"int32\" casts around engines, which "
                "contradicts require_full_compilation (the autocast RFC's edge case)"
            )
        lowered = emulation.lower(job.program, profile)
        return Compiled(lowered, {**lowered.evidence, "prediction": True, "note": PREDICTION_NOTE})
