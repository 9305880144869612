"""The deploy stage: a compiled row saved as Torch-TensorRT saves it, loaded in a fresh process
(:mod:`trtcheck.backends.deploy`), called at the case's example inputs and its declared shapes'
extremes, and compared with the compiled module and with eager by the row's own comparison.

Each format gives one entry of the row's ``evidence.deploy``. A failure at ``save`` or ``load`` is
an error at that stage; a loaded artifact that raises at a call is an error at ``deploy``, and one
whose outputs differ a failure there: "the saved artifact differs from the compiled module" when
it differs from the module that compiled and matched, else "... differs from eager". Each names
its owner (:func:`~trtcheck.backends.torch_tensorrt.frames.deploy_owner`). A prediction the
TensorRT stand-in could not make is noted, and fails nothing.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from trtcheck.backends.base import Deployable
from trtcheck.backends.deploy import FILE_NAMES
from trtcheck.backends.torch_tensorrt.frames import EXPORTER, SERIALIZER, STANDIN, deploy_owner
from trtcheck.core.profiles import Tolerance
from trtcheck.errors import PredictionGap
from trtcheck.execution.stages import StageError, Stages
from trtcheck.measure.compare import NO_NARROWING, compare, leaves_with_paths
from trtcheck.results.rows import DEPLOY_STAGES
from trtcheck.status import Status
from trtcheck.tensors import clone

# The stage that waits for the loader process to be ready: its start, once a run and release.
LOADER_START = "deploy loader"
SAVE, LOAD, DEPLOY = DEPLOY_STAGES
# How the row's message begins when the round trip changed the outputs.
DIFFERS_FROM_COMPILED = "the saved artifact differs from the compiled module"
DIFFERS_FROM_EAGER = "the saved artifact differs from eager"


@dataclass(frozen=True)
class Call:
    """One call the artifact answers: the inputs, eager's outputs and the compiled module's
    there, and the shape set's name where the case declares dynamic shapes."""

    inputs: Any
    expected: Any
    compiled: Any
    shape: str = ""


@dataclass
class Deployed:
    """The stage's result: one evidence entry per format, and the first failure, if any."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    status: Status = Status.PASS
    stage: str | None = None
    message: str = ""
    notes: list[str] = field(default_factory=list)
    traceback: str | None = None  # the failure's, where it raised

    def fail(self, status: Status, stage: str, message: str, trace: str | None = None) -> None:
        if self.status is Status.PASS:
            self.status, self.stage, self.message, self.traceback = status, stage, message, trace


def run(deploy: Deployable | str, formats: Sequence[str], calls: Sequence[Call],
        pick: Callable[[torch.dtype], Tolerance], narrowing: Mapping[torch.dtype, torch.dtype],
        stages: Stages) -> Deployed:
    """Each format's round trip (``deploy`` a reason: not applicable to every format)."""
    found = Deployed()
    for fmt in formats:
        if isinstance(deploy, str):
            found.entries.append({"format": fmt, "status": "not applicable", "message": deploy})
            continue
        with tempfile.TemporaryDirectory(prefix="trtcheck-deploy-") as folder:
            found.entries.append(_one(deploy, fmt, str(Path(folder) / FILE_NAMES[fmt]), calls,
                                      pick, narrowing, stages, found))
    return found


