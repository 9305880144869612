"""Run one case: build → eager → export → for each backend and profile: compile → run → compare → time."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch.export import ExportedProgram

from trtcheck.backends import Backend, Compiled, CompileJob
from trtcheck.config.options import Options
from trtcheck.core.profiles import Tolerance
from trtcheck.core.traits import NO_BACKEND
from trtcheck.errors import INTERNAL, InternalError, Unsupported, last_line, location, raising_frame
from trtcheck.execution.events import Item, StageHook, no_hook
from trtcheck.measure import alone, drift, memory
from trtcheck.measure.compare import NO_NARROWING, TRUNCATE_DOUBLE, Comparison, compare
from trtcheck.measure.memory import Peak
from trtcheck.measure.mutation import inputs_changed, mutation_problem
from trtcheck.measure.timing import measure
from trtcheck.program.analyze import analyze_program
from trtcheck.program.export import export
from trtcheck.program.shapes import ShapePlan, ShapeSet, plan_shapes, resize, shapes_record
from trtcheck.results import nonfinite
from trtcheck.results.figures import Cost, Latency, Memory
from trtcheck.results.rows import Analysis, Evidence, Row, Slot, plan, row_for, rows_for
from trtcheck.status import Status
from trtcheck.tensors import StateSnapshot, clone, to_device
from trtcheck.zoo.cases import Case, build
from trtcheck.zoo.discover import IMPORTED, ImportFailure


class StageError(Exception):
    """An exception in user or backend code, tagged with the stage it happened in."""

    def __init__(self, stage: str, exc: BaseException, where: str, device: str = "cpu") -> None:
        line = last_line(exc, cut=True)
        if isinstance(exc, torch.OutOfMemoryError) and torch.device(device).type == "cuda":
            line = memory.gpu_oom_message(stage, exc, device)
        elif is_out_of_memory(exc):
            line = f"out of memory: {line}"
        trace = "".join(traceback.format_exception(exc))
        super().__init__(line + torch_tensorrt_frame(trace))
        self.stage = stage
        self.location = where
        self.traceback = trace


def torch_tensorrt_frame(trace: str) -> str:
    """What a message adds when Torch-TensorRT's own code raised: its frame, and, where it raised
    by a slip rather than a ``raise``, that this is a Torch-TensorRT bug to report."""
    frame = raising_frame(trace, "torch_tensorrt")
    if frame is None:
        return ""
    code = f": `{frame.code}`" if frame.code else ""
    if frame.deliberate:
        return f" (raised by Torch-TensorRT in {frame.name} at {frame.where})"
    return (f" (raised inside Torch-TensorRT, in {frame.name} at {frame.where}{code}: a bug in "
            "Torch-TensorRT; report it to Torch-TensorRT with this frame)")


STEADY_EAGER, STEADY_BACKEND = "eager steady", "backend steady"  # peaks taken after timing


# Why a module that changes its own buffers gets no dtype drift check: its compiled module's
# second call starts from another state than eager's would.
STATE_CHANGES = "the module changes its own buffers between calls"


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
            with (alone.lock_for(self.device).shared(),
                  memory.peak(self.device, self.peaks, name if example else f"{name} (other shapes)")):
                yield
        except Unsupported:
            raise
        except InternalError as exc:  # trtcheck's bug: no user file:line to blame
            raise StageError(INTERNAL, exc, "", self.device) from exc
        except Exception as exc:
            # No frame of the zoo in the traceback (a factory's bad return value, an export
            # error raised inside torch): point at the model's declaration instead.
            where = (location(exc, self.case.file.root)
                     or f"{self.case.file.path}:{self.case.spec.line}")
            raise StageError(name, exc, where, self.device) from exc
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0

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


def effective_dtype(dtype: torch.dtype, truncate_double: bool) -> str:
    """The floating precision an output is judged at."""
    name = {torch.complex64: "float32", torch.complex128: "float64", torch.float64: "float64",
            torch.float16: "float16", torch.bfloat16: "bfloat16"}.get(dtype, "float32")
    return "float32" if truncate_double and name == "float64" else name


def tolerance_for(case: Case, tolerances: Mapping[str, Tolerance],
                  truncate_double: bool) -> Callable[[torch.dtype], Tolerance]:
    def pick(dtype: torch.dtype) -> Tolerance:
        base = tolerances[effective_dtype(dtype, truncate_double)]
        return Tolerance(rtol=base.rtol if case.spec.rtol is None else case.spec.rtol,
                         atol=base.atol if case.spec.atol is None else case.spec.atol)
    return pick


def in_full(case: Case) -> Case | ImportFailure:
    """The case with its full declaration (factory, dynamic shapes), from its file imported in
    this process (once), when it was collected in another."""
    if case.spec.factory is not None:
        return case
    spec = IMPORTED.spec(case.file, case.spec.name)
    return spec if isinstance(spec, ImportFailure) else replace(case, spec=spec)


def import_failed(case: Case, slots: list[Slot], failure: ImportFailure) -> list[Row]:
    return rows_for(case, slots, status=Status.ERROR, stage="import", message=failure.message,
                    location=failure.location, traceback=failure.traceback)


def analyze_case(case: Case) -> Iterator[Item]:
    """Build and export a case on CPU and analyse its dtype paths: no eager run, no compile.

    Yields the analysis, then the case's one ``analyze`` row (an ``error`` row on failure)."""
    slot = Slot("analyze", None)
    full = in_full(case)
    if isinstance(full, ImportFailure):
        yield import_failed(case, [slot], full)[0]
        return
    case = full
    stages = Stages(case)
    try:
        with stages.stage("build"):
            built = build(case)
            built = replace(built, module=built.module.eval())
        with stages.stage("export"):
            program = export(case, built)
        with stages.stage("analyze"):
            analysis = analyze_program(program, built.args, built.kwargs)
    except StageError as err:
        yield row_for(case, slot, status=Status.ERROR, stage=err.stage, message=str(err),
                      location=err.location, traceback=err.traceback, timings=stages.timings)
        return
    yield Analysis(case.case_id, analysis)
    yield row_for(case, slot, timings=stages.timings)


