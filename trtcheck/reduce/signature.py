"""How a row fails, as reduction compares it: a candidate is kept only when it fails the same way.

A signature is the row's status and stage, then for an exception its type, its message with
numbers, shapes, paths and node names abstracted, the node being executed (its op) where an FX
interpreter or a lowering pass raised it, or the layer and the converter where the builder refused
the network, and the Torch-TensorRT frame it came from (two bugs raised from one frame differ in
their message and node); for a wrong result the kind of mismatch (``nonfinite``: NaN or Inf where
eager has none, or the reverse; ``values``, ``dtype``, ``shape``, ``inputs``) and the op of the
first node whose value diverges.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from trtcheck.backends.torch_tensorrt.conversion import LOGGED_ERROR
from trtcheck.backends.torch_tensorrt.frames import PACKAGE
from trtcheck.backends.torch_tensorrt.nodes import BOILERPLATE, executing_op
from trtcheck.errors import tracebacks
from trtcheck.results.rows import DEPLOY_STAGES, Row
from trtcheck.status import Status

REDUCIBLE = frozenset({Status.FAIL, Status.ERROR})
# What each mismatch kind is called where a person reads it.
MISMATCHES = {"nonfinite": "NaN/Inf placement", "values": "values", "dtype": "dtype",
              "shape": "shape", "inputs": "inputs", "other": "other"}
# Stages with an exported graph to cut: earlier ones (build, eager, export) fail before it exists.
GRAPH_STAGES = frozenset({"compile", "run", "compare", "drift", *DEPLOY_STAGES})

_CITED = re.compile(r"(torch_tensorrt/[\w/]+\.py:\d+)")
_LAST = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt))(?:: ?(.*))?$")
_NAMED = re.compile(r"^([A-Z]\w*(?:Error|Exception)): ")
# A layer's refusal as TensorRT logs it, the layer named as Torch-TensorRT names its layers:
# "[GATHER]-[aten_ops.embedding.default]-[name]: Error Code 4: API Usage Error (detail)".
REFUSAL = re.compile(r"^\[(?P<layer>[^\]]+)\]-\[(?P<op>[^\]]+)\]-\[[^\]]*\]: "
                     r"Error Code \d+: [^(]*\((?P<detail>.*)\)$")
# The converter a refused build's message names to report (errors.BuildRefused's words).
_CONVERTER = re.compile(r"converter for (?P<op>[\w.]+) \((?P<fn>\w+)")
# What a message says that changes from graph to graph of one bug, abstracted in that order.
_ABSTRACT = (
    (re.compile(r"\S*[/\\]\S+\.py(?::\d+)?"), "<file>"),
    (re.compile(r"%\w+"), "%<node>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "N"),
    (re.compile(r"(?:torch\.Size\()?[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]\)?"), "<shape>"),
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "N"),
)
_MESSAGE = 200  # characters of an abstracted message kept


@dataclass(frozen=True)
class Signature:
    status: str
    stage: str | None
    error: str | None = None  # exception type
    frame: str | None = None  # the Torch-TensorRT frame it came from
    mismatch: str | None = None  # values, dtype, shape or inputs
    op: str | None = None  # of the first node whose value diverges
    message: str | None = None  # the exception's, abstracted
    node: str | None = None  # the op executing, or the refused layer and its converter

    def same(self, other: Signature, *, op: bool = True) -> bool:
        """Whether ``other`` is this failure; ``op=False`` leaves the diverging op out (while
        bisecting from the output end, before it is known)."""
        return self == (other if op else replace(other, op=self.op))

    def across_releases(self) -> Signature:
        """This signature as another release's code raises it: the frame by its file and
        function, the line left out (lines move from release to release)."""
        frame = re.sub(r":\d+(?= in )", "", self.frame) if self.frame else None
        return replace(self, frame=frame)

    def describe(self) -> str:
        """One line: ``error at compile: RuntimeError (its message) executing aten.op, from
        ...``; a row with no stage (a pass) is its status alone."""
        head = f"{self.status} at {self.stage}" if self.stage else self.status
        if self.error or self.frame:
            what = (f" ({self.message})" if self.message else "") + (
                f" executing {self.node}" if self.node else "")
            return f"{head}: {self.error or 'an exception'}{what}" + (
                f", from {self.frame}" if self.frame else
                " (no Torch-TensorRT frame)" if self.stage in ("compile", "run") else "")
        if self.mismatch:
            return f"{head}: {MISMATCHES.get(self.mismatch, self.mismatch)} mismatch" + (
                f", first diverging at {self.op}" if self.op else "")
        return head

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reducible(row: Row) -> str | None:
    """Why ``row`` cannot be reduced, or None."""
    if row.status not in REDUCIBLE:
        return f"a {row.status.value} row is not a failure to reduce"
    if row.stage not in GRAPH_STAGES:
        return f"it failed at {row.stage}, before there was an exported graph to cut"
    return None


def signature(row: Row, outputs: Sequence[str] | None = None,
              ops: dict[str, str] | None = None) -> Signature:
    """``row``'s signature; ``outputs`` names the graph node behind each output leaf and ``ops``
    gives each node's op, for the op of the first failing output (the earliest in the graph)."""
    status, stage = row.status.value, row.stage
    if row.status is Status.ERROR:
        trace = row.traceback or ""
        error, frame = exception_of(trace, row.message)
        logged = [found for line in logged_errors(trace) if (found := REFUSAL.match(line.strip()))]
        if logged:  # a refused build: its layer, the op it converts, and the converter to report
            converter = _CONVERTER.search(row.message)
            node = f"{logged[0]['layer']} layer of {logged[0]['op']}" + (
                f", built by the converter for {converter['op']}" if converter else "")
            message = logged[0]["detail"]
        else:
            node, message = executing_op(trace), exception_message(trace)
        return Signature(status, stage, error=error, frame=frame,
                         message=abstract(message) if message else None, node=node)
    if row.status is not Status.FAIL:
        return Signature(status, stage)
    failing = [(i, leaf) for i, leaf in enumerate(row.outputs) if not leaf.get("passed", True)]
    if not failing:
        return Signature(status, stage, mismatch="inputs" if "inputs after the call" in row.message
                         else "other")
    kind = mismatch_kind(failing[0][1])
    op = None
    if outputs is not None and ops is not None:
        names = set(failing_outputs(row, outputs))
        op = next((ops[name] for name in ops if name in names), None)  # the earliest, in graph order
    return Signature(status, stage, mismatch=kind, op=op)


