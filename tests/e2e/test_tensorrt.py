"""The ``tensorrt`` backend's own code path on the REAL Torch-TensorRT 2.12.1, 2.13.0 and 2.14.0
Python code (fetched into the cache, loaded over the generated ``tensorrt`` stand-in in one
subprocess per release, see ``ttrt_contract.py``, shared by this module's tests), against
``dynamo.compile(..., dryrun=True)``. TensorRT never runs: where a test needs engines, each
TensorRT block is run by PyTorch, and its outputs are never TensorRT measurements. The rest of
the backend's tests are in tests/unit/backends/test_tensorrt.py.

Past dryrun, a real ``dynamo.compile`` of each release through the behaving TensorRT stand-in
(:mod:`trtcheck.backends.lowering.trt`, in the same subprocess per release): its interpreter,
converters and runtime run for real, the network run by PyTorch; NOT TensorRT's numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.emulation_models import (
    PositionIds,
    RoPE,
    ScatterIds,
    TwoComplexOutputs,
    rope_inputs,
    scatter_inputs,
)
from tests.ttrt_contract import RealRelease
from tests.zoos.frontends.models import Tagger
from trtcheck.backends.lowering.code import locate
from trtcheck.backends.torch_tensorrt.compat import (
    Version,
)
from trtcheck.core.profiles import BUILTIN_PROFILES, Profile
from trtcheck.errors import BuildRefused

RELEASES: list[Version] = [(2, 5), (2, 8), (2, 10), (2, 12), (2, 13), (2, 14)]
DEFAULT = Profile("default")

REAL = ("2.12.1", "2.13.0", "2.14.0")


@pytest.fixture(scope="module")
def release(ttrt_releases: dict[str, Path]) -> Iterator[Callable[[str], RealRelease]]:
    """One subprocess per release, started on first use and shared by this module's tests."""
    started: dict[str, RealRelease] = {}

    def get(version: str) -> RealRelease:
        if version not in started:
            started[version] = RealRelease(locate(str(ttrt_releases[version])))
        return started[version]

    yield get
    for host in started.values():
        host.close()


class ComplexProduct(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return z * w


def complex_pair() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(2, 8, dtype=torch.complex64), torch.randn(2, 8, dtype=torch.complex64)


EXPLICIT_TYPING_WARNING = "Torch-TensorRT warned: `use_explicit_typing` is deprecated"


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_real_release_rope(release: Callable[[str], RealRelease], version: str) -> None:
    """The default profile on each release: the call, the partition read from the real module,
    and no note for 2.10-2.12's always-on use_explicit_typing warning (the user did not set it)."""
    args = rope_inputs()
    result = release(version).compile(RoPE(), args)
    assert result.call == {"truncate_double": False, "require_full_compilation": False, "min_block_size": 1}
    ev = result.evidence
    assert ev.versions["torch_tensorrt"] == version and ev.engines == 1
    assert ev.boundaries == ["aten.view_as_real.default"] and ev.fallbacks == []
    assert ev.path == ["complex → real (complex_graph_rewrite)", "1 TensorRT engine"]
    assert not [n for n in ev.notes if n.startswith(EXPLICIT_TYPING_WARNING)], ev.notes
    torch.testing.assert_close(result.outputs, RoPE()(*args))


class IdAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 8)
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.embed(ids)).chunk(3, dim=-1)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_real_dynamic_batch_and_sequence_pass_inputs_with_min_opt_max(
        release: Callable[[str], RealRelease], version: str) -> None:
    """A model declaring a dynamic batch and sequence: dynamo.compile gets a Torch-TensorRT
    Input of min, opt (the example) and max shapes, the release accepts it, and the module it
    returns is right at the example and at both ends of the ranges."""
    torch.manual_seed(0)
    model = IdAttention().eval()
    ids = torch.randint(0, 32, (4, 8))
    dims = {"ids": {0: torch.export.Dim("batch", min=1, max=16), 1: torch.export.Dim("seq", min=2)}}
    result = release(version).compile(model, (ids,), dynamic_shapes=dims)
    # the batch's declared max, 16; twice the example for the sequence, which declares none
    assert result.inputs == [{"min_shape": (1, 2), "opt_shape": (4, 8), "max_shape": (16, 16)}]
    assert ("dynamic input ids passed as torch_tensorrt.Input(min_shape=(1, 2), opt_shape=(4, 8), "
            "max_shape=(16, 16))") in result.evidence.notes
    with torch.no_grad():
        torch.testing.assert_close(result.outputs, model(ids))
        assert [tuple(inputs[0][0].shape) for inputs, _ in result.at_shapes] == [(1, 2), (16, 16)]
        for inputs, outputs in result.at_shapes:
            torch.testing.assert_close(outputs, model(*inputs[0]))


