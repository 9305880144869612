"""TensorRT's enums, ``DataType``, ``Dims`` and ``Weights`` for the behaving stand-in.

Pages cited as ``Section/Page.html`` are of TensorRT's Python API reference,
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/.

NOT TensorRT: the names and values of TensorRT's public Python API, so that Torch-TensorRT's code
that reads them runs; see :mod:`trtcheck.backends.lowering.trt`.
"""

from __future__ import annotations

import ctypes
import enum
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import torch

from trtcheck.backends.lowering.trt.modes import outside_modes


class TrtEnum(enum.Enum):
    """A TensorRT enum member: compared by identity, hashable, convertible to ``int``."""

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __str__ = __repr__


def _enum(name: str, members: str) -> type[TrtEnum]:
    made: type[TrtEnum] = TrtEnum(name, [(m, i) for i, m in enumerate(members.split())])  # type: ignore[assignment]
    made.__module__ = __name__  # pickled (in a serialized engine) by this module's name
    return made


class DataType(TrtEnum):
    """``tensorrt.DataType`` (FoundationalTypes/DataType.html): the element types of a tensor."""

    FLOAT = 0
    HALF = 1
    INT8 = 2
    INT32 = 3
    BOOL = 4
    UINT8 = 5
    FP8 = 6
    BF16 = 7
    INT64 = 8
    INT4 = 9
    FP4 = 10
    E8M0 = 11

    @property
    def itemsize(self) -> float:
        return _ITEMSIZE[self]


_ITEMSIZE = {DataType.FLOAT: 4, DataType.HALF: 2, DataType.INT8: 1, DataType.INT32: 4, DataType.BOOL: 1,
             DataType.UINT8: 1, DataType.FP8: 1, DataType.BF16: 2, DataType.INT64: 8, DataType.INT4: 0.5,
             DataType.FP4: 0.5, DataType.E8M0: 1}

TORCH: dict[DataType, torch.dtype] = {
    DataType.FLOAT: torch.float32, DataType.HALF: torch.float16, DataType.INT8: torch.int8,
    DataType.INT32: torch.int32, DataType.BOOL: torch.bool, DataType.UINT8: torch.uint8,
    DataType.FP8: torch.float8_e4m3fn, DataType.BF16: torch.bfloat16, DataType.INT64: torch.int64,
}
FROM_TORCH = {v: k for k, v in TORCH.items()}
FROM_NUMPY = {np.dtype(np.float32): DataType.FLOAT, np.dtype(np.float16): DataType.HALF,
              np.dtype(np.int8): DataType.INT8, np.dtype(np.int32): DataType.INT32,
              np.dtype(np.bool_): DataType.BOOL, np.dtype(np.uint8): DataType.UINT8,
              np.dtype(np.int64): DataType.INT64}
FLOATS = frozenset({DataType.FLOAT, DataType.HALF, DataType.BF16})
INTS = frozenset({DataType.INT32, DataType.INT64})
# What a shape tensor may be (ITensor.html, "is_shape_tensor"): INT32, INT64, BOOL.
SHAPE_TYPES = frozenset({DataType.INT32, DataType.INT64, DataType.BOOL})


class Dims:
    """``tensorrt.Dims`` (FoundationalTypes/Dims.html): a shape, -1 for a dynamic dimension.

    As TensorRT's binding does, it takes item assignment, and a slice gives a tuple."""

    MAX_DIMS = 8

    def __init__(self, shape: Iterable[int] = ()) -> None:
        self._dims = [int(d) for d in shape]
        if len(self._dims) > self.MAX_DIMS:
            raise ValueError(f"a Dims holds at most {self.MAX_DIMS} dimensions, got {len(self._dims)}")

    def __len__(self) -> int:
        return len(self._dims)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self._dims[index])
        return self._dims[index]

    def __setitem__(self, index: int, value: int) -> None:
        self._dims[index] = int(value)

    def __iter__(self) -> Iterator[int]:
        return iter(self._dims)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Dims):
            return self._dims == other._dims
        if isinstance(other, (tuple, list)):
            return self._dims == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._dims))

    def __repr__(self) -> str:
        return repr(tuple(self._dims))

    def __add__(self, other: Iterable[int]) -> tuple[int, ...]:
        return tuple(self._dims) + tuple(other)

    def __radd__(self, other: Iterable[int]) -> tuple[int, ...]:
        return tuple(other) + tuple(self._dims)


