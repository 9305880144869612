"""Run one case: build → eager → export → for each backend and profile (a slot): compile → run →
compare → time, each slot's run a typed :class:`SlotOutcome` that becomes its row."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, fields, replace
from typing import Any

import torch
from torch.export import ExportedProgram

from trtcheck.backends import Backend, Compiled, CompileJob
from trtcheck.config.options import Options
from trtcheck.core.profiles import Tolerance
from trtcheck.core.traits import Kind
from trtcheck.errors import PredictionGap, Unsupported
from trtcheck.execution import deploy, process_state
from trtcheck.execution.events import Item, StageHook, no_hook
from trtcheck.execution.probe import kernel_settings
from trtcheck.execution.stages import STEADY_BACKEND, STEADY_EAGER, StageError, Stages, error_owner
from trtcheck.execution.tolerance import precision_lost, tolerance_for
from trtcheck.measure import device_lock, drift, kernels, memory
from trtcheck.measure.compare import (
    NO_NARROWING,
    TRUNCATE_DOUBLE,
    Comparison,
    compare,
    require_tensors,
)
from trtcheck.measure.mutation import inputs_changed, mutation_problem
from trtcheck.measure.outputs import keep_eager
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

# Why a module that changes its own buffers gets no dtype drift check: its compiled module's
# second call starts from another state than eager's would.
STATE_CHANGES = "the module changes its own buffers between calls"
# How a row the TensorRT stand-in could not predict begins (:class:`PredictionGap`).
PREDICTION_GAP = "the prediction could not be made"


@dataclass(frozen=True)
class SlotOutcome:
    """What running one slot's backend found: the fields its row takes from the run."""

    status: Status
    timings: dict[str, float]
    evidence: Evidence
    memory: Memory | None
    message: str = ""
    stage: str | None = None
    location: str | None = None
    traceback: str | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    latency: Latency | None = None
    shapes: list[dict[str, list[int]]] | None = None

    def row(self, case: Case, slot: Slot) -> Row:
        """The slot's row, with the zoo's expected failure applied."""
        return row_for(case, slot, **{f.name: getattr(self, f.name) for f in fields(self)})


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

    The case starts from the process-global state this process had before its first case
    (:mod:`trtcheck.execution.process_state`), whatever the cases before it changed. The last row is
    held until the case has released its model and inputs, and notes GPU memory the case left
    allocated."""
    process_state.fresh().restore()
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
            require_tensors(expected)
            if opts.eager_outputs is not None:  # ab: base and head compared on the same inputs
                keep_eager(opts.eager_outputs, case.case_id, inputs, expected,
                           values=not opts.figures_only)
            eager = Eager(module, inputs_changed(inputs, eager_in), state, tuple(state.changed()))
            eager.restore()  # export, and every backend, start from the state eager started from
            at_eager = process_state.take()  # and each slot from the process state eager ran in
    except StageError as err:
        yield from rows_for(case, slots, status=Status.ERROR, stage=err.stage, message=str(err),
                            location=err.location, traceback=err.traceback, timings=stages.timings,
                            memory=stages.memory())
        return
    program, others, shapes, unexported = None, [], STATIC, None
    if needs_program(case, opts, backends):
        try:
            with stages.stage("export"):
                program = export(case, built)
                shapes = plan_shapes(program, inputs)
            others = _other_shapes(eager, program, inputs, shapes, stages)
        except StageError as err:  # a slot that compiles the user's module runs without it
            program, others, shapes, unexported = None, [], STATIC, err
    if not opts.figures_only and program is not None:
        yield Analysis(case.case_id, _analyze(program, inputs, stages))

    for slot in slots:
        backend = backends[slot.backend]
        if unexported is not None and (unexported.stage != "export"
                                       or not backend.compiles_module(slot.profile)):
            yield row_for(case, slot, status=Status.ERROR, stage=unexported.stage,
                          message=str(unexported), location=unexported.location,
                          traceback=unexported.traceback, timings=stages.timings,
                          memory=stages.memory())
            continue
        reason = backend.unavailable_reason(opts.device) or (
            slot.profile and backend.not_applicable(slot.profile))
        if reason:
            yield row_for(case, slot, status=Status.SKIPPED, message=reason)
            continue
        job = CompileJob(program, inputs[0], inputs[1], slot.profile or opts.profiles[0],
                         opts.device, opts.engine_cache,
                         str(opts.cache_dir.resolve()) if opts.cache_dir else None, shapes.ranges,
                         module=module, case=case,
                         deploy=bool(slot.profile and opts.deploy_formats_for(slot.profile)
                                     and not opts.figures_only))
        slot_before = memory.in_use(opts.device)
        example = AtShape(shapes.sets[0], (job.args, job.kwargs), expected, eager_in)
        run = SlotRun(case, eager, opts, stages.for_slot(slot), shapes, (example, *others),
                      truncate_double=bool(slot.profile and slot.profile.truncate_double),
                      process=at_eager)
        outcome = _run_backend(run, backend, job)
        outcome = replace(outcome, memory=_slot_memory(outcome.memory, slot, slot_before,
                                                       opts.device))
        yield outcome.row(case, slot)


# The shape plan of a case run without its export: the example alone.
STATIC = ShapePlan((ShapeSet("example", {}),), {})


def needs_program(case: Case, opts: Options, backends: Mapping[str, Backend]) -> bool:
    """Whether the case is exported: always, but in a process that gives figures only (an
    ``ab`` process after the first of its side, whose checks the first one ran) where every
    backend compiles the user's module and the case declares no dynamic shapes."""
    return (not opts.figures_only
            or not all(b.traits.from_module for b in backends.values())
            or case.spec.dynamic_shapes_for(case.variant) is not None)


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
    """A case's inputs at one of its shapes, and eager's outputs and inputs after its call."""

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