class ComplexGain(torch.nn.Module):
    def forward(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(z * z) * x


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_real_complex_input_with_a_dynamic_batch_is_passed_as_its_example_tensor(
        release: Callable[[str], RealRelease], version: str) -> None:
    """Torch-TensorRT's Input takes no complex dtype: a complex dynamic input is passed as its
    example tensor (the release takes its range from the program), a real one as an Input, and
    the module is right at both ends of the declared range."""
    torch.manual_seed(0)
    z, x = torch.randn(8, 4, dtype=torch.complex64), torch.randn(8, 4, 2)
    batch = torch.export.Dim("batch", min=1, max=32)
    result = release(version).compile(ComplexGain(), (z, x),
                                      dynamic_shapes={"z": {0: batch}, "x": {0: batch}})
    assert result.inputs == [(8, 4), {"min_shape": (1, 4, 2), "opt_shape": (8, 4, 2),
                                      "max_shape": (32, 4, 2)}]
    assert any(n.startswith("dynamic input z passed as its example tensor, (8, 4) complex64")
               for n in result.evidence.notes), result.evidence.notes
    with torch.no_grad():
        torch.testing.assert_close(result.outputs, ComplexGain()(z, x))
        assert [tuple(inputs[0][0].shape) for inputs, _ in result.at_shapes] == [(1, 4), (32, 4)]
        for inputs, outputs in result.at_shapes:
            torch.testing.assert_close(outputs, ComplexGain()(*inputs[0]))


@pytest.mark.slow
def test_real_2_12_keeps_the_warning_when_the_user_sets_use_explicit_typing(
        release: Callable[[str], RealRelease]) -> None:
    profile = Profile("e", settings={"use_explicit_typing": True})
    result = release("2.12.1").compile(ScatterIds(), scatter_inputs(), profile)
    assert result.call["use_explicit_typing"] is True
    assert any(n.startswith(EXPLICIT_TYPING_WARNING) for n in result.evidence.notes)
    assert "use_explicit_typing is deprecated from Torch-TensorRT 2.10 (on by default there)" in (
        result.evidence.notes)


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_real_enabled_precisions(release: Callable[[str], RealRelease], version: str) -> None:
    """2.12 asserts on float16 unless use_explicit_typing is False; 2.13 on ignore the setting."""
    profile = Profile("p", settings={"enabled_precisions": ["float16"]})
    result = release(version).compile(ScatterIds(), scatter_inputs(), profile)
    if version == "2.12.1":
        assert result.call["use_explicit_typing"] is False
        assert result.call["enabled_precisions"] == ["torch.float16"]
        assert ("use_explicit_typing = False passed: Torch-TensorRT 2.12 defaults it to True, where "
                "enabled_precisions other than float32 raise an AssertionError") in result.evidence.notes
    else:
        assert "enabled_precisions" not in result.call and "use_explicit_typing" not in result.call
    assert result.evidence.engines == 1 and "int64 native" in result.evidence.path
    assert torch.equal(result.outputs, ScatterIds()(*scatter_inputs()))


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.12.1", "2.13.0"])
def test_real_complex_outputs_through_getitem(release: Callable[[str], RealRelease], version: str) -> None:
    """A TensorRT block with two complex outputs: both leave it through getitem, get no
    view_as_complex, and come back as float32 (..., 2); the row says so."""
    result = release(version).compile(TwoComplexOutputs(), complex_pair())
    assert result.checked
    assert [(o.dtype, tuple(o.shape)) for o in result.outputs] == [(torch.float32, (2, 8, 2))] * 2
    found = [n for n in result.evidence.notes if n.startswith("Torch-TensorRT returned float32 (..., 2)")]
    assert [n.split(":")[0] for n in found] == [
        f"Torch-TensorRT returned float32 (..., 2) for a complex64 output out[{i}]" for i in (0, 1)]
    assert "leaves a TensorRT block through getitem" in found[0]


@pytest.mark.slow
def test_real_early_return_names_the_retyped_inputs(release: Callable[[str], RealRelease]) -> None:
    """Fewer convertible ops than min_block_size: the real compile returns the rewritten graph."""
    result = release("2.13.0").compile(ComplexProduct(), complex_pair(), Profile("b", min_block_size=50))
    assert result.evidence.engines == 0
    assert any(n.startswith("Torch-TensorRT returned the graph unpartitioned (fewer TensorRT-convertible "
                            "ops than min_block_size 50) after its complex rewrite retyped the complex "
                            "inputs z, w to float (..., 2)") for n in result.evidence.notes)
    assert result.outputs.shape != (2, 8)  # the retyped graph misreads the complex inputs


@pytest.mark.slow
def test_real_dryrun_blocks_are_not_engines(release: Callable[[str], RealRelease]) -> None:
    """Dryrun's _run_on_acc_* blocks are GraphModules run by PyTorch: no engine, every op a fallback."""
    result = release("2.13.0").compile(ComplexProduct(), complex_pair(), engines=False)
    ev = result.evidence
    assert ev.engines == 0 and ev.boundaries == []
    assert {"aten.mul.Tensor", "aten.view_as_real.default"} <= set(ev.fallbacks)
    assert "no TensorRT engine was built: the whole graph runs in PyTorch" in ev.notes
    assert ev.path[-2:] == ["no TensorRT engine", "PyTorch fallback"]


@pytest.mark.slow
def test_real_2_14_decomposition_fallback_is_in_the_path(release: Callable[[str], RealRelease]) -> None:
    """use_complex_decomposition on torch < 2.14: 2.14.0 logs that it falls back to its own rewrite."""
    profile = Profile("d", settings={"use_complex_decomposition": True})
    result = release("2.14.0").compile(RoPE(), rope_inputs(), profile)
    ev = result.evidence
    assert result.call["use_complex_decomposition"] is True
    assert ev.path[0] == ("complex → real (complex_graph_rewrite, fallen back from PyTorch's complex "
                          "decomposition)")
    assert ("Torch-TensorRT fell back from PyTorch's complex decomposition: complex decomposition requires "
            "torch>=2.14.dev; falling back to the legacy complex_graph_detection pass.") in ev.notes


@pytest.mark.slow
def test_real_signature_drops_unknown_settings(release: Callable[[str], RealRelease]) -> None:
    result = release("2.13.0").compile(RoPE(), rope_inputs(), Profile("t", settings={"min_blok_size": 3}))
    assert "min_blok_size" not in result.call
    assert ("min_blok_size dropped: not a parameter of torch_tensorrt.dynamo.compile in Torch-TensorRT "
            "2.13, which would silently ignore it; did you mean 'min_block_size'?") in result.evidence.notes


# 4. Past dryrun: a real compile through the behaving stand-in ---------------------------------

class Vision(torch.nn.Module):
    """Convolution, batch norm, pooling, linear, layer norm, softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AvgPool2d(2, ceil_mode=True, padding=1)
        self.linear = torch.nn.Linear(8 * 3 * 3, 10)
        self.norm = torch.nn.LayerNorm(10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.avg(self.pool(torch.relu(self.bn(self.conv(x)))))
        return torch.softmax(self.norm(self.linear(y.flatten(1))), -1)


class Ids(torch.nn.Module):
    """int64 ids: arithmetic, integer division, an index, a reduction."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(50, 4), requires_grad=False)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shifted = ids * 3 + 7 - ids // 4
        return shifted.sum(-1), self.table[ids % 50].mean(1)


class Rope(torch.nn.Module):
    """The complex guide's rotary embedding: complex64 freqs, output through view_as_real."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(z * freqs).flatten(2)


class KVCache(torch.nn.Module):
    """A decode step writing a static KV cache with duplicate slots, ``index_put_(accumulate=True)``:
    Torch-TensorRT's ScatterAdd plugin (an IPluginV3 layer)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(16, 8))
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        cache = self.cache.clone()
        cache.index_put_((slots,), self.proj(x), accumulate=True)
        return torch.relu(cache) * 2 + 1


def _close(got: Any, want: Any, atol: float = 1e-5) -> None:
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor) and got.dtype == want.dtype and got.shape == want.shape
        assert torch.allclose(got, want, atol=atol), (got - want).abs().max()
    else:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _close(g, w, atol)


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_real_compile_runs_end_to_end_through_the_stand_in(release: Callable[[str], RealRelease],
                                                          version: str) -> None:
    """Past dryrun, through the behaving TensorRT stand-in (NOT TensorRT: PyTorch's numbers): each
    release's interpreter, converters and runtime on a vision model static and with a dynamic batch,
    int64 ids, a complex64 RoPE and a KV cache written through the ScatterAdd plugin, compared with
    eager."""
    torch.manual_seed(0)
    vision = Vision().eval()
    x = torch.randn(2, 3, 8, 8)
    batches = [(torch.randn(b, 3, 8, 8),) for b in (1, 5, 8)]
    cases: list[tuple[torch.nn.Module, tuple[Any, ...], Any, list[tuple[Any, ...]]]] = [
        (vision, (x,), None, [(x,)]),
        (vision, (torch.randn(4, 3, 8, 8),), {0: (1, 5, 8)}, batches),
        (Ids().eval(), (torch.randint(-1000, 1000, (3, 6)),), None, None),
        (Rope(), (torch.randn(1, 16, 64), torch.randn(1, 16, 32, dtype=torch.complex64)), None, None),
        (KVCache().eval(), (torch.randn(3, 8), torch.tensor([1, 5, 1])), None, None),
    ]
    for model, args, dynamic, at in cases:
        reply = release(version).real_compile(model, args, dynamic, at)
        assert reply["engines"], "a TensorRT engine was built"
        if isinstance(model, KVCache):  # index_put converted (the plugin), not left to PyTorch between two
            assert len(reply["engines"]) == 1
        assert reply["tensorrt"] == {"2.12.1": "10.16.1", "2.13.0": "11.0.0", "2.14.0": "11.1.0"}[
            version]
        with torch.no_grad():
            for call, got in zip(at or [args], reply["outputs"], strict=True):
                _close(got, model(*call))


