"""The hooks of a ``pytest --trtcheck`` session, registered only under ``--trtcheck``.

Every process that runs items (the only one, or each pytest-xdist worker) has a
:class:`~trtcheck.pytest_plugin.zoo.Zoo`: trtcheck's collection and one trtcheck worker. The
process that writes the reports (the only one, or the controller) has a
:class:`~trtcheck.pytest_plugin.recorder.Recorder`, fed by the reports pytest hands it."""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import replace
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from trtcheck.config.options import Options
from trtcheck.core.traits import NAMES
from trtcheck.errors import OutputError, TrtcheckError
from trtcheck.pytest_plugin import options, outcome
from trtcheck.pytest_plugin.nodes import MARK, RowItem, ZooFileNode, case_scope
from trtcheck.pytest_plugin.recorder import Recorder
from trtcheck.pytest_plugin.zoo import Zoo


def running(opts: Options, worker_id: str | None) -> Options:
    """The options of a process that runs items: one trtcheck worker, on its device (pytest-xdist
    worker ``gwN`` on the N-th listed GPU, round the list)."""
    devices = opts.devices
    number = re.fullmatch(r"gw(\d+)", worker_id or "")
    device = devices[int(number.group(1)) % len(devices) if number else 0]
    return replace(opts, devices=(device,), workers=1)


class Plugin:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.opts = options.resolve(config)
        worker = getattr(config, "workerinput", None)  # set in a pytest-xdist worker
        self.worker_id: str | None = worker["workerid"] if worker else None
        self._zoo: Zoo | None = None
        writes = worker is None and not config.option.collectonly
        self.recorder = Recorder(self.opts) if writes else None
        self.problem: str | None = None  # why the reports were not written
        self.session: pytest.Session | None = None
        config.addinivalue_line("markers", f"{MARK}: a row of trtcheck's model zoo")
        for name in NAMES:
            config.addinivalue_line("markers", f"{name}: a trtcheck row of the {name} backend")

    @property
    def zoo(self) -> Zoo:
        """This process's zoo, made when it first collects (pytest-xdist's controller never does)."""
        if self._zoo is None:
            self._zoo = Zoo(running(self.opts, self.worker_id))
        return self._zoo

    def pytest_report_header(self) -> list[str]:
        lines = [f"trtcheck: backends {', '.join(self.opts.backends)}; profiles "
                 f"{', '.join(p.name for p in self.opts.profiles)}; reports to {self.opts.out}"]
        lines += [f"warning: {w}" for w in self.opts.config_warnings]
        return lines + ([self.opts.backend_note] if self.opts.backend_note else [])

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Generator[
            None, list[pytest.Collector], list[pytest.Collector]]:
        found = yield
        if file_path.suffix != ".py" or self._pytests(file_path) or not self.zoo.declares(file_path):
            return found
        # A zoo file pytest would import as a test module (one named on the command line) is
        # imported by trtcheck's worker only, never in pytest's process.
        return [*(c for c in found if not isinstance(c, pytest.Module)),
                ZooFileNode.from_parent(parent, path=file_path, zoo=self.zoo)]

    def _pytests(self, path: Path) -> bool:
        """Whether pytest takes the file for a test module by its name (``python_files``)."""
        return any(fnmatch(path.name, pattern) for pattern in self.config.getini("python_files"))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self._zoo is not None:
            self._zoo.select(item.key for item in session.items
                             if isinstance(item, RowItem) and item.case is not None)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
            None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, RowItem) and call.when == "call" and item.row is not None:
            path, line, _ = item.reportinfo()
            outcome.report_row(report, item.row, strict_xfail=self.opts.strict_xfail,
                               where=(path, line))
            outcome.carry(report, item.row, item.index, item.analysis)
            item.user_properties += outcome.properties(item.row)  # JUnit reads the teardown's
        return report

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        if self.recorder is not None:
            try:
                self.recorder.open()
            except TrtcheckError as exc:
                raise pytest.UsageError(f"trtcheck: {exc}") from None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        carried = outcome.carried(report)
        if self.recorder is None or carried is None:
            return
        try:
            self.recorder.take(carried)
        except OutputError as exc:  # a full disk: the session stops, as trtcheck run does
            self.problem = str(exc)
            if self.session is not None:
                self.session.shouldstop = f"trtcheck: {exc}"

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._zoo is not None:
            self._zoo.close()
        if self.recorder is None:
            return
        stopped_by_pytest = session.shouldfail or session.shouldstop
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED and not stopped_by_pytest
        try:
            self.recorder.finish(interrupted=interrupted)
        except OutputError as exc:
            self.problem = str(exc)
        if self.problem:
            session.exitstatus = OutputError.exit_code  # 3, as trtcheck run exits

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        judged = self.recorder.judged if self.recorder else None
        if judged is None and not self.problem:
            return
        from trtcheck.render.terminal import render_summary

        terminalreporter.write_sep("-", "trtcheck")
        if judged is not None:
            quiet = self.config.get_verbosity() < 0
            terminalreporter.write_line(render_summary(judged, failing_only=quiet))
        if self.recorder and self.recorder.written:
            terminalreporter.write_line(
                f"reports: {', '.join(str(p) for p in self.recorder.written)}")
        if self.problem:
            terminalreporter.write_line(f"trtcheck: {self.problem}", red=True)

    def pytest_unconfigure(self) -> None:
        if self._zoo is not None:
            self._zoo.close()
        if self.recorder is not None:
            self.recorder.close()

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under pytest-xdist's default ``load``, whole cases go to a worker (its ``loadscope``,
        the scope being the case: :func:`~trtcheck.pytest_plugin.nodes.case_scope`), so that a
        case runs once, its eager reference once for all its rows; another ``--dist`` is left as
        chosen (a case whose rows go to two workers runs on both)."""
        if config.getoption("dist") != "load":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class ByCase(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return case_scope(nodeid)

        return ByCase(config, log)
