"""A reduced row's bundle: ``repro.py``, a zoo file, ``inputs.pt``, ``trtcheck.toml``, ``ISSUE.md``
and ``summary.json``, all generated from the reduced graph and the row."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trtcheck.backends.deploy import FILE_NAMES
from trtcheck.backends.torch_tensorrt.frames import PACKAGE
from trtcheck.backends.torch_tensorrt.nodes import while_executing
from trtcheck.config.timing import Timing
from trtcheck.core.frontends import EXPORT, FRONT_ENDS, FrontEnd
from trtcheck.core.profiles import Profile, Tolerance
from trtcheck.core.traits import TTRT_MIN_BLOCK_SIZE
from trtcheck.errors import tracebacks
from trtcheck.reduce.graph import Subgraph
from trtcheck.reduce.signature import REFUSAL, Signature, exception_message, logged_errors
from trtcheck.results.rows import Row

_CUT = re.compile(r" \[\d+ more lines? in results\.json\]")
ZOO_FILE = "reduced.py"
REPRO = "repro.py"
DATA = "inputs.pt"
# The bundle's own run: no latency to speak of, so one timed call.
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)

_MODULE = '''\
class Reduced(torch.nn.Module):
    """{about}"""

    def __init__(self, weights: dict[str, torch.Tensor]) -> None:
        super().__init__()
        for name, value in weights.items():
            self.register_buffer(name, value)

{forward}
'''


# What ran the row, by level: its backend's core.traits.Kind told apart where a reader needs more
# (a measurement on TensorRT or on PyTorch, a lowering at the converter or the graph level), and
# what a reader is told it was.
MEASURED, CONVERTERS, GRAPH, EMULATED, PYTORCH = "tensorrt", "converters", "graph", "emulate", "pytorch"


@dataclass(frozen=True)
class Ran:
    """What compiled the row: its backend, the Torch-TensorRT release whose code ran (or whose
    settings the row's profile stands for, where none ran), the level (one of
    :data:`MEASURED`, :data:`CONVERTERS`, :data:`GRAPH`, :data:`EMULATED`, :data:`PYTORCH`),
    and the TensorRT that ran, where one did."""

    backend: str
    release: str | None
    level: str
    tensorrt: str | None = None
    frontend: str = EXPORT.name  # the registered front-end it went through

    @property
    def front_end(self) -> FrontEnd:
        return FRONT_ENDS[self.frontend]

    @property
    def entry(self) -> str:
        """The Torch-TensorRT entry point that compiled the row."""
        return self.front_end.entry

    @property
    def measured(self) -> bool:
        return self.level == MEASURED

    def how(self) -> str:
        """One plain sentence: what ran the row, and whether it is a measurement."""
        release = f"Torch-TensorRT {self.release or '—'}"
        found = f"found by trtcheck's `{self.backend}` backend"
        return {
            MEASURED: f"Measured on TensorRT {self.tensorrt or '—'}: {found}, which ran "
                      f"{release}'s {self.entry} with the settings below on a CUDA GPU.",
            CONVERTERS: f"Predicted, not measured on TensorRT: {found}, which ran {release}'s own "
                        f"{self.entry} from its Python code with the settings below (its "
                        "lowering, partitioning and converters), over trtcheck's TensorRT "
                        "stand-in, which built each network the converters made and ran it with "
                        "PyTorch: a prediction at the converter level. TensorRT's builder and "
                        "kernels did not run.",
            GRAPH: f"Predicted, not measured on TensorRT: {found}, which ran {release}'s own "
                   "lowering, complex rewrite and partitioning from its Python code "
                   "(`dynamo.compile(..., dryrun=True)` with the settings below), each TensorRT "
                   "block run by PyTorch: a prediction at the graph level. No converter ran.",
            EMULATED: f"Predicted, not measured on TensorRT: {found}, trtcheck's own "
                      "implementation of Torch-TensorRT's documented rules; no Torch-TensorRT code "
                      f"ran. The settings below are the row's profile as {release} takes them.",
            PYTORCH: f"Measured on PyTorch, not on TensorRT: {found} (no Torch-TensorRT code "
                     f"ran). The settings below are the row's profile as {release} takes them.",
        }[self.level]

    def tensorrt_line(self) -> str:
        """The environment's TensorRT line."""
        return {
            MEASURED: f"TensorRT {self.tensorrt or '—'}",
            CONVERTERS: "TensorRT: not run; trtcheck's TensorRT stand-in built and ran the "
                        "converters' networks with PyTorch (a prediction)",
            GRAPH: "TensorRT: not run; each TensorRT block ran in PyTorch (a prediction at the "
                   "graph level)",
        }.get(self.level, "TensorRT: not run")


