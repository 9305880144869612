"""``trtcheck analyze``: each case's complex, int64 and float64 paths, predicted on CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from trtcheck.cli import common
from trtcheck.cli.console import echo, output_to
from trtcheck.config import cascade, settings


@click.command("analyze")
@common.paths_arg
@settings.click_options(settings.ANALYZE)
@click.option("-v", "--verbose", count=True, help="Print each case's complex ops and predictions.")
def analyze_cmd(paths: tuple[Path, ...], verbose: int, **given: Any) -> int:
    """Predict each case's complex, int64 and float64 paths, without compiling (CPU)."""
    from trtcheck.execution.run import analyze, collect
    from trtcheck.render.analysis import render_analysis
    from trtcheck.results import record
    from trtcheck.results.verdict import Judged

    opts = cascade.resolve(paths, **given, device="cpu", quiet=1, reads_baseline=False)
    common.check_writable(opts.out)
    with output_to(opts.out / "analyze.log"):
        rec = analyze(opts, collect(opts))
    record.save(rec, opts.out / "analysis.json")
    echo(render_analysis(rec, verbose=verbose > 0))
    echo(f"analysis: {opts.out / 'analysis.json'}")
    return common.verdict(Judged.of(rec))
