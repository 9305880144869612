"""trtcheck's own implementation of Torch-TensorRT's documented rewrites.

Lowers an ExportedProgram as TensorRT would see it.

:func:`lower` runs the complex-to-real rewrite (``detect``, then ``rewrite``), then the int64/float64
policy (``dtype_policy``), checks that no complex node is left outside declared fallbacks,
and wraps the result in a :class:`~trtcheck.emulation.runtime.Lowered` module that converts
the caller's values at the boundary (``runtime``).
"""

from __future__ import annotations

import torch
from torch.export import ExportedProgram

from trtcheck.core.profiles import Profile
from trtcheck.emulation import detect, dtype_policy
from trtcheck.emulation.graph import check_invariants
from trtcheck.emulation.rewrite import rewrite
from trtcheck.emulation.runtime import Lowered
from trtcheck.errors import Unsupported
from trtcheck.tensors import decompose

__all__ = ["Lowered", "lower", "prepare"]


def prepare(program: ExportedProgram) -> ExportedProgram:
    """The program with in-place ops functionalized, or as is when it has none.

    ``torch.export`` keeps in-place ops (``x.add_(1)``) in its graph; an empty
    decomposition table turns them into values plus mutation outputs and decomposes
    nothing else that matters here, at a cost paid only by programs that mutate.
    """
    mutates = any(
        isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable
        for n in program.graph.nodes
    )
    return decompose(program, {}) if mutates else program


def lower(program: ExportedProgram, profile: Profile) -> Lowered:
    """Lower a program under a profile; raise :class:`Unsupported` for a known limitation.

    The result is called like ``program.module()`` and carries ``evidence``: complex
    subgraphs found, ops rewritten, fallbacks, casts and the dtype paths taken.
    """
    program = prepare(program)
    found = detect.scan(program)
    if profile.coverage == "seed":
        detect.check_seed(found)
    graph_module, rewritten = rewrite(program, found)
    if profile.require_full_compilation and rewritten.fallbacks:
        raise Unsupported("require_full_compilation, but these complex ops would run in "
                          f"PyTorch: {', '.join(rewritten.fallbacks)}")
    policy = dtype_policy.Policy.from_profile(profile)
    internal_casts = dtype_policy.retype(graph_module, policy)
    check_invariants(graph_module.graph, policy.narrowing)
    returned = dtype_policy.returned_dtypes(program) if profile.truncate_double else {}
    lowered = Lowered(graph_module, program, returned)
    lowered.evidence.update(
        complex_subgraphs=len(found.subgraphs),
        rewritten=dict(rewritten.rewritten),
        fallbacks=rewritten.fallbacks,
        casts=lowered.boundary_casts() + internal_casts,
        path=[label for label, on in dtype_policy.path_flags(program.graph).items() if on],
    )
    return lowered
