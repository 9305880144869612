"""Text shared by the renderers: numbers and row facts made short, the words every report uses
(prediction marks, the verdict's line, the latency columns). Untrusted text is made safe by
:mod:`trtcheck.render.escape`."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trtcheck.core.traits import EMULATE_SCOPE, Kind, traits_of
from trtcheck.render.escape import md, plain
from trtcheck.results.ab import speed_over_processes
from trtcheck.results.figures import (
    ALLOCATOR,
    LATENCY_FIGURES,
    MIB,
    RATIO_FLOOR,
    RESIDENT,
    LatencyFigure,
)
from trtcheck.results.metrics import OUTPUT_METRICS
from trtcheck.results.nonfinite import MARK as NONFINITE_MARK
from trtcheck.results.record import Record
from trtcheck.results.rows import Row
from trtcheck.status import Status

NONE = "—"
NOT_MEASURED = "not measured"  # a memory figure the device or backend could not take


PREDICTION_MARK = "†"
FALLBACK_NOTE = "fallback"  # a passing row some of whose ops ran in PyTorch
NO_SPEEDUP = "n/a (prediction)"

# What every report says of a row whose backend predicts rather than measures.
KIND_NOTES = {
    Kind.EMULATED: ("a prediction of TensorRT's dtype behaviour, made by trtcheck's emulate "
                    f"backend with PyTorch, not a TensorRT measurement; {EMULATE_SCOPE}"),
    Kind.LOWERED: ("a prediction: Torch-TensorRT's own code ran (its converters, over a "
                   "TensorRT stand-in that builds and runs each engine with PyTorch; with "
                   "--lowering-dryrun its lowering and partitioning only, each TensorRT block "
                   "run by PyTorch), so the numbers are PyTorch's, not TensorRT's kernels; not "
                   "a TensorRT measurement"),
}

# Where torch, Torch-TensorRT and TensorRT came from, under the Action (``stack.sources``).
SOURCE_WORDS = {"runner": "from the runner", "action": "installed by the Action"}
STACK = (("torch", "torch"), ("torch_tensorrt", "Torch-TensorRT"), ("tensorrt", "TensorRT"))

UNSTABLE_MARK = "⚠ unstable"
def num(x: float | str | None, unit: str = "") -> str:
    """A number to three significant digits, or ``—`` when there is none."""
    if x is None:
        return NONE
    if isinstance(x, str):  # NaN and infinities are saved to JSON as strings
        return plain(x) + unit
    return f"{x:.3g}{unit}"


def _mib(n: int | None) -> str:
    return NOT_MEASURED if n is None else f"{n / 2**20:.3g}"


def memory_floors() -> str:
    """The memory ratio's floors in words: "1 MiB (allocator) or 16 MiB (resident)"."""
    names = {ALLOCATOR: "allocator", RESIDENT: "resident"}
    return " or ".join(f"{floor // MIB} MiB ({names[measure]})"
                       for measure, floor in RATIO_FLOOR.items())


MARKDOWN, HTML = "report.md", "report.html"  # the reports whose tables choose among the columns


@dataclass(frozen=True)
class Column:
    """A figure of a row that the reports show: its label, its text for a row (``—`` when the
    row has none), and which reports' tables show it (JUnit's system-out shows every one a row
    has); ``memory``: a memory figure, in a table only when some row measured memory."""

    label: str
    text: Callable[[Row], str]
    reports: tuple[str, ...] = (MARKDOWN, HTML)
    memory: bool = False
    figure: LatencyFigure | None = None  # the latency figure it shows, if one
    speed: bool = False  # a speed figure: a latency or the speedup

    def shown(self, record: Record) -> bool:
        """Whether a table of ``record`` shows it: not a speed figure of an ``ab`` record,
        whose speed is its figures over processes (:func:`speed_over_processes`)."""
        return not (self.speed and speed_over_processes(record))


