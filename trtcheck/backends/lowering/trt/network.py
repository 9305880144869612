"""The network a converter builds: ``INetworkDefinition``, its ``ITensor``\\ s and ``ILayer`` base.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Layers are recorded in the order they are
added, which is an order they can run in. A tensor's shape and type are inferred from its layer's
inputs by TensorRT's documented rules (:mod:`trtcheck.backends.lowering.trt.layers`), symbolically:
-1 stands for a dimension known only at run time, and nothing is run to find a shape. Pages cited
as ``Section/Page.html`` are of TensorRT's Python API reference,
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trtcheck.backends.lowering.trt.modes import outside_modes
from trtcheck.backends.lowering.trt.types import (
    TORCH,
    DataType,
    Dims,
    ILogger,
    LayerType,
    Severity,
    TensorLocation,
)
from trtcheck.errors import PredictionGap, found_in, last_line

Value = tuple[int | None, ...]  # a shape tensor's known elements (None: known only at run time)
_PACKAGE = __name__.rpartition(".")[0]  # the stand-in's own modules
_EVERY_LAYER = frozenset({"name", "metadata"})  # ILayer's own settable attributes
# Values are followed for tensors this small: shape tensors, the only ones shapes depend on.
VALUE_LIMIT = 64
# The device an engine runs on: where a layer with no tensor input (a fill) makes its output.
_RUN_DEVICE: contextvars.ContextVar[torch.device | None] = contextvars.ContextVar("run_device", default=None)


@contextlib.contextmanager
def running_on(device: torch.device) -> Iterator[None]:
    """Within this, layers run on ``device``: each tensor a layer makes (an index, a shape, a
    constant, a scratch tensor) is made on the device of the data it meets, or on ``device`` when
    it meets none. (Torch's default-device context is a torch function mode, which the stand-in's
    :func:`.modes.outside_modes` turns off: placement is explicit.)"""
    token = _RUN_DEVICE.set(device)
    try:
        yield
    finally:
        _RUN_DEVICE.reset(token)


def run_device(ins: Sequence[Any] = ()) -> torch.device:
    """The device of the first tensor of ``ins``, else the device the engine runs on."""
    first = next((t.device for t in ins if isinstance(t, torch.Tensor)), None)
    return first or _RUN_DEVICE.get() or torch.device("cpu")


@dataclass(frozen=True)
class Meta:
    """What is known of a tensor before it runs: its shape (-1: dynamic), type and, for a small
    integer tensor, its values where they are known."""

    shape: tuple[int, ...]
    dtype: DataType
    value: Value | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)


class StandInLacks(AttributeError, PredictionGap):
    """A name of TensorRT's API the stand-in does not have: an ``AttributeError``, so that a
    ``hasattr`` probe of Torch-TensorRT's sees it missing as on a TensorRT without it, and a
    prediction gap, so that a row it stops says the prediction could not be made."""

    def __init__(self, what: str, have: Iterable[str]) -> None:
        super().__init__(f"the TensorRT stand-in (trtcheck, NOT TensorRT) lacks {what}; it has: "
                         f"{', '.join(sorted(have))}")
        self.what = what

    @property
    def reason(self) -> str:
        return f"the TensorRT stand-in lacks {self.what}"


class StandInFailed(PredictionGap):
    """The stand-in's own code could not run a layer that its ``infer`` accepted: what TensorRT
    would compute there is not predicted (never a Torch-TensorRT bug by itself)."""

    def __init__(self, layer: ILayer, exc: BaseException) -> None:
        super().__init__(f"the TensorRT stand-in could not run layer '{layer.name}' "
                         f"({type(layer).__name__}): {last_line(exc)}")


class StandInIgnores(PredictionGap):
    """A converter set an attribute of a layer that the stand-in does not model: kept, it would be
    ignored, and the prediction silently made without it."""

    def __init__(self, layer: ILayer, attribute: str) -> None:
        super().__init__(f"the TensorRT stand-in (trtcheck, NOT TensorRT) does not model attribute "
                         f"'{attribute}' of {type(layer).__name__} (layer '{layer.name}'), which a converter "
                         "set")
        self.attribute = attribute
        self.layer_class = type(layer).__name__

    @property
    def reason(self) -> str:
        return f"the TensorRT stand-in does not model {self.layer_class}.{self.attribute}"


class StandInMismatch(PredictionGap):
    """A layer's ``run`` gave an output of another shape or type than its ``infer`` did: the
    stand-in disagrees with itself, and its prediction there is not made."""

    def __init__(self, layer: ILayer, index: int, got: str, inferred: str) -> None:
        super().__init__(f"the TensorRT stand-in's layer '{layer.name}' ({type(layer).__name__}) ran output "
                         f"{index} as {got}, where its shape and type rules inferred {inferred}")


def check_output(layer: ILayer, index: int, value: Any, meta: Meta) -> None:
    """Raise :class:`StandInMismatch` unless ``value`` (output ``index`` of ``layer``, as run) has
    the rank, the dimensions known at inference (-1: any) and the type of ``meta``."""
    want = TORCH.get(meta.dtype)
    shape = tuple(value.shape)
    fits = len(shape) == meta.rank and all(d in (-1, s) for d, s in zip(meta.shape, shape, strict=True))
    if not fits or (want is not None and value.dtype != want):
        raise StandInMismatch(layer, index, f"{shape} {str(value.dtype).removeprefix('torch.')}",
                              f"{meta.shape} {meta.dtype.name}")


def standin_gap(exc: BaseException) -> PredictionGap | None:
    """The prediction gap in ``exc``'s chain, if any: one the stand-in raised, or an
    ``AttributeError`` on one of its objects (a TensorRT attribute it does not model), which
    becomes a :class:`StandInLacks`."""
    gap = found_in(exc, PredictionGap)
    if gap is not None:
        return gap
    missing = found_in(exc, AttributeError)
    owner = getattr(missing, "obj", None)
    if missing is None or not type(owner).__module__.startswith(_PACKAGE):
        return None
    return StandInLacks(f"{type(owner).__name__}.{missing.name}",
                        [n for n in dir(owner) if not n.startswith("_")])


def lacks(what: str, have: Iterable[str]) -> StandInLacks:
    """The error for a name of TensorRT's API the stand-in does not have."""
    return StandInLacks(what, have)


