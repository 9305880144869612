"""The converter-level compile of a Torch-TensorRT release, and its evidence.

The release's real ``dynamo.compile`` (no dryrun) through the behaving TensorRT stand-in
(:mod:`trtcheck.backends.lowering.trt`, NOT TensorRT): its converters build each network, the
stand-in's builder and runtime run it with PyTorch. :func:`compiled` returns the compiled module and
the evidence read from the way there: what TensorRT logged at ERROR, what the converters did to
int64 values (:func:`int64_narrowed`), each engine's layers (through its ``EngineInspector``), the
outputs the engines hand back in another dtype than eager's, and the stand-in's choices where
TensorRT's documentation leaves a result open (:mod:`.trt.assumptions`), which the row's message
names. A refused build, a prediction the stand-in could not make and any other failure keep the
evidence gathered before them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import operator
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.lowering.release import Rejected, Release, node_value
from trtcheck.backends.lowering.trt import assumptions
from trtcheck.backends.lowering.trt.network import standin_gap
from trtcheck.backends.lowering.trt.types import TORCH, DataType, LayerInformationFormat, LayerType
from trtcheck.backends.torch_tensorrt.conversion import (
    LOGGED_ERROR,
    STANDIN_BUILDER,
    Conversion,
    Hook,
)
from trtcheck.backends.torch_tensorrt.inspection import partition_summary
from trtcheck.backends.torch_tensorrt.logs import logged
from trtcheck.backends.torch_tensorrt.nodes import user_line
from trtcheck.errors import BuildRefused
from trtcheck.results import findings
from trtcheck.tensors import clone, op_name


def compiled(release: Release, program: torch.export.ExportedProgram, call: dict[str, Any],
             settings: dict[str, Any], device: str, example: tuple[tuple[Any, ...], dict[str, Any]] | None,
             ) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The export front-end's real compile through the behaving stand-in, watched by a
    :class:`Watch`: a network the stand-in's builder refuses raises :class:`BuildRefused`,
    explained; a converter that raises raises here (with what TensorRT logged at ERROR as a
    note on the exception); a node a validator refused is a fallback; each engine's layers, and
    the outputs whose dtype the engines hand back other than eager's, are in the evidence. An
    exception carries the evidence gathered before it (its ``evidence``)."""
    watch = Watch()
    # as_real (in release.compile): the real compile returns early by itself; this names why.
    with watch.converting():
        module, notes = release.compile(program, call, settings, watch.seen)
    notes += watch.notes()
    layers = engine_layers(module)
    split = partition_summary(module)
    module = module.to(device)
    if example is not None:
        try:
            with watch.running():
                notes += handed_back(program, module, example)
        except Rejected:
            raise
        except Exception:  # any other error is the run stage's, on the row's call
            pass
    return module, {"notes": notes, "engines": split.engines,
                    "fallbacks": split.fallbacks, "boundaries": split.boundaries,
                    "remark": "; ".join(watch.remarks(module, example)),
                    "details": {"level": LEVEL, "stage": converter_stage(layers),
                                "engine_layers": layers}}