def iter_rows(case: Case, opts: Options, backends: Mapping[str, Backend],
              hook: StageHook = no_hook) -> Iterator[Item]:
    """The case's analysis, then its rows as each slot finishes; ``hook`` hears each stage start.

    The last row is held until the case has released its model and inputs, and notes GPU
    memory the case left allocated."""
    full = in_full(case)
    if isinstance(full, ImportFailure):
        yield from import_failed(case, plan(backends, opts.profiles), full)
        return
    before = memory.in_use(opts.device)
    last: Row | None = None
    for item in _case_items(full, opts, backends, hook):
        if isinstance(item, Row):
            if last is not None:
                yield last
            last = item
        else:
            yield item
    if last is None:
        return
    memory.release(opts.device)
    note = memory.leak_note(f"case {case.case_id}", before, memory.in_use(opts.device),
                            opts.device)
    if note:
        held = last.memory or Memory(memory.measure_name(opts.device) or memory.ALLOCATOR)
        last = replace(last, memory=replace(held, notes=[*held.notes, note]))
    yield last


def _case_items(case: Case, opts: Options, backends: Mapping[str, Backend],
                hook: StageHook) -> Iterator[Item]:
    slots = plan(backends, opts.profiles)
    stages = Stages(case, hook=hook, device=opts.device)
    try:
        with stages.stage("build"):
            built = build(case)
            module = built.module.to(opts.device).eval()
            inputs = to_device((built.args, built.kwargs), opts.device)
            built = replace(built, module=module, args=inputs[0], kwargs=inputs[1])
            state = StateSnapshot(module)
        with stages.stage("eager"), torch.no_grad():
            eager_in = clone(inputs)
            expected = module(*eager_in[0], **eager_in[1])
        with stages.stage("compare"):  # announced, so that a crash here is not blamed on eager
            eager = Eager(module, inputs_changed(inputs, eager_in), state, tuple(state.changed()))
            eager.restore()  # export, and every backend, start from the state eager started from
        with stages.stage("export"):
            program = export(case, built)
            shapes = plan_shapes(program, inputs)
        others = _other_shapes(eager, program, inputs, shapes, stages)
    except StageError as err:
        yield from rows_for(case, slots, status=Status.ERROR, stage=err.stage, message=str(err),
                            location=err.location, traceback=err.traceback, timings=stages.timings,
                            memory=stages.memory())
        return
    yield Analysis(case.case_id, _analyze(program, inputs, stages))

    for slot in slots:
        backend = backends[slot.backend]
        reason = backend.unavailable_reason(opts.device)
        if reason:
            yield row_for(case, slot, status=Status.SKIPPED, message=reason)
            continue
        job = CompileJob(program, inputs[0], inputs[1], slot.profile or opts.profiles[0],
                         opts.device, opts.engine_cache,
                         str(opts.cache_dir.resolve()) if opts.cache_dir else None, shapes.ranges,
                         module=module)
        slot_before = memory.in_use(opts.device)
        outcome = _run_backend(case, backend, job, expected, eager_in, eager, opts,
                               truncate_double=bool(slot.profile and slot.profile.truncate_double),
                               stages=stages.for_slot(slot), others=others, shapes=shapes)
        outcome["memory"] = _slot_memory(outcome["memory"], slot, slot_before, opts.device)
        yield row_for(case, slot, **outcome)