class Weights:
    """``tensorrt.Weights`` (FoundationalTypes/Weights.html): host values of a layer.

    ``Weights()`` (empty), ``Weights(numpy_array)`` or ``Weights(dtype, host_pointer, count)``. The
    values are copied when made: TensorRT reads them at build time from memory the caller keeps."""

    @outside_modes
    def __init__(self, *args: Any) -> None:
        if not args:
            self.tensor = torch.empty(0)
            self.dtype = DataType.FLOAT
        elif len(args) == 1 and isinstance(args[0], DataType):
            self.tensor, self.dtype = torch.empty(0, dtype=TORCH[args[0]]), args[0]
        elif len(args) == 1:
            array = np.ascontiguousarray(args[0])
            if array.dtype == np.float64:
                raise TypeError("TensorRT Weights take no float64 array")
            self.dtype = FROM_NUMPY[array.dtype]
            self.tensor = torch.from_numpy(array.copy()).reshape(-1)
        else:
            dtype, pointer, count = args
            self.dtype = dtype
            if dtype in (DataType.FP4, DataType.INT4):
                size = (int(count) + 1) // 2
                self.tensor = _from_host(int(pointer), torch.uint8, size)
            else:
                self.tensor = _from_host(int(pointer), TORCH[dtype], int(count))

    @property
    def size(self) -> int:
        return int(self.tensor.numel()) * (2 if self.dtype in (DataType.FP4, DataType.INT4) else 1)

    @property
    def nbytes(self) -> int:
        return int(self.tensor.numel() * self.tensor.element_size())

    def numpy(self) -> np.ndarray:
        return self.tensor.numpy()


def _from_host(pointer: int, dtype: torch.dtype, count: int) -> torch.Tensor:
    """A copy of ``count`` values of ``dtype`` at host address ``pointer``."""
    if count == 0:
        return torch.empty(0, dtype=dtype)
    size = torch.empty(0, dtype=dtype).element_size()
    raw = (ctypes.c_uint8 * (count * size)).from_address(pointer)
    return torch.frombuffer(bytearray(raw), dtype=dtype).clone()


@outside_modes
def weights_tensor(value: Any) -> tuple[torch.Tensor, DataType]:
    """A layer's weights (``Weights`` or a numpy array) as a flat tensor and its type."""
    if isinstance(value, Weights):
        return value.tensor, value.dtype
    made = Weights(np.asarray(value))
    return made.tensor, made.dtype


# The enums below are TensorRT's, member names in TensorRT's order (Infer/Layers/*.html,
# Infer/Core/*.html); their values are what converters compare, never arithmetic.
ElementWiseOperation = _enum("ElementWiseOperation",
                             "SUM PROD MAX MIN SUB DIV POW FLOOR_DIV AND OR XOR EQUAL GREATER LESS")
UnaryOperation = _enum("UnaryOperation",
                       "EXP LOG SQRT RECIP ABS NEG SIN COS TAN SINH COSH ASIN ACOS ATAN ASINH ACOSH "
                       "ATANH CEIL FLOOR ERF NOT SIGN ROUND ISINF ISNAN")
ActivationType = _enum("ActivationType",
                       "RELU SIGMOID TANH LEAKY_RELU ELU SELU SOFTSIGN SOFTPLUS CLIP HARD_SIGMOID "
                       "SCALED_TANH THRESHOLDED_RELU GELU_ERF GELU_TANH")
ReduceOperation = _enum("ReduceOperation", "SUM PROD MAX MIN AVG NONE")
TopKOperation = _enum("TopKOperation", "MAX MIN")
PoolingType = _enum("PoolingType", "MAX AVERAGE MAX_AVERAGE_BLEND")
MatrixOperation = _enum("MatrixOperation", "NONE TRANSPOSE VECTOR")
GatherMode = _enum("GatherMode", "DEFAULT ELEMENT ND")
ScatterMode = _enum("ScatterMode", "ELEMENT ND")
SampleMode = _enum("SampleMode", "STRICT_BOUNDS WRAP CLAMP FILL REFLECT")
InterpolationMode = _enum("InterpolationMode", "NEAREST LINEAR CUBIC")
ResizeCoordinateTransformation = _enum("ResizeCoordinateTransformation",
                                       "ALIGN_CORNERS ASYMMETRIC HALF_PIXEL")
