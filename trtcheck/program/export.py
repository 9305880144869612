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