def _slot_memory(figures: Memory | None, slot: Slot, before: int | None,
                 device: str) -> Memory | None:
    """A slot's figures with the GPU memory in use before it and after its compiled module
    was released, and a note when the slot left more than the margin allocated."""
    if figures is None:
        return None
    memory.release(device)
    after = memory.in_use(device)
    note = memory.leak_note(f"backend {slot.backend}", before, after, device)
    return replace(figures, before=before, after=after, notes=[note] if note else [])


def _analyze(program: ExportedProgram, inputs: Any, stages: Stages) -> dict[str, Any]:
    """The case's dtype paths; a failure here is recorded, never fatal, since no result depends on it."""
    try:
        with stages.stage("analyze"):
            return analyze_program(program, *inputs)
    except StageError as err:
        return {"error": str(err), "path": []}


@dataclass(frozen=True)
class Eager:
    """The user's module as given, whether a call modifies its inputs, and the buffers a call
    changes (a step counter, a cache written in place), with their state before eager's call."""

    module: torch.nn.Module
    mutates: bool
    state: StateSnapshot
    changes_state: tuple[str, ...] = ()

    def restore(self) -> None:
        """Put the buffers back as they were before eager's call, where a call changes them.

        The exported program and the modules backends build from it share these buffers."""
        if self.changes_state:
            self.state.restore()

    @property
    def state_note(self) -> str:
        """``""``, or the line every row of a module that changes its own buffers carries."""
        if not self.changes_state:
            return ""
        return (f"{STATE_CHANGES}: {', '.join(self.changes_state)} (eager and the backend are "
                "compared from the same starting state)")


@dataclass(frozen=True)
class AtShape:
    """A case's inputs at one of its other shapes, and eager's outputs and inputs after its call."""

    shapes: ShapeSet
    inputs: Any
    expected: Any
    eager_after: Any


def _other_shapes(eager: Eager, program: ExportedProgram, inputs: Any, shapes: ShapePlan,
                  stages: Stages) -> list[AtShape]:
    """Eager at each shape of a dynamic case other than the example, each from the state eager
    started from; a failure names the shape."""
    others = []
    for at in shapes.sets[1:]:
        resized = resize(program, inputs, at)
        try:
            with stages.stage("eager", example=False), torch.no_grad():
                after = clone(resized)
                expected = eager.module(*after[0], **after[1])
        except StageError as err:
            err.args = (f"at shape {at.describe()}: {err}",)
            raise
        finally:
            eager.restore()
        others.append(AtShape(at, resized, expected, after))
    return others


