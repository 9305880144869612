"""The model's own eager outputs, kept by each ``trtcheck ab`` process so that the base's and
the head's can be compared on the same seeded inputs.

Each process writes, per case, a digest of its inputs and of eager's outputs (a SHA-256 over
every leaf's path, dtype, shape and bytes) to a small JSON file; the first process of each side
(the one that runs every check) also keeps the outputs themselves, so that where the two sides'
digests differ the job can say by how much (:func:`difference`). Digests alone cannot give
"16 of 48 values differ", and keeping the values in every process would cost the disk a copy
of every output per process for nothing: one side's processes are compared by digest.

torch is imported where it is used: ``ab``'s parent reads the digests without it.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

DIGESTS = "digests.json"  # in a process's folder: each case's digests, by case id


def digest(tree: Any) -> str:
    """A short hash of a pytree's leaves: each tensor's path, dtype, shape and bytes, anything
    else by its ``repr``."""
    import torch

    from trtcheck.tensors import leaves_with_paths

    h = hashlib.sha256()
    for path, leaf in leaves_with_paths(tree):
        h.update(path.encode())
        if isinstance(leaf, torch.Tensor):
            t = leaf.detach().cpu().contiguous()
            h.update(f"{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            h.update(repr(leaf).encode())
    return h.hexdigest()[:16]


def values_file(folder: Path, case_id: str) -> Path:
    """Where a process keeps a case's eager outputs."""
    return folder / f"{hashlib.sha256(case_id.encode()).hexdigest()[:16]}.pt"


def keep_eager(folder: Path, case_id: str, inputs: Any, outputs: Any, *, values: bool) -> None:
    """Add the digests of a case's ``inputs`` and eager ``outputs`` to ``folder``'s digests,
    and with ``values`` the outputs themselves, on the CPU. What cannot be hashed or written
    (a tensor without plain storage, a full disk) leaves the case uncompared, never its row
    failed: this is ``ab``'s bookkeeping, not the case's."""
    import torch

    from trtcheck.tensors import leaves_with_paths

    try:
        folder.mkdir(parents=True, exist_ok=True)
        found = read_digests(folder)
        found[case_id] = {"inputs": digest(inputs), "outputs": digest(outputs)}
        if values:
            torch.save([(path, leaf.detach().cpu() if isinstance(leaf, torch.Tensor)
                         else repr(leaf)) for path, leaf in leaves_with_paths(outputs)],
                       values_file(folder, case_id))
        (folder / DIGESTS).write_text(json.dumps(found), encoding="utf-8")
    except (OSError, RuntimeError, TypeError, ValueError):
        return


def read_digests(folder: Path) -> dict[str, dict[str, str]]:
    """Each case's digests a process kept in ``folder`` (none: an empty dict)."""
    try:
        return dict(json.loads((folder / DIGESTS).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def difference(base: Path, head: Path) -> str:
    """How the head's eager outputs differ from the base's, in words: ``max abs 1.2e+03, 16 of
    48 int64 values differ`` (NaN equal to NaN); a change of structure, dtype or shape named
    instead; ``""`` where either was not kept."""
    import torch

    try:
        old, new = (torch.load(p, weights_only=True) for p in (base, head))
    except (OSError, RuntimeError, ValueError, EOFError):
        return ""
    if [p for p, _ in old] != [p for p, _ in new]:
        return f"the outputs are other ones: {len(old)} leaves → {len(new)}"
    counts: dict[str, list[int]] = {}
    worst = 0.0
    for (path, a), (_, b) in zip(old, new, strict=True):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            if a != b:
                return f"output {path or 'value'} {_short(a)} → {_short(b)}"
            continue
        if (a.dtype, a.shape) != (b.dtype, b.shape):
            return (f"output {path or 'tensor'} {str(a.dtype).removeprefix('torch.')}"
                    f"{list(a.shape)} → {str(b.dtype).removeprefix('torch.')}{list(b.shape)}")
        differ = a != b
        if a.is_floating_point() or a.is_complex():
            differ &= ~(a.isnan() & b.isnan())
        count = counts.setdefault(str(a.dtype).removeprefix("torch."), [0, 0])
        count[0] += int(differ.sum())
        count[1] += a.numel()
        if differ.any():
            gap = (a[differ].to(torch.complex128 if a.is_complex() else torch.float64)
                   - b[differ].to(torch.complex128 if a.is_complex() else torch.float64)).abs()
            worst = max(worst, float(gap.max()))
    if not any(n for n, _ in counts.values()):
        return ""
    values = ", ".join(f"{n} of {total} {dtype} values" for dtype, (n, total) in counts.items()
                       if n)
    size = f"{worst:.2g}" if math.isfinite(worst) else "inf"
    return f"max abs {size}, {values} differ"


def _short(text: str, width: int = 40) -> str:
    """A non-tensor output's ``repr`` as the reports show it: cut to ``width`` characters."""
    return text if len(text) <= width else text[:width - 1] + "…"
