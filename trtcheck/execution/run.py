"""A whole run: collect cases, execute each, journal rows as they finish, build the record."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from trtcheck.config.options import Options
from trtcheck.config.settings import ROW_SETTINGS
from trtcheck.core.traits import NAMES, BackendRef
from trtcheck.errors import OutputError, RecordError, UsageError, did_you_mean
from trtcheck.execution import probe, shard
from trtcheck.execution.events import Item, StageHook, no_hook
from trtcheck.execution.isolate import (
    CaseRunner,
    Event,
    IsolatedExecutor,
    StageListener,
    WorkerPool,
    serially,
)
from trtcheck.results import record
from trtcheck.results.record import Journal, Record
from trtcheck.results.rows import Analysis, BackendTraits, Row, RowKey, file_row, plan, rows_for
from trtcheck.status import Status
from trtcheck.zoo import discover
from trtcheck.zoo.api import ModelSpec
from trtcheck.zoo.cases import Case, expand
from trtcheck.zoo.collector import Collector, Lost

if TYPE_CHECKING:  # an isolated run's parent loads no backend, and so no torch
    from trtcheck.backends import Backend

COLLECT = "(collect)"
JOURNAL = "results.jsonl"
# The message of a row a full disk kept from running, by the disk's error.
STOPPED = "not run: the run stopped, {}"


@dataclass(frozen=True)
class Collection:
    cases: list[Case]
    problems: list[Row]
    empty_files: list[str]
    shard: dict[str, Any] | None = None  # this shard's description (shard.describe), if sharded


def collect(opts: Options, executor: Executor | WorkerPool | None = None) -> Collection:
    """Import every zoo file in a collector process, each within the run's timeout (the
    executor's, whose first worker it becomes, if given); failures, crashes and hangs at import
    and duplicate case ids become rows."""
    with Collector(opts.timeout) if executor is None else executor.collector() as collector:
        loaded = [collector.load(file) for file in discover.zoo_files(opts.paths)]
    found, problems, empty = [], [], []
    for result in loaded:
        file = result.file
        if isinstance(result, Lost):
            problems.append(_problem(file.rel, status=result.status, stage="import",
                                     message=result.message, location=result.location,
                                     traceback=result.output or None, source=file.source))
            continue
        if isinstance(result, discover.ImportFailure):
            problems.append(_problem(file.rel, stage="import", message=result.message,
                                     location=result.location, traceback=result.traceback,
                                     source=file.source))
            continue
        rejected = [(bad.name, bad.line, bad.message) for bad in result.invalid]
        rejected += [(spec.name, spec.line, message) for spec in result.specs
                     if (message := _unknown_xfail_keys(spec, opts))]
        problems += [_problem(file.rel, case_id=f"{file.rel}::{name}", stage="collect",
                              message=f"invalid @trtcheck.model: {message}",
                              location=f"{file.path}:{line}", source=file.source, line=line)
                     for name, line, message in rejected]
        names = {name for name, _, _ in rejected}
        specs = tuple(s for s in result.specs if s.name not in names)
        if specs:
            found.append(replace(result, specs=specs))
        elif not rejected:
            empty.append(file.rel)
    cases: list[Case] = []
    seen: dict[str, Case] = {}
    for case in expand(found, opts.variants, opts.keyword):
        first = seen.get(case.case_id)
        if first is None:
            seen[case.case_id] = case
            cases.append(case)
            continue
        problems.append(_problem(
            case.file.rel, case_id=case.case_id, stage="collect",
            message=(f"duplicate case id {case.case_id}: declared at {first.file.path}:"
                     f"{first.spec.line} and {case.file.path}:{case.spec.line}"),
            location=f"{case.file.path}:{case.spec.line}", source=case.file.source,
            line=case.spec.line))
    if opts.shard is None:
        return Collection(cases, problems, empty)
    index, count = opts.shard
    durations = shard.case_durations(record.load(opts.baseline)) if opts.baseline else None
    chosen = shard.split(cases, index, count, durations)
    # Collection problems belong to the first shard, so that a merge holds each once.
    return Collection(chosen, problems if index == 1 else [], empty,
                      shard.describe(index, count, cases, chosen))


def _unknown_xfail_keys(spec: ModelSpec, opts: Options) -> str:
    """What is wrong with the model's xfail keys: each must name one of its variants, a
    backend, a profile, or ``backend:profile``."""
    if not isinstance(spec.xfail, Mapping):
        return ""
    known = {*spec.variants, *NAMES, *opts.known_profiles,
             *(f"{b}:{p}" for b in NAMES for p in opts.known_profiles)}

    def names_backend(key: str) -> bool:  # lowering@2.14.0, alone or with a profile
        backend, _, profile = key.partition(":")
        return BackendRef.parse(backend).traits is not None and (
            not profile or profile in opts.known_profiles)

    for key in spec.xfail:
        if key not in known and not names_backend(key):
            return (f"xfail key {key!r} names no variant of this model, backend or profile"
                    f"{did_you_mean(key, known)}")
    return ""


def _problem(rel: str, *, case_id: str | None = None, **fields: object) -> Row:
    return file_row(case_id or f"{rel}::{COLLECT}", rel, COLLECT, **fields)


class Executor(Protocol):
    """What runs the cases: in this process, in one worker, or in several at once."""

    def collector(self) -> Collector: ...
    def run(self, cases: Sequence[Case], on_stage: StageListener | None = None) -> Iterator[Event]: ...
    def one(self) -> OneAtATime: ...
    def close(self) -> None: ...


class OneAtATime(CaseRunner, Protocol):
    """What runs one case at a time after the run (:meth:`Executor.one`), under options that
    :meth:`configure` changes: a reduction's candidates, on the run's worker and backends."""

    opts: Options

    def configure(self, opts: Options, backends: Mapping[str, Any]) -> None: ...


@dataclass
class InProcessExecutor:
    """Runs cases in this process: for debugging (``--no-isolate``); no timeouts."""

    opts: Options
    backends: Mapping[str, Backend]

    def __post_init__(self) -> None:
        from trtcheck.backends import active

        self._active = contextlib.ExitStack()
        self._active.enter_context(active(self.backends))

    def collector(self) -> Collector:
        return Collector(self.opts.timeout)

    def rows(self, case: Case, hook: StageHook = no_hook) -> Iterator[Item]:
        from trtcheck.execution.case import iter_rows

        return iter_rows(case, self.opts, self.backends, hook)

    def run(self, cases: Sequence[Case], on_stage: StageListener | None = None) -> Iterator[Event]:
        return serially(self, cases, on_stage)

    def one(self) -> InProcessExecutor:
        return self

    def configure(self, opts: Options, backends: Mapping[str, Backend]) -> None:
        """Run the next cases under ``opts`` on ``backends``, some of the run's, active already."""
        self.opts, self.backends = opts, backends

    def close(self) -> None:
        self._active.close()


