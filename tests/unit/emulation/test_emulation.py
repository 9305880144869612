"""The complex-to-real rewrite: exact against eager, seed coverage's limits, the boundary."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import fx

from tests.emulation_models import (
    TOL,
    ComplexConv,
    LlamaRoPE,
    PairParam,
    SeedRoPE,
    complex_exp,
    complex_nodes,
    complex_output,
    export,
    max_error,
    standalone_view_as_complex,
)
from trtcheck.core.profiles import Profile
from trtcheck.emulation import lower
from trtcheck.emulation.graph import FALLBACK, check_invariants, tensor_leaves
from trtcheck.errors import InternalError, Unsupported
from trtcheck.tensors import clone

BROAD = Profile("default")
SEED = Profile("seed", coverage="seed")
PROPERTY = settings(max_examples=25, deadline=None)

# Each family is one model applying many complex ops; a property test draws shapes and values.
UNARY: list[Callable[[torch.Tensor], Any]] = [
    torch.exp, torch.log, torch.abs, torch.angle, torch.conj, torch.real, torch.imag,
    torch.neg, torch.reciprocal, torch.square, torch.clone, torch.squeeze,
    lambda x: x.sum(-1), lambda x: x.mean(0), lambda x: x.sum(), lambda x: x.mean(),
    lambda x: x.unsqueeze(-1), lambda x: x.flatten(), lambda x: x.reshape(-1),
    lambda x: x[..., 1:], lambda x: x.select(-1, 0), lambda x: x.flip(-1),
    lambda x: x.roll(1, -1), lambda x: x.permute(*reversed(range(x.dim()))),
    lambda x: x.unbind(-1)[0], lambda x: x.chunk(2, -1)[-1], lambda x: x.split(1, -1)[-1],
    lambda x: torch.cat([x, 2 * x], -1), lambda x: torch.stack([x, x.conj()], -2),
    lambda x: x.expand(2, *x.shape), lambda x: x.repeat(2, *[1] * x.dim()),
    lambda x: x.narrow(-1, 0, 1), lambda x: x.transpose(0, -1),
    lambda x: x.to(torch.complex128), lambda x: x.to(torch.complex64),
    lambda x: 2 / x, lambda x: 1 - x, lambda x: x * 2j, lambda x: x + 1.5,
    lambda x: x / (1 + 2j), lambda x: x - 2, lambda x: torch.add(x, x.exp(), alpha=2j),
    lambda x: torch.where(x.abs() > 1, x, -x),
]
BINARY: list[Callable[..., Any]] = [
    lambda x, y, r: x * y, lambda x, y, r: x / y, lambda x, y, r: x + y, lambda x, y, r: x - y,
    lambda x, y, r: x * r, lambda x, y, r: r * x, lambda x, y, r: x / r,
    lambda x, y, r: r / y, lambda x, y, r: x + r, lambda x, y, r: r - x,
    lambda x, y, r: x - 2 * y, lambda x, y, r: torch.where(r > 0, x, y),
    lambda x, y, r: torch.complex(r, r.flip(-1)), lambda x, y, r: torch.polar(r.abs(), r),
]
MATRIX: list[Callable[..., Any]] = [
    operator.matmul, lambda a, b: a.mm(b), lambda a, b: a.t(), lambda a, b: b.T @ a.T,
    lambda a, b: torch.complex(a.real, a.imag * 0) @ b,
]

dtypes = st.sampled_from([torch.complex64, torch.complex128])
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _randn(seed: int, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    return torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def _lower_and_compare(fn: Callable[..., Any], args: tuple[Any, ...], dtype: torch.dtype,
                       profile: Profile = BROAD) -> dict[str, Any]:
    program = export(fn, *args)
    lowered = lower(program, profile)
    assert complex_nodes(lowered.graph_module.graph) == []
    assert max_error(lowered(*clone(args)), program.module()(*clone(args))) < TOL[dtype]
    return lowered.evidence


@PROPERTY
@given(dtype=dtypes, shape=shapes, seed=st.integers(0, 2**31))
def test_unary_complex_ops_match_eager(dtype: torch.dtype, shape: tuple[int, ...],
                                       seed: int) -> None:
    x = _randn(seed, shape, dtype)
    evidence = _lower_and_compare(lambda x: tuple(f(x) for f in UNARY), (x,), dtype)
    assert evidence["fallbacks"] == []


@PROPERTY
@given(dtype=dtypes, shape=shapes, broadcast=st.booleans(), seed=st.integers(0, 2**31))
def test_binary_and_mixed_ops_match_eager(dtype: torch.dtype, shape: tuple[int, ...],
                                          broadcast: bool, seed: int) -> None:
    x = _randn(seed, shape, dtype)
    y = _randn(seed + 1, shape[1:] if broadcast else shape, dtype)
    r = _randn(seed + 2, shape, dtype.to_real())
    evidence = _lower_and_compare(lambda x, y, r: tuple(f(x, y, r) for f in BINARY), (x, y, r),
                                  dtype)
    assert evidence["fallbacks"] == []


@PROPERTY
@given(dtype=dtypes, n=st.integers(1, 4), k=st.integers(1, 4), m=st.integers(1, 4),
       seed=st.integers(0, 2**31))
def test_matrix_products_match_eager(dtype: torch.dtype, n: int, k: int, m: int,
                                     seed: int) -> None:
    args = (_randn(seed, (n, k), dtype), _randn(seed + 1, (k, m), dtype))
    _lower_and_compare(lambda a, b: tuple(f(a, b) for f in MATRIX), args, dtype)


@PROPERTY
@given(dtype=dtypes, seq=st.integers(1, 8), pairs=st.integers(1, 8), seed=st.integers(0, 2**31),
       coverage=st.sampled_from(["seed", "broad"]))
def test_seed_rope_example_lowers_to_real_graph(dtype: torch.dtype, seq: int, pairs: int,
                                                seed: int, coverage: str) -> None:
    x = _randn(seed, (1, seq, 2 * pairs), dtype.to_real())
    freqs = _randn(seed + 1, (1, seq, pairs), dtype)
    evidence = _lower_and_compare(SeedRoPE(), (x, freqs), dtype,
                                  Profile(coverage, coverage=coverage))
    assert evidence["complex_subgraphs"] == 1
    assert evidence["rewritten"] == {
        "placeholder (user_input)": 1, "aten.view_as_complex.default": 1,
        "aten.mul.Tensor": 1, "aten.view_as_real.default": 1,
    }
    assert evidence["casts"] == [f"input freqs: {str(dtype)[6:]} -> "
                                 f"{str(dtype.to_real())[6:]} (..., 2)"]


def test_lowered_module_takes_complex_inputs_at_call_time() -> None:
    x, freqs = torch.randn(1, 4, 8), torch.randn(1, 4, 4, dtype=torch.complex64)
    lowered = lower(export(SeedRoPE(), x, freqs), SEED)
    placeholders = [n for n in lowered.graph_module.graph.nodes if n.op == "placeholder"]
    assert placeholders[1].meta["val"].shape == (1, 4, 4, 2)
    assert max_error(lowered(x, freqs), SeedRoPE()(x, freqs)) < TOL[torch.complex64]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_llama_rope_merges_q_and_k_on_the_shared_buffer(dtype: torch.dtype) -> None:
    model = LlamaRoPE(dtype=dtype)
    x = torch.randn(2, 16, 8, dtype=dtype)
    program = export(model, x)
    lowered = lower(program, BROAD)
    assert complex_nodes(lowered.graph_module.graph) == []
    assert max_error(lowered(x), model(x)) < TOL[dtype.to_complex()]
    assert lowered.evidence["complex_subgraphs"] == 1
    assert lowered.evidence["rewritten"]["placeholder (buffer)"] == 1
    assert lowered.evidence["rewritten"]["aten.mul.Tensor"] == 2
    # The seed's table has no complex slice/view: seed coverage predicts a failure.
    with pytest.raises(Unsupported, match=r"aten\.slice\.Tensor \(node slice"):
        lower(program, SEED)


def test_real_pair_parameter_is_left_alone() -> None:
    model = PairParam()
    x = torch.randn(3, 4, dtype=torch.complex64)
    lowered = lower(export(model, x), SEED)
    pairs = next(n for n in lowered.graph_module.graph.nodes if n.name == "p_pairs")
    assert (pairs.meta["val"].dtype, pairs.meta["val"].shape) == (torch.float32, (4, 2))
    assert "placeholder (parameter)" not in lowered.evidence["rewritten"]
    assert max_error(lowered(x), model(x)) < TOL[torch.complex64]


LIMITS = [
    pytest.param(ComplexConv(), (torch.randn(1, 2, 8, dtype=torch.complex64),),
                 r"aten\.conv1d\.default \(node conv1d\): no support for complex convolution",
                 ["aten.conv1d.default (node conv1d)"], id="complex-conv"),
    pytest.param(complex_output, (torch.randn(3, dtype=torch.complex64),
                                 torch.randn(3, dtype=torch.complex64)),
                 r"aten\.mul\.Tensor \(node mul\): only view_as_real-anchored", [],
                 id="complex-output"),
    pytest.param(complex_exp, (torch.randn(3, 2),),
                 r"aten\.exp\.default \(node exp\): only element-wise mul", [], id="exp"),
    pytest.param(standalone_view_as_complex, (torch.randn(3, 2),),
                 r"aten\.view_as_complex\.default .*must be paired with view_as_real", [],
                 id="standalone-view_as_complex"),
    pytest.param(torch.conj_physical, (torch.randn(3, dtype=torch.complex128),),
                 r"aten\.conj_physical\.default", [], id="conj"),
    pytest.param(lambda x: torch.view_as_real(torch.fft.fft(x)), (torch.randn(8),),
                 r"aten\.fft_fft\.default \(node fft_fft\)",
                 ["aten.fft_fft.default (node fft_fft)"],
                 id="fft"),
    pytest.param(lambda x: x, (torch.randn(3, dtype=torch.complex64),),
                 r"unsupported complex output \(node args_0\)", [], id="complex-input-returned"),
]


@pytest.mark.parametrize(("model", "args", "seed_message", "fallbacks"), LIMITS)
def test_seed_coverage_reports_the_limitation(model: Any, args: tuple[Any, ...],
                                              seed_message: str, fallbacks: list[str]) -> None:
    with pytest.raises(Unsupported, match=seed_message):
        lower(export(model, *args), SEED)


@pytest.mark.parametrize(("model", "args", "seed_message", "fallbacks"), LIMITS)
def test_broad_coverage_handles_the_limitation(model: Any, args: tuple[Any, ...],
                                               seed_message: str, fallbacks: list[str]) -> None:
    program = export(model, *args)
    lowered = lower(program, BROAD)
    assert lowered.evidence["fallbacks"] == fallbacks
    assert max_error(lowered(*clone(args)), program.module()(*clone(args))) < 1e-5
    leftover = [n for n in lowered.graph_module.graph.nodes
                if n.name in complex_nodes(lowered.graph_module.graph)]
    assert all(n.meta.get("trtcheck") == FALLBACK for n in leftover)
    assert bool(leftover) == bool(fallbacks)


def test_fallback_is_refused_under_require_full_compilation() -> None:
    program = export(ComplexConv(), torch.randn(1, 2, 8, dtype=torch.complex64))
    with pytest.raises(Unsupported, match=r"require_full_compilation.*conv1d"):
        lower(program, Profile("full", require_full_compilation=True))


@PROPERTY
@given(dtype=dtypes, shape=shapes, seed=st.integers(0, 2**31))
def test_inputs_are_never_modified(dtype: torch.dtype, shape: tuple[int, ...], seed: int) -> None:
    x, y = _randn(seed, shape, dtype), _randn(seed + 1, shape, dtype)
    lowered = lower(export(lambda x, y: (x * y, torch.view_as_real(x).sum(), x.conj()), x, y),
                    Profile("t", truncate_double=True))
    originals = clone((x, y))
    lowered(x, y)
    for before, after in zip(originals, (x, y), strict=True):
        assert after.dtype == before.dtype and torch.equal(after, before)


class Mutating(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(2, dtype=torch.complex64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1j)
        x.mul_(2j)
        return torch.view_as_real(x * self.calls)


def test_in_place_mutations_behave_like_eager() -> None:
    x = torch.randn(2, dtype=torch.complex64)
    lowered = lower(export(Mutating(), x.clone()), BROAD)
    eager, x_eager, x_lowered = Mutating(), x.clone(), x.clone()
    for _ in range(2):
        assert max_error(lowered(x_lowered), eager(x_eager)) < TOL[torch.complex64]
    assert max_error(x_lowered, x_eager) < TOL[torch.complex64]


class Keywords(torch.nn.Module):
    def forward(self, x: torch.Tensor, *, freqs: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.view_as_complex(x) * freqs) * scale


def test_keyword_arguments_in_any_order() -> None:
    x, freqs, scale = torch.randn(3, 2), torch.randn(3, dtype=torch.complex64), torch.randn(1)
    program = torch.export.export(Keywords(), (x,), {"freqs": freqs, "scale": scale})
    lowered = lower(program, SEED)
    expected = Keywords()(x, freqs=freqs, scale=scale)
    assert max_error(lowered(x, scale=scale, freqs=freqs), expected) < TOL[torch.complex64]
    with pytest.raises(TypeError, match="keyword arguments"):
        lowered(x, freqs=freqs)


def test_dynamic_sequence_length() -> None:
    model = SeedRoPE()
    seq = torch.export.Dim("seq", min=2, max=64)
    x, freqs = torch.randn(1, 8, 16), torch.randn(1, 8, 8, dtype=torch.complex64)
    program = torch.export.export(model, (x, freqs), dynamic_shapes=({1: seq}, {1: seq}))
    lowered = lower(program, SEED)
    for length in (3, 40):
        x, freqs = torch.randn(1, length, 16), torch.randn(1, length, 8, dtype=torch.complex64)
        assert max_error(lowered(x, freqs), model(x, freqs)) < TOL[torch.complex64]


def test_invariant_check_rejects_a_complex_node_outside_fallbacks() -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    x.meta["val"] = torch.empty(2, dtype=torch.complex64)
    graph.output((x,))
    with pytest.raises(InternalError, match=r"node x .*complex64"):
        check_invariants(graph, [])
    x.meta["trtcheck"] = FALLBACK
    check_invariants(graph, [])
    x.meta.update(val=torch.empty(2, dtype=torch.int64), trtcheck=None)
    with pytest.raises(InternalError, match="int64"):
        check_invariants(graph, [torch.int64])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("profile", [BROAD, Profile("both", truncate_double=True, int64="int32")],
                         ids=["default", "truncate_double+int32"])
def test_runs_on_cuda(profile: Profile) -> None:
    rope = LlamaRoPE(dtype=torch.float64).cuda()
    conv = ComplexConv().cuda()
    cases = [(rope, (torch.randn(2, 8, 8, dtype=torch.float64, device="cuda"),)),
             (conv, (torch.randn(1, 2, 8, dtype=torch.complex64, device="cuda"),))]
    for model, args in cases:
        out = lower(export(model, *args), profile)(*args)
        assert all(t.device.type == "cuda" for t in tensor_leaves(out))
        assert max_error(out, model(*args)) < 1e-4
