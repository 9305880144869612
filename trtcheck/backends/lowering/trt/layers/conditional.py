"""The if-conditional of the behaving stand-in: ``IIfConditional`` and its layers.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Written from TensorRT's conditional API
(Graph/Conditional.html of the Python API; operators/If.html): a 0-D BOOL condition, inputs
entering the branches, and outputs taking the true branch's value where the condition holds.
Pages cited as ``Section/Page.html`` are of TensorRT's Python API reference,
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/.
"""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.catalogue import layer, network_method
from trtcheck.backends.lowering.trt.network import (
    ILayer,
    INetworkDefinition,
    ITensor,
    LayerError,
    Meta,
    PassThroughLayer,
)
from trtcheck.backends.lowering.trt.types import DataType, LayerType


@layer(LayerType.CONDITION)  # added by IIfConditional
class IConditionLayer(ILayer):
    """``tensorrt.IConditionLayer``: the 0-D BOOL condition of an if-conditional."""

    num_outputs_of = 0

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (cond,) = ins
        assert cond is not None
        if cond.dtype != DataType.BOOL or cond.rank != 0:
            raise LayerError(f"Error Code 4: API Usage Error (IConditionLayer: the condition must be a 0-D "
                             f"BOOL tensor, got {cond.dtype.name} of shape {cond.shape})")
        return []

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return []


@layer(LayerType.CONDITIONAL_INPUT)  # added by IIfConditional
class IIfConditionalInputLayer(PassThroughLayer):
    """``tensorrt.IIfConditionalInputLayer``: a tensor entering the conditional's branches."""



@layer(LayerType.CONDITIONAL_OUTPUT)  # added by IIfConditional
class IIfConditionalOutputLayer(ILayer):
    """``tensorrt.IIfConditionalOutputLayer``: the true branch's value where the condition holds,
    else the false branch's; both of one type and rank, a dimension they disagree on dynamic.
    Both branches are computed here (TensorRT runs only the one taken): a branch that could not
    run is an error here that TensorRT would not raise."""


    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        cond, then, other = ins
        assert then is not None and other is not None
        if then.dtype != other.dtype or then.rank != other.rank:
            raise LayerError("Error Code 4: API Usage Error (IIfConditionalOutputLayer: both branches must "
                             "give one type and rank)")
        if cond is not None and cond.value is not None and cond.value[0] is not None:
            return [then if cond.value[0] else other]
        return [Meta(tuple(a if a == b else -1 for a, b in zip(then.shape, other.shape, strict=True)),
                     then.dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [ins[1] if bool(ins[0]) else ins[2]]


class IIfConditional:
    """``tensorrt.IIfConditional`` (Graph/Conditional.html): a condition, inputs and outputs."""

    def __init__(self, network: INetworkDefinition) -> None:
        self.network = network
        self.name = f"(IfConditional) [{len(network.layers)}]"
        self.condition: ITensor | None = None

    def set_condition(self, condition: ITensor) -> IConditionLayer:
        self.condition = condition
        return self.network.add(IConditionLayer(self.network, [condition]))  # type: ignore[return-value]

    def add_input(self, input: ITensor) -> IIfConditionalInputLayer:
        return self.network.add(IIfConditionalInputLayer(self.network, [input]))  # type: ignore[return-value]

    def add_output(self, true_subgraph_output: ITensor,
                   false_subgraph_output: ITensor) -> IIfConditionalOutputLayer:
        layer = IIfConditionalOutputLayer(self.network, [self.condition, true_subgraph_output,
                                                         false_subgraph_output])
        return self.network.add(layer)  # type: ignore[return-value]


@network_method
def add_if_conditional(network: INetworkDefinition) -> IIfConditional:
    """``INetworkDefinition.add_if_conditional``."""
    return IIfConditional(network)