# 5. The tensorrt backend's whole path, past dryrun, through the behaving stand-in --------------
# Section 3's tests need TensorRT and a GPU and skip everywhere else; these run the same backend
# code (settings adaptation, the real compile, the engine cache and its outcome, the runtime, the
# output check, the module timed and the memory recorded) on CPU over the stand-in for each
# release. NOT TensorRT: the numbers are PyTorch's; these test trtcheck's code, not TensorRT.

STANDIN_TENSORRT = {"2.12.1": "10.16.1", "2.13.0": "11.0.0", "2.14.0": "11.1.0"}


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_standin_rope_complex64_matches_eager(release: Callable[[str], RealRelease], version: str) -> None:
    """Section 3's RoPE test through the stand-in: complex in, real out, through engines."""
    model, args = RoPE().eval(), rope_inputs()
    result = release(version).compile(model, args, dryrun=False)
    with torch.no_grad():
        torch.testing.assert_close(result.outputs, model(*args), rtol=1e-5, atol=1e-5)
    assert result.evidence.engines and result.evidence.engines >= 1
    assert result.evidence.path[0].startswith("complex → real")
    assert "dryrun" not in result.call
    assert result.evidence.versions["tensorrt"] == STANDIN_TENSORRT[version]


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_standin_int64_scatter_matches_eager(release: Callable[[str], RealRelease], version: str) -> None:
    """Section 3's int64 test through the stand-in: the converters keep int64, values beyond int32
    survive, and the engine's output comes back int64."""
    model, args = ScatterIds().eval(), scatter_inputs()
    result = release(version).compile(model, args, dryrun=False)
    with torch.no_grad():
        expected = model(*args)
    assert result.outputs.dtype == torch.int64 and torch.equal(result.outputs, expected)
    assert "int64 native" in result.evidence.path


