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
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from trtcheck.backends.lowering.trt import catalogue, engine
from trtcheck.backends.lowering.trt.install import make_tensorrt
from trtcheck.backends.lowering.trt.layers.loop import find_bodies, run_layers
from trtcheck.backends.lowering.trt.network import INetworkDefinition, ITensor, running_on
from trtcheck.backends.lowering.trt.plugins.registry import PluginFieldCollection, get_plugin_registry
from trtcheck.backends.lowering.trt.types import (
    FROM_TORCH,
    TORCH,
    ActivationType,
    AttentionNormalizationOp,
    DataType,
    ElementWiseOperation,
    FillOperation,
    KVCacheMode,
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


Inputs = Callable[[INetworkDefinition, dict[str, torch.Tensor]], list[ITensor]]
# Each plugin the registry holds, by (namespace, name, version): the inputs of an example.
PLUGIN_INPUTS: dict[tuple[str, str, str], Inputs] = {
    # Torch-TensorRT's ScatterAdd as its index_put converter makes it: [src, index, values].
    ("torch_tensorrt", "ScatterAdd", "1"): lambda net, v: [
        _x(net, v, 4, 3), _in(net, v, "i", torch.tensor([0, 2, 0])), _in(net, v, "u", torch.ones(3, 3))],
}


def _plugin(key: tuple[str, str, str]) -> Example:
    namespace, name, version = key

    def example(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> ITensor:
        creator = get_plugin_registry().get_creator(name, version, namespace)
        plugin = creator.create_plugin(name, PluginFieldCollection([]), TensorRTPhase.BUILD)
        return net.add_plugin_v3(PLUGIN_INPUTS[key](net, values), [], plugin).get_output(0)

    return example


_scatter_add = _plugin(("torch_tensorrt", "ScatterAdd", "1"))


def _kv_cache_update(net: INetworkDefinition, values: dict[str, torch.Tensor]) -> ITensor:
    """A static cache of 6 positions, two sequences' 2 new positions written at 1 and at 4."""
    cache = _in(net, values, "cache", torch.zeros(2, 3, 6, 4))
    update = _in(net, values, "u", torch.randn(2, 3, 2, 4, generator=torch.Generator().manual_seed(1)))
    out = net.add_kv_cache_update(cache, update, _in(net, values, "w", torch.tensor([1, 4])),
                                  KVCacheMode.LINEAR).get_output(0)
    net.mark_output(out)
    return out


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
    "IKVCacheUpdateLayer": _kv_cache_update,
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


def test_every_plugin_in_the_registry_has_an_example_that_runs_as_it_infers() -> None:
    """As the layers are: each creator the registry holds is made into a plugin layer and run, its
    outputs of the shapes and types its plugin's ``infer`` gave, on the CPU and on another device."""
    registry = get_plugin_registry()
    held = {(c.plugin_namespace, c.name, c.plugin_version) for c in registry.all_creators}
    assert held == set(PLUGIN_INPUTS)
    for key in sorted(held):
        net = engine.Builder(None).create_network(1 << 1)
        values: dict[str, torch.Tensor] = {}
        out = _plugin(key)(net, values)
        assert not net.errors, (key, net.errors)
        ran = {t.uid: values[t.name] for t in net.inputs}
        run_layers(engine.ordered(net.layers), ran, metas={out.uid: out.meta})
        with _OnAnotherDevice(), running_on(torch.device("meta")):
            moved = {t.uid: values[t.name].to("meta") for t in net.inputs}
            run_layers(engine.ordered(net.layers), moved, metas={out.uid: out.meta})
        assert isinstance(moved[out.uid], _Elsewhere), key


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


class _Elsewhere(torch.Tensor):
    """A CPU tensor that says it is on another device (``meta``): what a layer makes from it
    (``x.device``, ``x.new_*``) is elsewhere too, and what it makes without it stays on the CPU."""

    inner: torch.Tensor

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> _Elsewhere:
        made = torch.Tensor._make_wrapper_subclass(cls, inner.shape, strides=inner.stride(),
                                                   dtype=inner.dtype, device=torch.device("meta"))
        made.inner = inner
        return made

    def tolist(self) -> object:  # reading values back: as from a device
        return self.inner.tolist()

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return _OnAnotherDevice().__torch_dispatch__(func, types, args, kwargs)


# Ops that take tensors of two devices on CUDA too: copies across devices, and indexing with host indices.
_CROSSING = {"aten::copy_", "aten::_to_copy", "aten::index.Tensor", "aten::index_put_", "aten::index_put",
             "aten::_index_put_impl_", "aten::lift_fresh"}


class _OnAnotherDevice(TorchDispatchMode):
    """Runs every op on the CPU, refusing, as CUDA does, one that mixes an :class:`_Elsewhere` tensor
    with a CPU tensor of one or more dimensions (a CPU scalar mixes, as on CUDA). A factory asked
    for ``meta`` makes an ``_Elsewhere`` tensor. So a CPU-only machine finds the tensors a layer
    makes on the CPU beside its data on a device, with the data's values intact (a layer that reads
    values, ``.item()`` or ``.tolist()``, runs as on a device). ``torch.tensor(data, device=...)``
    builds on the host below any mode and copies, so the layers write it as ``.to(device)``, which
    is what it does on CUDA."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = dict(kwargs or {})
        devices: set[str] = set()

        def unwrap(t: object) -> object:
            if isinstance(t, _Elsewhere):
                devices.add("elsewhere")
                return t.inner
            if isinstance(t, torch.Tensor) and t.dim() > 0:
                devices.add(t.device.type)
            return t

        args, kwargs = tree_map(unwrap, (args, kwargs))
        asked = torch.device(kwargs["device"]).type if kwargs.get("device") is not None else None
        if asked == "meta":
            kwargs["device"] = torch.device("cpu")
        name = func._schema.name
        if len(devices) > 1 and name not in _CROSSING:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                               f"devices, meta (standing for a GPU) and cpu! ({name})")
        out = func(*args, **kwargs)
        if asked == "meta" or ("elsewhere" in devices and asked != "cpu"):
            out = tree_map(lambda t: _Elsewhere(t) if isinstance(t, torch.Tensor) else t, out)
        return out


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_tensor_a_layer_makes_is_on_the_device_of_the_data_it_meets(name: str) -> None:
    """Each example runs with its inputs and weights on another device than the CPU (the engine
    places weights the same way): an index, shape or scratch tensor made on the CPU beside them
    fails here as it fails on CUDA ("Expected all tensors to be on the same device")."""
    net = engine.Builder(None).create_network(1 << 1)
    values: dict[str, torch.Tensor] = {}
    EXAMPLES[name](net, values)
    order = engine.ordered(net.layers)
    find_bodies(net.loops, order)
    elsewhere = torch.device("meta")
    with _OnAnotherDevice(), running_on(elsewhere):
        engine.place_weights(order, elsewhere)
        ran = {t.uid: values[t.name].to(elsewhere) for t in net.inputs}
        run_layers(order, ran)
    for layer in order:
        for out in layer.outputs:
            assert isinstance(ran[out.uid], _Elsewhere), f"{layer.name} output {out.index} is on the CPU"


def _engine(net: INetworkDefinition, builder: engine.Builder) -> engine.ICudaEngine:
    config = builder.create_builder_config()
    config.add_optimization_profile(builder.create_optimization_profile())
    blob = builder.build_serialized_network(net, config)
    assert blob is not None, net.errors
    built = engine.Runtime(None).deserialize_cuda_engine(blob)
    assert built is not None
    return built


def test_a_kv_cache_update_writes_the_cache_in_place_and_its_output_aliases_the_cache() -> None:
    builder = engine.Builder(None)
    net = builder.create_network(1 << 1)
    values: dict[str, torch.Tensor] = {}
    out = _kv_cache_update(net, values)
    built = _engine(net, builder)
    assert built.get_aliased_input_tensor(out.name) == "cache"
    assert built.get_aliased_input_tensor("cache") is None
    context = built.create_execution_context()
    cache = values["cache"]
    for name, value in values.items():
        context.set_tensor_address(name, value.data_ptr())
    context.set_tensor_address(out.name, cache.data_ptr())  # as Torch-TensorRT binds an aliased output
    assert context.execute_async_v3(0)
    want = torch.zeros(2, 3, 6, 4)
    want[0, :, 1:3] = values["u"][0]
    want[1, :, 4:6] = values["u"][1]
    assert torch.equal(cache, want)


@pytest.mark.parametrize(("change", "refusal"), [
    ("not_output", "the output must be a network output"),
    ("cache_made", "the cache must be a network input"),
    ("long_update", "update length 7 is more than the cache's 6"),
    ("int_cache", "cache has type INT32"),
    ("dynamic_length", "sequence length (dimension 2) must be static"),
    ("indices_shape", "writeIndices must have shape [b] = [2]"),
])
def test_what_a_kv_cache_update_refuses_at_build(change: str, refusal: str) -> None:
    builder = engine.Builder(None)
    net = builder.create_network(1 << 1)
    shape = {"long_update": (2, 3, 7, 4)}.get(change, (2, 3, 2, 4))
    cache_shape = (2, 3, -1, 4) if change == "dynamic_length" else (2, 3, 6, 4)
    dtype = DataType.INT32 if change == "int_cache" else DataType.FLOAT
    cache = net.add_input("cache", dtype, cache_shape)
    if change == "cache_made":
        cache = net.add_identity(cache).get_output(0)
    update = net.add_input("u", dtype, shape)
    index = net.add_input("w", DataType.INT32, (3,) if change == "indices_shape" else (2,))
    out = net.add_kv_cache_update(cache, update, index, KVCacheMode.LINEAR).get_output(0)
    if change != "not_output":
        net.mark_output(out)
    config = builder.create_builder_config()
    assert builder.build_serialized_network(net, config) is None
    assert any(refusal in e for e in net.errors), net.errors


def test_an_engine_reports_the_activation_memory_its_layers_hold_at_once() -> None:
    builder = engine.Builder(None)
    net = builder.create_network(1 << 1)
    x = net.add_input("x", DataType.FLOAT, (-1, 8))
    a = net.add_unary(x, UnaryOperation.EXP).get_output(0)  # 4 * n * 8 bytes
    b = net.add_cast(a, DataType.HALF).get_output(0)  # 2 * n * 8, while a is alive
    c = net.add_cast(b, DataType.FLOAT).get_output(0)  # the output: not counted
    net.mark_output(c)
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 8), (4, 8), (10, 8))
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    built = engine.Runtime(None).deserialize_cuda_engine(builder.build_serialized_network(net, config))
    assert built is not None
    assert built.device_memory_size_v2 == 10 * 8 * 4 + 10 * 8 * 2  # at the profile's largest shape
    assert built.device_memory_size == built.device_memory_size_v2
