"""``trtcheck reduce``: the signature rules, the recorded graph and its subgraphs, bundle titles,
and reductions of everyday models on Torch-TensorRT 2.13.0's converters through the lowering host,
all in this process (the CLI's runs are tests/e2e/test_reduce.py's)."""

from __future__ import annotations

import runpy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.helpers import REPO
from trtcheck.backends.lowering.code import locate
from trtcheck.backends.lowering.lowering_backend import LoweringBackend, sendable
from trtcheck.backends.lowering.messages import ExportCompile
from trtcheck.backends.torch_tensorrt.compat import call_arguments
from trtcheck.backends.torch_tensorrt.nodes import executing, executing_op
from trtcheck.config.options import Options
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.execution.run import InProcessExecutor, collect
from trtcheck.execution.stages import StageError
from trtcheck.reduce import bundle, history
from trtcheck.reduce.graph import count_nodes, record, replay, slug, subgraph
from trtcheck.reduce.reducer import Limits, Pending, Reducer, _record, random_like
from trtcheck.reduce.signature import Signature, exception_of, reducible, signature
from trtcheck.render.escape import md
from trtcheck.render.text import reduction_text
from trtcheck.results.rows import Row
from trtcheck.status import Status
from trtcheck.zoo import discover
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile

ZOO = REPO / "tests" / "zoos" / "reduce"
FRAME = '  File "/c/torch-tensorrt/2.13.0/torch_tensorrt/dynamo/conversion/{f}.py", line {n}, in {fn}\n'


def _trace(exc: str, frames: str) -> str:
    return f"Traceback (most recent call last):\n{frames}    x = y\n{exc}\n"


def _error(exc: str, frames: str = "", message: str = "boom", stage: str = "compile") -> Row:
    return Row("z::m[v]", "z", "m", "v", "lowering", status=Status.ERROR, stage=stage,
               message=message, traceback=_trace(exc, frames))


def _leaf(passed: bool, dtype: str = "torch.complex64", eager: str = "torch.complex64",
          shape: tuple[int, ...] = (2,), eager_shape: tuple[int, ...] = (2,)) -> dict:
    return {"path": "", "passed": passed, "dtype": dtype, "eager_dtype": eager,
            "shape": list(shape), "eager_shape": list(eager_shape)}


def _fail(*leaves: dict, message: str = "outputs differ") -> Row:
    return Row("z::m[v]", "z", "m", "v", "lowering", status=Status.FAIL, stage="compare",
               message=message, outputs=list(leaves))


def test_an_exception_is_its_type_and_torch_tensorrt_frame() -> None:
    frames = FRAME.format(f="converter_utils", n=310, fn="get_trt_tensor")
    first = signature(_error("AssertionError: Cannot convert 1j", frames))
    assert first == Signature("error", "compile", error="AssertionError",
                              frame="torch_tensorrt/dynamo/conversion/converter_utils.py:310 in "
                                    "get_trt_tensor", message="Cannot convert Nj")
    # The same message but for its numbers, the same type and frame: the same bug.
    assert first.same(signature(_error("AssertionError: Cannot convert 2j", frames,
                                       message="other words")))
    # Another message from the same type and frame: another bug.
    assert not first.same(signature(_error("AssertionError: Cannot broadcast 1j", frames)))
    # Another exception type, another frame, another stage: each a different bug.
    assert not first.same(signature(_error("TypeError: Cannot convert 1j", frames)))
    other_frame = FRAME.format(f="impl/elementwise", n=12, fn="add")
    assert not first.same(signature(_error("AssertionError: Cannot convert 1j", other_frame)))
    assert not first.same(signature(_error("AssertionError: Cannot convert 1j", frames, stage="run")))


def test_a_remote_exception_keeps_its_name_and_a_cited_line_stands_for_a_frame() -> None:
    error, frame = exception_of(_trace("RuntimeError: UnsupportedOperatorException: no converter", ""),
                                "refused (torch_tensorrt/dynamo/_compiler.py:812)")
    assert (error, frame) == ("UnsupportedOperatorException", "torch_tensorrt/dynamo/_compiler.py:812")


# Two failures of the complex rewrite's one frame on Torch-TensorRT 2.13.0, as a split-step
# Fourier step gives them: its FFT, and its nonlinear phase's complex scalar.
REWRITE = FRAME.replace("conversion/{f}", "lowering/passes/complex_graph_rewrite").format(
    n=1838, fn="propagate_metadata")
