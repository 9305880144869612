"""A ``trtcheck run`` (or ``reduce``) job from resolved options to its record: the backends
chosen, the cases collected and run, where the time went, what happens after the run (the
reduction, given by the caller) and the changes against the baseline. It prints nothing and
writes no report: the CLI watches it through :class:`Watcher` and renders its record."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from trtcheck.config.options import Options
from trtcheck.core.traits import needs_choice, traits_table
from trtcheck.execution.run import Collection, OneAtATime, collect, run, start
from trtcheck.results import baseline as baselines
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.zoo.cases import Case

# What runs after the cases, before the baseline comparison (``trtcheck reduce``'s step): it
# gets the options, the backends, the record, the collection and what ran the cases, whose
# worker and backends it may reuse, and may change the record.
After = Callable[[Options, Mapping[str, Any], Record, Collection, OneAtATime], None]


class Watcher(Protocol):
    """What hears a job as it goes (the CLI's progress printer), entered around the run."""

    def collection(self, collection: Collection) -> None: ...
    def case(self, case: Case | None, rows: list[Row]) -> None: ...
    def stage(self, case: Case, backend: str, profile: str | None, stage: str) -> None: ...
    def __enter__(self) -> Any: ...
    def __exit__(self, *exc: object) -> None: ...


def prepare(opts: Options) -> Options:
    """The options with the default backend chosen where none was named. Isolated, the
    backends load in the workers: with them named (one Torch-TensorRT release at most) and a
    CPU build of torch, this process never loads torch."""
    if needs_choice(opts.backends, opts.torch_tensorrt):
        from trtcheck import backends

        return backends.choose(opts)
    return opts


def loaded(opts: Options) -> Mapping[str, Any]:
    """The backends a run's executor is given (:func:`trtcheck.execution.run.start`): isolated,
    their traits, the workers loading them; in this process, the backends themselves."""
    if opts.isolate:
        return traits_table(opts.backends)
    from trtcheck import backends

    return backends.instantiate(opts)


class StageClock:
    """Where the time goes: seconds by stage, from each stage's start to the next stage of its
    case (or the case's end), summed over cases and over workers running at once."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self.open: dict[str, tuple[str, float]] = {}  # case id -> (stage, started)

    def stage(self, case: Case, stage: str) -> None:
        self.done(case)
        self.open[case.case_id] = (stage, time.monotonic())

    def done(self, case: Case | None) -> None:
        stage = self.open.pop(case.case_id, None) if case is not None else None
        if stage is not None:
            self.seconds[stage[0]] += time.monotonic() - stage[1]

    def totals(self) -> dict[str, float]:
        """Seconds by stage, the longest first."""
        return {stage: round(s, 3) for stage, s in self.seconds.most_common()}


def run_job(opts: Options, watch: Callable[[Collection], Watcher], *, base: Record | None,
            after: After | None = None) -> Record:
    """Run the zoo under ``opts`` (backends already chosen, :func:`prepare`), the output
    directory locked by the caller, ``watch`` making what hears it once the cases are
    collected: its record with ``environment["stage_s"]``, reduced by ``after`` when given,
    with its changes against ``base`` (the ``--baseline`` record, read by the caller before
    anything runs) when given."""
    chosen = loaded(opts)
    clock = StageClock()
    with contextlib.closing(start(opts, chosen)) as executor:
        collection = collect(opts, executor)
        watcher = watch(collection)
        watcher.collection(collection)

        lock = threading.Lock()  # stages are announced from the workers' threads

        def on_case(case: Case | None, rows: list[Row]) -> None:
            with lock:
                clock.done(case)
            watcher.case(case, rows)

        def on_stage(case: Case, backend: str, profile: str | None, stage: str) -> None:
            with lock:
                clock.stage(case, stage)
            watcher.stage(case, backend, profile, stage)

        with watcher:
            rec = run(opts, chosen, collection, executor, on_case, on_stage)
        rec.environment["stage_s"] = clock.totals()
        if after is not None and not rec.stopped:
            after(opts, chosen, rec, collection, executor.one())
    if base is not None:
        rec.baseline = baselines.compare(base, rec, metric=opts.gate.metric,
                                         threshold=opts.gate.threshold).to_dict()
    return rec
