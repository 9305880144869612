"""Builder, serialization and runtime of the behaving stand-in: ``Builder``, ``IBuilderConfig``,
``IOptimizationProfile``, ``Runtime``, ``ICudaEngine``, ``IExecutionContext``.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Building checks every layer against
TensorRT's shape and type rules (a refusal is logged at ERROR, as TensorRT's builder logs it, and the
build returns None) and serializes the recorded network; the runtime deserializes it, and its
execution context runs the layers one by one with PyTorch on the memory at the addresses it was
given. Shapes at run time are inferred the same way as at build time, from the bound input shapes.
An engine built with ``BuilderFlag.REFIT`` is refittable, and its plan can leave out its refittable
weights (``BuilderFlag.STRIP_PLAN``, ``SerializationFlag.EXCLUDE_WEIGHTS``): see :mod:`.refit`.
Pages cited as ``Section/Page.html`` are of TensorRT's Python API reference,
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/.
"""

from __future__ import annotations

import copy
import functools
import math
import pickle
from collections.abc import Sequence
from typing import Any

import torch

from trtcheck.backends.lowering.trt import memory, refit
from trtcheck.backends.lowering.trt.layers.loop import find_bodies, run_layers
from trtcheck.backends.lowering.trt.modes import outside_modes
from trtcheck.backends.lowering.trt.network import (
    ILayer,
    INetworkDefinition,
    ITensor,
    Meta,
    infer_layer,
    running_on,
)
from trtcheck.backends.lowering.trt.types import (
    TORCH,
    BuilderFlag,
    DataType,
    Dims,
    ILogger,
    SerializationFlag,
    Severity,
    TensorIOMode,
)

MAGIC = b"trtcheck-tensorrt-standin-plan\n"  # a serialized stand-in engine starts so; TensorRT's never does
DEVICE = {"device": torch.device("cpu")}  # where the context's addresses live: set by install


class IOptimizationProfile:
    """``tensorrt.IOptimizationProfile`` (Core/OptimizationProfile.html): min/opt/max per input."""

    def __init__(self) -> None:
        self.shapes: dict[str, tuple[Dims, Dims, Dims]] = {}
        self.values: dict[str, tuple[Any, Any, Any]] = {}
        self.extra_memory_target = 1.0

    def set_shape(self, input: str, min: Sequence[int], opt: Sequence[int], max: Sequence[int]) -> None:
        self.shapes[input] = (Dims(min), Dims(opt), Dims(max))

    def get_shape(self, input: str) -> list[Dims]:
        return list(self.shapes.get(input, ()))

    def set_shape_input(self, input: str, min: Any, opt: Any, max: Any) -> None:
        self.values[input] = (list(min), list(opt), list(max))

    def get_shape_input(self, input: str) -> list[Any]:
        return list(self.values.get(input, ()))

    def __bool__(self) -> bool:
        return True


class IBuilderConfig:
    """``tensorrt.IBuilderConfig`` (Core/BuilderConfig.html): the settings a build is given. The
    stand-in keeps them (flags, memory pools, profiles); what it builds depends on the optimization
    profiles, which bound the run-time input shapes, and the refit flags (REFIT, REFIT_IDENTICAL,
    STRIP_PLAN), no others."""

    def __init__(self) -> None:
        self.flags = 0
        self.profiles: list[IOptimizationProfile] = []
        self.pools: dict[Any, int] = {}
        self.preview: dict[Any, bool] = {}
        self.timing_cache: Any = None

    def set_flag(self, flag: Any) -> None:
        self.flags |= 1 << int(flag)

    def clear_flag(self, flag: Any) -> None:
        self.flags &= ~(1 << int(flag))

    def get_flag(self, flag: Any) -> bool:
        return bool(self.flags >> int(flag) & 1)

    def set_memory_pool_limit(self, pool: Any, size: int) -> None:
        self.pools[pool] = size

    def get_memory_pool_limit(self, pool: Any) -> int:
        return self.pools.get(pool, 1 << 40)

    def set_preview_feature(self, feature: Any, enable: bool) -> None:
        self.preview[feature] = enable

    def add_optimization_profile(self, profile: IOptimizationProfile) -> int:
        self.profiles.append(profile)
        return len(self.profiles) - 1

    @property
    def num_optimization_profiles(self) -> int:
        return len(self.profiles)

    def set_tactic_sources(self, tactic_sources: int) -> bool:
        return True

    def create_timing_cache(self, serialized: bytes) -> ITimingCache:
        return ITimingCache()

    def set_timing_cache(self, cache: Any, ignore_mismatch: bool) -> bool:
        self.timing_cache = cache
        return True

    def get_timing_cache(self) -> Any:
        return self.timing_cache