def module_source(sub: Subgraph, about: str) -> str:
    """The reduced graph as a ``torch.nn.Module`` class, its ``forward`` over ``torch.ops.aten``."""
    forward = textwrap.indent(sub.code(), "    ")
    names = [n for n in ("inf", "nan") if re.search(rf"\b{n}\b", forward)]
    head = f"from math import {', '.join(names)}\n" if names else ""
    if re.search(r"\bdevice\(", forward):
        head += "from torch import device\n"
    return head + ("\n\n" if head else "") + _MODULE.format(about=about, forward=forward)


def save_data(path: Path, inputs: Sequence[torch.Tensor],
              weights: Mapping[str, torch.Tensor]) -> None:
    # Cloned: recorded values may view one storage as two dtypes (view_as_real), which torch.save refuses.
    torch.save({"inputs": [t.detach().cpu().clone() for t in inputs],
                "weights": {k: v.detach().cpu().clone() for k, v in weights.items()}}, path)


def zoo_source(module: str, model: str, variant: str, spec_tol: tuple[float | None, float | None],
               about: str) -> str:
    """A zoo file declaring the reduced module as one model with one variant."""
    rtol, atol = spec_tol
    tol = "".join(f", {k}={v!r}" for k, v in (("rtol", rtol), ("atol", atol)) if v is not None)
    return f'''"""{about}"""

from pathlib import Path

import torch

import trtcheck

HERE = Path(__file__).resolve().parent


{module}

@trtcheck.model(variants=({variant!r},){tol})
def {model}(variant: str):
    """The reduced graph on the bundle's inputs.pt."""
    data = torch.load(HERE / {DATA!r}, weights_only=True)
    return Reduced(data["weights"]), tuple(data["inputs"])
'''


def repro_source(module: str, settings: Mapping[str, Any], tolerances: Sequence[Tolerance],
                 run_command: str, about: str, ran: Ran, profile: str,
                 deployed: str | None = None) -> str:
    """A standalone script: torch and torch_tensorrt only, torch_tensorrt imported under __main__;
    ``settings`` are every setting the row ran with, passed as ``ran`` passed them (to
    ``dynamo.compile``, or to the torch.compile front-end); ``deployed``: the format a row that
    failed at the deploy stage was saved in, which the script saves and loads again before
    comparing."""
    tol = [(t.rtol, t.atol) for t in tolerances]
    how = textwrap.fill(ran.how().replace("`", ""), 96, break_on_hyphens=False)
    note = textwrap.fill(settings_note(settings, ran, profile).replace("`", ""), 96,
                         initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)
    compile_lines = ran.front_end.repro_lines
    if deployed:
        compile_lines += (f"\n        torch_tensorrt.save(compiled, str(HERE / {FILE_NAMES[deployed]!r}), "
                          f"output_format={deployed!r}, arg_inputs=list(inputs))\n"
                          f"        compiled = {_LOAD[deployed].format(FILE_NAMES[deployed])}")
    return f'''"""{about}

{how}

Needs torch and torch_tensorrt with TensorRT on a CUDA GPU: python {REPRO}
Without TensorRT, Torch-TensorRT's own lowering reproduces it on any machine, from this folder:
    pip install torch-trtcheck && {run_command}
"""

import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
{note}
SETTINGS = {settings!r}
# (rtol, atol) per output, as the row was judged.
TOLERANCES = {tol!r}


{module}

def main() -> int:
    data = torch.load(HERE / {DATA!r}, weights_only=True)
    try:
        import tensorrt  # noqa: F401
        import torch_tensorrt
    except ImportError as exc:
        print(f"TensorRT is not usable here ({{exc}}); run Torch-TensorRT's lowering instead, "
              "from this folder:")
        print("    {run_command}")
        return 2
    if not torch.cuda.is_available():
        print("no CUDA GPU here; run Torch-TensorRT's lowering instead, from this folder:")
        print("    {run_command}")
        return 2
    module = Reduced({{k: v.cuda() for k, v in data["weights"].items()}}).eval().cuda()
    inputs = tuple(t.cuda() for t in data["inputs"])
    with torch.no_grad():
        expected = module(*inputs)
{compile_lines}
        actual = compiled(*inputs)
    actual = actual if isinstance(actual, (tuple, list)) else (actual,)
    differ = 0
    for i, (want, got) in enumerate(zip(expected, actual)):
        rtol, atol = TOLERANCES[i] if i < len(TOLERANCES) else (5e-3, 5e-3)
        if want.dtype != got.dtype or want.shape != got.shape:
            print(f"output {{i}}: eager {{want.dtype}} {{list(want.shape)}}, "
                  f"Torch-TensorRT {{got.dtype}} {{list(got.shape)}}")
            differ += 1
        elif not torch.allclose(got, want, rtol=rtol, atol=atol):
            print(f"output {{i}}: max abs difference {{(got - want).abs().max().item():.3g}} "
                  f"(rtol {{rtol:g}}, atol {{atol:g}})")
            differ += 1
    print("outputs differ from eager" if differ else "outputs match eager")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
'''


