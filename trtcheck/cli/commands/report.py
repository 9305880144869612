"""``trtcheck report``: a record's reports written again."""

from __future__ import annotations

from pathlib import Path

import click

from trtcheck.cli import common


@click.command("report")
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="Where to write the reports [the record's directory].")
def report_cmd(results: Path, out: Path | None) -> int:
    """Re-render junit.xml, report.md, report.html and results.json from a results.json or results.jsonl,
    or from a report directory (its results.json, else the journal of a run that stopped)."""
    from trtcheck.results import record

    results = common.record_file(results)
    rec = record.load(results)
    out = out or results.parent
    common.check_writable(out)
    with record.locked(out):
        return common.finish(rec, out)