class LayerError(Exception):
    """A layer TensorRT refuses: the message TensorRT's logger gets, and the build fails."""


class ITensor:
    """``tensorrt.ITensor`` (Graph/Network.html#tensorrt.ITensor): a network input or a layer's
    output; its ``shape`` and ``dtype`` are inferred, never set, in a strongly typed network."""

    _ids = itertools.count()

    def __init__(self, network: INetworkDefinition, layer: ILayer | None, index: int, name: str) -> None:
        self.uid = next(self._ids)
        self.network = network
        self.layer = layer
        self.index = index
        self.name = name
        self.location = TensorLocation.DEVICE
        self.allowed_formats = 1
        self.dynamic_range: Any = None
        self.broadcast_across_batch = False
        self._input_meta: Meta | None = None  # a network input's declared shape and type

    @property
    def meta(self) -> Meta:
        if self.layer is None:
            assert self._input_meta is not None
            return self._input_meta
        return self.network.meta_of(self)

    @property
    def shape(self) -> Dims:
        return Dims(self.meta.shape)

    @shape.setter
    def shape(self, shape: Sequence[int]) -> None:
        if self.layer is not None:
            self.network.error(f"ITensor::setDimensions: Error Code 3: API Usage Error (Parameter check "
                               f"failed, condition: isNetworkInput(). {self.name} is not a network input)")
            return
        meta = self.meta
        self._input_meta = Meta(tuple(int(d) for d in shape), meta.dtype)

    @property
    def dtype(self) -> DataType:
        return self.meta.dtype

    @dtype.setter
    def dtype(self, dtype: DataType) -> None:
        if self.layer is not None and dtype == self.meta.dtype:
            return  # the inferred type, set again: accepted
        if self.layer is not None:
            # Strongly typed networks infer every type (Network.html, "STRONGLY_TYPED").
            self.network.error(f"ITensor::setType: Error Code 3: API Usage Error (Parameter check failed, "
                               f"condition: !isStronglyTyped(). {self.name}: the type of a tensor in a "
                               f"strongly typed network is inferred)")
            return
        self._input_meta = Meta(self.meta.shape, dtype)

    @property
    def is_network_input(self) -> bool:
        return self.layer is None

    @property
    def is_network_output(self) -> bool:
        return self in self.network.outputs

    @property
    def is_shape_tensor(self) -> bool:
        return self.dtype in (DataType.INT32, DataType.INT64) and self.meta.value is not None

    @property
    def is_execution_tensor(self) -> bool:
        return True

    def set_dynamic_range(self, low: float, high: float) -> bool:
        self.dynamic_range = (low, high)
        return True

    def reset_dynamic_range(self) -> None:
        self.dynamic_range = None

    def __repr__(self) -> str:
        return f"<ITensor {self.name}>"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("network", None)
        return state


