"""Which kernels one call ran: the fingerprint of what the libraries chose in this process
(cuDNN's convolution algorithm, cuBLAS's matrix kernel, inductor's generated kernels), taken
with ``torch.profiler`` on one extra call after the timing, never on a timed one.

On CUDA the fingerprint is the GPU kernels that ran (their names and how many times each), on a
CPU the operators that ran (the profiler sees no kernel inside a CPU operator). Where none can
be taken, a reason instead."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

# A compiled frame's number in this process ("Torch-Compiled Region: 2/0"): the order the rows
# ran in, which each process shuffles, not what ran.
_FRAME = re.compile(r"\b\d+/\d+\b")


def of(names: Counter[str], what: str) -> dict[str, Any]:
    """A fingerprint of the kernels (or operators) ``names`` counts: a short hash of every name
    with its count, the names, and ``what`` they are."""
    listed = sorted(f"{name} ×{n}" for name, n in names.items())
    digest = hashlib.sha256("\n".join(listed).encode()).hexdigest()[:12]
    return {"fingerprint": digest, "of": what, "names": listed}


def none(reason: str) -> dict[str, Any]:
    """No fingerprint, and why."""
    return {"fingerprint": None, "reason": reason}


def fingerprint(call: Callable[[], Any], device: str) -> dict[str, Any]:
    """The fingerprint of what ``call`` ran, or the reason there is none."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.device(device).type == "cuda"
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    try:
        with torch.no_grad(), profile(activities=activities) as prof:
            call()
            if cuda:
                torch.cuda.synchronize(device)
        events = prof.events()
    except Exception as exc:  # a profiler that cannot start here: the row keeps its figures
        return none(f"the profiler failed: {type(exc).__name__}: {exc}")
    if cuda:
        names = Counter(e.name for e in events if e.device_type == DeviceType.CUDA)
        what = "GPU kernels"
    else:
        names = Counter(_FRAME.sub("N/N", e.name) for e in events)
        what = "CPU operators"
    if not names:
        return none(f"the profiler saw no {what}")
    return of(names, what)
