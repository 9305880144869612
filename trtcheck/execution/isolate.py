"""Run each case in a worker subprocess: a crash, hang or memory blow-up costs one case, not the run."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from trtcheck.config.options import Options
from trtcheck.core.traits import NO_BACKEND
from trtcheck.execution.events import Item, StageHook, no_hook
from trtcheck.execution.messages import (
    Configure,
    Done,
    Produced,
    RunCase,
    Stage,
    Started,
    StartMarks,
    Waiting,
)
from trtcheck.process import STARTUP_S, Child, Starter, ended, send_or_start
from trtcheck.results.rows import BackendTraits, Row, plan, rows_for
from trtcheck.status import Status
from trtcheck.zoo.cases import Case
from trtcheck.zoo.collector import Collector

_POLL_S = 0.2
WORKER = "trtcheck.execution.worker"


def _crash_message(returncode: int | None, where: str) -> str:
    return f"worker {ended(returncode)} {where}"


class Timeline:
    """Where a process's wall time goes: marks of when each part began (``time.monotonic``, one
    clock for the parent and its workers), each part lasting until the next mark.

    The parent marks the worker's start (``interpreter``), each case's stages as the worker
    announces them, each row's arrival (``rows``: what follows a slot's last stage), the wait
    between cases (``idle``) and ``teardown``; a worker sends the marks of its own start (its
    imports, the zoo's collection, CUDA's start, the backends)."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, str]] = []

    def mark(self, part: str, at: float | None = None) -> None:
        self.marks.append((time.monotonic() if at is None else at, part))

    def parts(self, end: float) -> dict[str, float]:
        """Seconds per part from the first mark to ``end``, in the order each part first came:
        they add up to ``end`` less the first mark."""
        ordered = sorted(self.marks)
        out: dict[str, float] = {}
        for (at, part), (then, _) in zip(ordered, [*ordered[1:], (end, "")], strict=True):
            out[part] = out.get(part, 0.0) + max(0.0, min(then, end) - min(at, end))
        return out


