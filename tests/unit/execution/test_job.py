"""What follows a run (a reduction): it gets the run's own executor, still open, and never
follows a run that was stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import FIXTURES
from trtcheck.config import cascade
from trtcheck.execution import job
from trtcheck.results.rows import Row
from trtcheck.zoo.cases import Case


class _Watcher:
    """Hears the job; with ``stop``, stops it as Ctrl-C would, after its case."""

    def __init__(self, stop: bool) -> None:
        self.stop = stop

    def collection(self, collection: Any) -> None:
        pass

    def case(self, case: Case | None, rows: list[Row]) -> None:
        if self.stop:
            raise KeyboardInterrupt

    def stage(self, case: Case, backend: str, profile: str | None, stage: str) -> None:
        pass

    def __enter__(self) -> _Watcher:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.mark.parametrize("stop", [False, True])
def test_after_gets_the_open_executor_unless_the_run_was_stopped(tmp_path: Path, stop: bool) -> None:
    opts = cascade.resolve((FIXTURES,), keyword="seed_rope", device="cpu",
                           backends=("eager",), isolate=False, out=tmp_path)
    seen: list[list[tuple[str, str]]] = []

    def after(opts: Any, backends: Any, rec: Any, collection: Any, executor: Any) -> None:
        case = collection.cases[0]
        seen.append([(r.backend, r.status.value) for r in executor.rows(case)
                     if isinstance(r, Row)])

    rec = job.run_job(opts, lambda c: _Watcher(stop), base=None, after=after)
    assert rec.interrupted is stop
    assert seen == ([] if stop else [[("eager", "pass")]])
