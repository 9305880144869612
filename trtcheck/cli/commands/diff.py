"""``trtcheck diff``: a head record's changes against a base record, without running."""

from __future__ import annotations

from pathlib import Path

import click

from trtcheck.cli import common
from trtcheck.cli.console import echo
from trtcheck.config import cascade, settings
from trtcheck.errors import UsageError


@click.command("diff")
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("head", type=click.Path(path_type=Path), required=False)
@click.option("--out", type=click.Path(path_type=Path),
              help="Also write HEAD's reports, with the changes, into this directory.")
@settings.click_options(settings.DIFF)
def diff_cmd(base: Path, head: Path | None, out: Path | None, **given: object) -> int:
    """Print HEAD's changes against BASE (two results.json) without running anything; exits
    as the run of HEAD would have with --baseline BASE.

    Two records of 'trtcheck ab' are judged by its rule over processes (the head side of each),
    and so is one alone (its base against its head); two records of 'trtcheck run' by the
    weaker rule over runs, as --baseline does."""
    from trtcheck.render import render_changes
    from trtcheck.render.terminal import render_headline
    from trtcheck.results import record
    from trtcheck.results.diff import judged
    from trtcheck.results.verdict import Judged

    before = record.load(base)
    after = record.load(head) if head is not None else None
    if after is None and before.ab is None:
        raise UsageError(f"{base} is not a record of trtcheck ab: give a base and a head record")
    gate = cascade.saved_gate((after or before).options, **given)
    result = Judged.of(judged(before, after, gate))
    echo(render_changes(result.record))
    if out is not None:
        common.check_writable(out)
        with record.locked(out):
            written = common.write(result, out)
        echo(f"reports: {', '.join(str(p) for p in written)}")
    echo(render_headline(result.verdict))
    return common.verdict(result)
