"""What the command line prints, and where: output that survives a closed pipe, and the
zoo's and torch's own prints kept out of the terminal."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click


@contextmanager
def output_to(log: Path) -> Iterator[None]:
    """Send what is printed meanwhile (torch's graph dumps and warnings, the zoo's own prints)
    to ``log`` rather than the terminal, at the file-descriptor level so C++ output goes too."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with log.open("a", encoding="utf-8") as fh:
            os.dup2(fh.fileno(), 1)
            os.dup2(fh.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
    finally:
        for fd, saved_fd in ((1, saved[0]), (2, saved[1])):
            os.dup2(saved_fd, fd)
            os.close(saved_fd)


def echo(text: str, *, err: bool = False) -> None:
    """``click.echo`` that survives a closed pipe (``trtcheck run … | head``): the rest of the
    output is dropped, and the run goes on to write its reports."""
    try:
        click.echo(text, err=err)
    except BrokenPipeError:
        stream = sys.stderr if err else sys.stdout
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
