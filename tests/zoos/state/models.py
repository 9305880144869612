"""Modules that change what they are given or what they hold: inputs modified in place, buffers
updated by ``forward``. Judged right, every one passes on eager, inductor and emulate."""

from __future__ import annotations

import torch

import trtcheck


class NormaliseInPlace(torch.nn.Module):
    """Normalises its input in place, as image pipelines do."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.sub_(self.mean)
        x.div_(self.std)
        return x.mean(dim=(2, 3))


@trtcheck.model
def normalise_in_place(variant: str):
    """x.sub_(mean); x.div_(std): the caller's tensor comes back normalised."""
    return NormaliseInPlace(), (torch.rand(2, 3, 8, 8),)


class StepCounter(torch.nn.Module):
    """Counts its calls in a buffer and scales by the count."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("steps", torch.zeros(()))
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps.add_(1)
        return self.linear(x) * self.steps


@trtcheck.model
def step_counter(variant: str):
    """A step counter updated in forward."""
    return StepCounter(), (torch.randn(4, 8),)


class RunningCache(torch.nn.Module):
    """Keeps a running sum of what it has seen, written in place."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.cache.add_(x)
        return self.cache * 2 + x


@trtcheck.model
def running_cache(variant: str):
    """A cache written in place by forward."""
    return RunningCache(), (torch.randn(4, 8),)
