"""Models that raise at each stage, or return what trtcheck cannot use."""

import torch

import trtcheck


@trtcheck.model
def raises_in_factory(variant):
    raise ValueError("factory broke")


@trtcheck.model
def returns_a_module_only(variant):
    return torch.nn.Identity()


class RaisesInForward(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("forward broke")


@trtcheck.model
def raises_in_forward(variant):
    return RaisesInForward(), (torch.ones(2),)


class DataDependent(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > 0].sum() if x.nonzero().shape[0] > 1 else x.sum()


@trtcheck.model
def not_exportable(variant):
    return DataDependent(), (torch.randn(8),)


class NaNs(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)  # NaN where x < 0, -inf at 0


@trtcheck.model
def nan_outputs(variant):
    """NaN and -inf at the same positions in eager and backend: a pass."""
    return NaNs(), (torch.tensor([-1.0, 0.0, 1.0, 2.0]),)


class Mutates(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x * 2


@trtcheck.model
def input_mutation(variant):
    """Mutates its input in place; the exported program must do the same."""
    return Mutates(), (torch.zeros(3),)


class Pair(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        return x, 7


@trtcheck.model
def non_tensor_output(variant):
    """Returns a Python int beside the tensor: compared by equality."""
    return Pair(), (torch.ones(2),)


class Done(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> str:
        return "done"


@trtcheck.model
def returns_a_string(variant):
    """Returns no tensor: nothing to compare, an error on every backend."""
    return Done(), (torch.ones(2),)


class Size(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> int:
        return x.shape[0]


@trtcheck.model
def returns_a_size(variant):
    """Returns ``x.shape[0]``, an int: no tensor either."""
    return Size(), (torch.ones(2),)
