"""A memory figure the device or backend could not take reads "not measured", never 0."""

from __future__ import annotations

from trtcheck.render.html import render_html
from trtcheck.render.markdown import render_markdown
from trtcheck.results.figures import RESIDENT, Latency, Memory, Stats
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged


def test_a_memory_figure_not_taken_reads_not_measured_in_the_reports() -> None:
    stats = Stats("perf_counter", 3, 100, 1.0, 1.1, 0.9, 1.0, 0.1)
    row = Row("zoo::m[float32]", "zoo", "m", "float32", "inductor", latency=Latency(stats, stats),
              memory=Memory(RESIDENT, eager=None, backend=None))
    assert row.to_dict()["memory"]["eager"] is None  # the record says so too
    latency = render_markdown(Judged.of(Record({}, {}, [row]))).split("## Latency")[1]
    table = next(line for line in latency.splitlines() if line.startswith("| zoo::m"))
    assert table.endswith("| not measured | not measured | not measured |")
    html = render_html(Judged.of(Record({}, {}, [row]))).split('<section id="memory">')[1]
    assert html.count("not measured") >= 3 and ">0<" not in html
