"""The probe of the machine and software a run runs on (versions, device, driver, commit), which
its record's ``environment`` holds, and the one way trtcheck asks git. It imports torch for a
GPU's name and runs git and nvidia-smi, so it lives here rather than in ``results/``."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import trtcheck
from trtcheck import stack
from trtcheck.core.build import torch_build
from trtcheck.errors import UsageError


def version_of(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def git(where: Path, *args: str, timeout: float = 300) -> str:
    """``git ARGS`` run in ``where``, its output stripped; UsageError when git is missing, takes
    longer than ``timeout`` seconds or fails (a caller that can do without the answer catches
    it, as :func:`describe` does)."""
    try:
        out = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True,
                             timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"git {' '.join(args)}: {exc}") from None
    if out.returncode != 0:
        raise UsageError(f"git {' '.join(args)}: {out.stderr.strip() or 'failed'}")
    return out.stdout.strip()


def _git_or_none(where: Path, *args: str) -> str | None:
    """A record's commit and its time are None outside a repository (or without git)."""
    try:
        return git(where, *args, timeout=10) or None
    except UsageError:
        return None


def gpu_driver() -> str | None:
    """The NVIDIA driver version, from ``nvidia-smi``; None where it cannot be asked."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    return lines[0] if out.returncode == 0 and lines else None


def kernel_settings() -> dict[str, Any]:
    """The settings that steer which kernels cuDNN and cuBLAS choose: cuDNN's benchmark mode,
    TF32 in convolutions and matrix products, deterministic algorithms, cuBLAS's workspace."""
    import torch

    return {"cudnn_benchmark": torch.backends.cudnn.benchmark,
            "cudnn_deterministic": torch.backends.cudnn.deterministic,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG")}


def describe(device: str, where: Path) -> dict[str, Any]:
    """The versions, device and commit of a run; torch is loaded only for a GPU's name (and where
    its build cannot be read without it)."""
    build = torch_build()
    cuda = device.startswith("cuda")
    name = None
    if cuda or not build:
        import torch

        build = {"__version__": torch.__version__, "cuda": torch.version.cuda}
        name = torch.cuda.get_device_name(torch.device(device)) if cuda else None
    versions = {"torch": build["__version__"],
                "torch_tensorrt": version_of("torch-tensorrt") or version_of("torch_tensorrt"),
                "tensorrt": version_of("tensorrt")}
    return {
        "trtcheck": trtcheck.__version__,
        **versions,
        # where each came from (the runner's environment or installed by the Action), and a
        # Torch-TensorRT built for another torch minor
        "sources": stack.sources(),
        "stack_warnings": stack.pairing_warnings(versions),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": device,
        "device_name": name or platform.processor() or "cpu",
        "cuda": build["cuda"],
        "driver": gpu_driver() if cuda else None,
        # what steers the kernels CUDA's libraries choose, as a process starts (a zoo file may
        # change them: each row's kernels record those its calls ran under)
        "kernel_settings": kernel_settings() if cuda else None,
        "git_commit": _git_or_none(where, "rev-parse", "HEAD"),
        # the commit's time (ISO 8601), which ``trtcheck history`` orders records by
        "git_commit_time": _git_or_none(where, "show", "-s", "--format=%cI", "HEAD"),
    }
