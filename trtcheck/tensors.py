"""Small helpers over pytrees of tensors: clone, move, describe."""

from __future__ import annotations

from typing import Any, TypeVar

import torch
from torch.utils import _pytree as pytree

T = TypeVar("T")


def clone(tree: T) -> T:
    """Deep-copy every tensor leaf so that a call cannot affect the original values."""
    return pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, tree)


def to_device(tree: T, device: str) -> T:
    return pytree.tree_map(lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, tree)


def leaves_with_paths(tree: Any) -> list[tuple[str, Any]]:
    """Flatten a pytree into (key path, leaf) pairs; a bare leaf has the path ``""``."""
    flat, _ = pytree.tree_flatten_with_path(tree)
    return [(pytree.keystr(path), leaf) for path, leaf in flat]
