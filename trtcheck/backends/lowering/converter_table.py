"""Generate trtcheck/emulation/converters.json: which ATen ops a Torch-TensorRT release converts.

``emulate`` runs where Torch-TensorRT's code is not available, yet needs to know which ops would
reach TensorRT (where float64 is refused unless truncate_double is on) and which stay in PyTorch.
This module imports the release's real Python code as the ``lowering`` backend does (over the
``tensorrt`` stand-in, on CPU, so it runs in a process of its own) and writes, per op:

- ``validated``: whether a converter's capability validator decides per node;
- ``accepts``: for a validated op, whether the registry accepts a probe node whose tensor
  arguments have one dtype and whose dtype arguments another (keyed ``float64>float32``, ``-``
  for none), or ``null`` when its validator cannot judge a probe (it reads what the probe does
  not have). Most validators look at a node's users, shapes or arguments, not its dtype, and
  refuse or accept every probe alike; ``_to_copy`` to float64 is one a probe finds refused;

and the ops the release decomposes before partitioning. Run::

    python -m trtcheck.backends.lowering.converter_table [--release 2.13.0] [--out PATH]

``tests/e2e/test_float64_placement.py`` checks that the committed table is what this writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import fx
from torch._subclasses.fake_tensor import FakeTensorMode

from trtcheck.backends.lowering.code import locate
from trtcheck.backends.lowering.release import load
from trtcheck.emulation.converters import TABLE, probe_key

RELEASE = "2.13.0"
INPUTS = (torch.float32, torch.float64, torch.int64)  # the dtype of every tensor argument
TARGETS = (torch.float32, torch.float64)  # the dtype of every dtype argument (``_to_copy``'s)
SHAPE = (4, 4)


def _probe_value(arg: Any, tensor: Callable[[], fx.Node], dtype: torch.dtype | None) -> Any:
    """A probe argument for one schema slot: placeholders for tensors, ``dtype`` for dtypes, the
    default or a small number for the rest."""
    kind = str(arg.real_type)
    if kind in ("Tensor", "Optional[Tensor]"):
        return tensor()
    if kind in ("List[Tensor]", "List[Optional[Tensor]]"):
        return [tensor(), tensor()]
    if kind in _DTYPE_SLOTS:
        return dtype
    if arg.has_default_value():
        return arg.default_value
    if kind in ("int", "SymInt", "number", "Scalar"):
        return 1
    if kind in ("List[int]", "List[SymInt]"):
        return [1]
    if kind == "float":
        return 1.0
    if kind == "bool":
        return False
    return None


_DTYPE_SLOTS = ("ScalarType", "Optional[ScalarType]")


def _probe(target: torch._ops.OpOverload, source: torch.dtype | None, dtype: torch.dtype | None,
           registry: Any) -> bool | None:
    """Whether the registry accepts a probe node of ``target`` whose tensors are ``source`` and
    whose dtype arguments are ``dtype``; None if its validator cannot judge the probe."""
    graph = fx.Graph()
    mode = FakeTensorMode()

    def tensor() -> fx.Node:
        node = graph.placeholder(f"p{len(graph.nodes)}")
        with mode:
            node.meta["val"] = torch.empty(SHAPE, dtype=source)
        return node

    args, kwargs = [], {}
    for arg in target._schema.arguments:
        value = _probe_value(arg, tensor, dtype)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    node = graph.call_function(target, tuple(args), kwargs)
    values = fx.node.map_arg((node.args, node.kwargs), lambda n: n.meta["val"])
    try:
        with mode:
            node.meta["val"] = target(*values[0], **values[1])
    except Exception:  # the op refuses the probe's shapes: validators see the inputs only
        pass
    try:
        return node in registry
    except Exception:  # a validator reading what the probe does not have
        return None


def _accepts(target: torch._ops.OpOverload, registry: Any) -> dict[str, bool | None]:
    """The registry's answer for each probe of ``target``, by :func:`probe_key`."""
    slots = [str(a.real_type) for a in target._schema.arguments]
    sources = INPUTS if any("Tensor" in s for s in slots) else (None,)
    dtypes = TARGETS if any(s in _DTYPE_SLOTS for s in slots) else (None,)
    return {probe_key(source, dtype): _probe(target, source, dtype, registry)
            for source in sources for dtype in dtypes}


def generate(release: str) -> dict[str, Any]:
    """The table for one release, from its code fetched into (or found in) trtcheck's cache."""
    source = locate(release)
    ttrt, info = load(str(source.path) if source.path else "")
    if info["version"] != release:
        raise SystemExit(f"asked for Torch-TensorRT {release}, found {info['version']}")
    registry_module = sys.modules["torch_tensorrt.dynamo.conversion._ConverterRegistry"]
    registry = registry_module.DYNAMO_CONVERTERS
    registry.set_compilation_settings(ttrt.dynamo._settings.CompilationSettings())
    default = registry_module.ConverterSupport.__dataclass_fields__["capability_validator"].default
    ops: dict[str, Any] = {}
    for target, converters in registry_module.DYNAMO_ATEN_CONVERTERS.items():
        if not isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
            continue  # Python operators on symbolic sizes
        validated = any(c.capability_validator is not default for c in converters)
        # A packet (every overload of aten.matmul) has no one schema to probe.
        probe = validated and isinstance(target, torch._ops.OpOverload)
        accepts = _accepts(target, registry) if probe else {}
        ops[str(target)] = {"validated": validated, "accepts": accepts}
    decomposed = sorted({str(op) for op in ttrt.dynamo.lowering.get_decompositions()
                         if isinstance(op, torch._ops.OpOverload)})
    return {
        "release": release,
        "torch": torch.__version__.split("+")[0],
        "generated_by": "python -m trtcheck.backends.lowering.converter_table",
        "converters": dict(sorted(ops.items())),
        "decomposed": decomposed,
    }


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default=RELEASE)
    parser.add_argument("--out", type=Path, default=TABLE)
    options = parser.parse_args()
    options.out.write_text(render(generate(options.release)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
