"""``trtcheck fetch``: Torch-TensorRT's Python code into trtcheck's cache."""

from __future__ import annotations

import click

from trtcheck.cli.console import echo


@click.command("fetch")
@click.argument("package", type=click.Choice(["torch-tensorrt"]), metavar="PACKAGE")
@click.argument("versions", nargs=-1)
def fetch_cmd(package: str, versions: tuple[str, ...]) -> int:
    """Fetch PACKAGE's Python code (torch-tensorrt; VERSIONS, default: the release for the
    installed torch) into trtcheck's cache, for the lowering backend on an offline runner.

    Only the Python files are kept, under $TRTCHECK_CACHE (default: the user cache directory);
    TensorRT's libraries are never installed and site-packages is never touched."""
    from trtcheck.backends.lowering import code as ttrt_code

    for version in versions or (None,):
        where = ttrt_code.fetch(version)
        echo(f"{package} {where.name}: {where}")
    return 0
