"""A model whose wrong values come from randomness in it (``randn_like`` draws new noise on
every call, so no backend can match eager), and one that passes everywhere."""

import torch

import trtcheck


class Noisy(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) + 0.1 * torch.randn_like(x)


class Fine(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 2.0


@trtcheck.model(variants=("float32",))
def noisy(variant: str):
    return Noisy(), (torch.linspace(-1, 1, 16).reshape(4, 4),)


@trtcheck.model(variants=("float32",))
def fine(variant: str):
    return Fine(), (torch.linspace(-1, 1, 16).reshape(4, 4),)