@dataclass
class Judgement:
    """A slot's status so far and the messages that explain it, in the order a report shows
    them, joined once (:attr:`message`)."""

    status: Status = Status.PASS
    messages: list[str] = field(default_factory=list)
    stage: str = "compare"  # where a row that does not pass failed
    traceback: str | None = None  # where that failure raised

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @property
    def message(self) -> str:
        return "; ".join(m for m in self.messages if m)

    def note(self, *messages: str) -> None:
        """Messages that change no status (NaN counts, a failed timing)."""
        self.messages.extend(messages)

    def fail_first(self, cause: str) -> None:
        """A passing row fails by ``cause``, said before what was noted already."""
        if self.passed:
            self.status = Status.FAIL
            self.messages.insert(0, cause)


@dataclass(frozen=True)
class SlotRun:
    """What one slot's backend is run with: the case, eager's module and its outputs at every
    shape (the example first), the options and the slot's stages."""

    case: Case
    eager: Eager
    opts: Options
    stages: Stages
    shapes: ShapePlan
    at: Sequence[AtShape]  # the example shape first, then the others
    truncate_double: bool
    process: process_state.Snapshot  # the process-global state eager ran in


def _run_backend(run: SlotRun, backend: Backend, job: CompileJob) -> SlotOutcome:
    """Compile, run and compare at every shape (the others only while the row passes; a
    failure at one names it), judge the outputs, check dtype drift, time, and release what the
    compiled module holds."""
    evidence, engine, stages, ran = Evidence(), None, run.stages, 1
    pick = tolerance_for(run.case, run.opts.tolerances, run.truncate_double)
    narrowing = TRUNCATE_DOUBLE if run.truncate_double else NO_NARROWING
    try:
        run.eager.restore()
        run.process.restore()  # what an earlier slot's backend changed, its compiles among it
        with stages.stage("compile"):
            compiled = backend.compile(job)
        evidence, engine = compiled.evidence, compiled.memory
        run.eager.restore()  # a compile may call the module once (inductor does)
        example, *others = run.at
        result, judged, backend_in, actual = _run_and_compare(compiled, example, pick,
                                                              narrowing, stages)
        judged.note(evidence.remark)
        produced = [actual]  # the compiled module's outputs at each shape, for the deploy stage
        for at in others:
            if not judged.passed:
                break
            ran += 1
            try:
                run.eager.restore()
                result, judged, _, at_shape = _run_and_compare(compiled, at, pick, narrowing,
                                                               stages, example=False)
                produced.append(at_shape)
            except StageError as err:
                err.args = (f"at shape {at.shapes.describe()}: {err}",)
                raise
            if not judged.passed:
                judged.messages = [f"at shape {at.shapes.describe()}: {judged.message}"]
        run.eager.restore()
    except Unsupported as exc:
        return SlotOutcome(Status.UNSUPPORTED, stages.timings, evidence, stages.memory(engine),
                           message=str(exc), stage="compile")
    except PredictionGap as gap:  # the stand-in's, not the model's nor Torch-TensorRT's
        return SlotOutcome(Status.SKIPPED, stages.timings, getattr(gap, "evidence", None) or evidence,
                           stages.memory(engine), message=f"{PREDICTION_GAP}: {gap.reason}", stage=gap.stage,
                           traceback="".join(traceback.format_exception(gap)))
    except StageError as err:  # the evidence the backend gathered before it failed, where it has any
        return SlotOutcome(Status.ERROR, stages.timings, err.evidence or evidence,
                           stages.memory(engine), message=str(err), stage=err.stage,
                           location=err.location, traceback=err.traceback,
                           shapes=shapes_record(run.shapes, ran))
    if job.deploy and compiled.deploy is not None:
        evidence = _deploy(run, compiled, run.opts.deploy_formats_for(job.profile), produced,
                           (pick, narrowing), judged, evidence)
    del produced
    outputs = _judge_outputs(run, result, judged)
    if run.opts.dtype_drift and not run.opts.figures_only:
        evidence = _drift(run, compiled, job, evidence, judged)
    latency = _time(run, backend, compiled, job, backend_in, judged)
    if run.opts.kernels and latency is not None:
        evidence = replace(evidence, details={
            **evidence.details, "kernels": _kernels(run.eager, compiled, job, backend, stages)})
    del actual, backend_in
    owned, device = None, run.opts.device
    if memory.in_use(device) is not None:  # what the compiled module holds, freed with it
        memory.release(device)
        alive = memory.in_use(device)
        del compiled  # the last reference
        memory.release(device)
        owned = max(0, (alive or 0) - (memory.in_use(device) or 0))
    return SlotOutcome(judged.status, stages.timings, evidence, stages.memory(engine, owned),
                       message=judged.message, stage=None if judged.passed else judged.stage,
                       traceback=judged.traceback,
                       outputs=outputs, latency=latency, shapes=shapes_record(run.shapes, ran))


