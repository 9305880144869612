"""The ``lowering`` backend on Torch-TensorRT's real Python code (fetched wheels, no TensorRT).

Each pattern of ``tests/zoos/lowering_patterns`` runs through the real 2.13.0 lowering; the
expectations below are what that code was observed to do, each row's message naming the cause.
Loading is checked on every release trtcheck knows (2.12.1, 2.13.0, 2.14.0).
"""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils import _pytree as pytree

from tests.helpers import FIXTURES, TESTS, trtcheck
from trtcheck.backends.base import CompileJob
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import BUILTIN_PROFILES, Profile
from trtcheck.core.traits import Kind
from trtcheck.errors import INTERNAL, REPORT_CONVERTER, Unsupported
from trtcheck.execution.case import PREDICTION_GAP, iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Evidence, Row
from trtcheck.status import Status

pytestmark = pytest.mark.slow

ZOO = TESTS / "zoos" / "lowering_patterns"
STAGES = TESTS / "zoos" / "faults" / "stages.py"  # a model returning a str
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)
EARLY_RETURN = "compile_module returns the lowered graph unpartitioned (torch_tensorrt/dynamo/_compiler.py:"
TRUNCATED = ("float64_affine[float64]", "float64_made_inside[float32]", "product[complex128]",
             "guide_rope[complex64]")
# Raised in torch's broadcast check while Torch-TensorRT's complex rewrite propagates shapes.
REWRITE_BROADCAST = "Attempting to broadcast a dimension of length 16"
IN_REWRITE = ("(raised in torch, called from Torch-TensorRT's complex-to-real rewrite at torch_tensorrt/"
              "dynamo/lowering/passes/complex_graph_rewrite.py:1838 in propagate_metadata)")


def _complete(evidence: Evidence) -> bool:
    """Whether the lowering backend filled every part of the evidence it knows."""
    return bool(evidence.path and evidence.settings and evidence.engines is not None
                and evidence.versions.get("torch_tensorrt") and evidence.details.get("complex_path"))

# (case, profile) -> (status, stage, words the message must hold); observed on Torch-TensorRT 2.13.0.
EXPECTED: dict[tuple[str, str], tuple[Status, str | None, str | tuple[str, ...]]] = {
    ("one_minus[complex64]", "default"): (Status.FAIL, "compare", "max abs err 1,"),
    ("times_2j[complex64]", "default"): (Status.PASS, None, ""),
    ("over_complex_scalar[complex64]", "default"): (Status.PASS, None, ""),
    ("times_2j_as_real[complex64]", "default"):
        (Status.FAIL, "compare", "dtype torch.complex64 != eager torch.float32; shape [2, 8, 16] != eager"),
    ("over_complex_scalar_as_real[complex64]", "default"):
        (Status.FAIL, "compare", "dtype torch.complex64 != eager torch.float32"),
    ("plus_1j[complex64]", "default"):
        (Status.ERROR, "run", "view_as_complex is only supported for half, float and double tensors, "
                              "but got a tensor of scalar type: ComplexFloat"),
    **{(case, "default"): (Status.ERROR, "compile", REWRITE_BROADCAST) for case in (
        "complex_plus_real[complex64]", "complex_of_reals[complex64]",
        "real_part_as_complex[complex64]")},
    ("two_complex_outputs[complex64]", "default"):
        (Status.FAIL, "compare", "2 of 2 outputs failed; worst: out[0]: dtype torch.float32 != eager "
                                 "torch.complex64; shape [2, 8, 16, 2]"),
    ("float64_affine[float64]", "default"): (Status.UNSUPPORTED, "compile", "TensorRT has no FP64"),
    ("float64_affine[float64]", "truncate_double"): (Status.PASS, None, "precision lost"),
    ("float64_made_inside[float32]", "default"): (Status.UNSUPPORTED, "compile", "TensorRT has no FP64"),
    ("float64_made_inside[float32]", "truncate_double"):
        (Status.PASS, None, "returned out as float32"),
    ("product[complex128]", "default"): (Status.UNSUPPORTED, "compile", "TensorRT has no FP64"),
    ("product[complex128]", "truncate_double"):
        (Status.PASS, None, "returned out as complex64"),
    **{(case, "default"): (Status.PASS, None, "") for case in (
        "guide_rope[complex64]", "product[complex64]", "quotient[complex64]",
        "conjugate_product[complex64]", "buffer_product[complex64]", "llama_freqs[complex64]")},
    ("guide_rope[complex64]", "truncate_double"): (Status.PASS, None, ""),
    # int64 results the converters narrow inside the engine, each named in a note (see below).
    ("top_ids[float32]", "default"): (Status.PASS, None, ""),
    # A structseq output: sent to the host flat, rebuilt here, compared leaf by leaf.
    ("top_three[float32]", "default"): (Status.PASS, None, ""),
    ("running_total[int64]", "default"):
        (Status.FAIL, "compare", "30 of 30 int64 values differ"),
    # Torch-TensorRT's own validator reads a dim the exported node does not hold; the message
    # names the node it was validating, then the user's line (patterns.py:N), then the frame.
    ("sort_default_dim[float32]", "default"):
        (Status.ERROR, "compile", ("IndexError: tuple index out of range, while executing %sort = "
                                   "aten.sort.default(%x: float32 [4, 8]) from ",
                                   "patterns.py:",
                                   " (raised inside Torch-TensorRT at torch_tensorrt/dynamo/"
                                   "conversion/aten_ops_converters.py:3003 in sort_validator: `dim "
                                   "= node.args[1]`: a bug in Torch-TensorRT; report it to "
                                   "Torch-TensorRT with this frame)")),
}


