"""The worker process: runs the cases :mod:`trtcheck.execution.isolate` sends, reporting stages and rows.

A child of :mod:`trtcheck.process`. It may collect zoo files first, answering the zoo
collector's :class:`~trtcheck.zoo.collector.LoadFile` requests
(:func:`trtcheck.zoo.collector.serve`), so that the files it runs are imported once. Then the
requests (:mod:`trtcheck.execution.messages`) are :class:`Configure` and, for each case,
:class:`RunCase`; further :class:`Configure` between cases change the backends, profiles or
timing of the cases after them (a reduction's candidates after the run), keeping the device,
the memory limit and every backend already started, so that a lowering host starts once. The
replies to a case are :class:`Started`, :class:`Stage` as each stage starts, :class:`Waiting`
(True, then False) around a wait for another process's device lock, :class:`Produced` for each
row or analysis and :class:`Done` (why the worker must be replaced, or None); once, before the
first, :class:`StartMarks`: when each part of the worker's own start began
(``time.monotonic``), which the parent's timeline places among its own. A case's file is
imported here once (:func:`trtcheck.execution.case.in_full`); one that fails to import here
gives the case's error rows. When the parent has gone, the worker exits at
once, as the kill after :meth:`trtcheck.process.Child.stop`'s grace would end it anyway.
"""

from __future__ import annotations

import contextlib
import resource
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import NoReturn

from trtcheck import backends
from trtcheck.backends import Backend
from trtcheck.config.options import Options
from trtcheck.execution.case import iter_rows
from trtcheck.execution.messages import (
    Configure,
    Done,
    Marks,
    Produced,
    RunCase,
    Stage,
    Started,
    StartMarks,
    Waiting,
)
from trtcheck.measure import device_lock, memory
from trtcheck.process import Parent, answer, exit_now, freeze_imports
from trtcheck.program.export import warm_up
from trtcheck.zoo import collector


def serve(parent: Parent, request: Configure, marks: Marks) -> None:
    """Run cases with the options of ``request`` until the parent has gone."""
    opts, memory_limit = request.options, request.memory_limit
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    if opts.device.startswith("cuda"):
        import torch

        marks.append((time.monotonic(), "cuda start"))
        if opts.device.startswith("cuda:"):  # CUDA events and streams then belong to this GPU
            torch.cuda.set_device(opts.device)
        # The context and the allocator now, so that the first case's build is not charged
        # with them.
        torch.ones(1, device=opts.device)
        torch.cuda.synchronize(opts.device)
    marks.append((time.monotonic(), "backends"))
    device_lock.listen(lambda waiting: parent.send(Waiting(waiting)))
    with contextlib.ExitStack() as started:
        kept: dict[str, Backend] = {}

        def chosen(wanted: Options) -> dict[str, Backend]:
            """The backends ``wanted`` names: those already started, the others started now."""
            new = [name for name in wanted.backends if name not in kept]
            if new:
                made = backends.instantiate(replace(wanted, backends=tuple(new)))
                started.enter_context(backends.active(made))
                kept.update(made)
            return {name: kept[name] for name in wanted.backends}

        first = chosen(opts)
        if not (opts.figures_only and all(b.traits.from_module for b in first.values())):
            warm_up()  # for the export, which such a process leaves out but for dynamic shapes
        marks.append((time.monotonic(), "idle"))
        parent.send(StartMarks(marks))
        _serve_cases(parent, opts, chosen)
    exit_now()  # the parent has gone, the backends are released


def _serve_cases(parent: Parent, opts: Options,
                 chosen: Callable[[Options], Mapping[str, Backend]]) -> None:
    current = chosen(opts)
    baseline = memory.in_use(opts.device)

    def configure(request: Configure) -> None:
        nonlocal opts, current
        opts = request.options
        current = chosen(opts)

    def run(request: RunCase) -> bool:
        """Run the case; True when the worker must be replaced after it."""
        case = request.case
        parent.send(Started())  # the case's clock starts now, not at the worker's own start
        items = iter_rows(case, opts, current, hook=lambda b, p, s: parent.send(Stage(b, p, s)))
        for item in items:
            parent.send(Produced(item))
        del items
        memory.release(opts.device)
        now = memory.in_use(opts.device)
        if not memory.near_baseline(baseline, now):
            left = memory.mib((now or 0) - (baseline or 0))
            parent.send(Done(f"worker replaced: {left} of GPU memory still allocated "
                             f"after {case.case_id}"))
            return True
        parent.send(Done(None))
        return False

    answer(parent, {Configure: configure, RunCase: run})


def main(argv: list[str]) -> NoReturn:
    # STARTED: when this interpreter began (trtcheck.process.START); up to now, its imports
    marks: Marks = [(t, "imports") for t in (globals().get("STARTED"),) if t is not None]
    marks.append((time.monotonic(), "collection"))
    freeze_imports()
    parent = Parent(argv)
    request = collector.serve(parent)
    if isinstance(request, Configure):
        serve(parent, request, marks)
    exit_now()


if __name__ == "__main__":
    main(sys.argv[1:])
