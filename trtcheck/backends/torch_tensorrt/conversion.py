"""What Torch-TensorRT's converters built for each graph node, read through TensorRT's Python API
(TensorRT's own under ``tensorrt``, the stand-in under ``lowering``): the layers each node added
and the tensors it returned. With it a network the builder refused is explained
(:meth:`Conversion.refusal`): the layer it refused and what it logged, the node and the user's
``file:line`` the layer came from, and, following the layer's inputs back through the network, the
first node whose tensor has another type or shape than PyTorch computes there: its converter is the
one to report, not the ``assert cuda_engine`` Torch-TensorRT raises after the refusal.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.torch_tensorrt.nodes import user_line
from trtcheck.errors import REPORT_CONVERTER
from trtcheck.tensors import op_name

# The logger Torch-TensorRT gives TensorRT (torch_tensorrt/logging.py, 2.12 to 2.14): what the
# builder logs, its refusals among it, arrives there.
TRT_LOGGER = "torch_tensorrt [TensorRT Conversion Context]"

# Who refused a build: TensorRT, or the lowering backend's stand-in predicting it.
TENSORRT_BUILDER = "TensorRT's builder"
STANDIN_BUILDER = "the TensorRT stand-in's builder (predicting TensorRT's)"
# How a compile's exception carries each message TensorRT logged at ERROR (the builder's reason
# for refusing a network), as a note: what a reduction reads back from the row's traceback.
LOGGED_ERROR = "TensorRT logged at ERROR: "

# TensorRT's DataType names as PyTorch's dtypes.
_TORCH = {"FLOAT": torch.float32, "HALF": torch.float16, "BF16": torch.bfloat16, "INT8": torch.int8,
          "UINT8": torch.uint8, "INT32": torch.int32, "INT64": torch.int64, "BOOL": torch.bool,
          "DOUBLE": torch.float64}

# A hook told of each node converted: (interpreter, node, what its converter returned, index of
# the first layer it added).
Hook = Callable[[Any, torch.fx.Node, Any, int], None]


@dataclass(frozen=True)
class Converted:
    """One graph node as the interpreter converted it: the network and the layers it added."""

    node: torch.fx.Node
    network: Any
    layers: range


@dataclass(frozen=True)
class _Made:
    """A tensor a converter returned for its node, and what PyTorch computes there."""

    converted: Converted
    expected: torch.Tensor


class Conversion:
    """The nodes converted while :meth:`watching`, and the tensors their converters returned."""

    def __init__(self) -> None:
        self.nodes: list[Converted] = []
        self.made: dict[tuple[int, str], _Made] = {}  # (id(network), tensor name) -> its node
        self.registry: Any = None  # the release's converter registry

    @contextlib.contextmanager
    def watching(self, hook: Hook | None = None) -> Iterator[None]:
        """Within this, each node Torch-TensorRT's interpreter converts is recorded (and told to
        ``hook``)."""
        interpreter = importlib.import_module("torch_tensorrt.dynamo.conversion._TRTInterpreter")
        self.registry = interpreter.CONVERTERS
        cls = interpreter.TRTInterpreter
        original = cls.run_node

        def run_node(this: Any, n: torch.fx.Node) -> Any:
            network = this.ctx.net
            start = network.num_layers
            out = original(this, n)
            self._record(n, out, network, start)
            if hook is not None:
                hook(this, n, out, start)
            return out

        cls.run_node = run_node
        try:
            yield
        finally:
            cls.run_node = original

    def _record(self, n: torch.fx.Node, out: Any, network: Any, start: int) -> None:
        if n.op != "call_function" or n.target is operator.getitem:
            return
        converted = Converted(n, network, range(start, network.num_layers))
        self.nodes.append(converted)
        vals = pytree.tree_leaves(n.meta.get("val"))
        for val, tensor in zip(vals, pytree.tree_leaves(out), strict=False):
            if isinstance(val, torch.Tensor) and _is_trt_tensor(tensor):
                self.made[(id(network), tensor.name)] = _Made(converted, val)

    def builder_of(self, layer: str) -> Converted | None:
        """The converted node that added the layer named ``layer``, if one did here."""
        return next((c for c in self.nodes for i in c.layers
                     if c.network.get_layer(i).name == layer), None)

    def refusal(self, messages: list[str], builder: str) -> str | None:
        """The builder's refusal explained, where one of ``messages`` (what TensorRT logged at
        ERROR) names a layer of a network converted here; else None. ``builder``: who refused
        ("TensorRT's builder")."""
        for message in messages:
            found = self._refused_layer(message)
            if found is None:
                continue
            converted, layer = found
            error = message.replace(f"{layer.name}: ", "", 1)
            node = converted.node
            text = (f"{builder} refused layer '{layer.name}' ({_kind(layer)}) of node {node.name} "
                    f"({op_name(node.target)}{_at(node)}): {error}")
            origin = self._origin(converted.network, layer)
            if origin is None:
                return (f"{text}; every tensor it reads has the type and shape PyTorch computes: "
                        f"{self._converter(node)} built a layer TensorRT refuses; {REPORT_CONVERTER}")
            made, how = origin
            source = made.converted.node
            return (f"{text}; what it reads is {how} since node {source.name} "
                    f"({op_name(source.target)}{_at(source)}), built so by {self._converter(source)}; "
                    f"{REPORT_CONVERTER}")
        return None

    def _refused_layer(self, message: str) -> tuple[Converted, Any] | None:
        """The converted node and layer ``message`` names (the longest layer name it holds)."""
        best: tuple[Converted, Any] | None = None
        for converted in self.nodes:
            for i in converted.layers:
                layer = converted.network.get_layer(i)
                if layer.name and layer.name in message and (
                        best is None or len(layer.name) > len(best[1].name)):
                    best = converted, layer
        return best

    def _origin(self, network: Any, layer: Any) -> tuple[_Made, str] | None:
        """Where the tensors ``layer`` reads first differ from PyTorch's: following its inputs
        back through ``network``, the earliest node whose returned tensor differs in the way the
        nearest differing one does (its type, else its shape), and how it differs."""
        producers = {}
        for i in range(network.num_layers):
            each = network.get_layer(i)
            for k in range(each.num_outputs):
                producers[each.get_output(k).name] = i
        found: list[tuple[int, _Made, str, str]] = []  # (layer index, made, kind, how)
        stack, seen = list(_inputs(layer)), set()
        while stack:
            tensor = stack.pop(0)
            if tensor.name in seen:
                continue
            seen.add(tensor.name)
            made = self.made.get((id(network), tensor.name))
            differs = _differs(tensor, made.expected) if made else None
            if made is not None and differs is not None:
                found.append((producers.get(tensor.name, -1), made, *differs))
            if tensor.name in producers:
                stack.extend(_inputs(network.get_layer(producers[tensor.name])))
        if not found:
            return None
        kind = found[0][2]
        _, made, _, how = min((f for f in found if f[2] == kind), key=lambda f: f[0])
        return made, how

    def _converter(self, node: torch.fx.Node) -> str:
        """Torch-TensorRT's converter of ``node``: its function and ``path:line``."""
        packet = self.registry.get(node) if self.registry is not None else None
        if not packet:
            return f"Torch-TensorRT's converter for {op_name(node.target)}"
        fn = inspect.unwrap(packet[0])
        where = ""
        with contextlib.suppress(OSError, TypeError):
            parts = Path(inspect.getsourcefile(fn) or "").parts
            if "torch_tensorrt" in parts:
                at = len(parts) - 1 - parts[::-1].index("torch_tensorrt")
                where = f" at {'/'.join(parts[at:])}:{inspect.getsourcelines(fn)[1]}"
        return f"Torch-TensorRT's converter for {op_name(node.target)} ({fn.__name__}{where})"


