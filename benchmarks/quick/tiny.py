"""The quick modes' zoo: one model small enough that a script's whole path runs in seconds."""

from __future__ import annotations

import torch

import trtcheck


class Tiny(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x * 1.5 + 0.25)


@trtcheck.model(variants=("float32",))
def tiny(variant: str):
    """64 floats through three elementwise ops."""
    return Tiny(), (torch.randn(64),)