def _memory(read: Callable[[Any], int | None]) -> Callable[[Row], str]:
    return lambda row: _mib(read(row.memory)) if row.memory is not None else NOT_MEASURED


def _memory_ratio(row: Row) -> str:
    """The ratio, ``—`` below its floors or for a prediction, or not measured."""
    m = row.memory
    if m is None or m.eager is None or m.backend is None:
        return NOT_MEASURED
    return num(row.memory_ratio, "×")


# Every latency, speedup, compile and memory figure of a row, declared once: report.md's
# latency table, report.html's memory table and JUnit's system-out are made from this list.
# The first calls' peaks include one-time allocations (cuBLAS workspaces, lazy
# initialisation), so the tables keep to the steady-state peaks and JUnit names them as such.
ROW_FIGURES: tuple[Column, ...] = (
    *(Column(f.label, functools.partial(lambda f, row: num(f.of(row.latency)), f), figure=f,
             speed=True)
      for f in LATENCY_FIGURES),
    Column("speedup [95% interval]", lambda row: speedup_text(row), speed=True),
    Column("compile s", lambda row: num(row.timings.get("compile"))),
    Column("eager peak MiB", _memory(lambda m: m.eager), memory=True),
    Column("backend peak MiB", _memory(lambda m: m.backend), memory=True),
    Column("memory ratio", _memory_ratio, memory=True),
    Column("engine MiB", _memory(lambda m: m.engine), reports=(HTML,), memory=True),
    Column("eager first-call peak MiB", _memory(lambda m: m.eager_first), reports=(),
           memory=True),
    Column("backend first-call peak MiB", _memory(lambda m: m.backend_first), reports=(),
           memory=True),
)


def memory_measures(record: Record) -> list[str]:
    """What the memory figures of the record's rows are (allocator or resident peaks)."""
    return list(dict.fromkeys(r.memory.measure for r in record.rows if r.memory is not None))


def cost_text(row: Row) -> str:
    """``export adds 0.12 ms a call [0.11–0.13]``: the compared callable's own cost, or ``""``."""
    cost = row.latency.cost if row.latency is not None else None
    if cost is None:
        return ""
    return (f"{cost.label} adds {num(cost.ms)} ms a call [{num(cost.low_ms)}–{num(cost.high_ms)}] "
            "(the exported program's module against the model; not a speedup)")


def speedup_text(row: Row) -> str:
    """The row's speedup with its interval and instability, or why it has none."""
    if row.prediction:
        return NO_SPEEDUP
    lat = row.latency
    if lat is None:
        return NONE
    interval = lat.interval
    text = num(lat.speedup, "×") + (f" [{num(interval[0])}–{num(interval[1])}]" if interval else "")
    return f"{text} {UNSTABLE_MARK}" if lat.unstable else text


def headline(row: Row) -> str:
    """``status at stage: message``: what happened to a row, in one line of untrusted text."""
    status = f"{row.status} {NONFINITE_MARK}" if warned(row) else str(row.status)
    where = f"{status} at {row.stage}" if row.stage else status
    return f"{where}: {row.message}" if row.message else where


def path_text(record: Record, row: Row) -> str:
    """The dtype path the row's backend took, else the case's analysed path; ``""`` if unknown
    or if the backend does not rewrite the graph."""
    traits = traits_of(row.backend)
    if traits is None or not traits.rewrites:
        return ""
    steps = row.evidence.path or (record.analyses.get(row.case_id) or {}).get("path") or []
    return "+".join(str(s) for s in steps)


# What a runtime dtype drift outcome means for each kind of backend.
DRIFT_MEANING = {
    Kind.MEASURED: "the backend's own answer when called with the sibling dtype",
    Kind.EMULATED: "emulate casts at the engine boundary, as the autocast RFC's rule says",
    Kind.LOWERED: ("lowering runs its TensorRT blocks with PyTorch, so it cannot show TensorRT's "
                   "runtime input checks: an error or a cast here is Torch-TensorRT's Python "
                   "runtime, not the engine's"),
}


