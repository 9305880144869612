"""Everyday patterns whose lowering rows must explain themselves: HF-style position ids (an int64
cumsum feeding an embedding), a column written in place (HF's top-p warper), attention with a fully
masked query row (a left-padded batch), a DLRM-style EmbeddingBag (its converter reads past the end)."""

from __future__ import annotations

import torch

import trtcheck


class PositionIds(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(16, 4)

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        pos = mask.long().cumsum(-1) - 1
        pos = pos.masked_fill(mask == 0, 1)
        return self.emb(pos)


class ColumnWrite(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[:, 0] = 0.0
        return y * 2


class MaskedAttention(torch.nn.Module):
    def forward(self, q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)


@trtcheck.model(name="position_ids")
def position_ids(variant: str):
    mask = torch.ones(2, 6, dtype=torch.int64)
    mask[0, :2] = 0  # left padding
    return PositionIds(), (mask,)


@trtcheck.model(name="column_write")
def column_write(variant: str):
    return ColumnWrite(), (torch.randn(3, 5),)


@trtcheck.model(name="masked_attention")
def masked_attention(variant: str):
    mask = torch.ones(1, 1, 4, 4, dtype=torch.bool)
    mask[..., 0, :] = False  # the first query sees no key
    return MaskedAttention(), (torch.randn(1, 1, 4, 8), mask)


class Bags(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(50, 8, mode="sum")

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.bag(ids, offsets)


@trtcheck.model(name="embedding_bags")
def embedding_bags(variant: str):
    return Bags(), (torch.randint(0, 50, (12,)), torch.tensor([0, 3, 7]))
