"""``trtcheck reduce``: the signature rules, the recorded graph and its subgraphs, bundle titles,
and reductions of everyday models on Torch-TensorRT 2.13.0's converters through the lowering host,
all in this process (the CLI's runs are tests/e2e/test_reduce.py's)."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.helpers import REPO
from trtcheck.backends.lowering.code import locate
from trtcheck.backends.lowering.lowering_backend import LoweringBackend, sendable
from trtcheck.backends.lowering.messages import ExportCompile
from trtcheck.backends.torch_tensorrt.compat import call_arguments
from trtcheck.config.options import Options
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.execution.run import InProcessExecutor, collect
from trtcheck.reduce import bundle
from trtcheck.reduce.graph import count_nodes, record, replay, slug, subgraph
from trtcheck.reduce.reducer import Limits, Pending, Reducer, random_like
from trtcheck.reduce.signature import Signature, exception_of, reducible, signature
from trtcheck.render.escape import md
from trtcheck.render.text import reduction_text
from trtcheck.results.rows import Row
from trtcheck.status import Status

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
                                    "get_trt_tensor")
    # Another message, the same type and frame: the same bug.
    assert first.same(signature(_error("AssertionError: Cannot convert 2j", frames,
                                       message="other words")))
    # Another exception type, another frame, another stage: each a different bug.
    assert not first.same(signature(_error("TypeError: Cannot convert 1j", frames)))
    other_frame = FRAME.format(f="impl/elementwise", n=12, fn="add")
    assert not first.same(signature(_error("AssertionError: Cannot convert 1j", other_frame)))
    assert not first.same(signature(_error("AssertionError: Cannot convert 1j", frames, stage="run")))


def test_a_remote_exception_keeps_its_name_and_a_cited_line_stands_for_a_frame() -> None:
    error, frame = exception_of(_trace("RuntimeError: UnsupportedOperatorException: no converter", ""),
                                "refused (torch_tensorrt/dynamo/_compiler.py:812)")
    assert (error, frame) == ("UnsupportedOperatorException", "torch_tensorrt/dynamo/_compiler.py:812")


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

    assert command(True, "lowering") == ["run", "--backend", "lowering", "--profile", "default",
                                         "--torch-tensorrt", "2.13.0", "--lowering-dryrun"]
    assert "--lowering-dryrun" not in command(False, "lowering")
    assert "--lowering-dryrun" not in command(True, "emulate")


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


def _reduce_all(opts: Options, executor: InProcessExecutor) -> dict[str, dict[str, Any]]:
    """Every row of ``opts``'s zoo, each reduced here and its bundle run again as ``trtcheck
    reduce``'s fresh check runs it (in this process, on the executor's backends): each reduction
    by case name, with its row and its bundle's folder."""
    reducer = Reducer(opts, executor.backends, executor, Limits(), {"torch": torch.__version__})
    done = {}
    try:
        for case in collect(opts).cases:
            (row,) = [r for r in executor.rows(case) if isinstance(r, Row)]
            found = reducer.reduce(case, row)
            if isinstance(found, Pending):
                fresh = reducer._runner(row, BUILTIN_PROFILES["default"]).row(
                    found.folder / bundle.ZOO_FILE, case)
                found = {**found.finish([fresh], None), "folder": found.folder}
            done[case.spec.name] = {**found, "row": row}
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
                   torch_tensorrt=("2.13.0",), timing=bundle.QUICK, isolate=False,
                   keyword="not no_bos")  # another builder refusal: the position ids show one
    backend = LoweringBackend("2.13.0")
    executor = InProcessExecutor(opts, {"lowering": backend})
    try:
        _check_everyday(_reduce_all(opts, executor), backend)
    finally:
        executor.close()


def _check_everyday(done: dict[str, dict[str, Any]], backend: LoweringBackend) -> None:
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