def start(opts: Options, backends: Mapping[str, BackendTraits]) -> Executor:
    """The executor a run uses; collect the cases with it (:func:`collect`), so that an
    isolated run's first worker is the collector's child."""
    if not opts.isolate:
        return InProcessExecutor(opts, backends)
    log = opts.out / "worker.log"
    return WorkerPool(opts, backends, log) if opts.workers > 1 else IsolatedExecutor(opts, backends, log)


class Interrupted(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so that one handler stops the run cleanly."""


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# The options a resumed run must share with the run it resumes: the zoo's paths and every
# setting that changes which rows there are or what they hold (not the output, the workers,
# the timeout or the exit gate).
RESUME_MUST_MATCH = ("paths", *ROW_SETTINGS)


def _previous(opts: Options) -> Record | None:
    """The interrupted run's record, for ``--resume``; :class:`UsageError` when it ran with
    other options, whose rows the two runs would mix."""
    journal = opts.out / JOURNAL
    if not (opts.resume and journal.exists()):
        return None
    try:
        before = record.load(journal)
    except RecordError:
        return None
    now = opts.to_dict()
    for key in RESUME_MUST_MATCH:
        if key in before.options and before.options[key] != now.get(key):
            raise UsageError(
                f"--resume: {journal} was written with {key} = {_shown(before.options[key])}, "
                f"this run has {key} = {_shown(now.get(key))}; resume with the same options, "
                "or leave out --resume to start over")
    return before


def _shown(value: Any) -> str:
    """An option's value, short: a profile list by its names."""
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        return repr([v["name"] for v in value])
    return repr(value)


def environment(opts: Options) -> dict[str, Any]:
    """A record's environment as a run starts: when, the machine's versions, device and commit
    (:func:`trtcheck.execution.probe.describe`), and the GPUs listed."""
    started = datetime.now(timezone.utc)
    env = probe.describe(opts.device, opts.paths[0])
    env["started"] = started.isoformat(timespec="seconds")
    if len(opts.devices) > 1:
        env["devices"] = list(opts.devices)
    return env


def run(opts: Options, backends: Mapping[str, BackendTraits], collection: Collection,
        executor: Executor, on_case: Callable[[Case | None, list[Row]], None],
        on_stage: StageListener | None = None) -> Record:
    """Execute every case on ``executor``, appending rows to the journal as they finish;
    ``on_case`` hears each case's rows, ``on_stage`` each stage as it starts. The executor is
    the caller's to close: it stays open for what follows the run (a reduction's candidates).

    Returns the record, its rows in collection order whatever order the workers finished
    in; an interrupted run's record says so (``Record.interrupted``), its remaining rows
    ``skipped: interrupted``."""
    t0 = time.perf_counter()
    env = environment(opts)
    if collection.shard:
        env["shard"] = collection.shard
    slots = plan(backends, opts.profiles)
    before = _previous(opts)
    previous: dict[RowKey, Row] = {r.key: r for r in before.rows} if before else {}
    analyses: dict[str, Any] = dict(before.analyses) if before else {}
    journal = Journal(opts.out / JOURNAL, env, opts.to_dict(), resume=bool(previous))
    journal.append(collection.problems)
    if collection.problems:
        on_case(None, collection.problems)
    done: dict[str, list[Row]] = {}
    todo: list[Case] = []
    for case in collection.cases:
        keys = [slot.key(case.case_id) for slot in slots]
        if all(k in previous for k in keys):
            done[case.case_id] = [previous[k] for k in keys]
            on_case(case, done[case.case_id])
        else:
            todo.append(case)
    if opts.resume:
        env["resumed"] = {"reused": len(done), "cases": len(collection.cases)}
    partial: dict[str, list[Row]] = {}
    stopped = "interrupted"
    events = executor.run(todo, on_stage)
    try:
        with _sigterm_interrupts():
            for i, item in events:
                case_id = todo[i].case_id
                if item is None:
                    done[case_id] = partial.pop(case_id, [])
                    on_case(todo[i], done[case_id])
                    continue
                if isinstance(item, Analysis):
                    analyses[item.case_id] = item.data
                else:
                    partial.setdefault(case_id, []).append(item)
                journal.append([item])
    except KeyboardInterrupt:
        env["interrupted"] = True  # the reports say INTERRUPTED and ``report`` exits 130
    except OutputError as exc:  # a full disk: what finished is kept for the reports
        stopped = STOPPED.format(exc)
        env["output_error"] = str(exc)
    finally:
        journal.close()
    rows: list[Row] = list(collection.problems)
    for case in collection.cases:
        if case.case_id in done:
            rows += done[case.case_id]
            continue
        finished = partial.get(case.case_id, [])
        have = {r.key for r in finished}
        left = [slot for slot in slots if slot.key(case.case_id) not in have]
        # Not journalled: --resume must run these cases, not take them as finished.
        rows += finished + rows_for(case, left, status=Status.SKIPPED, message=stopped)
    env["duration_s"] = round(time.perf_counter() - t0, 3)
    return Record(env, opts.to_dict(), rows, analyses)


def analyze(opts: Options, collection: Collection) -> Record:
    """Build, export and analyse every case on CPU, in this process: no eager run, no compile."""
    from trtcheck.execution.case import analyze_case

    rows: list[Row] = list(collection.problems)
    analyses: dict[str, Any] = {}
    for case in collection.cases:
        for item in analyze_case(case):
            if isinstance(item, Analysis):
                analyses[item.case_id] = item.data
            else:
                rows.append(item)
    return Record(probe.describe(opts.device, opts.paths[0]), opts.to_dict(), rows, analyses)