class IsolatedExecutor:
    """Runs cases one at a time in a reusable worker, replaced after a crash or timeout.

    Its first worker is the zoo collector's child (:meth:`collector`), which then holds the
    zoo's files imported already; with ``start``, one starts at once instead, so that it
    imports torch while the cases are collected. With a ``server``, each worker is forked from
    it where it forks (``trtcheck ab``'s processes)."""

    def __init__(self, opts: Options, backends: Mapping[str, BackendTraits], log_path: Path,
                 env: Mapping[str, str] | None = None, *, start: bool = False,
                 server: Starter | None = None) -> None:
        self.opts = opts
        self.backends = backends
        self.env = env
        self.server = server
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        self.log = log_path.open("a+", encoding="utf-8", errors="replace")
        self.timeline = Timeline()
        self.timeline.mark("interpreter")  # the first worker starts now, or at collection
        self.worker: Child | None = self._spawn() if start else None

    def collector(self) -> Collector:
        """A zoo collector whose last child becomes this executor's worker."""
        return Collector(self.opts.timeout, target=WORKER, log=self.log, env=self.env,
                         adopt=self._adopt, server=self.server)

    def _spawn(self) -> Child:
        self.timeline.mark("interpreter")
        return self._configure(Child(WORKER, log=self.log, env=self.env, server=self.server))

    def _adopt(self, child: Child) -> None:
        """Take ``child`` (the collector's last child, or the worker itself under new options)
        as the worker; one that has gone meanwhile is dropped, and the next case starts
        another."""
        try:
            self._configure(child)
        except OSError:
            child.kill()

    def _configure(self, child: Child) -> Child:
        child.send(Configure(self.opts, self.opts.memory_limit))
        self.worker = child
        return child

    def one(self) -> IsolatedExecutor:
        """This executor: it runs cases one at a time already."""
        return self

    def configure(self, opts: Options, backends: Mapping[str, BackendTraits]) -> None:
        """Run the next cases under ``opts`` on ``backends`` (a reduction's candidates after
        the run) in the same worker, which keeps the backends it has started; the device and
        the memory limit stay the worker's."""
        if (opts.device, opts.memory_limit) != (self.opts.device, self.opts.memory_limit):
            raise ValueError(f"a worker on {self.opts.device} keeps its device and memory limit")
        self.opts, self.backends = opts, backends
        if self.worker is not None:
            worker, self.worker = self.worker, None
            self._adopt(worker)

    def rows(self, case: Case, hook: StageHook = no_hook) -> Iterator[Item]:
        remaining = {slot.key(case.case_id): slot for slot in plan(self.backends, self.opts.profiles)}
        worker = self._send(RunCase(replace(case, spec=case.spec.declared())))
        stage = Stage(NO_BACKEND, None, "start")
        # The case's clock starts when the worker takes it: a fresh worker's own start (Python,
        # torch, trtcheck's modules, its backends) is not the case's time, however busy the machine.
        limit = max(self.opts.timeout, STARTUP_S)
        deadline, started = time.monotonic() + limit, False
        waiting: float | None = None  # since when the worker waits for another process's lock
        while True:
            # the clock stops while the worker waits for the device: another process's time
            left = deadline - time.monotonic() if waiting is None else _POLL_S
            where = f"in stage {stage.stage}" + (f" (backend {stage.backend})"
                                                  if stage.backend != NO_BACKEND else "")
            if left <= 0:
                worker.kill()
                self.worker = None
                yield from rows_for(case, list(remaining.values()), status=Status.TIMEOUT,
                                    stage=stage.stage,
                                    message=f"timed out after {self.opts.timeout:g} s {where}"
                                    if started else f"timed out after {limit:g} s starting the worker")
                return
            try:
                message: Any = worker.receive() if worker.poll(min(left, _POLL_S)) else None
            except (EOFError, OSError):
                rc = worker.kill()
                self.worker = None
                yield from rows_for(case, list(remaining.values()), status=Status.CRASH,
                                    stage=stage.stage, message=_crash_message(rc, where))
                return
            match message:
                case StartMarks(marks):
                    self.timeline.marks += marks
                case Started():
                    deadline, started = time.monotonic() + self.opts.timeout, True
                    self.timeline.mark("case start")
                case Waiting(True):
                    waiting = time.monotonic()
                case Waiting(False) if waiting is not None:
                    deadline += time.monotonic() - waiting
                    waiting = None
                case Stage():
                    stage = message
                    self.timeline.mark(stage.stage)
                    hook(stage.backend, stage.profile, stage.stage)
                case Produced(item):
                    self.timeline.mark("rows")
                    if isinstance(item, Row):
                        remaining.pop(item.key, None)
                    yield item
                case Done(why):  # and why the worker must be replaced (it then exits), or None
                    self.timeline.mark("idle")
                    if why:
                        self.log.write(f"trtcheck: {why}\n")
                        self.log.flush()
                        worker.stop()
                        self.worker = None
                    return

    def run(self, cases: Sequence[Case], on_stage: StageListener | None = None) -> Iterator[Event]:
        """Every case's items, one case after the other (:func:`serially`)."""
        return serially(self, cases, on_stage)

    def _send(self, request: RunCase) -> Child:
        """Hand a case to a live worker, starting a new one if the last has gone."""
        self.worker = send_or_start(self.worker, self._spawn, request)
        return self.worker

    def stop(self) -> None:
        """Stop the worker; the log stays open."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def close(self) -> None:
        """Stop the worker and close the log, removing it when nothing was written to it."""
        self.timeline.mark("teardown")
        self.stop()
        self.log.close()
        if self.log_path.is_file() and self.log_path.stat().st_size == 0:
            self.log_path.unlink(missing_ok=True)


# Hears (case, backend, profile, stage) as each stage of a case starts.
StageListener = Callable[[Case, str, str | None, str], None]


def hook_for(case: Case, on_stage: StageListener | None) -> StageHook:
    """The stage hook of one case that tells ``on_stage``, or none."""
    if on_stage is None:
        return no_hook
    return lambda backend, profile, stage: on_stage(case, backend, profile, stage)


Event = tuple[int, Item | None]  # (index of the case, one of its items, or None when it is done)


class CaseRunner(Protocol):
    def rows(self, case: Case, hook: StageHook = ...) -> Iterator[Item]: ...


def serially(executor: CaseRunner, cases: Sequence[Case],
             on_stage: StageListener | None) -> Iterator[Event]:
    """Each case's items, one case at a time, each case followed by ``(index, None)``."""
    for i, case in enumerate(cases):
        for item in executor.rows(case, hook_for(case, on_stage)):
            yield i, item
        yield i, None


