"""A failure that needs the model's own weights: a float64 buffer past float32's range overflows
when truncated to float32, and random values of the same dtype and shape do not (nor do the
case's example inputs through random weights)."""

import torch

import trtcheck


class Scale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.full((4,), 1e39, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.scale).sin() + 1.0


@trtcheck.model(variants=("float64",))
def huge(variant: str):
    return Scale(), (torch.ones(4, dtype=torch.float64),)
