"""The lowering host: a subprocess that runs Torch-TensorRT's real Python code on PyTorch.

A child of :mod:`trtcheck.process`, started with the code directory of one release as its argument
(empty for an installed ``torch_tensorrt``). It puts the release's code on ``sys.path``, installs the
``tensorrt`` stand-in and CUDA shims (:mod:`trtcheck.backends.lowering.standin`, or with ``behaving``
the one that builds and runs engines, :mod:`trtcheck.backends.lowering.trt`; they patch torch, which
is why this is a separate process), imports ``torch_tensorrt`` and serves requests:

- ``("compile", key, program_bytes, call, settings, device, dryrun, example)``: with ``dryrun``,
  ``dynamo.compile(program, **call, **settings, dryrun=True)`` with what a real compile does
  differently reproduced (see :class:`Compiler`); without, the real compile through the behaving
  stand-in (converters, builder, runtime), its engines called once on ``example`` to read the
  dtypes they hand back. The module is kept under ``key`` in place of the one before (a compiled
  module serves one row); the reply is the evidence;
- ``("call", key, args, kwargs)``: runs the kept module with PyTorch; the reply is
  ``(outputs, (args, kwargs))``, the inputs as they are after the call.

Replies are ``("ok", payload)``, ``("unsupported", reason)`` or ``("error", Failure)``. The first
reply, before any request, says whether the import worked.

Every result is a prediction: at the graph level with dryrun (Torch-TensorRT's own lowering and
partitioning, each TensorRT block run by PyTorch), at the converters and engine without (the
release's converters build each network, the stand-in's builder and runtime run it with PyTorch's
numbers). TensorRT itself never runs here.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import logging
import operator
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.lowering import standin as ttrt_standin
from trtcheck.backends.lowering import trt as behaving_standin
from trtcheck.backends.lowering.code import compile_bytecode
from trtcheck.backends.lowering.trt.types import TORCH, DataType, LayerType
from trtcheck.backends.torch_tensorrt.compat import torch_tensorrt_inputs
from trtcheck.backends.torch_tensorrt.inspection import partition_summary
from trtcheck.process import Parent, exit_now, freeze_imports
from trtcheck.tensors import clone

_COMPLEX_TO_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64,
                    torch.complex32: torch.float16}


class Rejected(Exception):
    """What real Torch-TensorRT would refuse and dryrun lets through: the row is ``unsupported``."""


class Sources:
    """The release's source text, to cite ``torch_tensorrt/...py:LINE`` for what trtcheck mirrors."""

    def __init__(self, ttrt: ModuleType) -> None:
        root = Path(inspect.getsourcefile(ttrt) or "").parent
        self.files = {path.relative_to(root.parent).as_posix(): path.read_text(errors="replace")
                      for path in sorted(root.rglob("*.py"))}

    def cite(self, needle: str, *prefer: str) -> str:
        """Where ``needle`` first appears, looking first in files ending as ``prefer`` says, in order."""
        def rank(rel: str) -> int:
            return next((i for i, end in enumerate(prefer) if rel.endswith(end)), len(prefer))

        for rel in sorted(self.files, key=rank):
            text = self.files[rel]
            at = text.find(needle)
            if at >= 0:
                return f"{rel}:{text.count(chr(10), 0, at) + 1}"
        return f"no line of this release reads {needle!r}"


