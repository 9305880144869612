"""The graph node being executed when an exception was raised inside an FX interpreter or a
lowering pass: its name, op, arguments' dtypes and shapes, and the user's ``file:line`` it came
from.

torch's ``fx.Interpreter`` appends ``While executing %x : [num_users=1] = call_function[...]`` to
the exception's first argument, below a message that is often torch's generic text ("Expected
cond to be True, but got False"). Where the exception's frames are still live (the process that
raised it: the lowering host, or a backend run in this process) :func:`note_executing` describes
the node from them, with the values the interpreter was handing it, as a note on the exception;
:func:`executing` reads the node back from a formatted traceback, from that note, else from
torch's own line.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from types import TracebackType
from typing import Any

import torch

from trtcheck.errors import frames
from trtcheck.tensors import op_name

# How the note that names the node starts, in a traceback's text.
EXECUTING = "Executing graph node: "
PACKAGE = "torch_tensorrt"
# torch's own line (``torch/fx/interpreter.py``) and the node's stack trace it adds below it.
_TORCH = re.compile(r"^While executing (?P<name>%\S+) : .*?= \w+\[target=(?P<target>[^\]]+)\]"
                    r"\(args = (?P<args>.*), kwargs = \{.*\}\)$", re.MULTILINE)
_ORIGINAL = re.compile(r"\nOriginal traceback:\n(?P<block>(?:[ \t]*File .*\n(?:[ \t]+\S.*\n)*)+)")
_FROM = re.compile(r" from \S+:\d+$")
_OP = re.compile(r"^%\S+ = (?P<op>[\w.]+)\(", re.MULTILINE)
# torch's request for a better message, said after its generic ones.
BOILERPLATE = re.compile(r"\s*\(Could this error message be improved\? If so, please report an "
                         r"enhancement request to PyTorch\.\)")
_ARG = 60  # characters of one argument shown


def user_line(node: torch.fx.Node) -> str:
    """``file:line`` of the user's line ``node`` came from, where its stack trace says: its
    innermost frame outside installed packages (``torch.nn``'s own modules among them); else
    ``""``."""
    return _innermost_own(node.meta.get("stack_trace") or "")


def _innermost_own(stack: str) -> str:
    found = frames(stack)
    own = [f for f in found if not {"site-packages", "dist-packages"} & set(Path(f.file).parts)]
    if not (own or found):
        return ""
    frame = (own or found)[-1]
    path = Path(frame.file)
    with contextlib.suppress(ValueError):
        path = path.relative_to(os.getcwd())
    return f"{path.as_posix()}:{frame.line}"


def describe(node: torch.fx.Node, env: dict[torch.fx.Node, Any] | None = None) -> str:
    """``%name = op(%arg: dtype [shape], 1, ...) from file:line``: each argument node as the
    value ``env`` holds for it (the interpreter's), else its recorded ``val``."""
    def arg(value: Any) -> str:
        if isinstance(value, torch.fx.Node):
            held = (env or {}).get(value, value.meta.get("val"))
            return f"%{value.name}" + (f": {_value(held)}" if _value(held) else "")
        if isinstance(value, (list, tuple)) and any(isinstance(v, torch.fx.Node) for v in value):
            inner = ", ".join(arg(v) for v in value)
            return f"[{inner}]"
        text = repr(value)
        return text if len(text) <= _ARG else text[:_ARG - 1] + "…"

    args = [arg(a) for a in node.args] + [f"{k}={arg(v)}" for k, v in node.kwargs.items()]
    op = op_name(node.target) if node.op == "call_function" else f"{node.op} {node.target}"
    where = user_line(node)
    return f"%{node.name} = {op}({', '.join(args)})" + (f" from {where}" if where else "")


def _value(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')} {list(value.shape)}"
    return ""


def while_executing(message: str, trace: str, *, where: bool = True) -> str:
    """``message`` (an exception's first line), torch's generic request for a better one left
    out, followed by the node ``trace`` says was executing, where it says one."""
    node = executing(trace, where=where)
    if not node:
        return message
    return f"{BOILERPLATE.sub('', message).rstrip('.')}, while executing {node}"


def note_executing(exc: BaseException) -> None:
    """Note on ``exc`` the node being executed where it was raised: the innermost frame of its
    traceback (or of a cause's) that runs a node, an FX interpreter's or a Torch-TensorRT
    pass's; nothing where there is none, or where it is noted already."""
    if any(str(n).startswith(EXECUTING) for n in getattr(exc, "__notes__", ())):
        return
    found = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and found is None:
        seen.add(id(current))
        found = _running(current.__traceback__)
        current = current.__cause__ or current.__context__
    if found is not None:
        exc.add_note(EXECUTING + describe(*found))


def _running(tb: TracebackType | None) -> tuple[torch.fx.Node, dict[torch.fx.Node, Any] | None] | None:
    """The innermost frame of ``tb`` that executes a graph node: an ``fx.Interpreter``'s, or one
    of Torch-TensorRT's own code holding the node it works on."""
    found = None
    while tb is not None:
        local = tb.tb_frame.f_locals
        node, owner = local.get("node"), local.get("self")
        if isinstance(node, torch.fx.Node):
            if isinstance(owner, torch.fx.Interpreter):
                found = (node, owner.env)
            elif PACKAGE in Path(tb.tb_frame.f_code.co_filename).parts:
                found = (node, None)
        tb = tb.tb_next
    return found


def executing(trace: str, *, where: bool = True) -> str | None:
    """The node a formatted traceback's exception was raised executing: the innermost note
    :func:`note_executing` wrote, else torch's ``While executing`` line and the user's line
    below it (``%x = aten.op(%a, 1) from file:line``; without the user's line unless
    ``where``); None where neither is there."""
    noted = [line.strip()[len(EXECUTING):] for line in trace.splitlines()
             if line.strip().startswith(EXECUTING)]
    if noted:
        return noted[-1] if where else _FROM.sub("", noted[-1])
    found = list(_TORCH.finditer(trace))
    if not found:
        return None
    last = found[-1]
    target = last["target"].removeprefix("torch.ops.")
    text = f"{last['name']} = {target}({last['args'].removeprefix('(').removesuffix(')')})"
    source = _ORIGINAL.match(trace, last.end()) if where else None
    line = _innermost_own(source["block"]) if source else ""
    return text + (f" from {line}" if line else "")


def executing_op(trace: str) -> str | None:
    """The op of the node :func:`executing` finds (``aten._fft_c2c.default``), or None."""
    node = executing(trace)
    found = _OP.match(node) if node else None
    return found["op"] if found else None