def drift_text(row: Row) -> str:
    """``int64 → int32: clear error (…)``, or ``""`` when the row made no drift call."""
    d = row.evidence.drift
    if not d:
        return ""
    return f"{d['change']}: {d['outcome']}" + (f" ({d['detail']})" if d.get("detail") else "")


def status_text(row: Row) -> str:
    """The row's status, marked when it passed with ops left to PyTorch, and with
    :data:`NONFINITE_MARK` when it passed with NaN or Inf in an output."""
    fell_back = row.status is Status.PASS and row.evidence.fallbacks
    text = f"{row.status} ({FALLBACK_NOTE})" if fell_back else str(row.status)
    return f"{text} {NONFINITE_MARK}" if warned(row) else text


# What a pass that built no TensorRT engine is (:attr:`Row.no_engine`), where a report says so.
NO_ENGINE_NOTE = "passed with no TensorRT engine built: every graph ran in PyTorch"


def no_engine_text(record: Record, status: Status) -> str:
    """``" (3 with no engine)"``: how many of the record's rows of ``status`` built no TensorRT
    engine (:attr:`Row.no_engine`), said after their count; ``""`` for none."""
    n = sum(r.no_engine for r in record.rows if r.status is status)
    return f" ({n} with no engine)" if n else ""


def nonfinite_text(row: Row) -> str:
    """``""``, or the NaN and Inf in the row's eager and backend outputs, in words."""
    return row.nonfinite.describe(len(row.outputs))


def cut(text: str, width: int) -> str:
    """``text``, cut to ``width`` characters with an ellipsis where it is longer."""
    return text if len(text) <= width else text[:width - 1] + "…"


def evidence_lines(row: Row) -> list[str]:
    """What the backend found on its way, for a row shown whatever its status: its notes, then
    the stage its compile reached (the lowering backend's converter stage)."""
    stage = row.evidence.details.get("stage")
    return [*row.evidence.notes, *([f"stage reached: {stage}"] if stage else [])]


def shortened(row: Row, text: str, width: int) -> str:
    """``text`` (the row's message or headline) cut to ``width``, but with the row's NaN and
    Inf counts, which end it, kept whole."""
    words = nonfinite_text(row)
    if not words or not text.endswith(words):
        return cut(text, width)
    head = text[:-len(words)]
    core = head.rstrip("; :")
    return f"{cut(core, width)}{head[len(core):]}{words}" if core else text


def warned(row: Row) -> bool:
    """Whether the row passed with NaN or Inf in eager's or the backend's output."""
    return row.status is Status.PASS and bool(row.nonfinite)


NONFINITE_NOTE = (f"{NONFINITE_MARK}: the row passed, but eager's or the backend's output holds "
                  "NaN or Inf (at the same positions in both); `nan = \"fail\"` fails such rows.")


def fallback_text(record: Record) -> str:
    """``""``, or which backend ran instead of the default one, and why."""
    return str(record.options.get("fallback_note") or "")


def kinds_present(record: Record) -> list[Kind]:
    """The prediction kinds among the record's rows, in a fixed order."""
    present = {r.kind for r in record.rows}
    return [k for k in KIND_NOTES if k in present]


def failing_outputs(row: Row) -> list[dict[str, Any]]:
    """The outputs of a row that did not match eager."""
    return [o for o in row.outputs if not o.get("passed")]


def failure_lines(row: Row) -> list[str]:
    """One line per output that did not match, with the tolerance that would have passed."""
    return [f"{o.get('path')}: {o.get('message') or 'mismatch'} ("
            + ", ".join(f"{m.output_label} {num(o.get(m.field))}" for m in OUTPUT_METRICS) + ")"
            for o in failing_outputs(row)]


