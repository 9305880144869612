"""comment.md: compact, failures first, within its size limit, and inert for hostile names."""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import pytest

from tests.helpers import REPO
from trtcheck.cli import main
from trtcheck.core.traits import Kind
from trtcheck.render.comment import ARTIFACT_NOTE, inert, render_comment
from trtcheck.render.link import RunLink
from trtcheck.results.figures import Latency, Stats
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

SAMPLE = REPO / "tests" / "data" / "sample_zoo_results.json.gz"
HOSTILE = "pipe|and<b>html</b>$(echo x) @org/team #1 https://x.y"


def _stats(ms: float) -> Stats:
    return Stats("perf_counter", 3, 100, ms, ms * 1.1, ms * 0.9, ms, ms * 0.1)


def _row(model: str, backend: str, status: Status, **fields: object) -> Row:
    return Row(f"zoo::{model}[float32]", "zoo", model, "float32", backend, **fields,
               status=status)  # type: ignore[arg-type]


def _record(rows: list[Row]) -> Record:
    env = {"torch": "2.13.0", "torch_tensorrt": "2.13.0", "tensorrt": "10.9",
           "device": "cuda:0", "device_name": "NVIDIA H200", "git_commit": "ab" * 20}
    return Record(environment=env, options={}, rows=rows)


def _visible(text: str) -> str:
    """The comment as shown before anything is expanded."""
    return re.sub(r"<details>.*?</details>", "", text, flags=re.S)


