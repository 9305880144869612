"""One case through execute.iter_rows, in-process: stages announced, messages of a row."""

from __future__ import annotations

import traceback
from pathlib import Path

import torch

from trtcheck.backends import Backend, Compiled, CompileJob, get
from trtcheck.backends.torch_tensorrt.frames import owner, torch_tensorrt_cause
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.core.traits import TRAITS
from trtcheck.errors import frames
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Evidence, Row
from trtcheck.status import Status

ZOO = {"m.py": """
    import torch, trtcheck

    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 2

    class Halves(torch.nn.Module):
        def forward(self, x):
            return torch.log(x)  # log(-1) is NaN, log(0) is -Inf

    @trtcheck.model
    def scale(variant):
        return Scale(), (torch.ones(3),)

    @trtcheck.model
    def halves(variant):
        return Halves(), (torch.tensor([1.0, -1.0, 0.0]),)

    @trtcheck.model
    def garbage(variant):
        return "not a module"
"""}


def _rows(root, name: str, hook=None, nan: str = "warn") -> list[Row]:
    opts = Options(paths=(root,), devices=("cpu",), nan=nan)
    [case] = [c for c in collect(opts).cases if c.spec.name == name]
    kwargs = {"hook": hook} if hook else {}
    return [r for r in iter_rows(case, opts, {"eager": get("eager")}, **kwargs)
            if isinstance(r, Row)]


def test_the_eager_input_check_is_announced_as_its_own_stage(make_zoo) -> None:
    heard: list[str] = []
    [row] = _rows(make_zoo(ZOO), "scale", hook=lambda b, p, stage: heard.append(stage))
    assert row.status is Status.PASS
    # an out-of-memory kill while checking eager's inputs must not be blamed on "eager"
    assert heard[:4] == ["build", "eager", "compare", "export"]


def test_eager_returning_nan_or_inf_says_so_with_counts(make_zoo) -> None:
    [row] = _rows(make_zoo(ZOO), "halves")
    assert row.status is Status.PASS  # nan = "warn": matching NaN and Inf pass
    assert row.message == "eager output holds 1 NaN and 1 Inf, backend output 1 NaN and 1 Inf"
    [out] = row.outputs
    assert (out["eager_nan"], out["eager_inf"], out["nan"], out["inf"]) == (1, 1, 1, 1)


def test_nan_fail_fails_a_row_with_matching_nan(make_zoo) -> None:
    [row] = _rows(make_zoo(ZOO), "halves", nan="fail")
    assert row.status is Status.FAIL and row.stage == "compare"
    assert row.message == ('nan = "fail": eager output holds 1 NaN and 1 Inf, '
                           "backend output 1 NaN and 1 Inf")
    [finite] = _rows(make_zoo(ZOO), "scale", nan="fail")
    assert finite.status is Status.PASS and finite.message == ""


def test_a_factory_returning_garbage_names_its_declaration(make_zoo) -> None:
    root = make_zoo(ZOO)
    [row] = _rows(root, "garbage")
    assert row.status is Status.ERROR and row.stage == "build"
    assert row.location == f"{root / 'm.py'}:20"  # the decorator's line


def test_an_export_error_gives_its_first_line_and_the_declaration(make_zoo) -> None:
    root = make_zoo({"m.py": """
        import torch, trtcheck

        class DataDependent(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:  # data-dependent control flow: torch.export refuses it
                    return x + 1
                return x - 1

        @trtcheck.model
        def branchy(variant):
            return DataDependent(), (torch.ones(3),)
    """})
    [row] = _rows(root, "branchy")
    assert row.status is Status.ERROR and row.stage == "export"
    assert row.location.startswith(str(root / "m.py"))
    # only the first line, and no word of results.json inside results.json itself
    assert "\\n" not in row.message and "results.json" not in row.message
    first_line = row.message.split(": ", 1)[1]
    assert first_line in " ".join(row.traceback.split())
    assert len(row.traceback.splitlines()) > 5


