"""The cases' base class: compile a module with the release's real ``dynamo.compile`` (every op to
TensorRT) and compare the compiled module's outputs with eager's, dtypes included."""

from __future__ import annotations

import unittest
from typing import Any

import torch
import torch_tensorrt


class ConverterCase(unittest.TestCase):
    def check(self, module: torch.nn.Module, inputs: list[torch.Tensor],
              dynamic: dict[int, tuple[int, int, int]] | None = None,
              at: list[list[torch.Tensor]] | None = None) -> None:
        """``dynamic``: the inputs whose dimension 0 is one dynamic batch -> its (min, opt, max);
        ``at``: other inputs to call the compiled module with (default: ``inputs``)."""
        dynamic = dynamic or {}
        shapes = None
        if dynamic:
            lo, _, hi = next(iter(dynamic.values()))
            batch = torch.export.Dim("batch", min=lo, max=hi)
            shapes = tuple({0: batch} if i in dynamic else None for i in range(len(inputs)))
        program = torch.export.export(module, tuple(inputs), dynamic_shapes=shapes)
        specs: list[Any] = []
        for i, x in enumerate(inputs):
            if i in dynamic:
                rest = tuple(x.shape[1:])
                lo, opt, hi = dynamic[i]
                x = torch_tensorrt.Input(min_shape=(lo, *rest), opt_shape=(opt, *rest), max_shape=(hi, *rest),
                                         dtype=x.dtype)
            specs.append(x)
        compiled = torch_tensorrt.dynamo.compile(program, arg_inputs=specs, min_block_size=1,
                                                 require_full_compilation=True)
        for call in at or [inputs]:
            with torch.no_grad():
                torch.testing.assert_close(compiled(*call), module(*call), rtol=1e-4, atol=1e-4)
