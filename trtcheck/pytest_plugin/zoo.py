"""The zoo as one pytest process runs it (the only one, or each pytest-xdist worker): trtcheck's
collection, whose child becomes the process's trtcheck worker, and each case run there, on the
run's executor, when the first of its selected rows is asked for: its eager reference once for
all of them, and only the backends and profiles of the rows pytest selected."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from trtcheck.config.options import Options
from trtcheck.errors import InternalError
from trtcheck.execution import job
from trtcheck.execution.run import Collection, Executor, collect, start
from trtcheck.results.rows import Analysis, Row, RowKey, Slot, plan
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import zoo_files


def case_options(opts: Options, keys: Iterable[RowKey]) -> Options:
    """``opts`` narrowed to the backends and profiles of ``keys``, one case's selected rows; a
    case whose selected rows all ignore profiles keeps the run's."""
    keys = list(keys)
    backends = {k.backend for k in keys}
    profiles = {k.profile for k in keys}
    return replace(opts, backends=tuple(b for b in opts.backends if b in backends),
                   profiles=tuple(p for p in opts.profiles if p.name in profiles) or opts.profiles)


class Zoo:
    """Collects once, on first need, and runs each case once; ``opts`` are this process's (one
    worker, on one device)."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.backends: Mapping[str, Any] = job.loaded(opts)
        self.slots: list[Slot] = plan(self.backends, opts.profiles)
        self._executor: Executor | None = None
        self._collection: Collection | None = None
        self._cases: dict[Path, list[Case]] = {}
        self._problems: dict[Path, list[Row]] = {}
        self.wanted: dict[str, set[RowKey]] = {}  # each case's selected rows
        self.rows: dict[RowKey, Row] = {}  # rows run and not yet read
        self.analyses: dict[str, Any] = {}
        self.items = 0  # items made so far: each item's place in the collection

    def collection(self) -> Collection:
        """trtcheck's collection of the zoo, made the first time it is asked for."""
        if self._collection is None:
            self._executor = start(self.opts, self.backends)
            self._collection = collect(self.opts, self._executor)
            first = {}
            for file in zoo_files(self.opts.paths):
                first.setdefault(file.rel, file.path)
            for case in self._collection.cases:
                self._cases.setdefault(case.file.path, []).append(case)
            for row in self._collection.problems:
                self._problems.setdefault(first[row.file], []).append(row)
        return self._collection

    def declares(self, path: Path) -> bool:
        """Whether ``path`` is a zoo file with rows: cases, or problems (an import that
        failed, a bad declaration); a file that declares no model is left to pytest."""
        path = path.resolve()
        self.collection()
        return path in self._cases or path in self._problems

    def cases(self, path: Path) -> list[Case]:
        return self._cases.get(path.resolve(), [])

    def problems(self, path: Path) -> list[Row]:
        return self._problems.get(path.resolve(), [])

    def select(self, keys: Iterable[RowKey]) -> None:
        """The rows pytest will run (after ``-k``, ``-m``, ``--lf``): a case runs only these."""
        self.wanted.clear()
        for key in keys:
            self.wanted.setdefault(key.case_id, set()).add(key)

    def result(self, case: Case, key: RowKey) -> tuple[Row, Any]:
        """The row of ``key``, running its case first unless it has run, and the case's analysis
        when this is the first of its rows read."""
        if key not in self.rows:
            self._run(case, self.wanted.get(case.case_id) or {key})
        row = self.rows.pop(key, None)
        if row is None:
            raise InternalError(f"trtcheck's worker gave no row for {key}")
        return row, self.analyses.pop(case.case_id, None)

    def _run(self, case: Case, keys: set[RowKey]) -> None:
        assert self._executor is not None, "a case runs after the collection"
        opts = case_options(self.opts, keys)
        one = self._executor.one()
        if one.opts != opts:
            one.configure(opts, {b: self.backends[b] for b in opts.backends})
        for item in one.rows(case):
            if isinstance(item, Analysis):
                self.analyses[item.case_id] = item.data
            elif item.key in keys:
                self.rows[item.key] = item

    def close(self) -> None:
        """Stop the worker (the executor's log kept only when something was written to it)."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None