class ITimingCache:
    """``tensorrt.ITimingCache`` (Core/BuilderConfig.html): empty; the stand-in times nothing."""

    def serialize(self) -> bytes:
        return b""

    def combine(self, other: Any, ignore_mismatch: bool) -> bool:
        return True


class Builder:
    """``tensorrt.Builder`` (Core/Builder.html): networks, configs and profiles; a build checks
    the network and serializes it."""

    def __init__(self, logger: ILogger | None = None) -> None:
        self.logger = logger
        self.platform_has_fast_fp16 = True
        self.platform_has_tf32 = True
        self.max_DLA_batch_size = 1
        self.num_DLA_cores = 0
        self.max_threads = 1

    def create_network(self, flags: int = 0) -> INetworkDefinition:
        return INetworkDefinition(self.logger, strongly_typed=bool(int(flags) >> 1 & 1))

    def create_builder_config(self) -> IBuilderConfig:
        return IBuilderConfig()

    def create_optimization_profile(self) -> IOptimizationProfile:
        return IOptimizationProfile()

    @outside_modes
    def is_network_supported(self, network: INetworkDefinition, config: IBuilderConfig) -> bool:
        return not _check(network)

    @outside_modes
    def build_serialized_network(self, network: INetworkDefinition, config: IBuilderConfig) -> bytes | None:
        errors = _check(network)
        if errors:
            for message in errors[len(network.errors):]:
                network.error(message)
            return None
        return MAGIC + pickle.dumps(Plan(network, config))

    def build_engine_with_config(self, network: INetworkDefinition,
                                 config: IBuilderConfig) -> ICudaEngine | None:
        blob = self.build_serialized_network(network, config)
        return None if blob is None else Runtime(self.logger).deserialize_cuda_engine(blob)

    def reset(self) -> None:
        pass


def ordered(layers: Sequence[ILayer]) -> list[ILayer]:
    """The layers in an order they can run in: a layer's input may be set to a tensor made by a
    layer added after it (``set_input``), so the order they were added in is not always one."""
    producer = {out.uid: layer for layer in layers for out in layer.outputs}
    done: set[int] = set()
    order: list[ILayer] = []
    for root in layers:
        stack = [(root, False)]
        while stack:
            layer, expanded = stack.pop()
            if id(layer) in done:
                continue
            if expanded:
                done.add(id(layer))
                order.append(layer)
                continue
            stack.append((layer, True))
            for t in reversed(layer.dependencies()):
                if t is not None and t.uid in producer and id(producer[t.uid]) not in done:
                    stack.append((producer[t.uid], False))
    return order


def _check(network: INetworkDefinition) -> list[str]:
    """Every refusal of the network, as TensorRT's builder would log it (empty: it builds)."""
    errors = list(network.errors)
    metas: dict[int, Meta] = {t.uid: t.meta for t in network.inputs}
    for layer in ordered(network.layers):
        ins = [None if t is None else metas.get(t.uid) for t in layer.inputs]
        for out, meta in zip(layer.outputs, infer_layer(layer, ins, errors.append), strict=True):
            metas[out.uid] = meta
        errors.extend(layer.refusals(network))
    if not network.outputs:
        errors.append("Error Code 4: API Usage Error (Network must have at least one output)")
    for t in network.inputs + network.outputs:
        if t.uid in metas and metas[t.uid].dtype not in TORCH:
            errors.append(f"Error Code 4: API Usage Error ({t.name}: an I/O tensor of type "
                          f"{metas[t.uid].dtype.name} is not supported)")
    return list(dict.fromkeys(errors))


class Plan:
    """A built network: its layers (weights included), I/O tensors and optimization profiles."""

    def __init__(self, network: INetworkDefinition, config: IBuilderConfig) -> None:
        self.layers: list[ILayer] = ordered(network.layers)
        self.loops = list(network.loops)
        find_bodies(self.loops, self.layers)
        self.inputs: list[ITensor] = list(network.inputs)
        self.outputs: list[ITensor] = list(network.outputs)
        self.metas = {t.uid: t.meta for t in self.inputs + self.outputs}
        self.profiles = [dict(p.shapes) for p in config.profiles] or [{}]
        # Shape-tensor inputs: their values, read from host memory, are what shapes depend on.
        self.shape_inputs = {name for p in config.profiles for name in p.values}
        self.name = network.name
        # REFIT_IDENTICAL promises refits with the build's own weights; TensorRT may rely on it,
        # the stand-in does not (a refit with other weights runs with them).
        self.refittable = config.get_flag(BuilderFlag.REFIT) or config.get_flag(BuilderFlag.REFIT_IDENTICAL)
        if self.refittable and config.get_flag(BuilderFlag.STRIP_PLAN):
            refit.strip(self.layers)


