"""Everyday models that fail on Torch-TensorRT 2.13.0's converters, each in a few lines of the
code it comes from, for ``trtcheck reduce``: HF-style position ids (an int64 cumsum feeding an
embedding), an int64 hash by a constant beyond int32, attention over a padded batch (a fully
masked row: NaN in eager's output), a sampler's in-place slice assignment, a complex layer's
bias given as a Python complex scalar, and a split-step Fourier step, whose FFT and nonlinear
phase fail the complex rewrite in one pass, from one frame, on two separate bugs."""

from __future__ import annotations

import torch

import trtcheck

SEQ, DIM = 8, 16
GAMMA, DZ = 1.3, 0.01


class PositionIds(torch.nn.Module):
    """Position ids from the attention mask, as Hugging Face's left-padded generation makes them."""

    def __init__(self) -> None:
        super().__init__()
        self.positions = torch.nn.Embedding(SEQ, DIM)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        position_ids = mask.long().cumsum(-1) - 1
        position_ids = position_ids.masked_fill(mask == 0, 1)
        return ids.unsqueeze(-1).float() + self.positions(position_ids)


class Hash(torch.nn.Module):
    """Knuth's multiplicative hash of int64 ids into buckets."""

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return (ids * 2654435761) % 1000003


class PaddedAttention(torch.nn.Module):
    """Self-attention over a batch whose second sequence is all padding: its rows are fully
    masked, so eager's attention gives NaN there."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
        mask = keep[:, None, None, :] & keep[:, None, :, None]
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class NoBos(torch.nn.Module):
    """A sampler's filter: the first token (beginning of sequence) never drawn again."""

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        probs = logits.softmax(-1)
        y = probs.clone()
        y[:, 0] = 0.0
        return y / y.sum(-1, keepdim=True)


class ComplexBias(torch.nn.Module):
    """A complex-valued layer (a spectrum's gain and phase offset) with its bias written as a
    Python complex scalar."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z * 0.5 + 0.25j


class SplitStep(torch.nn.Module):
    """One step of the split-step Fourier method (nonlinear optics, quantum simulation): the
    linear part in the frequency domain (fft, a complex operator, ifft), then the nonlinear phase
    ``psi * exp(1j * gamma * |psi|**2 * dz)``."""

    def __init__(self) -> None:
        super().__init__()
        k = torch.fft.fftfreq(4 * DIM) * 2 * torch.pi
        self.register_buffer("linear", torch.exp(-0.5j * k.to(torch.complex64) ** 2 * DZ))

    def forward(self, psi: torch.Tensor) -> torch.Tensor:
        psi = torch.fft.ifft(torch.fft.fft(psi) * self.linear)
        return psi * torch.exp(1j * GAMMA * psi.abs() ** 2 * DZ)


def _mask() -> torch.Tensor:
    mask = torch.ones(2, SEQ, dtype=torch.int64)
    mask[0, :3] = 0  # left padding
    return mask


@trtcheck.model(variants=("int64",))
def position_ids(variant: str):
    return PositionIds(), (torch.arange(2 * SEQ).reshape(2, SEQ), _mask())


@trtcheck.model(variants=("int64",))
def int64_hash(variant: str):
    return Hash(), (torch.arange(1, 2 * SEQ + 1).reshape(2, SEQ),)


@trtcheck.model(variants=("float32",))
def padded_attention(variant: str):
    keep = torch.ones(2, SEQ, dtype=torch.bool)
    keep[1] = False
    return PaddedAttention(), (torch.randn(2, SEQ, DIM), keep)


@trtcheck.model(variants=("float32",))
def no_bos(variant: str):
    return NoBos(), (torch.randn(2, 32),)


@trtcheck.model(variants=("complex64",))
def complex_bias(variant: str):
    return ComplexBias(), (torch.randn(2, 8, dtype=torch.complex64),)


@trtcheck.model(variants=("complex64",))
def split_step(variant: str):
    return SplitStep(), (torch.randn(2, 4 * DIM, dtype=torch.complex64),)
