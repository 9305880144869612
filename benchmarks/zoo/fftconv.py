"""A long FFT convolution: about 2 ms per call on a GPU, memory-bound."""

from __future__ import annotations

import torch

import trtcheck


class FFTConv(torch.nn.Module):
    """Each channel convolved with its own long kernel through rfft/irfft (as in Hyena)."""

    def __init__(self, channels: int, length: int) -> None:
        super().__init__()
        self.kernel = torch.nn.Parameter(torch.randn(channels, length) / length ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = 2 * x.shape[-1]
        y = torch.fft.irfft(torch.fft.rfft(x, n=n) * torch.fft.rfft(self.kernel, n=n), n=n)
        return y[..., :x.shape[-1]] + x


@trtcheck.model(variants=("float32",), tags=("fft",))
def fft_conv(variant: str):
    """8 × 256 channels of 16 K samples."""
    return FFTConv(256, 16384), (torch.randn(8, 256, 16384),)
