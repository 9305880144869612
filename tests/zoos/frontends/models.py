"""Models run on both of Torch-TensorRT's front-ends, whose rows must agree: everyday user code
(a lambda, a closure, a local class, a bound method held by the module), a float64 input, a
graph break export runs through, a data-dependent branch export refuses, attention with a fully
masked row, a build the stand-in refuses, a complex RoPE, an int64 embedding, and factories the
lowering host cannot repeat (fixtures/ holds the rest the two front-ends are compared on)."""

from __future__ import annotations

import os

import torch

import trtcheck

# What this process's factories build differs from another process's (the lowering host's).
PROCESS = float(os.getpid() % 89 + 1)


class Holder(torch.nn.Module):
    """Holds a lambda, a closure, an instance of a local class and a bound method: none pickle."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        scale = 0.5

        class Shift:
            def __call__(self, x: torch.Tensor) -> torch.Tensor:
                return x + 1

        self.act = lambda x: torch.relu(x) * 2
        self.scaled = lambda x: x * scale
        self.shift = Shift()
        self.post = self._post

    def _post(self, x: torch.Tensor) -> torch.Tensor:
        return x - 0.25

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.post(self.shift(self.scaled(self.act(self.proj(x)))))


@trtcheck.model()
def holder(variant: str):
    return Holder(), (torch.randn(3, 8),)


class Affine64(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3 + 1


@trtcheck.model(variants=("float64",))
def affine64(variant: str):
    return Affine64(), (torch.randn(4, 4, dtype=torch.float64),)


class Branchy(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        print("", end="")  # Dynamo breaks the graph here; export runs it
        return torch.tanh(y) * 2


@trtcheck.model()
def branchy(variant: str):
    return Branchy(), (torch.randn(3, 8),)


class Gate(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        if y.sum() > 0:  # data-dependent: the graph break
            return y * 2
        return y - 1


@trtcheck.model()
def gate(variant: str):
    """A branch on a value the model computes."""
    return Gate(), (torch.randn(3, 8),)


class MaskedAttention(torch.nn.Module):
    def forward(self, q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)


@trtcheck.model()
def masked_attention(variant: str):
    mask = torch.ones(1, 1, 4, 4, dtype=torch.bool)
    mask[..., 0, :] = False  # the first query sees no key
    return MaskedAttention(), (torch.randn(1, 1, 4, 8), mask)


class PositionIds(torch.nn.Module):
    """HF-style position ids: Torch-TensorRT 2.13 builds the int64 cumsum as float32, and the
    gather it feeds is refused at build."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(16, 4)

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        pos = mask.long().cumsum(-1) - 1
        pos = pos.masked_fill(mask == 0, 1)
        return self.emb(pos)


@trtcheck.model()
def position_ids(variant: str):
    mask = torch.ones(2, 6, dtype=torch.int64)
    mask[0, :2] = 0  # left padding
    return PositionIds(), (mask,)


class Rope(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        angles = torch.outer(torch.arange(6.0), 1.0 / 10000 ** (torch.arange(0, 8, 2) / 8))
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(z * self.freqs).flatten(-2)


@trtcheck.model()
def rope(variant: str):
    return Rope(), (torch.randn(2, 6, 8),)


class Tagger(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(64, 16)
        self.proj = torch.nn.Linear(16, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(self.embed(ids)))


@trtcheck.model(variants=("int64",))
def tagger(variant: str):
    return Tagger(), (torch.randint(0, 64, (2, 6)),)


class Unrepeatable(torch.nn.Module):
    """Weights that depend on the process that built them: the host gets the worker's."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        with torch.no_grad():
            self.proj.bias.fill_(PROCESS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)


@trtcheck.model()
def unrepeatable(variant: str):
    return Unrepeatable(), (torch.randn(2, 4),)


class Hidden(torch.nn.Module):
    """A buffer outside the state_dict that depends on the process: no process but the worker's
    can build this module."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("offset", torch.full((4,), PROCESS), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.offset


@trtcheck.model()
def hidden(variant: str):
    return Hidden(), (torch.randn(2, 4),)
