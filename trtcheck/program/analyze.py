"""What Torch-TensorRT's documented rewrites will meet in an exported program, predicted without compiling.

One pass over the graph: complex subgraphs and ops (and whether seed and broad coverage
handle each), int64 and float64 values, example int64 inputs int32 cannot hold, and the
complex guide's documented limitations that apply, each citing the guide's text.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram

from trtcheck.emulation import limitations as lim
from trtcheck.emulation import prepare
from trtcheck.emulation.detect import Scan, is_conv_or_batch_norm, scan, seed_problem, seed_problems
from trtcheck.emulation.dtype_policy import PATHS, census, path_flags
from trtcheck.emulation.graph import tensor_leaves
from trtcheck.emulation.rewrite import rule_for
from trtcheck.emulation.runtime import flatten_inputs, user_input_names
from trtcheck.tensors import INT32_MAX, INT32_MIN, op_name


def analyze_program(program: ExportedProgram, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> dict[str, Any]:
    """A JSON-able account of the program's complex, int64 and float64 paths."""
    program = prepare(program)
    found = scan(program)
    problems = {n: seed_problem(n, found) for n in found.ops}
    broad = {n: "rewrite" if rule_for(n) else "fallback" for n in found.ops}
    reasons = seed_problems(found)
    dtypes = census(program)
    dtypes["int64"]["out_of_int32_range"] = _out_of_int32_range(program, args, kwargs)
    flags = path_flags(program.graph)
    return {
        "complex": {
            "subgraphs": [s.to_dict(found.kinds) for s in found.subgraphs],
            "ops": [
                {"node": n.name, "op": op_name(n.target), "seed": problem is None,
                 "seed_reason": problem, "broad": broad[n]}
                for n, problem in problems.items()
            ],
            "seed": {"supported": not reasons, "reasons": reasons},
            "broad": {"fallbacks": [f"{op_name(n.target)} (node {n.name})"
                                    for n, how in broad.items() if how == "fallback"]},
        },
        **dtypes,
        "predictions": _predictions(program, found, problems, broad, flags),
        "path": [p for p in PATHS if flags[p]],
    }


def _out_of_int32_range(program: ExportedProgram, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for name, value in zip(user_input_names(program), flatten_inputs(program, args, kwargs),
                           strict=True):
        if isinstance(value, torch.Tensor) and value.dtype == torch.int64:
            count = int(((value < INT32_MIN) | (value > INT32_MAX)).sum())
            if count:
                found.append({"name": name, "count": count})
    return found


def _predictions(program: ExportedProgram, found: Scan, problems: dict[fx.Node, str | None],
                 broad: dict[fx.Node, str], flags: dict[str, bool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def predict(limit: lim.Limitation, nodes: list[fx.Node], seed: str, broad: str) -> None:
        if nodes:
            out.append({"limitation": limit.key, "nodes": [n.name for n in nodes],
                        "seed": seed, "broad": broad, "reason": limit.short,
                        "cite": limit.cite})

    def outcome(nodes: list[fx.Node]) -> str:
        return "; ".join(f"{n.name}: {broad[n]}" for n in nodes)

    predict(lim.ANCHOR, found.outputs, "unsupported",
            "rewritten, converted back to complex at the output")
    standalone = [n for n in found.ops
                  if n.target is torch.ops.aten.view_as_complex.default and n in found.unanchored]
    predict(lim.STANDALONE_VIEW_AS_COMPLEX, standalone, "unsupported", outcome(standalone))
    conv_bn = [n for n in found.ops if is_conv_or_batch_norm(n.target)]
    predict(lim.CONV_BN, conv_bn, "unsupported", outcome(conv_bn))
    others = [n for n, p in problems.items()
              if p and n not in found.unanchored and n not in conv_bn]
    predict(lim.PATTERNS, others, "unsupported", outcome(others))
    if flags["float64"]:
        wide = [n for n in program.graph.nodes if n.op in ("placeholder", "call_function")
                and any(t.dtype in (torch.float64, torch.complex128)
                        for t in tensor_leaves(n.meta.get("val")))]
        inputs = [n for n in wide if n.op == "placeholder"]
        effect = ("float64 engine, slow on most GPUs; float32-level error under "
                  "truncate_double")
        predict(lim.FLOAT64, inputs or wide, effect, effect)
    complex_ops = set(found.ops)
    pairs = [n for n in program.graph.nodes
             if n.op == "placeholder" and found.kinds[n.name] != "user_input"
             and _real_pairs(n.meta.get("val"))]
    left_alone = "left alone: its dtype is real"
    for n in pairs:
        predict(lim.REAL_PAIRS, [n], left_alone + (
            " (consumed by a complex op)" if set(n.users) & complex_ops else ""), left_alone)
    return out


def _real_pairs(val: Any) -> bool:
    return (isinstance(val, torch.Tensor) and not val.dtype.is_complex and val.dim() > 0
            and val.shape[-1] == 2)
