"""``inductor``: ``torch.compile`` on the user's module, the way its users compile it."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch

from trtcheck.backends import graph_breaks
from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.core.traits import TRAITS
from trtcheck.results.rows import Evidence
from trtcheck.tensors import clone

HOW = "torch.compile on the module (backend inductor, default mode)"
# A quoted absolute path in the output code (a kernel's file, a header in the cache): where the
# code lies, not what it does.
_PATH = re.compile(r"""(['"])/[^'"\n]*\1""")


class InductorBackend(Backend):
    traits = TRAITS["inductor"]
    # inductor's compiler: seconds to import (8 on an H200 beside torch's 3)
    preload = ("torch._inductor.compile_fx",)

    def compile(self, job: CompileJob) -> Compiled:
        fn = torch.compile(job.model, backend="inductor")
        # torch.compile is lazy: one call here so compile time lands in the compile stage.
        args, kwargs = clone((job.args, job.kwargs))
        with output_code() as sources, graph_breaks.watch() as breaks, torch.no_grad():
            fn(*args, **kwargs)
        broke = graph_breaks.summary(breaks)
        details: dict[str, object] = {"compiled_as": HOW, "graphs": len(sources),
                                      "graph_breaks": [b.describe() for b in breaks]}
        code = code_hash(sources)
        if code:
            details["code_hash"] = code
            remark = broke
        else:  # every call runs eager's kernels: the row's figures are not inductor's
            remark = f"inductor compiled nothing: {broke or 'Dynamo handed it no graph'}"
        return Compiled(fn, Evidence(notes=[f"inductor: {HOW}"], details=details, remark=remark))


@contextmanager
def output_code() -> Iterator[list[str]]:
    """The output code of every graph inductor compiles or loads from its cache meanwhile.

    Inductor hands each graph's code to ``GraphLowering.save_output_code`` on both paths (a
    compile and a cache hit), where the modules it loads differ between them: a compile loads
    each kernel's module too, and a hit whose module this process loaded already loads none."""
    from torch._inductor.graph import GraphLowering  # inductor's own, loaded when used

    sources: list[str] = []
    previous = GraphLowering.save_output_code

    def save(code: str) -> None:
        sources.append(code)
        if previous is not None:
            previous(code)

    GraphLowering.save_output_code = save
    try:
        yield sources
    finally:
        GraphLowering.save_output_code = previous


def normalized(source: str) -> str:
    """The output code without what differs between a compile and a cache load of the same
    code: comment lines (the source nodes, a kernel's file), quoted absolute paths and the
    cache's folder, blank lines and trailing spaces."""
    where = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if where:
        source = source.replace(where, "<cache>")
    lines = (_PATH.sub(r"\1<path>\1", line.rstrip()) for line in source.splitlines())
    return "\n".join(line for line in lines
                     if line and not line.lstrip().startswith(("#", "//")))


def code_hash(sources: Sequence[str]) -> str | None:
    """A short hash of the output code inductor generated (or took from its cache) for one
    compile, comments and paths left out: two processes with the same hash ran the same
    generated code. None when no graph was compiled."""
    if not sources:
        return None
    return hashlib.sha256("\0".join(sorted(normalized(s) for s in sources)).encode()) \
        .hexdigest()[:16]
