"""The lowering host over the behaving stand-in, with one more request for tests:
``("without", key, name)`` takes the ``INetworkDefinition`` method ``name`` out of the stand-in
(a stand-in that lacks that TensorRT API), ``("with", key, name)`` puts it back."""

from __future__ import annotations

import sys
from typing import Any

from trtcheck.backends.lowering import host
from trtcheck.backends.lowering.release import Release
from trtcheck.backends.lowering.trt.network import INetworkDefinition

_TAKEN: dict[str, Any] = {}


def handle(request: tuple[Any, ...], release: Release, modules: dict[int, Any]) -> Any:
    if request[0] == "without":
        _TAKEN[request[2]] = INetworkDefinition.__dict__[request[2]]
        delattr(INetworkDefinition, request[2])
        return None
    if request[0] == "with":
        setattr(INetworkDefinition, request[2], _TAKEN.pop(request[2]))
        return None
    return host._handle(request, release, modules)


if __name__ == "__main__":
    host.main(sys.argv[1:], handle, behaving=True)