def one_clock(record: Record) -> bool:
    """Whether every timed row's device figures are its caller figures: each call timed on its
    own by the same host clock (``method`` ``calls`` on a CPU), so one figure stands for both."""
    timed = [r.latency for r in record.rows if r.latency is not None]
    return bool(timed) and all(
        lat.method == "calls" and lat.eager_device is not None and lat.backend_device is not None
        and lat.eager_device.timer == lat.eager.timer for lat in timed)


_METHOD_WORDS = {
    "calls": ("each call timed on its own, the device idle before it (GPU time between CUDA "
              "events on CUDA, `perf_counter` on CPU)", "calls"),
    "blocks": ("time per call over timed blocks of back-to-back calls (GPU time between CUDA "
               "events on CUDA, `perf_counter` on CPU)", "blocks"),
}


def latency_note(record: Record, escape: Callable[[object], str] = md) -> str:
    """What the latency figures of ``record`` are, from how its rows say they were timed (each
    row's ``method`` and ``schedule``), in Markdown; ``escape`` makes backend names safe."""
    timed = [r for r in record.rows if r.latency is not None]
    methods = list(dict.fromkeys(r.latency.method for r in timed if r.latency))
    serial = list(dict.fromkeys(r.backend for r in timed
                                if r.latency and r.latency.schedule == "serial"))
    if one_clock(record):
        parts = ["*ms*: host time of one call until its result is ready, each call timed on its "
                 "own with `perf_counter`; on a CPU that is the device's time too, so one figure "
                 "stands for both."]
    else:
        parts = ["*caller*: host time of one call until its result is ready, launch overhead "
                 "included; *device*: " + "; or ".join(
                     _METHOD_WORDS.get(m, (m, m))[0] for m in methods) + "."]
    units = " and ".join(_METHOD_WORDS.get(m, (m, m))[1] for m in methods) or "calls"
    parts.append(f"Eager's and the backend's {units} alternate"
                 + (f", except on {', '.join(map(escape, serial))} rows: all of eager's {units}, then the "
                    "backend's (its calls run in another process)" if serial else "") + ".")
    swept = sorted({r.latency.cpus for r in timed if r.latency and r.latency.cpus})
    if swept:
        parts.append("The measured rounds moved over the process's "
                     f"{' or '.join(map(str, swept))} CPUs, a block on each; the figures are the "
                     "fastest CPU's (`[timing] cpus = \"sweep\"`).")
    parts.append(f"The speedup is eager's median over the backend's, with a bootstrap 95% "
                 f"interval over the paired {units}; {UNSTABLE_MARK} marks an interval too wide to "
                 "gate on. Prediction rows get no speedup: their latency is PyTorch running a "
                 "rewritten graph.")
    return " ".join(parts)


def reduction_text(row: Row, escape: Callable[[object], str] = plain) -> str | None:
    """What ``trtcheck reduce`` made of the row: its bundle and figures, or why not; None when it
    was not asked to. ``escape`` makes each part safe for the report; the bundle path (relative
    to the report directory, of ``[A-Za-z0-9._/-]`` only) is shown as code."""
    red = row.reduction
    if red is None:
        return None
    if not red.get("reduced"):
        got = f" (the exported graph has {red['original_nodes']} nodes)" if "original_nodes" in red else ""
        return escape(f"not reduced: {red.get('why', 'unknown')}{got}")
    head = (f"reduced to {red['reduced_nodes']} of {red['original_nodes']} nodes in "
            f"{red['seconds']:.0f} s, {red['attempts']} candidates tried: bundle")
    tail = ("; it fails the same way in a fresh process" if red.get("reproduced") else
            f"; the check in a fresh process could not run ({red['unchecked']})"
            if red.get("unchecked") else
            f"; a different failure in a fresh process ({red['different']}), not the row's"
            if red.get("different") else "; it did not fail the same way in a fresh process")
    if not red.get("complete"):
        tail += f"; stopped early ({red.get('stopped')}): the smallest graph found by then"
    releases = red.get("releases") or {}
    if red.get("history") and len(releases) > 1:
        tail += f"; across releases it {red['history']}"
    elif len(releases) > 1:  # a record written before histories
        tail += "; releases: " + ", ".join(f"{v} {r}" for v, r in releases.items())
    bundle = re.sub(r"[^A-Za-z0-9._/-]", "-", str(red["bundle"]))
    return f"{escape(head)} `{bundle}/`{escape(tail)}"


