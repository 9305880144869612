"""A case's stages: each announced, timed and its memory peak taken, and an exception in one
classified (out of memory, Torch-TensorRT's own frame, a refused TensorRT build, trtcheck's own
bug) into a :class:`StageError` naming the stage and the user's ``file:line``; a prediction the
TensorRT stand-in could not make (:class:`~trtcheck.errors.PredictionGap`) is raised as itself,
from wherever in the exception's chain it is."""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from trtcheck.backends.torch_tensorrt.frames import AFTER_COMPILE, owner, torch_tensorrt_cause
from trtcheck.backends.torch_tensorrt.nodes import note_executing, while_executing
from trtcheck.backends.torch_tensorrt.torch_compile import unwrapped
from trtcheck.core.traits import NO_BACKEND
from trtcheck.errors import (
    INTERNAL,
    BuildRefused,
    InternalError,
    PredictionGap,
    Unsupported,
    found_in,
    last_line,
    location,
)
from trtcheck.execution.events import StageHook, no_hook
from trtcheck.measure import device_lock, memory
from trtcheck.measure.memory import Peak
from trtcheck.results.figures import Memory
from trtcheck.results.rows import Evidence, Slot
from trtcheck.zoo.cases import Case


class StageError(Exception):
    """An exception in user or backend code, tagged with the stage it happened in."""

    def __init__(self, stage: str, exc: BaseException, where: str, device: str = "cpu") -> None:
        line = last_line(exc, cut=True)
        note_executing(exc)  # where its frames are live: raised in this process
        trace = "".join(traceback.format_exception(exc))
        if isinstance(exc, torch.OutOfMemoryError) and torch.device(device).type == "cuda":
            line = memory.gpu_oom_message(stage, exc, device)
        elif is_out_of_memory(exc):
            line = f"out of memory: {line}"
        elif isinstance(exc, BuildRefused):  # it names the converter to report itself
            line = " ".join(str(exc).split())
        else:
            line = while_executing(line, trace) + (owner(trace) if stage in AFTER_COMPILE
                                                   else torch_tensorrt_cause(trace))
        super().__init__(line)
        self.stage = stage
        self.location = where
        self.traceback = trace
        self.evidence: Evidence | None = getattr(exc, "evidence", None)


def error_owner(exc: BaseException) -> str:
    """What a message adds for an error after compile: its frame and owner (:func:`owner`)."""
    return owner("".join(traceback.format_exception(exc)))


STEADY_EAGER, STEADY_BACKEND = "eager steady", "backend steady"  # peaks taken after timing


def is_out_of_memory(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, (MemoryError, torch.OutOfMemoryError)) or any(
        marker in text for marker in ("out of memory", "can't allocate memory",
                                      "cannot allocate memory"))


@dataclass
class Stages:
    """Runs a case's stages: announces each to the hook, times it, records its memory peak, and
    turns an exception in it into a :class:`StageError` that names the stage and the user's
    ``file:line``."""

    case: Case
    timings: dict[str, float] = field(default_factory=dict)
    hook: StageHook = no_hook
    backend: str = NO_BACKEND
    profile: str | None = None
    device: str = "cpu"
    peaks: dict[str, Peak] = field(default_factory=dict)

    def for_slot(self, slot: Slot) -> Stages:
        """The same case's stages on one backend and profile, starting from the shared figures."""
        return Stages(self.case, dict(self.timings), self.hook, slot.backend,
                      slot.profile.name if slot.profile else None, self.device, dict(self.peaks))

    @contextmanager
    def stage(self, name: str, *, example: bool = True) -> Iterator[None]:
        """``example=False``: the stage at another shape than the example, whose memory peak is
        kept apart (the row's figures are the example's)."""
        self.hook(self.backend, self.profile, name)
        t0 = time.perf_counter()
        try:
            with (device_lock.lock_for(self.device).shared(),
                  memory.peak(self.device, self.peaks, name if example else f"{name} (other shapes)")):
                yield
        except Unsupported:
            raise
        except Exception as raised:
            exc = unwrapped(raised)  # what Dynamo's BackendCompilerFailed holds
            if isinstance(exc, Unsupported):
                raise exc from raised
            gap = found_in(exc, PredictionGap)
            if gap is None:
                raise self._error(name, exc) from raised
            gap.stage = name
            if gap is raised:
                raise
            raise gap from raised  # the stand-in's gap, wherever Torch-TensorRT's code wrapped it
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0

    def _error(self, name: str, exc: Exception) -> StageError:
        if isinstance(exc, InternalError):  # trtcheck's bug: no user file:line to blame
            return StageError(INTERNAL, exc, "", self.device)
        # No frame of the zoo in the traceback (a factory's bad return value, an export error
        # raised inside torch): point at the model's declaration instead.
        where = location(exc, self.case.file.root) or f"{self.case.file.path}:{self.case.spec.line}"
        return StageError(name, exc, where, self.device)

    def memory(self, engine: int | None = None, owned: int | None = None) -> Memory | None:
        """The steady-state peaks of eager and the backend (with what the compiled module
        ``owned``), the first calls' peaks, and what compiling kept; None where not measured."""
        measure = memory.measure_name(self.device)
        if measure is None:
            return None
        eager, backend, first, compiled, run = (self.peaks.get(s) for s in (
            STEADY_EAGER, STEADY_BACKEND, "eager", "compile", "run"))
        return Memory(measure, eager=eager.added if eager else None,
                      backend=backend.added + (owned or 0) if backend else None,
                      compiled=max(0, compiled.end - compiled.start) if compiled else None,
                      engine=engine, owned=owned, eager_first=first.added if first else None,
                      backend_first=run.added if run else None)