# How repro.py loads each format again, as its users do.
_LOAD = {"exported_program": "torch_tensorrt.load(str(HERE / {!r})).module()",
         "torchscript": "torch.jit.load(str(HERE / {!r}))",
         "aot_inductor": "torch._inductor.aoti_load_package(str(HERE / {!r}))"}


def settings_note(settings: Mapping[str, Any], ran: Ran, profile: str) -> str:
    """What ``settings`` are, and why a ``min_block_size`` other than Torch-TensorRT's default
    matters to whoever runs the bundle."""
    what = ran.front_end.option
    text = (f"Every {what} the row ran with: trtcheck's profile `{profile}` as Torch-TensorRT "
            f"{ran.release or '—'} takes it")
    size = settings.get("min_block_size")
    if size is not None and size != TTRT_MIN_BLOCK_SIZE:
        text += (f"; min_block_size {size} is trtcheck's, and at Torch-TensorRT's default of "
                 f"{TTRT_MIN_BLOCK_SIZE} a graph with fewer convertible ops is left to PyTorch, "
                 "where no converter sees it")
    return text + "."


def config_source(profile: Profile, tolerances: Mapping[str, Tolerance]) -> str:
    """The bundle's trtcheck.toml: the row's profile, tolerances and a single timed call."""
    lines = ["# The settings the reduced row ran under.", "[timing]"]
    lines += [f"{k} = {getattr(QUICK, k)!r}" for k in ("warmup", "warmup_s", "repeats",
                                                       "min_time_s", "max_repeats")]
    for dtype, tol in tolerances.items():
        lines += ["", f"[tolerances.{dtype}]", f"rtol = {tol.rtol!r}", f"atol = {tol.atol!r}"]
    lines += ["", f"[profiles.{profile.name}]",
              f"truncate_double = {str(profile.truncate_double).lower()}",
              f"int64 = {profile.int64!r}".replace("'", '"'),
              f"coverage = {profile.coverage!r}".replace("'", '"'),
              f"require_full_compilation = {str(profile.require_full_compilation).lower()}",
              f"min_block_size = {profile.min_block_size}"]
    lines.append(f"frontend = {profile.frontend!r}".replace("'", '"'))
    if profile.settings:
        lines += ["", f"[profiles.{profile.name}.settings]"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in profile.settings.items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Issue:
    """What ISSUE.md says."""

    case_id: str
    row: Row  # the reduced row, as the bundle ran
    signature: Signature
    original_nodes: int
    reduced_nodes: int
    code: str
    ops: list[str]  # the reduced graph's ops, in order
    inputs: list[str]  # "x0: complex64 [2, 8]"
    weights: list[str]
    privacy_note: str
    environment: Mapping[str, Any]
    ran: Ran
    profile: str
    settings: Mapping[str, Any]
    releases: Mapping[str, str]
    trtcheck_command: str  # trtcheck run reduced.py --backend ...: the bundle on any machine
    history: str | None = None  # the bundle across releases, in one line
    different: Signature | None = None  # how the bundle failed in a fresh run, not as the row


def issue_text(issue: Issue) -> str:
    row, sig, ran = issue.row, issue.signature, issue.ran
    how = ran.how()
    if not ran.measured:
        head, _, rest = how.partition(": ")
        how = f"**{head}**: {rest} `python {REPRO}` checks it on a GPU."
    env = issue.environment
    gpu = (f"{env.get('device_name')} (driver {env.get('driver') or '—'})"
           if str(env.get("device", "cpu")).startswith("cuda") else "none (CPU)")
    named = title(sig, row, issue.ops)
    lines = [f"# A different failure from the row's: {named}" if issue.different else f"# {named}",
             "", how, ""]
    if issue.different:
        lines += [f"**A different failure**: run again in a fresh process, this bundle gives "
                  f"{issue.different.describe()}, where the row gave {sig.describe()}. It is "
                  "another bug, not a reproduction of the row's.", ""]
    if issue.history:
        lines += [f"**Across Torch-TensorRT releases** (this bundle run on each): "
                  f"{issue.history}.", ""]
    lines += [
        "## Environment", "",
        f"- torch {env.get('torch', '—')}",
        f"- Torch-TensorRT {ran.release or '—'}",
        f"- {ran.tensorrt_line()}",
        f"- GPU: {gpu}",
        f"- Python {env.get('python', '—')}, {env.get('platform', '—')}",
        "", "## Settings", "", settings_note(issue.settings, ran, issue.profile), "",
        "```python", ran.front_end.compile_call(issue.settings, dryrun=ran.level == GRAPH), "```",
        "",
        f"## Reduced graph ({issue.reduced_nodes} of {issue.original_nodes} nodes)", "",
        "```python", issue.code, "```", "",
        "Inputs: " + (", ".join(issue.inputs) or "none") + ".",
    ]
    if issue.weights:
        lines.append("Buffers: " + ", ".join(issue.weights) + ".")
    lines += [issue.privacy_note, "", "## Expected against got", ""]
    lines += _expected_got(row)
    if row.status.value == "error":
        lines += ["", f"Exception: `{sig.error or 'of no named type'}`" + (
            f", raised from `{sig.frame}`." if sig.frame
            else " (no Torch-TensorRT frame in the traceback)."),
                  "", "```", _frames(row.traceback or row.message), "```"]
    logged = logged_errors(row.traceback or "")
    if logged:
        who = "TensorRT" if ran.measured else "trtcheck's TensorRT stand-in (a prediction)"
        lines += ["", f"Logged at ERROR by {who} while building:", "", "```", *logged, "```"]
    if issue.releases:
        lines += ["", "## Releases", "", "| Torch-TensorRT | this bundle |", "|---|---|"]
        lines += [f"| {v} | {r} |" for v, r in issue.releases.items()]
    lines += ["", "## Reproduce", "", "```", f"python {REPRO}        # TensorRT on a CUDA GPU",
              f"{issue.trtcheck_command}   # Torch-TensorRT's lowering on any machine", "```", "",
              f"Reduced by `trtcheck reduce` from `{issue.case_id}`; signature: {sig.describe()}."]
    return "\n".join(lines) + "\n"


def title(sig: Signature, row: Row, ops: Sequence[str]) -> str:
    """What failed, in one line: an exception by its type, where it was raised and why (the
    builder's logged refusal, else its message), a run-time one by the ops it ran; a wrong
    result by the output's op and how it differs."""
    trace = row.traceback or ""
    if sig.status == "error":
        error = sig.error or "an exception"
        if sig.stage == "run":
            head = f"{error} at run, in the compiled {_ops(ops)}"
        else:
            head = f"{error} at {sig.stage}" + (f" in {_file_line(sig.frame)}" if sig.frame else "")
        logged = logged_errors(trace)
        why = refusal(logged[0]) if logged else while_executing(exception_message(trace) or "",
                                                                 trace, where=False)
        return _one_line(f"{head}: {why}" if why else head)
    if sig.mismatch == "inputs":
        return "inputs changed by the compiled module"
    failing = next((leaf for leaf in row.outputs if not leaf.get("passed", True)), {})
    # the reduced graph's ops: the first diverging one may be a view after the op at fault
    what = f"{_WRONG.get(sig.mismatch or '', 'a wrong result from')} {_ops(ops or [sig.op or ''])}"
    return _one_line(f"{what}: {_how_it_differs(sig.mismatch, failing)}" if failing else what)


# How a title names each kind of mismatch, before the op it comes from.
_WRONG = {"values": "wrong values from", "nonfinite": "NaN/Inf placement differs from eager at",
          "dtype": "wrong output dtype from", "shape": "wrong output shape from"}


def refusal(logged: str) -> str:
    """A builder's logged refusal in a title's words: the layer and the op it converts, and why."""
    found = REFUSAL.match(logged.strip())
    if found is None:
        return f"the builder refused: {logged}"
    return f"the builder refused {found['op']}'s {found['layer']} layer: {found['detail']}"


def _how_it_differs(kind: str | None, leaf: Mapping[str, Any]) -> str:
    """The metric a mismatch of ``kind`` is read by, for one failing output leaf."""
    if kind == "dtype":
        return f"{leaf.get('eager_dtype')} returned as {leaf.get('dtype')}"
    if kind == "shape":
        return f"{leaf.get('eager_shape')} returned as {leaf.get('shape')}"
    if kind == "nonfinite":
        parts = [f"{leaf.get(k) or 0} {name} where eager has {leaf.get(f'eager_{k}') or 'none'}"
                 for k, name in (("nan", "NaN"), ("inf", "Inf"))
                 if (leaf.get(k) or 0) != (leaf.get(f"eager_{k}") or 0)]
        return "Torch-TensorRT gives " + " and ".join(parts)
    err = leaf.get("max_abs")
    shown = f"max abs error {err:.3g}" if isinstance(err, float) else "values differ"
    return f"{shown} (rtol {leaf.get('rtol', 0):g}, atol {leaf.get('atol', 0):g})"


def _ops(ops: Sequence[str]) -> str:
    distinct = [op for op in dict.fromkeys(ops) if op]
    if not distinct:
        return "graph"
    if len(distinct) > 3:
        return f"graph of {len(ops)} nodes"
    return " and ".join([", ".join(distinct[:-1]), distinct[-1]] if len(distinct) > 1 else distinct)


def _file_line(frame: str) -> str:
    """``converter_utils.py:817`` of ``torch_tensorrt/.../converter_utils.py:817 in to_torch``."""
    return frame.split(" in ")[0].rsplit("/", 1)[-1]


def _one_line(text: str, most: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 1] + "…"


def _expected_got(row: Row) -> list[str]:
    lines = []
    for i, leaf in enumerate(row.outputs):
        if leaf.get("passed", True):
            continue
        got = f"{leaf.get('dtype')} {leaf.get('shape')}"
        want = f"{leaf.get('eager_dtype')} {leaf.get('eager_shape')}"
        err = leaf.get("max_abs")
        lines.append(f"- output {i}: eager gives {want}; Torch-TensorRT gives {got}"
                     + (f", max abs error {err:.3g}" if isinstance(err, float) else ""))
    if row.status.value == "error" and row.stage in ("compile", "run"):
        lines.append(f"- eager runs the graph; Torch-TensorRT raises at {row.stage}")
    message = _CUT.sub("", row.message)
    lines.append(f"- trtcheck's verdict: {row.status.value} at {row.stage}: {message}")
    return lines


def _frames(trace: str, keep: int = 6) -> str:
    """The innermost Torch-TensorRT frames of the traceback (paths from ``torch_tensorrt/`` on,
    so that no local path is shown) and the exception line that ended them."""
    shown: list[str] = []
    ending = ""
    for found in tracebacks(trace):
        inside = [f'  File "{path}", line {f.line}, in {f.name}\n    {f.code}'
                  for f in found.frames if (path := f.path_in(PACKAGE))]
        if inside:
            shown += inside
            ending = found.exception
    if not shown:
        return trace.strip().splitlines()[-1] if trace.strip() else ""
    return "\n".join([*shown[-keep:], ending])


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
