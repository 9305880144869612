"""JUnit XML: one suite per zoo file, one testcase per row, key metrics in each system-out.

A testcase is named after its case id without the file part (``model[variant]``), then the
backend, then ``:profile`` when the profile is not ``default``; parts that are ``-`` (rows
made before a backend or profile applied) are left out. A prediction's name ends with
``[prediction: KIND]`` and its failure or error message starts with it, so that no CI test
view shows a prediction as a TensorRT result. Its classname is the zoo file as a
dotted module path, so name and classname together are unique for every row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, NamedTuple

from trtcheck.core.traits import NO_BACKEND
from trtcheck.render import findings
from trtcheck.render.changes import change_text
from trtcheck.render.escape import plain, xml_text
from trtcheck.render.text import (
    KIND_NOTES,
    NO_ENGINE_NOTE,
    NONE,
    NONFINITE_MARK,
    ROW_FIGURES,
    deploy_text,
    drift_text,
    failure_lines,
    fallback_text,
    headline,
    nonfinite_text,
    num,
    path_text,
)
from trtcheck.results.baseline import OUTPUT_CHANGED, PROCESSES, read
from trtcheck.results.control import distrust
from trtcheck.results.findings import findings as of_row
from trtcheck.results.findings import narrowed_rows
from trtcheck.results.metrics import ROW_METRICS
from trtcheck.results.record import Record
from trtcheck.results.rows import NO_PROFILE, Row, RowKey
from trtcheck.results.verdict import fails_on, gate_of
from trtcheck.status import ERRORS, NARROWING, OUTPUT_CHANGE, Status

DEFAULT_SUITE = "trtcheck"
_UNSET = (NO_PROFILE, "default")
_SKIPPED = frozenset({Status.SKIPPED, Status.UNSUPPORTED, Status.XFAIL})


def render_junit(record: Record) -> str:
    """The record as a JUnit XML document: fail (and xpass under strict xfail) are failures;
    error, timeout and crash are errors; skipped, unsupported and xfail are skipped."""
    suites: dict[str, list[Row]] = {}
    for row in record.rows:
        suites.setdefault(row.file or DEFAULT_SUITE, []).append(row)
    properties = _properties(record.environment)
    if fallback_text(record):
        properties["backend fallback"] = plain(fallback_text(record))
    started = record.environment.get("started")
    totals: Counter[str | None] = Counter()
    seconds = 0.0
    elements = []
    regressed = _gated_changes(record)
    for name, rows in suites.items():
        cases = [_testcase(record, r, regression=regressed.get(r.key))
                 for r in rows]
        counts = Counter(c.outcome for c in cases)
        time = sum(c.seconds for c in cases if c.seconds)
        totals += counts
        seconds += time
        props = [_element("property", {"name": key, "value": value})
                 for key, value in {**properties, **_prediction_property(rows)}.items()]
        elements.append(_element(
            "testsuite",
            {"disabled": "0", "errors": str(counts["error"]), "failures": str(counts["failure"]),
             "name": plain(name), "skipped": str(counts["skipped"]), "tests": str(len(cases)),
             "time": str(time), "timestamp": plain(started or "") or None},
            [_element("properties", {}, props, depth=2), *(c.xml for c in cases)], depth=1))
    root = _element("testsuites", {"disabled": "0", "errors": str(totals["error"]),
                                   "failures": str(totals["failure"]),
                                   "tests": str(len(record.rows)), "time": str(seconds)}, elements)
    return f'<?xml version="1.0" ?>\n{root}\n'


# Written directly, as ElementTree writes a tree indented by tabs (``ET.indent``): building the
# tree first (junit-xml's TestCase and TestSuite, then ElementTree's serialiser) was most of the
# time of writing the report of a big run.
# What XML escapes in text and, beyond that, in an attribute's value; ``&`` first.
_IN_TEXT = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_IN_ATTRIBUTE = (*_IN_TEXT, ('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))


def _escape(text: str, entities: tuple[tuple[str, str], ...]) -> str:
    for char, entity in entities:
        if char in text:  # most text holds none: a pattern's scan took longer than these
            text = text.replace(char, entity)
    return text


def _element(tag: str, attributes: Mapping[str, str | None], content: str | list[str] = "",
             depth: int = 0) -> str:
    """An XML element: its attributes in order (None left out), then its text, escaped, or its
    children (already written), each on a line of its own indented one tab deeper than
    ``depth``; an element with neither is closed at once."""
    head = "<" + tag + "".join(f' {key}="{_escape(value, _IN_ATTRIBUTE)}"'
                               for key, value in attributes.items() if value is not None)
    if not content:
        return head + " />"
    if isinstance(content, str):
        return f"{head}>{_escape(content, _IN_TEXT)}</{tag}>"
    inner, outer = "\n" + "\t" * (depth + 1), "\n" + "\t" * depth
    return f"{head}>{inner}{inner.join(content)}{outer}</{tag}>"


class _Case(NamedTuple):
    """A testcase written, with what its suite counts of it."""

    xml: str
    outcome: str | None  # "failure", "error", "skipped", or None for a pass
    seconds: float


def _prediction_property(rows: list[Row]) -> dict[str, str]:
    """A suite header that says so when some of its rows are predictions, not measurements,
    and when some passed with no TensorRT engine built."""
    counts = {kind: sum(r.kind is kind for r in rows) for kind in KIND_NOTES}
    passed = sum(r.no_engine for r in rows)
    return {**{f"predictions ({kind})": f"{n} of {len(rows)} rows are {KIND_NOTES[kind]}"
               for kind, n in counts.items() if n},
            **({"no engine": f"{passed} of {len(rows)} rows {NO_ENGINE_NOTE}"} if passed else {})}


def testcase_name(row: Row) -> str:
    """``model[variant] backend`` or ``model[variant] backend:profile``, then
    ``[prediction: KIND]`` for a prediction, which CI test views show with the name."""
    name = row.case_id.partition("::")[2] or row.case_id
    if row.backend != NO_BACKEND:
        name += f" {row.backend}"
    if row.profile not in _UNSET:
        name += f":{row.profile}"
    return f"{name} {_prediction(row)}".rstrip()


def _prediction(row: Row) -> str:
    return f"[prediction: {row.kind}]" if row.prediction else ""


def _gated_changes(record: Record) -> dict[RowKey, tuple[str, str]]:
    """The rows whose change fails the job, each with its kind and the words of its change: a
    regression (``--fail-on regression``), a passing row narrowed inside an engine (``--fail-on
    narrowing``) or, of an ``ab`` job, changed eager outputs (``--fail-on output-change``); such a
    row is a failing testcase whatever its status."""
    found: dict[RowKey, tuple[str, str]] = {}
    if NARROWING in fails_on(record.options):
        found = {r.key: (NARROWING, next(f.text for f in of_row(r) if f.kind == NARROWING))
                 for r in narrowed_rows(record.rows)}
    diff = read(record.baseline)
    if diff is None:
        return found
    against = "the base" if diff.rule == PROCESSES else "the baseline"
    if OUTPUT_CHANGE in fails_on(record.options):
        found |= {RowKey(c.case_id, c.backend, c.profile): (OUTPUT_CHANGE, c.eager_text)
                  for c in diff.changes if c.eager == OUTPUT_CHANGED}
    if gate_of(record.options)[0] and not distrust(record):
        found |= {RowKey(c.case_id, c.backend, c.profile):
                  ("regression", f"{diff.metric} regression against {against}: "
                                 f"{change_text(c.latency)}")
                  for c in diff.regressions if c.latency is not None}
    return found


def _testcase(record: Record, row: Row, *,
              regression: tuple[str, str] | None = None) -> _Case:
    message, kind = plain(f"{_prediction(row)} {headline(row)}".lstrip()), row.status.value
    outcome, detail = None, ""
    if row.status is Status.FAIL or (row.status is Status.XPASS and record.xpass_fails):
        outcome, detail = "failure", xml_text("\n".join(failure_lines(row)))
    elif regression is not None and row.status not in ERRORS:
        outcome, detail = "failure", ""
        kind, message = regression[0], plain(regression[1])
    elif row.status in ERRORS:
        outcome, detail = "error", xml_text(row.traceback) if row.traceback else ""
    elif row.status in _SKIPPED:
        outcome, kind = "skipped", "skipped"
    children = [_element(outcome, {"type": kind, "message": message or None}, detail)] if outcome else []
    found = findings.row_lines(row)
    if found:  # trtcheck.narrowing and trtcheck.remark, one property each
        children.insert(0, _element("properties", {}, [
            _element("property", {"name": f"trtcheck.{line.split(': ', 1)[0]}",
                                  "value": plain(line.split(": ", 1)[1])}) for line in found],
            depth=3))
    stdout = xml_text(_system_out(record, row))
    if stdout:
        children.append(_element("system-out", {}, stdout))
    seconds = sum(row.timings.values())
    classname = plain((row.file or DEFAULT_SUITE).removesuffix(".py").replace("/", "."))
    attributes = {
        "name": plain(testcase_name(row)),  # plain text is valid in XML attributes
        "time": f"{seconds:f}" if seconds else None,
        "classname": classname or None,
        "file": plain(row.source or "") or None,
        "line": str(row.line) if row.line else None,
    }
    return _Case(_element("testcase", attributes, children, depth=2), outcome, seconds)


def _system_out(record: Record, row: Row) -> str:
    nonfinite = nonfinite_text(row)
    facts = {
        "status": str(row.status),
        "backend": row.backend,
        "profile": row.profile,
        "stage": row.stage or NONE,
        "location": row.location or NONE,
        "path": path_text(record, row) or NONE,
        "fallbacks": ", ".join(row.evidence.fallbacks) or NONE,
        "dtype drift": drift_text(row) or NONE,
        "deploy": deploy_text(row) or NONE,
        "NaN/Inf": f"{NONFINITE_MARK} {nonfinite}" if nonfinite else NONE,
        **{m.row_label: num(row.worst[m.field]) for m in ROW_METRICS},
        **{c.label: c.text(row) for c in ROW_FIGURES
           if (row.memory or not c.memory) and c.shown(record)},
    }
    lines = [f"{key}: {value}" for key, value in facts.items() if value != NONE]
    if row.memory:
        lines += [f"memory ({row.memory.measure}) note: {n}" for n in row.memory.notes]
    if row.status is Status.XPASS and not record.xpass_fails:
        lines.append("note: xpass does not fail the run without strict xfail")
    lines += findings.row_lines(row)
    if row.prediction:
        lines.append(f"PREDICTION: this row is {KIND_NOTES[row.kind]}.")
    return "\n".join(lines)


def _properties(env: dict[str, Any]) -> dict[str, str]:
    return {
        key: plain(env.get(key) or default)
        for key, default in (
            ("trtcheck", "unknown"),
            ("torch", "unknown"),
            ("torch_tensorrt", "not installed"),
            ("device", "unknown"),
            ("git_commit", "unknown"),
        )
    }