def load(code_dir: str, behaving: bool = False) -> tuple[ModuleType, dict[str, Any]]:
    """Import torch_tensorrt from ``code_dir`` (installed when empty; its bytecode written first)
    over the stand-in and shims; ``behaving``: the stand-in that builds and runs engines
    (:mod:`trtcheck.backends.lowering.trt`)."""
    started = time.perf_counter()
    standin = True
    if code_dir:
        compile_bytecode(Path(code_dir))
        sys.path.insert(0, code_dir)
        text = (Path(code_dir) / "torch_tensorrt" / "_version.py").read_text()
        match = re.search(r"""__tensorrt_version__\s*=\s*["']([^"']+)""", text)
        installer = behaving_standin.install if behaving else ttrt_standin.install
        installer(match[1] if match else "0.0.0", shim_cuda=not torch.cuda.is_available())
    elif importlib.util.find_spec("tensorrt") is None:
        ttrt_standin.install("0.0.0", shim_cuda=not torch.cuda.is_available())
    else:
        standin = False
    with contextlib.redirect_stdout(io.StringIO()):
        ttrt = importlib.import_module("torch_tensorrt")
    if standin and not (behaving and torch.cuda.is_available()):
        # On a GPU the behaving stand-in's engines run on CUDA, where the runtime's Device says.
        ttrt_standin.shim_device(ttrt)
    parameters = [p.name for p in inspect.signature(ttrt.dynamo.compile).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    trt = sys.modules.get("tensorrt")
    return ttrt, {"version": str(ttrt.__version__), "parameters": parameters, "standin": standin,
                  "tensorrt": getattr(trt, "__version__", None),
                  "tensorrt_names": list(getattr(trt, "TOUCHED", [])),
                  "import_s": time.perf_counter() - started}


class Engine(torch.nn.Module):
    """A TensorRT block run by PyTorch, with the input checks and output dtypes of an engine."""

    def __init__(self, block: torch.fx.GraphModule, inputs: list[tuple[str, torch.dtype | None]],
                 outputs: list[torch.dtype | None], where: str) -> None:
        super().__init__()
        self.block = block
        self.inputs = inputs
        self.outputs = outputs
        self.where = where

    def forward(self, *args: Any) -> Any:
        for (name, expected), value in zip(self.inputs, args, strict=False):
            if isinstance(value, torch.Tensor) and expected is not None and value.dtype != expected:
                # The runtime's own check, with its own message (self.where).
                raise AssertionError(f"Dtype mismatch for input {name}. Expect {expected}, got "
                                     f"{value.dtype}. [{self.where}]")
        result = self.block(*args)
        leaves, spec = pytree.tree_flatten(result)
        cast = [leaf.to(dtype) if isinstance(leaf, torch.Tensor) and dtype is not None else leaf
                for leaf, dtype in zip(leaves, self.outputs, strict=False)]
        return pytree.tree_unflatten(cast, spec)


def _val(node: torch.fx.Node) -> Any:
    return node.meta.get("val", node.meta.get("tensor_meta"))


def _engine_dtype(dtype: torch.dtype) -> torch.dtype:
    """An engine tensor's dtype: complex as its real layout; float64 as float32 (inputs: repaired by
    truncate_double, or refused before this; outputs: built as float32 by ``use_default``)."""
    dtype = _COMPLEX_TO_REAL.get(dtype, dtype)
    return torch.float32 if dtype == torch.float64 else dtype


def _fetch(module: torch.nn.Module, target: str) -> Any:
    owner = module
    for part in target.split("."):
        owner = getattr(owner, part)
    return owner


def _set(module: torch.nn.Module, target: str, value: torch.Tensor) -> None:
    *path, name = target.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    if isinstance(getattr(owner, name), torch.nn.Parameter):
        value = torch.nn.Parameter(value, requires_grad=False)
    setattr(owner, name, value)


def _doubles(block: torch.fx.GraphModule) -> Iterator[str]:
    """The float64 (or complex128) values a TensorRT block holds, named for a message."""
    for node in block.graph.nodes:
        if node.op == "get_attr":
            value = _fetch(block, str(node.target))
            if isinstance(value, torch.Tensor) and value.dtype in (torch.float64, torch.complex128):
                yield f"constant {node.target}"
        elif node.op in ("placeholder", "call_function"):
            val = _val(node)
            if isinstance(val, torch.Tensor) and val.dtype in (torch.float64, torch.complex128):
                kind = "input" if node.op == "placeholder" else f"result of {_name(node.target)}"
                yield f"{kind} {node.name}"


def _complex(block: torch.fx.GraphModule) -> Iterator[tuple[str, str]]:
    """Complex values in a TensorRT block: ``("scalar", "1j in aten.add.Tensor add")`` for a
    Python complex argument, ``("tensor", "complex64 constant weights")`` for a complex tensor."""
    for node in block.graph.nodes:
        if node.op == "call_function":
            for arg in pytree.tree_leaves((node.args, node.kwargs)):
                if isinstance(arg, complex):
                    yield "scalar", f"{arg!r} in {_name(node.target)} {node.name}"
        value = _fetch(block, str(node.target)) if node.op == "get_attr" else _val(node)
        if isinstance(value, torch.Tensor) and value.is_complex():
            yield "tensor", f"{value.dtype} {'constant' if node.op == 'get_attr' else node.op} {node.name}"


def _name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return getattr(target, "__name__", str(target))


class Compiler:
    """Runs ``dynamo.compile(dryrun=True)`` of one release as its real compile would go."""

    def __init__(self, ttrt: ModuleType) -> None:
        self.ttrt = ttrt
        self.version = str(ttrt.__version__)
        self.compiler = importlib.import_module("torch_tensorrt.dynamo._compiler")
        self.partitioning = importlib.import_module("torch_tensorrt.dynamo.partitioning")
        self.sources = Sources(ttrt)

    def compile(self, program: torch.export.ExportedProgram, call: dict[str, Any],
                settings: dict[str, Any], device: str, dryrun: bool = True,
                example: tuple[tuple[Any, ...], dict[str, Any]] | None = None,
                ) -> tuple[torch.nn.Module, dict[str, Any]]:
        """The compiled module, and evidence: partition, notes, the early return if taken; without
        ``dryrun`` the real compile (:meth:`converted`)."""
        if not dryrun:
            return self.converted(program, call, settings, device, example)
        seen: dict[str, Any] = {}
        with self.as_real(seen), warnings.catch_warnings(record=True) as caught, \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("always")
            module = self.ttrt.dynamo.compile(program, **torch_tensorrt_inputs(call, self.ttrt),
                                              **settings, dryrun=True)
        notes = list(dict.fromkeys(f"Torch-TensorRT warned: {w.message}" for w in caught
                                   if "torch_tensorrt" in Path(w.filename).parts))
        options = seen["settings"]
        if "early_return" in seen:
            notes.append(seen["early_return"])
        else:
            notes += self.as_engines(module, bool(options.truncate_double))
        module = module.to(device)
        split = partition_summary(module)
        return module, {"notes": notes, "engines": split.engines, "fallbacks": split.fallbacks,
                        "boundaries": split.boundaries}

    def converted(self, program: torch.export.ExportedProgram, call: dict[str, Any],
                  settings: dict[str, Any], device: str,
                  example: tuple[tuple[Any, ...], dict[str, Any]] | None,
                  ) -> tuple[torch.nn.Module, dict[str, Any]]:
        """The release's real compile through the behaving stand-in: a converter that raises
        raises here (with what TensorRT logged at ERROR as a note on the exception); a node a
        validator refused is a fallback; each engine's layers, and the outputs whose dtype the
        engines hand back other than eager's, are in the evidence."""
        errors = _ErrorLog()
        root = logging.getLogger()
        root.addHandler(errors)
        seen: dict[str, Any] = {}
        narrowed: list[str] = []
        try:
            # as_real: the real compile returns early by itself; this names why in a note.
            with self.as_real(seen), self.watching_int64(narrowed), \
                    warnings.catch_warnings(record=True) as caught, \
                    contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("always")
                module = self.ttrt.dynamo.compile(program, **torch_tensorrt_inputs(call, self.ttrt),
                                                  **settings)
        except Exception as exc:
            for message in errors.messages:
                exc.add_note(f"TensorRT logged at ERROR: {message}")
            _raise_no_fp64(exc)
            raise
        finally:
            root.removeHandler(errors)
        notes = list(dict.fromkeys(f"Torch-TensorRT warned: {w.message}" for w in caught
                                   if "torch_tensorrt" in Path(w.filename).parts))
        notes += [f"TensorRT logged at ERROR: {m}" for m in errors.messages]
        notes += summarize(narrowed)
        layers = engine_layers(module)
        split = partition_summary(module)
        if "early_return" in seen:
            notes.append(seen["early_return"])
        module = module.to(device)
        if example is not None:
            try:
                notes += handed_back(program, module, example)
            except Exception as exc:
                _raise_no_fp64(exc)  # any other error is the run stage's, on the row's call
        return module, {"notes": notes, "engines": split.engines, "fallbacks": split.fallbacks,
                        "boundaries": split.boundaries,
                        "details": {"level": "converters and engine (TensorRT stand-in)",
                                    "stage": converter_stage(layers),
                                    "engine_layers": layers}}

    @contextlib.contextmanager
    def watching_int64(self, found: list[str]) -> Iterator[None]:
        """Within this, each node the interpreter converts adds to ``found`` what its converter
        did to the graph's int64 values (:func:`int64_narrowed`)."""
        interpreter = importlib.import_module("torch_tensorrt.dynamo.conversion._TRTInterpreter")
        cls = interpreter.TRTInterpreter
        original = cls.run_node
        values: set[Any] = set()  # the tensors holding the graph's int64 values

        def run_node(this: Any, n: torch.fx.Node) -> Any:
            start = this.ctx.net.num_layers
            out = original(this, n)
            found.extend(int64_narrowed(n, out, this.ctx.net, start, values))
            values.update(t for v, t in zip(pytree.tree_leaves(_val(n)), pytree.tree_leaves(out),
                                            strict=False)
                          if isinstance(v, torch.Tensor) and v.dtype == torch.int64
                          and getattr(t, "dtype", None) == DataType.INT64)
            return out

        cls.run_node = run_node
        try:
            yield
        finally:
            cls.run_node = original

    @contextlib.contextmanager
    def as_real(self, seen: dict[str, Any]) -> Iterator[None]:
        """Within this, ``dynamo.compile(dryrun=True)`` returns early where a real compile does;
        ``seen`` gets the compile's ``settings`` and, if taken, the ``early_return`` note."""
        original = self.compiler.compile_module
        self.compiler.compile_module = self._early_returning(original, seen)
        try:
            yield
        finally:
            self.compiler.compile_module = original

    def _early_returning(self, original: Callable[..., Any], seen: dict[str, Any]) -> Callable[..., Any]:
        """``compile_module`` as a real compile runs it: dryrun partitions a graph with fewer
        convertible ops than ``min_block_size``, a real compile returns it unpartitioned."""
        where = self.sources.cite("num_supported_ops < settings.min_block_size", "_compiler.py")

        def compile_module(*args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(original).bind(*args, **kwargs)
            bound.apply_defaults()
            gm, options = bound.arguments["gm"], bound.arguments["settings"]
            supported, total = self.partitioning.get_graph_converter_support(
                gm, options.torch_executed_ops)
            seen["settings"] = options
            if supported == 0 or supported < options.min_block_size:
                why = ("no op is TensorRT-convertible" if supported == 0 else
                       f"{supported} of {total} ops TensorRT-convertible, fewer than min_block_size "
                       f"{options.min_block_size} (dryrun alone would partition it)")
                seen["early_return"] = (
                    f"{why}: compile_module returns the lowered graph unpartitioned ({where}), its "
                    "complex inputs already retyped to (..., 2) and no complex I/O adapters added")
                return gm
            return original(*args, **kwargs)

        return compile_module

    def as_engines(self, module: torch.nn.Module, truncate: bool) -> list[str]:
        """Apply to each TensorRT block what conversion and the engine would do and dryrun skips."""
        notes: list[str] = []
        cite = self.sources.cite
        constant = cite("TensorRT does not support float64", "converter_utils.py")
        truncation = cite("input_val = input_val.to(torch.float32)", "converter_utils.py")
        runtime = cite("Dtype mismatch for", "dynamo/runtime/_TRTEngine.py",
                       "dynamo/runtime/_PythonTorchTensorRTModule.py")
        default = cite("return trt.DataType.FLOAT", "_enums.py")
        scalar = cite("Cannot convert {input_val} to TRT constant", "converter_utils.py")
        unmapped = cite("Provided an unsupported data type as a data type for translation", "_enums.py")
        for name, block in list(module.named_children()):
            if not (name.startswith("_run_on_acc") and isinstance(block, torch.fx.GraphModule)):
                continue
            for kind, what in _complex(block):
                # What converting the block would raise: get_trt_tensor takes no Python complex,
                # and torch_tensorrt.dtype has no complex member.
                if kind == "scalar":
                    raise AssertionError(f"Cannot convert {what.split()[0]} to TRT constant: a complex "
                                         f"Python scalar left in TensorRT block {name} ({what}) by the "
                                         f"complex rewrite; conversion fails there ({scalar})")
                raise TypeError(f"Provided an unsupported data type as a data type for translation: "
                                f"{what} left in TensorRT block {name} by the complex rewrite; "
                                f"TensorRT has no complex dtype ({unmapped})")
            doubles = list(dict.fromkeys(_doubles(block)))
            if doubles and not truncate:
                raise Rejected(
                    f"TensorRT has no FP64: TensorRT block {name} holds float64 "
                    f"({', '.join(doubles[:4])}{', …' if len(doubles) > 4 else ''}) and truncate_double "
                    f"is off; Torch-TensorRT {self.version} refuses float64 constants (\"TensorRT does "
                    f"not support float64 (double) precision\", {constant}) and builds float64 inputs "
                    f"as float32 engine inputs that its runtime refuses ({runtime})")
            if truncate:
                for node in block.graph.nodes:
                    value = _fetch(block, str(node.target)) if node.op == "get_attr" else None
                    if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
                        _set(block, str(node.target), value.to(torch.float32))
                        notes.append(f"float64 constant {node.target} in {name} truncated to float32 "
                                     f"(truncate_double, {truncation})")
            inputs = [(n.name, _engine_dtype(_val(n).dtype)
                       if isinstance(_val(n), torch.Tensor) else None)
                      for n in block.graph.nodes if n.op == "placeholder"]
            (output,) = [n for n in block.graph.nodes if n.op == "output"]
            outputs = [_engine_dtype(_val(n).dtype)
                       if isinstance(n, torch.fx.Node) and isinstance(_val(n), torch.Tensor) else None
                       for n in pytree.tree_leaves(output.args)]
            made = [n.name for n in pytree.tree_leaves(output.args)
                    if isinstance(n, torch.fx.Node) and isinstance(_val(n), torch.Tensor)
                    and _val(n).dtype == torch.float64]
            if made:
                notes.append(f"{name} outputs {', '.join(made)} as float32: TensorRT builds float64 "
                             f"outputs as float32 ({default})")
            setattr(module, name, Engine(block, inputs, outputs, runtime))
        return notes


def _raise_no_fp64(exc: Exception) -> None:
    """Raise Torch-TensorRT's own refusal of float64 with truncate_double off (a float64
    constant, or a float64 input its runtime refuses for the float32 engine input built for it:
    2.13's ``Dtype mismatch for input x``, 2.12's ``Dtype mismatch for 0th input(x)``) as the
    ``unsupported`` row dryrun gives, naming the frame that refused; else nothing."""
    message = str(exc)
    if not ("does not support float64" in message
            or ("Dtype mismatch for" in message and "got torch.float64" in message)):
        return
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "torch_tensorrt" in Path(f.filename).parts]
    where = ""
    if frames:
        parts = Path(frames[-1].filename).parts
        package = len(parts) - 1 - parts[::-1].index("torch_tensorrt")
        where = f" ({Path(*parts[package:]).as_posix()}:{frames[-1].lineno})"
    raise Rejected(f"TensorRT has no FP64 and truncate_double is off: "
                   f"{message.splitlines()[0]}{where}") from exc


class _ErrorLog(logging.Handler):
    """What was logged at ERROR or above while it was attached (the stand-in logs a layer
    TensorRT refuses there, through Torch-TensorRT's TensorRT logger)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


# The integers each type narrower than int64 that TensorRT's Cast takes holds exactly.
_EXACT = {DataType.INT32: "|value| < 2**31", DataType.FLOAT: "|value| <= 2**24",
          DataType.HALF: "|value| <= 2**11", DataType.BF16: "|value| <= 2**8",
          DataType.INT8: "-2**7 <= value < 2**7", DataType.UINT8: "0 <= value < 2**8"}


def int64_narrowed(node: torch.fx.Node, made: Any, network: Any, start: int,
                   values: set[Any]) -> list[str]:
    """What converting ``node`` did to the graph's int64 values, read from the network it built
    (``made``: what the converter returned; its layers are those from index ``start`` on;
    ``values``: the tensors holding the graph's int64 values so far): a result the graph holds as
    int64 built as a narrower tensor (TopK's INT32 indices), and a cast to a narrower type, other
    than the node's own result type, of an int64 tensor made from those values (an index cast to
    int32, an int64 operand promoted to float32). Not narrowings: a cast to BOOL (a condition),
    a cast of shape values (IShapeLayer's INT64 dimensions); a getitem only picks a result
    already looked at."""
    if node.op != "call_function" or node.target is operator.getitem:
        return []
    vals = pytree.tree_leaves(_val(node))
    narrowed: dict[DataType, list[str]] = {}
    for val, tensor in zip(vals, pytree.tree_leaves(made), strict=False):
        dtype = getattr(tensor, "dtype", None)
        if isinstance(val, torch.Tensor) and val.dtype == torch.int64 and dtype in _EXACT:
            narrowed.setdefault(dtype, []).append(f"its int64 result is built as {_short(dtype)}")
    own = {v.dtype for v in vals if isinstance(v, torch.Tensor)}
    for i in range(start, network.num_layers):
        layer = network.get_layer(i)
        source = layer.get_input(0) if layer.type == LayerType.CAST else None
        if (source is not None and source.dtype == DataType.INT64 and layer.to_type in _EXACT
                and TORCH[layer.to_type] not in own and _made_from(source, values)):
            narrowed.setdefault(layer.to_type, []).append(f"layer '{layer.name}' casts an int64 "
                                                          f"input to {_short(layer.to_type)}")
    return [f"int64 narrowed to {_short(dtype)} inside the engine by {node.name} "
            f"({_name(node.target)}): {'; '.join(dict.fromkeys(how))} (exact while {_EXACT[dtype]})"
            for dtype, how in narrowed.items()]


def _made_from(tensor: Any, values: set[Any]) -> bool:
    """Whether ``tensor`` is one of ``values`` or made from one by the layers before it, not
    counting a shape layer (its output holds dimensions, not the values)."""
    stack, seen = [tensor], set()
    while stack:
        t = stack.pop()
        if t in values:
            return True
        layer = getattr(t, "layer", None)
        if id(t) in seen or layer is None or layer.type == LayerType.SHAPE:
            continue
        seen.add(id(t))
        stack.extend(i for i in layer.inputs if i is not None)
    return False


def _short(dtype: DataType) -> str:
    return str(TORCH[dtype]).removeprefix("torch.")


def summarize(notes: list[str], most: int = 3) -> list[str]:
    """``notes`` without repeats, at most ``most`` of them and a count of the rest."""
    unique = list(dict.fromkeys(notes))
    rest = len(unique) - most
    return unique[:most] + ([f"int64 narrowed inside the engine by {rest} more nodes"] if rest > 0 else [])


def engine_layers(module: torch.nn.Module) -> dict[str, list[str]]:
    """Each engine module's layers, ``"NAME (KIND)"``, read from the engine it holds."""
    found: dict[str, list[str]] = {}
    for name, child in module.named_children():
        # The ICudaEngine: the Python runtime's ``engine`` (2.12), or the ``cuda_engine`` of the
        # TRTEngine the runtime module holds (2.13 on).
        engine = getattr(child, "engine", None)
        plan = getattr(getattr(engine, "cuda_engine", engine), "plan", None)
        if name.startswith("_run_on_acc") and plan is not None:
            found[name] = [f"{layer.name} ({layer.kind.name})" for layer in plan.layers]
    return found


def converter_stage(layers: dict[str, list[str]]) -> str:
    """One line naming the stage the compile reached and what it built."""
    if not layers:
        return "partitioning: no engine built, the converters were not reached"
    kinds: dict[str, int] = {}
    for names in layers.values():
        for layer in names:
            kind = layer.rsplit("(", 1)[-1].rstrip(")")
            kinds[kind] = kinds.get(kind, 0) + 1
    built = ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in kinds.items())
    return (f"converters: {len(layers)} engine(s), {sum(map(len, layers.values()))} layers "
            f"({built}), built and run by the TensorRT stand-in")


def handed_back(program: torch.export.ExportedProgram, module: torch.nn.Module,
                example: tuple[tuple[Any, ...], dict[str, Any]]) -> list[str]:
    """Notes on the outputs the compiled module hands back in a dtype other than eager's (an
    int64 narrowed to int32, a float64 built as float32, a complex output as its real layout)."""
    (output,) = [n for n in program.graph.nodes if n.op == "output"]
    want = [_val(n).dtype if isinstance(n, torch.fx.Node) and isinstance(_val(n), torch.Tensor)
            else None for n in pytree.tree_leaves(output.args)]
    args, kwargs = clone(example)
    with torch.no_grad():
        got = [leaf.dtype if isinstance(leaf, torch.Tensor) else None
               for leaf in pytree.tree_leaves(module(*args, **kwargs))]
    notes = []
    for i, (eager, engine) in enumerate(zip(want, got, strict=False)):
        if eager is not None and engine is not None and eager != engine:
            how = ("narrowed" if eager.itemsize > engine.itemsize and not eager.is_complex
                   else "handed back differently")
            notes.append(f"output {i} comes back {str(engine).removeprefix('torch.')} where eager "
                         f"gives {str(eager).removeprefix('torch.')}: the converters and engine "
                         f"{how} it")
    return notes


Handler = Callable[[tuple[Any, ...], Compiler, dict[int, Any]], Any]


def serve(parent: Parent, code_dir: str, handle: Handler | None = None, behaving: bool = False) -> None:
    """Load the release (over the behaving stand-in with ``behaving``), reply how that went, then
    answer requests with ``handle``."""
    handle = handle or _handle
    try:
        ttrt, info = load(code_dir, behaving)
        compiler = Compiler(ttrt)
    except BaseException as exc:  # reported to the parent, which decides
        parent.fail(exc)
        return
    freeze_imports()
    parent.send(("ok", info))
    modules: dict[int, Any] = {}
    while True:
        try:
            request = parent.receive()
        except EOFError:
            return
        try:
            parent.send(("ok", handle(request, compiler, modules)))
        except Rejected as exc:
            parent.send(("unsupported", str(exc)))
        except Exception as exc:
            parent.fail(exc)


def _handle(request: tuple[Any, ...], compiler: Compiler, modules: dict[int, Any]) -> Any:
    kind, key, *rest = request
    if kind == "compile":
        blob, call, settings, device, dryrun, example = rest
        program = torch.export.load(io.BytesIO(blob))
        modules.clear()
        module, evidence = compiler.compile(program, call, settings, device, dryrun, example)
        modules[key] = module
        return evidence
    args, kwargs = rest  # "call"
    if key not in modules:
        raise LookupError(f"compiled module {key} was replaced by a later compile")
    with torch.no_grad():
        outputs = modules[key](*args, **kwargs)
    return outputs, (args, kwargs)


def main(argv: list[str], handle: Handler | None = None, behaving: bool = False) -> NoReturn:
    parent = Parent(argv)
    serve(parent, parent.args[0] if parent.args else "", handle,
          behaving or "behaving" in parent.args[1:])
    exit_now()


if __name__ == "__main__":
    main(sys.argv[1:])
