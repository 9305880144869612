"""The worker process: runs cases sent by :mod:`trtcheck.isolate`, reporting stages and rows.

Started as ``python -m trtcheck.worker REQUEST_FD REPLY_FD PARENT_PID``; speaks pickled messages over
two pipes so that whatever the zoo prints cannot corrupt the protocol.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from collections.abc import Iterable
from multiprocessing.connection import Connection

from trtcheck import backends, discover
from trtcheck.cases import Case
from trtcheck.discover import ZooFile
from trtcheck.execute import Item, iter_rows
from trtcheck.options import Options
from trtcheck.rows import plan, rows_for
from trtcheck.status import Status
from trtcheck.zoo import ModelSpec


def serve(requests: Connection, replies: Connection) -> None:
    opts: Options
    opts, names, memory_limit = requests.recv()
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    if opts.device.startswith("cuda:"):  # CUDA events and streams then belong to this GPU
        import torch

        torch.cuda.set_device(opts.device)
    chosen = {n: backends.get(n) for n in names}
    loaded: dict[str, tuple[ModelSpec, ...] | discover.ImportFailure] = {}
    while True:
        try:
            root, path, name, variant = requests.recv()
        except EOFError:
            return
        file = ZooFile(root, path)
        if str(path) not in loaded:
            result = discover.load(file)
            loaded[str(path)] = result.specs if isinstance(result, discover.Discovered) else result
        found = loaded[str(path)]
        if isinstance(found, discover.ImportFailure):
            spec = ModelSpec(name=name, factory=lambda v: None, variants=(variant,))
            items: Iterable[Item] = rows_for(
                Case(file, spec, variant), plan(chosen, opts.profiles), status=Status.ERROR,
                stage="import", message=found.message, location=found.location,
                traceback=found.traceback)
        else:
            spec = next(s for s in found if s.name == name)
            items = iter_rows(Case(file, spec, variant), opts, chosen,
                              hook=lambda b, p, s: replies.send(("stage", b, p, s)))
        for item in items:
            replies.send(("item", item))
        replies.send(("done",))


def _die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this worker when trtcheck dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def main(argv: list[str]) -> int:
    _die_with_parent(int(argv[2]))
    requests = Connection(int(argv[0]), writable=False)
    replies = Connection(int(argv[1]), readable=False)
    serve(requests, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
