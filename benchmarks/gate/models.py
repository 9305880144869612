"""The gate benchmark's zoo: four models from 20 µs to about 1 ms a call on a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import trtcheck

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _plant import planted

FILE = "models"


class RoPE(torch.nn.Module):
    """The complex guide's rotary embedding: a handful of tiny kernels."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


class MLP(torch.nn.Module):
    """Four 1024-wide layers. A module of its own: torch 2.11 compiles a planted subclass of
    ``nn.Sequential`` without the subclass's ``forward``, so the plant's op never ran."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(
            *[m for _ in range(4) for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class PointwiseChain(torch.nn.Module):
    """Twelve elementwise ops: twelve launches eagerly, one fused kernel compiled."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.tanh(x * 1.5 + 0.25).sigmoid() - 0.5
        return x


def _case(name: str, variant: str) -> str:
    return f"{FILE}::{name}[{variant}]"


@trtcheck.model(variants=("complex64",))
def rope(variant: str):
    """About 20 µs a call on a GPU: launch-bound."""
    return planted(_case("rope", variant), RoPE()), \
        (torch.randn(1, 16, 64), torch.randn(1, 16, 32, dtype=torch.complex64))


@trtcheck.model(variants=("float32",))
def pointwise(variant: str):
    """Launch-bound: 4 K floats through twelve elementwise ops."""
    return planted(_case("pointwise", variant), PointwiseChain()), (torch.randn(4096),)


@trtcheck.model(variants=("float32",))
def mlp(variant: str):
    """Four 1024-wide layers on 64 rows."""
    return planted(_case("mlp", variant), MLP()), (torch.randn(64, 1024),)


@trtcheck.model(variants=("float32",))
def encoder(variant: str):
    """One 256-wide, 4-head encoder layer on 4 × 64 tokens."""
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, dropout=0.0)
    return planted(_case("encoder", variant),
                   torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)), \
        (torch.randn(4, 64, 256),)
