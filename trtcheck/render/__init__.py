"""Reports rendered from a results record: pure functions, plus one call that writes them all.
Those that state the verdict take the record judged (:class:`~trtcheck.results.verdict.Judged`),
judged once by the caller."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from trtcheck.errors import OutputError
from trtcheck.render.annotations import render_annotations
from trtcheck.render.changes import render_changes
from trtcheck.render.comment import inert, render_comment
from trtcheck.render.html import render_html
from trtcheck.render.junit import render_junit
from trtcheck.render.link import RunLink
from trtcheck.render.markdown import render_markdown
from trtcheck.render.terminal import render_summary
from trtcheck.results.record import gc_paused, save, write_atomic
from trtcheck.results.verdict import Judged

__all__ = ["render_annotations", "render_changes", "render_comment", "render_html", "render_junit",
           "render_markdown", "render_summary", "write_reports"]


@gc_paused()  # a big record's reports are many small objects, none in a cycle
def write_reports(judged: Judged, out_dir: Path, *, link: RunLink | None) -> list[Path]:
    """Write the judged record's ``results.json``, ``junit.xml``, ``report.md``, ``comment.md``
    and ``report.html`` into ``out_dir``, each atomically, ``link`` (the commit and run) in the
    Markdown and HTML reports; where one cannot be written, the others still are, then
    :class:`OutputError` names each."""
    record = judged.record
    reports = {
        out_dir / "junit.xml": render_junit(record),
        out_dir / "report.md": render_markdown(judged, link=link),
        out_dir / "comment.md": render_comment(
            judged, link=link,
            changes=render_changes(record, heading="####", escape=inert)),
        out_dir / "report.html": render_html(judged, link=link),
    }
    results = out_dir / "results.json"
    writes = {results: lambda: save(record, results),
              **{path: partial(write_atomic, path, text) for path, text in reports.items()}}
    written, failed = [], []
    for path, write in writes.items():
        try:
            write()
        except OSError as exc:  # a full disk: write the others, then say which could not be
            failed.append(f"{path.name} ({exc.strerror or exc})")
        else:
            written.append(path)
    if failed:
        raise OutputError(f"cannot write {', '.join(failed)} in {out_dir}; written: "
                          f"{', '.join(p.name for p in written) or 'none'}")
    return written
