"""Each failing pattern of ``tests/zoos/lowering_patterns`` buried in a generated graph: real
layers before it (whose result is viewed as the pattern's complex inputs) and after it (on its
result viewed as real), some 70 nodes in all, for ``trtcheck reduce``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import torch
from torch.utils import _pytree as pytree

import trtcheck

PATTERNS = ("one_minus", "times_2j_as_real", "over_complex_scalar_as_real", "plus_1j",
            "complex_plus_real", "complex_of_reals", "real_part_as_complex", "two_complex_outputs")
LAYERS = 10


def _patterns() -> ModuleType:
    """The patterns' zoo file, imported when a case is built (not while this file is collected,
    so that its own models are not declared here)."""
    path = Path(__file__).resolve().parent.parent / "lowering_patterns" / "patterns.py"
    spec = importlib.util.spec_from_file_location("trtcheck_reduce_patterns", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Layers(torch.nn.Module):
    """``tanh(x * w + b)``, ``count`` times: three nodes a layer."""

    def __init__(self, shape: tuple[int, ...], count: int = LAYERS) -> None:
        super().__init__()
        self.w = torch.nn.ParameterList(torch.nn.Parameter(torch.rand(shape[-1]) + 0.5)
                                        for _ in range(count))
        self.b = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(shape[-1]) * 0.1)
                                        for _ in range(count))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for w, b in zip(self.w, self.b, strict=True):
            x = torch.tanh(x * w + b)
        return x


class Buried(torch.nn.Module):
    """Real layers, the pattern on their results (as complex where it takes complex), more layers
on the sum of its results viewed as real."""

    def __init__(self, pattern: torch.nn.Module, example: tuple[torch.Tensor, ...]) -> None:
        super().__init__()
        self.pattern = pattern
        self.complex = tuple(t.is_complex() for t in example)
        self.before = torch.nn.ModuleList(
            Layers((*t.shape, 2) if t.is_complex() else tuple(t.shape)) for t in example)
        self.after = Layers((2,))

    def forward(self, *xs: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        inputs = [torch.view_as_complex(layers(x)) if is_complex else layers(x)
                  for layers, x, is_complex in zip(self.before, xs, self.complex, strict=True)]
        result = self.pattern(*inputs)
        total = sum(torch.view_as_real(t) if t.is_complex() else t.reshape(*t.shape[:-1], -1, 2)
                    for t in pytree.tree_leaves(result))
        out = self.after(total)
        # Several results are model outputs too: what fails is how one block returns them.
        return (out, *pytree.tree_leaves(result)) if isinstance(result, tuple) else out


def _factory(name: str):  # type: ignore[no-untyped-def]
    def factory(variant: str):  # type: ignore[no-untyped-def]
        pattern = _patterns()
        spec = getattr(pattern, name)
        module, args = spec(variant)[:2]
        real = tuple(torch.view_as_real(t).clone() if t.is_complex() else t for t in args)
        return Buried(module, args), real

    factory.__name__ = f"buried_{name}"
    factory.__doc__ = f"The {name} pattern between two stacks of {LAYERS} real layers."
    return factory


for _name in PATTERNS:
    trtcheck.model(_factory(_name), variants=("complex64",), tags=("wrong",))
