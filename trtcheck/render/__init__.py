"""Reports rendered from a results record: pure functions, plus one call that writes them all."""

from __future__ import annotations

from pathlib import Path

from trtcheck.record import Record, save, write_atomic
from trtcheck.render.junit import render_junit
from trtcheck.render.markdown import render_markdown
from trtcheck.render.terminal import render_summary

__all__ = ["render_junit", "render_markdown", "render_summary", "write_reports"]


def write_reports(record: Record, out_dir: Path, *, strict_xfail: bool) -> list[Path]:
    """Write ``results.json``, ``junit.xml`` and ``report.md`` into ``out_dir``, each atomically."""
    reports = {
        out_dir / "junit.xml": render_junit(record, strict_xfail=strict_xfail),
        out_dir / "report.md": render_markdown(record, strict_xfail=strict_xfail),
    }
    results = out_dir / "results.json"
    save(record, results)
    for path, text in reports.items():
        write_atomic(path, text)
    return [results, *reports]
