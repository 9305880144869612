"""Torch-TensorRT's front-ends, registered once: how a model reaches its compiler, as plain data.

A profile names its front-end by its registered name (its ``frontend`` key); backends, reduce and
the reports ask the :class:`FrontEnd` object what it means instead of testing which one it is.
The torch part of each (what its compile records, how it runs on each backend) lives with the
backends: :mod:`trtcheck.backends.torch_tensorrt.torch_compile` for ``torch_compile``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FrontEnd:
    """One way Torch-TensorRT compiles a model.

    ``name``: the registered name (profiles, rows' evidence, reports, docs); ``ir``:
    Torch-TensorRT's own ``ir=`` for it; ``entry``: its entry point as a report names it;
    ``compiles_module``: it compiles the user's module, not the exported program (a row runs
    where the case does not export); ``backends``: the backends that run it; ``graph_level``:
    lowering's graph level (``--lowering-dryrun``) runs it; ``option``: what one of its
    settings is; ``describe``: what a profile on it says (empty for the default); ``unsaved``:
    why ``torch_tensorrt.save`` cannot save what it compiles, so the deploy stage does not
    apply (empty where it can)."""

    name: str
    ir: str
    entry: str
    compiles_module: bool
    backends: tuple[str, ...]
    graph_level: bool
    option: str
    describe: str = ""
    unsaved: str = ""

    def not_applicable(self, backend: str, *, graph_level: bool = False) -> str | None:
        """Why ``backend`` (at the graph level) does not run this front-end, or None."""
        if backend not in self.backends:
            return (f"not applicable: {backend} does not run Torch-TensorRT's {self.name} "
                    f"front-end, which {' and '.join(self.backends)} run")
        if graph_level and not self.graph_level:
            return (f"not applicable: the {self.name} front-end runs at the converters through "
                    "the TensorRT stand-in, which --lowering-dryrun turns off")
        return None

    def compile_call(self, settings: Mapping[str, Any], *, dryrun: bool = False) -> str:
        """The call with every setting spelled out, as a reduction's ``repro.py`` makes it."""
        if self.compiles_module:
            options = "".join(f"\n        {k!r}: {v!r}," for k, v in settings.items())
            return ('torch.compile(\n    module,\n    backend="tensorrt",\n    options={'
                    f"{options}\n    }},\n)")
        lines = ["torch_tensorrt.dynamo.compile(", "    program,", "    arg_inputs=inputs,"]
        lines += [f"    {k}={v!r}," for k, v in settings.items()]
        if dryrun:
            lines.append("    dryrun=True,  # trtcheck's graph level only; repro.py compiles for real")
        return "\n".join([*lines, ")"])

    @property
    def repro_lines(self) -> str:
        """The compile in ``repro.py``'s ``main``, indented there."""
        if self.compiles_module:
            return '        compiled = torch.compile(module, backend="tensorrt", options=SETTINGS)'
        return ("        program = torch.export.export(module, inputs)\n"
                "        compiled = torch_tensorrt.dynamo.compile(program, arg_inputs=list(inputs), "
                "**SETTINGS)")

    def cannot_reduce(self, details: Mapping[str, Any]) -> str | None:
        """Why a row of this front-end cannot be reduced (its evidence's ``details``), or None:
        a reduction cuts the one exported graph, which is not what a graph break hands over."""
        breaks = details.get("graph_breaks") if self.compiles_module else None
        if not breaks:
            return None
        return (f"Dynamo handed Torch-TensorRT the model in pieces, split at {len(breaks)} graph "
                f"break{'s' * (len(breaks) != 1)} ({breaks[0]}); the reduction cuts the one "
                "exported graph, which is not a graph Torch-TensorRT was handed")


EXPORT = FrontEnd(
    "export", ir="dynamo", entry="`dynamo.compile`", compiles_module=False,
    backends=("tensorrt", "lowering", "emulate"), graph_level=True,
    option="`torch_tensorrt.dynamo.compile` keyword")
TORCH_COMPILE = FrontEnd(
    "torch_compile", ir="torch_compile", entry='torch.compile front-end (`backend="tensorrt"`)',
    compiles_module=True, backends=("tensorrt", "lowering"), graph_level=False,
    option='`torch.compile(..., backend="tensorrt")` option',
    describe='Torch-TensorRT\'s torch.compile front-end: torch.compile(model, backend="tensorrt") '
             "of the user's module, graph by graph as Dynamo hands them over (emulate predicts "
             "the export front-end only)",
    unsaved="not applicable: Torch-TensorRT's torch.compile front-end keeps no artifact: "
            "torch_tensorrt.save takes an ExportedProgram, a GraphModule or a ScriptModule, and "
            "refuses the nn.Module torch.compile returns; a model is deployed from the export "
            'front-end (ir="dynamo")')

# Ahead of time, ``dynamo.compile`` of the exported program; just in time,
# ``torch.compile(model, backend="tensorrt")`` of the user's module.
FRONT_ENDS: Mapping[str, FrontEnd] = {f.name: f for f in (EXPORT, TORCH_COMPILE)}
FRONTENDS = tuple(FRONT_ENDS)  # the names a profile's ``frontend`` takes
