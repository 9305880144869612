"""A handful of converter cases: each layer family the stand-in emulates most, static and dynamic."""

from __future__ import annotations

import torch

from .harness import ConverterCase


class Ids(torch.nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return (ids * 3 - ids // 4).sum(-1)


class ConvRelu(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.avg_pool2d(torch.relu(self.conv(x)), 2)


class Attention(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1)


class CatSlice(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, y], dim=1)[:, 1::2].reshape(x.shape[0], -1)


class TopK(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.topk(x, 3, dim=-1)
        return values, indices


class TestConverters(ConverterCase):
    def test_int64_ids(self) -> None:
        self.check(Ids(), [torch.randint(-1000, 1000, (3, 5))])

    def test_int64_ids_dynamic_batch(self) -> None:
        self.check(Ids(), [torch.randint(-99, 99, (4, 5))], {0: (1, 4, 8)},
                   [[torch.randint(-99, 99, (b, 5))] for b in (1, 7)])

    def test_conv_pool(self) -> None:
        self.check(ConvRelu().eval(), [torch.randn(2, 3, 9, 9)])

    def test_matmul_softmax(self) -> None:
        self.check(Attention(), [torch.randn(2, 4, 8), torch.randn(2, 6, 8)])

    def test_cat_slice_dynamic(self) -> None:
        self.check(CatSlice(), [torch.randn(3, 4), torch.randn(3, 6)], {0: (1, 3, 6), 1: (1, 3, 6)},
                   [[torch.randn(b, 4), torch.randn(b, 6)] for b in (1, 6)])

    def test_topk(self) -> None:
        self.check(TopK(), [torch.randn(4, 10)])
