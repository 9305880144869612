"""The tolerance policy: the precision each output is judged at, the tolerance for it (the
run's per dtype, the model's own where it declares one), and what truncate_double costs."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from trtcheck.core.profiles import Tolerance
from trtcheck.measure.compare import Comparison
from trtcheck.zoo.cases import Case


def effective_dtype(dtype: torch.dtype, truncate_double: bool) -> str:
    """The floating precision an output is judged at."""
    name = {torch.complex64: "float32", torch.complex128: "float64", torch.float64: "float64",
            torch.float16: "float16", torch.bfloat16: "bfloat16"}.get(dtype, "float32")
    return "float32" if truncate_double and name == "float64" else name


def tolerance_for(case: Case, tolerances: Mapping[str, Tolerance],
                  truncate_double: bool) -> Callable[[torch.dtype], Tolerance]:
    def pick(dtype: torch.dtype) -> Tolerance:
        base = tolerances[effective_dtype(dtype, truncate_double)]
        return Tolerance(rtol=base.rtol if case.spec.rtol is None else case.spec.rtol,
                         atol=base.atol if case.spec.atol is None else case.spec.atol)
    return pick


def precision_lost(result: Comparison) -> str:
    """Under truncate_double, how far float64 outputs moved when computed in float32, and which
    came back in the narrower dtype (what truncate_double asks for)."""
    wide = [leaf for leaf in result.leaves if leaf.eager_dtype in ("torch.float64", "torch.complex128")]
    errors = [leaf.max_rel for leaf in wide if leaf.max_rel is not None]
    if not errors:
        return ""
    narrowed = [f"out{leaf.path} as {leaf.dtype.removeprefix('torch.')}" for leaf in wide
                if leaf.dtype != leaf.eager_dtype]
    returned = f"; returned {', '.join(narrowed)}" if narrowed else ""
    return (f"truncate_double: float64 outputs judged at float32 tolerance; precision lost "
            f"relative to float64: max rel error {max(errors):.2g}{returned}")