class Runtime:
    """``tensorrt.Runtime`` (Core/Runtime.html): engines from serialized plans."""

    def __init__(self, logger: ILogger | None = None) -> None:
        self.logger = logger
        self.max_threads = 1
        self.engine_host_code_allowed = False

    @outside_modes
    def deserialize_cuda_engine(self, serialized: Any) -> ICudaEngine | None:
        blob = bytes(serialized)
        if not blob.startswith(MAGIC):
            if self.logger is not None:
                self.logger.log(Severity.ERROR, "IRuntime::deserializeCudaEngine: Error Code 1: "
                                "Serialization (Serialization assertion magicTagRead == kMAGIC_TAG failed."
                                "Magic tag does not match)")
            return None
        return ICudaEngine(pickle.loads(blob[len(MAGIC):]), self.logger)


class IHostMemory(bytes):
    """``tensorrt.IHostMemory`` (Core/HostMemory.html): a serialized engine, as bytes."""

    @property
    def nbytes(self) -> int:
        return len(self)


class ISerializationConfig:
    """``tensorrt.ISerializationConfig`` (Core/Engine.html)."""

    def __init__(self) -> None:
        self.flags = 0

    def set_flag(self, flag: Any) -> bool:
        self.flags |= 1 << int(flag)
        return True

    def clear_flag(self, flag: Any) -> bool:
        self.flags &= ~(1 << int(flag))
        return True

    def get_flag(self, flag: Any) -> bool:
        return bool(self.flags >> int(flag) & 1)


class ICudaEngine:
    """``tensorrt.ICudaEngine`` (Core/Engine.html): the I/O tensors (inputs first) with their
    build-time shapes (-1: dynamic) and types, and execution contexts."""

    def __init__(self, plan: Plan, logger: ILogger | None) -> None:
        self.plan = plan
        self.logger = logger
        self.io = [t.name for t in plan.inputs] + [t.name for t in plan.outputs]
        self.tensors = {t.name: t for t in plan.inputs + plan.outputs}
        self.name = plan.name
        self.streamable_weights_size = 0
        self.weight_streaming_budget_v2 = -1
        self.num_optimization_profiles = len(plan.profiles)
        self.num_aux_streams = 0
        self.refittable = plan.refittable
        self.refits = 0  # how many refits changed its weights: a context moves them anew
        self.hardware_compatibility_level = None

    @functools.cached_property
    def device_memory_size_v2(self) -> int:
        """The activation memory an execution context needs, in bytes: the most that the tensors
        layers make (network inputs and outputs aside) hold at once, each made at its layer and
        freed after its last reader runs, at each profile's largest input shapes; the largest over
        profiles. TensorRT's figure also counts its kernels' scratch and can fuse layers away: the
        stand-in's is a prediction, never TensorRT's number."""
        return max(activation_bytes(self, index) for index in range(len(self.plan.profiles)))

    @property
    def device_memory_size(self) -> int:
        return self.device_memory_size_v2

    @property
    def num_io_tensors(self) -> int:
        return len(self.io)

    @property
    def num_layers(self) -> int:
        return len(self.plan.layers)

    def get_tensor_name(self, index: int) -> str:
        return self.io[index]

    def get_tensor_mode(self, name: str) -> Any:
        if name not in self.tensors:
            return TensorIOMode.NONE
        return TensorIOMode.INPUT if self.tensors[name] in self.plan.inputs else TensorIOMode.OUTPUT

    def get_tensor_dtype(self, name: str) -> DataType:
        return self.plan.metas[self.tensors[name].uid].dtype

    def get_tensor_shape(self, name: str) -> Dims:
        return Dims(self.plan.metas[self.tensors[name].uid].shape)

    def get_tensor_location(self, name: str) -> Any:
        return self.tensors[name].location

    def is_shape_inference_io(self, name: str) -> bool:
        """Whether ``name`` is a shape-tensor input (its profile gave values, ``set_shape_input``):
        its address is host memory holding the values."""
        return name in self.plan.shape_inputs

    def get_tensor_profile_shape(self, name: str, profile_index: int) -> list[Dims]:
        return list(self.plan.profiles[profile_index].get(name, ()))

    def get_aliased_input_tensor(self, name: str) -> str | None:
        """The input whose memory output ``name`` shares (a KV-cache update's cache), else None."""
        tensor = self.tensors.get(name)
        layer = tensor.layer if tensor is not None else None
        index = getattr(layer, "aliased_input", None)
        if layer is None or index is None or tensor not in self.plan.outputs:
            return None
        return layer.inputs[index].name

    def get_weight_streaming_automatic_budget(self) -> int:
        return 0

    def create_execution_context(self, strategy: Any = None) -> IExecutionContext:
        return IExecutionContext(self)

    def create_execution_context_without_device_memory(self) -> IExecutionContext:
        return IExecutionContext(self)

    def create_serialization_config(self) -> ISerializationConfig:
        return ISerializationConfig()

    @outside_modes
    def serialize(self) -> IHostMemory:
        return IHostMemory(MAGIC + pickle.dumps(self.plan))

    @outside_modes
    def serialize_with_config(self, config: ISerializationConfig) -> IHostMemory:
        """The plan with EXCLUDE_WEIGHTS: without its refittable weights' values. It stays
        refittable with INCLUDE_REFIT ("remain refittable if originally so") or EXCLUDE_WEIGHTS
        (a plan without its weights is refitted or useless), else it is not."""
        exclude = config.get_flag(SerializationFlag.EXCLUDE_WEIGHTS)
        plan = copy.copy(self.plan)
        plan.refittable = self.refittable and (exclude or config.get_flag(SerializationFlag.INCLUDE_REFIT))
        blob = pickle.dumps(plan)
        if exclude and self.refittable:
            plan = pickle.loads(blob)
            refit.strip(plan.layers)
            blob = pickle.dumps(plan)
        return IHostMemory(MAGIC + blob)

    def refitted(self) -> None:
        """Told by :class:`.refit.Refitter` once it has changed the weights."""
        self.refits += 1

    def create_engine_inspector(self) -> EngineInspector:
        return EngineInspector(self)

    def __del__(self) -> None:
        pass


