"""Run one case: build → eager → export → for each backend and profile: compile → run → compare → time."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch.export import ExportedProgram

from trtcheck.analyze import analyze_program
from trtcheck.backends import Backend, CompileJob, Unsupported
from trtcheck.backends.base import PREDICTION_NOTE
from trtcheck.compare import Comparison, compare
from trtcheck.discover import last_line, location
from trtcheck.export import export
from trtcheck.options import Options, Profile, Tolerance
from trtcheck.record import Latency, Row
from trtcheck.status import Status, apply_xfail
from trtcheck.tensors import clone, to_device
from trtcheck.timing import measure
from trtcheck.variants import Case, build

NO_PROFILE = "-"


class StageError(Exception):
    """An exception in user or backend code, tagged with the stage it happened in."""

    def __init__(self, stage: str, exc: BaseException, where: str) -> None:
        line = last_line(exc)
        super().__init__(f"out of memory: {line}" if is_out_of_memory(exc) else line)
        self.stage = stage
        self.location = where
        self.traceback = "".join(traceback.format_exception(exc))


StageHook = Callable[[str, str | None, str], None]


def _no_hook(backend: str, profile: str | None, stage: str) -> None:
    return None


def is_out_of_memory(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, (MemoryError, torch.OutOfMemoryError)) or any(
        marker in text for marker in ("out of memory", "can't allocate memory",
                                      "cannot allocate memory"))


@dataclass
class _Clock:
    timings: dict[str, float] = field(default_factory=dict)
    hook: StageHook = _no_hook
    backend: str = NO_PROFILE
    profile: str | None = None

    @contextmanager
    def stage(self, name: str, case: Case) -> Iterator[None]:
        self.hook(self.backend, self.profile, name)
        t0 = time.perf_counter()
        try:
            yield
        except Unsupported:
            raise
        except Exception as exc:
            raise StageError(name, exc, location(exc, case.file.root)) from exc
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0


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


def plan(backends: Mapping[str, Backend], profiles: tuple[Profile, ...]) -> list[tuple[str, Profile | None]]:
    """(backend, profile) pairs: a backend that ignores profiles gets one row, profile ``-``."""
    pairs: list[tuple[str, Profile | None]] = []
    for name, backend in backends.items():
        pairs += [(name, p) for p in profiles] if backend.uses_profiles else [(name, None)]
    return pairs


def rows_for(case: Case, pairs: list[tuple[str, Profile | None]], **fields: Any) -> list[Row]:
    """One row per (backend, profile) of a case, all with the same fields — for whole-case outcomes."""
    return [_finish(case, Row(case.case_id, case.file.rel, case.spec.name, case.variant,
                              backend, profile.name if profile else NO_PROFILE,
                              tags=list(case.spec.tags), source=case.file.source,
                              line=case.spec.line, **fields)) for backend, profile in pairs]


def _finish(case: Case, row: Row) -> Row:
    status, message = apply_xfail(row.status, row.message,
                                  case.spec.xfail_reason(case.variant, row.backend))
    return replace(row, status=status, message=message)


def analyze_case(case: Case) -> Row:
    """Build and export a case on CPU and analyse its dtype paths: no eager run, no compile.

    The analysis is in the row's ``evidence["analysis"]``; a failure is an ``error`` row."""
    clock = _Clock()
    try:
        with clock.stage("build", case):
            built = build(case)
            built = replace(built, module=built.module.eval())
        with clock.stage("export", case):
            program = export(case, built)
        with clock.stage("analyze", case):
            analysis = analyze_program(program, built.args, built.kwargs)
    except StageError as err:
        (row,) = rows_for(case, [("analyze", None)], status=Status.ERROR, stage=err.stage,
                          message=str(err), location=err.location, traceback=err.traceback,
                          timings=clock.timings)
        return row
    (row,) = rows_for(case, [("analyze", None)], timings=clock.timings,
                      evidence={"analysis": analysis})
    return row


def run_case(case: Case, opts: Options, backends: Mapping[str, Backend]) -> list[Row]:
    """Every row of one case. Exceptions in user or backend code become rows, never propagate."""
    return list(iter_rows(case, opts, backends))


