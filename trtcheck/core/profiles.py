"""Settings profiles and tolerances: the values a run is judged by, as plain data (no torch).

The results layer records them and :mod:`trtcheck.config` resolves which ones a run uses, so they
sit below both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from trtcheck.core.frontends import FRONT_ENDS, FrontEnd


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


# Keyed by the effective floating dtype (complex64 is judged as float32, complex128 as float64).
# float32: Torch-TensorRT's own tests compare float32 outputs at rtol = atol = 5e-3.
# float64: tight enough that a float64 model computed in float32 (unit roundoff 6e-8) fails.
DEFAULT_TOLERANCES: Mapping[str, Tolerance] = {
    "float32": Tolerance(rtol=5e-3, atol=5e-3),
    "float64": Tolerance(rtol=1e-9, atol=1e-9),
    "float16": Tolerance(rtol=1e-2, atol=1e-2),
    "bfloat16": Tolerance(rtol=1.6e-2, atol=1e-2),
}

INT64_POLICIES = ("native", "int32")
COVERAGE_MODES = ("broad", "seed")
# The formats ``torch_tensorrt.save`` writes that the deploy stage saves and loads again; a
# profile's ``deploy`` names those its rows go through, exported_program by default.
DEPLOY_FORMATS = ("exported_program", "torchscript", "aot_inductor")


@dataclass(frozen=True)
class Profile:
    """A named set of Torch-TensorRT compile settings plus trtcheck's emulation settings."""

    name: str
    truncate_double: bool = False
    int64: str = "native"
    coverage: str = "broad"
    require_full_compilation: bool = False
    min_block_size: int = 1
    settings: Mapping[str, Any] = field(default_factory=dict)
    frontend: str = "export"  # a registered front-end's name (:mod:`trtcheck.core.frontends`)
    deploy: tuple[str, ...] = ("exported_program",)

    @property
    def front_end(self) -> FrontEnd:
        """How Torch-TensorRT compiles under this profile."""
        return FRONT_ENDS[self.frontend]

    def to_dict(self) -> dict[str, Any]:
        """The profile's fields, and its description as text (what older records are read by)."""
        d = {f.name: (dict(v) if isinstance(v := getattr(self, f.name), Mapping) else
                      list(v) if isinstance(v, tuple) else v)
             for f in fields(self)}
        return {**d, "description": self.describe()}

    def contradiction(self) -> str | None:
        """Why these settings cannot hold together, or None: the one rule both the config's
        check and the emulate backend apply."""
        if self.int64 == "int32" and self.require_full_compilation:
            return ("int64 = \"int32\" casts around engines, which contradicts "
                    "require_full_compilation = true (the autocast RFC's edge case: the casts "
                    "cannot run inside a fully compiled engine)")
        return None

    def describe(self) -> str:
        """What this profile makes ``emulate`` predict, and which releases behave that way."""
        parts = [
            "int64 truncated to int32 at engine boundaries and cast back (the autocast RFC's "
            "casting: the TorchScript frontend, and Torch-TensorRT before 2.3 with "
            "truncate_long_and_double)" if self.int64 == "int32" else
            "int64 native (TensorRT 10; Torch-TensorRT's dynamo path from 2.3)",
            "float64 and complex128 computed in float32 (truncate_double); complex128 outputs, "
            "and float64 outputs of engines with no float64 input, come back narrowed"
            if self.truncate_double else
            "float64 and complex128 unsupported: TensorRT has no FP64 (truncate_double fixes it)",
            "complex rewrite of the guide's supported patterns only; anything else unsupported "
            "(Torch-TensorRT 2.8 to 2.11 rewrote little more than mul)" if self.coverage == "seed"
            else "broad complex rewrite, other complex ops run in PyTorch (Torch-TensorRT 2.12+)",
        ]
        if self.require_full_compilation:
            parts.append("require_full_compilation: a PyTorch fallback is unsupported")
        return "; ".join(filter(None, [*parts, self.front_end.describe]))


BUILTIN_PROFILES: Mapping[str, Profile] = {
    "default": Profile("default"),
    "truncate_double": Profile("truncate_double", truncate_double=True),
    "int64_as_int32": Profile("int64_as_int32", int64="int32"),
    "seed": Profile("seed", coverage="seed"),
    # default's settings on the just-in-time front-end
    "torch_compile": Profile("torch_compile", frontend="torch_compile"),
}
