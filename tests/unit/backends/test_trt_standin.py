"""The behaving TensorRT stand-in (:mod:`trtcheck.backends.lowering.trt`): NOT TensorRT.

In-process: its ``Dims``, ``Weights`` and address mapping, shapes inferred symbolically by
TensorRT's rules, and refusals reported as TensorRT reports them (its logger, a failed build).
A real ``dynamo.compile`` (no dryrun) of each release through it is in
``tests/e2e/test_tensorrt.py``, which shares that module's subprocess per release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

from tests.unit.backends.standin_logger import Recorder, network
from trtcheck.backends.lowering.trt import engine, memory
from trtcheck.backends.lowering.trt.network import INetworkDefinition
from trtcheck.backends.lowering.trt.types import (
    ActivationType,
    DataType,
    Dims,
    ElementWiseOperation,
    GatherMode,
    LoopOutput,
    Severity,
    TripLimit,
    UnaryOperation,
    Weights,
)


def run(builder: engine.Builder, net: INetworkDefinition, inputs: dict[str, torch.Tensor],
        profile: dict[str, tuple[Any, Any, Any]] | None = None) -> list[torch.Tensor]:
    """Build, serialize, deserialize and run ``net`` as Torch-TensorRT's runtime does."""
    config = builder.create_builder_config()
    p = builder.create_optimization_profile()
    for name, bounds in (profile or {}).items():
        p.set_shape(name, *bounds)
    config.add_optimization_profile(p)
    blob = builder.build_serialized_network(net, config)
    assert blob is not None
    cuda_engine = engine.Runtime(builder.logger).deserialize_cuda_engine(blob)
    assert cuda_engine is not None
    context = cuda_engine.create_execution_context()
    for name, x in inputs.items():
        assert context.set_input_shape(name, tuple(x.shape))
        context.set_tensor_address(name, x.data_ptr())
    assert context.infer_shapes() == []
    outputs = []
    for i in range(len(inputs), cuda_engine.num_io_tensors):
        name = cuda_engine.get_tensor_name(i)
        out = torch.empty(tuple(context.get_tensor_shape(name)),
                          dtype={DataType.FLOAT: torch.float32, DataType.INT64: torch.int64,
                                 DataType.INT32: torch.int32, DataType.BOOL: torch.bool}[
                              cuda_engine.get_tensor_dtype(name)])
        context.set_tensor_address(name, out.data_ptr())
        outputs.append(out)
    assert context.execute_async_v3(0)
    return outputs


def test_dims_take_item_assignment_and_slice_to_tuples() -> None:
    dims = Dims([2, -1, 4])
    dims[1] = 3
    assert dims == (2, 3, 4) and dims == [2, 3, 4] and len(dims) == 3
    assert dims[1:] == (3, 4) and isinstance(dims[1:], tuple)
    assert list(dims) == [2, 3, 4] and dims[-1] == 4
    assert len(Dims()) == 0
    with pytest.raises(ValueError, match="at most 8"):
        Dims(range(9))


def test_weights_copy_host_memory_and_numpy() -> None:
    value = torch.arange(6, dtype=torch.int64)
    weights = Weights(DataType.INT64, value.data_ptr(), 6)
    value[0] = 100  # TensorRT reads weights at build time: the stand-in copies them when made
    assert weights.tensor.tolist() == [0, 1, 2, 3, 4, 5] and weights.size == 6 and weights.nbytes == 48
    assert Weights(np.ones(3, dtype=np.float16)).dtype == DataType.HALF
    with pytest.raises(TypeError, match="float64"):
        Weights(np.ones(3))


def test_address_maps_to_the_same_memory_without_a_copy() -> None:
    base = torch.zeros(2, 3)
    view = memory.view(base.data_ptr(), (2, 3), torch.float32, torch.device("cpu"))
    view[1, 2] = 7.0
    assert base[1, 2] == 7.0 and view.data_ptr() == base.data_ptr()
    halves = torch.zeros(4, dtype=torch.bfloat16)
    memory.view(halves.data_ptr(), (4,), torch.bfloat16, torch.device("cpu"))[0] = 1.5
    assert halves[0] == 1.5


