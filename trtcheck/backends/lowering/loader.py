"""The deploy stage's loader: a child process that imports torch and the Torch-TensorRT release as
the lowering host does (over the same TensorRT stand-in for ``lowering``), and no zoo file, then
loads each saved artifact and calls it (:data:`trtcheck.backends.deploy.HANDLERS`)."""

from __future__ import annotations

import sys
from typing import NoReturn

from trtcheck.backends import deploy
from trtcheck.backends.lowering import host


def main(argv: list[str]) -> NoReturn:
    host.main(argv, deploy.HANDLERS)


if __name__ == "__main__":
    main(sys.argv[1:])
