"""Ops that make int64 inside the graph from float32 (or int64) inputs, each a model.

Under ``int64_as_int32`` every int64 value inside the engine is int32: the indices of topk,
sort and max(dim), arange, cumsum over ids, and the rest. ``emulate`` and ``lowering`` must
agree on each row.
"""

from __future__ import annotations

import torch

import trtcheck


def _x() -> torch.Tensor:
    return torch.randn(4, 16)


def _ids() -> torch.Tensor:
    return torch.randint(0, 1000, (4, 16), dtype=torch.int64)


class TopK(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = x.topk(3, dim=-1)
        return values, indices


class Sort(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.sort(x, dim=-1)
        return values, indices


class ArgSort(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argsort(x, dim=-1)


class MaxDim(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = x.max(dim=1)
        return values, indices


class MinDim(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = x.min(dim=1)
        return values, indices


class ArgMaxMin(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.argmax(dim=-1), x.argmin(dim=0)


class CumsumIds(torch.nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(ids, dim=-1)


class GatherTopK(torch.nn.Module):
    """Indices that stay inside the graph: topk's indices gather from another tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        indices = x.topk(3, dim=-1).indices
        return torch.gather(x * 2, -1, indices)


class Arange(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[-1])
        return x + positions


class NonZero(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nonzero(x > 0)


class Unique(torch.nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.unique(ids % 7)


class SearchSorted(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        edges = torch.linspace(-2.0, 2.0, 9)
        return torch.searchsorted(edges, x.contiguous())


class Bucketize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        edges = torch.linspace(-2.0, 2.0, 9)
        return torch.bucketize(x, edges)


_FLOAT_INPUT = {
    "topk": TopK, "sort": Sort, "argsort": ArgSort, "max_dim": MaxDim, "min_dim": MinDim,
    "argmax_argmin": ArgMaxMin, "gather_topk": GatherTopK, "arange": Arange,
    "nonzero": NonZero, "searchsorted": SearchSorted, "bucketize": Bucketize,
}
_ID_INPUT = {"cumsum_ids": CumsumIds, "unique": Unique}


def _declare(name: str, make: type[torch.nn.Module], inputs: object) -> None:
    def factory(variant: str):
        return make(), (inputs(),)

    factory.__doc__ = (make.__doc__ or f"{name} makes int64 inside the graph.").splitlines()[0]
    trtcheck.model(name=name)(factory)


for _name, _make in _FLOAT_INPUT.items():
    _declare(_name, _make, _x)
for _name, _make in _ID_INPUT.items():
    _declare(_name, _make, _ids)