def _deploy(run: SlotRun, compiled: Compiled, formats: tuple[str, ...], produced: list[Any],
            judged_by: tuple[Callable[[torch.dtype], Tolerance], Mapping[torch.dtype, torch.dtype]],
            judged: Judgement, evidence: Evidence) -> Evidence:
    """The deploy stage (:mod:`trtcheck.execution.deploy`) at every shape the compiled module
    passed at, judged as the row was (``judged_by``: its tolerances and narrowing): the evidence
    with its entries; a passing row fails by its failure, said first. A row that failed
    already is not deployed."""
    assert compiled.deploy is not None
    if not judged.passed:
        return replace(evidence, deploy=[{"format": f, "status": "not run", "message": NOT_DEPLOYED}
                                         for f in formats])
    calls = [deploy.Call(at.inputs, at.expected, out,
                         at.shapes.describe() if run.shapes.dynamic else "")
             for at, out in zip(run.at, produced, strict=False)]
    found = deploy.run(compiled.deploy, formats, calls, *judged_by, run.stages)
    judged.note(*found.notes)
    if found.status is not Status.PASS:
        judged.status, judged.stage = found.status, found.stage or deploy.DEPLOY
        judged.traceback = found.traceback
        judged.messages.insert(0, found.message)
    return replace(evidence, deploy=found.entries)


# Why a row that failed before the deploy stage has no round trip.
NOT_DEPLOYED = "not deployed: the compiled module failed its own comparison with eager"


def _judge_outputs(run: SlotRun, result: Comparison, judged: Judgement) -> list[dict[str, Any]]:
    """The outputs as recorded; a passing row notes the precision truncate_double cost, NaN
    and Inf are noted (failing the row under ``nan = "fail"``), then eager's state note."""
    if judged.passed and run.truncate_double:
        judged.note(precision_lost(result))
    outputs = [leaf.to_dict() for leaf in result.leaves]
    found = nonfinite.describe(outputs)
    if found and judged.passed and run.opts.nan == "fail":
        judged.status, found = Status.FAIL, f'nan = "fail": {found}'
    judged.note(found, run.eager.state_note)
    return outputs