def test_shapes_are_inferred_symbolically_with_minus_one() -> None:
    builder, net, _ = network()
    x = net.add_input("x", DataType.FLOAT, (-1, 3, 4))
    shape = net.add_shape(x).get_output(0)
    assert shape.shape == (3,) and shape.dtype == DataType.INT64
    batch = net.add_gather(shape, net.add_constant((1,), np.array([0], dtype=np.int64)).get_output(0), 0)
    twelve = net.add_constant((1,), np.array([12], dtype=np.int64)).get_output(0)
    dims = net.add_concatenation([batch.get_output(0), twelve]).get_output(0)
    flat = net.add_shuffle(x)
    flat.set_input(1, dims)
    assert flat.get_output(0).shape == (-1, 12)
    first = net.add_slice(flat.get_output(0), (0, 0), (1, 12), (1, 1)).get_output(0)
    assert first.shape == (1, 12)  # a select of index 0 holds at the min shape: no probing
    net.mark_output(first)
    (out,) = run(builder, net, {"x": torch.arange(24.0).reshape(2, 3, 4)}, {"x": ((1, 3, 4), (2, 3, 4),
                                                                                 (8, 3, 4))})
    assert out.tolist() == [list(map(float, range(12)))]


def test_integer_division_truncates_and_floor_division_floors() -> None:
    builder, net, _ = network()
    a = net.add_input("a", DataType.INT64, (4,))
    b = net.add_input("b", DataType.INT64, (4,))
    net.mark_output(net.add_elementwise(a, b, ElementWiseOperation.DIV).get_output(0))
    net.mark_output(net.add_elementwise(a, b, ElementWiseOperation.FLOOR_DIV).get_output(0))
    div, floor = run(builder, net, {"a": torch.tensor([7, -7, 7, -7]), "b": torch.tensor([2, 2, -2, -2])})
    assert div.tolist() == [3, -3, -3, 3] and floor.tolist() == [3, -4, -4, 3]


def test_a_refused_type_is_logged_and_the_build_fails() -> None:
    """Strongly typed: an element-wise layer takes one type; TensorRT logs the refusal at ERROR
    and the build returns None (Torch-TensorRT then fails its build)."""
    builder, net, logger = network()
    x = net.add_input("x", DataType.FLOAT, (2,))
    i = net.add_input("i", DataType.INT32, (2,))
    net.mark_output(net.add_elementwise(x, i, ElementWiseOperation.SUM).get_output(0))
    assert builder.build_serialized_network(net, builder.create_builder_config()) is None
    assert logger.messages and logger.messages[0][0] == Severity.ERROR
    assert "inputs must have the same type" in logger.messages[0][1]
    assert "FLOAT, INT32" in logger.messages[0][1]


@pytest.mark.parametrize(("build", "words"), [
    (lambda net, x: net.add_activation(net.add_cast(x, DataType.INT32).get_output(0),
                                       ActivationType.RELU), "RELU input has type INT32"),
    (lambda net, x: net.add_gather(x, x, 0), "indices has type FLOAT"),
    (lambda net, x: net.add_unary(x, UnaryOperation.NOT), "NOT input has type FLOAT"),
], ids=["activation-int32", "gather-float-indices", "not-float"])
def test_layer_type_limits_are_refused(build: Any, words: str) -> None:
    builder, net, logger = network()
    x = net.add_input("x", DataType.FLOAT, (2,))
    net.mark_output(build(net, x).get_output(0))
    assert builder.build_engine_with_config(net, builder.create_builder_config()) is None
    assert any(words in message for _, message in logger.messages), logger.messages


def test_a_shape_outside_the_profile_is_refused_at_run_time() -> None:
    builder, net, logger = network()
    x = net.add_input("x", DataType.FLOAT, (-1, 2))
    net.mark_output(net.add_identity(x).get_output(0))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 2), (2, 2), (4, 2))
    config.add_optimization_profile(profile)
    cuda_engine = builder.build_engine_with_config(net, config)
    assert cuda_engine is not None and cuda_engine.get_tensor_shape("x") == (-1, 2)
    context = cuda_engine.create_execution_context()
    assert not context.set_input_shape("x", (5, 2))
    assert "does not satisfy any optimization profiles" in logger.messages[-1][1]


def test_gather_nd_and_element_modes() -> None:
    builder, net, _ = network()
    data = net.add_input("d", DataType.FLOAT, (2, 3))
    index = net.add_input("i", DataType.INT64, (2, 1))
    nd = net.add_gather_v2(data, index, GatherMode.ND)
    assert nd.get_output(0).shape == (2, 3)
    element = net.add_gather_v2(data, index, GatherMode.ELEMENT)
    element.axis = 1
    assert element.get_output(0).shape == (2, 1)
    net.mark_output(nd.get_output(0))
    net.mark_output(element.get_output(0))
    d = torch.arange(6.0).reshape(2, 3)
    i = torch.tensor([[1], [0]])
    got_nd, got_element = run(builder, net, {"d": d, "i": i})
    assert torch.equal(got_nd, d[[1, 0]]) and torch.equal(got_element, torch.gather(d, 1, i))


