"""The lowering host's reading of Torch-TensorRT's errors and of the networks its converters build
(over the behaving stand-in's network, built by hand), in-process (no release loaded)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from trtcheck.backends.lowering.converted import (
    _raise_no_fp64,
    converter_stage,
    engine_layers,
    int64_narrowed,
    summarize,
)
from trtcheck.backends.lowering.release import Rejected
from trtcheck.backends.lowering.trt import engine
from trtcheck.backends.lowering.trt.types import DataType, TopKOperation


@pytest.mark.parametrize("message", [
    # 2.13's and 2.14's Python TRTEngine
    "Dtype mismatch for input x. Expect torch.float32, got torch.float64.",
    # 2.12's PythonTorchTensorRTModule (seen on the H200 for a complex128 RoPE)
    "Dtype mismatch for 0th input(x). Expect dtype.f32, got torch.float64.",
    "TensorRT does not support float64 (double) precision. To resolve this, please set "
    "truncate_double=True",
])
def test_every_release_s_float64_refusal_is_unsupported(message: str) -> None:
    with pytest.raises(Rejected, match=r"^TensorRT has no FP64 and truncate_double is off: "):
        _raise_no_fp64(AssertionError(message))


@pytest.mark.parametrize("message", [
    "Dtype mismatch for 0th input(x). Expect dtype.f32, got torch.int64.",
    "value cannot be converted to type int32 without overflow",
])
def test_other_errors_are_left_to_the_row(message: str) -> None:
    _raise_no_fp64(RuntimeError(message))  # returns: the caller re-raises it as it was


def _node(graph: torch.fx.Graph, target: Any, dtype: torch.dtype, name: str) -> torch.fx.Node:
    node = graph.create_node("call_function", target, name=name)
    node.meta["val"] = torch.empty(4, dtype=dtype)
    return node


def test_an_int64_result_built_as_int32_is_named() -> None:
    """argmax's converter returns TopK's INT32 indices for the graph's int64 result."""
    net = engine.Builder(None).create_network(1 << 1)
    x = net.add_input("x", DataType.FLOAT, (2, 4))
    topk = net.add_topk(x, TopKOperation.MAX, 1, 1 << 1)
    node = _node(torch.fx.Graph(), torch.ops.aten.argmax.default, torch.int64, "argmax")
    assert int64_narrowed(node, topk.get_output(1), net, 0, set()) == [
        "int64 narrowed to int32 inside the engine by argmax (aten.argmax.default): its int64 "
        "result is built as int32 (exact while |value| < 2**31)"]


def test_a_cast_of_an_int64_value_is_named_with_its_layer_and_the_node_s_own_cast_is_not() -> None:
    net = engine.Builder(None).create_network(1 << 1)
    ids = net.add_input("ids", DataType.INT64, (4,))
    values = {ids}  # the graph's int64 values
    start = net.num_layers
    cast = net.add_cast(net.add_identity(ids).get_output(0), DataType.FLOAT)
    cast.name = "ids_as_float"
    graph = torch.fx.Graph()
    # cumsum's converter adds in float32: a narrowing of the int64 values it sums
    summed = _node(graph, torch.ops.aten.cumsum.default, torch.int64, "cumsum")
    (note,) = int64_narrowed(summed, net.add_cast(cast.get_output(0), DataType.INT64).get_output(0),
                             net, start, values)
    assert note == ("int64 narrowed to float32 inside the engine by cumsum (aten.cumsum.default): "
                    "layer 'ids_as_float' casts an int64 input to float32 (exact while |value| <= "
                    "2**24)")
    # ids.float(): the graph's own conversion, not the converter's
    converted = _node(graph, torch.ops.aten._to_copy.default, torch.float32, "to")
    assert int64_narrowed(converted, cast.get_output(0), net, start, values) == []
    # a BOOL cast (a condition made from int64 values) narrows nothing
    later = net.num_layers
    net.add_cast(ids, DataType.BOOL)
    where = _node(graph, torch.ops.aten.where.self, torch.int64, "where")
    assert int64_narrowed(where, None, net, later, values) == []
    # nor is a cast of the int64 dimensions a shape layer reads (expand's target shape)
    later = net.num_layers
    net.add_cast(net.add_shape(ids).get_output(0), DataType.INT32)
    expand = _node(graph, torch.ops.aten.expand.default, torch.int64, "expand")
    assert int64_narrowed(expand, None, net, later, values) == []
    # nor a cast of an int64 constant the converter made itself, not a value of the graph
    later = net.num_layers
    made = net.add_constant((3,), np.array([0, 1, 2], dtype=np.int64)).get_output(0)
    net.add_cast(made, DataType.INT32)
    assert int64_narrowed(expand, None, net, later, values) == []
    assert int64_narrowed(expand, None, net, later, values | {made})  # were it one, it would be


def test_narrowings_are_summarized() -> None:
    assert summarize(["a", "b", "a", "c", "d", "e"]) == [
        "a", "b", "c", "int64 narrowed inside the engine by 2 more nodes"]


class _RuntimeModule(torch.nn.Module):
    """Torch-TensorRT 2.12's Python runtime module: it holds its ICudaEngine as ``engine``."""

    def __init__(self, cuda_engine: engine.ICudaEngine) -> None:
        super().__init__()
        self.engine = cuda_engine


def test_an_engine_s_layers_are_read_through_its_engine_inspector() -> None:
    builder = engine.Builder(None)
    net = builder.create_network(1 << 1)
    x = net.add_input("x", DataType.FLOAT, (2, 4))
    topk = net.add_topk(x, TopKOperation.MAX, 1, 1 << 1)
    topk.name = "best"
    net.mark_output(net.add_identity(topk.get_output(0)).get_output(0))
    config = builder.create_builder_config()
    config.add_optimization_profile(builder.create_optimization_profile())
    built = engine.Runtime(None).deserialize_cuda_engine(builder.build_serialized_network(net, config))
    assert built is not None
    module = torch.nn.Module()
    module.add_module("_run_on_acc_0", _RuntimeModule(built))
    module.add_module("_run_on_gpu_1", torch.nn.Identity())
    layers = engine_layers(module)
    assert layers == {"_run_on_acc_0": ["best (TOPK)", "(Identity) [1] (IDENTITY)"]}
    assert converter_stage(layers) == ("converters: 1 engine(s), 2 layers (TOPK, IDENTITY), built and run "
                                       "by the TensorRT stand-in")