@pytest.fixture(scope="module")
def behaving(ttrt_releases: dict[str, Path]) -> Iterator[LoweringBackend]:
    """The converter level on 2.13.0: one host for this module's in-process compiles (each host
    pays the release's import, seconds a start)."""
    backend = LoweringBackend("2.13.0")
    yield backend
    backend.deactivate()


@pytest.fixture(scope="module")
def rows(once: Callable[[str, Callable[[Path], None]], Path],
         ttrt_releases: dict[str, Path]) -> dict[tuple[str, str], Row]:
    """Every pattern under the default profile, and those in TRUNCATED under truncate_double, on
    2.13.0: made by one test worker for both (:func:`once`; a worker that steals this module's
    tests reads them instead of compiling every pattern again)."""

    def make(folder: Path) -> None:
        backend = LoweringBackend("2.13.0")
        found: dict[tuple[str, str], Row] = {}
        try:
            for profile in (BUILTIN_PROFILES["default"], BUILTIN_PROFILES["truncate_double"]):
                opts = Options(paths=(ZOO,), profiles=(profile,), timing=QUICK, deploy=False)
                for case in collect(opts).cases:
                    name = case.case_id.split("::")[1]
                    if profile.name == "default" or name in TRUNCATED:
                        for row in iter_rows(case, opts, {"lowering": backend}):
                            if isinstance(row, Row):
                                found[(name, row.profile)] = row
        finally:
            backend.deactivate()
        (folder / "rows.pickle").write_bytes(pickle.dumps(found))

    return pickle.loads((once("lowering_patterns", make) / "rows.pickle").read_bytes())


def test_every_expectation_has_its_row(rows: dict[tuple[str, str], Row]) -> None:
    assert set(EXPECTED) <= set(rows)