def stack_facts(env: dict[str, Any], escape: Callable[[object], str]) -> list[str]:
    """torch, Torch-TensorRT and TensorRT with their versions and, under the Action, where
    each came from; ``escape`` is the renderer's escaping of record text."""
    sources = env.get("sources") or {}
    facts = []
    for key, label in STACK:
        version = env.get(key)
        where = SOURCE_WORDS.get(sources.get(key)) if version else None
        text = f"{label} {escape(version)}" if version else f"{label} not installed"
        facts.append(f"{text} ({where})" if where else text)
    return facts


def stack_warnings(env: dict[str, Any], escape: Callable[[object], str]) -> list[str]:
    """The record's warnings on a mismatched torch / Torch-TensorRT / TensorRT set."""
    return [f"⚠ {escape(w)}" for w in env.get("stack_warnings") or []]


def shapes_text(shapes: list[dict[str, list[int]]] | None) -> str:
    """``ids 4×8, 1×2, 8×16``: each input's shapes in the order run; inputs of one shape once."""
    if not shapes:
        return ""
    names = list(dict.fromkeys(name for at in shapes for name in at))
    parts = []
    for name in names:
        seen = list(dict.fromkeys("×".join(map(str, at[name])) or "scalar"
                                  for at in shapes if name in at))
        parts.append(f"{name} {', '.join(seen)}")
    return "; ".join(parts)


# What each kind of backend's deploy round trip shows (the deploy stage: the row saved as
# torch_tensorrt.save saves it, loaded in a fresh process and compared again).
DEPLOY_MEANING = {
    Kind.MEASURED: ("Torch-TensorRT's exporter and loader with this machine's TensorRT engines, "
                    "loaded on the same GPU and TensorRT"),
    Kind.LOWERED: ("a prediction: Torch-TensorRT's own exporter and loader ran, over the TensorRT "
                   "stand-in's serialized engines, so it shows what the saved graph keeps (complex "
                   "unpacking, int64 casts, dynamic dimensions), not whether TensorRT's plans load "
                   "on another TensorRT version or GPU; not a TensorRT measurement"),
}


def deploy_entry_text(entry: dict[str, Any]) -> str:
    """One format's round trip: ``exported_program: pass, 28.2 kB, loaded in 0.14 s, complex
    kept``, with the owner and the message of one that did not pass."""
    parts = [str(entry.get("status"))]
    if entry.get("size_bytes") is not None:
        parts.append(f"{entry['size_bytes'] / 1000:.1f} kB")
    if entry.get("load_s") is not None:
        parts.append(f"loaded in {entry['load_s']:.2f} s")
    parts += [f"{kind} {words}" for kind, words in (entry.get("kept") or {}).items()]
    if entry.get("status") != "pass" and entry.get("message"):
        parts.append(str(entry["message"]))
    return f"{entry.get('format')}: {', '.join(parts)}"


def deploy_text(row: Row) -> str:
    """The row's deploy round trip, one format after the other; ``""`` where it had none."""
    return "; ".join(deploy_entry_text(e) for e in row.evidence.deploy)


def deploy_counts(record: Record) -> str:
    """``exported_program: 9 pass, 1 fail``, per format; ``""`` where no row was deployed."""
    counts: dict[str, dict[str, int]] = {}
    for row in record.rows:
        for entry in row.evidence.deploy:
            by_status = counts.setdefault(str(entry.get("format")), {})
            by_status[str(entry.get("status"))] = by_status.get(str(entry.get("status")), 0) + 1
    return "; ".join(f"{fmt}: " + ", ".join(f"{n} {status}" for status, n in by_status.items())
                     for fmt, by_status in counts.items())
