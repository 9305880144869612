"""Imports and runs."""

import torch

import trtcheck


@trtcheck.model
def twice(variant: str):
    return torch.nn.Identity(), (torch.ones(2),)