class ModuleUnderTorchCompile(Backend):
    """Compiles the user's module under a torch_compile profile, as tensorrt and lowering do
    (here the module itself, run as is), and the exported program under any other."""

    traits = TRAITS["lowering"]

    def compile(self, job: CompileJob) -> Compiled:
        exported = job.program is not None
        return Compiled(job.program.module() if exported else job.model,
                        Evidence(details={"exported": exported}))


def test_a_case_that_does_not_export_still_runs_its_torch_compile_rows(make_zoo) -> None:
    """The export error is the row of every slot that needs the exported program; a slot whose
    backend compiles the user's module under its profile runs without it."""
    root = make_zoo({"m.py": """
        import torch, trtcheck

        class DataDependent(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x + 1
                return x - 1

        @trtcheck.model
        def branchy(variant):
            return DataDependent(), (torch.ones(3),)

        @trtcheck.model
        def plain(variant):
            return torch.nn.ReLU(), (torch.ones(3),)
    """})
    opts = Options(paths=(root,), devices=("cpu",),
                   profiles=(BUILTIN_PROFILES["default"], BUILTIN_PROFILES["torch_compile"]),
                   timing=Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1))
    backends = {"lowering": ModuleUnderTorchCompile(), "eager": get("eager")}
    rows = {(c.spec.name, r.backend, r.profile): r for c in collect(opts).cases
            for r in iter_rows(c, opts, backends) if isinstance(r, Row)}
    assert {k: (r.status.value, r.stage) for k, r in rows.items()} == {
        ("branchy", "lowering", "default"): ("error", "export"),
        ("branchy", "lowering", "torch_compile"): ("pass", None),
        ("branchy", "eager", "-"): ("error", "export"),
        ("plain", "lowering", "default"): ("pass", None),
        ("plain", "lowering", "torch_compile"): ("pass", None),
        ("plain", "eager", "-"): ("pass", None)}
    assert rows[("branchy", "lowering", "torch_compile")].evidence.details == {"exported": False}
    assert rows[("plain", "lowering", "torch_compile")].evidence.details == {"exported": True}