ResizeSelector = _enum("ResizeSelector", "FORMULA UPPER")
ResizeRoundMode = _enum("ResizeRoundMode", "HALF_UP HALF_DOWN FLOOR CEIL")
PaddingMode = _enum("PaddingMode", "EXPLICIT_ROUND_DOWN EXPLICIT_ROUND_UP SAME_UPPER SAME_LOWER")
ScaleMode = _enum("ScaleMode", "UNIFORM CHANNEL ELEMENTWISE")
FillOperation = _enum("FillOperation", "LINSPACE RANDOM_UNIFORM RANDOM_NORMAL")
TensorIOMode = _enum("TensorIOMode", "NONE INPUT OUTPUT")
TensorLocation = _enum("TensorLocation", "DEVICE HOST")
LayerType = _enum("LayerType",
                  "CONVOLUTION CAST ACTIVATION POOLING LRN SCALE SOFTMAX DECONVOLUTION CONCATENATION "
                  "ELEMENTWISE PLUGIN UNARY PADDING SHUFFLE REDUCE TOPK GATHER MATRIX_MULTIPLY "
                  "RAGGED_SOFTMAX CONSTANT IDENTITY PLUGIN_V2 SLICE SHAPE PARAMETRIC_RELU RESIZE "
                  "TRIP_LIMIT RECURRENCE ITERATOR LOOP_OUTPUT SELECT FILL QUANTIZE DEQUANTIZE "
                  "CONDITION CONDITIONAL_INPUT CONDITIONAL_OUTPUT SCATTER EINSUM ASSERTION ONE_HOT "
                  "NON_ZERO GRID_SAMPLE NMS REVERSE_SEQUENCE NORMALIZATION PLUGIN_V3 SQUEEZE "
                  "UNSQUEEZE CUMULATIVE DYNAMIC_QUANTIZE ATTENTION KV_CACHE_UPDATE")
NetworkDefinitionCreationFlag = _enum("NetworkDefinitionCreationFlag", "EXPLICIT_BATCH STRONGLY_TYPED")
ExecutionContextAllocationStrategy = _enum("ExecutionContextAllocationStrategy",
                                           "STATIC ON_PROFILE_CHANGE USER_MANAGED")
SerializationFlag = _enum("SerializationFlag", "EXCLUDE_WEIGHTS EXCLUDE_LEAN_RUNTIME INCLUDE_REFIT")
# Core/BuilderConfig.html: the builder's flags, in TensorRT 10's order (the members 10.x, 11.0 and 11.1
# share; STRICT_TYPES, gone since TensorRT 10, is not one). REFIT and REFIT_IDENTICAL make an engine
# refittable and STRIP_PLAN leaves its refittable weights out of the plan (engine.Plan); the others
# change nothing the stand-in builds.
BuilderFlag = _enum("BuilderFlag",
                    "FP16 INT8 DEBUG GPU_FALLBACK REFIT DISABLE_TIMING_CACHE TF32 SPARSE_WEIGHTS "
                    "SAFETY_SCOPE OBEY_PRECISION_CONSTRAINTS PREFER_PRECISION_CONSTRAINTS DIRECT_IO "
                    "REJECT_EMPTY_ALGORITHMS VERSION_COMPATIBLE EXCLUDE_LEAN_RUNTIME FP8 "
                    "ERROR_ON_TIMING_CACHE_MISS BF16 DISABLE_COMPILATION_CACHE STRIP_PLAN REFIT_IDENTICAL "
                    "WEIGHT_STREAMING INT4 REFIT_INDIVIDUAL STRICT_NANS MONITOR_MEMORY FP4 "
                    "EDITABLE_TIMING_CACHE DISTRIBUTIVE_INDEPENDENCE")