def _drift(run: SlotRun, compiled: Compiled, job: CompileJob, evidence: Evidence,
           judged: Judgement) -> Evidence:
    """The compiled module called once more with int32/int64 and float32/float64 swapped: the
    evidence with what it found; a passing row fails by a drift that fails, said first."""
    eager = run.eager
    try:
        with run.stages.stage("drift"):
            drifted = (drift.unchecked((job.args, job.kwargs), STATE_CHANGES)
                       if eager.changes_state else
                       drift.check(eager.module, compiled.fn, (job.args, job.kwargs),
                                   run.opts.tolerances["float32"], owner=error_owner))
    except StageError as err:  # the outputs were judged already: the row keeps its status
        drifted = drift.Drift(drift.CHECK_FAILED, "", str(err))
    if drifted is None:
        return evidence
    if drifted.fails:
        judged.fail_first(drifted.describe())
    return replace(evidence, drift=drifted.to_dict())


def _time(run: SlotRun, backend: Backend, compiled: Compiled, job: CompileJob, backend_in: Any,
          judged: Judgement) -> Latency | None:
    """Eager and the backend timed together, and their steady memory peaks taken, under the
    device's exclusive lock. A prediction's latency is PyTorch running a rewritten graph,
    never shown as a speedup: timed only when asked for (time_predictions)."""
    timed = backend.traits.kind is Kind.MEASURED or run.opts.time_predictions
    try:
        with (run.stages.stage("timing") if timed else nullcontext()), \
                device_lock.lock_for(run.opts.device).exclusive():
            latency = _latency(run.eager, compiled, job, run.opts,
                               fresh=inputs_changed((job.args, job.kwargs), backend_in),
                               interleave=not backend.traits.subprocess) if timed else None
            _steady_peaks(run.eager, compiled, job, run.stages,
                          apart=backend.traits.subprocess)
    except StageError as err:  # the outputs were judged already: the row keeps its status
        judged.note(f"timing failed, no latency: {err}")
        return None
    return latency


def _run_and_compare(compiled: Compiled, at: AtShape, pick: Callable[[torch.dtype], Tolerance],
                     narrowing: Mapping[torch.dtype, torch.dtype], stages: Stages, *,
                     example: bool = True) -> tuple[Comparison, Judgement, Any, Any]:
    """Call the compiled module on a copy of ``at``'s inputs and judge it against eager's
    output and inputs after its call there: the comparison, its judgement, the copy of the
    inputs it was called with, and its output."""
    inputs, expected, eager_after = at.inputs, at.expected, at.eager_after
    with stages.stage("run", example=example), torch.no_grad():
        called = clone(inputs)
        actual = compiled.fn(*called[0], **called[1])
    with stages.stage("compare", example=example):
        result = compare(expected, actual, pick, narrowing)
        problems = [m for m in (result.message, mutation_problem(inputs, eager_after, called,
                                                                  pick)) if m]
    return result, Judgement(Status.FAIL if problems else Status.PASS, problems), called, actual


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


def _kernels(eager: Eager, compiled: Compiled, job: CompileJob, backend: Backend,
             stages: Stages) -> dict[str, dict[str, Any]]:
    """The kernels of one more call of eager and of the backend, each from the state eager
    started from, on a copy of the inputs (:mod:`trtcheck.measure.kernels`)."""
    def one(fn: Callable[..., Any]) -> dict[str, Any]:
        called = clone((job.args, job.kwargs))
        try:
            with stages.stage("kernels"):
                return kernels.fingerprint(lambda: fn(*called[0], **called[1]), job.device)
        except StageError as err:
            return kernels.none(f"the call failed: {err}")
        finally:
            eager.restore()

    found = {"eager": one(eager.module)}
    found["backend"] = (kernels.none("its calls run in another process, which the profiler "
                                     "does not see") if backend.traits.subprocess
                        else one(compiled.called))
    return {**found, "settings": kernel_settings()}


def _steady_peaks(eager: Eager, compiled: Compiled, job: CompileJob, stages: Stages, *,
                  apart: bool) -> None:
    """Eager's and the backend's steady-state memory peaks, after warm-up, into the stages; not
    the backend's where its calls run ``apart``, in another process, whose memory this one's
    measure does not hold."""
    def inputs() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return clone((job.args, job.kwargs))

    found = memory.steady_peaks(job.device, [(eager.module, inputs),
                                             *([] if apart else [(compiled.called, inputs)])])
    for name, peak in zip((STEADY_EAGER, STEADY_BACKEND), found, strict=False):
        if peak is not None:
            stages.peaks[name] = peak


