"""The Shuffle layer of the behaving TensorRT stand-in (operators/Shuffle.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import all_known, permutation, volume_of, with_value
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import LayerType


class Permutation(list):
    """``tensorrt.Permutation`` (FoundationalTypes/Permutation.html): an order of dimensions."""


@layer(LayerType.SHUFFLE, "add_shuffle",
       attributes=("first_transpose", "reshape_dims", "second_transpose", "zero_is_placeholder"))
class IShuffleLayer(ILayer):
    """``tensorrt.IShuffleLayer`` (Layers.html#ishufflelayer; operators/Shuffle.html): first
    transpose, reshape (0 copies an input dimension when ``zero_is_placeholder``, -1 is inferred),
    second transpose; the reshape dimensions may come from input 1, a shape tensor."""


    def __init__(self, network: INetworkDefinition, input: ITensor) -> None:
        super().__init__(network, [input])
        self.first_transpose: Any = None
        self.second_transpose: Any = None
        self.reshape_dims: Any = None
        self.zero_is_placeholder = True

    def _target(self, ins: list[Meta | None]) -> list[int | None] | None:
        if len(ins) > 1 and ins[1] is not None:
            dims = ins[1]
            if dims.rank != 1 or dims.shape[0] < 0:
                raise LayerError("Error Code 4: API Usage Error (IShuffleLayer: the reshape dimensions "
                                 "must be a 1-D shape tensor of build-time length)")
            return list(dims.value) if dims.value is not None else [None] * dims.shape[0]
        if self.reshape_dims is None:
            return None
        return [int(d) for d in self.reshape_dims]

    def _reshape(self, shape: list[int], target: list[int | None]) -> list[int]:
        out: list[int] = []
        for i, d in enumerate(target):
            if d == 0 and self.zero_is_placeholder:
                if i >= len(shape):
                    raise LayerError("Error Code 4: API Usage Error (IShuffleLayer: a 0 placeholder has "
                                     "no input dimension to copy)")
                out.append(shape[i] if shape[i] >= 0 else -2)
            else:
                out.append(-2 if d is None else d)  # -2: known at run time; -1: inferred
        if out.count(-1) > 1:
            raise LayerError("Error Code 4: API Usage Error (IShuffleLayer: at most one -1 in the "
                             "reshape dimensions)")
        if -1 in out:
            # Dynamic dimensions copied by a 0 placeholder cancel out of the volume.
            copied = {i for i, d in enumerate(target) if d == 0 and self.zero_is_placeholder and shape[i] < 0}
            given = [d for i, d in enumerate(shape) if i not in copied]
            rest = [d for i, d in enumerate(out) if d != -1 and i not in copied]
            if all_known(given) and all(d >= 0 for d in rest):
                total, part = volume_of(given), volume_of(rest)
                if part == 0 or total % part:
                    raise LayerError(f"Error Code 4: API Usage Error (IShuffleLayer: cannot reshape "
                                     f"{tuple(shape)} to {tuple(out)})")
                out[out.index(-1)] = total // part
            else:
                out[out.index(-1)] = -2
        elif all_known(shape) and all(d >= 0 for d in out) and volume_of(out) != volume_of(shape):
            raise LayerError(f"Error Code 4: API Usage Error (IShuffleLayer: reshape changes the volume: "
                             f"{tuple(shape)} to {tuple(out)})")
        return [-1 if d == -2 else d for d in out]

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        meta = ins[0]
        assert meta is not None
        shape = [meta.shape[p] for p in permutation(self.first_transpose, meta.rank)]
        value = meta.value
        if permutation(self.first_transpose, meta.rank) != list(range(meta.rank)):
            value = None
        target = self._target(ins)
        if target is not None:
            shape = self._reshape(shape, target)
        second = permutation(self.second_transpose, len(shape))
        if second != list(range(len(shape))):
            value = None
        shape = [shape[p] for p in second]
        return [with_value(tuple(shape), meta.dtype, value)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        x = ins[0]
        x = x.permute(permutation(self.first_transpose, x.dim()))
        if len(ins) > 1 and ins[1] is not None:
            target: list[int] = [int(v) for v in ins[1].tolist()]
        elif self.reshape_dims is not None:
            target = [int(d) for d in self.reshape_dims]
        else:
            target = None  # type: ignore[assignment]
        if target is not None:
            shape = [x.shape[i] if d == 0 and self.zero_is_placeholder else d for i, d in enumerate(target)]
            x = x.reshape(shape)
        return [x.permute(permutation(self.second_transpose, x.dim()))]