@pytest.mark.slow
def test_standin_refused_build_names_the_layer_and_the_converter(
        release: Callable[[str], RealRelease]) -> None:
    """A network the builder refuses (here the stand-in's, in TensorRT's place) is a BuildRefused
    whose message leads with the layer and what was logged, and names 2.13.0's cumsum converter,
    which built the int64 position ids as float32, not the ``assert cuda_engine`` after it."""
    mask = torch.ones(2, 6, dtype=torch.int64)
    mask[0, :2] = 0
    with pytest.raises(BuildRefused) as refused:
        release("2.13.0").compile(PositionIds().eval(), (mask,), dryrun=False)
    message = str(refused.value)
    assert message.startswith("the TensorRT stand-in's builder (predicting TensorRT's) refused layer "
                              "'[GATHER]-[aten_ops.embedding.default]")
    assert "IGatherLayer indices has type FLOAT" in message
    assert "what it reads is float32 where PyTorch computes int64 since node cumsum" in message
    assert "(aten_ops_cumsum at torch_tensorrt/dynamo/conversion/aten_ops_converters.py:" in message


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_standin_compiled_module_is_timed_as_a_user_calls_it(
        release: Callable[[str], RealRelease], version: str) -> None:
    """Section 3's timing test through the stand-in: the output check wraps the compared callable,
    the module dynamo.compile returned is the one timed, and both give eager's values (the
    complex outputs this release hands back as float (..., 2), as in section 2's getitem test)."""
    model = TwoComplexOutputs().eval()
    args = tuple(torch.randn(4, 8, dtype=torch.complex64) for _ in range(2))
    result = release(version).compile(model, args, dryrun=False)
    assert result.checked and result.timed not in ("CheckedOutputs",)
    with torch.no_grad():
        expected = model(*args)
    for got in (result.outputs, result.timed_outputs):
        for g, e in zip(got, expected, strict=True):
            torch.testing.assert_close(g, e if g.dtype == e.dtype else torch.view_as_real(e))


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_standin_engine_cache_saves_then_refits_the_cached_engines(release: Callable[[str], RealRelease],
                                                                   version: str, tmp_path: Path) -> None:
    """The engine cache's settings and outcome through real compiles: the first saves each engine
    it builds (weight-stripped, ``SerializationFlag.EXCLUDE_WEIGHTS``) in the cache's directory;
    a fresh compile of the same model, then of one with the same architecture and other weights,
    loads them from the cache and refits them through the stand-in's ``Refitter`` with that
    model's weights (a stripped engine cannot run unrefitted), read from Torch-TensorRT's log."""
    torch.manual_seed(0)
    model, args = Vision().eval(), (torch.randn(2, 3, 8, 8),)
    result = release(version).compile(model, args, dryrun=False, cache_dir=str(tmp_path))
    # avg_pool2d with ceil_mode and padding is refused by its validator: it runs in PyTorch,
    # between two engines.
    assert result.evidence.fallbacks == ["aten.avg_pool2d.default"] and result.evidence.engines == 2
    assert result.evidence.details["engine_cache"] == {"from_cache": 0, "saved": 2}
    assert result.call["cache_built_engines"] is True and result.call["reuse_cached_engines"] is True
    assert any(tmp_path.rglob("*")), "the engine was written under the cache directory"
    with torch.no_grad():
        _close(result.outputs, model(*args))
    memory = result.evidence.details["engine_memory"]
    # the plans, and the activations the stand-in's engines report (device_memory_size_v2)
    assert memory["plan_bytes"] > 0 and memory["activation_bytes"] > 0
    assert result.memory == memory["plan_bytes"] + memory["activation_bytes"]
    reused = ("2 of 2 TensorRT engines loaded from Torch-TensorRT's engine cache (refitted with this "
              "model's weights)")
    assert reused not in result.evidence.notes

    other = Vision().eval()  # the same architecture, other weights: the same cache entries
    for again in (model, other):
        hit = release(version).compile(again, args, dryrun=False, cache_dir=str(tmp_path))
        assert hit.evidence.details["engine_cache"] == {"from_cache": 2, "saved": 0}
        assert reused in hit.evidence.notes and hit.evidence.engines == 2
        with torch.no_grad():
            _close(hit.outputs, again(*args))
            _close(hit.timed_outputs, again(*args))
    with torch.no_grad():
        assert not torch.allclose(other(*args), model(*args), atol=1e-3)  # the refit changed the outputs


