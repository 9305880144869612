"""The zoo's pytest nodes: a zoo file, and one item per row in it, named as pytest names a
parametrized test, so that its node id is one a person can type and pytest's ``--lf``,
``--ff`` and JUnit XML read as they read any other: ``models/rope.py::rope[complex64-lowering]``,
with ``:PROFILE`` after the backend for a profile other than ``default``
(``models/rope.py::rope[complex64-lowering:truncate_double]``). A node id keeps its brackets
at its end: pytest reads the brackets as the parameters of the last name, and a case id's
``rope[complex64]`` before another ``::`` part would be read wrong. A file's problems (an
import that failed, a bad declaration) are items of the file, which fail."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from trtcheck.core.traits import NO_BACKEND, BackendRef
from trtcheck.pytest_plugin.zoo import Zoo
from trtcheck.results.rows import NO_PROFILE, Row, RowKey, Slot
from trtcheck.zoo.cases import Case

MARK = "trtcheck"  # every row's marker, beside its backend's name
SHOWN_BARE = (NO_PROFILE, "default")  # profiles an item's name leaves out


def item_name(case: Case, slot: Slot) -> str:
    """``rope[complex64-lowering]``, ``rope[complex64-lowering:truncate_double]`` for a profile
    other than the default."""
    profile = slot.profile_name
    backend = slot.backend if profile in SHOWN_BARE else f"{slot.backend}:{profile}"
    return f"{case.spec.name}[{case.variant}-{backend}]"


def case_scope(nodeid: str) -> str:
    """The part of a row's node id that names its case (``models/rope.py::rope[complex64``):
    a variant holds no ``-``. The node id of a file's problem is its own."""
    head, bracket, params = nodeid.rpartition("[")
    return head + bracket + params.partition("-")[0] if bracket else nodeid


class ZooFileNode(pytest.File):
    """A zoo file as pytest's node (:class:`trtcheck.zoo.discover.ZooFile` is the file found):
    its problems' items, then each case's rows, every backend under every profile it takes."""

    def __init__(self, *, zoo: Zoo, **kw: Any) -> None:
        super().__init__(**kw)
        self.zoo = zoo

    def _item(self, name: str, **kw: Any) -> RowItem:
        # The node id given whole, so that pytest reads its brackets as it reads a parametrized
        # test's, here and from the command line or the --lf cache.
        return RowItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}",
                                   zoo=self.zoo, **kw)

    def collect(self) -> Iterator[pytest.Item]:
        for row in self.zoo.problems(self.path):
            yield self._item(row.case_id.partition("::")[2] or row.case_id, key=row.key,
                             problem=row)
        for case in self.zoo.cases(self.path):
            for slot in self.zoo.slots:
                yield self._item(item_name(case, slot), key=slot.key(case.case_id), case=case)


class RowItem(pytest.Item):
    """One row. Running it reads the row from its case's run (the first of the case's items
    runs the case); the report's outcome is the row's status
    (:func:`trtcheck.pytest_plugin.outcome.report_row`)."""

    def __init__(self, *, zoo: Zoo, key: RowKey, case: Case | None = None,
                 problem: Row | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.zoo, self.key, self.case, self.problem = zoo, key, case, problem
        self.index = zoo.items  # its place in the collection, which the record's rows keep
        zoo.items += 1
        self.row: Row | None = None
        self.analysis: Any = None  # the case's analysis, on the item that ran the case
        self.add_marker(MARK)
        if key.backend != NO_BACKEND:
            self.add_marker(BackendRef.parse(key.backend).name)
        if case is not None:
            self.extra_keyword_matches.update(case.spec.tags)  # -k matches a tag, as trtcheck's

    def runtest(self) -> None:
        if self.problem is not None:
            self.row = self.problem
            return
        assert self.case is not None
        self.row, self.analysis = self.zoo.result(self.case, self.key)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.case.spec.line if self.case else self.problem.line if self.problem else None
        return self.path, (line - 1 if line else None), self.name
