"""An 8-layer transformer with rotary embeddings (Llama's complex ``freqs_cis``), and the same with
``1 - z`` applied to the rotated queries of its fifth layer: a known Torch-TensorRT complex-rewrite
bug buried in the middle of a graph of some 500 nodes, for ``trtcheck reduce``."""

from __future__ import annotations

import math

import torch

import trtcheck

DIM, HEADS, SEQ = 16, 2, 8


def rotate(x: torch.Tensor, freqs: torch.Tensor, one_minus: bool = False) -> torch.Tensor:
    """Llama's apply_rotary_emb; ``one_minus`` adds the bug's ``1 - z``."""
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2)) * freqs
    if one_minus:
        z = 1 - z
    return torch.view_as_real(z).flatten(3)


class Layer(torch.nn.Module):
    def __init__(self, one_minus: bool = False) -> None:
        super().__init__()
        self.one_minus = one_minus
        self.norm1 = torch.nn.LayerNorm(DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)
        self.norm2 = torch.nn.LayerNorm(DIM)
        self.up = torch.nn.Linear(DIM, 2 * DIM)
        self.down = torch.nn.Linear(2 * DIM, DIM)

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, s, 3, HEADS, DIM // HEADS).unbind(2)
        q, k = rotate(q, freqs, self.one_minus), rotate(k, freqs)
        scores = torch.einsum("bshd,bthd->bhst", q, k) / math.sqrt(DIM // HEADS)
        attended = torch.einsum("bhst,bthd->bshd", scores.softmax(-1), v).reshape(b, s, DIM)
        x = x + self.proj(attended)
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class RoPETransformer(torch.nn.Module):
    def __init__(self, buggy_layer: int | None = None, layers: int = 8) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(i == buggy_layer) for i in range(layers))
        half = DIM // HEADS // 2
        inv = 1.0 / 10000.0 ** (torch.arange(half, dtype=torch.float32) / half)
        angles = torch.outer(torch.arange(SEQ, dtype=torch.float32), inv)
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        freqs = self.freqs_cis[: x.shape[1]].view(1, x.shape[1], 1, -1)
        for layer in self.layers:
            x = layer(x, freqs)
        return x


@trtcheck.model(variants=("float32",), tags=("handled",))
def rope_transformer(variant: str):
    """Eight layers, nothing wrong."""
    return RoPETransformer(), (torch.randn(2, SEQ, DIM),)


@trtcheck.model(variants=("float32",), tags=("wrong",))
def rope_transformer_one_minus(variant: str):
    """Eight layers; the fifth computes 1 - z on its rotated queries."""
    return RoPETransformer(buggy_layer=4), (torch.randn(2, SEQ, DIM),)
