"""Models and helpers shared by the lowering, dtype-policy, analyze, emulate and tensorrt tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import fx, nn
from torch.export import ExportedProgram
from torch.utils import _pytree as pytree

from trtcheck.emulation.graph import COMPLEX_DTYPES, tensor_leaves

# Normwise tolerance of a lowered complex64 / complex128 result against eager.
TOL = {torch.complex64: 1e-5, torch.complex128: 1e-12}


class Fn(nn.Module):
    """A module around a function, so that tests can export one-liners."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def export(model: nn.Module | Callable[..., Any], *args: Any, **kwargs: Any) -> ExportedProgram:
    module = model if isinstance(model, nn.Module) else Fn(model)
    return torch.export.export(module, args, kwargs)


def complex_nodes(graph: fx.Graph) -> list[str]:
    return [n.name for n in graph.nodes
            if any(t.dtype in COMPLEX_DTYPES for t in tensor_leaves(n.meta.get("val")))]


def max_error(actual: Any, expected: Any) -> float:
    """Largest error over all outputs, relative to each output's largest magnitude (at least 1).

    Also checks that every output keeps eager's type, dtype and shape.
    """
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    assert a_spec == e_spec
    worst = 0.0
    for a, e in zip(a_leaves, e_leaves, strict=True):
        assert type(a) is type(e)
        if not isinstance(e, torch.Tensor):
            assert a == e
            continue
        assert (a.dtype, a.shape) == (e.dtype, e.shape)
        if e.numel() == 0:
            continue
        a, e = (torch.view_as_real(t.resolve_conj()) if t.is_complex() else t for t in (a, e))
        scale = max(1.0, e.abs().max().item())
        worst = max(worst, ((a.double() - e.double()).abs().max() / scale).item())
    return worst


class SeedRoPE(nn.Module):
    """The RoPE example of seeds/complex_tensors.rst, verbatim."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        x_rotated = x_complex * freqs
        return torch.view_as_real(x_rotated).flatten(2)


class LlamaRoPE(nn.Module):
    """Llama-style rotary embedding: one ``torch.polar`` buffer shared by q and k."""

    def __init__(self, dim: int = 8, max_seq: int = 32, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.wq = nn.Linear(dim, dim, dtype=dtype)
        self.wk = nn.Linear(dim, dim, dtype=dtype)
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=dtype) / dim))
        angles = torch.outer(torch.arange(max_seq, dtype=dtype), inv)
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, seq, dim = x.shape
        q = self.wq(x).view(batch, seq, 1, dim)
        k = self.wk(x).view(batch, seq, 1, dim)
        qc = torch.view_as_complex(q.reshape(batch, seq, 1, -1, 2))
        kc = torch.view_as_complex(k.reshape(batch, seq, 1, -1, 2))
        freqs = self.freqs_cis[:seq].view(1, seq, 1, dim // 2)
        return (torch.view_as_real(qc * freqs).flatten(3),
                torch.view_as_real(kc * freqs).flatten(3))


class HashIds(nn.Module):
    """Multiplicative hashing of int64 ids: intermediates pass 2**31 for any id >= 1."""

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = ids * 2654435761 + torch.arange(ids.shape[-1])
        return h % 1000003, h.cumsum(-1)


class PairParam(nn.Module):
    """A real parameter of shape (d, 2) next to, and inside, a complex subgraph."""

    def __init__(self, d: int = 4) -> None:
        super().__init__()
        self.pairs = nn.Parameter(torch.randn(d, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rotated = x * torch.view_as_complex(self.pairs)
        return torch.view_as_real(rotated) + self.pairs


class ComplexConv(nn.Module):
    """A complex convolution: outside the seed's rewrite."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 3, dtype=torch.complex64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(self.conv(x))


def complex_output(x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    return x * f


def complex_exp(x: torch.Tensor) -> torch.Tensor:
    return torch.view_as_real(torch.exp(torch.view_as_complex(x)))


def standalone_view_as_complex(x: torch.Tensor) -> torch.Tensor:
    return torch.view_as_complex(x) * 2


class RoPE(torch.nn.Module):
    """The seed's rotary-embedding example: real x, complex64 freqs, output through view_as_real."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


class ScatterIds(torch.nn.Module):
    """int64 ids scattered into an int64 table."""

    def forward(self, ids: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.zeros(16, dtype=torch.int64, device=ids.device).scatter(0, index, ids)


def rope_inputs(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    return (torch.randn(1, 16, 64, device=device),
            torch.randn(1, 16, 32, dtype=torch.complex64, device=device))


def scatter_inputs(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.tensor([1, -7, 2**40, -(2**35), 5, 2**31], dtype=torch.int64, device=device)
    return ids, torch.tensor([3, 0, 15, 8, 9, 1], dtype=torch.int64, device=device)


class TwoComplexOutputs(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return z * w, z + w


class PositionIds(nn.Module):
    """HF-style position ids from an attention mask, looked up in an embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(16, 4)

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        pos = mask.long().cumsum(-1) - 1
        return self.emb(pos.masked_fill(mask == 0, 1))
