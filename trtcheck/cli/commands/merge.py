"""``trtcheck merge``: the records of several shards as one set of reports."""

from __future__ import annotations

from pathlib import Path

import click

from trtcheck.cli import common


@click.command("merge")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Where to write the combined reports.")
def merge_cmd(results: tuple[Path, ...], out: Path) -> int:
    """Combine the results.json of several shards (--shard I/N) into one set of reports.

    Refuses (exit 2) records that cannot be combined (other versions, device kind, or any
    setting that changes rows: backends, --torch-tensorrt, profiles, variants, tolerances,
    timing, --nan, ...) and shards that overlap; a missing shard becomes an error row."""
    from trtcheck.config.settings import ROW_SETTINGS
    from trtcheck.results import record
    from trtcheck.results.merge import merge

    rec = merge(results, ROW_SETTINGS)
    common.check_writable(out)
    with record.locked(out):
        return common.finish(rec, out)