# FoundationalTypes/WeightsRole.html: what a layer's weights are to it (a refittable weight's name
# ends with its role's name, see refit.py).
WeightsRole = _enum("WeightsRole", "KERNEL BIAS SHIFT SCALE CONSTANT ANY")
LayerInformationFormat = _enum("LayerInformationFormat", "ONELINE JSON")
DeviceType = _enum("DeviceType", "GPU DLA")
AttentionNormalizationOp = _enum("AttentionNormalizationOp", "NONE SOFTMAX")
CausalMaskKind = _enum("CausalMaskKind", "NONE UPPER_LEFT LOWER_RIGHT")
TripLimit = _enum("TripLimit", "COUNT WHILE")
# Graph/Layers.html#ikvcacheupdatelayer: LINEAR is the only mode (TensorRT 10.15 on).
KVCacheMode = _enum("KVCacheMode", "LINEAR")
# Plugin/PluginField.html, Plugin/IPluginV3.html: a plugin field's type, the phase a plugin is made for.
PluginFieldType = _enum("PluginFieldType", "FLOAT16 FLOAT32 FLOAT64 INT8 INT16 INT32 CHAR DIMS UNKNOWN BF16 "
                                           "INT64 FP8 INT4 FP4")
TensorRTPhase = _enum("TensorRTPhase", "BUILD RUNTIME")
LoopOutput = _enum("LoopOutput", "LAST_VALUE CONCATENATE REVERSE")
EngineCapability = _enum("EngineCapability", "STANDARD SAFETY DLA_STANDALONE")
TensorFormat = _enum("TensorFormat", "LINEAR CHW2 HWC8 CHW4 CHW16 CHW32 DHWC8 CDHW32 HWC DLA_LINEAR "
                                     "DLA_HWC4 HWC16 DHWC")


class Severity(TrtEnum):
    """``tensorrt.ILogger.Severity`` (Infer/Core/Logger.html)."""

    INTERNAL_ERROR = 0
    ERROR = 1
    WARNING = 2
    INFO = 3
    VERBOSE = 4


class ILogger:
    """``tensorrt.ILogger`` (Infer/Core/Logger.html): subclasses implement ``log``."""

    Severity = Severity
    INTERNAL_ERROR = Severity.INTERNAL_ERROR
    ERROR = Severity.ERROR
    WARNING = Severity.WARNING
    INFO = Severity.INFO
    VERBOSE = Severity.VERBOSE

    def __init__(self, *args: Any) -> None:
        pass

    def log(self, severity: Severity, msg: str) -> None:
        pass


class Logger(ILogger):
    """``tensorrt.Logger``: prints messages at or above its severity."""

    def __init__(self, min_severity: Severity = Severity.WARNING) -> None:
        self.min_severity = min_severity

    def log(self, severity: Severity, msg: str) -> None:
        if int(severity) <= int(self.min_severity):
            print(f"[TRT] [{severity.name[0]}] {msg}")


def volume(shape: Iterable[int]) -> int:
    """``tensorrt.volume``: the product of the dimensions."""
    total = 1
    for d in shape:
        total *= int(d)
    return total


ENUMS: dict[str, Any] = {e.__name__: e for e in (
    DataType, ElementWiseOperation, UnaryOperation, ActivationType, ReduceOperation, TopKOperation,
    PoolingType, MatrixOperation, GatherMode, ScatterMode, SampleMode, InterpolationMode,
    ResizeCoordinateTransformation, ResizeSelector, ResizeRoundMode, PaddingMode, ScaleMode,
    FillOperation, TensorIOMode, TensorLocation, LayerType, NetworkDefinitionCreationFlag,
    ExecutionContextAllocationStrategy, SerializationFlag, BuilderFlag, WeightsRole,
    LayerInformationFormat, DeviceType, EngineCapability, TensorFormat, AttentionNormalizationOp,
    CausalMaskKind, TripLimit, KVCacheMode, LoopOutput, PluginFieldType, TensorRTPhase)}
# The module-level aliases of DataType members (tensorrt.float32, tensorrt.int64, ...).
ALIASES = {"float32": DataType.FLOAT, "float16": DataType.HALF, "bfloat16": DataType.BF16,
           "int8": DataType.INT8, "int32": DataType.INT32, "int64": DataType.INT64,
           "bool": DataType.BOOL, "uint8": DataType.UINT8, "fp8": DataType.FP8, "int4": DataType.INT4,
           "fp4": DataType.FP4}
