"""The worker process: runs the cases :mod:`trtcheck.execution.isolate` sends, reporting stages and rows.

A child of :mod:`trtcheck.process`: the first request is ``(options, memory limit)``, then each is
``(root, path, model, variant)``; the replies are ``("stage", backend, profile, stage)``,
``("item", row or analysis)``, ``("import-failed", ImportFailure)`` when the zoo file the parent
imported fails to import here, and ``("done", why the worker must be replaced, or None)``.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Mapping

from trtcheck import backends
from trtcheck.backends import Backend
from trtcheck.config.options import Options
from trtcheck.execution.case import iter_rows
from trtcheck.measure import memory
from trtcheck.process import Parent
from trtcheck.zoo import discover
from trtcheck.zoo.api import ModelSpec
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile


def serve(parent: Parent) -> None:
    opts: Options
    opts, memory_limit = parent.receive()
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    if opts.device.startswith("cuda:"):  # CUDA events and streams then belong to this GPU
        import torch

        torch.cuda.set_device(opts.device)
    chosen = backends.instantiate(opts)
    with backends.active(chosen):
        _serve_cases(parent, opts, chosen)


def _serve_cases(parent: Parent, opts: Options, chosen: Mapping[str, Backend]) -> None:
    baseline = memory.in_use(opts.device)
    loaded: dict[str, tuple[ModelSpec, ...] | discover.ImportFailure] = {}
    while True:
        try:
            root, path, name, variant = parent.receive()
        except EOFError:
            return
        file = ZooFile(root, path)
        if str(path) not in loaded:
            result = discover.load(file)
            loaded[str(path)] = result.specs if isinstance(result, discover.Discovered) else result
        found = loaded[str(path)]
        if isinstance(found, discover.ImportFailure):  # the parent imported it; its rows say so
            parent.send(("import-failed", found))
            parent.send(("done", None))
            continue
        spec = next(s for s in found if s.name == name)
        items = iter_rows(Case(file, spec, variant), opts, chosen,
                          hook=lambda b, p, s: parent.send(("stage", b, p, s)))
        for item in items:
            parent.send(("item", item))
        del items
        memory.release(opts.device)
        now = memory.in_use(opts.device)
        if not memory.near_baseline(baseline, now):
            left = memory.mib((now or 0) - (baseline or 0))
            parent.send(("done", f"worker replaced: {left} of GPU memory still allocated "
                                  f"after {Case(file, spec, variant).case_id}"))
            return
        parent.send(("done", None))


def main(argv: list[str]) -> int:
    serve(Parent(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
