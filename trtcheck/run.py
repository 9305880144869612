"""A whole run: collect cases, execute each, journal rows as they finish, build the record."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from types import FrameType
from typing import Any, Protocol

from trtcheck import discover, environment, record
from trtcheck.backends import Backend
from trtcheck.cases import Case, expand
from trtcheck.errors import RecordError, did_you_mean
from trtcheck.execute import Item, StageHook, analyze_case, iter_rows, no_hook
from trtcheck.isolate import IsolatedExecutor
from trtcheck.options import BACKENDS, Options
from trtcheck.record import Journal, Record
from trtcheck.rows import NO_BACKEND, NO_PROFILE, NO_VARIANT, Analysis, Row, RowKey, plan, rows_for
from trtcheck.status import Status
from trtcheck.zoo import ModelSpec

COLLECT = "(collect)"
JOURNAL = "results.jsonl"


@dataclass(frozen=True)
class Collection:
    cases: list[Case]
    problems: list[Row]
    empty_files: list[str]


def collect(opts: Options) -> Collection:
    """Import every zoo file; failures and duplicate case ids become error rows."""
    found, problems, empty = [], [], []
    for file in discover.zoo_files(opts.paths):
        result = discover.load(file)
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
    return Collection(cases, problems, empty)


def _unknown_xfail_keys(spec: ModelSpec, opts: Options) -> str:
    """What is wrong with the model's xfail keys: each must name one of its variants, a
    backend, a profile, or ``backend:profile``."""
    if not isinstance(spec.xfail, Mapping):
        return ""
    known = {*spec.variants, *BACKENDS, *opts.known_profiles,
             *(f"{b}:{p}" for b in BACKENDS for p in opts.known_profiles)}
    for key in spec.xfail:
        if key not in known:
            return (f"xfail key {key!r} names no variant of this model, backend or profile"
                    f"{did_you_mean(key, known)}")
    return ""


def _problem(rel: str, *, case_id: str | None = None, **fields: object) -> Row:
    return Row(case_id or f"{rel}::{COLLECT}", rel, COLLECT, NO_VARIANT, NO_BACKEND,
               NO_PROFILE, status=Status.ERROR, **fields)  # type: ignore[arg-type]


class Executor(Protocol):
    def rows(self, case: Case, hook: StageHook = ...) -> Iterator[Item]: ...
    def close(self) -> None: ...


@dataclass
class InProcessExecutor:
    """Runs cases in this process: for debugging (``--no-isolate``); no timeouts."""

    opts: Options
    backends: Mapping[str, Backend]

    def rows(self, case: Case, hook: StageHook = no_hook) -> Iterator[Item]:
        return iter_rows(case, self.opts, self.backends, hook)

    def close(self) -> None:
        return None


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


def _previous(opts: Options) -> Record | None:
    journal = opts.out / JOURNAL
    if not (opts.resume and journal.exists()):
        return None
    try:
        return record.load(journal)
    except RecordError:
        return None


def run(opts: Options, backends: Mapping[str, Backend], collection: Collection,
        on_case: Callable[[Case | None, list[Row]], None],
        on_stage: Callable[[Case, str, str | None, str], None] | None = None,
        ) -> tuple[Record, bool]:
    """Execute every case, appending rows to the journal as they finish; ``on_case`` hears
    each case's rows, ``on_stage`` each stage as it starts.

    Returns the record and whether the run was interrupted (remaining rows are then
    ``skipped: interrupted``)."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    env = environment.describe(opts.device, opts.paths[0])
    env["started"] = started.isoformat(timespec="seconds")
    slots = plan(backends, opts.profiles)
    before = _previous(opts)
    previous: dict[RowKey, Row] = {r.key: r for r in before.rows} if before else {}
    analyses: dict[str, Any] = dict(before.analyses) if before else {}
    journal = Journal(opts.out / JOURNAL, env, opts.to_dict(), resume=bool(previous))
    executor: Executor = (IsolatedExecutor(opts, backends, opts.out / "worker.log")
                          if opts.isolate else InProcessExecutor(opts, backends))
    rows: list[Row] = list(collection.problems)
    journal.append(collection.problems)
    if collection.problems:
        on_case(None, collection.problems)
    interrupted = False
    pending = list(collection.cases)
    current: list[Row] = []
    try:
        with _sigterm_interrupts():
            while pending:
                case, current = pending[0], []
                keys = [slot.key(case.case_id) for slot in slots]
                if all(k in previous for k in keys):
                    current = [previous[k] for k in keys]
                else:
                    hook = (no_hook if on_stage is None else
                            lambda b, p, s, c=case: on_stage(c, b, p, s))  # type: ignore[misc]
                    for item in executor.rows(case, hook):
                        journal.append([item])
                        if isinstance(item, Analysis):
                            analyses[item.case_id] = item.data
                        else:
                            current.append(item)
                pending.pop(0)
                rows += current
                on_case(case, current)
    except KeyboardInterrupt:
        interrupted = True
        env["interrupted"] = True  # the reports say INTERRUPTED and ``report`` exits 130
        for i, case in enumerate(pending):
            finished = current if i == 0 else []
            have = {r.key for r in finished}
            todo = [slot for slot in slots if slot.key(case.case_id) not in have]
            # Not journalled: --resume must run these cases, not take them as finished.
            skipped = rows_for(case, todo, status=Status.SKIPPED, message="interrupted")
            rows += finished + skipped
    finally:
        executor.close()
        journal.close()
    env["duration_s"] = round(time.perf_counter() - t0, 3)
    return Record(env, opts.to_dict(), rows, analyses), interrupted


def analyze(opts: Options, collection: Collection) -> Record:
    """Build, export and analyse every case on CPU, in this process: no eager run, no compile."""
    rows: list[Row] = list(collection.problems)
    analyses: dict[str, Any] = {}
    for case in collection.cases:
        for item in analyze_case(case):
            if isinstance(item, Analysis):
                analyses[item.case_id] = item.data
            else:
                rows.append(item)
    return Record(environment.describe(opts.device, opts.paths[0]), opts.to_dict(), rows, analyses)
