"""The isolated executor's worker after the run: reused under other options (a reduction's
candidates), in the same process while it lives, in a new one with those options once it has
gone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import FIXTURES
from trtcheck.config import cascade
from trtcheck.core.traits import traits_table
from trtcheck.execution.isolate import IsolatedExecutor
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.zoo.cases import Case


def _rows(executor: IsolatedExecutor, case: Case) -> list[tuple[str, str]]:
    return [(item.backend, item.status.value) for item in executor.rows(case)
            if isinstance(item, Row)]


def test_the_worker_runs_later_cases_under_new_options_in_the_same_process(tmp_path: Path) -> None:
    opts = cascade.resolve((FIXTURES,), keyword="seed_rope", device="cpu",
                           backends=("eager", "emulate"), out=tmp_path)
    executor = IsolatedExecutor(opts, traits_table(opts.backends), tmp_path / "worker.log")
    try:
        case = collect(opts, executor).cases[0]
        both = _rows(executor, case)
        assert [backend for backend, _ in both] == ["eager", "emulate"]
        assert executor.worker is not None
        pid = executor.worker.proc.pid

        one = replace(opts, backends=("emulate",))
        executor.configure(one, traits_table(one.backends))
        assert _rows(executor, case) == both[1:]
        assert executor.worker is not None and executor.worker.proc.pid == pid

        executor.worker.kill()  # gone between cases: the next starts another, with these options
        executor.configure(opts, traits_table(opts.backends))
        assert executor.worker is None
        assert _rows(executor, case) == both
        assert executor.worker is not None and executor.worker.proc.pid != pid

        with pytest.raises(ValueError, match="keeps its device"):
            executor.configure(replace(opts, devices=("cuda",)), traits_table(opts.backends))
    finally:
        executor.close()