class Watch:
    """What converting graphs and running their engines through the behaving stand-in shows,
    gathered the same way whichever front-end handed the graphs over: what TensorRT logged at
    ERROR, what the converters did to int64 values, the early return a real compile takes
    (``seen``), the stand-in's named assumptions while engines ran (``assumed``), and a failure
    classified once (:meth:`failed`): float64 with truncate_double off is ``unsupported``, a
    refused build is explained, a prediction the stand-in could not make is a gap."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.narrowed: list[str] = []
        self.seen: dict[str, Any] = {}
        self.conversion = Conversion()
        self.assumed: list[tuple[str, str]] = []  # (choice, layer)

    @contextlib.contextmanager
    def converting(self) -> Iterator[None]:
        """Around the converters' work; a failure in it is :meth:`failed`."""
        # every logger's errors: the stand-in logs a layer TensorRT refuses through
        # Torch-TensorRT's TensorRT logger
        with logged("", logging.ERROR) as errors:
            try:
                with self.conversion.watching(watching_int64(self.narrowed)):
                    yield
            except Exception as exc:
                self.errors += errors
                self.failed(exc)
            self.errors += errors

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Around engines' calls: the stand-in's assumptions, and float64 refused at an
        engine's input check as ``unsupported``."""
        with assumptions.recorded() as assumed:
            try:
                yield
            except Exception as exc:
                _raise_no_fp64(exc)
                raise
            finally:
                self.assumed += [a for a in dict.fromkeys(assumed) if a not in self.assumed]

    def failed(self, exc: BaseException) -> NoReturn:
        """Raise ``exc`` classified, carrying the evidence gathered so far: float64 refused as
        :class:`Rejected`, a refused build as :class:`BuildRefused`, a stand-in's gap as itself."""
        if isinstance(exc, Rejected):  # classified already (an engine's input check)
            raise exc
        for message in self.errors:
            exc.add_note(f"{LOGGED_ERROR}{message}")
        _raise_no_fp64(exc)
        evidence = {"notes": summarize(self.narrowed) + _logged(self.errors),  # the message holds the log
                    "details": {"level": LEVEL, "stage": _stopped(self.conversion)}}
        refused = self.refusal()
        failed = BuildRefused(refused) if refused else standin_gap(exc) or exc
        failed.evidence = evidence  # type: ignore[union-attr]
        if failed is exc:
            raise exc
        raise failed from exc

    def swallowed(self, exc: BaseException) -> str | None:
        """A conversion failure Torch-TensorRT caught and left to PyTorch (the torch_compile
        front-end's backend does): raised where it is float64 refused or a stand-in's gap, as
        :meth:`failed` does; else the refused build's explanation, if any."""
        _raise_no_fp64(exc)
        gap = standin_gap(exc)
        if gap is not None:
            self.failed(exc)
        return self.refusal()

    def refusal(self) -> str | None:
        return self.conversion.refusal(self.errors, STANDIN_BUILDER)

    def notes(self) -> list[str]:
        """What the compile logged at ERROR, the int64 narrowings, and the early return taken."""
        return (_logged(self.errors) + summarize(self.narrowed)
                + ([self.seen["early_return"]] if "early_return" in self.seen else []))

    def remarks(self, module: torch.nn.Module | None = None,
                example: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> list[str]:
        """Each choice the stand-in made while engines ran, with the node and converter that
        built its layer and the user's line; with ``module`` and ``example``, whether its value
        reaches an output (:func:`_used`, against one call with the choices as made)."""
        chosen = (_outputs(module, example) if self.assumed and module is not None
                  and example is not None else None)
        return [_remark(self.conversion, choice, layer,
                        None if chosen is None else _used(module, example, layer, chosen))
                for choice, layer in self.assumed]

LEVEL = "converters and engine (TensorRT stand-in)"


def _remark(conversion: Conversion, choice: str, layer: str, used: bool | None) -> str:
    """The stand-in's ``choice`` made by ``layer``, with the node and converter that built the
    layer and the user's line it came from."""
    built = conversion.builder_of(layer)
    if built is None:
        return findings.remark(choice, layer, used=used)
    node = built.node
    return findings.remark(choice, layer, node.name, op_name(node.target), user_line(node), used)


def _outputs(module: torch.nn.Module, example: tuple[tuple[Any, ...], dict[str, Any]],
             ) -> list[Any] | None:
    """The module's output leaves on a copy of ``example``; None where the call fails (the run
    stage reports that)."""
    args, kwargs = clone(example)
    with torch.no_grad():
        try:
            return pytree.tree_leaves(module(*args, **kwargs))
        except Exception:
            return None


def _used(module: torch.nn.Module, example: tuple[tuple[Any, ...], dict[str, Any]], layer: str,
          chosen: list[Any]) -> bool:
    """Whether the value ``layer`` chose reaches an output: the module run again with the layer
    putting another value there gives other outputs than ``chosen``, or fails."""
    with assumptions.varied(layer):
        other = _outputs(module, example)
    if other is None:  # the other value changed what ran: it is used
        return True
    return not all(map(_same, chosen, other))


def _same(a: Any, b: Any) -> bool:
    """Whether two output leaves hold the same values, NaN at the same places."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return bool(a == b)
    return (a.shape == b.shape and torch.equal(a.isnan(), b.isnan())
            and torch.equal(a.nan_to_num(), b.nan_to_num()))


def _logged(errors: list[str]) -> list[str]:
    return [f"{LOGGED_ERROR}{m}" for m in dict.fromkeys(errors)]


def _stopped(conversion: Conversion) -> str:
    """The converter stage a failed compile reached."""
    if not conversion.nodes:
        return "partitioning: the converters were not reached"
    last = conversion.nodes[-1].node
    return (f"converters: stopped after {len(conversion.nodes)} nodes converted, the last "
            f"{last.name} ({op_name(last.target)})")


def watching_int64(found: list[str]) -> Hook:
    """A :meth:`Conversion.watching` hook: each node the interpreter converts adds to ``found``
    what its converter did to the graph's int64 values (:func:`int64_narrowed`)."""
    values: set[Any] = set()  # the tensors holding the graph's int64 values

    def hook(this: Any, n: torch.fx.Node, out: Any, start: int) -> None:
        found.extend(int64_narrowed(n, out, this.ctx.net, start, values))
        values.update(t for v, t in zip(pytree.tree_leaves(node_value(n)), pytree.tree_leaves(out),
                                        strict=False)
                      if isinstance(v, torch.Tensor) and v.dtype == torch.int64
                      and getattr(t, "dtype", None) == DataType.INT64)

    return hook


def _raise_no_fp64(exc: BaseException) -> None:
    """Raise Torch-TensorRT's own refusal of float64 with truncate_double off (a float64
    constant, or a float64 input its runtime refuses for the float32 engine input built for it:
    2.13's ``Dtype mismatch for input x``, 2.12's ``Dtype mismatch for 0th input(x)``) as the
    ``unsupported`` row dryrun gives, naming the frame that refused; else nothing."""
    message = str(exc)
    if isinstance(exc, Rejected) or not ("does not support float64" in message
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
    vals = pytree.tree_leaves(node_value(node))
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
    return [findings.narrowing("int64", _short(dtype), node.name, op_name(node.target),
                               "; ".join(dict.fromkeys(how)), _EXACT[dtype])
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
    return unique[:most] + ([findings.more_narrowings("int64", rest)] if rest > 0 else [])



def engine_layers(module: torch.nn.Module) -> dict[str, list[str]]:
    """Each engine module's layers, ``"NAME (KIND)"``, read through the engine's
    ``EngineInspector`` as from a TensorRT engine."""
    found: dict[str, list[str]] = {}
    for name, child in module.named_children():
        # The ICudaEngine: the Python runtime's ``engine`` (2.12), or the ``cuda_engine`` of the
        # TRTEngine the runtime module holds (2.13 on).
        engine = getattr(child, "engine", None)
        engine = getattr(engine, "cuda_engine", engine)
        if name.startswith("_run_on_acc") and hasattr(engine, "create_engine_inspector"):
            inspector = engine.create_engine_inspector()
            info = json.loads(inspector.get_engine_information(LayerInformationFormat.JSON))
            found[name] = [f"{layer['Name']} ({layer['LayerType']})" for layer in info["Layers"]]
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
    want = [node_value(n).dtype if isinstance(n, torch.fx.Node) and isinstance(node_value(n), torch.Tensor)
            else None for n in pytree.tree_leaves(output.args)]
    args, kwargs = clone(example)
    with torch.no_grad():
        got = [leaf.dtype if isinstance(leaf, torch.Tensor) else None
               for leaf in pytree.tree_leaves(module(*args, **kwargs))]
    notes = []
    for i, (eager, engine) in enumerate(zip(want, got, strict=False)):
        if eager is not None and engine is not None and eager != engine:
            notes.append(findings.handed_back(
                i, str(engine).removeprefix("torch."), str(eager).removeprefix("torch."),
                eager.itemsize > engine.itemsize and not eager.is_complex))
    return notes

