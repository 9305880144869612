"""``benchmarks/bench_converter_suite.py`` is honest about what it could not run: a suite folder
whose name is not a Python identifier imports all the same, every test module that could not be
imported is named and counted, and with no case run it exits non-zero naming why."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.bench_converter_suite import case_ids, import_suite, verdict


@pytest.fixture
def suite(tmp_path: Path) -> Iterator[Path]:
    """A suite in a folder named like an extracted release (``suite-2.13``): a harness, a test
    module importing it relatively, and one importing a package that is not installed."""
    folder = tmp_path / "suite-2.13"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "harness.py").write_text("import unittest\n\nclass Case(unittest.TestCase):\n    pass\n")
    (folder / "test_add.py").write_text(
        "from .harness import Case\n\nclass TestAdd(Case):\n    def test_one(self):\n        pass\n\n"
        "    def test_two(self):\n        pass\n")
    (folder / "test_needs.py").write_text("import parameterized_not_installed_here\n")
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_a_suite_folder_with_a_dot_imports_and_unimportable_modules_are_named(suite: Path) -> None:
    package, unimportable = import_suite(suite)
    assert package == "suite_2_13"
    assert unimportable == {"test_needs.py": "ModuleNotFoundError: No module named "
                                             "'parameterized_not_installed_here'"}
    assert case_ids(suite, package, unimportable) == ["suite_2_13.test_add.TestAdd.test_one",
                                                      "suite_2_13.test_add.TestAdd.test_two"]


def test_the_summary_counts_the_modules_not_imported_and_no_case_run_exits_non_zero() -> None:
    missing = {"test_a.py": "ModuleNotFoundError: No module named 'parameterized'",
               "test_b.py": "ModuleNotFoundError: No module named 'parameterized'",
               "test_utils.py": "ImportError: attempted relative import beyond top-level package"}
    code, summary = verdict(0, 0, 0, missing)
    assert code == 1
    assert summary.splitlines()[0] == "test modules not imported: 3"
    assert summary.splitlines()[-1] == ("no case ran: no case was found: 3 test modules could not be "
                                        "imported (2 of them: ModuleNotFoundError: No module named "
                                        "'parameterized')")
    code, summary = verdict(0, 0, 4, {})
    assert (code, summary) == (1, "no case ran: every case was skipped")
    code, summary = verdict(0, 0, 0, {})
    assert code == 1 and "holds no test case" in summary
    code, summary = verdict(9, 10, 12, {"test_utils.py": "ImportError: x"})
    assert code == 0
    assert summary.splitlines() == ["test modules not imported: 1", "  test_utils.py: ImportError: x",
                                    "pass rate: 90.0% (9 of 10)"]