# 6. The tensorrt backend's torch.compile front-end, through the behaving stand-in -------------
# torch.compile(model, backend="tensorrt") of the module itself, in each release's subprocess:
# Dynamo, the release's registered backend, its converters and runtime; the stand-in's numbers
# (PyTorch's), NOT TensorRT's.

TORCH_COMPILE = BUILTIN_PROFILES["torch_compile"]


@pytest.mark.slow
@pytest.mark.parametrize("version", REAL)
def test_standin_torch_compile_compiles_the_module_and_recompiles_at_the_declared_shapes(
        release: Callable[[str], RealRelease], version: str) -> None:
    """The torch.compile front-end on each release: an int64 embedding with weights at a
    dynamic batch and sequence, compiled at the example and recompiled at the declared ends of
    its ranges, each graph in an engine, the module torch.compile returned the one timed, its
    outputs eager's. (A graph break, on the same code: test_lowering_backend.py's
    test_the_torch_compile_front_end_on_everyday_models.)"""
    torch.manual_seed(0)
    model, ids = Tagger().eval(), torch.randint(0, 64, (4, 8))
    dims = {"ids": {0: torch.export.Dim("batch", min=1, max=16), 1: torch.export.Dim("seq", min=2)}}
    result = release(version).compile(model, (ids,), TORCH_COMPILE, dynamic_shapes=dims)
    ev = result.evidence
    assert ev.path == ["torch.compile, 1 graph, recompiled at 2 shapes", "int64 native",
                       "3 TensorRT engines"]  # one a graph
    assert ev.details["frontend"] == "torch_compile" and ev.details["graph_breaks"] == []
    assert [g["shape"] for g in ev.details["graphs"]] == ["example", "ids=(1, 2)", "ids=(16, 16)"]
    assert [r["shape"] for r in ev.details["recompiles"]] == ["ids=(1, 2)", "ids=(16, 16)"]
    assert "tensor 'ids' size mismatch at index 0. expected 4, actual 1" in (
        ev.details["recompiles"][0]["reasons"][0])
    assert result.call == {"require_full_compilation": False, "min_block_size": 1,
                           "truncate_double": False}
    assert ev.versions["tensorrt"] == STANDIN_TENSORRT[version] and ev.remark == ""
    assert result.timed == "OptimizedModule"  # what torch.compile returned is what is timed
    with torch.no_grad():
        _close(result.outputs, model(ids))
        assert [tuple(inputs[0][0].shape) for inputs, _ in result.at_shapes] == [(1, 2), (16, 16)]
        for inputs, outputs in result.at_shapes:
            _close(outputs, model(*inputs[0]))
