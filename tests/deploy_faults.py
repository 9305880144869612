"""The lowering host over the behaving stand-in, with a fault planted in the real release's exporter
for tests: every exported program ``torch_tensorrt.save`` writes loses the ``view_as_complex``
that unpacks a complex output (the saved module drops the complex output unpacking), while the
compiled module keeps it."""

from __future__ import annotations

import sys
from typing import Any

import torch
from torch.export.graph_signature import TensorArgument

from trtcheck.backends.lowering import host
from trtcheck.backends.lowering.release import Release

_PLANTED: list[bool] = []


def _without_unpacking(normalize: Any) -> Any:
    def planted(program: torch.export.ExportedProgram) -> None:
        normalize(program)
        output = program.graph.output_node()
        packed: dict[str, str] = {}

        def unpacked(arg: torch.fx.Node) -> torch.fx.Node:
            if arg.target is torch.ops.aten.view_as_complex.default:
                packed[arg.name] = arg.args[0].name  # type: ignore[union-attr]
                return arg.args[0]  # type: ignore[return-value]
            return arg

        output.args = (torch.fx.node.map_arg(output.args[0], unpacked),)
        for spec in program.graph_signature.output_specs:
            if isinstance(spec.arg, TensorArgument) and spec.arg.name in packed:
                spec.arg = TensorArgument(name=packed[spec.arg.name])
        program.graph.eliminate_dead_code()
        program.graph_module.recompile()
    return planted


def planted(handle: Any) -> Any:
    """``handle``, the fault planted before the host's first request."""
    def first_planted(request: Any, release: Release, modules: dict[int, Any]) -> Any:
        if not _PLANTED:
            compile_module = sys.modules["torch_tensorrt._compile"]
            name = "_normalize_engine_constants_to_python"
            setattr(compile_module, name, _without_unpacking(getattr(compile_module, name)))
            _PLANTED.append(True)
        return handle(request, release, modules)
    return first_planted


if __name__ == "__main__":
    host.main(sys.argv[1:], {kind: planted(h) for kind, h in host.HANDLERS.items()}, behaving=True)
