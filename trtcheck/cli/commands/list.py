"""``trtcheck list``: the cases under PATHS, without running them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from trtcheck.cli import common
from trtcheck.cli.console import echo
from trtcheck.config import cascade, settings
from trtcheck.errors import Exit
from trtcheck.status import NO_CASE


@click.command("list")
@common.paths_arg
@settings.click_options(settings.SELECT)
def list_cmd(paths: tuple[Path, ...], **given: Any) -> int:
    """Print the cases under PATHS without running them."""
    from trtcheck.execution.run import collect
    from trtcheck.render.escape import plain

    opts = cascade.resolve(paths, **given, reads_baseline=False)
    collection = collect(opts)
    for case in collection.cases:
        tags = f"  [{', '.join(case.spec.tags)}]" if case.spec.tags else ""
        echo(plain(f"{case.case_id}{tags}"))
    for row in collection.problems:
        echo(f"{row.status}: {plain(row.location or row.file)}: {plain(row.message)}", err=True)
    if not collection.cases and not collection.problems:
        echo(f"trtcheck: nothing to list: {NO_CASE}", err=True)
        return Exit.EMPTY
    return 1 if collection.problems else 0