def _run_backend(case: Case, backend: Backend, job: CompileJob, expected: Any,
                 eager_after: Any, eager: Eager, opts: Options, *,
                 truncate_double: bool, stages: Stages, others: Sequence[AtShape],
                 shapes: ShapePlan) -> dict[str, Any]:
    evidence = Evidence()
    engine = None
    ran = 1
    pick = tolerance_for(case, opts.tolerances, truncate_double)
    narrowing = TRUNCATE_DOUBLE if truncate_double else NO_NARROWING
    try:
        eager.restore()
        with stages.stage("compile"):
            compiled = backend.compile(job)
        evidence, engine = compiled.evidence, compiled.memory
        eager.restore()  # a compile may call the module once (inductor does)
        with stages.stage("run"), torch.no_grad():
            backend_in = clone((job.args, job.kwargs))
            actual = compiled.fn(*backend_in[0], **backend_in[1])
        with stages.stage("compare"):
            result = compare(expected, actual, pick, narrowing)
            mutation = mutation_problem((job.args, job.kwargs), eager_after, backend_in, pick)
        status, message = _verdict(result, mutation)
        for at in others:
            if status is not Status.PASS:
                break
            ran += 1
            try:
                eager.restore()
                with stages.stage("run", example=False), torch.no_grad():
                    other_in = clone(at.inputs)
                    other = compiled.fn(*other_in[0], **other_in[1])
                with stages.stage("compare", example=False):
                    result = compare(at.expected, other, pick, narrowing)
                    status, message = _verdict(result, mutation_problem(
                        at.inputs, at.eager_after, other_in, pick))
            except StageError as err:
                err.args = (f"at shape {at.shapes.describe()}: {err}",)
                raise
            if status is not Status.PASS:
                message = f"at shape {at.shapes.describe()}: {message}"
        eager.restore()
    except Unsupported as exc:
        return dict(status=Status.UNSUPPORTED, stage="compile", message=str(exc),
                    timings=stages.timings, evidence=evidence, memory=stages.memory(engine))
    except StageError as err:
        return dict(status=Status.ERROR, stage=err.stage, message=str(err), location=err.location,
                    traceback=err.traceback, timings=stages.timings, evidence=evidence,
                    memory=stages.memory(engine), shapes=shapes_record(shapes, ran))
    if status is Status.PASS and truncate_double:
        message = _precision_lost(result)
    outputs = [leaf.to_dict() for leaf in result.leaves]
    found = nonfinite.describe(outputs)
    if found and status is Status.PASS and opts.nan == "fail":
        status, found = Status.FAIL, f'nan = "fail": {found}'
    message = "; ".join(m for m in (message, found, eager.state_note) if m)
    if opts.dtype_drift:
        try:
            with stages.stage("drift"):
                drifted = (drift.unchecked((job.args, job.kwargs), STATE_CHANGES)
                           if eager.changes_state else
                           drift.check(eager.module, compiled.fn, (job.args, job.kwargs),
                                       opts.tolerances["float32"]))
        except StageError as err:  # the outputs were judged already: the row keeps its status
            drifted = drift.Drift(drift.CHECK_FAILED, "", str(err))
        if drifted is not None:
            evidence = replace(evidence, drift=drifted.to_dict())
            if drifted.fails and status is Status.PASS:  # a failing row says its own cause first
                status = Status.FAIL
                message = "; ".join(m for m in (drifted.describe(), message) if m)
    latency, owned = None, None
    try:
        with stages.stage("timing"), alone.lock_for(opts.device).exclusive():
            latency = _latency(eager, compiled, job, opts,
                               fresh=inputs_changed((job.args, job.kwargs), backend_in),
                               interleave=not backend.traits.subprocess)
            _steady_peaks(eager, compiled, job, stages)
    except StageError as err:  # the outputs were judged already: the row keeps its status
        message = "; ".join(m for m in (message, f"timing failed, no latency: {err}") if m)
    if memory.in_use(opts.device) is not None:  # what the compiled module holds, freed with it
        del actual, backend_in
        memory.release(opts.device)
        alive = memory.in_use(opts.device)
        del compiled
        memory.release(opts.device)
        owned = max(0, (alive or 0) - (memory.in_use(opts.device) or 0))
    return dict(status=status, message=message, stage=None if status is Status.PASS else "compare",
                timings=stages.timings, outputs=outputs, latency=latency, evidence=evidence,
                memory=stages.memory(engine, owned),
                shapes=shapes_record(shapes, ran))


