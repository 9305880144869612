"""Memory: each stage's peak, a call's steady-state peak, what a case leaves allocated, and
what an out-of-memory says.

On CUDA the figures are the PyTorch caching allocator's (``memory_allocated`` and
``max_memory_allocated`` on the row's device): TensorRT's own allocations are outside them. On
Linux CPUs they are the process's resident memory, its high-water mark reset before each stage
through ``/proc/self/clear_refs`` (so a reused worker reports each case's peak, not its
lifetime's); a stage whose high-water mark never rose is not measured (memory reused from
earlier moves no mark), never 0. Elsewhere there is no per-stage reset, and CPU figures are left
out.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trtcheck.results.figures import ALLOCATOR, MIB, RESIDENT

# A case or row that leaves more than this allocated on the GPU gets a note naming it, and a
# worker not back within it of its baseline is replaced before the next case.
LEAK_MARGIN = 64 * MIB

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")
_REQUESTED = re.compile(r"Tried to allocate ([\d.]+ [KMGT]?i?B)")


@dataclass(frozen=True)
class Peak:
    """Bytes in use when a stage began, the most in use during it, and in use when it ended."""

    start: int
    peak: int
    end: int

    @property
    def added(self) -> int:
        """The stage's own peak: how far it rose above what was already in use."""
        return max(0, self.peak - self.start)


def _is_cuda(device: str) -> bool:
    return torch.device(device).type == "cuda"


def _status_kib(field: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _reset_resident_peak() -> bool:
    """Reset the kernel's resident high-water mark (VmHWM) to the current resident size."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def measure_name(device: str) -> str | None:
    """What the figures on ``device`` are, or None where they cannot be taken per stage."""
    if _is_cuda(device):
        return ALLOCATOR
    return RESIDENT if _CLEAR_REFS.exists() and _status_kib("VmHWM") is not None else None


def in_use(device: str) -> int | None:
    """GPU memory the PyTorch allocator holds for tensors now; None on CPU."""
    return torch.cuda.memory_allocated(device) if _is_cuda(device) else None


@contextmanager
def peak(device: str, into: dict[str, Peak], name: str) -> Iterator[None]:
    """Record the memory of the enclosed code as ``into[name]`` (nothing where not measurable)."""
    if _is_cuda(device):
        torch.cuda.reset_peak_memory_stats(device)
        start = torch.cuda.memory_allocated(device)
        try:
            yield
        finally:
            into[name] = Peak(start, torch.cuda.max_memory_allocated(device),
                              torch.cuda.memory_allocated(device))
        return
    start = _status_kib("VmRSS") if _reset_resident_peak() else None
    try:
        yield
    finally:
        high, end = _status_kib("VmHWM"), _status_kib("VmRSS")
        # A mark that never rose measured nothing: memory freed earlier and reused moves no
        # resident mark, so such a stage is not measured rather than 0.
        if start is not None and high is not None and end is not None and high > start:
            into[name] = Peak(start, high, end)


Inputs = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]


def steady_peaks(device: str, calls: Sequence[tuple[Callable[..., Any], Inputs]]) -> list[Peak | None]:
    """Each ``(fn, inputs)``'s steady-state peak: ``fn`` is called once more to warm up
    (workspaces, lazy initialisation and autotuning happen there), then once inside the
    measurement, on inputs made before it."""
    found: list[Peak | None] = []
    with torch.no_grad():
        for fn, inputs in calls:
            args, kwargs = inputs()
            fn(*args, **kwargs)
            args, kwargs = inputs()
            into: dict[str, Peak] = {}
            with peak(device, into, "steady"):
                fn(*args, **kwargs)
            found.append(into.get("steady"))
    return found


def release(device: str) -> None:
    """On CUDA, free what nothing references any more: Python's cycles, cuBLAS's workspaces
    (allocated through PyTorch's allocator and otherwise kept for the process's life), then the
    allocator's cache. Nothing on CPU, where no figure depends on it."""
    if not _is_cuda(device):
        return
    gc.collect()
    torch.cuda.synchronize(device)
    clear_workspaces = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear_workspaces is not None:
        clear_workspaces()
    torch.cuda.empty_cache()


def near_baseline(baseline: int | None, now: int | None, margin: int = LEAK_MARGIN) -> bool:
    """Whether memory in use is back within ``margin`` of the baseline (True when unknown)."""
    return baseline is None or now is None or now - baseline <= margin


def mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB"


def leak_note(what: str, before: int | None, after: int | None, device: str,
              margin: int = LEAK_MARGIN) -> str | None:
    """A note when ``what`` left more than ``margin`` allocated on the device, else None."""
    if near_baseline(before, after, margin) or before is None or after is None:
        return None
    return (f"{what} left {mib(after - before)} allocated on {device} after it finished "
            f"(in use {mib(before)} before, {mib(after)} after): a leak in the model or the backend")


def oom_message(stage: str, text: str, reserved: int | None, total: int | None) -> str:
    """``out of GPU memory at STAGE: requested …, reserved …, total …`` from an allocator error."""
    requested = _REQUESTED.search(text)
    figures = [f"requested {requested[1] if requested else 'unknown'}"]
    figures.append(f"reserved by PyTorch {mib(reserved) if reserved is not None else 'unknown'}")
    figures.append(f"total {mib(total) if total is not None else 'unknown'}")
    return f"out of GPU memory at {stage}: " + ", ".join(figures)


def gpu_oom_message(stage: str, exc: BaseException, device: str) -> str:
    """:func:`oom_message` with the allocator's figures for ``device``, read now."""
    try:
        reserved = torch.cuda.memory_reserved(device)
        total = torch.cuda.get_device_properties(torch.device(device)).total_memory
    except (RuntimeError, AssertionError):
        reserved = total = None
    return oom_message(stage, str(exc), reserved, total)