@pytest.mark.parametrize("key", list(EXPECTED), ids=[f"{c}-{p}" for c, p in EXPECTED])
def test_pattern(rows: dict[tuple[str, str], Row], key: tuple[str, str]) -> None:
    status, stage, words = EXPECTED[key]
    row = rows[key]
    assert (row.status, row.stage) == (status, stage), row.message
    parts = (words,) if isinstance(words, str) else words  # in this order
    assert re.search(".*".join(map(re.escape, parts)), row.message), row.message
    if row.stage != "compile":  # compiled: the backend's evidence is in the row
        assert _complete(row.evidence), row.evidence
        assert row.evidence.versions["torch_tensorrt"] == "2.13.0" and row.kind is Kind.LOWERED


def test_an_error_inside_the_complex_rewrite_names_the_rewrite_and_its_frame(
        rows: dict[tuple[str, str], Row]) -> None:
    for case in ("complex_plus_real[complex64]", "complex_of_reals[complex64]",
                 "real_part_as_complex[complex64]"):
        assert rows[(case, "default")].message.endswith(IN_REWRITE), rows[(case, "default")].message


def test_scalar_patterns_pass_because_nothing_is_converted(rows: dict[tuple[str, str], Row]) -> None:
    """z * 2j alone: no op is TensorRT-convertible, so the real compile leaves the graph to PyTorch;
    returned through view_as_real, the same early return hands back a graph whose input was
    retyped to (..., 2) with no adapter, and the result is wrong."""
    for case in ("times_2j[complex64]", "times_2j_as_real[complex64]"):
        evidence = rows[(case, "default")].evidence
        assert evidence.engines == 0 and "no op is TensorRT-convertible" in " ".join(evidence.notes)
        assert EARLY_RETURN in " ".join(evidence.notes)


@pytest.fixture(scope="module")
def dryrun(ttrt_releases: dict[str, Path]) -> Iterator[LoweringBackend]:
    """The graph level (``--lowering-dryrun``) on 2.13.0: one host for this module's tests of it."""
    backend = LoweringBackend("2.13.0", dryrun=True)
    yield backend
    backend.deactivate()


class Affine64(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(8, dtype=torch.float64), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.scale + 1).sum(-1)


def test_fp64_rejection_cites_the_release(rows: dict[tuple[str, str], Row], dryrun: LoweringBackend) -> None:
    """Through the converters the refusal is Torch-TensorRT's own, with its file and line; at the
    graph level trtcheck names the float64 values the block holds, citing the same file."""
    message = rows[("float64_affine[float64]", "default")].message
    assert message.startswith("TensorRT has no FP64 and truncate_double is off: TensorRT does not "
                              "support float64 (double) precision")
    assert "(torch_tensorrt/dynamo/conversion/converter_utils.py:" in message
    x = torch.randn(2, 8, dtype=torch.float64)
    job = CompileJob(torch.export.export(Affine64(), (x,)), (x,), {}, Profile("default"), "cpu")
    with pytest.raises(Unsupported) as graph:
        dryrun.compile(job)
    assert "constant scale" in str(graph.value) and "truncate_double is off" in str(graph.value)
    assert "torch_tensorrt/dynamo/conversion/converter_utils.py:" in str(graph.value)


class Structured(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, Any]:
        return {"top": torch.topk(x, 3), "max": torch.max(x, dim=1)}


def test_structseq_outputs_come_back_in_eager_s_structure(dryrun: LoweringBackend) -> None:
    """``torch.export.save`` has no name for a structseq: the host gets the program with flat
    outputs, and the module's outputs are rebuilt into the user's structure."""
    x = torch.randn(4, 8)
    compiled = dryrun.compile(CompileJob(torch.export.export(Structured(), (x,)), (x,), {},
                                         Profile("default"), "cpu"))
    got, eager = compiled.fn(x), Structured()(x)
    assert type(got["top"]) is torch.return_types.topk and type(got["max"]) is torch.return_types.max
    assert all(torch.equal(a, b) for a, b in zip(pytree.tree_leaves(got), pytree.tree_leaves(eager),
                                                  strict=True))


