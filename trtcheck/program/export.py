"""The export step: ``torch.export`` with the model's declared dynamic shapes and strictness."""

from __future__ import annotations

import torch
from torch.export import ExportedProgram

from trtcheck.zoo.cases import Built, Case


def export(case: Case, built: Built) -> ExportedProgram:
    return torch.export.export(
        built.module,
        built.args,
        built.kwargs,
        dynamic_shapes=case.spec.dynamic_shapes_for(case.variant),
        strict=case.spec.strict,
    )


class _Twice(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def warm_up() -> None:
    """Export a trivial module once: ``torch.export``'s first call in a process imports and sets
    up its machinery (seconds on a busy machine), a cost of the process that would otherwise be
    counted against whichever case a fresh worker runs first."""
    torch.export.export(_Twice(), (torch.ones(1),))
