"""The stand-in's choices where TensorRT's documentation leaves a result open.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). A layer that computes such a result says
so (:func:`assume`); while :func:`recorded` is open the choices are kept, so that a row whose
outputs went through one names it (docs/backends.md lists them).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

MASKED_ROW = ("the stand-in returns NaN for a fully masked attention row (softmax over no key); "
              "TensorRT's behaviour there is undocumented")
OUT_OF_BOUNDS = ("the stand-in returns 0 for an out-of-bounds gather index; TensorRT's result there "
                 "is undefined")
KV_OUT_OF_BOUNDS = ("the stand-in writes only the part of a KV-cache update inside the cache when "
                    "writeIndices[i] + s passes s_max; TensorRT requires it not to")

_RECORDS: list[list[str]] = []


def assume(choice: str, layer: Any) -> None:
    """``layer`` computed a result by the stand-in's ``choice``."""
    for record in _RECORDS:
        record.append(f"{choice} (layer '{layer.name}')")


@contextlib.contextmanager
def recorded() -> Iterator[list[str]]:
    """The choices the stand-in's layers made meanwhile, each once."""
    record: list[str] = []
    _RECORDS.append(record)
    try:
        yield record
    finally:
        _RECORDS.remove(record)
        record[:] = list(dict.fromkeys(record))
