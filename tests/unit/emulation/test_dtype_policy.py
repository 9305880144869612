"""The autocast RFC's policies: int64 as int32 (with real wrap-around) and truncate_double."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from tests.emulation_models import HashIds, LlamaRoPE, SeedRoPE, export, max_error
from trtcheck.core.profiles import Profile
from trtcheck.emulation import lower
from trtcheck.emulation.dtype_policy import Policy, wrap_int32
from trtcheck.emulation.graph import INT64_ISLAND, NARROWED, tensor_leaves
from trtcheck.tensors import clone

NATIVE = Profile("default")
INT32 = Profile("int64_as_int32", int64="int32")
TRUNCATE = Profile("truncate_double", truncate_double=True)
PROPERTY = settings(max_examples=25, deadline=None)

ids_lists = st.lists(st.integers(0, 2**24), min_size=1, max_size=8)


def _hash_in_int32(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """HashIds computed by hand the way an int32 engine computes it."""
    h = ids.to(torch.int32) * wrap_int32(2654435761) + torch.arange(
        ids.shape[-1], dtype=torch.int32)
    return h % 1000003, h.cumsum(-1, dtype=torch.int32)


def _wide_nodes(graph: torch.fx.Graph, dtype: torch.dtype) -> list[torch.fx.Node]:
    return [n for n in graph.nodes if n.op != "output"
            and any(t.dtype == dtype for t in tensor_leaves(n.meta.get("val")))]


@PROPERTY
@given(values=ids_lists)
def test_int64_hash_matches_natively_and_wraps_under_int32(values: list[int]) -> None:
    ids = torch.tensor([values])
    program = export(HashIds(), ids)
    eager = HashIds()(ids)
    assert max_error(lower(program, NATIVE)(ids), eager) == 0

    narrowed = lower(program, INT32)(ids)
    assert [t.dtype for t in narrowed] == [torch.int64, torch.int64]
    expected = _hash_in_int32(ids)
    assert all(torch.equal(a, e.to(torch.int64)) for a, e in zip(narrowed, expected, strict=True))
    if max(values) > 0:  # id * 2654435761 >= 2**31: wrapped, not eager's value
        assert not torch.equal(narrowed[1], eager[1])


@PROPERTY
@given(values=st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=8))
def test_int64_inputs_beyond_int32_are_truncated_on_entry(values: list[int]) -> None:
    ids = torch.tensor([values])
    lowered = lower(export(lambda ids: ids + 1, ids), INT32)
    assert torch.equal(lowered(ids), (ids.to(torch.int32) + 1).to(torch.int64))


def test_int32_policy_evidence_and_engine_dtypes() -> None:
    ids = torch.tensor([[1, 2, 3]])
    lowered = lower(export(HashIds(), ids), INT32)
    casts = lowered.evidence["casts"]
    assert casts[:3] == ["input ids: int64 -> int32", "output 0: int32 -> int64",
                         "output 1: int32 -> int64"]
    assert "node cumsum (aten.cumsum.default): int64 -> int32" in casts
    assert lowered.evidence["path"] == ["int64"]
    wide = _wide_nodes(lowered.graph_module.graph, torch.int64)
    assert {n.name for n in wide} == {"arange", "cumsum"}
    assert all(n.meta["trtcheck"] == NARROWED for n in wide)


class OneHot(nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(ids % 5, 5).argmax(-1) * 3


def test_op_that_needs_int64_runs_as_an_int64_island() -> None:
    ids = torch.tensor([[3, 9, 12]])
    lowered = lower(export(OneHot(), ids), INT32)
    assert torch.equal(lowered(ids), OneHot()(ids))
    assert any("needs int64 inputs" in c for c in lowered.evidence["casts"])
    islands = {n.name: n.meta.get("trtcheck")
               for n in _wide_nodes(lowered.graph_module.graph, torch.int64)}
    assert islands["one_hot"] == INT64_ISLAND


def test_python_int_values_of_int64_ops_wrap_but_indices_do_not() -> None:
    x = torch.tensor([[1, 2, 3]])
    program = export(lambda x: (torch.full_like(x, 2**33 + 7) + x, x[:, 1:] * 3), x)
    wrapped, sliced = lower(program, INT32)(x)
    assert wrapped.tolist() == [[8, 9, 10]]
    assert sliced.tolist() == [[6, 9]]


@PROPERTY
@given(value=st.integers(-(2**63), 2**63 - 1))
def test_wrap_int32_is_a_cast_to_int32(value: int) -> None:
    assert wrap_int32(value) == torch.tensor(value).to(torch.int32).item()


@PROPERTY
@given(seq=st.integers(1, 8), pairs=st.integers(1, 8), seed=st.integers(0, 2**31))
def test_truncate_double_gives_float32_level_error_on_complex128(seq: int, pairs: int,
                                                                 seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(1, seq, 2 * pairs, dtype=torch.float64, generator=gen)
    freqs = torch.randn(1, seq, pairs, dtype=torch.complex128, generator=gen)
    program = export(SeedRoPE(), x, freqs)
    eager = SeedRoPE()(x, freqs)
    assert max_error(lower(program, NATIVE)(x, freqs), eager) < 1e-12
    lowered = lower(program, TRUNCATE)
    out = lowered(x, freqs)
    assert max_error(out, eager) < 1e-4
    # computed in float32 and cast back: every value a float32 (an error bound from below is
    # not one: two values can round to float32 within 1e-9 of their float64 results)
    assert torch.equal(out, out.float().double())
    assert _wide_nodes(lowered.graph_module.graph, torch.float64) == []
    assert lowered.evidence["casts"] == ["input x: float64 -> float32",
                                         "input freqs: complex128 -> float32 (..., 2)",
                                         "output 0: float32 -> float64"]


class Float64Model(nn.Module):
    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        steps = torch.arange(x.shape[-1], dtype=torch.float64)
        return (x * ids.double()).cumsum(-1) / (steps + 1) + x.sin()


def test_truncate_double_computes_float64_internals_in_float32() -> None:
    x, ids = torch.randn(3, 5, dtype=torch.float64), torch.tensor([[1, 2, 3, 4, 5]] * 3)
    lowered = lower(export(Float64Model(), x, ids), TRUNCATE)
    assert _wide_nodes(lowered.graph_module.graph, torch.float64) == []
    out = lowered(x, ids)
    assert out.dtype == torch.float64
    assert 1e-9 < max_error(out, Float64Model()(x, ids)) < 1e-4


def test_llama_rope_under_both_policies() -> None:
    model = LlamaRoPE(dtype=torch.float64)
    x = torch.randn(2, 8, 8, dtype=torch.float64)
    lowered = lower(export(model, x), Profile("both", truncate_double=True, int64="int32"))
    assert 1e-9 < max_error(lowered(x), model(x)) < 1e-4
    assert lowered.evidence["path"] == ["complex rewrite", "float64"]


@pytest.mark.parametrize("profile", [INT32, TRUNCATE], ids=["int32", "truncate_double"])
def test_caller_tensors_are_never_modified_or_retyped(profile: Profile) -> None:
    x = torch.randn(2, 3, dtype=torch.float64)
    ids = torch.tensor([[2**40, -5, 7]] * 2)
    c = torch.randn(2, 3, dtype=torch.complex128)
    program = export(lambda x, ids, c: (x * ids, torch.view_as_real(c * x), ids * 2), x, ids, c)
    originals = clone((x, ids, c))
    out = lower(program, profile)(x, ids, c)
    for before, after in zip(originals, (x, ids, c), strict=True):
        assert after.dtype == before.dtype and torch.equal(after, before)
    assert [t.dtype for t in out] == [torch.float64, torch.float64, torch.int64]


def test_policy_from_profile() -> None:
    assert Policy.from_profile(NATIVE).narrowing == {}
    both = Policy.from_profile(Profile("both", truncate_double=True, int64="int32"))
    assert both.engine_dtype(torch.int64) == torch.int32
    assert both.engine_dtype(torch.complex128) == torch.complex64
    assert both.engine_dtype(torch.float16) == torch.float16


def test_a_constant_wrapped_to_zero_is_named_as_the_overflow_it_is() -> None:
    """Promise 4: ``x % 2**40`` under int64 = "int32" divides by the wrapped 0; the error says
    which constant wrapped to what, not only ``ZeroDivisionError``."""

    class Modulo(nn.Module):
        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return (ids * 31) % (2**40)

    ids = torch.arange(8, dtype=torch.int64)
    lowered = lower(export(Modulo(), ids), Profile("int32", int64="int32"))
    assert any("int64 constant outside the int32 range wrapped: 1099511627776 → 0 in node"
               in cast for cast in lowered.evidence["casts"])
    with pytest.raises(OverflowError, match=r"int64 constants outside the int32 range wrap under "
                       r'int64 = "int32", as TensorRT truncates them: 1099511627776 → 0 in node '
                       r"\w+ \(aten\.remainder\.Scalar\); then RuntimeError: ZeroDivisionError"):
        lowered(ids)
    assert torch.equal(lower(export(Modulo(), ids), Profile("native"))(ids), Modulo()(ids))
