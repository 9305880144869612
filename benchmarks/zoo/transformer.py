"""A small transformer: two encoder layers, about 0.3–0.6 ms per call on a GPU."""

from __future__ import annotations

import torch

import trtcheck


@trtcheck.model(variants=("float32",), tags=("transformer",))
def encoder(variant: str):
    """Two 512-wide, 8-head encoder layers on 8 × 128 tokens."""
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True, dropout=0.0)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), \
        (torch.randn(8, 128, 512),)
