"""Refittable weights of the behaving stand-in: their names, weight stripping, and ``Refitter``.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Written from TensorRT's Python API
reference (Core/Refitter.html, Core/SerializationConfig.html, Core/BuilderConfig.html) and its
guide's "Refitting an Engine": an engine built with ``BuilderFlag.REFIT`` (or ``REFIT_IDENTICAL``)
is refittable; a refitter replaces its weights by name (``set_named_weights``), rejecting a name
that is not one of them or weights of another count or type, and ``refit_cuda_engine`` fails while
``get_missing_weights`` is not empty. A weight-stripped plan (``BuilderFlag.STRIP_PLAN``, or
``SerializationFlag.EXCLUDE_WEIGHTS``) holds no values for its refittable weights: they are all
missing, and the engine cannot run until a refit supplies them.

Where the documentation is silent, the stand-in decides, as follows. A weight is named
``"<layer name> <WeightsRole name>"`` (the guide says only "based on the related layer names and
weight roles"; this is the form Torch-TensorRT's refit map uses). The refittable weights are those
each layer's class declares with its weight roles where it registers (:mod:`.catalogue`): constant,
convolution and deconvolution layers and a scale layer's scale and shift (WeightsRole has no role
for its power), of a float type (FLOAT, HALF, BF16):
integer and boolean weights hold indices and shapes, which the stand-in takes to be folded into
the plan, so they are neither listed nor stripped. A stripped weight is kept as a tensor on
PyTorch's ``meta`` device: its shape and type, no values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from trtcheck.backends.lowering.trt.catalogue import LAYERS
from trtcheck.backends.lowering.trt.modes import outside_modes
from trtcheck.backends.lowering.trt.network import ILayer
from trtcheck.backends.lowering.trt.types import (
    FLOATS,
    FROM_TORCH,
    ILogger,
    Severity,
    TensorLocation,
    Weights,
    weights_tensor,
)


class _Engine(Protocol):
    """What a refitter needs of ``engine.ICudaEngine`` (which imports this module)."""

    plan: Any
    refittable: bool

    def refitted(self) -> None: ...

@dataclass(frozen=True)
class Slot:
    """One refittable weight: the layer and attribute holding it, and its role."""

    layer: ILayer
    attribute: str
    role: Any

    @property
    def name(self) -> str:
        return f"{self.layer.name} {self.role.name}"

    @property
    def value(self) -> torch.Tensor:
        return getattr(self.layer, self.attribute)

    @property
    def stripped(self) -> bool:
        return self.value.device.type == "meta"

    def put(self, value: torch.Tensor) -> None:
        # object.__setattr__: a built layer's weights change no network (ILayer.__setattr__).
        object.__setattr__(self.layer, self.attribute, value)


def slots(layers: list[ILayer]) -> dict[str, Slot]:
    """The refittable weights of ``layers``, by name, in layer order."""
    return {slot.name: slot for slot in _slots(layers)}


def _slots(layers: list[ILayer]) -> Iterator[Slot]:
    for layer in layers:
        registered = LAYERS.get(type(layer))
        for attribute, role in registered.roles if registered is not None else ():
            value = getattr(layer, attribute, None)
            if isinstance(value, torch.Tensor) and value.numel() and FROM_TORCH.get(value.dtype) in FLOATS:
                yield Slot(layer, attribute, role)


def strip(layers: list[ILayer]) -> None:
    """Drop the values of the refittable weights of ``layers``, keeping their shapes and types."""
    for slot in _slots(layers):
        slot.put(torch.empty_like(slot.value, device="meta"))


def stripped(layers: list[ILayer]) -> list[str]:
    """The names of the refittable weights of ``layers`` that hold no values."""
    return [slot.name for slot in _slots(layers) if slot.stripped]


class Refitter:
    """``tensorrt.Refitter`` (Core/Refitter.html): new values for an engine's refittable weights,
    given by name and applied together by :meth:`refit_cuda_engine`."""

    @outside_modes
    def __init__(self, engine: _Engine, logger: ILogger | None) -> None:
        self.engine = engine
        self.logger = logger
        self.max_threads = 1
        self.weights_validation = True
        self.error_recorder: Any = None
        self._slots = slots(engine.plan.layers) if engine.refittable else {}
        self._given: dict[str, torch.Tensor] = {}
        if not engine.refittable:
            self._error("IRefitter: Error Code 3: API Usage Error (the engine is not refittable: it was "
                        "built without BuilderFlag.REFIT or REFIT_IDENTICAL)")

    def _error(self, message: str) -> None:
        if self.logger is not None:
            self.logger.log(Severity.ERROR, message)

    def get_all_weights(self) -> list[str]:
        """The names of every refittable weight."""
        return list(self._slots)

    def get_all(self) -> tuple[list[str], list[Any]]:
        """The layers with refittable weights and those weights' roles."""
        return [s.layer.name for s in self._slots.values()], [s.role for s in self._slots.values()]

    def get_missing_weights(self) -> list[str]:
        """The weights a refit still needs: those of a weight-stripped plan not given yet."""
        return [name for name, slot in self._slots.items() if slot.stripped and name not in self._given]

    def get_missing(self) -> tuple[list[str], list[Any]]:
        missing = [self._slots[name] for name in self.get_missing_weights()]
        return [s.layer.name for s in missing], [s.role for s in missing]

    @outside_modes
    def set_named_weights(self, name: str, weights: Weights, location: Any = TensorLocation.HOST) -> bool:
        """Give ``name`` new values; False (and an error logged) for a name that is no refittable
        weight, or weights of another count or type than the engine's."""
        slot = self._slots.get(name)
        if slot is None:
            self._error(f"IRefitter::setNamedWeights: Error Code 3: API Usage Error ({name} is not the name "
                        "of a refittable weight of the engine)")
            return False
        tensor, dtype = weights_tensor(weights)
        want = FROM_TORCH[slot.value.dtype]
        if tensor.numel() != slot.value.numel() or dtype != want:
            self._error(f"IRefitter::setNamedWeights: Error Code 3: API Usage Error ({name}: weights of "
                        f"{dtype.name} x {tensor.numel()} for weights of {want.name} x {slot.value.numel()})")
            return False
        self._given[name] = tensor.clone()
        return True

    @outside_modes
    def get_named_weights(self, name: str) -> Weights:
        """The values given for ``name`` (empty weights when none were)."""
        made = Weights()
        if name in self._given:
            made.tensor, made.dtype = self._given[name], FROM_TORCH[self._given[name].dtype]
        return made

    @outside_modes
    def refit_cuda_engine(self) -> bool:
        """Put the given values in the engine; False (an error logged) while weights are missing."""
        if not self.engine.refittable:
            self._error("IRefitter::refitCudaEngine: Error Code 3: API Usage Error (the engine is not "
                        "refittable)")
            return False
        missing = self.get_missing_weights()
        if missing:
            self._error(f"IRefitter::refitCudaEngine: Error Code 3: API Usage Error ({len(missing)} weights "
                        f"missing: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''})")
            return False
        for name, tensor in self._given.items():
            slot = self._slots[name]
            device = torch.device("cpu") if slot.stripped else slot.value.device
            slot.put(tensor.reshape(slot.value.shape).to(device))
        self._given.clear()
        self.engine.refitted()
        return True

    def refit_cuda_engine_async(self, stream: Any) -> bool:
        return self.refit_cuda_engine()
