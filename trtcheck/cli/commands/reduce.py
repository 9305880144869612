"""``trtcheck reduce``: the selected cases run, each failing row reduced to a small graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from trtcheck.cli import common
from trtcheck.cli.commands.run import run_and_finish
from trtcheck.config import cascade, settings

REDUCE_EPILOG = """\b
Each failing row (fail or error, at compile, run or compare) becomes the
smallest exported graph that still fails the same way, with a bundle in
OUT/repro/CASE/: repro.py (torch and torch_tensorrt only), a zoo file that
'trtcheck run' reproduces as one row, inputs.pt, ISSUE.md and summary.json.
Weights and inputs are random values of the same dtype and shape wherever the
failure reproduces with them; else the case's own example inputs, through random
weights; --keep-real-values keeps the real ones where neither reproduces it
(they may be private: review the bundle before sharing it).
"""


@click.command("reduce", epilog=REDUCE_EPILOG)
@common.paths_arg
@settings.click_options(settings.REDUCE)
def reduce_cmd(paths: tuple[Path, ...], **given: Any) -> int:
    """Run the selected cases and reduce every failing row to a small graph that fails the same
    way, with a bundle a Torch-TensorRT maintainer can run; exits as 'trtcheck run' would."""
    return run_and_finish(cascade.resolve(paths, **given, reduce=True), reduce_total=None,
                          must_reduce=True)
