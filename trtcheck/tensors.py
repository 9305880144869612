"""Small helpers over tensors, pytrees of tensors and graph ops: clone, move, name, bounds."""

from __future__ import annotations

import hashlib
import warnings
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


def op_name(target: Any, *, module: bool = False) -> str:
    """An FX node's target, named for a message: ``aten.mul.Tensor`` for an OpOverload, the
    function's name otherwise (with ``module``, its module's too: ``_operator.getitem``)."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if module:
        return f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', target)}".lstrip(".")
    return getattr(target, "__name__", str(target))


class StateSnapshot:
    """A module's buffers as they were when taken: which a call changed, and putting them back.

    ``torch.export`` and the modules backends build from its program share these tensors with the
    user's module, so restoring them in place gives those modules the same starting state too.
    """

    def __init__(self, module: torch.nn.Module) -> None:
        self._module = module
        self._saved = {name: t.detach().clone() for name, t in _state(module).items()}

    def changed(self) -> list[str]:
        """The names of the buffers that differ from the snapshot, in module order."""
        live = _state(self._module)
        return [name for name, saved in self._saved.items()
                if name not in live or not same_values(live[name], saved)]

    def restore(self) -> None:
        """Put every buffer back as it was: in place where its shape and dtype are the same,
        else by assigning a copy of the saved tensor."""
        live = _state(self._module)
        with torch.no_grad():
            for name, saved in self._saved.items():
                now = live.get(name)
                if now is not None and same_values(now, saved):
                    continue
                if now is not None and (now.shape, now.dtype) == (saved.shape, saved.dtype):
                    now.copy_(saved)
                else:
                    owner_name, _, attr = name.rpartition(".")
                    setattr(self._module.get_submodule(owner_name), attr, saved.clone())


def state_digest(module: torch.nn.Module) -> str:
    """A digest of a module's parameters and buffers (names, dtypes, shapes, bytes): equal in
    two processes that built the same module with the same values."""
    digest = hashlib.sha256()
    tensors = [*module.named_parameters(remove_duplicate=False),
               *module.named_buffers(remove_duplicate=False)]
    for name, tensor in tensors:
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}:{flat.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return dict(module.named_buffers())


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shape, dtype and values, NaN equal to NaN."""
    if (a.shape, a.dtype) != (b.shape, b.dtype):
        return False
    a = a.detach()
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def decompose(program: torch.export.ExportedProgram,
              table: dict[Any, Any] | None = None) -> torch.export.ExportedProgram:
    """``program.run_decompositions(table)`` (torch's default table for None).

    torch 2.13 deep-copies the program's module call graph there, and every ``LeafSpec`` that
    copy makes warns "`isinstance(treespec, LeafSpec)` is deprecated" though no such check
    was made: that one warning is silenced, here only."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                                FutureWarning)
        return program.run_decompositions(table)