class EngineInspector:
    """``tensorrt.EngineInspector`` (Core/EngineInspector.html): the layers, by name and type."""

    def __init__(self, engine: ICudaEngine) -> None:
        self.engine = engine
        self.execution_context: Any = None

    def get_engine_information(self, format: Any) -> str:
        import json

        return json.dumps({"Layers": [{"Name": layer.name, "LayerType": layer.kind.name}
                                      for layer in self.engine.plan.layers]})

    def get_layer_information(self, index: int, format: Any) -> str:
        layer = self.engine.plan.layers[index]
        return f"{layer.name} ({layer.kind.name})"


@outside_modes
def activation_bytes(engine: ICudaEngine, profile: int) -> int:
    """The most bytes the layers' own outputs (not I/O) hold at once, run in order at ``profile``'s
    largest input shapes (a dimension still unknown counts as 1)."""
    context = IExecutionContext(engine)
    context.active_optimization_profile = profile
    for name, (_, _, high) in engine.plan.profiles[profile].items():
        context.shapes[name] = tuple(high)
    metas = context._infer()
    io = {t.uid for t in engine.plan.inputs + engine.plan.outputs}
    last = {t.uid: i for i, layer in enumerate(engine.plan.layers) for t in layer.inputs if t is not None}
    live: dict[int, int] = {}
    most = 0
    for i, layer in enumerate(engine.plan.layers):
        for out in layer.outputs:
            meta = metas.get(out.uid)
            if out.uid not in io and meta is not None and meta.dtype in TORCH:
                live[out.uid] = math.prod(max(d, 1) for d in meta.shape) * TORCH[meta.dtype].itemsize
        most = max(most, sum(live.values()))
        for uid in [uid for uid in live if last.get(uid, -1) <= i]:
            del live[uid]
    return most


def place_weights(layers: Sequence[ILayer], device: torch.device) -> None:
    """Move the tensors the layers hold (weights, constants) to ``device``."""
    for layer in layers:
        for key, value in list(vars(layer).items()):
            if isinstance(value, torch.Tensor) and value.device != device:
                object.__setattr__(layer, key, value.to(device))


