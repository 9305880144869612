"""The stand-in's choices where TensorRT's documentation leaves a result open.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). A layer that computes such a result says
so (:func:`assume`), which gives it the value to put there; while :func:`recorded` is open the
choices are kept, so that a row whose outputs went through one names it (docs/backends.md lists
them), and while :func:`varied` is open one layer puts another value there, so that a run can tell
whether the value reaches an output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Choice:
    """A result TensorRT leaves open: what the stand-in says of it, the value it puts there and
    another value it could put there as well."""

    text: str
    value: float
    other: float


MASKED_ROW = Choice("the stand-in returns NaN for a fully masked attention row (softmax over no "
                    "key); TensorRT's behaviour there is undocumented", float("nan"), 0.0)
OUT_OF_BOUNDS = Choice("the stand-in returns 0 for an out-of-bounds gather index; TensorRT's result "
                       "there is undefined", 0.0, 1.0)
# its value: 1 writes the part of the update inside the cache, 0 leaves the cache as it was
KV_OUT_OF_BOUNDS = Choice("the stand-in writes only the part of a KV-cache update inside the cache "
                          "when writeIndices[i] + s passes s_max; TensorRT requires it not to",
                          1.0, 0.0)

_RECORDS: list[list[tuple[str, str]]] = []
_VARIED: set[str] = set()


def assume(choice: Choice, layer: Any) -> float:
    """``layer`` computes a result by the stand-in's ``choice``: the value to put there (the
    choice's other value while :func:`varied` names the layer)."""
    for record in _RECORDS:
        record.append((choice.text, layer.name))
    return choice.other if layer.name in _VARIED else choice.value


@contextlib.contextmanager
def recorded() -> Iterator[list[tuple[str, str]]]:
    """The choices the stand-in's layers made meanwhile, each ``(what it says, layer name)``
    once."""
    record: list[tuple[str, str]] = []
    _RECORDS.append(record)
    try:
        yield record
    finally:
        _RECORDS.remove(record)
        record[:] = list(dict.fromkeys(record))


@contextlib.contextmanager
def varied(layer: str) -> Iterator[None]:
    """Meanwhile the layer named ``layer`` puts its choice's other value where it chooses."""
    _VARIED.add(layer)
    try:
        yield
    finally:
        _VARIED.discard(layer)