def _raise_from(path: Path, code: str) -> str:
    """The formatted traceback of ``code`` run as the file ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code)
    try:
        exec(compile(code, str(path), "exec"), {})
    except Exception as exc:
        return "".join(traceback.format_exception(exc))
    raise AssertionError("did not raise")


def test_a_slip_inside_torch_tensorrt_is_named_as_its_bug(tmp_path: Path) -> None:
    trace = _raise_from(tmp_path / "site" / "torch_tensorrt" / "dynamo" / "v.py",
                        "def sort_validator(args):\n    return args[1]\nsort_validator(())\n")
    assert torch_tensorrt_cause(trace) == (
        " (raised inside Torch-TensorRT at torch_tensorrt/dynamo/v.py:2 in sort_validator: "
        "`return args[1]`: a bug in Torch-TensorRT; report it to Torch-TensorRT with this frame)")


def test_a_deliberate_raise_of_torch_tensorrt_is_named_but_not_called_a_bug(tmp_path: Path) -> None:
    trace = _raise_from(tmp_path / "torch_tensorrt" / "c.py",
                        "def convert():\n    raise RuntimeError('no converter')\nconvert()\n")
    assert torch_tensorrt_cause(trace) == " (raised by Torch-TensorRT at torch_tensorrt/c.py:2 in convert)"


def test_an_error_raised_below_a_lowering_pass_names_the_pass_and_its_frame(tmp_path: Path) -> None:
    """Raised in torch's code, called from Torch-TensorRT's complex rewrite: the message names
    the innermost Torch-TensorRT frame and the pass it is in."""
    refs = tmp_path / "site-packages" / "torch" / "_refs.py"
    refs.parent.mkdir(parents=True)
    refs.write_text("def broadcast(a, b):\n    raise RuntimeError('Attempting to broadcast')\n")
    passes = tmp_path / "torch_tensorrt" / "dynamo" / "lowering" / "passes"
    source = (f"import sys\nsys.path.insert(0, {str(refs.parent)!r})\nimport _refs\n\n"
              "def propagate_metadata(node):\n    return _refs.broadcast(node, 33)\n\n"
              "propagate_metadata(4)\n")
    trace = _raise_from(passes / "complex_graph_rewrite.py", source)
    assert torch_tensorrt_cause(trace) == (
        " (raised in torch, called from Torch-TensorRT's complex-to-real rewrite at torch_tensorrt/"
        "dynamo/lowering/passes/complex_graph_rewrite.py:6 in propagate_metadata)")
    conversion = tmp_path / "torch_tensorrt" / "dynamo" / "conversion"
    truncation = _raise_from(conversion / "truncate_double.py", "def repair_double_inputs():\n"
                             "    raise TypeError('no')\nrepair_double_inputs()\n")
    assert "Torch-TensorRT's float64 truncation (truncate_double) at" in torch_tensorrt_cause(truncation)


def test_an_error_after_compile_names_its_frame_and_owner(tmp_path: Path) -> None:
    """At run, compare and drift: the compiled module's graph (a node PyTorch runs between the
    engines), the TensorRT stand-in's layer, or the user's model; Torch-TensorRT's frames as at
    compile."""
    graph = torch.fx.symbolic_trace(lambda z: torch.ops.aten.view_as_complex.default(z))
    try:
        graph(torch.ones(2, 2, dtype=torch.complex64))
    except RuntimeError as exc:
        said = owner("".join(traceback.format_exception(exc)))
    # its node's code where fx's generated source is known (the lowering host's graphs)
    assert said.startswith(" (raised in torch, called from the compiled module's graph")
    assert said.endswith(", a node PyTorch runs between the engines)")
    layer = tmp_path / "backends" / "lowering" / "trt" / "layers" / "gather.py"
    assert owner(_raise_from(layer, "def run(ins):\n    return ins[3]\nrun([])\n")) == (
        " (raised in the TensorRT stand-in at trt/layers/gather.py:2 in run)")
    model = _raise_from(tmp_path / "zoo" / "m.py", "def forward(x):\n    return x.nope\nforward(1)\n")
    assert owner(model) == " (raised in the model's code at m.py:2 in forward)"
    passes = tmp_path / "torch_tensorrt" / "c.py"
    inside = _raise_from(passes, "def convert():\n    raise RuntimeError('no converter')\nconvert()\n")
    assert owner(inside) == torch_tensorrt_cause(inside) != ""


def test_one_frame_parser_reads_tracebacks_and_faulthandler_stacks() -> None:
    stack = ('Thread 0x1 (most recent call first):\n  File "/z/hang.py", line 4 in spin\n'
             '  File "/z/hang.py", line 7 in <module>\n')
    assert [(f.file, f.line, f.name, f.code) for f in frames(stack)] == [
        ("/z/hang.py", 4, "spin", ""), ("/z/hang.py", 7, "<module>", "")]
    trace = ('Traceback (most recent call last):\n  File "/a/torch_tensorrt/x.py", line 3, in f\n'
             '    raise ValueError(1)\nValueError: 1\n')
    [frame] = frames(trace)
    assert frame.within("torch_tensorrt") == "torch_tensorrt/x.py:3 in f" and frame.deliberate
    # Frames a message quotes after the exception line (torch's "Original traceback", the
    # model's own code) are not the traceback's: the frame that raised is torch's.
    quoted = ('Traceback (most recent call last):\n  File "/a/torch_tensorrt/p.py", line 5, in g\n'
              '    h()\n  File "/s/site-packages/torch/x.py", line 9, in h\n    raise RuntimeError()\n'
              'RuntimeError: b\nOriginal traceback:\n  File "/z/m.py", line 3, in forward\n'
              '    return x\n')
    assert torch_tensorrt_cause(quoted) == (
        " (raised in torch, called from Torch-TensorRT at torch_tensorrt/p.py:5 in g)")


def test_trtchecks_own_torch_tensorrt_backend_is_not_torch_tensorrt() -> None:
    from trtcheck.backends.torch_tensorrt import compat

    try:
        compat.parse_version("garbage")
    except ValueError as exc:
        trace = "".join(traceback.format_exception(exc))
    assert "trtcheck/backends/torch_tensorrt/compat.py" in trace
    assert torch_tensorrt_cause(trace) == ""
