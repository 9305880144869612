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

from trtcheck.backends.torch_tensorrt.frames import PACKAGE
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import Profile, Tolerance
from trtcheck.errors import tracebacks
from trtcheck.reduce.graph import Subgraph
from trtcheck.reduce.signature import Signature
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
                 run_command: str, about: str, jit: bool = False) -> str:
    """A standalone script: torch and torch_tensorrt only, torch_tensorrt imported under __main__;
    with ``jit``, compiled by Torch-TensorRT's torch.compile front-end."""
    tol = [(t.rtol, t.atol) for t in tolerances]
    how = "torch.compile options" if jit else "torch_tensorrt.dynamo.compile keywords"
    compile_lines = (
        '        compiled = torch.compile(module, backend="tensorrt", options=SETTINGS)' if jit
        else "        program = torch.export.export(module, inputs)\n"
             "        compiled = torch_tensorrt.dynamo.compile(program, arg_inputs=list(inputs), "
             "**SETTINGS)")
    return f'''"""{about}

Needs torch and torch_tensorrt with TensorRT on a CUDA GPU: python {REPRO}
Without TensorRT, Torch-TensorRT's own lowering reproduces it on any machine, from this folder:
    pip install torch-trtcheck && {run_command}
"""

import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
# The settings the row was compiled with ({how}).
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
    if profile.jit:
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
    inputs: list[str]  # "x0: complex64 [2, 8]"
    weights: list[str]
    privacy_note: str
    environment: Mapping[str, Any]
    settings: Mapping[str, Any]
    releases: Mapping[str, str]
    trtcheck_command: str  # trtcheck run . --backend ...: the bundle on any machine


def issue_text(issue: Issue) -> str:
    row, sig = issue.row, issue.signature
    predicted = row.prediction
    version = (row.evidence.versions.get("torch_tensorrt") or issue.environment.get("torch_tensorrt")
               or "—")
    if predicted:
        how = (f"**Predicted, not measured on TensorRT**: found by trtcheck's `{row.backend}` "
               f"backend, which runs Torch-TensorRT {version}'s own lowering, complex rewrite and "
               "partitioning from its Python code, with each TensorRT block run by PyTorch on "
               f"{issue.environment.get('device', 'cpu')}. TensorRT itself did not run; "
               "`python repro.py` checks it on a GPU.")
    else:
        how = (f"**Measured on TensorRT** {issue.environment.get('tensorrt') or ''} by trtcheck's "
               f"`{row.backend}` backend.")
    title = _title(sig)
    env = issue.environment
    gpu = (f"{env.get('device_name')} (driver {env.get('driver') or '—'})"
           if str(env.get("device", "cpu")).startswith("cuda") else "none (CPU)")
    lines = [
        f"# {title}", "", how, "",
        "## Environment", "",
        f"- torch {env.get('torch', '—')}",
        f"- Torch-TensorRT {version}",
        f"- TensorRT {env.get('tensorrt') or ('— (not run: a prediction)' if predicted else '—')}",
        f"- GPU: {gpu}",
        f"- Python {env.get('python', '—')}, {env.get('platform', '—')}",
        "", "## Settings", "", "```python",
        f"torch_tensorrt.dynamo.compile(program, arg_inputs=inputs, **{dict(issue.settings)!r})",
        "```", "",
        f"## Reduced graph ({issue.reduced_nodes} of {issue.original_nodes} nodes)", "",
        "```python", issue.code, "```", "",
        "Inputs: " + (", ".join(issue.inputs) or "none") + ".",
    ]
    if issue.weights:
        lines.append("Buffers: " + ", ".join(issue.weights) + ".")
    lines += [issue.privacy_note, "", "## Expected against got", ""]
    lines += _expected_got(row)
    if row.status.value == "error":
        lines += ["", f"Exception: `{sig.error}`" + (f", raised from `{sig.frame}`." if sig.frame
                                                     else " (no Torch-TensorRT frame in the traceback)."),
                  "", "```", _frames(row.traceback or row.message), "```"]
    if issue.releases:
        lines += ["", "## Releases", "", "| Torch-TensorRT | this bundle |", "|---|---|"]
        lines += [f"| {v} | {r} |" for v, r in issue.releases.items()]
    lines += ["", "## Reproduce", "", "```", f"python {REPRO}        # TensorRT on a CUDA GPU",
              f"{issue.trtcheck_command}   # Torch-TensorRT's lowering on any machine", "```", "",
              f"Reduced by `trtcheck reduce` from `{issue.case_id}`; signature: {sig.describe()}."]
    return "\n".join(lines) + "\n"


def _title(sig: Signature) -> str:
    if sig.error:
        return f"{sig.error} at {sig.stage}" + (f" in {sig.frame.split(' in ')[0]}" if sig.frame else "")
    what = {"values": "wrong values", "dtype": "wrong output dtype", "shape": "wrong output shape",
            "inputs": "inputs changed by the compiled module"}.get(sig.mismatch or "", "a wrong result")
    return f"{what} from {sig.op}" if sig.op else what


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
    if row.status.value == "error":
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
