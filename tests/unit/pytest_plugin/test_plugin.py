"""The pytest plugin in-process: inert without --trtcheck, its options, the status mapping, the
row carried across pytest-xdist's serialization, node ids and the case's selected slots. The
runs that start trtcheck's worker are tests/e2e/test_pytest_plugin.py's."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import REPO
from trtcheck.config.options import Options
from trtcheck.config.settings import PYTEST, for_command
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.core.traits import Kind
from trtcheck.pytest_plugin import options, outcome
from trtcheck.pytest_plugin.nodes import case_scope, item_name
from trtcheck.pytest_plugin.zoo import case_options
from trtcheck.render.text import KIND_NOTES, NO_ENGINE_NOTE
from trtcheck.results.record import read_row
from trtcheck.results.rows import NO_PROFILE, Evidence, Row, RowKey, Slot
from trtcheck.status import Status
from trtcheck.zoo.api import ModelSpec
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile

pytest_plugins = ["pytester"]
# The inner runs leave out hypothesis's plugin, whose summary imports hypothesis (seconds).
QUIET = ("-p", "no:hypothesispytest", "-p", "no:cacheprovider")

ZOO = """
import torch
import trtcheck

@trtcheck.model(variants=("float32",))
def affine(variant):
    return torch.nn.Identity(), (torch.ones(2),)
"""


def test_without_the_flag_a_zoo_collects_nothing_and_nothing_is_written(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{"models/affine": ZOO})
    result = pytester.runpytest_inprocess("models/", *QUIET)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.no_fnmatch_line("*trtcheck:*")  # no header line, no summary
    assert not (pytester.path / "trtcheck-report").exists()


def test_every_setting_of_the_pytest_command_is_an_option_and_a_bad_value_is_a_usage_error(
        pytester: pytest.Pytester) -> None:
    shown = pytester.runpytest_inprocess("--help", *QUIET).stdout.str()
    page = (REPO / "docs" / "pytest.md").read_text(encoding="utf-8")
    for s in for_command(PYTEST):
        for flag in options.flags(s):
            assert flag in shown, flag
            assert f"`{flag}`" in page, f"docs/pytest.md does not list {flag}"
    assert "--trtcheck-keyword" not in shown and "--trtcheck-workers" not in shown  # pytest's own
    pytester.makepyfile(**{"models/affine": ZOO})
    bad = pytester.runpytest_inprocess("--trtcheck", "models/", "--trtcheck-backend", "eagr",
                                       "--trtcheck-device", "cpu", *QUIET)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*trtcheck: *eagr*eager*"])  # trtcheck's message, with its guess


def _row(status: Status, kind: Kind = Kind.MEASURED, **fields: object) -> Row:
    return Row("wrong::noisy[float32]", "wrong", "noisy", "float32",
               "emulate" if kind is Kind.EMULATED else "eager", kind=kind, status=status, **fields)


def _report(row: Row, *, strict_xfail: bool = False) -> pytest.TestReport:
    report = pytest.TestReport("models/wrong.py::noisy[float32-eager]",
                               ("models/wrong.py", 6, "noisy[float32-eager]"), {}, "passed",
                               None, "call")
    outcome.report_row(report, row, strict_xfail=strict_xfail, where=("models/wrong.py", 6))
    return report


def test_each_status_is_pytests_outcome_with_trtchecks_words() -> None:
    assert _report(_row(Status.PASS)).outcome == "passed"
    failed = _report(_row(Status.FAIL, Kind.EMULATED, stage="compare", message="1 of 1 failed",
                          location="models/wrong.py:7"))
    assert failed.outcome == "failed"
    text = str(failed.longrepr)
    assert text.startswith("fail at compare: 1 of 1 failed\nat models/wrong.py:7")
    assert text.endswith(f"† this row is {KIND_NOTES[Kind.EMULATED]}")  # never a measurement
    assert outcome.properties(_row(Status.FAIL, Kind.EMULATED)) == [
        ("prediction", f"† this row is {KIND_NOTES[Kind.EMULATED]}")]
    assert outcome.properties(_row(Status.FAIL)) == []
    no_engine = replace(_row(Status.PASS), evidence=Evidence(engines=0))
    assert outcome.properties(no_engine) == [("no engine", NO_ENGINE_NOTE)]
    for status in (Status.ERROR, Status.TIMEOUT, Status.CRASH):
        crashed = _report(_row(status, message="worker died", traceback="Trace\n\x1b[31m  line"))
        assert crashed.outcome == "failed", status
        assert "worker died" in str(crashed.longrepr) and "\x1b" not in str(crashed.longrepr)
    for status in (Status.SKIPPED, Status.UNSUPPORTED):
        skipped = _report(_row(status, stage="compile", message="TensorRT has no FP64"))
        assert skipped.outcome == "skipped"
        assert skipped.longrepr == ("models/wrong.py", 7,
                                    f"Skipped: {status} at compile: TensorRT has no FP64")
    xfail = _report(_row(Status.XFAIL, message="known [fail: x]"))
    assert (xfail.outcome, xfail.wasxfail) == ("skipped", "xfail: known [fail: x]")
    xpass = _report(_row(Status.XPASS, message="expected to fail (known) but passed"))
    assert (xpass.outcome, xpass.wasxfail) == ("passed", "xpass: expected to fail (known) but passed")
    strict = _report(_row(Status.XPASS, message="expected to fail"), strict_xfail=True)
    assert strict.outcome == "failed" and str(strict.longrepr).startswith("[XPASS(strict)] ")


def test_the_row_crosses_pytests_report_serialization_whole(pytestconfig: pytest.Config) -> None:
    """What pytest-xdist does with a worker's report: the controller reads the same row, NaN
    included, its place in the collection and the case's analysis."""
    row = _row(Status.FAIL, outputs=[{"path": "out", "passed": False, "max_rel": math.nan}])
    report = _report(row)
    outcome.carry(report, row, 3, {"path": ["complex64"]})
    data = pytestconfig.hook.pytest_report_to_serializable(config=pytestconfig, report=report)
    again = pytestconfig.hook.pytest_report_from_serializable(config=pytestconfig, data=data)
    carried = outcome.carried(again)
    assert carried is not None and carried["index"] == 3
    read = read_row(carried["row"])
    assert math.isnan(read.outputs[0]["max_rel"]) and read.status is Status.FAIL
    assert read.to_dict().keys() == row.to_dict().keys() and read.message == row.message
    assert carried["analysis"] == '{"path": ["complex64"]}'
    assert outcome.carried(pytest.TestReport("x", ("x", 0, "x"), {}, "passed", None, "call")) is None


