"""float64 inside the graph, in PyTorch or in TensorRT blocks
(tests/unit/emulation/test_float64_placement.py).

Torch-TensorRT refuses float64 only in a TensorRT block: where every op holding float64 runs in
PyTorch (no converter, or a validator that refuses the node) the model passes without
truncate_double. Inputs are float32; the float64 values are made inside.
"""

from __future__ import annotations

import torch

import trtcheck


class ReturnsDouble(torch.nn.Module):
    """Computes in float32, returns float64: the cast's validator refuses float64."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2 + 1).double()


class CumprodInDouble(torch.nn.Module):
    """A float64 product of an op Torch-TensorRT has no converter for."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod((x.sigmoid() + 0.5).double(), dim=-1)


class LgammaInDouble(torch.nn.Module):
    """A float64 log-gamma (no converter), beside a float32 output."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.abs() + 1
        return y.relu(), torch.lgamma(y.double())


class ScaleInDouble(torch.nn.Module):
    """float64 arithmetic TensorRT would have to run: unsupported without truncate_double."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.double() * 3 + 1


class BackToFloat(torch.nn.Module):
    """float64 made in PyTorch, then cast back to float32 by a converted cast: the TensorRT
    block takes a float64 input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x.double(), dim=-1).float() + 1


MODELS = {"returns_double": ReturnsDouble, "cumprod_in_double": CumprodInDouble,
          "lgamma_in_double": LgammaInDouble, "scale_in_double": ScaleInDouble,
          "back_to_float": BackToFloat}


def _declare(name: str, make: type[torch.nn.Module]) -> None:
    def factory(variant: str):
        return make(), (torch.randn(4, 8),)

    factory.__doc__ = (make.__doc__ or name).splitlines()[0]
    trtcheck.model(name=name)(factory)


for _name, _make in MODELS.items():
    _declare(_name, _make)
