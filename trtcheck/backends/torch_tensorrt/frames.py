"""Where an error raised inside Torch-TensorRT's code came from: the frame a row's message names
and the lowering pass of the seeds that frame belongs to (the complex-to-real rewrite, float64
truncation, int64/float64 casting); and who a failed deploy step belongs to."""

from __future__ import annotations

from pathlib import Path

from trtcheck.errors import Frame, innermost, tracebacks

PACKAGE = "torch_tensorrt"

# The lowering passes of the seeds, by the file (its stem) or the function that holds their code
# in Torch-TensorRT 2.12 to 2.14.
COMPLEX = "complex-to-real rewrite"
TRUNCATION = "float64 truncation (truncate_double)"
PASSES: dict[str, str] = {
    "complex_graph_rewrite": COMPLEX,
    "complex_decomposition_adapter": COMPLEX,
    "_replace_complex_placeholder_to_tuple": COMPLEX,
    "_modify_reshape_complex_nodes": COMPLEX,
    "_insert_complex_io_adapters": COMPLEX,
    "truncate_double": TRUNCATION,
    "repair_double_inputs": TRUNCATION,
    "cast": "int64/float64 casting",
}


def pass_of(frame: Frame) -> str | None:
    """The lowering pass of the seeds whose code ``frame`` runs, if any."""
    return PASSES.get(Path(frame.file).stem) or PASSES.get(frame.name)


def _package(frame: Frame) -> str:
    """The installed package a frame's file belongs to (``torch``), else its file name."""
    parts = Path(frame.file).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            return Path(parts[parts.index(marker) + 1]).stem
    return Path(frame.file).name


def _shim(frame: Frame) -> bool:
    """A frame of the TensorRT stand-in's wrappers around torch (its CUDA shims)."""
    return frame.name == "wrapped" and Path(frame.file).parts[-3:] == ("lowering", "trt", "install.py")


def torch_tensorrt_cause(trace: str) -> str:
    """What a row's message adds for an error raised inside Torch-TensorRT's code, or ``""``:
    the innermost Torch-TensorRT frame (``path:line in function``), the pass of the seeds it
    runs in, and, where Torch-TensorRT raised by a slip rather than a ``raise``, that this is a
    Torch-TensorRT bug to report. The first traceback of ``trace`` (causes first) that passes
    through Torch-TensorRT is the one described."""
    found = innermost(trace, PACKAGE)
    if found is None:
        return ""
    block, frame = found[0].frames, found[1]
    while len(block) > 1 and _shim(block[-1]):  # absent where real CUDA and TensorRT are
        block = block[:-1]
    passes = [p for f in block if f.within(PACKAGE) and (p := pass_of(f))]
    who = f"Torch-TensorRT's {passes[-1]}" if passes else "Torch-TensorRT"
    where = frame.within(PACKAGE)
    if block[-1] is not frame:
        return f" (raised in {_package(block[-1])}, called from {who} at {where})"
    if frame.deliberate:
        return f" (raised by {who} at {where})"
    code = f": `{frame.code}`" if frame.code else ""
    return (f" (raised inside {who} at {where}{code}: a bug in Torch-TensorRT; report it to "
            "Torch-TensorRT with this frame)")


# The stages after compile, whose errors this names the owner of wherever they were raised: the
# compiled module's call, the comparison, the sibling-dtype call.
AFTER_COMPILE = frozenset({"run", "compare", "drift"})
_STANDIN = ("backends", "lowering", "trt")  # the TensorRT stand-in's folder in trtcheck
_GRAPH = "<eval_with_key>"  # the file name of an fx GraphModule's generated code
# fx's caller of that code, which drops the traceback when the error is raised right there
_GRAPH_MODULE = ("torch", "fx", "graph_module.py")


def owner(trace: str) -> str:
    """What a row's message adds for an error after compile, or ``""``: a Torch-TensorRT frame
    as :func:`torch_tensorrt_cause` names it; else the owner of the innermost frame of the
    error's first traceback (causes first): the TensorRT stand-in's layer, the compiled module's
    graph (the node PyTorch ran between engines), torch, or the user's model; none for
    trtcheck's own check of what the model did, whose message says it."""
    found = torch_tensorrt_cause(trace)
    if found or not (blocks := tracebacks(trace)):
        return found
    block = blocks[0].frames
    while len(block) > 1 and _shim(block[-1]):
        block = block[:-1]
    if not block:
        return ""
    frame = block[-1]
    standin = [f for f in block if _in_standin(f)]
    if standin:
        where = Path(*Path(standin[-1].file).parts[-3:]).as_posix()
        return f" (raised in the TensorRT stand-in at {where}:{standin[-1].line} in {standin[-1].name})"
    graph = [f for f in block if f.file.startswith(_GRAPH.rstrip(">"))
             or Path(f.file).parts[-3:] == _GRAPH_MODULE]
    if graph:
        code = f": `{graph[-1].code}`" if graph[-1].code and graph[-1].file.startswith("<") else ""
        by = "raised by" if frame is graph[-1] else f"raised in {_package(frame)}, called from"
        return f" ({by} the compiled module's graph{code}, a node PyTorch runs between the engines)"
    if frame.own:  # trtcheck's own check of what the model did: its message says so
        return ""
    if _package(frame) == Path(frame.file).name:  # no installed package: the user's code
        return f" (raised in the model's code at {Path(frame.file).name}:{frame.line} in {frame.name})"
    return f" (raised in {_package(frame)} at {Path(frame.file).name}:{frame.line} in {frame.name})"


def _in_standin(frame: Frame) -> bool:
    parts = Path(frame.file).parts
    return any(parts[i:i + 3] == _STANDIN for i in range(len(parts) - 2)) and not _shim(frame)


# Who a failed step of the deploy stage belongs to (:func:`deploy_owner`).
EXPORTER = "Torch-TensorRT's exporter"
SERIALIZER = "torch.export's serializer"
RUNTIME = "Torch-TensorRT's runtime"
STANDIN = "the TensorRT stand-in"
_SERIALIZER = ("torch/_export/serde/", "torch/export/pt2_archive/")
# Where no frame says otherwise, each step's own code: save is torch_tensorrt.save, load is
# torch.export.load, and a loaded graph that refuses a call refuses by what was saved in it
# (its shape guards, its output structure).
_STEP_OWNER = {"save": EXPORTER, "load": SERIALIZER, "run": EXPORTER}


def deploy_owner(trace: str, step: str) -> str:
    """Who a deploy step's failure (``save``, ``load`` or ``run``) belongs to, from its formatted
    traceback: the frame nearest the raise, of the first traceback (causes first), that runs
    the TensorRT stand-in, Torch-TensorRT (its exporter when saving, its runtime after) or
    torch.export's serializer (when saving or loading; torch.export's tracing, which
    Torch-TensorRT's exporter calls, is its caller's); else the step's own code."""
    for block in tracebacks(trace)[:1]:
        for frame in reversed(block.frames):
            if _shim(frame):  # the stand-in's CUDA shims around torch, absent with real CUDA
                continue
            path = frame.file.replace("\\", "/")
            if "/backends/lowering/trt/" in path:
                return STANDIN
            if frame.within(PACKAGE):
                return EXPORTER if step == "save" else RUNTIME
            if step != "run" and any(part in path for part in _SERIALIZER):
                return SERIALIZER
    return _STEP_OWNER[step]
