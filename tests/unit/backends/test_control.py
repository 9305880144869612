"""The control and the comparison backends: what each times and what it compares."""

from __future__ import annotations

import pytest
import torch

from tests.helpers import REPO
from trtcheck import backends
from trtcheck.backends import CompileJob
from trtcheck.config.cascade import resolve
from trtcheck.core.profiles import Profile
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged

FIXTURES = REPO / "fixtures"


class Doubler(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def _job() -> CompileJob:
    model, args = Doubler().eval(), (torch.randn(3),)
    return CompileJob(torch.export.export(model, args), args, {}, Profile("default"), "cpu",
                      module=model)


def test_eager_times_the_users_module_and_compares_the_exported_one() -> None:
    job = _job()
    compiled = backends.get("eager").compile(job)
    assert compiled.called is job.module  # called as the reference calls it
    assert isinstance(compiled.fn, torch.fx.GraphModule)  # the export round trip
    assert compiled.cost_label == "export" and not backends.get("eager").traits.subprocess


@pytest.mark.slow
def test_inductor_compiles_the_users_module_and_says_so() -> None:
    job = _job()
    compiled = backends.get("inductor").compile(job)
    assert getattr(compiled.fn, "_orig_mod", None) is job.module
    assert compiled.evidence.details["compiled_as"].startswith("torch.compile on the module")


class Broken(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x @ x
        torch._dynamo.graph_break()
        return y @ x


class Skipped(torch.nn.Module):
    @torch.compiler.disable
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ x


@pytest.mark.slow
@pytest.mark.parametrize(("model", "graphs", "remark"), [
    (Broken(), 2, "1 graph break: Call to `torch._dynamo.graph_break()` at " + __file__),
    (Skipped(), 0, "inductor compiled nothing: 1 graph break: Skip inlining"),
])
def test_inductor_counts_its_graph_breaks_and_says_when_it_compiled_nothing(
        model: torch.nn.Module, graphs: int, remark: str) -> None:
    torch.compiler.reset()  # as before each row
    args = (torch.randn(4, 4),)
    job = CompileJob(None, args, {}, Profile("default"), "cpu", module=model)
    compiled = backends.get("inductor").compile(job)
    details = compiled.evidence.details
    assert details["graphs"] == graphs and len(details["graph_breaks"]) == 1
    assert compiled.evidence.remark.startswith(remark)
    assert ("code_hash" in details) == (graphs > 0)  # never a bare missing hash


def test_control_row_carries_the_export_cost_and_equal_memory_figures() -> None:
    opts = resolve((FIXTURES,), backends=("eager",), keyword="propagator")
    (case,) = collect(opts).cases
    (row,) = [r for r in iter_rows(case, opts, {"eager": backends.get("eager")})
              if isinstance(r, Row)]
    lat = row.latency
    assert lat is not None and lat.cost is not None and lat.cost.label == "export"
    assert (lat.method, lat.schedule) == ("calls", "interleaved")
    assert lat.cost.low_ms <= lat.cost.ms <= lat.cost.high_ms
    if row.memory is not None:  # Linux: resident peaks; a ratio only above the 16 MiB floor
        assert row.memory.ratio in (None, 1.0) or abs(row.memory.ratio - 1) < 0.05
        assert row.memory.eager_first is not None


def test_report_names_how_inductor_compiled_and_the_export_cost() -> None:
    from trtcheck.render.markdown import render_markdown
    from trtcheck.results.figures import Cost, Latency, Stats
    from trtcheck.results.record import Record
    from trtcheck.results.rows import Evidence, Kind

    stats = Stats("cuda-event", 3, 100, 1.0, 1.0, 1.0, 1.0, 0.0, 1, 0.9, 1.1)
    lat = Latency(stats, stats, stats, stats, 1.0, 0.99, 1.01, method="calls")
    rows = [Row("z::m[float32]", "z.py", "m", "float32", "eager", "-", Kind.MEASURED,
                latency=Latency(**{**lat.__dict__, "cost": Cost("export", 0.12, 0.1, 0.14)})),
            Row("z::m[float32]", "z.py", "m", "float32", "inductor", "-", Kind.MEASURED,
                latency=lat, evidence=Evidence(details={
                    "compiled_as": "torch.compile on the module (backend inductor, default mode)"}))]
    rows.append(Row("z::n[float32]", "z.py", "n", "float32", "inductor", "-", Kind.MEASURED,
                    latency=lat, evidence=Evidence(
                        remark="inductor compiled nothing: 1 graph break: x")))
    report = render_markdown(Judged.of(Record({"device": "cuda:0"}, {}, rows, {})))
    assert "export adds 0.12 ms a call" in report and "not a speedup" in report
    # a passing row's figures are not inductor's: said beside them
    assert "z::n\\[float32\\] · inductor: inductor compiled nothing: 1 graph break: x" in report
    assert "inductor compiled as torch.compile on the module" in report
