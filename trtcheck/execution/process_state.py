"""The process-global state a case or a backend can change, taken and put back, so that each
case in a worker starts where a fresh process starts and each of its rows where its eager call
ran.

A worker runs its cases one after another in one Python process. Without this, what a case's
factory or a backend's compile sets (grad mode, the default dtype, TF32, deterministic mode,
Dynamo's caches and its automatic-dynamic marks, Torch-TensorRT's runtime modes) would carry into
the next case: a second ``nn.Sequential`` compiled by ``torch.compile`` is then a recompile of the
first one's frame, with dynamic shapes. Each setting is declared once in :data:`PROCESS_STATE`, with
how to read and write it; one whose module is not imported is left alone, since nothing has
changed it. What cannot be put back is named in docs/guide.md ("What each row starts from").
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class ProcessSetting:
    """One piece of process-global state: how to read it and how to write it back, and the
    module that must be imported already for it to be read (none for torch's own)."""

    name: str
    get: Callable[[], Any]
    set: Callable[[Any], None]
    needs: str = "torch"


def _cuda_matmul(flag: str) -> ProcessSetting:
    return ProcessSetting(f"torch.backends.cuda.matmul.{flag}",
                   lambda: getattr(torch.backends.cuda.matmul, flag),
                   lambda v: setattr(torch.backends.cuda.matmul, flag, v))


def _cudnn(flag: str) -> ProcessSetting:
    return ProcessSetting(f"torch.backends.cudnn.{flag}", lambda: getattr(torch.backends.cudnn, flag),
                   lambda v: setattr(torch.backends.cudnn, flag, v))


def _deterministic() -> tuple[bool, bool]:
    return torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()


def _set_deterministic(value: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


def _cuda_rng() -> list[torch.Tensor] | None:
    return torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None


def _set_cuda_rng(states: list[torch.Tensor] | None) -> None:
    if states is not None:
        torch.cuda.set_rng_state_all(states)


def _config(module: str) -> ProcessSetting:
    """A ``torch._dynamo.config``-style module: every option, as one dictionary; only the
    options that differ are written back, so that the others keep their defaults' standing."""
    def put(then: dict[str, Any]) -> None:
        config = sys.modules[module]
        now = config.get_config_copy()
        for key, value in then.items():
            if not _same(now.get(key), value):
                setattr(config, key, value)

    return ProcessSetting(module, lambda: sys.modules[module].get_config_copy(), put, needs=module)


def _numpy_rng() -> ProcessSetting:
    return ProcessSetting("numpy.random", lambda: sys.modules["numpy"].random.get_state(),
                   lambda v: sys.modules["numpy"].random.set_state(v), needs="numpy")


# Torch-TensorRT's runtime keeps two process-wide modes in module globals (mirrored into its C++
# runtime, when that is loaded); its output allocator and pre-allocated outputs are switched on
# a compiled module, which does not outlive its row.
_TRT_MODES = (("torch_tensorrt.runtime._cudagraphs", "_PY_RT_CUDAGRAPHS", "set_cudagraphs_mode"),
              ("torch_tensorrt.runtime._multi_device_safe_mode", "_PY_RT_MULTI_DEVICE_SAFE_MODE",
               "set_multi_device_safe_mode"))


def _trt_mode(module: str, variable: str, op: str) -> ProcessSetting:
    def put(value: Any) -> None:
        setattr(sys.modules[module], variable, value)
        features = getattr(sys.modules.get("torch_tensorrt"), "ENABLED_FEATURES", None)
        if getattr(features, "torch_tensorrt_runtime", False):
            getattr(torch.ops.tensorrt, op)(value)

    return ProcessSetting(f"{module}.{variable}", lambda: getattr(sys.modules[module], variable), put,
                   needs=module)


PROCESS_STATE: tuple[ProcessSetting, ...] = (
    ProcessSetting("grad mode", torch.is_grad_enabled, torch.set_grad_enabled),
    ProcessSetting("default dtype", torch.get_default_dtype, torch.set_default_dtype),
    # cpu is set back as no default device at all, as a fresh process has it, not as a mode
    # that places every new tensor on the CPU
    ProcessSetting("default device", torch.get_default_device,
            lambda v: torch.set_default_device(None if v == torch.device("cpu") else v)),
    ProcessSetting("float32 matmul precision", torch.get_float32_matmul_precision,
            torch.set_float32_matmul_precision),
    ProcessSetting("deterministic algorithms", _deterministic, _set_deterministic),
    ProcessSetting("intra-op threads", torch.get_num_threads, torch.set_num_threads),
    _cuda_matmul("allow_tf32"),
    _cuda_matmul("allow_fp16_reduced_precision_reduction"),
    _cuda_matmul("allow_bf16_reduced_precision_reduction"),
    _cudnn("enabled"), _cudnn("benchmark"), _cudnn("deterministic"), _cudnn("allow_tf32"),
    ProcessSetting("torch random state", torch.get_rng_state, torch.set_rng_state),
    ProcessSetting("CUDA random state", _cuda_rng, _set_cuda_rng),
    ProcessSetting("random", random.getstate, random.setstate, needs="random"),
    _numpy_rng(),
    _config("torch._dynamo.config"),
    _config("torch._inductor.config"),
    *(_trt_mode(*mode) for mode in _TRT_MODES),
)


@dataclass(frozen=True)
class Snapshot:
    """The value of each setting whose module was imported when it was taken."""

    values: Mapping[str, Any]

    def restore(self) -> None:
        """Put back every setting taken that has changed since, and reset Dynamo's in-memory
        state. A setting whose module was imported after the snapshot is left as it is."""
        for setting in PROCESS_STATE:
            if setting.name in self.values and setting.needs in sys.modules:
                then = self.values[setting.name]
                if not _same(setting.get(), then):
                    setting.set(then)
        reset_dynamo()


def take() -> Snapshot:
    """The settings as they are now."""
    return Snapshot({s.name: s.get() for s in PROCESS_STATE if s.needs in sys.modules})


def reset_dynamo() -> None:
    """Dynamo's caches, automatic-dynamic marks, recompile counts and graph-break record cleared,
    as in a fresh process (``torch.compiler.reset``); the on-disk compile caches stay, as they
    are what a user's second run has. Nothing to do where Dynamo was never imported."""
    if "torch._dynamo" in sys.modules:
        torch.compiler.reset()


def _same(now: Any, then: Any) -> bool:
    if isinstance(now, torch.Tensor) or isinstance(then, torch.Tensor):
        return isinstance(now, torch.Tensor) and isinstance(then, torch.Tensor) \
            and now.shape == then.shape and bool(torch.equal(now, then))
    if isinstance(now, (list, tuple)) and isinstance(then, (list, tuple)):
        return len(now) == len(then) and all(_same(a, b) for a, b in zip(now, then, strict=True))
    try:
        return bool(now == then)
    except (TypeError, ValueError, RuntimeError):  # numpy arrays inside numpy's RNG state
        return False


_FRESH: list[Snapshot] = []


def fresh() -> Snapshot:
    """The settings as this process had them before its first case (taken at the first call)."""
    if not _FRESH:
        _FRESH.append(take())
    return _FRESH[0]
