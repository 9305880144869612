"""The behaving TensorRT stand-in's catalogue of layers (:mod:`trtcheck.backends.lowering.trt.catalogue`):
NOT TensorRT.

In-process: every registered layer is built in a small network and run, and what its ``run`` returns
has the shapes and types its ``infer`` predicted; a layer or ``add_*`` method the stand-in lacks says
so and names what it has.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

from trtcheck.backends.lowering.trt import catalogue, engine
from trtcheck.backends.lowering.trt.install import make_tensorrt
from trtcheck.backends.lowering.trt.layers.loop import find_bodies, run_layers
from trtcheck.backends.lowering.trt.network import INetworkDefinition, ITensor
from trtcheck.backends.lowering.trt.plugins.registry import PluginFieldCollection, get_plugin_registry
from trtcheck.backends.lowering.trt.types import (
    FROM_TORCH,
    TORCH,
    ActivationType,
    AttentionNormalizationOp,
    DataType,
    ElementWiseOperation,
    FillOperation,
    LoopOutput,
    MatrixOperation,
    PoolingType,
    ReduceOperation,
    ScaleMode,
    ScatterMode,
    TensorRTPhase,
    TopKOperation,
    TripLimit,
    UnaryOperation,
)

Example = Callable[[INetworkDefinition, dict[str, torch.Tensor]], None]


def _in(net: INetworkDefinition, values: dict[str, torch.Tensor], name: str, value: torch.Tensor) -> ITensor:
    """A network input of ``value``'s static shape and type, ``value`` its value in the run."""
    values[name] = value
    return net.add_input(name, FROM_TORCH[value.dtype], tuple(value.shape))


def _const(net: INetworkDefinition, value: np.ndarray) -> ITensor:
    return net.add_constant(value.shape, value).get_output(0)


def _x(net: INetworkDefinition, values: dict[str, torch.Tensor], *shape: int) -> ITensor:
    return _in(net, values, "x", torch.randn(shape, generator=torch.Generator().manual_seed(0)))


