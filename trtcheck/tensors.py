"""Small helpers over tensors, pytrees of tensors and graph ops: clone, move, name, bounds."""

from __future__ import annotations

from typing import Any, TypeVar

import torch
from torch.utils import _pytree as pytree

T = TypeVar("T")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def clone(tree: T) -> T:
    """Deep-copy every tensor leaf so that a call cannot affect the original values."""
    return pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, tree)


def to_device(tree: T, device: str) -> T:
    return pytree.tree_map(lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, tree)


def leaves_with_paths(tree: Any) -> list[tuple[str, Any]]:
    """Flatten a pytree into (key path, leaf) pairs; a bare leaf has the path ``""``."""
    flat, _ = pytree.tree_flatten_with_path(tree)
    return [(pytree.keystr(path), leaf) for path, leaf in flat]


def op_name(target: Any) -> str:
    """``aten.mul.Tensor`` for an OpOverload, the function's name otherwise."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return getattr(target, "__name__", str(target))
