"""Launch-bound models: about 20 µs per call on a GPU, mostly kernel launches."""

from __future__ import annotations

import torch

import trtcheck


class RoPE(torch.nn.Module):
    """The complex guide's rotary embedding: a handful of tiny kernels."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


@trtcheck.model(variants=("complex64",), tags=("launch",))
def rope(variant: str):
    """Eager launches a few kernels on 1 K elements."""
    return RoPE(), (torch.randn(1, 16, 64), torch.randn(1, 16, 32, dtype=torch.complex64))


class PointwiseChain(torch.nn.Module):
    """Twelve elementwise ops: twelve launches eagerly, one fused kernel compiled."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.tanh(x * 1.5 + 0.25).sigmoid() - 0.5
        return x


@trtcheck.model(variants=("float32",), tags=("launch",))
def pointwise_chain(variant: str):
    """4 K floats through twelve elementwise ops."""
    return PointwiseChain(), (torch.randn(4096),)