class ILayer:
    """``tensorrt.ILayer`` (Graph/LayerBase.html): a recorded layer with its inputs and outputs.

    Subclasses hold the layer's attributes, ``infer`` (the output metas from the input metas, by
    the layer's documented rules) and ``run`` (the outputs from the input values, with PyTorch)."""

    kind = LayerType.IDENTITY
    num_outputs_of = 1
    max_inputs = 8  # the inputs ``set_input`` takes (each layer's page lists its optional inputs)
    # The attributes a converter may set once the layer is added (its registration declares them);
    # ``name`` and ``metadata`` on every layer, and any property with a setter.
    modelled: frozenset[str] = frozenset()

    def __init__(self, network: INetworkDefinition, inputs: Sequence[ITensor | None]) -> None:
        object.__setattr__(self, "network", network)
        object.__setattr__(self, "inputs", list(inputs))
        object.__setattr__(self, "outputs", [])
        object.__setattr__(self, "name", f"({type(self).__name__[1:-5]}) [{len(network.layers)}]")
        object.__setattr__(self, "metadata", "")
        for tensor in inputs:
            if tensor is not None:
                network.check_owned(tensor, self)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("outputs") and name not in self.modelled and name not in _EVERY_LAYER \
                and not isinstance(getattr(type(self), name, None), property):
            raise StandInIgnores(self, name)
        object.__setattr__(self, name, value)
        if name not in ("name", "metadata") and "network" in self.__dict__:
            self.network.changed()

    def _made(self) -> None:
        """Make the outputs once the subclass's attributes are set."""
        for i in range(self.num_outputs_of):
            self.outputs.append(ITensor(self.network, self, i, f"{self.name}_output_{i}"))

    @property
    def type(self) -> Any:
        """The layer's ``LayerType``; activation and pooling layers use ``type`` for their own kind,
        as TensorRT's do."""
        return self.__dict__.get("_type", self.kind)

    @type.setter
    def type(self, value: Any) -> None:
        self.__dict__["_type"] = value

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def get_input(self, index: int) -> ITensor | None:
        return self.inputs[index] if index < len(self.inputs) else None

    def set_input(self, index: int, tensor: ITensor) -> None:
        self.network.check_owned(tensor, self)
        if index >= self.max_inputs:
            self.network.error(f"{self.name}: ILayer::setInput: Error Code 3: API Usage Error (index "
                               f"{index} is out of range for {type(self).__name__})")
            return
        while len(self.inputs) <= index:  # optional inputs may be set in any order
            self.inputs.append(None)
        self.inputs[index] = tensor
        self.network.changed()

    def get_output(self, index: int) -> ITensor:
        return self.outputs[index]

    def dependencies(self) -> list[ITensor | None]:
        """The inputs this layer needs before it runs (a loop's recurrence needs fewer)."""
        return self.inputs

    def get_output_type(self, index: int) -> DataType:
        return self.outputs[index].dtype

    def set_output_type(self, index: int, dtype: DataType) -> None:
        self.network.error(f"{self.name}: ILayer::setOutputType: Error Code 3: API Usage Error (a "
                           "strongly typed network infers output types; setOutputType is not allowed)")

    @property
    def precision(self) -> DataType:
        return self.outputs[0].dtype

    @precision.setter
    def precision(self, dtype: DataType) -> None:
        self.network.error(f"{self.name}: ILayer::setPrecision: Error Code 3: API Usage Error (a "
                           "strongly typed network infers precisions; setPrecision is not allowed)")

    def reset_precision(self) -> None:
        pass

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        raise NotImplementedError

    def refusals(self, network: INetworkDefinition) -> list[str]:
        """What the builder refuses in how the layer sits in ``network`` (its I/O), beyond its
        inputs' shapes and types: none for most layers."""
        return []

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("network", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class PassThroughLayer(ILayer):
    """A layer whose one output is its input, of its type and shape (identity, a conditional's
    input)."""

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        (meta,) = ins
        assert meta is not None
        return [meta]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        return [ins[0]]

class INetworkDefinition:
    """``tensorrt.INetworkDefinition`` (Graph/Network.html): the layers and tensors a converter
    records, created strongly typed as Torch-TensorRT creates it. The ``add_*`` methods of layers
    are put on this class by the layers' registration (:mod:`trtcheck.backends.lowering.trt.catalogue`);
    one the stand-in lacks raises ``AttributeError`` naming those it has."""

    def __init__(self, logger: ILogger | None, strongly_typed: bool) -> None:
        self.logger = logger
        self.strongly_typed = strongly_typed
        self.layers: list[ILayer] = []
        self.inputs: list[ITensor] = []
        self.outputs: list[ITensor] = []
        self.errors: list[str] = []
        self.loops: list[Any] = []  # each ILoop (:mod:`trtcheck.backends.lowering.trt.layers.loop`)
        self.name = "Unnamed Network 0"
        self._metas: dict[int, Meta] = {}
        self.error_recorder: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("add_"):
            raise lacks(f"INetworkDefinition.{name}", [n for n in dir(type(self)) if n.startswith("add_")])
        raise AttributeError(f"'INetworkDefinition' object has no attribute '{name}'", name=name, obj=self)

    def error(self, message: str) -> None:
        """Say ``message`` as TensorRT does (its logger, at ERROR) and fail the build."""
        self.errors.append(message)
        if self.error_recorder is not None and hasattr(self.error_recorder, "report_error"):
            self.error_recorder.report_error(4, message)
        if self.logger is not None:
            self.logger.log(Severity.ERROR, message)

    def check_owned(self, tensor: Any, layer: ILayer) -> None:
        if not isinstance(tensor, ITensor) or tensor.network is not self:
            raise TypeError(f"{type(layer).__name__}: an input is not an ITensor of this network: {tensor!r}")

    def changed(self) -> None:
        self._metas.clear()

    def meta_of(self, tensor: ITensor) -> Meta:
        if tensor.uid not in self._metas:
            layer = tensor.layer
            assert layer is not None
            metas = infer_layer(layer, [t.meta if t is not None else None for t in layer.dependencies()],
                                self.error)
            for out, meta in zip(layer.outputs, metas, strict=True):
                self._metas[out.uid] = meta
        return self._metas[tensor.uid]

    def add(self, layer: ILayer) -> ILayer:
        layer._made()
        self.layers.append(layer)
        return layer

    # INetworkDefinition's own methods --------------------------------------------------------

    def add_input(self, name: str, dtype: DataType, shape: Sequence[int]) -> ITensor:
        if dtype not in DataType or dtype == DataType.FP4:
            self.error(f"INetworkDefinition::addInput: Error Code 3: API Usage Error ({name}: type "
                       f"{dtype} is not a network input type)")
        tensor = ITensor(self, None, 0, name)
        tensor._input_meta = Meta(tuple(int(d) for d in shape), dtype)
        self.inputs.append(tensor)
        return tensor

    def mark_output(self, tensor: ITensor) -> None:
        self.outputs.append(tensor)

    def unmark_output(self, tensor: ITensor) -> None:
        self.outputs.remove(tensor)

    def mark_output_for_shapes(self, tensor: ITensor) -> bool:
        self.outputs.append(tensor)
        return True

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def get_layer(self, index: int) -> ILayer:
        return self.layers[index]

    def get_input(self, index: int) -> ITensor:
        return self.inputs[index]

    def get_output(self, index: int) -> ITensor:
        return self.outputs[index]

    def get_flag(self, flag: Any) -> bool:
        return self.strongly_typed and getattr(flag, "name", "") == "STRONGLY_TYPED"

    @property
    def flags(self) -> int:
        return 2 if self.strongly_typed else 0

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, index: int) -> ILayer:
        return self.layers[index]


@outside_modes
def infer_layer(layer: ILayer, ins: list[Meta | None], report: Any) -> list[Meta]:
    """``layer.infer``; a refusal is reported (``report(message)``) and gives empty shapes."""
    try:
        return layer.infer(ins)
    except LayerError as exc:
        report(f"{layer.name}: {exc}")
    except (IndexError, ValueError, TypeError, KeyError, ZeroDivisionError) as exc:
        report(f"{layer.name}: Error Code 4: Internal Error (could not infer the output shapes: {exc})")
    dtype = next((m.dtype for m in ins if m is not None), DataType.FLOAT)
    return [Meta((), dtype) for _ in range(layer.num_outputs_of)]
