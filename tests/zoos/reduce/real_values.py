"""A failure that needs the model's own values: float64 inputs past float32's range overflow
when truncated to float32, and random values of the same dtype and shape do not."""

import torch

import trtcheck


class Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2.0).sin() + 1.0


@trtcheck.model(variants=("float64",))
def huge(variant: str):
    return Scale(), (torch.full((4,), 1e39, dtype=torch.float64),)