def _case(tmp_path: Path, variant: str) -> Case:
    return Case(ZooFile(tmp_path, tmp_path / "rope.py"), ModelSpec("rope", None, (variant,)), variant)


def test_a_rows_node_id_ends_in_its_brackets_and_names_its_case(tmp_path: Path) -> None:
    own = BUILTIN_PROFILES["truncate_double"]
    slots = [Slot("lowering", BUILTIN_PROFILES["default"]), Slot("lowering", own),
             Slot("eager", None)]
    c64, c128 = _case(tmp_path, "complex64"), _case(tmp_path, "complex128")
    names = [item_name(c64, s) for s in slots]
    assert names == ["rope[complex64-lowering]", "rope[complex64-lowering:truncate_double]",
                     "rope[complex64-eager]"]
    scopes = {case_scope(f"models/rope.py::{n}") for n in names}
    assert scopes == {"models/rope.py::rope[complex64"}  # pytest-xdist keeps a case together
    assert case_scope(f"models/rope.py::{item_name(c128, slots[0])}") not in scopes
    assert case_scope("models/bad.py::(collect)") == "models/bad.py::(collect)"


def test_a_case_runs_only_its_selected_backends_and_profiles(tmp_path: Path) -> None:
    default, own = BUILTIN_PROFILES["default"], BUILTIN_PROFILES["truncate_double"]
    opts = Options(paths=(tmp_path,), backends=("eager", "emulate", "inductor"),
                   profiles=(default, own))
    case = "rope::rope[complex64]"
    picked = case_options(opts, [RowKey(case, "emulate", "truncate_double")])
    assert (picked.backends, picked.profiles) == (("emulate",), (own,))
    both = case_options(opts, [RowKey(case, "inductor", NO_PROFILE), RowKey(case, "eager", NO_PROFILE)])
    assert both.backends == ("eager", "inductor")  # the run's order
    assert both.profiles == opts.profiles  # backends that ignore profiles: the run's kept