def test_truncate_double_evidence(rows: dict[tuple[str, str], Row], dryrun: LoweringBackend) -> None:
    """Through the converters: the engine hands the float64 output back as float32, named in a note
    on the row; at the graph level, trtcheck's own rule says the same and names the constant."""
    evidence = rows[("float64_made_inside[float32]", "truncate_double")].evidence
    assert "output 0 comes back float32 where eager gives float64" in " ".join(evidence.notes)
    assert evidence.settings["truncate_double"] is True and evidence.settings["dryrun"] is False
    assert evidence.details["level"] == "converters and engine (TensorRT stand-in)"
    assert evidence.details["stage"].startswith("converters: 1 engine(s)")
    assert evidence.details["engine_layers"]["_run_on_acc_0"]
    assert "float64 → float32" in evidence.path
    x = torch.randn(2, 8, dtype=torch.float64)
    job = CompileJob(torch.export.export(Affine64(), (x,)), (x,), {},
                     BUILTIN_PROFILES["truncate_double"], "cpu")
    graph = dryrun.compile(job).evidence
    notes = " ".join(graph.notes)
    assert "float64 constant scale" in notes and "truncated to float32" in notes
    assert "as float32: TensorRT builds float64 outputs as float32" in notes
    assert graph.settings["dryrun"] is True and graph.details["level"] == "graph (dryrun)"


ARGMAX_AS_INT32 = ("int64 narrowed to int32 inside the engine by argmax (aten.argmax.default): its "
                   "int64 result is built as int32 (exact while |value| < 2**31)")


def test_int64_narrowed_inside_the_engine_is_a_note(rows: dict[tuple[str, str], Row]) -> None:
    """The engine hands both outputs back as int64 (no dtype note), but argmax's converter builds
    TopK's INT32 indices (values survive: a note on a pass) and cumsum's adds the int64 ids in
    float32 (ids near 2**40 do not survive: a note on a failure)."""
    top = rows[("top_ids[float32]", "default")].evidence.notes
    assert ARGMAX_AS_INT32 in top and not any("comes back" in n for n in top)
    (total,) = [n for n in rows[("running_total[int64]", "default")].evidence.notes if "int64" in n]
    assert total.startswith("int64 narrowed to float32 inside the engine by cumsum "
                            "(aten.cumsum.default): its int64 result is built as float32; layer '")
    assert "cumsum_elementwise_add_cast_lhs_val]' casts an int64 input to float32 (exact while " \
           "|value| <= 2**24)" in total


def test_handled_patterns_build_one_engine(rows: dict[tuple[str, str], Row]) -> None:
    evidence = rows[("llama_freqs[complex64]", "default")].evidence
    assert evidence.engines == 1 and evidence.details["complex_path"] == "complex_graph_rewrite"
    assert evidence.path == ["complex → real (complex_graph_rewrite)", "1 TensorRT engine"]


def test_host_traceback_is_kept(rows: dict[tuple[str, str], Row]) -> None:
    trace = rows[("complex_plus_real[complex64]", "default")].traceback
    assert "lowering host" not in rows[("complex_plus_real[complex64]", "default")].message
    assert "torch_tensorrt/dynamo/_compiler.py" in trace  # the host's frames, chained


