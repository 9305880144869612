"""Healthy models: their rows must be the same whether run alone or beside the faults."""

import torch

import trtcheck


class Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1


@trtcheck.model(variants=("float32", "float64", "int64"))
def scale(variant):
    """Elementwise arithmetic on each dtype."""
    dtype = getattr(torch, variant)
    x = torch.randint(-5, 5, (3, 4), dtype=dtype) if variant == "int64" else torch.randn(3, 4, dtype=dtype)
    return Scale(), (x,)


class ComplexRotate(torch.nn.Module):
    def forward(self, x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.view_as_complex(x) * f)


@trtcheck.model(variants=("complex64", "complex128"))
def rotate(variant):
    """Complex multiply anchored on view_as_real."""
    real = torch.float32 if variant == "complex64" else torch.float64
    return ComplexRotate(), (torch.randn(4, 8, 2, dtype=real),
                             torch.randn(4, 8, dtype=getattr(torch, variant)))