def iter_rows(case: Case, opts: Options, backends: Mapping[str, Backend],
              hook: StageHook = _no_hook) -> Iterator[Row]:
    """Rows of one case as each (backend, profile) finishes; ``hook`` hears each stage start."""
    pairs = plan(backends, opts.profiles)
    clock = _Clock(hook=hook)
    try:
        with clock.stage("build", case):
            built = build(case)
            module = built.module.to(opts.device).eval()
            inputs = to_device((built.args, built.kwargs), opts.device)
            built = replace(built, module=module, args=inputs[0], kwargs=inputs[1])
        with clock.stage("eager", case), torch.no_grad():
            eager_in = clone(inputs)
            expected = module(*eager_in[0], **eager_in[1])
        eager = Eager(module, mutates=_mutated(inputs, eager_in))
        with clock.stage("export", case):
            program = export(case, built)
    except StageError as err:
        yield from rows_for(case, pairs, status=Status.ERROR, stage=err.stage, message=str(err),
                            location=err.location, traceback=err.traceback, timings=clock.timings)
        return
    analysis = _analyze(program, inputs, clock, case)

    for name, profile in pairs:
        backend = backends[name]
        base = Row(case.case_id, case.file.rel, case.spec.name, case.variant, name,
                   profile.name if profile else NO_PROFILE, tags=list(case.spec.tags),
                   evidence={"analysis": analysis, **_prediction(backend)},
                   source=case.file.source, line=case.spec.line)
        reason = backend.unavailable_reason(opts.device)
        if reason:
            yield replace(base, status=Status.SKIPPED, message=reason)
            continue
        job = CompileJob(program, inputs[0], inputs[1], profile or opts.profiles[0], opts.device)
        stage_clock = _Clock(dict(clock.timings), hook, name, profile.name if profile else None)
        outcome = _run_backend(case, backend, job, expected, eager_in, eager, opts,
                               truncate_double=bool(profile and profile.truncate_double),
                               clock=stage_clock)
        outcome["evidence"] = {**base.evidence, **outcome["evidence"]}
        yield _finish(case, replace(base, **outcome))


def _analyze(program: ExportedProgram, inputs: Any, clock: _Clock, case: Case) -> dict[str, Any]:
    """The case's dtype paths; a failure here is recorded, never fatal, since no result depends on it."""
    try:
        with clock.stage("analyze", case):
            return analyze_program(program, *inputs)
    except StageError as err:
        return {"error": str(err), "path": []}


def _prediction(backend: Backend) -> dict[str, Any]:
    return {"prediction": True, "note": PREDICTION_NOTE} if backend.prediction else {}


@dataclass(frozen=True)
class Eager:
    """The user's module as given, and whether a call modifies its inputs."""

    module: torch.nn.Module
    mutates: bool


def _run_backend(case: Case, backend: Backend, job: CompileJob, expected: Any,
                 eager_after: Any, eager: Eager, opts: Options, *,
                 truncate_double: bool, clock: _Clock) -> dict[str, Any]:
    evidence: dict[str, Any] = {}
    try:
        with clock.stage("compile", case):
            compiled = backend.compile(job)
        evidence = compiled.evidence
        with clock.stage("run", case), torch.no_grad():
            backend_in = clone((job.args, job.kwargs))
            actual = compiled.fn(*backend_in[0], **backend_in[1])
        with clock.stage("compare", case):
            pick = tolerance_for(case, opts.tolerances, truncate_double)
            result = compare(expected, actual, pick)
            inputs_check = compare(eager_after, backend_in, pick)
        with clock.stage("timing", case):
            eager_stats, stats = measure(
                [eager.module, compiled.fn], job.args, job.kwargs, timing=opts.timing,
                device=opts.device,
                fresh_inputs=[eager.mutates, _mutated((job.args, job.kwargs), backend_in)])
    except Unsupported as exc:
        return dict(status=Status.UNSUPPORTED, stage="compile", message=str(exc),
                    timings=clock.timings, evidence=evidence)
    except StageError as err:
        return dict(status=Status.ERROR, stage=err.stage, message=str(err), location=err.location,
                    traceback=err.traceback, timings=clock.timings, evidence=evidence)
    status, message = _verdict(result, inputs_check)
    if status is Status.PASS and truncate_double:
        message = _precision_lost(result)
    return dict(status=status, message=message, stage=None if status is Status.PASS else "compare",
                timings=clock.timings, outputs=[leaf.to_dict() for leaf in result.leaves],
                latency=Latency(eager=eager_stats, backend=stats), evidence=evidence)


def _verdict(outputs: Comparison, inputs: Comparison) -> tuple[Status, str]:
    problems = []
    if not outputs:
        problems.append(outputs.message)
    if not inputs:
        problems.append("inputs after the call differ from eager's (modified or re-typed by the "
                        f"compiled module): {inputs.message}")
    return (Status.FAIL, "; ".join(problems)) if problems else (Status.PASS, "")


def _precision_lost(result: Comparison) -> str:
    """Under truncate_double, how far float64 outputs moved when computed in float32."""
    doubles = [leaf.max_rel for leaf in result.leaves
               if leaf.eager_dtype in ("torch.float64", "torch.complex128") and leaf.max_rel is not None]
    if not doubles:
        return ""
    return (f"truncate_double: float64 outputs judged at float32 tolerance; precision lost "
            f"relative to float64: max rel error {max(doubles):.2g}")


def _mutated(before: Any, after: Any) -> bool:
    """Whether a call changed its inputs (so timing must give each call fresh copies)."""
    return not compare(before, after, lambda _: Tolerance(0.0, 0.0))