class ComplexProduct(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return z * w


def test_real_compile_early_return_is_reproduced(behaving: LoweringBackend) -> None:
    """Fewer convertible ops than min_block_size: dryrun would partition, a real compile returns the
    lowered graph, whose complex inputs are already (..., 2) placeholders."""
    z, w = (torch.randn(2, 8, dtype=torch.complex64) for _ in range(2))
    job = CompileJob(torch.export.export(ComplexProduct(), (z, w)), (z, w), {},
                     Profile("big_blocks", min_block_size=50), "cpu")
    compiled = behaving.compile(job)
    notes = " ".join(compiled.evidence.notes)
    assert "fewer than min_block_size 50 (dryrun alone would partition it)" in notes and EARLY_RETURN in notes
    assert compiled.evidence.engines == 0
    assert compiled.fn(z, w).shape != (z * w).shape  # the retyped graph misreads complex inputs
    assert LoweringBackend.traits.subprocess  # its calls run in the host: timed after eager


class Doubler(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + 1


def test_input_mutation_is_dropped_by_the_lowering(behaving: LoweringBackend) -> None:
    """Torch-TensorRT's decompositions make ``x.mul_(2)`` functional, partitioned or not: the
    caller's tensor comes back untouched (eager doubles it), which the run reports as an input
    difference."""
    x = torch.randn(4, 8)
    for profile in (Profile("default"), Profile("unpartitioned", min_block_size=50)):
        compiled = behaving.compile(CompileJob(torch.export.export(Doubler(), (x.clone(),)), (x.clone(),),
                                              {}, profile, "cpu"))
        mine = x.clone()
        torch.testing.assert_close(compiled.fn(mine), x * 2 + 1)
        assert torch.equal(mine, x)


class TopIds(torch.nn.Module):
    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return torch.argmax(scores, dim=-1)


class GuideRoPE(torch.nn.Module):
    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


@pytest.mark.parametrize("version", ["2.12.1", "2.13.0", "2.14.0"])
def test_each_release_loads_and_lowers(ttrt_releases: dict[str, Path], behaving: LoweringBackend,
                                       version: str) -> None:
    backend = behaving if version == behaving.code else LoweringBackend(version)
    assert backend.unavailable_reason("cpu") is None
    args = (torch.randn(1, 16, 64), torch.randn(1, 16, 32, dtype=torch.complex64))
    compiled = backend.compile(CompileJob(torch.export.export(GuideRoPE(), args), args, {},
                                          Profile("default"), "cpu"))
    torch.testing.assert_close(compiled.fn(*args), GuideRoPE()(*args))
    evidence = compiled.evidence
    assert _complete(evidence)
    assert evidence.versions["torch_tensorrt"] == version and evidence.engines == 1
    assert evidence.boundaries == ["aten.view_as_real.default"]
    mismatched = [n for n in evidence.notes if n.startswith("mismatched pairing")]
    assert bool(mismatched) == (version != "2.13.0"), evidence.notes
    # every release's argmax converter builds the int64 result as TopK's INT32 indices
    scores = torch.randn(4, 1000)
    ids = backend.compile(CompileJob(torch.export.export(TopIds(), (scores,)), (scores,), {},
                                     Profile("default"), "cpu"))
    assert torch.equal(ids.fn(scores), TopIds()(scores))
    assert ARGMAX_AS_INT32 in ids.evidence.notes


def test_fp64_without_truncate_is_unsupported_not_error(behaving: LoweringBackend) -> None:
    x = torch.randn(3, dtype=torch.float64)
    job = CompileJob(torch.export.export(Doubler(), (x.clone(),)), (x.clone(),), {}, Profile("default"),
                     "cpu")
    # Through the converters the float64 input reaches the float32 engine input Torch-TensorRT
    # built for it, and its runtime refuses it (dryrun: trtcheck's rule named the block instead).
    with pytest.raises(Unsupported, match=r"TensorRT has no FP64 and truncate_double is off: Dtype "
                                          r"mismatch for input x\. Expect torch\.float32, got "
                                          r"torch\.float64\..*\(torch_tensorrt/dynamo/runtime/"):
        behaving.compile(job)


def test_unknown_code_is_unavailable_with_the_fix(tmp_path: Path) -> None:
    reason = LoweringBackend(str(tmp_path)).unavailable_reason("cpu")
    assert reason is not None and "holds no torch_tensorrt package" in reason


def test_run_end_to_end(ttrt_releases: dict[str, Path], tmp_path: Path) -> None:
    """``trtcheck run ZOO --backend lowering`` in a subprocess (isolated worker, host inside it)."""
    done = trtcheck("run", ZOO, STAGES, "--backend", "lowering", "-k", "guide_rope or one_minus or "
                    "float64_affine or complex_plus_real or returns_a_string or top_ids", "--out", tmp_path,
                    "--time-predictions", "--no-deploy")
    assert done.returncode == 1, done.stdout + done.stderr  # one_minus fails
    record = json.loads((tmp_path / "results.json").read_text())
    statuses = {r["case_id"].split("::")[1]: r["status"] for r in record["rows"]}
    assert statuses == {"one_minus[complex64]": "fail", "float64_affine[float64]": "unsupported",
                        "guide_rope[complex64]": "pass", "complex_plus_real[complex64]": "error",
                        "returns_a_string[default]": "error", "top_ids[float32]": "pass"}
    string = next(r for r in record["rows"] if r["case_id"].endswith("returns_a_string[default]"))
    assert (string["stage"], string["message"]) == (
        "compare", "TypeError: the model returned str, not a tensor or a structure of tensors")
    # an error inside the complex rewrite names the rewrite and its frame, in every report
    rewrite = next(r for r in record["rows"] if r["case_id"].endswith("complex_plus_real[complex64]"))
    assert rewrite["message"].endswith(IN_REWRITE), rewrite["message"]
    junit = " ".join((tmp_path / "junit.xml").read_text().split())
    assert f'message="[prediction: lowered] error at compile: RuntimeError: {REWRITE_BROADCAST}' in junit
    report = (tmp_path / "report.md").read_text().replace("\\", "")  # Markdown's escapes
    for shown in (junit, report):
        assert "complex-to-real rewrite at torch_tensorrt/dynamo/lowering/passes/" \
               "complex_graph_rewrite.py:1838 in propagate_metadata" in shown
    one_minus = next(r for r in record["rows"] if r["case_id"].endswith("one_minus[complex64]"))
    assert one_minus["evidence"]["versions"]["torch_tensorrt"] == "2.13.0"
    assert "max abs err 1," in one_minus["message"]
    # an int64 result the converters narrow inside the engine: a note on its row
    top = next(r for r in record["rows"] if r["case_id"].endswith("top_ids[float32]"))
    assert ARGMAX_AS_INT32 in top["evidence"]["notes"]
    timed = next(r for r in record["rows"] if r["case_id"].endswith("guide_rope[complex64]"))
    assert timed["prediction_timing"]["schedule"] == "serial"  # never beside the busy host


FRONT_ENDS_ZOO = TESTS / "zoos" / "frontends"


def _owner(row: Row) -> str | None:
    """Who a row's message blames: Torch-TensorRT, the stand-in's prediction, trtcheck, a
    known limitation, the model; None for a row that ran."""
    if row.status is Status.UNSUPPORTED:
        return "limitation"
    if row.message.startswith(PREDICTION_GAP):
        return "stand-in"
    if row.status not in (Status.ERROR, Status.XFAIL):
        return None
    if row.stage == INTERNAL:
        return "trtcheck"
    return "Torch-TensorRT" if ("Torch-TensorRT" in row.message) else "model"


@pytest.fixture(scope="module")
def twins(behaving: LoweringBackend) -> dict[str, dict[str, Row]]:
    """fixtures/ and the front-ends zoo on 2.13.0 under default and torch_compile, in-process:
    each case's row by profile."""
    opts = Options(paths=(FIXTURES, FRONT_ENDS_ZOO), timing=QUICK, dtype_drift=False, deploy=False,
                   profiles=(BUILTIN_PROFILES["default"], BUILTIN_PROFILES["torch_compile"]))
    found: dict[str, dict[str, Row]] = {}
    for case in collect(opts).cases:
        for row in iter_rows(case, opts, {"lowering": behaving}):
            if isinstance(row, Row):
                found.setdefault(row.case_id, {})[row.profile] = row
    return found


def test_each_torch_compile_row_agrees_with_its_export_twin(twins: dict[str, dict[str, Row]]) -> None:
    """On fixtures/ and the front-ends zoo, each torch_compile row has its export twin's status
    and owner, unless it names what its front-end did differently (a graph break, a conversion
    failure left to PyTorch, an op left to PyTorch in Dynamo's graph) or the prediction it could
    not make; so no torch_compile error row lacks its export twin's error but for a named
    difference."""
    assert len(twins) >= 24
    for case_id, by_profile in twins.items():
        export, other = by_profile["default"], by_profile["torch_compile"]
        assert other.evidence.details.get("frontend") == "torch_compile" or other.stage, case_id
        named = other.evidence.details.get("differences") or other.message.startswith(PREDICTION_GAP)
        if not named:
            assert (other.status, _owner(other)) == (export.status, _owner(export)), (
                case_id, export.status, export.message, other.status, other.message)
        if other.status is Status.ERROR and export.status is not Status.ERROR:
            assert named, (case_id, other.message)


def test_the_torch_compile_front_end_on_everyday_models(twins: dict[str, dict[str, Row]]) -> None:
    """A module holding a lambda, a closure, a local class and a bound method passes (the host
    builds it from the factory, never pickled; a factory that builds other weights in another
    process gets the worker's state_dict; one whose module no other process can build is a
    prediction gap); float64 is unsupported on both front-ends, naming truncate_double, whether
    at conversion or at the engine's input check; a build the stand-in refuses is explained on
    both (an error on export, a graph left to PyTorch on torch_compile, a pass with no engine);
    a data-dependent branch fails to export while its torch_compile row passes in two graphs."""
    def row(name: str, profile: str = "torch_compile") -> Row:
        """The row of case ``name`` (``model[variant]``)."""
        return next(r[profile] for case_id, r in twins.items() if case_id.endswith(f"::{name}"))

    for name in ("holder[default]", "unrepeatable[default]", "tagger[int64]", "rope[default]"):
        assert row(name).status is Status.PASS and row(name).evidence.engines, row(name).message
    assert row("tagger[int64]").evidence.path == ["torch.compile, 1 graph", "int64 native",
                                           "1 TensorRT engine"]
    hidden = row("hidden[default]")
    assert hidden.status is Status.SKIPPED and "even with its state_dict" in hidden.message
    for name in ("affine64[float64]", "propagator[float64]", "llama_rope[complex128]"):
        for profile in ("default", "torch_compile"):
            found = row(name, profile)
            assert found.status is Status.UNSUPPORTED, (name, profile, found.message)
            assert found.message.startswith("TensorRT has no FP64 and truncate_double is off: ")
    assert "Dtype mismatch for input arg0_1" in row("affine64[float64]").message
    refused, explained = row("position_ids[default]", "default"), row("position_ids[default]")
    assert refused.status is Status.ERROR and REPORT_CONVERTER in refused.message
    assert explained.status is Status.PASS and explained.no_engine
    assert any(REPORT_CONVERTER in n for n in explained.evidence.notes)
    assert explained.evidence.details["differences"] == [
        "conversion failed: a graph runs in PyTorch", "left to PyTorch in Dynamo's graph: "
        + ", ".join(explained.evidence.fallbacks)]
    gate = row("gate[default]")
    assert row("gate[default]", "default").stage == "export" and gate.status is Status.PASS
    line = next(i for i, text in enumerate((FRONT_ENDS_ZOO / "models.py").read_text().splitlines(), 1)
                if "the graph break" in text)
    assert gate.message == (f"1 graph break: generic_jump TensorVariable() at "
                            f"{FRONT_ENDS_ZOO / 'models.py'}:{line}")
    assert gate.evidence.path[0] == "torch.compile, 2 graphs" and gate.evidence.engines == 2
    assert gate.evidence.notes[0].startswith("Torch-TensorRT's torch.compile front-end: ")