def _loop(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    """cumsum over axis 0, as Torch-TensorRT's converter builds it."""
    x = _x(net, values, 3, 2)
    loop = net.add_loop()
    loop.add_trip_limit(_const(net, np.array(3, dtype=np.int64)), TripLimit.COUNT)
    row = loop.add_iterator(x, 0).get_output(0)
    running = loop.add_recurrence(_const(net, np.zeros(2, dtype=np.float32)))
    total = net.add_elementwise(running.get_output(0), row, ElementWiseOperation.SUM).get_output(0)
    running.set_input(1, total)
    loop.add_loop_output(total, LoopOutput.CONCATENATE, 0)
    loop.add_loop_output(total, LoopOutput.LAST_VALUE)


def _conditional(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    x = _x(net, values, 2, 3)
    branch = net.add_if_conditional()
    branch.set_condition(_in(net, values, "c", torch.tensor(True)))
    entered = branch.add_input(x).get_output(0)
    negated = net.add_unary(entered, UnaryOperation.NEG).get_output(0)
    branch.add_output(negated, entered)


def _slice(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    net.add_slice(_x(net, values, 4, 5), (1, 0), (2, 3), (2, 1))


def _shuffle(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    layer = net.add_shuffle(_x(net, values, 2, 3, 4))
    layer.first_transpose = (1, 0, 2)
    layer.reshape_dims = (3, -1)


def _convolution(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    kernel = np.ones((3, 2, 3, 3), np.float32)
    layer = net.add_convolution_nd(_x(net, values, 1, 2, 5, 5), 3, (3, 3), kernel, np.ones(3, np.float32))
    layer.stride_nd = (2, 2)
    layer.padding_nd = (1, 1)


def _deconvolution(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    kernel = np.ones((2, 3, 2, 2), np.float32)
    layer = net.add_deconvolution_nd(_x(net, values, 1, 2, 4, 4), 3, (2, 2), kernel, np.ones(3, np.float32))
    layer.stride_nd = (2, 2)


def _fill(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    layer = net.add_fill((2, 3), FillOperation.LINSPACE, DataType.INT32)
    layer.alpha, layer.beta = 1, 2


def _resize(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    layer = net.add_resize(_x(net, values, 1, 1, 2, 2))
    layer.shape = (1, 1, 4, 3)


def _softmax(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    net.add_softmax(_x(net, values, 2, 3)).axes = 1 << 1


def _concatenation(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    x = _x(net, values, 2, 3)
    net.add_concatenation([x, x]).axis = 1


def _scatter(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> None:
    index = _in(net, values, "i", torch.tensor([[2, 0, 1, 2]]))
    updates = _in(net, values, "u", torch.ones(1, 4))
    net.add_scatter(_x(net, values, 3, 4), index, updates, ScatterMode.ELEMENT)


def _scatter_add(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> ITensor:
    """Torch-TensorRT's ScatterAdd plugin as its index_put converter makes it: [src, index, values]."""
    creator = get_plugin_registry().get_creator("ScatterAdd", "1", "torch_tensorrt")
    plugin = creator.create_plugin("ScatterAdd", PluginFieldCollection([]), TensorRTPhase.BUILD)
    inputs = [_x(net, values, 4, 3), _in(net, values, "i", torch.tensor([0, 2, 0])),
              _in(net, values, "u", torch.ones(3, 3))]
    return net.add_plugin_v3(inputs, [], plugin).get_output(0)


EXAMPLES: dict[str, Example] = {
    "IActivationLayer": lambda net, v: net.add_activation(_x(net, v, 2, 3), ActivationType.GELU_TANH),
    "IAttention": lambda net, v: net.add_attention(
        _in(net, v, "q", torch.randn(1, 2, 3, 4)), _in(net, v, "k", torch.randn(1, 2, 5, 4)),
        _in(net, v, "v", torch.randn(1, 2, 5, 6)), AttentionNormalizationOp.SOFTMAX, False),
    "ICastLayer": lambda net, v: net.add_cast(_x(net, v, 2, 3), DataType.HALF),
    "IConcatenationLayer": _concatenation,
    "IConditionLayer": _conditional,
    "IConstantLayer": lambda net, v: net.add_constant((2, 3), np.arange(6, dtype=np.int64)),
    "IConvolutionLayer": _convolution,
    "IDeconvolutionLayer": _deconvolution,
    "IElementWiseLayer": lambda net, v: net.add_elementwise(
        _x(net, v, 2, 3), _in(net, v, "y", torch.zeros(1, 3)), ElementWiseOperation.LESS),
    "IFillLayer": _fill,
    "IGatherLayer": lambda net, v: net.add_gather(
        _x(net, v, 3, 4), _in(net, v, "i", torch.tensor([2, 0], dtype=torch.int32)), 0),
    "IGridSampleLayer": lambda net, v: net.add_grid_sample(_x(net, v, 1, 1, 4, 4),
                                                           _in(net, v, "g", torch.rand(1, 3, 3, 2) * 2 - 1)),
    "IIdentityLayer": lambda net, v: net.add_identity(_x(net, v, 2, 3)),
    "IIfConditionalInputLayer": _conditional,
    "IIfConditionalOutputLayer": _conditional,
    "IIteratorLayer": _loop,
    "ILoopOutputLayer": _loop,
    "IMatrixMultiplyLayer": lambda net, v: net.add_matrix_multiply(
        _x(net, v, 2, 3), MatrixOperation.NONE, _in(net, v, "y", torch.randn(4, 3)),
        MatrixOperation.TRANSPOSE),
    "INonZeroLayer": lambda net, v: net.add_non_zero(
        _in(net, v, "b", torch.tensor([[True, False], [True, True]]))),
    "INormalizationLayer": lambda net, v: net.add_normalization(
        _x(net, v, 2, 3, 4), _in(net, v, "s", torch.ones(1, 1, 4)), _in(net, v, "b", torch.zeros(1, 1, 4)),
        1 << 2),
    "IParametricReLULayer": lambda net, v: net.add_parametric_relu(
        _x(net, v, 2, 3), _in(net, v, "s", torch.full((1, 3), 0.1))),
    "IPluginV3Layer": _scatter_add,
    "IPoolingLayer": lambda net, v: net.add_pooling_nd(_x(net, v, 1, 1, 5, 4), PoolingType.AVERAGE, (2, 2)),
    "IRecurrenceLayer": _loop,
    "IReduceLayer": lambda net, v: net.add_reduce(_x(net, v, 2, 3), ReduceOperation.AVG, 1 << 1, False),
    "IResizeLayer": _resize,
    "IScaleLayer": lambda net, v: net.add_scale(_x(net, v, 1, 3, 2, 2), ScaleMode.CHANNEL,
                                                np.ones(3, np.float32), np.full(3, 2, np.float32)),
    "IScatterLayer": _scatter,
    "ISelectLayer": lambda net, v: net.add_select(_in(net, v, "c", torch.tensor([[True], [False]])),
                                                  _x(net, v, 2, 3), _in(net, v, "y", torch.zeros(2, 3))),
    "IShapeLayer": lambda net, v: net.add_shape(_x(net, v, 2, 3)),
    "IShuffleLayer": _shuffle,
    "ISliceLayer": _slice,
    "ISoftMaxLayer": _softmax,
    "ISqueezeLayer": lambda net, v: net.add_squeeze(
        _x(net, v, 2, 1, 3), _const(net, np.array([1], np.int64))),
    "ITopKLayer": lambda net, v: net.add_topk(_x(net, v, 2, 5), TopKOperation.MIN, 2, 1 << 1),
    "ITripLimitLayer": _loop,
    "IUnaryLayer": lambda net, v: net.add_unary(_x(net, v, 2, 3), UnaryOperation.ISNAN),
    "IUnsqueezeLayer": lambda net, v: net.add_unsqueeze(
        _x(net, v, 2, 3), _const(net, np.array([0], np.int64))),
}


def test_every_registered_layer_has_an_example_and_every_add_method_is_on_the_network() -> None:
    assert set(EXAMPLES) == set(catalogue.exports())
    for entry in catalogue.LAYERS.values():
        for name in entry.adders:
            assert callable(getattr(INetworkDefinition, name)), name


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_run_returns_the_shapes_and_types_infer_predicted(name: str) -> None:
    net = engine.Builder(None).create_network(1 << 1)
    values: dict[str, torch.Tensor] = {}
    EXAMPLES[name](net, values)
    cls = catalogue.exports()[name]
    under_test = [layer for layer in net.layers if type(layer) is cls]
    assert under_test, f"the example of {name} adds no {name}"
    assert not net.errors
    order = engine.ordered(net.layers)
    find_bodies(net.loops, order)
    ran = {t.uid: values[t.name] for t in net.inputs}
    run_layers(order, ran)
    for layer in under_test:
        assert len(layer.outputs) == layer.num_outputs_of
        for out in layer.outputs:
            meta, got = out.meta, ran[out.uid]
            assert got.dtype == TORCH[meta.dtype], f"{layer.name} output {out.index}"
            assert got.dim() == len(meta.shape) and all(
                want in (-1, have) for want, have in zip(meta.shape, got.shape, strict=True)), \
                f"{layer.name} output {out.index}: ran {tuple(got.shape)}, inferred {meta.shape}"
            if meta.value is not None:
                assert tuple(got.reshape(-1).tolist()) == meta.value


def test_a_layer_class_or_add_method_the_stand_in_lacks_says_so_and_names_what_it_has() -> None:
    module = make_tensorrt("10.0.0")
    with pytest.raises(AttributeError, match=r"lacks tensorrt\.IEinsumLayer; it has: .*IShuffleLayer"):
        module.IEinsumLayer  # noqa: B018
    net = engine.Builder(None).create_network(1 << 1)
    with pytest.raises(AttributeError, match=r"lacks INetworkDefinition\.add_einsum; it has: .*add_shuffle"):
        net.add_einsum  # noqa: B018
    assert not hasattr(net, "add_einsum")  # so a caller probing for it finds it missing
    assert module.MemoryPoolType.WORKSPACE is not None  # a setting nothing reads: a placeholder, kept
    assert module.IShuffleLayer is catalogue.exports()["IShuffleLayer"]


def test_the_scatter_add_plugin_accumulates_duplicate_indices_through_a_built_engine() -> None:
    builder = engine.Builder(None)
    net = builder.create_network(1 << 1)
    values: dict[str, torch.Tensor] = {}
    out = _scatter_add(net, values)
    assert (out.shape, out.dtype) == ((4, 3), DataType.FLOAT)
    net.mark_output(out)
    config = builder.create_builder_config()
    config.add_optimization_profile(builder.create_optimization_profile())
    built = engine.Runtime(None).deserialize_cuda_engine(builder.build_serialized_network(net, config))
    assert built is not None
    context = built.create_execution_context()
    got = torch.empty(4, 3)
    for name, value in values.items():
        context.set_tensor_address(name, value.data_ptr())
    context.set_tensor_address(built.get_tensor_name(3), got.data_ptr())
    assert context.execute_async_v3(0)
    want = values["x"].clone()
    want[0] += 2  # index 0 twice: both rows of ones added
    want[2] += 1
    assert torch.equal(got, want)


def test_a_plugin_the_stand_in_cannot_run_is_absent_from_the_registry() -> None:
    registry = get_plugin_registry()
    creator = registry.get_creator("ScatterAdd", "1", "torch_tensorrt")
    assert creator is not None
    assert registry.get_creator("ScatterAdd", "2", "torch_tensorrt") is None
    assert registry.get_creator("NonExistentPlugin", "1", "") is None
    assert registry.get_plugin_creator("AllReduce", "1", "tensorrt_llm") is None  # IPluginV2: none runs
    net = engine.Builder(None).create_network(1 << 1)
    x = net.add_input("x", DataType.INT32, (4,))
    plugin = creator.create_plugin("s", PluginFieldCollection())
    refused = net.add_plugin_v3([x, x, x], [], plugin).get_output(0)
    assert refused.shape == ()  # refused: no format for INT32 src
    assert any("ScatterAdd plugin: no supported format combination" in e for e in net.errors)