def mismatch_kind(leaf: dict[str, Any]) -> str:
    """How a failing output leaf differs from eager's: its dtype, its shape, where it holds NaN
    or Inf (a count that differs from eager's), or its values."""
    if leaf.get("dtype") != leaf.get("eager_dtype"):
        return "dtype"
    if leaf.get("shape") != leaf.get("eager_shape"):
        return "shape"
    if any((leaf.get(k) or 0) != (leaf.get(f"eager_{k}") or 0) for k in ("nan", "inf")):
        return "nonfinite"
    return "values"


def failing_outputs(row: Row, outputs: Sequence[str]) -> list[str]:
    """The graph nodes behind ``row``'s failing output leaves."""
    return [outputs[i] for i, leaf in enumerate(row.outputs)
            if not leaf.get("passed", True) and i < len(outputs)]


def exception_of(traceback: str, message: str) -> tuple[str | None, str | None]:
    """The exception's type and the innermost Torch-TensorRT frame (``file:line in function``),
    else the first Torch-TensorRT line its message cites."""
    lines = [line for line in traceback.strip().splitlines() if line and not line[0].isspace()]
    error = None
    found = next((m for line in reversed(lines) if (m := _LAST.match(line))), None)
    if found:
        error = found[1].rsplit(".", 1)[-1]
        named = _NAMED.match(found[2] or "")
        if error == "RuntimeError" and named:  # a remote exception re-raised under its name
            error = named[1]
    inside = [where for found in tracebacks(traceback) for frame in found.frames
              if (where := frame.within(PACKAGE))]
    if inside:
        return error, inside[-1]
    cited = _CITED.search(message)
    return error, cited[1] if cited else None


def exception_message(traceback: str) -> str | None:
    """The message of the exception that ended ``traceback`` (its last ``Type: message``
    line; a remote exception's own, without the type it was re-raised under), or None."""
    lines = [line for line in traceback.strip().splitlines() if line and not line[0].isspace()]
    found = next((m for line in reversed(lines) if (m := _LAST.match(line))), None)
    if not (found and found[2]):
        return None
    named = _NAMED.match(found[2])
    return found[2][named.end():] if named and found[1] == "RuntimeError" else found[2]


def abstract(message: str) -> str:
    """``message`` as two graphs failing on one bug both say it: torch's request for a better
    message left out; files, node names, numbers and shapes replaced by placeholders."""
    text = " ".join(BOILERPLATE.sub("", message).split())
    for pattern, placeholder in _ABSTRACT:
        text = pattern.sub(placeholder, text)
    return text if len(text) <= _MESSAGE else text[:_MESSAGE - 1] + "…"


def logged_errors(traceback: str) -> list[str]:
    """What TensorRT logged at ERROR during the compile, as the lowering host notes it on the
    exception, each message once."""
    return list(dict.fromkeys(line.strip()[len(LOGGED_ERROR):] for line in traceback.splitlines()
                              if line.strip().startswith(LOGGED_ERROR)))
