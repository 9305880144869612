"""Models checked on Torch-TensorRT's torch.compile front-end: one with weights and int64 ids,
one with a data-dependent branch that torch.export refuses and Dynamo breaks the graph at."""

from __future__ import annotations

import torch

import trtcheck


class Tagger(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(64, 16)
        self.proj = torch.nn.Linear(16, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(self.embed(ids)))


@trtcheck.model()
def tagger(variant: str):
    """int64 token ids into an embedding, then a linear layer."""
    return Tagger(), (torch.randint(0, 64, (2, 6)),)


class Gate(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        if y.sum() > 0:  # data-dependent: the graph break
            return y * 2
        return y - 1


@trtcheck.model()
def gate(variant: str):
    """A branch on a value the model computes."""
    return Gate(), (torch.randn(3, 8),)
