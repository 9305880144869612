"""Loops of the behaving stand-in: ``ILoop``, its boundary layers, and running a loop's body.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Written from TensorRT's loop API
(Graph/Loops.html of the Python API; operators/Loop.html): a trip limit, iterators (one slice of
a tensor per iteration), recurrences (a value carried from one iteration to the next, input 1 its
next value) and loop outputs (the last value, or every iteration's value concatenated along an
axis). The body is every layer that depends on an iterator or a recurrence of the loop.
Pages cited as ``Section/Page.html`` are of TensorRT's Python API reference,
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/.
"""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt import catalogue
from trtcheck.backends.lowering.trt.network import (
    ILayer,
    INetworkDefinition,
    ITensor,
    LayerError,
    Meta,
    StandInFailed,
    check_output,
)
from trtcheck.backends.lowering.trt.types import INTS, LayerType, LoopOutput, TripLimit


class _Boundary(ILayer):
    """A layer of a loop's boundary; the loop runs it (``run`` is never called on its own)."""

    def __init__(self, network: INetworkDefinition, inputs: list[ITensor | None], loop: ILoop) -> None:
        super().__init__(network, inputs)
        object.__setattr__(self, "loop", loop)

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        raise AssertionError("a loop's layers run with their loop")


@catalogue.layer(LayerType.TRIP_LIMIT)  # added by ILoop
class ITripLimitLayer(_Boundary):
    """``tensorrt.ITripLimitLayer``: a 0-D INT32/INT64 count (COUNT) or BOOL condition (WHILE)."""
    num_outputs_of = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins[:1]
        assert meta is not None
        if self.kind_of == TripLimit.COUNT and (meta.dtype not in INTS or meta.rank != 0):
            raise LayerError(f"Error Code 4: API Usage Error (ITripLimitLayer: a COUNT trip limit must be a "
                             f"0-D INT32 or INT64 tensor, got {meta.dtype.name} of shape {meta.shape})")
        return []


@catalogue.layer(LayerType.ITERATOR,
       attributes=("axis", "reverse"))  # added by ILoop
class IIteratorLayer(_Boundary):
    """``tensorrt.IIteratorLayer``: slice ``axis`` of its input, one index per iteration."""

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        meta = ins[0]
        assert meta is not None
        axis = self.axis % meta.rank
        return [Meta(meta.shape[:axis] + meta.shape[axis + 1:], meta.dtype)]


@catalogue.layer(LayerType.RECURRENCE)  # added by ILoop
class IRecurrenceLayer(_Boundary):
    """``tensorrt.IRecurrenceLayer``: input 0 the first value, input 1 the next iteration's."""

    def dependencies(self) -> list[ITensor | None]:
        return self.inputs[:1]

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        first = ins[0]
        assert first is not None
        following = ins[1] if len(ins) > 1 else None
        if following is not None and (following.dtype != first.dtype or following.rank != first.rank):
            raise LayerError("Error Code 4: API Usage Error (IRecurrenceLayer: the next value must have "
                             "the first value's type and rank)")
        return [Meta(first.shape, first.dtype)]


@catalogue.layer(LayerType.LOOP_OUTPUT,
       attributes=("axis",))  # added by ILoop
class ILoopOutputLayer(_Boundary):
    """``tensorrt.ILoopOutputLayer``: LAST_VALUE, or each iteration's value stacked along ``axis``
    (CONCATENATE, REVERSE), its length input 1 or the trip count."""

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        meta = ins[0]
        assert meta is not None
        if self.kind_of == LoopOutput.LAST_VALUE:
            return [meta]
        count = ins[1] if len(ins) > 1 and ins[1] is not None else (ins[2] if len(ins) > 2 else None)
        length = count.value[0] if count is not None and count.value and count.value[0] is not None else -1
        axis = self.axis % (meta.rank + 1)
        return [Meta((*meta.shape[:axis], length, *meta.shape[axis:]), meta.dtype)]


class ILoop:
    """``tensorrt.ILoop`` (Graph/Loops.html): adds the boundary layers of one loop."""

    def __init__(self, network: INetworkDefinition) -> None:
        self.network = network
        self.name = f"(Loop) [{len(network.layers)}]"
        self.trip: ITripLimitLayer | None = None
        self.members: list[_Boundary] = []
        self.body: list[ILayer] = []
        self.parent: ILoop | None = None

    def _add(self, layer: _Boundary, **attributes: Any) -> Any:
        for key, value in attributes.items():
            object.__setattr__(layer, key, value)
        self.members.append(layer)
        return self.network.add(layer)

    def add_trip_limit(self, tensor: ITensor, kind: Any) -> ITripLimitLayer:
        self.trip = self._add(ITripLimitLayer(self.network, [tensor], self), kind_of=kind)
        return self.trip

    def add_iterator(self, tensor: ITensor, axis: int = 0, reverse: bool = False) -> IIteratorLayer:
        return self._add(IIteratorLayer(self.network, [tensor], self), axis=axis, reverse=reverse)

    def add_recurrence(self, initial_value: ITensor) -> IRecurrenceLayer:
        return self._add(IRecurrenceLayer(self.network, [initial_value], self))

    def add_loop_output(self, tensor: ITensor, kind: Any, axis: int = 0) -> ILoopOutputLayer:
        # The trip limit's count rides as a third input, so that the output's length can be
        # inferred from it (an implementation detail: TensorRT's layer has two inputs).
        count = self.trip.inputs[0] if self.trip is not None else None
        return self._add(ILoopOutputLayer(self.network, [tensor, None, count], self), kind_of=kind, axis=axis)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("network", None)
        return state


