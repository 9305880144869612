"""Command line: ``trtcheck run``, ``reduce``, ``ab``, ``list``, ``analyze``, ``fetch``,
``report``, ``merge``, ``diff``, ``history``, one module each under ``cli/commands/``. Only this
package exits: :func:`main` turns every error into its exit code.

Modules that import torch are imported inside the commands, so that ``--help``, ``--version``
and argument errors answer without loading torch (about 3 s)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from trtcheck import __version__, distribution
from trtcheck.cli import github
from trtcheck.cli.commands.ab import ab_cmd
from trtcheck.cli.commands.analyze import analyze_cmd
from trtcheck.cli.commands.diff import diff_cmd
from trtcheck.cli.commands.fetch import fetch_cmd
from trtcheck.cli.commands.history import history_cmd
from trtcheck.cli.commands.list import list_cmd
from trtcheck.cli.commands.merge import merge_cmd
from trtcheck.cli.commands.reduce import reduce_cmd
from trtcheck.cli.commands.report import report_cmd
from trtcheck.cli.commands.run import run_cmd
from trtcheck.cli.common import publish
from trtcheck.cli.console import echo
from trtcheck.errors import Exit, TrtcheckError

COMMANDS = (run_cmd, reduce_cmd, ab_cmd, list_cmd, analyze_cmd, fetch_cmd, report_cmd,
            history_cmd, merge_cmd, diff_cmd)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trtcheck",
                      message=f"%(prog)s %(version)s (distribution {distribution.DIST})")
def cli() -> None:
    """Check a PyTorch model zoo against Torch-TensorRT and eager PyTorch."""


for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code instead of exiting, so it can be called in-process."""
    with github.withheld():  # before any zoo code: --no-isolate runs it in this process
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    for collision in distribution.collisions():
        echo(collision.warning(), err=True)
    try:
        result = cli.main(args=list(argv) if argv is not None else None,
                          prog_name="trtcheck", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return publish(exc.exit_code, None, None)
    except click.exceptions.Abort:
        echo("aborted", err=True)
        return Exit.INTERRUPTED
    except TrtcheckError as exc:
        echo(f"trtcheck: error: {exc}", err=True)
        return publish(exc.exit_code, None, None)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
