"""The lowering host over the behaving stand-in, with two more requests for tests:
:class:`Without` takes the ``INetworkDefinition`` method ``name`` out of the stand-in (a
stand-in that lacks that TensorRT API), :class:`With` puts it back."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtcheck.backends.lowering import host
from trtcheck.backends.lowering.release import Release
from trtcheck.backends.lowering.trt.network import INetworkDefinition

_TAKEN: dict[str, Any] = {}


@dataclass(frozen=True)
class Without:
    name: str


@dataclass(frozen=True)
class With:
    name: str


def _without(request: Without, release: Release, modules: dict[int, Any]) -> None:
    _TAKEN[request.name] = INetworkDefinition.__dict__[request.name]
    delattr(INetworkDefinition, request.name)


def _with(request: With, release: Release, modules: dict[int, Any]) -> None:
    setattr(INetworkDefinition, request.name, _TAKEN.pop(request.name))


HANDLERS = {**host.HANDLERS, Without: _without, With: _with}


if __name__ == "__main__":
    # the requests' classes as the tests name them (tests.standin_gaps), not as __main__'s
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests import standin_gaps

    host.main(sys.argv[1:], standin_gaps.HANDLERS, behaving=True)