@catalogue.network_method
def add_loop(network: INetworkDefinition) -> ILoop:
    """``INetworkDefinition.add_loop``."""
    loop = ILoop(network)
    network.loops.append(loop)
    return loop


def find_bodies(loops: list[ILoop], order: list[ILayer]) -> None:
    """Each loop's body (the layers, in ``order``, that depend on its iterators or recurrences; a
    loop inside it comes whole) and its parent loop; each layer's ``loop``, the innermost loop it
    belongs to."""
    member_of = {id(m): loop for loop in loops for m in loop.members}
    inside: dict[int, set[int]] = {}
    for loop in loops:
        carried = {out.uid for m in loop.members if isinstance(m, (IIteratorLayer, IRecurrenceLayer))
                   for out in m.outputs}
        body: set[int] = set()
        changed = True
        while changed:
            changed = False
            for layer in order:
                if id(layer) in body or member_of.get(id(layer)) is loop:
                    continue
                if any(t is not None and t.uid in carried for t in layer.inputs):
                    other = member_of.get(id(layer))
                    for each in (other.members if other is not None else [layer]):
                        body.add(id(each))
                        carried.update(out.uid for out in each.outputs)
                    changed = True
        loop.body = [layer for layer in order if id(layer) in body]
        inside[id(loop)] = body
    for loop in loops:
        outer = [other for other in loops if other is not loop
                 and all(id(m) in inside[id(other)] for m in loop.members)]
        loop.parent = min(outer, key=lambda other: len(other.body), default=None)
    for layer in order:
        owners = [loop for loop in loops if id(layer) in inside[id(loop)]]
        innermost = member_of.get(id(layer)) or min(owners, key=lambda loop: len(loop.body), default=None)
        object.__setattr__(layer, "loop", innermost)


def _child(layer: ILayer, level: ILoop | None) -> ILoop | None:
    """The loop directly inside ``level`` (None: the network) that ``layer`` belongs to, if any."""
    loop = getattr(layer, "loop", None)
    while loop is not None and loop is not level and loop.parent is not level:
        loop = loop.parent
    return None if loop is level else loop


def run_layers(layers: list[ILayer], values: dict[int, torch.Tensor], level: ILoop | None = None,
               metas: dict[int, Meta] | None = None) -> None:
    """Run ``layers`` (in order) over ``values``: each loop directly inside ``level`` runs whole, at
    its first output, when everything it reads is ready. With ``metas`` (each tensor's inferred
    meta, by uid), every output is checked against what ``infer`` said of it."""
    ran: set[int] = set()
    for layer in layers:
        child = _child(layer, level)
        if child is None:
            outs = run_one(layer, [None if t is None else values[t.uid] for t in layer.inputs], metas)
            for tensor, value in zip(layer.outputs, outs, strict=True):
                values[tensor.uid] = value
        elif isinstance(layer, ILoopOutputLayer) and layer.loop is child and id(child) not in ran:
            ran.add(id(child))
            run_loop(child, values, metas)


def run_one(layer: ILayer, ins: list[Any], metas: dict[int, Meta] | None = None) -> list[torch.Tensor]:
    """``layer.run``: an exception there, out of memory aside, is the stand-in's own failure on a
    layer its ``infer`` accepted (:class:`StandInFailed`), not what TensorRT would do; so is an
    output whose shape or type is not the one ``infer`` gave it (with ``metas``)."""
    try:
        outs = layer.run(ins)
    except (MemoryError, torch.OutOfMemoryError, StandInFailed):
        raise
    except Exception as exc:
        raise StandInFailed(layer, exc) from exc
    if metas is not None:
        for tensor, value in zip(layer.outputs, outs, strict=True):
            if tensor.uid in metas:
                check_output(layer, tensor.index, value, metas[tensor.uid])
    return outs


def run_loop(loop: ILoop, values: dict[int, torch.Tensor], metas: dict[int, Meta] | None = None) -> None:
    """Run ``loop`` over ``values`` (every tensor its boundary reads from outside is there); put its
    outputs in ``values``."""
    assert loop.trip is not None, "a loop needs a trip limit"
    trips = int(values[loop.trip.inputs[0].uid].reshape(()))  # type: ignore[union-attr]
    iterators = [m for m in loop.members if isinstance(m, IIteratorLayer)]
    recurrences = [m for m in loop.members if isinstance(m, IRecurrenceLayer)]
    outputs = [m for m in loop.members if isinstance(m, ILoopOutputLayer)]
    current = {r.outputs[0].uid: values[r.inputs[0].uid] for r in recurrences}  # type: ignore[union-attr]
    seen: dict[int, list[torch.Tensor]] = {o.outputs[0].uid: [] for o in outputs}
    for i in range(trips):
        values.update(current)
        for it in iterators:
            source = values[it.inputs[0].uid]  # type: ignore[union-attr]
            axis = it.axis % source.dim()
            values[it.outputs[0].uid] = source.select(axis, source.shape[axis] - 1 - i if it.reverse else i)
        run_layers(loop.body, values, loop, metas)
        for o in outputs:
            seen[o.outputs[0].uid].append(values[o.inputs[0].uid])  # type: ignore[union-attr]
        current = {r.outputs[0].uid: values[r.inputs[1].uid] for r in recurrences}  # type: ignore[union-attr]
    for o in outputs:
        stack = seen[o.outputs[0].uid]
        if o.kind_of == LoopOutput.LAST_VALUE:
            values[o.outputs[0].uid] = stack[-1] if stack else values[o.inputs[0].uid]  # type: ignore[union-attr]
            continue
        if o.kind_of == LoopOutput.REVERSE:
            stack = stack[::-1]
        axis = o.axis % (stack[0].dim() + 1) if stack else 0
        values[o.outputs[0].uid] = torch.stack(stack, dim=axis)
