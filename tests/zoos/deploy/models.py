"""Models whose saved artifact must keep what the deploy stage checks: a complex output, an int64
output, and a dynamic batch."""

import torch
from torch.export import Dim

import trtcheck


class ComplexOut(torch.nn.Module):
    """A complex output, with no view_as_real after it."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        return torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2)) * freqs


@trtcheck.model(variants=("complex64",))
def complex_output(variant: str):
    """A complex product returned as it is."""
    return ComplexOut(), (torch.randn(2, 8, 16), torch.randn(2, 8, 8, dtype=torch.complex64))


class Ids(torch.nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return ids * 3 + 1


@trtcheck.model(variants=("int64",))
def ids(variant: str):
    """int64 ids in, int64 ids out."""
    return Ids(), (torch.randint(0, 1000, (4, 8)),)


class Scaled(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2 + x.mean(dim=-1, keepdim=True)


@trtcheck.model(variants=("float32",), dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
def dynamic_batch(variant: str):
    """Real arithmetic over a dynamic batch."""
    return Scaled(), (torch.randn(4, 8),)
