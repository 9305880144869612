"""Markdown report for pull-request comments and job summaries (GitHub-flavoured tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trtcheck.core.traits import TTRT_MIN_BLOCK_SIZE, BackendRef, Kind
from trtcheck.render import findings
from trtcheck.render.abtext import SPEED_IN_CHANGES, side_label
from trtcheck.render.changes import render_changes
from trtcheck.render.escape import md
from trtcheck.render.link import RunLink, commit_of
from trtcheck.render.text import (
    DEPLOY_MEANING,
    DRIFT_MEANING,
    KIND_NOTES,
    MARKDOWN,
    NONE,
    NONFINITE_NOTE,
    PREDICTION_MARK,
    ROW_FIGURES,
    cost_text,
    cut,
    deploy_counts,
    evidence_lines,
    failing_outputs,
    fallback_text,
    headline,
    kinds_present,
    latency_note,
    memory_floors,
    memory_measures,
    no_engine_text,
    num,
    one_clock,
    path_text,
    reduction_text,
    shapes_text,
    stack_facts,
    stack_warnings,
    status_text,
    warned,
)
from trtcheck.results.ab import speed_over_processes
from trtcheck.results.metrics import OUTPUT_METRICS, ROW_METRICS
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.results.verdict import JobVerdict, Judged
from trtcheck.status import FAILING, Status


def render_markdown(judged: Judged, *, link: RunLink | None = None) -> str:
    """The judged record as a Markdown report: environment, counts, accuracy, latency, details.
    ``link`` names the commit the run is about (a pull request's head, as the comment does)."""
    record = judged.record
    sections = [
        "# trtcheck report",
        _environment(record.environment, link, side_label(record.ab, "head")),
        f"> ⚠️ **{md(fallback_text(record))}**" if fallback_text(record) else "",
        render_changes(record),
        _prediction_notice(record),
        _summary(record, judged.verdict),
        _profiles(record),
        _accuracy(record),
        _findings(record),
        _latency(record),
        _drift(record),
        _deploy(record),
        _shapes(record),
        _releases(record),
        _disagreements(record),
        _details(record),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def _environment(env: dict[str, Any], link: RunLink | None, head: str | None) -> str:
    """The versions, the device and the commit (of an ``ab`` record: what its head ran)."""
    sha = commit_of(link, env)
    line = " · ".join([
        f"trtcheck {md(env.get('trtcheck') or NONE)}",
        *stack_facts(env, md),
        f"device {md(env.get('device') or NONE)}",
        f"head {md(head)}" if head else f"commit {md(sha or NONE)}",
    ])
    return "\n\n".join([line, *(f"> {w}" for w in stack_warnings(env, md))])


def _prediction_notice(record: Record) -> str:
    lines = [f"> **{PREDICTION_MARK} Predictions, not measurements.** Each {PREDICTION_MARK} row "
             f"of kind {kind} is {KIND_NOTES[kind]}." for kind in kinds_present(record)]
    return "\n>\n".join(lines)


def _profiles(record: Record) -> str:
    used = {r.profile for r in record.rows}
    rows = [[md(p["name"]), md(p.get("description") or NONE)]
            for p in record.options.get("profiles", []) if p["name"] in used]
    if not rows:
        return ""
    emulated = any(r.kind is Kind.EMULATED for r in record.rows)
    headers = ["profile", "settings, and what emulate predicts under them" if emulated
               else "what the settings ask, and which releases behave so"]
    return f"## Settings profiles\n\n{_table(headers, rows)}{_min_block_size(record)}"


def _min_block_size(record: Record) -> str:
    """A line when Torch-TensorRT ran with another min_block_size than its own default."""
    passed = sorted({str(r.evidence.settings["min_block_size"]) for r in record.rows
                     if r.evidence.settings.get("min_block_size") not in (None, TTRT_MIN_BLOCK_SIZE)})
    if not passed:
        return ""
    return (f"\n\nTorch-TensorRT ran with `min_block_size` = {md(', '.join(passed))}, not its default of "
            f"{TTRT_MIN_BLOCK_SIZE}: blocks of fewer TensorRT-convertible ops became engines here, where "
            "a compile with the default leaves them (or a whole small graph) to PyTorch.")


def _summary(record: Record, verdict: JobVerdict) -> str:
    counts = record.status_counts()
    table = _table([str(s) for s, _ in counts] + ["total"],
                   [[f"{n}{no_engine_text(record, s)}" for s, n in counts] + [str(len(record.rows))]])
    result, why = verdict.verdict, verdict.why
    mode = "on" if record.xpass_fails else "off"
    return (f"## Summary\n\n{table}\n\n**Result: {result.title}**: {md(why)} "
            f"(strict xfail {mode}).")


def _accuracy(record: Record) -> str:
    rows = [
        [md(r.case_id), _backend(r), md(r.profile), _status(r, record.fails(r)),
         md(path_text(record, r) or NONE), *(num(r.worst[m.field]) for m in ROW_METRICS)]
        for r in record.rows
    ]
    headers = ["case", "backend", "profile", "status", "path",
               *(str(m.row_label) for m in ROW_METRICS)]
    if not rows:
        return ""
    note = f"\n\n{NONFINITE_NOTE}" if any(warned(r) for r in record.rows) else ""
    # what an untimed row's compile did (graph breaks): a timed row's is under Latency
    remarks = "".join(f"\n\n- {md(r.case_id)} · {_backend(r)} · {md(r.profile)}: "
                      f"{md(r.evidence.remark)}"
                      for r in record.rows if r.latency is None and r.evidence.remark)
    return f"## Accuracy\n\n{_table(headers, rows)}{note}{remarks}"


def _findings(record: Record) -> str:
    """The passing rows' narrowings and remarks, by converter."""
    found = findings.lines(record, md)
    return "\n".join([f"## {findings.TITLE}", "", findings.INTRO, *found]) if found else ""


def _latency(record: Record) -> str:
    memory = any(r.memory for r in record.rows)
    # On one clock the device figures repeat the caller's: only the caller's are shown.
    one = one_clock(record)
    columns = [c for c in ROW_FIGURES if MARKDOWN in c.reports and (memory or not c.memory)
               and not (one and c.figure and c.figure.device) and c.shown(record)]
    rows = [[md(r.case_id), _backend(r), md(r.profile), *(c.text(r) for c in columns)]
            for r in record.rows if r.latency is not None]
    headers = ["case", "backend", "profile",
               *(c.figure.unclocked if one and c.figure else c.label for c in columns)]
    if not rows:
        return ""
    over = speed_over_processes(record)
    parts = [f"## Latency\n\n{_table(headers, rows)}",
             SPEED_IN_CHANGES + " This table is the head's first process alone." if over
             else latency_note(record)]
    if memory:
        parts.append(f"Memory: {md(', '.join(memory_measures(record)))} of one call after "
                     "warm-up, above what was in use before it (first-call allocations such as "
                     "cuBLAS workspaces left out; the backend's side holds what the compiled "
                     "module keeps); the ratio is backend ÷ eager, for measured rows only, and "
                     f"only where both exceed {memory_floors()}, else —.")
    parts += [f"- {md(n)}" for r in record.rows if r.memory for n in r.memory.notes]
    parts += [f"- {md(r.case_id)} · {_backend(r)}: {md(cost_text(r))}"
              for r in record.rows if cost_text(r)]
    parts += [f"- {md(r.case_id)} · {_backend(r)}: {md(r.evidence.remark)}"
              for r in record.rows if r.latency is not None and r.evidence.remark]
    compiled_as = dict.fromkeys(f"{r.backend} compiled as {r.evidence.details['compiled_as']}"
                                for r in record.rows if r.evidence.details.get("compiled_as"))
    parts += [f"- {md(how)}" for how in compiled_as]
    return "\n\n".join(parts)


def _drift(record: Record) -> str:
    """The autocast RFC's runtime dtype drift: one line per row that made the call."""
    rows = [[md(r.case_id), _backend(r), md(r.profile), md(r.evidence.drift["change"]),
             md(r.evidence.drift["outcome"]), _drift_detail(r.evidence.drift.get("detail"))]
            for r in record.rows if r.evidence.drift]
    if not rows:
        return ""
    kinds = dict.fromkeys(r.kind for r in record.rows if r.evidence.drift)
    meaning = "\n".join(f"- {kind}: {md(DRIFT_MEANING[kind])}" for kind in kinds)
    return ("## Runtime dtype drift\n\nEach compiled module called once more with its int32/int64 "
            "and float32/float64 inputs swapped for the sibling dtype. The autocast RFC allows a "
            "clear error or a cast that leaves the caller's tensors untouched; a wrong result or "
            f"a modified input fails the row.\n\n{meaning}\n\n"
            + _table(["case", "backend", "profile", "inputs", "outcome", "detail"], rows))


def _deploy(record: Record) -> str:
    """The deploy stage: each compiled row's artifact, saved, loaded in a fresh process and
    compared again, one line per row and format."""
    rows = [[md(r.case_id), _backend(r), md(r.profile), md(e.get("format")), md(e.get("status")),
             f"{e['size_bytes'] / 1000:.1f} kB" if e.get("size_bytes") is not None else "",
             f"{e['load_s']:.2f} s" if e.get("load_s") is not None else "",
             md(", ".join(f"{k} {v}" for k, v in (e.get("kept") or {}).items())),
             _deploy_detail(e) if e.get("status") != "pass" else ""]
            for r in record.rows for e in r.evidence.deploy]
    if not rows:
        return ""
    kinds = dict.fromkeys(r.kind for r in record.rows if r.evidence.deploy)
    meaning = " ".join(f"{md(DEPLOY_MEANING[k][:1].upper() + DEPLOY_MEANING[k][1:])}."
                       for k in kinds if k in DEPLOY_MEANING)
    headers = ["case", "backend", "profile", "format", "deploy", "size", "load", "outputs kept",
               "why"]
    return ("## Deploy round trip\n\nEach compiled row saved as `torch_tensorrt.save` saves it, "
            "loaded in a fresh process that imports only torch and torch_tensorrt, called at "
            f"the case's inputs and its declared shapes' extremes, and compared again: "
            f"{md(deploy_counts(record))}. {meaning}\n\n{_table(headers, rows)}")


def _deploy_detail(entry: dict[str, Any]) -> str:
    """Why a round trip did not pass, for one table cell: cut, with a pointer to the whole."""
    text = str(entry.get("message") or "")
    if len(text) <= DETAIL_WIDTH:
        return md(text)
    return f"{md(cut(text, DETAIL_WIDTH))} (whole in results.json, the row's evidence.deploy)"


DETAIL_WIDTH = 200  # a drift detail's characters in its table cell; results.json keeps it whole


def _drift_detail(text: str | None) -> str:
    """A drift detail for one table cell: cut, with a pointer to the whole text."""
    if not text:
        return NONE
    if len(text) <= DETAIL_WIDTH:
        return md(text)
    return f"{md(cut(text, DETAIL_WIDTH))} (whole in results.json, the row's evidence.drift.detail)"


def _shapes(record: Record) -> str:
    """The input shapes each row of a case declaring dynamic shapes ran at."""
    rows = [[md(r.case_id), _backend(r), md(r.profile), md(shapes_text(r.shapes))]
            for r in record.rows if r.shapes]
    if not rows:
        return ""
    return ("## Dynamic shapes\n\nA case declaring dynamic shapes runs at its example shape, then "
            "at the lowest and the highest of each declared range (its declared max; for a "
            "dimension declared without a max, twice the example); a row stops at the first "
            "shape that fails.\n\n"
            + _table(["case", "backend", "profile", "shapes run (example first)"], rows))


def _releases(record: Record) -> str:
    """With several ``--torch-tensorrt`` releases: each case's status on each, side by side."""
    releases = list(dict.fromkeys(r.backend for r in record.rows
                                  if BackendRef.parse(r.backend).release and r.kind is Kind.LOWERED))
    if len(releases) < 2:
        return ""
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for r in record.rows:
        if r.backend in releases:
            cells.setdefault((r.case_id, r.profile), {})[r.backend] = _status(r, r.status in FAILING)
    rows = [[md(case), md(profile), *(cells[(case, profile)].get(b, NONE) for b in releases)]
            for case, profile in cells]
    headers = ["case", "profile", *(md(BackendRef.parse(b).release or "") for b in releases)]
    return ("## Torch-TensorRT releases\n\nThe lowering backend on each release named with "
            f"`--torch-tensorrt` ({PREDICTION_MARK} predictions through Torch-TensorRT's code, "
            "not TensorRT).\n\n"
            + _table(headers, rows))


def _disagreements(record: Record) -> str:
    """Where the guide's rules (emulate) and a Torch-TensorRT release's own lowering disagree
    on a case: how a user learns of a bug in Torch-TensorRT itself."""
    found: dict[tuple[str, str], dict[str, list[Row]]] = {}
    for r in record.rows:
        if r.kind in (Kind.EMULATED, Kind.LOWERED):
            found.setdefault((r.case_id, r.profile), {}).setdefault(r.kind, []).append(r)
    lines, ran = [], record.releases()
    for (case, profile), rows in found.items():
        for low in rows.get(Kind.LOWERED, []):
            for rule in rows.get(Kind.EMULATED, []):
                if _passes(rule) == _passes(low):
                    continue
                version = (low.evidence.versions.get("torch_tensorrt")
                           or BackendRef.parse(low.backend).release
                           or next(iter(ran.get(low.backend, [])), None))
                ops = _complex_ops(record, case)
                release = f"Torch-TensorRT {md(version)}'s" if version else "Torch-TensorRT's"
                lines.append(f"- {md(case)} · {md(profile)}{f' ({md(ops)})' if ops else ''}: the "
                             f"guide's rule (emulate) predicts {md(_outcome(rule))}; {release} "
                             f"lowering gives {md(_outcome(low))}")
    if not lines:
        return ""
    return ("## Where emulate and lowering disagree\n\n`emulate` applies the documented rules; "
            "`lowering` runs Torch-TensorRT's own code. Where one passes and the other does not, "
            "either the guide or that release is wrong: a failure under `lowering` alone is "
            "likely a bug in Torch-TensorRT.\n\n" + "\n".join(lines))


def _passes(row: Row) -> bool:
    return row.status in (Status.PASS, Status.XPASS)


def _outcome(row: Row, width: int = 160) -> str:
    """``pass``, or ``fail: <message>`` cut at ``width``."""
    if _passes(row):
        return "pass"
    return cut(headline(row), width)


def _complex_ops(record: Record, case_id: str) -> str:
    """The complex ops the case's analysis found, by name."""
    ops = ((record.analyses.get(case_id) or {}).get("complex") or {}).get("ops") or []
    return ", ".join(dict.fromkeys(str(op.get("op")) for op in ops))


# Stages that fail before any backend runs: every row of the case carries the same error.
_CASE_STAGES = frozenset({"import", "collect", "build", "eager", "export"})


def _details(record: Record) -> str:
    """A section per row that did not pass or passed with NaN or Inf; a case that failed before
    any backend ran (build, eager, export) gets one section for all its rows, not the same error
    once per profile."""
    groups: dict[tuple[object, ...], list[Row]] = {}
    for r in record.rows:
        if r.status is Status.PASS and not warned(r):
            continue
        whole_case = r.stage in _CASE_STAGES
        key = (r.case_id, r.status, r.stage, r.message) if whole_case else (id(r),)
        groups.setdefault(key, []).append(r)
    parts = [_detail(rows[0], len(rows)) for rows in groups.values()]
    return "## Details\n\n" + "\n\n".join(parts) if parts else ""


def _detail(row: Row, rows: int = 1) -> str:
    where = (f"every backend and profile ({rows} rows)" if rows > 1
             else f"{_backend(row)} · {md(row.profile)}")
    lines = [f"### {md(row.case_id)} · {where}", "", f"- {md(headline(row))}"]
    if row.location:
        lines.append(f"- location: {md(row.location)}")
    if row.shapes:
        lines.append(f"- shapes run: {md(shapes_text(row.shapes))}")
    reduced = reduction_text(row, md)
    if reduced:
        lines.append(f"- {reduced}")
    if row.evidence.fallbacks:
        lines.append(f"- ran in PyTorch: {md(', '.join(row.evidence.fallbacks))}")
    lines += [f"- {md(line)}" for line in evidence_lines(row)]
    if row.prediction:
        lines.append(f"- {PREDICTION_MARK} {md(KIND_NOTES[row.kind])}")
    outputs = [_output(o) for o in failing_outputs(row)]
    if outputs:
        headers = ["output", "kind", "dtype", "shape",
                   *(str(m.output_label) for m in OUTPUT_METRICS), "note"]
        lines += ["", _table(headers, outputs)]
    return "\n".join(lines)


def _output(o: dict[str, Any]) -> list[str]:
    note = o.get("message") or ("int64 values outside int32 range" if o.get("int32_overflow")
                                else "")
    return [md(o.get("path") or NONE), md(o.get("kind") or NONE),
            md(_change(o.get("eager_dtype"), o.get("dtype"))),
            md(_change(_shape(o.get("eager_shape")), _shape(o.get("shape")))),
            *(num(o.get(m.field)) for m in OUTPUT_METRICS), md(note)]


def _change(eager: object, backend: object) -> str:
    """``eager`` when both agree, else ``eager → backend``."""
    before, after = (NONE if x is None else str(x) for x in (eager, backend))
    return before if before == after else f"{before} → {after}"


def _shape(shape: Sequence[int] | None) -> str:
    if shape is None:
        return NONE
    return "×".join(str(d) for d in shape) or "scalar"


def _backend(row: Row) -> str:
    return md(row.backend) + (f" {PREDICTION_MARK}" if row.prediction else "")


def _status(row: Row, failing: bool) -> str:
    return f"**{row.status}**" if failing else status_text(row)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub pipe table; cells are escaped already (:func:`md`). Columns are not padded:
    a table of 10,000 rows renders the same, and tabulate's width and type pass over every
    cell was most of the time of writing a big report."""
    lines = [f"| {' | '.join(headers)} |", f"|{'|'.join('---' for _ in headers)}|"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    return "\n".join(lines)