def test_sample_zoo_comment_is_small_and_shows_the_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The stored record of the sample zoo on 3 backends and 4 profiles, re-rendered by the CLI
    (in this process, outside GitHub Actions)."""
    results = tmp_path / "results.json"
    results.write_bytes(gzip.decompress(SAMPLE.read_bytes()))
    for name in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    assert main(["report", str(results)]) == 1, capsys.readouterr().err
    text = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert len(text.encode()) < 8 * 1024
    table_rows = [line for line in (tmp_path / "report.md").read_text().splitlines()
                  if line.startswith("| ")]
    # a summary: under a third of the report's table rows
    assert len(table_rows) > 3 * len([line for line in text.splitlines() if line.startswith("| ")])
    shown = _visible(text)
    assert shown.startswith("### trtcheck: ❌ FAIL: 1 of 78 rows fail the run")
    assert "fail 1 · xpass 6 · unsupported 2 · xfail 2 · pass 67" in shown
    assert "eager (measured), emulate (predicted †), inductor (measured)" in shown
    assert "| indices::id\\_hash\\[int64\\] | emulate † · int64\\_as\\_int32 | **fail** |" in shown
    assert shown.index("Needs attention") < shown.index("Accuracy") < shown.index("Latency")
    # one accuracy line and one latency line per case: 13 cases
    for section in ("#### Accuracy", "#### Latency"):
        table = text.split(section)[1].split("\n\n")[1]
        assert len(table.splitlines()) == 2 + 13
    # emulate is a prediction: no speedup, in every case
    assert text.count("n/a (prediction)") == 13
    assert "<details><summary>4 more rows not passing" in text
    assert f"commit {'25d0e66c86014f33bfd8e03f99b71da88f3da416'}" in text


def test_prediction_rows_show_no_speedup() -> None:
    lat = Latency(_stats(2.0), _stats(1.0), _stats(1.0), _stats(0.5), 2.0, 1.9, 2.1)
    rows = [_row("m", "inductor", Status.PASS, latency=lat),
            _row("m", "emulate", Status.PASS, latency=lat, kind=Kind.EMULATED)]
    text = render_comment(Judged.of(_record(rows)))
    latency = text.split("#### Latency")[1].split("\n\n")[1]
    assert latency.splitlines()[0] == "| case | inductor | emulate |"
    assert latency.splitlines()[2].startswith("| zoo::m\\[float32\\] | 2× [1.9–2.1] |")
    assert latency.splitlines()[2].endswith("| n/a (prediction) |")
    assert "emulate (predicted †)" in text and "inductor (measured)" in text
    chart = text.split("#### Speedup by backend")[1]
    assert "emulate" not in chart and "| inductor | `" in chart


def test_hostile_model_name_is_inert() -> None:
    rows = [_row(HOSTILE, "inductor", Status.FAIL, message=f"it broke: {HOSTILE}",
                 outputs=[{"path": HOSTILE, "passed": False, "max_abs": 1.0, "max_rel": 1.0,
                           "atol": 1e-3, "rtol": 1e-3, "min_atol": 1.0, "min_rtol": 1.0}]),
            _row(HOSTILE, "emulate", Status.XFAIL, message=HOSTILE, profile=HOSTILE)]
    text = render_comment(Judged.of(_record(rows)))
    assert HOSTILE.split(" ")[0] not in text
    assert not re.search(r"<(?!/?(details|summary|sub|br)>)", text), "raw HTML"
    assert not re.search(r"@\w", text), "a mention"
    assert not re.search(r"#\d", text), "an issue reference"
    assert not re.search(r"https?://", text), "an autolink"
    assert "$(echo x)" not in text and "\\$\\(echo x\\)" in text
    assert "pipe\\|and&lt;b&gt;html&lt;/b&gt;" in text
    # every table line still has exactly its columns: no cell was split by a pipe
    for line in text.splitlines():
        if line.startswith("| zoo::"):
            assert len(re.findall(r"(?<!\\)\|", line)) in (5, 6)


def test_inert_defuses_references_and_links() -> None:
    for text in ("@user", "see #12", "GH-3", "http://a.b", "HTTPS://a.b", "www.a.b",
                 "mailto:x@y.z", "x@y.z"):
        out = inert(text)
        assert not re.search(r"@\w|#\d|gh-\d|https?:|www\.|mailto:", out, re.I), (text, out)
        assert out.replace("\u200d", "") == text


def test_inert_defuses_cross_repository_references_entities_and_images() -> None:
    for text in ("org/repo#1", "GH-5", "&#64;user", "&#x40;user", "![i](https://e.x/p.png)",
                 "<img src=https://e.x/p.png>"):
        out = inert(text)
        assert not re.search(r"#\d|gh-\d|&#|!\[|<img|https?:", out, re.I), (text, out)


def test_comment_stays_within_the_limit_cut_at_row_boundaries() -> None:
    long = "x" * 500
    rows = [_row(f"model{i}", "inductor", Status.FAIL, message=long) for i in range(2000)]
    rows += [_row(f"model{i}", "emulate", Status.UNSUPPORTED, message=long) for i in range(500)]
    text = render_comment(Judged.of(_record(rows)))
    assert 50_000 < len(text) <= 60_000
    assert text.startswith("### trtcheck: ❌ FAIL: 2000 of 2500 rows fail the run")
    assert re.search(r"\| … \d+ more rows: " + re.escape(ARTIFACT_NOTE) + r" \|", text)
    assert text.rstrip().endswith("</sub>")
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|"), line
    small = render_comment(Judged.of(_record(rows[:3])), limit=1_200)
    assert len(small) <= 1_200 and "more rows" in small


def test_run_link_and_changes_hook() -> None:
    rows = [_row("m", "inductor", Status.ERROR, stage="compile", message="boom")]
    link = RunLink(sha="c" * 40, url="https://github.com/o/r/actions/runs/7")
    text = render_comment(Judged.of(_record(rows)), link=link,
                          changes="#### Changes against the baseline\n\n- none")
    assert f"commit {'c' * 40} · [run](https://github.com/o/r/actions/runs/7)" in text
    # the changes against the baseline come first
    assert text.index("Changes against") < text.index("Needs attention") < text.index("Accuracy")


@pytest.mark.parametrize(("rows", "headline"), [
    ([], "### trtcheck: ⚠️ NOTHING TESTED: no case was selected"),
    ([Row("z::m[float32]", "z", "m", "float32", "eager")], "### trtcheck: ✅ PASS: 1 rows"),
])
def test_headline_without_failures(rows: list[Row], headline: str) -> None:
    text = render_comment(Judged.of(_record(rows)))
    assert text.startswith(headline)
    assert "Needs attention" not in text


def test_strict_xfail_makes_xpass_bold() -> None:
    rows = [_row("m", "inductor", Status.XPASS, message="expected to fail (x) but passed")]
    strict = _record(rows)
    strict.options["strict_xfail"] = True  # the record says how strictly it ran
    assert "| **xpass** |" in render_comment(Judged.of(strict))
    relaxed = render_comment(Judged.of(_record(rows)))
    assert "| xpass |" in relaxed and "✅ PASS" in relaxed


def test_a_prediction_only_run_says_why_there_is_no_speedup() -> None:
    lat = Latency(_stats(2.0), _stats(1.0), _stats(1.0), _stats(0.5), 2.0, 1.9, 2.1)
    rows = [_row("m", "lowering", Status.PASS, latency=lat, kind=Kind.LOWERED),
            _row("m", "emulate", Status.PASS, latency=lat, kind=Kind.EMULATED)]
    text = render_comment(Judged.of(_record(rows)))
    assert "n/a (prediction)" not in text
    assert text.split("#### Latency")[1].split("\n\n")[1] == (
        "No speedup: every backend of this run predicts rather than measures (lowering, "
        "emulate †); their latency is PyTorch running a rewritten graph, not TensorRT.")


def test_a_row_that_errored_is_the_worst_of_its_case() -> None:
    within = {"path": "", "passed": True, "max_abs": 0.0, "max_rel": 0.0, "atol": 1e-3,
              "rtol": 1e-3}
    rows = [_row("m", "eager", Status.PASS, outputs=[within]),
            _row("m", "lowering", Status.ERROR, stage="compile", message="boom",
                 kind=Kind.LOWERED)]
    accuracy = render_comment(Judged.of(_record(rows))).split("#### Accuracy")[1]
    assert "| zoo::m\\[float32\\] | — | — | **error**, no outputs compared | lowering † |" \
        in accuracy
    assert "within" not in accuracy


def test_the_worst_output_is_the_one_the_rows_message_names() -> None:
    """One order of outputs: the comment's worst output is the one the row's message names,
    and its path is explained."""
    from trtcheck.measure.compare import Comparison, LeafResult

    def leaf(path: str, frac: float, min_atol: float) -> LeafResult:
        return LeafResult(path, "tensor", False, "torch.float32", "torch.float32", [4], [4],
                          1e-3, 1e-3, max_abs=min_atol, max_rel=min_atol, frac_mismatch=frac,
                          min_atol=min_atol, min_rtol=min_atol, message=f"out{path} differs")

    # [0]: most elements off but just past the tolerance; ['x']: one element far off
    result = Comparison((leaf("[0]", 0.9, 2e-3), leaf("['x']", 0.25, 5.0)))
    assert result.message.endswith("worst: out['x'] differs")
    rows = [_row("m", "inductor", Status.FAIL, message=result.message,
                 outputs=[r.to_dict() for r in result.leaves])]
    accuracy = render_comment(Judged.of(_record(rows))).split("#### Accuracy")[1]
    assert "| inductor · output \\['x'\\] |" in accuracy
    assert "`['x']` the value at key `x` of its dict" in accuracy


def test_a_row_needing_attention_shows_its_first_evidence_note() -> None:
    from trtcheck.results.rows import Evidence

    notes = ["int64 narrowed to float32 inside the engine by cumsum", "TensorRT logged at ERROR: x"]
    row = _row("ids", "lowering", Status.ERROR, stage="compile", message="refused",
               evidence=Evidence(notes=notes))
    comment = render_comment(Judged.of(_record([row])))
    [line] = [x for x in comment.splitlines() if x.startswith("| zoo::ids") and "**error** |" in x]
    assert line.endswith("<br>evidence: int64 narrowed to float32 inside the engine by cumsum "
                         "(+1 more in report.md) |")
