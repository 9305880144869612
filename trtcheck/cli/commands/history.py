"""``trtcheck history``: each row over commits, from the records of successive runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from trtcheck.cli import common
from trtcheck.cli.console import echo
from trtcheck.config import cascade
from trtcheck.errors import OutputError, RecordError, UsageError


@click.command("history")
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Where to write history.html.")
def history_cmd(records: tuple[Path, ...], out: Path) -> int:
    """Draw each row over commits from RECORDS (results.json of successive commits, or report
    directories, in any order) into OUT/history.html."""
    from trtcheck.render.history import render_history
    from trtcheck.results import history, record

    read, unread = [], []
    # a path given twice (a shell glob and a name, say) is read, or warned about, once
    for path in _unique(records):
        try:
            read.append((str(path), record.load(common.record_file(path))))
        except (RecordError, UsageError) as exc:
            if str(exc) not in unread:
                echo(f"warning: {exc}", err=True)
                unread.append(str(exc))
    if not read:
        raise UsageError("no record could be read: nothing to draw")
    common.check_writable(out)
    page = out / "history.html"
    commits = history.order(read)
    history.flag(commits, lambda rec: cascade.saved_gate(rec.options))
    try:
        record.write_atomic(page, render_history(commits, unread=unread))
    except OSError as exc:
        raise OutputError(f"cannot write {page}: {exc.strerror or exc}") from None
    echo(f"history: {page} ({len(read)} records)")
    return 0


def _unique(paths: Sequence[Path]) -> list[Path]:
    """``paths`` in order, each file once however it was named."""
    seen: set[Path] = set()
    out = []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out
