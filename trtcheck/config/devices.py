"""The device a run uses: ``cpu``, ``auto`` or a CUDA device, or a list of distinct GPUs; torch is
loaded only where the installed build does not answer."""

from __future__ import annotations

from trtcheck.config.validation import COMMAND_LINE, setting_name
from trtcheck.core.build import cpu_only
from trtcheck.errors import UsageError


def resolve_devices(text: str, source: str = COMMAND_LINE) -> tuple[str, ...]:
    """One device, or a comma-separated list of distinct CUDA devices (one worker each)."""
    devices = tuple(resolve_device(d.strip()) for d in text.split(","))
    if len(devices) > 1:
        if any(not d.startswith("cuda:") for d in devices):
            raise UsageError(f"{setting_name(source, 'device')}: a list names CUDA devices with their "
                             f"index (cuda:0,cuda:1), got {text!r}")
        if len(set(devices)) < len(devices):
            raise UsageError(f"{setting_name(source, 'device')}: {text!r} lists a GPU twice; two cases "
                             "timed on one GPU at once would disturb each other's latency")
    return devices


def resolve_device(device: str) -> str:
    if device == "cpu" or (device == "auto" and cpu_only()):  # answered without loading torch
        return "cpu"
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise UsageError(f"invalid device {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"device {device!r} requested but CUDA is not available")
    return str(dev)