def _one(deploy: Deployable, fmt: str, path: str, calls: Sequence[Call],
         pick: Callable[[torch.dtype], Tolerance], narrowing: Mapping[torch.dtype, torch.dtype],
         stages: Stages, found: Deployed) -> dict[str, Any]:
    entry: dict[str, Any] = {"format": fmt, "level": deploy.level}

    def failed(step: str, stage: str, err: StageError | PredictionGap, what: str,
               lost: tuple[str, str] | None = None) -> dict[str, Any]:
        if isinstance(err, PredictionGap):
            owner, message = STANDIN, f"the prediction could not be made: {err.reason}"
            found.notes.append(f"deploy as {fmt}: {what} {message}")
        else:
            owner, why = lost or (deploy_owner(err.traceback, step), "")
            message = f"{what} failed ({owner}{why}): {err}"
            found.fail(Status.ERROR, stage, f"deploy as {fmt}: {message}", err.traceback)
        return {**entry, "status": "error", "step": step, "owner": owner, "message": message}

    try:
        with stages.stage(SAVE):
            saved = deploy.save(path, fmt)
    except (StageError, PredictionGap) as err:
        return failed("save", SAVE, err, f"torch_tensorrt.save(output_format={fmt!r})")
    if "not_applicable" in saved:
        return {**entry, "status": "not applicable", "message": saved["not_applicable"]}
    entry.update(saved)
    loader = deploy.loader()
    try:
        with stages.stage(LOADER_START):  # once a run and release, where it has not started
            loader.ready()
        with stages.stage(LOAD):
            loaded_as = loader.load(path, fmt)
    except (StageError, PredictionGap) as err:
        return failed("load", LOAD, err, "loading it in a fresh process")
    entry["load_s"] = loaded_as["load_s"]
    if "dynamic_dims" in entry or "dynamic_dims" in loaded_as:
        entry["dynamic_dims"] = {"saved": entry.pop("dynamic_dims", None),
                                 "loaded": loaded_as.get("dynamic_dims")}
    kept: dict[str, list[str]] = {}
    for ran, call in enumerate(calls, 1):
        at = f" at shape {call.shape}" if call.shape else ""
        try:
            with stages.stage(DEPLOY, example=ran == 1):
                args, kwargs = clone(call.inputs)
                loaded = deploy.rebuilt(loader.call(args, kwargs))
        except (StageError, PredictionGap) as err:
            lost = _lost_dims(entry.get("dynamic_dims")) if ran > 1 else None
            return {**failed("run", DEPLOY, err, f"calling the loaded artifact{at}", lost),
                    "shapes": ran - 1}
        _kept(call.expected, loaded, kept)
        against_compiled = compare(call.compiled, loaded, pick, NO_NARROWING)
        against_eager = compare(call.expected, loaded, pick, narrowing)
        if not against_compiled or not against_eager:
            differs = DIFFERS_FROM_COMPILED if not against_compiled else DIFFERS_FROM_EAGER
            detail = (against_compiled if not against_compiled else against_eager).message
            message = f"{differs}{at} ({EXPORTER}): {detail}"
            found.fail(Status.FAIL, DEPLOY, f"deploy as {fmt}: {message}")
            return {**entry, "status": "fail", "step": "compare", "owner": EXPORTER,
                    "message": message, "shapes": ran, "kept": _kept_words(kept)}
    return {**entry, "status": "pass", "shapes": len(calls), "kept": _kept_words(kept)}


def _lost_dims(dims: Mapping[str, int | None] | None) -> tuple[str, str] | None:
    """Whose a dynamic case's artifact refusing another shape than the example is, where the
    dynamic dimensions say: the exporter's when the saved file has none, the serializer's when
    the file has them and the loaded program fewer."""
    if not dims or dims.get("saved") is None:
        return None
    saved, loaded = dims["saved"], dims.get("loaded")
    if saved == 0:
        return EXPORTER, ", which saved no dynamic dimension"
    if loaded is not None and loaded < saved:
        return SERIALIZER, f", which loaded {loaded} of the {saved} dynamic dimensions saved"
    return None


def _kept(expected: Any, loaded: Any, kept: dict[str, list[str]]) -> None:
    """Add to ``kept`` (by kind: complex, int64) each of eager's complex and int64 outputs, with
    what the artifact returned in its place where that lost the dtype or the shape."""
    got = dict(leaves_with_paths(loaded))
    for path, leaf in leaves_with_paths(expected):
        if not isinstance(leaf, torch.Tensor) or not (leaf.is_complex() or leaf.dtype == torch.int64):
            continue
        kind = "complex" if leaf.is_complex() else "int64"
        theirs = got.get(path)
        name = f"out{path}"  # as the comparison names it
        if not isinstance(theirs, torch.Tensor):
            kept.setdefault(kind, []).append(f"{name} missing")
        elif theirs.dtype != leaf.dtype or theirs.shape != leaf.shape:
            kept.setdefault(kind, []).append(
                f"{name} {str(leaf.dtype).removeprefix('torch.')}{list(leaf.shape)} came back "
                f"{str(theirs.dtype).removeprefix('torch.')}{list(theirs.shape)}")
        else:
            kept.setdefault(kind, [])


def _kept_words(kept: dict[str, list[str]]) -> dict[str, str]:
    """Per kind of output the case has: ``kept``, or what was lost."""
    return {kind: "; ".join(dict.fromkeys(lost)) if lost else "kept"
            for kind, lost in kept.items()}