class Schedule:
    """Which case a free worker takes next: one of the zoo file it has imported while that file
    has cases left, else the first of a file no other worker is on, else the first left."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.files = files
        self.pending = list(range(len(files)))
        self.on_file: dict[int, Path] = {}
        self.lock = threading.Lock()

    def take(self, worker: int) -> int | None:
        """The index of the next case for ``worker``, or None when none is left."""
        with self.lock:
            if not self.pending:
                return None
            mine = self.on_file.get(worker)
            others = {f for w, f in self.on_file.items() if w != worker}
            pick = next((i for i in self.pending if self.files[i] == mine), None)
            if pick is None:
                pick = next((i for i in self.pending if self.files[i] not in others), self.pending[0])
            self.pending.remove(pick)
            self.on_file[worker] = self.files[pick]
            return pick


class WorkerPool:
    """Runs cases on several isolated workers at once, each driven by a thread of its own.

    On CUDA each worker owns one of the listed GPUs, so no two cases are timed on one GPU at
    once; on CPU the workers split the cores between them. Cases go out by :class:`Schedule`."""

    def __init__(self, opts: Options, backends: Mapping[str, BackendTraits], log_path: Path) -> None:
        # one worker per listed GPU; on one device, that many workers share it
        devices = opts.devices if len(opts.devices) > 1 else opts.devices * opts.workers
        env = None
        if not opts.device.startswith("cuda") and "OMP_NUM_THREADS" not in os.environ:
            env = {**os.environ, "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // len(devices)))}
        # The first worker is the zoo collector's child; the others import torch meanwhile.
        self.executors = [IsolatedExecutor(replace(opts, devices=(d,)), backends, log_path,
                                           env, start=i > 0)
                          for i, d in enumerate(devices)]
        self.stopping = False
        self.failure: BaseException | None = None

    def collector(self) -> Collector:
        """A zoo collector whose last child becomes the first worker."""
        return self.executors[0].collector()

    def one(self) -> IsolatedExecutor:
        """The first worker's executor, the others' workers stopped: after the run, what runs
        a case at a time (a reduction's candidates)."""
        for executor in self.executors[1:]:
            executor.stop()
        return self.executors[0]

    def run(self, cases: Sequence[Case],
            on_stage: StageListener | None = None) -> Iterator[Event]:
        """Every case's items as they come, from all workers at once, then ``(index, None)``;
        ``on_stage`` hears each stage start (from the workers' threads)."""
        events: queue.Queue[Event | None] = queue.Queue()
        schedule = Schedule([case.file.path for case in cases])

        def work(me: int, executor: IsolatedExecutor) -> None:
            try:
                while not self.stopping and (i := schedule.take(me)) is not None:
                    for item in executor.rows(cases[i], hook_for(cases[i], on_stage)):
                        if self.stopping:
                            return
                        events.put((i, item))
                    events.put((i, None))
            except BaseException as exc:
                if not self.stopping:
                    self.failure = exc
            finally:
                events.put(None)

        threads = [threading.Thread(target=work, args=(me, ex), daemon=True)
                   for me, ex in enumerate(self.executors)]
        for t in threads:
            t.start()
        running = len(threads)
        while running:
            try:
                event = events.get(timeout=_POLL_S)  # a timeout, so that Ctrl-C gets through
            except queue.Empty:
                continue
            if event is None:
                running -= 1
            else:
                yield event
        if self.failure is not None:
            raise self.failure

    def close(self) -> None:
        self.stopping = True
        for executor in self.executors:  # every worker stopped before the shared log may go
            executor.stop()
        for executor in self.executors:
            executor.close()
