"""Models that declare dynamic shapes: right at every shape, right only at its example, a complex
input, and a spec naming an input the forward does not have."""

import torch
from torch.export import Dim

import trtcheck

BATCH = Dim("batch", min=1, max=16)
SEQ = Dim("seq", min=2, max=64)


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 8)
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.embed(ids)).chunk(3, dim=-1)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


@trtcheck.model(variants=("int64",), dynamic_shapes={"ids": {0: BATCH, 1: SEQ}})
def attention(variant: str):
    """Embedding and causal attention over a dynamic batch of dynamic-length id sequences."""
    return Attention(), (torch.randint(0, 32, (4, 8)),)


class ExampleBatchMean(torch.nn.Module):
    """Exports a mean over the batch as a sum divided by the example's batch size, 4: right at
    batch 4 only, as a model that bakes its example's shape into an export-only path would be."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_exporting():
            return x.sum(0) / 4
        return x.mean(0)


@trtcheck.model(variants=("float32",), dynamic_shapes={"x": {0: BATCH}})
def example_batch_mean(variant: str):
    """Right at its example batch of 4, wrong at any other."""
    return ExampleBatchMean(), (torch.randn(4, 8),)


class ComplexGain(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(z * z)


@trtcheck.model(variants=("complex64",), dynamic_shapes={"z": {0: Dim("gain_batch", min=1, max=32)}})
def complex_gain(variant: str):
    """A complex input with a declared batch range of 1 to 32, its example at 8."""
    return ComplexGain(), (torch.randn(8, 16, dtype=torch.complex64),)


@trtcheck.model(variants=("float32",), dynamic_shapes={"y": {0: BATCH}})
def misnamed_dynamic_input(variant: str):
    """Declares dynamic shapes for ``y``, an input its forward does not have: an error row."""
    return ExampleBatchMean(), (torch.randn(4, 8),)
