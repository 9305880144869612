"""What a row found on its way that its status does not show: int64 and float64 values narrowed
inside an engine, and the stand-in's remarks (its choice where TensorRT's documentation leaves a
result open). A row with findings keeps its status (``--fail-on narrowing`` fails the run on
them); every report lists them, grouped by the Torch-TensorRT converter that made them.

The sentences are written here (:func:`narrowing`, :func:`remark`) and read back here
(:func:`findings`): the row's evidence keeps them as its notes and remark, so that records of
older runs, whose sentences differ only in what they name, read too."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from trtcheck.results.rows import Row
from trtcheck.status import NARROWING, Status

REMARK = "remark"
NOT_USED = "value not used"
USED = "value used"
ENGINE_OUTPUTS = "the engine's outputs"  # the group of an output handed back narrowed
UNKNOWN = "converter not named"


@dataclass(frozen=True)
class Finding:
    """One finding of a row: ``kind`` (:data:`NARROWING` or :data:`REMARK`), its sentence,
    the Torch-TensorRT converter (the op it converts) and graph node it came from, what was
    narrowed to what (``int64 → float32``) and the range where that is exact."""

    kind: str
    text: str
    converter: str = UNKNOWN
    node: str = ""
    change: str = ""
    exact: str = ""


def narrowing(dtype: str, to: str, node: str, op: str, how: str, exact: str) -> str:
    """``int64 narrowed to float32 inside the engine by cumsum (aten.cumsum.default): … (exact
    while |value| <= 2**24)``: what a converter did to the graph's values of ``dtype``."""
    return f"{dtype} narrowed to {to} inside the engine by {node} ({op}): {how} (exact while {exact})"


def more_narrowings(dtype: str, n: int) -> str:
    """The count of narrowing nodes a row's notes leave out."""
    return f"{dtype} narrowed inside the engine by {n} more nodes"


def handed_back(index: int, engine: str, eager: str, narrowed: bool) -> str:
    """An output the engines hand back in another dtype than eager's."""
    how = "narrowed" if narrowed else "handed back differently"
    return (f"output {index} comes back {engine} where eager gives {eager}: the converters and "
            f"engine {how} it")


def remark(choice: str, layer: str, node: str = "", op: str = "", at: str = "",
           used: bool | None = None) -> str:
    """``the stand-in returns 0 … (layer 'L' of node N, converter aten.x, at model.py:12; value
    not used)``: the stand-in's ``choice`` made by ``layer``, the node and converter that built
    the layer, the user's line it came from, and whether its value reaches an output."""
    owner = f" of node {node}, converter {op}" if node else ""
    where = f", at {at}" if at else ""
    value = "" if used is None else f"; {USED if used else NOT_USED}"
    return f"{choice} (layer '{layer}'{owner}{where}{value})"


_NARROWED = re.compile(r"^(?P<dtype>int64|float64) narrowed to (?P<to>\w+) inside the engine by "
                       r"(?P<node>\S+) \((?P<op>[^)]+)\): .* \(exact while (?P<exact>[^)]*)\)$")
_MORE = re.compile(r"^(?P<dtype>int64|float64) narrowed inside the engine by \d+ more nodes$")
_BACK = re.compile(r"^output \d+ comes back (?P<to>\w+) where eager gives (?P<dtype>\w+): the "
                   r"converters and engine narrowed it$")
# One stand-in remark of a row's remark, which joins them with "; ".
_REMARK = re.compile(r"(?P<text>.*?\(layer '(?P<layer>[^']*)'(?: of node (?P<node>[^,)]+), "
                     r"converter (?P<op>[^,;)]+))?[^)]*\))(?:; |$)")


def findings(row: Row) -> list[Finding]:
    """The row's narrowings (from its notes) and the stand-in's remarks (from its remark)."""
    found = []
    for note in row.evidence.notes:
        if m := _NARROWED.match(note):
            found.append(Finding(NARROWING, note, m["op"], m["node"],
                                 f"{m['dtype']} → {m['to']}", m["exact"]))
        elif m := _MORE.match(note):
            found.append(Finding(NARROWING, note, change=m["dtype"]))
        elif m := _BACK.match(note):
            found.append(Finding(NARROWING, note, ENGINE_OUTPUTS, change=f"{m['dtype']} → {m['to']}"))
    for m in _REMARK.finditer(row.evidence.remark):
        found.append(Finding(REMARK, m["text"].strip(), m["op"] or UNKNOWN, m["node"] or ""))
    return found


def passing_findings(rows: Iterable[Row]) -> list[tuple[Row, Finding]]:
    """The findings of the passing rows (a failing row's notes are in its details already)."""
    return [(r, f) for r in rows if r.status is Status.PASS for f in findings(r)]


def by_converter(found: Iterable[tuple[Row, Finding]]) -> dict[str, list[tuple[Row, Finding]]]:
    """``found`` grouped by converter, in the order first seen."""
    groups: dict[str, list[tuple[Row, Finding]]] = {}
    for row, finding in found:
        groups.setdefault(finding.converter, []).append((row, finding))
    return groups


def narrowed_rows(rows: Iterable[Row]) -> list[Row]:
    """The passing rows with a narrowing, which ``--fail-on narrowing`` fails (``NARROWING`` is
    also the word it takes)."""
    return list({r.key: r for r, f in passing_findings(rows) if f.kind == NARROWING}.values())


def count_words(found: list[tuple[Row, Finding]]) -> str:
    """``2 narrowings and 1 remark on passing rows``."""
    kinds = [(sum(f.kind == k for _, f in found), k) for k in (NARROWING, REMARK)]
    words = " and ".join(f"{n} {k}{'s' if n != 1 else ''}" for n, k in kinds if n)
    return f"{words} on passing rows" if words else ""