TORCH_NODE = ("\n\nWhile executing %{name} : [num_users=1] = call_function[target=torch.ops.{op}]"
              "(args = ({args}), kwargs = {{}})\nOriginal traceback:\n"
              'File "/home/u/zoo/optics.py", line {line}, in forward\n    psi = step(psi)\n'
              "Use tlparse to see full graph.")


def _rewrite_error(message: str, name: str, op: str, args: str, line: int = 25) -> Row:
    return _error(f"RuntimeError: {message}" + TORCH_NODE.format(name=name, op=op, args=args,
                                                               line=line), REWRITE)


def test_two_failures_of_one_frame_differ_by_message_and_node() -> None:
    fft = _rewrite_error("Expected cond to be True, but got False. (Could this error message be "
                         "improved? If so, please report an enhancement request to PyTorch.)",
                         "_fft_c2c_1", "aten._fft_c2c.default", "%cat_default, [1], 2, False")
    phase = _rewrite_error("Attempting to broadcast a dimension of length 2 at -1! Mismatching "
                           "argument at index 1 had torch.Size([2, 64, 2]); but expected shape "
                           "should be broadcastable to [2, 64]", "mul_3", "aten.mul.Tensor",
                           "%exp, %view_as_real")
    first, second = signature(fft), signature(phase)
    assert first.frame == second.frame  # exception type and frame alone cannot tell them apart
    assert (first.error, first.node, first.message) == (
        "RuntimeError", "aten._fft_c2c.default", "Expected cond to be True, but got False.")
    assert second.node == "aten.mul.Tensor" and second.message == (
        "Attempting to broadcast a dimension of length N at N! Mismatching argument at index N "
        "had <shape>; but expected shape should be broadcastable to <shape>")
    assert not first.same(second)
    # Another graph of the same bug: other node names, shapes, numbers and source line.
    smaller = _rewrite_error("Attempting to broadcast a dimension of length 4 at -2! Mismatching "
                             "argument at index 0 had torch.Size([4, 8, 2]); but expected shape "
                             "should be broadcastable to [4, 8, 2, 1]", "mul", "aten.mul.Tensor",
                             "%x0, %x1", line=3)
    assert signature(smaller).same(second)
    assert "executing aten._fft_c2c.default, from torch_tensorrt/" in first.describe()
    # Another release raises it a few lines away: the same bug across releases only.
    moved = replace(first, frame=first.frame.replace(":1838 ", ":1835 ") if first.frame else None)
    assert not moved.same(first) and moved.across_releases().same(first.across_releases())