def test_a_loop_runs_its_body_once_per_trip() -> None:
    """A running sum along axis 0 as Torch-TensorRT's cumsum builds it: an iterator, a
    recurrence and a concatenated loop output whose length is the trip count."""
    builder, net, _ = network()
    x = net.add_input("x", DataType.FLOAT, (-1, 3))
    count = net.add_gather(net.add_shape(x).get_output(0),
                           net.add_constant((), np.array(0, dtype=np.int64)).get_output(0), 0).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, TripLimit.COUNT)
    row = loop.add_iterator(x, 0).get_output(0)
    running = loop.add_recurrence(net.add_constant((3,), np.zeros(3, dtype=np.float32)).get_output(0))
    total = net.add_elementwise(running.get_output(0), row, ElementWiseOperation.SUM).get_output(0)
    running.set_input(1, total)
    out = loop.add_loop_output(total, LoopOutput.CONCATENATE, 0).get_output(0)
    assert out.shape == (-1, 3)
    net.mark_output(out)
    x_value = torch.arange(12.0).reshape(4, 3)
    (got,) = run(builder, net, {"x": x_value}, {"x": ((1, 3), (4, 3), (8, 3))})
    assert torch.equal(got, x_value.cumsum(0))


class _Seen(TorchDispatchMode):
    """A caller's dispatch mode that records every op it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _constant_network(builder: engine.Builder) -> INetworkDefinition:
    """``x + [0, 1, 2]`` over a (2, 3) float input, its constant's weights made as the caller makes them."""
    net = builder.create_network(1 << 1)
    x = net.add_input("x", DataType.FLOAT, (2, 3))
    constant = net.add_constant((1, 3), Weights(np.arange(3, dtype=np.float32)))
    total = net.add_elementwise(x, constant.get_output(0), ElementWiseOperation.SUM)
    assert total.get_output(0).shape == (2, 3)  # inferred inside the caller's mode
    net.mark_output(total.get_output(0))
    return net


def _build_and_run(builder: engine.Builder, mode: Any, x: torch.Tensor, out: torch.Tensor) -> None:
    """Within ``mode``: build ``_constant_network``, serialize, deserialize, serialize and
    deserialize again; then run the engine on ``x`` into ``out`` (within ``mode`` too unless it
    is a FakeTensorMode, whose tensors have no memory to run on)."""
    config = builder.create_builder_config()
    config.add_optimization_profile(builder.create_optimization_profile())
    with mode:
        blob = builder.build_serialized_network(_constant_network(builder), config)
        assert blob is not None
        built = engine.Runtime(builder.logger).deserialize_cuda_engine(blob)
        assert built is not None
        again = engine.Runtime(builder.logger).deserialize_cuda_engine(built.serialize())
        assert again is not None
        context = again.create_execution_context()
        context.set_tensor_address("x", x.data_ptr())
        context.set_tensor_address(again.get_tensor_name(1), out.data_ptr())
        if not isinstance(mode, FakeTensorMode):
            assert context.execute_async_v3(0)
    if isinstance(mode, FakeTensorMode):
        assert context.execute_async_v3(0)


def test_a_network_with_a_constant_builds_serializes_and_deserializes_in_a_fake_tensor_mode() -> None:
    """Torch-TensorRT's torch.compile path converts inside Dynamo's FakeTensorMode: the stand-in's
    weights, shape inference and plans are real tensors all the same, and the engine runs after."""
    x, out = torch.ones(2, 3), torch.empty(2, 3)
    _build_and_run(engine.Builder(Recorder()), FakeTensorMode(), x, out)
    assert torch.equal(out, x + torch.arange(3.0))


def test_the_callers_dispatch_mode_sees_none_of_the_stand_ins_work() -> None:
    x, out = torch.ones(2, 3), torch.empty(2, 3)
    seen = _Seen()
    _build_and_run(engine.Builder(Recorder()), seen, x, out)
    assert seen.ops == []
    assert torch.equal(out, x + torch.arange(3.0))