class IOutputAllocator:
    """``tensorrt.IOutputAllocator`` (Core/ExecutionContext.html): subclasses give memory for an
    output whose shape is known only when the network has run."""

    def __init__(self) -> None:
        pass

    def reallocate_output(self, tensor_name: str, memory: int, size: int, alignment: int) -> int:
        return 0

    def reallocate_output_async(self, tensor_name: str, memory: int, size: int, alignment: int,
                                stream: Any) -> int:
        return self.reallocate_output(tensor_name, memory, size, alignment)

    def notify_shape(self, tensor_name: str, shape: Any) -> None:
        pass


class IExecutionContext:
    """``tensorrt.IExecutionContext`` (Core/ExecutionContext.html): input shapes and addresses
    set by name; ``execute_async_v3`` runs the layers with PyTorch and writes the outputs at their
    addresses (or into what the output allocator gives)."""

    def __init__(self, engine: ICudaEngine) -> None:
        self.engine = engine
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.addresses: dict[str, int] = {}
        self.allocators: dict[str, IOutputAllocator] = {}
        self.name = ""
        self.debug_sync = False
        self.profiler: Any = None
        self.active_optimization_profile = 0
        self.nvtx_verbosity = None
        self.persistent_cache_limit = 0
        self._metas: dict[int, Meta] | None = None
        self._weights_on: tuple[torch.device, int] | None = None

    def _error(self, message: str) -> None:
        if self.engine.logger is not None:
            self.engine.logger.log(Severity.ERROR, message)

    def set_input_shape(self, name: str, shape: Sequence[int]) -> bool:
        shape = tuple(int(d) for d in shape)
        declared = self.engine.get_tensor_shape(name)
        bounds = self.engine.plan.profiles[self.active_optimization_profile].get(name)
        fits = len(shape) == len(declared) and all(d in (-1, s) for d, s in zip(declared, shape, strict=True))
        if fits and bounds is not None:
            low, _, high = bounds
            fits = all(lo <= s <= hi for lo, s, hi in zip(low, shape, high, strict=True))
        if not fits:
            self._error(f"IExecutionContext::setInputShape: Error Code 3: API Usage Error (Parameter check "
                        f"failed, condition: satisfyProfile. Set dimension {shape} for tensor {name} does "
                        f"not satisfy any optimization profiles (declared {tuple(declared)}, profile "
                        f"{tuple(tuple(b) for b in bounds) if bounds else None}))")
            return False
        self.shapes[name] = shape
        self._metas = None
        return True

    def set_tensor_address(self, name: str, address: int) -> bool:
        self.addresses[name] = int(address)
        if name in self.engine.plan.shape_inputs:
            self._metas = None  # its values are what shapes are inferred from
        return True

    def _shape_values(self, tensor: ITensor) -> torch.Tensor | None:
        """A shape-tensor input's values, from the host memory at its address."""
        if tensor.name not in self.addresses:
            return None
        meta = self.engine.plan.metas[tensor.uid]
        return memory.view(self.addresses[tensor.name], meta.shape, TORCH[meta.dtype], torch.device("cpu"))

    def get_tensor_address(self, name: str) -> int:
        return self.addresses.get(name, 0)

    def set_input_consumed_event(self, event: Any) -> bool:
        return True

    def set_optimization_profile_async(self, index: int, stream: Any) -> bool:
        self.active_optimization_profile = index
        return True

    def set_device_memory(self, memory: int, size: int = 0) -> None:
        pass

    def set_output_allocator(self, name: str, allocator: IOutputAllocator) -> bool:
        self.allocators[name] = allocator
        return True

    def get_output_allocator(self, name: str) -> IOutputAllocator | None:
        return self.allocators.get(name)

    @property
    def all_binding_shapes_specified(self) -> bool:
        return all(t.name in self.shapes for t in self.engine.plan.inputs)

    @property
    def all_shape_inputs_specified(self) -> bool:
        return True

    @outside_modes
    def _infer(self) -> dict[int, Meta]:
        """Every tensor's meta at the set input shapes, by the same rules as the build."""
        if self._metas is None:
            plan = self.engine.plan
            metas = {t.uid: Meta(self.shapes.get(t.name, plan.metas[t.uid].shape), plan.metas[t.uid].dtype)
                     for t in plan.inputs}
            for t in plan.inputs:
                values = self._shape_values(t) if t.name in plan.shape_inputs else None
                if values is not None:
                    metas[t.uid] = Meta(plan.metas[t.uid].shape, plan.metas[t.uid].dtype,
                                        tuple(int(v) for v in values.reshape(-1).tolist()))
            for layer in plan.layers:
                ins = [None if t is None else metas.get(t.uid) for t in layer.inputs]
                for out, meta in zip(layer.outputs, infer_layer(layer, ins, self._error), strict=True):
                    metas[out.uid] = meta
            self._metas = metas
        return self._metas

    def infer_shapes(self) -> list[str]:
        """The names of inputs whose shapes are not set (none, once all are)."""
        missing = [t.name for t in self.engine.plan.inputs
                   if t.name not in self.shapes and -1 in self.engine.plan.metas[t.uid].shape]
        if not missing:
            self._infer()
        return missing

    def get_tensor_shape(self, name: str) -> Dims:
        tensor = self.engine.tensors[name]
        if tensor in self.engine.plan.inputs:
            return Dims(self.shapes.get(name, self.engine.plan.metas[tensor.uid].shape))
        return Dims(self._infer()[tensor.uid].shape)

    def get_tensor_strides(self, name: str) -> Dims:
        shape = list(self.get_tensor_shape(name))
        strides, step = [], 1
        for d in reversed(shape):
            strides.insert(0, step)
            step *= max(d, 1)
        return Dims(strides)

    def _needed(self) -> list[ILayer]:
        """The layers the outputs depend on, in order: the rest never runs, as in an engine."""
        plan = self.engine.plan
        if plan.loops:  # a loop runs as a whole
            return list(plan.layers)
        wanted = {t.uid for t in plan.outputs}
        keep: list[ILayer] = []
        for layer in reversed(plan.layers):
            if any(out.uid in wanted for out in layer.outputs):
                keep.append(layer)
                wanted.update(t.uid for t in layer.inputs if t is not None)
        return keep[::-1]

    @outside_modes
    def execute_async_v3(self, stream_handle: int = 0) -> bool:
        device = DEVICE["device"]
        plan = self.engine.plan
        values: dict[int, torch.Tensor] = {}
        missing = refit.stripped(plan.layers) if self._weights_on is None else []
        if missing:
            self._error(f"IExecutionContext::enqueueV3: Error Code 3: API Usage Error (the engine's plan "
                        f"was stripped of {len(missing)} refittable weights, {missing[0]} first: refit "
                        "them before inference)")
            return False
        for t in plan.inputs:
            if t.name not in self.addresses:
                self._error(f"IExecutionContext::enqueueV3: Error Code 3: API Usage Error (no address set "
                            f"for input {t.name})")
                return False
            if t.name in plan.shape_inputs:  # host memory; the layers that read it run on the device
                values[t.uid] = self._shape_values(t).to(device)  # type: ignore[union-attr]
                continue
            shape = self.shapes.get(t.name, plan.metas[t.uid].shape)
            values[t.uid] = memory.view(self.addresses[t.name], shape, TORCH[plan.metas[t.uid].dtype], device,
                                        stream_handle)
        self._place_weights(device)
        metas = self._infer()
        with memory.stream_context(stream_handle, device), torch.no_grad(), running_on(device):
            run_layers(self._needed(), values, metas=metas)
            for t in plan.outputs:
                result = values[t.uid].to(TORCH[plan.metas[t.uid].dtype])
                self._write(t.name, result, device, stream_handle)
        return True

    def _place_weights(self, device: torch.device) -> None:
        """Move the layers' weights to ``device`` once (they are built on the host)."""
        if self._weights_on == (device, self.engine.refits):
            return
        place_weights(self.engine.plan.layers, device)
        self._weights_on = (device, self.engine.refits)

    def _write(self, name: str, result: torch.Tensor, device: torch.device, stream: int) -> None:
        allocator = self.allocators.get(name)
        if allocator is not None:
            size = result.numel() * result.element_size()
            address = allocator.reallocate_output_async(name, 0, max(size, 1), 256, stream)
            allocator.notify_shape(name, Dims(result.shape))
            target = memory.view(address, tuple(result.shape), result.dtype, device, stream)
        else:
            if name not in self.addresses:
                self._error(f"IExecutionContext::enqueueV3: Error Code 3: API Usage Error (no address set "
                            f"for output {name})")
                return
            target = memory.view(self.addresses[name], tuple(result.shape), result.dtype, device, stream)
        target.copy_(result)

    def execute_v2(self, bindings: Sequence[int]) -> bool:
        for name, address in zip(self.engine.io, bindings, strict=False):
            self.addresses[name] = int(address)
        return self.execute_async_v3(0)