def test_the_node_an_interpreter_was_executing_is_in_the_row_s_message() -> None:
    """In this process the frames are live: the note gives the arguments' dtypes and shapes and
    the user's line; from another process's text, torch's own line names the node."""
    class Bad(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.aten.mm.default(x, x)

    x = torch.randn(2, 3)
    program = torch.export.export(Bad(), (torch.randn(3, 3),))
    with pytest.raises(RuntimeError) as raised:
        torch.fx.Interpreter(program.graph_module).run(x)
    error = StageError("compile", raised.value, "")
    assert ", while executing %mm = aten.mm.default(%x: float32 [2, 3], %x: float32 [2, 3]) " \
           "from tests/unit/reduce/test_reduce.py:" in str(error), str(error)
    assert executing_op(error.traceback) == "aten.mm.default"
    # torch's own line, as a remote traceback's text carries it
    fft = _rewrite_error("Expected cond to be True, but got False. (Could this error message be "
                         "improved? If so, please report an enhancement request to PyTorch.)",
                         "_fft_c2c_1", "aten._fft_c2c.default", "%cat_default, [1], 2, False")
    assert executing(fft.traceback or "") == ("%_fft_c2c_1 = aten._fft_c2c.default(%cat_default, "
                                              "[1], 2, False) from /home/u/zoo/optics.py:25")
    assert bundle.title(signature(fft), fft, ["aten.fft_ifft.default"]) == (
        "RuntimeError at compile in complex_graph_rewrite.py:1838: Expected cond to be True, but "
        "got False, while executing %_fft_c2c_1 = aten._fft_c2c.default(%cat_default, [1], 2, "
        "False)")


def test_a_history_says_where_a_bug_began_and_where_it_was_fixed() -> None:
    same, ok = history.SAME, history.PASS
    fixed = {"2.12.1": same, "2.13.0": same, "2.14.0": ok}
    assert history.line(fixed) == "fails on 2.12.1, 2.13.0; passes on 2.14.0: fixed in 2.14.0"
    assert history.fixed_in(fixed) == "2.14.0"
    regressed = {"2.14.0": same, "2.11.0": ok, "2.12.1": same, "2.13.0": same}
    assert history.line(regressed) == ("fails on 2.12.1, 2.13.0, 2.14.0; passes on 2.11.0: a "
                                       "regression in 2.12")
    assert history.line({"2.13.0": same}) == "fails on 2.13.0"
    other = {"2.12.1": "error at compile: TypeError", "2.13.0": same}
    assert history.line(other) == ("fails on 2.13.0; fails another way on 2.12.1 (error at "
                                   "compile: TypeError)")
    assert history.fixed_in(other) is None and history.regression(other) is None
    # a pass between two failures is neither a fix nor a regression
    assert history.line({"2.12.1": same, "2.13.0": ok, "2.14.0": same}) == (
        "fails on 2.12.1, 2.14.0; passes on 2.13.0")
    assert history.candidates(["2.14.0", "2.12.1"]) == ["2.12.1", "2.14.0"]


def test_a_mismatch_is_its_kind_and_the_op_of_the_earliest_failing_output() -> None:
    ops = {"mul": "aten.mul.Tensor", "sub": "aten.sub.Tensor", "add": "aten.add.Tensor"}
    values = signature(_fail(_leaf(True), _leaf(False), _leaf(False)), ["add", "sub", "mul"], ops)
    assert values == Signature("fail", "compare", mismatch="values", op="aten.mul.Tensor")
    dtype = signature(_fail(_leaf(False, dtype="torch.float32")), ["mul"], ops)
    shape = signature(_fail(_leaf(False, shape=(2, 2))), ["mul"], ops)
    assert (dtype.mismatch, shape.mismatch) == ("dtype", "shape")
    # The same kind on another op, or another kind on the same op: rejected.
    assert not values.same(signature(_fail(_leaf(False)), ["sub"], ops))
    assert not values.same(dtype)
    # While bisecting from the output end the op is not yet known: only it is left out.
    assert values.same(signature(_fail(_leaf(False)), ["sub"], ops), op=False)
    assert not values.same(dtype, op=False)
    inputs = signature(_fail(_leaf(True), message="inputs after the call differ from eager's"))
    assert inputs.mismatch == "inputs" and not inputs.same(values, op=False)


def test_a_bare_exception_line_is_its_type_and_a_nan_where_eager_has_none_is_its_own_kind() -> None:
    """The builder's refusal ends in a bare ``AssertionError`` (``assert cuda_engine``), followed
    by what TensorRT logged at ERROR."""
    frames = FRAME.format(f="_TRTInterpreter", n=446, fn="run")
    trace = _trace("AssertionError", frames) + "TensorRT logged at ERROR: [GATHER]-[x]-[y]: no\n"
    refused = Row("z::m[v]", "z", "m", "v", "lowering", status=Status.ERROR, stage="compile",
                  message="", traceback=trace)
    assert signature(refused) == Signature(
        "error", "compile", error="AssertionError",
        frame="torch_tensorrt/dynamo/conversion/_TRTInterpreter.py:446 in run")
    nan = {**_leaf(False, "torch.float32", "torch.float32"), "nan": 128, "eager_nan": 0}
    found = signature(_fail(nan), ["sdpa"], {"sdpa": "aten.scaled_dot_product_attention.default"})
    assert found.mismatch == "nonfinite"
    assert found.describe() == ("fail at compare: NaN/Inf placement mismatch, first diverging at "
                                "aten.scaled_dot_product_attention.default")
    assert Signature("pass", None).describe() == "pass"


def test_titles_say_what_failed() -> None:
    refused = ("[GATHER]-[aten_ops.embedding.default]-[embed/gather]: Error Code 4: API Usage Error "
               "(IGatherLayer indices has type FLOAT, which this layer does not take)")
    frames = FRAME.format(f="_TRTInterpreter", n=446, fn="run")
    row = Row("z::m[v]", "z", "m", "v", "lowering", status=Status.ERROR, stage="compile",
              message="", traceback=_trace("AssertionError", frames)
              + f"TensorRT logged at ERROR: {refused}\nTensorRT logged at ERROR: {refused}\n")
    assert bundle.title(signature(row), row, ["aten.embedding.default"]) == (
        "AssertionError at compile in _TRTInterpreter.py:446: the builder refused "
        "aten_ops.embedding.default's GATHER layer: IGatherLayer indices has type FLOAT, which "
        "this layer does not take")
    overflow = _error("RuntimeError: value cannot be converted to type int32 without overflow",
                      FRAME.format(f="converter_utils", n=817, fn="to_torch"))
    assert bundle.title(signature(overflow), overflow, ["aten.mul.Tensor"]) == (
        "RuntimeError at compile in converter_utils.py:817: value cannot be converted to type "
        "int32 without overflow")
    at_run = _error("RuntimeError: Index tensor must have the same number of dimensions", stage="run")
    assert bundle.title(signature(at_run), at_run, ["aten.fill.Tensor", "aten.select_scatter.default"]
                        ) == ("RuntimeError at run, in the compiled aten.fill.Tensor and "
                              "aten.select_scatter.default: Index tensor must have the same number "
                              "of dimensions")
    nan = _fail({**_leaf(False, "torch.float32", "torch.float32"), "nan": 128, "eager_nan": 0})
    sdpa = "aten.scaled_dot_product_attention.default"
    assert bundle.title(signature(nan, ["a"], {"a": sdpa}), nan, [sdpa]) == (
        f"NaN/Inf placement differs from eager at {sdpa}: Torch-TensorRT gives 128 NaN where "
        "eager has none")
    off = _fail({**_leaf(False), "max_abs": 1.0, "rtol": 5e-3, "atol": 5e-3})
    assert bundle.title(signature(off, ["s"], {"s": "aten.rsub.Scalar"}), off, []) == (
        "wrong values from aten.rsub.Scalar: max abs error 1 (rtol 0.005, atol 0.005)")


def test_an_issue_says_its_history_and_a_different_failure_with_both_signatures() -> None:
    frames = FRAME.format(f="converter_utils", n=817, fn="to_torch")
    row = _error("RuntimeError: value cannot be converted to type int32 without overflow", frames)
    own = signature(row)
    ran = bundle.Ran("lowering", "2.13.0", bundle.CONVERTERS)
    issue = bundle.Issue("z::m[v]", row, own, 2, 1, "def forward(self, x0): ...", ["aten.mul.Tensor"],
                         ["x0: int64 [2, 8]"], [], "Random values.", {}, ran, "default", {}, {},
                         "trtcheck run reduced.py --backend lowering",
                         history="fails on 2.12.1, 2.13.0; passes on 2.14.0: fixed in 2.14.0")
    text = bundle.issue_text(issue)
    assert text.startswith("# RuntimeError at compile in converter_utils.py:817: value cannot")
    assert ("\n**Across Torch-TensorRT releases** (this bundle run on each): fails on 2.12.1, "
            "2.13.0; passes on 2.14.0: fixed in 2.14.0.\n") in text
    other = signature(_error("TypeError: no", frames))
    text = bundle.issue_text(replace(issue, different=other))
    assert text.startswith("# A different failure from the row's: ")
    assert f"this bundle gives {other.describe()}, where the row gave {own.describe()}" in text


def test_a_bundle_says_what_ran_the_row_in_its_own_words() -> None:
    measured = bundle.Ran("tensorrt", "2.13.0", bundle.MEASURED, "10.13.2")
    assert measured.how().startswith("Measured on TensorRT 10.13.2: ")
    assert measured.tensorrt_line() == "TensorRT 10.13.2"
    graph = bundle.Ran("lowering", "2.12.1", bundle.GRAPH)
    assert "Torch-TensorRT 2.12.1's own lowering" in graph.how() and "graph level" in graph.how()
    assert "converter" not in graph.tensorrt_line()
    ours = {"require_full_compilation": False, "min_block_size": 1, "truncate_double": True}
    call = graph.front_end.compile_call(ours, dryrun=True)
    assert "    min_block_size=1,\n" in call and "    truncate_double=True,\n" in call
    assert "dryrun=True" in call and "dryrun" not in graph.front_end.compile_call(ours)
    # a torch_compile row: the front-end's call, its options the same settings
    module = bundle.Ran("lowering", "2.13.0", bundle.CONVERTERS, frontend="torch_compile")
    assert 'torch.compile front-end (`backend="tensorrt"`)' in module.how()
    assert module.front_end.compile_call(ours).startswith('torch.compile(\n    module,\n    '
                                                       'backend="tensorrt",\n    options={')
    assert "`torch.compile(..., backend=\"tensorrt\")` option" in bundle.settings_note(ours, module, "t")
    # Torch-TensorRT's own default needs no word; trtcheck's 1 says what the default would do
    assert "default of 5" in bundle.settings_note(ours, graph, "truncate_double")
    assert "default of 5" not in bundle.settings_note({**ours, "min_block_size": 5}, graph, "p")


def test_only_failures_with_a_graph_are_reducible() -> None:
    assert reducible(_fail(_leaf(False))) is None
    assert "before there was an exported graph" in str(reducible(_error("X: y", stage="export")))
    passing = Row("z::m[v]", "z", "m", "v", "lowering")
    assert "not a failure" in str(reducible(passing))


class Chain(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.tanh(x * self.w)
        b = torch.relu(a) + 1
        return b * 2, torch.sigmoid(a)


def test_a_subgraph_feeds_recorded_values_and_holds_weights_as_buffers() -> None:
    x = torch.randn(3, 4)
    model = Chain().eval()
    rec = record(torch.export.export(model, (x,)), (x,), {})
    assert len(rec.nodes) == count_nodes(torch.export.export(model, (x,))) == 6
    first, _ = rec.outputs
    torch.testing.assert_close(rec.values[first.name], model(x)[0])
    # The first output's cone leaves the sigmoid out.
    cone = rec.cone([first.name])
    assert "sigmoid" not in cone and first.name in cone
    # Cut after tanh: its recorded value comes in as an input; the weight was cut away too.
    later = [n for n in rec.ordered(cone) if rec.op(n) != "aten.mul.Tensor" or n == first.name]
    later = [n for n in later if rec.op(n) != "aten.tanh.default"]
    sub = subgraph(rec, later)
    assert len(sub.inputs) == 1 and not sub.weights and sub.outputs == [first.name]
    torch.testing.assert_close(sub.inputs[0], rec.values["tanh"])
    torch.testing.assert_close(sub.module(*sub.inputs)[0], model(x)[0])
    head = subgraph(rec, rec.ordered(["mul", "tanh"]))
    assert list(head.weights) == ["w0"] and head.outputs == ["tanh"]
    assert count_nodes(head.export()) == 2


def test_random_values_keep_dtype_shape_and_integer_range() -> None:
    real = [torch.randn(3, 2, dtype=torch.complex64), torch.arange(5, 15), torch.tensor([True, False])]
    fake = random_like(real)
    assert [(t.dtype, t.shape) for t in fake] == [(t.dtype, t.shape) for t in real]
    assert not torch.equal(fake[0], real[0])
    assert int(fake[1].min()) >= 5 and int(fake[1].max()) <= 14


def test_slug_is_safe_for_artifacts() -> None:
    assert slug("zoo/a::m[complex64] lowering@2.13.0") == "zoo-a-m-complex64-lowering-2.13.0"
    assert slug("::") == "case"


def test_reports_say_how_far_a_reduction_got() -> None:
    row = _fail(_leaf(False))
    done = {"reduced": True, "bundle": "repro/x", "original_nodes": 571, "reduced_nodes": 1,
            "seconds": 50.3, "attempts": 16, "reproduced": True, "complete": True,
            "releases": {"2.12.1": "fails the same way", "2.14.0": "pass"}}
    text = reduction_text(Row(**{**row.__dict__, "reduction": done}))
    assert text is not None and "1 of 571 nodes" in text and "`repro/x/`" in text
    assert "2.14.0 pass" in text and "fails the same way in a fresh process" in text
    line = "fails on 2.12.1; passes on 2.14.0: fixed in 2.14.0"
    text = reduction_text(Row(**{**row.__dict__, "reduction": {**done, "history": line}}))
    assert text is not None and text.endswith(f"; across releases it {line}")
    different = {**done, "reproduced": False, "different": "error at compile: TypeError"}
    text = reduction_text(Row(**{**row.__dict__, "reduction": different}))
    assert text is not None and "a different failure in a fresh process (error at compile: " \
                                "TypeError), not the row's" in text
    early = {**done, "complete": False, "stopped": "attempt cap of 4 reached", "reduced_nodes": 9}
    text = reduction_text(Row(**{**row.__dict__, "reduction": early}))
    assert text is not None and "stopped early (attempt cap of 4 reached)" in text
    unchecked = {**done, "reproduced": False, "unchecked": "exit code 1: ImportError: no"}
    text = reduction_text(Row(**{**row.__dict__, "reduction": unchecked}))
    assert text is not None and "the check in a fresh process could not run (exit code 1: " in text
    assert reduction_text(row) is None
    # In Markdown, the path stays code while the text around it is escaped.
    shown = reduction_text(Row(**{**row.__dict__, "reduction": {**done, "bundle": "repro/a_b"}}), md)
    assert shown is not None and "bundle `repro/a_b/`" in shown


# -- on Torch-TensorRT's real lowering code ------------------------------------------------------


def test_decomposing_a_program_raises_no_leafspec_warning() -> None:
    """torch 2.13 warns of an isinstance check no one made whenever run_decompositions copies
    a program's tree specs: reduce decomposes every candidate, and must not print it."""
    import warnings

    program = torch.export.export(torch.nn.Linear(3, 2), (torch.ones(1, 3),))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert count_nodes(program) >= 1
    assert not [w for w in caught if "LeafSpec" in str(w.message)]


def test_random_ops_and_an_eager_that_differs_call_to_call_are_randomness_not_a_bug() -> None:
    from trtcheck.reduce.reducer import _randomness

    class Noisy(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.sin() + torch.randn_like(x)

    x = torch.ones(3)
    rec = record(torch.export.export(Noisy(), (x,)), (x,), {})
    why = _randomness(rec, eager_differs=True)
    assert why is not None and why.startswith("randomness in the model: aten.randn_like.default")
    plain = record(torch.export.export(torch.nn.Tanh(), (x,)), (x,), {})
    assert _randomness(plain, eager_differs=False) is None
    assert "eager itself gives another result" in (_randomness(plain, eager_differs=True) or "")


def test_a_bundle_is_checked_at_the_lowering_level_it_was_reduced_at(tmp_path) -> None:
    def command(dryrun: bool, backend: str) -> list[str]:
        opts = Options(paths=(tmp_path,), out=tmp_path, torch_tensorrt=("2.13.0",),
                       lowering_dryrun=dryrun)
        reducer = Reducer(opts, {}, InProcessExecutor(opts, {}), Limits(), {})
        try:
            return reducer._command(Row("z::m[v]", "z", "m", "v", backend, profile="default"))
        finally:
            reducer.close()

    # a row that failed before the deploy stage is checked without it
    assert command(True, "lowering") == ["run", "--backend", "lowering", "--profile", "default",
                                         "--torch-tensorrt", "2.13.0", "--lowering-dryrun",
                                         "--no-deploy"]
    assert "--lowering-dryrun" not in command(False, "lowering")
    assert "--lowering-dryrun" not in command(True, "emulate")


def test_a_lowering_bundle_s_check_runs_its_history_s_releases_too(
        tmp_path: Path, ttrt_releases: dict[str, Path]) -> None:
    opts = Options(paths=(tmp_path,), out=tmp_path, torch_tensorrt=("2.13.0",),
                   releases=("2.14.0", "2.12.1", "2.13.0"))
    reducer = Reducer(opts, {}, InProcessExecutor(opts, {}), Limits(), {})
    try:
        row = Row("z::m[v]", "z", "m", "v", "lowering", profile="default")
        more = reducer._history(row)
        assert more == ("2.12.1", "2.13.0", "2.14.0")
        assert reducer._command(row, more) == [
            "run", "--backend", "lowering", "--profile", "default", "--torch-tensorrt", "2.13.0",
            "--torch-tensorrt", "2.12.1", "--torch-tensorrt", "2.14.0", "--no-deploy"]
        assert reducer._history(replace(row, backend="emulate")) == ()
        # the fresh rows of every release: the row's own is its release's
        fresh = [replace(row, backend=f"lowering@{v}", status=Status.PASS) for v in more]
        assert reducer._pick(fresh, row) is fresh[1]
    finally:
        reducer.close()


class PositionIds(torch.nn.Module):
    """HF-style position ids from an attention mask, into an embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.positions = torch.nn.Embedding(8, 4)

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        return self.positions((mask.cumsum(-1) - 1).masked_fill(mask == 0, 1))


def test_a_replay_feeds_the_case_s_own_inputs_through_random_weights() -> None:
    """Random values of the same dtype and range break what ties the inputs together (a padded
    position's -1 that the mask hides): the replay keeps it, and leaves the real weights out."""
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1]])
    model = PositionIds().eval()
    rec = record(torch.export.export(model, (mask,)), (mask,), {})
    (weight,) = rec.weights
    fake = {weight: torch.randn(8, 4)}
    sub = subgraph(rec, rec.names[1:], replay(rec, fake))  # cut after the cumsum: fed its value
    assert torch.equal(sub.inputs[0], mask.cumsum(-1))
    assert sub.weights == {"w0": fake[weight]}
    (out,) = sub.module(*sub.inputs)
    torch.testing.assert_close(out, torch.nn.functional.embedding(
        (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1), fake[weight]))


# -- on Torch-TensorRT 2.13.0's converters, in this process ---------------------------------------


def _reduce_all(opts: Options, executor: InProcessExecutor, releases: InProcessExecutor,
                with_history: set[str]) -> dict[str, dict[str, Any]]:
    """Every row of ``opts``'s zoo, each reduced here and its bundle run again as ``trtcheck
    reduce``'s fresh check runs it (in this process, on the executor's backends; for the cases
    ``with_history``, on the other ``releases`` too): each reduction by case name, with its row,
    its bundle's folder, and the reducer's signature of the row's neighbour where it has one."""
    reducer = Reducer(opts, executor.backends, executor, Limits(), {"torch": torch.__version__})
    done = {}
    try:
        for case in collect(opts).cases:
            (row,) = [r for r in executor.rows(case) if isinstance(r, Row)]
            found = reducer.reduce(case, row)
            if isinstance(found, Pending):
                path = found.folder / bundle.ZOO_FILE
                fresh = [reducer._runner(row, BUILTIN_PROFILES["default"]).row(path, case)]
                if case.spec.name in with_history:
                    loaded = discover.load(ZooFile(path.parent, path))
                    assert isinstance(loaded, discover.Discovered)
                    fresh += [r for r in releases.rows(Case(loaded.file, loaded.specs[0],
                                                            case.variant)) if isinstance(r, Row)]
                found = {**found.finish(fresh, None), "folder": found.folder}
            done[case.spec.name] = {**found, "row": row}
            if case.spec.name == "split_step":  # its phase alone: the neighbour bug
                rec, _ = _record(case)
                fft = next(i for i, n in enumerate(rec.names) if "fft_ifft" in rec.op(n))
                neighbour = reducer._runner(row, BUILTIN_PROFILES["default"]).run(
                    subgraph(rec, rec.names[fft + 1:]), case)
                done[case.spec.name]["neighbour"] = signature(neighbour)
    finally:
        reducer.close()
    return done


@pytest.mark.slow
def test_everyday_rows_reduce_to_bundles_that_reproduce_and_only_under_their_settings(
        tmp_path: Path, ttrt_releases: dict[str, Path]) -> None:
    """One lowering host for four rows (a test each would start one each): position ids (the
    builder refuses FLOAT indices), an int64 hash, a NaN where eager has none, an error at run
    (a complex Python scalar added); then the hash's repro under Torch-TensorRT's defaults and
    under its SETTINGS."""
    opts = Options(paths=(ZOO / "everyday.py",), out=tmp_path, backends=("lowering",),
                   torch_tensorrt=("2.13.0",), timing=bundle.QUICK, isolate=False, deploy=False,
                   keyword="not no_bos")  # another builder refusal: the position ids show one
    backend = LoweringBackend("2.13.0")
    executor = InProcessExecutor(opts, {"lowering": backend})
    others = ("2.14.0",)  # the int32 constant's and the cumsum's history (one host more)
    labels = tuple(f"lowering@{v}" for v in others)
    releases = InProcessExecutor(replace(opts, backends=labels, torch_tensorrt=others),
                                 {label: LoweringBackend(v) for label, v in zip(labels, others,
                                                                                strict=True)})
    try:
        _check_everyday(_reduce_all(opts, executor, releases, {"int64_hash", "position_ids"}),
                        backend)
    finally:
        executor.close()
        releases.close()


def _check_everyday(done: dict[str, dict[str, Any]], backend: LoweringBackend) -> None:
    # Two bugs of the complex rewrite, raised from one frame: the bundle keeps the row's own
    # (the FFT's, its op in the graph and its message and node in the title), never the phase's.
    fourier = done["split_step"]
    assert fourier["reproduced"] is True and fourier["signature"].startswith(
        "error at compile: RuntimeError (Expected cond to be True, but got False.) executing "
        "aten._fft_c2c.default, from torch_tensorrt/dynamo/lowering/passes/complex_graph_rewrite.py"
    ), fourier
    neighbour, own = fourier["neighbour"], signature(fourier["row"])
    assert neighbour.frame == own.frame and not neighbour.same(own), neighbour
    assert neighbour.message is not None and "Attempting to broadcast" in neighbour.message
    assert "fft" in (fourier["folder"] / bundle.ZOO_FILE).read_text()
    title = (fourier["folder"] / "ISSUE.md").read_text().splitlines()[0]
    assert title.startswith("# RuntimeError at compile in complex_graph_rewrite.py:") and (
        "Expected cond to be True, but got False, while executing %_fft_c2c") in title, title
    assert "while executing %_fft_c2c_1 = aten._fft_c2c.default(%cat_default: float32 [2, 64, 2]" \
           in fourier["row"].message, fourier["row"].message

    ids = done["position_ids"]
    assert ids["row"].stage == "compile" and ids["reproduced"] is True, ids
    # random inputs index the embedding at -1 (eager fails): the case's own inputs are held
    assert ids["values"] == "example" and ids["reduced_nodes"] < ids["original_nodes"]
    issue = (ids["folder"] / "ISSUE.md").read_text()
    assert issue.startswith("# AssertionError at compile in _TRTInterpreter.py:446: the builder "
                            "refused aten_ops.embedding.default's GATHER layer: IGatherLayer "
                            "indices has type FLOAT")
    assert "case's own example inputs" in issue and "eager itself fails" in issue
    assert "Torch-TensorRT 2.13.0's own `dynamo.compile`" in issue and "converter level" in issue
    assert "- Torch-TensorRT 2.13.0\n" in issue and "min_block_size=1," in issue
    # A NaN where eager has none and a run-time error keep their signatures while the graph shrinks.
    nan = done["padded_attention"]
    assert (nan["reduced_nodes"], nan["reproduced"]) == (1, True), nan
    assert nan["signature"].endswith("NaN/Inf placement mismatch, first diverging at "
                                     "aten.scaled_dot_product_attention.default")
    at_run = done["complex_bias"]
    assert at_run["row"].stage == "run" and at_run["reproduced"] is True, at_run
    assert at_run["reduced_nodes"] < at_run["original_nodes"]
    assert (at_run["folder"] / "ISSUE.md").read_text().startswith(
        "# RuntimeError at run, in the compiled aten.add.Tensor: view_as_complex is only supported")

    # The hash reduces to one node: at Torch-TensorRT's default min_block_size of 5 it never
    # reaches a converter and matches eager; under the bundle's SETTINGS (the row's profile,
    # min_block_size 1) its converter makes 2654435761 an int32 constant and fails. Compiled as
    # repro.py compiles it, by the release's own code over the stand-in.
    hashed = done["int64_hash"]
    assert (hashed["reduced_nodes"], hashed["reproduced"]) == (1, True), hashed
    # Its history, and the cumsum's, each bundle run on 2.14.0 too: 2.14.0's own embedding
    # converter refuses the FLOAT indices itself, another failure of the same cause.
    across = "**Across Torch-TensorRT releases** (this bundle run on each): "
    assert f"\n{across}fails on 2.13.0, 2.14.0.\n" in (hashed["folder"] / "ISSUE.md").read_text()
    assert hashed["history"] == "fails on 2.13.0, 2.14.0" and hashed["fixed_in"] is None
    assert f"\n{across}fails on 2.13.0; fails another way on 2.14.0 (error at compile: " \
           "RuntimeError (The `embedding` op requires int32 or int64 indices" in (
               ids["folder"] / "ISSUE.md").read_text()
    script = runpy.run_path(str(hashed["folder"] / bundle.REPRO), run_name="repro")
    assert script["SETTINGS"]["min_block_size"] == 1
    data = torch.load(hashed["folder"] / bundle.DATA, weights_only=True)
    module, inputs = script["Reduced"](data["weights"]).eval(), tuple(data["inputs"])
    expected = module(*inputs)
    blob, _ = sendable(torch.export.export(module, inputs))
    call = call_arguments((2, 13), inputs, {}, "cpu")
    host = backend.host(locate("2.13.0"))  # the host the reductions ran on
    compiled, _ = host.compile(ExportCompile, blob, call, {}, "cpu", False, (inputs, {}))
    for got, want in zip(compiled(*inputs), expected, strict=True):
        assert torch.equal(got, want)  # Torch-TensorRT's defaults: no failure to see
    with pytest.raises(RuntimeError, match="cannot be converted to type int32 without overflow"):
        host.compile(ExportCompile, blob, call, script["SETTINGS"], "cpu", False, (inputs, {}))