def _latency(eager: Eager, compiled: Compiled, job: CompileJob, opts: Options, *,
             fresh: bool, interleave: bool) -> Latency:
    """Eager against what a user of the backend calls; with the compared callable's own cost
    when the backend times another (the control's export round trip). A backend whose calls
    run in another process (its ``subprocess`` trait) is timed after eager, not call by call
    beside it (``interleave`` False), so that eager is never timed while that process works."""
    def timed(fns: tuple[Callable[..., Any], Callable[..., Any]], mutates: tuple[bool, bool],
              interleave: bool = True) -> Latency:
        return measure(fns, job.args, job.kwargs, timing=opts.timing, device=opts.device,
                       fresh_inputs=mutates, interleave=interleave)

    latency = timed((eager.module, compiled.called), (eager.mutates, fresh), interleave)
    if compiled.timed is None or not compiled.cost_label:
        return latency
    extra = timed((compiled.timed, compiled.fn), (fresh, fresh))
    base, over = extra.eager_device, extra.backend_device
    assert base is not None and over is not None  # measure always gives the device figures
    cost = Cost(compiled.cost_label, over.median_ms - base.median_ms,
                (over.ci_low_ms or over.median_ms) - (base.ci_high_ms or base.median_ms),
                (over.ci_high_ms or over.median_ms) - (base.ci_low_ms or base.median_ms))
    return replace(latency, cost=cost)


def _steady_peaks(eager: Eager, compiled: Compiled, job: CompileJob, stages: Stages) -> None:
    """Eager's and the backend's steady-state memory peaks, after warm-up, into the stages."""
    def inputs() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return clone((job.args, job.kwargs))

    found = memory.steady_peaks(job.device, [(eager.module, inputs), (compiled.called, inputs)])
    for name, peak in zip((STEADY_EAGER, STEADY_BACKEND), found, strict=True):
        if peak is not None:
            stages.peaks[name] = peak


def _verdict(outputs: Comparison, mutation: str) -> tuple[Status, str]:
    problems = [m for m in (outputs.message, mutation) if m]
    return (Status.FAIL, "; ".join(problems)) if problems else (Status.PASS, "")


def _precision_lost(result: Comparison) -> str:
    """Under truncate_double, how far float64 outputs moved when computed in float32, and which
    came back in the narrower dtype (what truncate_double asks for)."""
    wide = [leaf for leaf in result.leaves if leaf.eager_dtype in ("torch.float64", "torch.complex128")]
    errors = [leaf.max_rel for leaf in wide if leaf.max_rel is not None]
    if not errors:
        return ""
    narrowed = [f"out{leaf.path} as {leaf.dtype.removeprefix('torch.')}" for leaf in wide
                if leaf.dtype != leaf.eager_dtype]
    returned = f"; returned {', '.join(narrowed)}" if narrowed else ""
    return (f"truncate_double: float64 outputs judged at float32 tolerance; precision lost "
            f"relative to float64: max rel error {max(errors):.2g}{returned}")