def _is_trt_tensor(value: Any) -> bool:
    return not isinstance(value, torch.Tensor) and hasattr(value, "name") and hasattr(value, "dtype")


def _inputs(layer: Any) -> list[Any]:
    return [t for t in (layer.get_input(k) for k in range(layer.num_inputs)) if t is not None]


def _kind(layer: Any) -> str:
    return getattr(layer.type, "name", str(layer.type))


def _short(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _differs(tensor: Any, expected: torch.Tensor) -> tuple[str, str] | None:
    """How ``tensor`` differs from what PyTorch computes (``expected``): ``("type", how)`` or
    ``("shape", how)``; None where it does not, or differs as Torch-TensorRT means it to (a
    complex value in its real layout, float64 as float32: TensorRT has no FP64)."""
    if expected.is_complex():
        return None
    dtype = _TORCH.get(getattr(tensor.dtype, "name", ""))
    if dtype is not None and dtype != expected.dtype and not (
            expected.dtype == torch.float64 and dtype == torch.float32):
        return "type", f"{_short(dtype)} where PyTorch computes {_short(expected.dtype)}"
    shape = tuple(int(d) for d in tensor.shape)
    want = tuple(d if isinstance(d, int) else -1 for d in expected.shape)
    if len(shape) != len(want) or any(a != b for a, b in zip(shape, want, strict=True)
                                      if a >= 0 and b >= 0):
        return "shape", f"of shape {shape} where PyTorch computes {want}"
    return None


def _at(node: torch.fx.Node) -> str:
    """``, file:line`` of the user's line ``node`` came from, where its stack trace says: its
    innermost frame outside installed packages (``torch.nn``'s own modules among them)."""
    where = user_line(node)
    return f", {where}" if where else ""
