"""What the lowering backend sends its host: a program ``torch.export.save`` takes, and the
output structure the parent rebuilds the host's outputs into."""

from __future__ import annotations

import io
from typing import Any, NamedTuple

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.lowering.lowering_backend import sendable
from trtcheck.tensors import leaves_with_paths


class Pair(NamedTuple):
    top: torch.Tensor
    where: torch.Tensor


class Structured(torch.nn.Module):
    """Outputs nested in types with no serialization name: structseqs and a namedtuple."""

    def forward(self, x: torch.Tensor) -> dict[str, Any]:
        top = torch.topk(x, 3)
        return {"top": top, "max": torch.max(x, dim=1), "pair": Pair(top.values * 2, top.indices),
                "sum": x.sum()}


class Plain(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"sorted": torch.sort(x, dim=1).values, "sum": x.sum()}


def test_unnamed_output_types_go_flat_and_come_back_as_eager_s() -> None:
    x = torch.randn(4, 8)
    program = torch.export.export(Structured(), (x,))
    blob, structure = sendable(program)
    flat = torch.export.load(io.BytesIO(blob)).module()(x)
    assert type(flat) is tuple and all(isinstance(leaf, torch.Tensor) for leaf in flat)
    assert structure is not None
    rebuilt = pytree.tree_unflatten(list(flat), structure)
    eager = Structured()(x)
    assert type(rebuilt["top"]) is torch.return_types.topk and type(rebuilt["pair"]) is Pair
    assert type(rebuilt["max"]) is torch.return_types.max
    assert [p for p, _ in leaves_with_paths(rebuilt)] == [p for p, _ in leaves_with_paths(eager)]
    for (_, got), (_, want) in zip(leaves_with_paths(rebuilt), leaves_with_paths(eager), strict=True):
        assert torch.equal(got, want)
    # the user's program is left as it was
    assert program.call_spec.out_spec == structure
    assert program.graph.owning_module is program.graph_module
    assert type(program.module()(x)["top"]) is torch.return_types.topk


def test_a_program_torch_saves_goes_unchanged() -> None:
    x = torch.randn(4, 8)
    blob, structure = sendable(torch.export.export(Plain(), (x,)))
    assert structure is None
    out = torch.export.load(io.BytesIO(blob)).module()(x)
    assert set(out) == {"sorted", "sum"} and torch.equal(out["sum"], x.sum())
