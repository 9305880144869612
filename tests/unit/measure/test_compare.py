"""Tests for trtcheck.measure.compare: the gate, the reported figures and the messages."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trtcheck.core.profiles import DEFAULT_TOLERANCES, Tolerance
from trtcheck.measure.compare import Comparison, LeafResult, compare

INF, NAN = math.inf, math.nan
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
COMPLEXES = [torch.complex64, torch.complex128]
INTEGERS = [torch.int32, torch.int64, torch.bool]


def default_tolerance(dtype: torch.dtype) -> Tolerance:
    judged_as = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)
    return DEFAULT_TOLERANCES[str(judged_as).removeprefix("torch.")]


def fixed(rtol: float, atol: float) -> Callable[[torch.dtype], Tolerance]:
    return lambda _dtype: Tolerance(rtol=rtol, atol=atol)


def never_called(dtype: torch.dtype) -> Tolerance:
    raise AssertionError(f"tolerance_for called for {dtype}")


def only_leaf(result: Comparison) -> LeafResult:
    assert result.structure_error is None
    (leaf,) = result.leaves
    return leaf


# --- floating dtypes ---


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_identical_passes(dtype: torch.dtype) -> None:
    x = torch.linspace(-3, 3, 50).to(dtype)
    result = compare(x, x.clone(), default_tolerance)
    leaf = only_leaf(result)
    assert result and leaf.passed and result.message == "" and leaf.message == ""
    assert leaf.kind == "float"
    assert leaf.eager_dtype == leaf.dtype == str(dtype)
    assert leaf.shape == leaf.eager_shape == [50]
    assert leaf.max_abs == 0.0 and leaf.frac_mismatch == 0.0 and leaf.min_atol == 0.0
    assert leaf.cosine == pytest.approx(1.0)
    assert leaf.max_mag_err is None and leaf.n_diff is None and leaf.int32_overflow is None


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_tolerance_uses_eager_dtype(dtype: torch.dtype) -> None:
    tol = default_tolerance(dtype)
    asked: list[torch.dtype] = []

    def tolerance_for(d: torch.dtype) -> Tolerance:
        asked.append(d)
        return tol

    e = torch.linspace(1, 4, 20, dtype=torch.float64)
    within = (e * (1 + tol.rtol / 4)).to(dtype)
    leaf = only_leaf(compare(e.to(dtype), within, tolerance_for))
    assert leaf.passed and asked == [dtype]
    assert (leaf.rtol, leaf.atol) == (tol.rtol, tol.atol)

    outside = within.clone()
    outside[3] += 10 * (tol.atol + tol.rtol * 4)
    result = compare(e.to(dtype), outside, default_tolerance)
    leaf = only_leaf(result)
    assert not result and not leaf.passed
    assert leaf.frac_mismatch == pytest.approx(1 / 20)
    assert leaf.max_abs is not None and leaf.max_abs > tol.atol
    assert "out: 1 of 20 values outside" in leaf.message
    assert result.message.endswith(leaf.message)


def test_float_metrics_are_exact_figures() -> None:
    e = torch.tensor([1.0, 2.0, 0.0, -4.0], dtype=torch.float64)
    a = torch.tensor([1.5, 2.0, 0.25, -4.0], dtype=torch.float64)
    leaf = only_leaf(compare(e, a, fixed(0.0, 0.1)))
    assert leaf.max_abs == 0.5
    assert leaf.max_rel == 0.5  # the 0.25 error at e == 0 is skipped
    assert leaf.frac_mismatch == 0.5
    assert leaf.min_atol == 0.5
    assert leaf.min_rtol == math.inf  # e == 0 with |a - e| > atol: no rtol helps


def test_max_rel_none_when_expected_all_zero() -> None:
    leaf = only_leaf(compare(torch.zeros(3), torch.tensor([0.0, 1e-9, 0.0]), default_tolerance))
    assert leaf.passed and leaf.max_rel is None and leaf.max_abs == pytest.approx(1e-9)


# --- NaN and Inf ---


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_inf_at_same_positions_pass(dtype: torch.dtype) -> None:
    x = torch.tensor([1.0, NAN, INF, -INF, 2.0]).to(dtype)
    leaf = only_leaf(compare(x, x.clone(), default_tolerance))
    assert leaf.passed
    assert leaf.max_abs == 0.0  # figures are over the finite elements


@pytest.mark.parametrize(
    ("actual", "n_differ"),
    [
        ([1.0, 5.0, INF, -INF, 2.0], 1),  # NaN became a number
        ([1.0, NAN, -INF, -INF, 2.0], 1),  # +inf became -inf
        ([1.0, NAN, 3e38, -INF, 2.0], 1),  # +inf became a large finite value
        ([NAN, NAN, INF, -INF, INF], 2),  # new NaN and new Inf
    ],
)
def test_nan_inf_at_different_positions_fail(actual: list[float], n_differ: int) -> None:
    e = torch.tensor([1.0, NAN, INF, -INF, 2.0])
    leaf = only_leaf(compare(e, torch.tensor(actual), default_tolerance))
    assert not leaf.passed
    assert f"NaN/Inf placement differs at {n_differ} of 5 positions" in leaf.message


def test_complex_nonfinite_parts_must_match() -> None:
    e = torch.tensor([complex(INF, 1.0), complex(NAN, 0.0), 1 + 1j], dtype=torch.complex128)
    assert only_leaf(compare(e, e.clone(), default_tolerance)).passed
    moved_nan = e.clone()
    moved_nan[1] = complex(0.0, NAN)
    leaf = only_leaf(compare(e, moved_nan, default_tolerance))
    assert not leaf.passed and "placement differs at 1 of 3" in leaf.message
    # same placement, but the finite part beside the Inf differs
    other_finite_part = e.clone()
    other_finite_part[0] = complex(INF, 2.0)
    leaf = only_leaf(compare(e, other_finite_part, default_tolerance))
    assert not leaf.passed and "placement" not in leaf.message
    assert "1 of 3 values outside" in leaf.message


# --- complex ---


@pytest.mark.parametrize("dtype", COMPLEXES)
def test_complex_identical_passes(dtype: torch.dtype) -> None:
    x = torch.randn(4, 3, dtype=dtype, generator=torch.Generator().manual_seed(0))
    leaf = only_leaf(compare(x, x.clone(), default_tolerance))
    assert leaf.passed and leaf.kind == "complex"
    assert leaf.max_mag_err == 0.0 and leaf.max_phase_err == 0.0
    assert leaf.cosine == pytest.approx(1.0)


@pytest.mark.parametrize("dtype", COMPLEXES)
def test_complex_rotation_is_a_phase_error(dtype: torch.dtype) -> None:
    angle = 0.1
    e = torch.polar(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.0, 3.1, -2.0]))
    a = e * torch.polar(torch.tensor(1.0), torch.tensor(angle))
    leaf = only_leaf(compare(e.to(dtype), a.to(dtype), default_tolerance))
    assert not leaf.passed
    assert leaf.max_phase_err == pytest.approx(angle, abs=1e-6)  # 3.1 + 0.1 wraps past pi
    assert leaf.max_mag_err == pytest.approx(0.0, abs=1e-6)
    # the largest change of a real or imaginary part: |3 (e^{i(-1.9)} - e^{-2i})| componentwise
    rotated = torch.view_as_real(a.to(torch.complex128) - e.to(torch.complex128))
    assert leaf.max_abs == pytest.approx(float(rotated.abs().max()), rel=1e-5)


def test_complex_scaling_is_a_magnitude_error() -> None:
    e = torch.tensor([1 + 0j, 0 + 2j, -3 + 0j], dtype=torch.complex128)
    leaf = only_leaf(compare(e, e * 1.1, default_tolerance))
    assert leaf.max_mag_err == pytest.approx(0.3)
    assert leaf.max_phase_err == pytest.approx(0.0, abs=1e-12)


def test_complex_phase_ignores_negligible_expected_values() -> None:
    e = torch.tensor([1e-12 + 0j, 1 + 0j], dtype=torch.complex128)
    a = torch.tensor([-1e-12 + 0j, 1 + 0j], dtype=torch.complex128)  # phase off by pi
    leaf = only_leaf(compare(e, a, fixed(1e-6, 1e-6)))
    assert leaf.passed and leaf.max_phase_err == 0.0


def test_complex_gate_uses_magnitude_of_difference() -> None:
    e = torch.zeros(2, dtype=torch.complex128)
    a = torch.tensor([0.8 + 0.8j, 0j], dtype=torch.complex128)  # each part within atol=1
    leaf = only_leaf(compare(e, a, fixed(0.0, 1.0)))
    assert not leaf.passed  # |0.8 + 0.8i| = 1.13 > atol
    assert leaf.max_abs == pytest.approx(0.8)  # reported over real and imaginary parts
    assert leaf.min_atol == pytest.approx(math.hypot(0.8, 0.8))


def test_complex_conjugate_view_compares_by_value() -> None:
    x = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    assert compare(x.conj(), x.conj().resolve_conj(), default_tolerance)
    assert not compare(x.conj(), x, default_tolerance)


# --- integers and bool ---


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_equal_passes_without_tolerance(dtype: torch.dtype) -> None:
    x = torch.tensor([0, 1, 1, 0, 1]).to(dtype)
    leaf = only_leaf(compare(x, x.clone(), never_called))
    assert leaf.passed and leaf.n_diff == 0 and leaf.frac_mismatch == 0.0
    assert leaf.kind == ("bool" if dtype == torch.bool else "int")
    assert (leaf.rtol, leaf.atol) == (0.0, 0.0)
    assert leaf.min_atol is None and leaf.min_rtol is None and leaf.cosine is None
    assert leaf.int32_overflow == (0 if dtype == torch.int64 else None)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_any_difference_fails(dtype: torch.dtype) -> None:
    e = torch.tensor([0, 1, 1, 0, 1]).to(dtype)
    a = torch.tensor([1, 1, 1, 0, 0]).to(dtype)
    leaf = only_leaf(compare(e, a, never_called))
    assert not leaf.passed and leaf.n_diff == 2 and leaf.frac_mismatch == 0.4
    short = str(dtype).removeprefix("torch.")
    assert leaf.message.startswith(f"out: 2 of 5 {short} values differ")
    assert "int32 range" not in leaf.message


def test_int64_extreme_values_compare_exactly() -> None:
    big = 2**62 + 1
    e = torch.tensor([big, -(2**63)], dtype=torch.int64)
    a = torch.tensor([big - 1, 2**63 - 1], dtype=torch.int64)  # invisible in float64
    leaf = only_leaf(compare(e, a, never_called))
    assert leaf.n_diff == 2 and leaf.int32_overflow == 2
    assert leaf.max_abs == pytest.approx(2.0**64)


@pytest.mark.parametrize("actual_dtype", [torch.int32, torch.int64])
def test_int64_wrapped_to_int32_is_named(actual_dtype: torch.dtype) -> None:
    e = torch.tensor([2**31, 7, -(2**31) - 1, 2**40 + 3, 5], dtype=torch.int64)
    wrapped = torch.tensor([-(2**31), 7, 2**31 - 1, 3, 5], dtype=actual_dtype)
    leaf = only_leaf(compare(e, wrapped, never_called))
    assert not leaf.passed
    assert leaf.int32_overflow == 3 and leaf.n_diff == 3
    assert "eager has 3 values outside the int32 range" in leaf.message
    assert "actual equals eager wrapped to int32" in leaf.message
    assert "int64 truncated to int32" in leaf.message
    assert ("dtype torch.int32 != eager torch.int64" in leaf.message) == (
        actual_dtype == torch.int32
    )


def test_int64_saturated_to_int32_is_named() -> None:
    e = torch.tensor([2**33, -(2**33), 1], dtype=torch.int64)
    leaf = only_leaf(compare(e, e.clamp(-(2**31), 2**31 - 1).to(torch.int32), never_called))
    assert "actual equals eager clamped to int32" in leaf.message


def test_int64_overflow_suspected_when_values_differ_otherwise() -> None:
    e = torch.tensor([2**35, 1, 2], dtype=torch.int64)
    a = torch.tensor([0, 1, 9], dtype=torch.int64)
    leaf = only_leaf(compare(e, a, never_called))
    assert leaf.message == (
        "out: 2 of 3 int64 values differ (max abs diff 3.43597e+10); "
        "eager has 1 values outside the int32 range (int64 truncated to int32?)"
    )


def test_int64_overflow_counted_even_when_values_match() -> None:
    e = torch.tensor([2**35, 1], dtype=torch.int64)
    leaf = only_leaf(compare(e, e.clone(), never_called))
    assert leaf.passed and leaf.int32_overflow == 1 and leaf.message == ""


# --- dtype, shape and type mismatches ---


def test_int64_returned_as_int32_fails_even_with_equal_values() -> None:
    e = torch.arange(6, dtype=torch.int64)
    leaf = only_leaf(compare(e, e.to(torch.int32), never_called))
    assert not leaf.passed and leaf.n_diff == 0
    assert leaf.message == "out: dtype torch.int32 != eager torch.int64"


def test_complex_returned_as_real_fails_with_error_size() -> None:
    e = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    leaf = only_leaf(compare(e, e.real.clone(), default_tolerance))
    assert not leaf.passed and leaf.kind == "complex"
    assert leaf.message.startswith("out: dtype torch.float32 != eager torch.complex64")
    assert leaf.max_abs == 4.0  # the dropped imaginary parts
    assert leaf.max_mag_err == pytest.approx(5 - 3)


def test_float64_returned_as_float32_reports_error_size() -> None:
    e = torch.tensor([1 / 3, 2 / 3], dtype=torch.float64)
    leaf = only_leaf(compare(e, e.to(torch.float32), default_tolerance))
    assert not leaf.passed and "dtype torch.float32 != eager torch.float64" in leaf.message
    assert leaf.max_abs is not None and 0 < leaf.max_abs < 1e-7
    assert leaf.rtol == DEFAULT_TOLERANCES["float64"].rtol


def test_shape_mismatch_fails_without_figures() -> None:
    leaf = only_leaf(compare(torch.zeros(2, 3), torch.zeros(3, 2), default_tolerance))
    assert not leaf.passed
    assert leaf.message == "out: shape [3, 2] != eager [2, 3]"
    assert (leaf.eager_shape, leaf.shape) == ([2, 3], [3, 2])
    assert leaf.max_abs is None and leaf.frac_mismatch is None and leaf.min_atol is None


def test_broadcastable_shape_is_still_a_mismatch() -> None:
    assert not compare(torch.ones(1, 3), torch.ones(3), default_tolerance)


def test_empty_tensors() -> None:
    leaf = only_leaf(compare(torch.ones(0, 4), torch.ones(0, 4), default_tolerance))
    assert leaf.passed and leaf.max_abs is None and leaf.frac_mismatch is None
    assert not compare(torch.ones(0), torch.ones(0, dtype=torch.float64), default_tolerance)
    assert compare(torch.ones(0, dtype=torch.int64), torch.ones(0, dtype=torch.int64), never_called)


def test_tensor_that_requires_grad() -> None:
    x = torch.ones(3, requires_grad=True) * 2
    assert compare(x, x.detach().clone(), default_tolerance)


# --- non-tensor leaves ---


def test_other_leaves_compared_by_equality_and_type() -> None:
    assert only_leaf(compare(3, 3, never_called)).passed
    leaf = only_leaf(compare("relu", "gelu", never_called))
    assert not leaf.passed and leaf.kind == "other"
    assert leaf.message == "out: value 'gelu' != eager 'relu'"
    leaf = only_leaf(compare(1, 1.0, never_called))
    assert not leaf.passed and (leaf.eager_dtype, leaf.dtype) == ("int", "float")
    assert leaf.message == "out: actual is float, eager is int"


def test_tensor_versus_scalar_fails() -> None:
    leaf = only_leaf(compare(torch.tensor(3), 3, never_called))
    assert not leaf.passed and leaf.kind == "int" and leaf.dtype == "int"
    assert leaf.message == "out: actual is int, eager is a tensor of torch.int64"
    leaf = only_leaf(compare(3, torch.tensor(3), never_called))
    assert not leaf.passed and leaf.kind == "other" and leaf.dtype == "torch.int64"


# --- structure ---


def nested() -> tuple[dict[str, Any], torch.Tensor]:
    return (
        {"a": torch.ones(2), "b": [torch.arange(3), torch.full((2,), 0.5)]},
        torch.tensor([True, False]),
    )


def test_nested_outputs_compare_each_leaf_by_path() -> None:
    result = compare(nested(), nested(), default_tolerance)
    assert result
    assert [leaf.path for leaf in result.leaves] == [
        "[0]['a']",
        "[0]['b'][0]",
        "[0]['b'][1]",
        "[1]",
    ]
    assert [leaf.kind for leaf in result.leaves] == ["float", "int", "float", "bool"]


def test_nested_failure_names_the_leaf() -> None:
    expected, actual = nested(), nested()
    actual[0]["b"][1][1] = 9.0
    result = compare(expected, actual, default_tolerance)
    assert not result
    assert [leaf.passed for leaf in result.leaves] == [True, True, False, True]
    assert result.message.startswith("1 of 4 outputs failed; worst: out[0]['b'][1]: ")


def test_worst_leaf_prefers_shape_problems_over_numeric_ones() -> None:
    e = (torch.zeros(4), torch.zeros(2), torch.zeros(3))
    a = (torch.ones(4), torch.zeros(2), torch.zeros(5))
    result = compare(e, a, default_tolerance)
    assert result.message.startswith("2 of 3 outputs failed; worst: out[2]: shape [5]")


def test_worst_leaf_is_the_one_with_more_mismatches() -> None:
    e = (torch.zeros(4), torch.zeros(4))
    a = (torch.tensor([1.0, 0, 0, 0]), torch.tensor([1.0, 1, 1, 0]))
    assert "worst: out[1]: 3 of 4" in compare(e, a, default_tolerance).message


@pytest.mark.parametrize(
    ("actual", "fragment"),
    [
        ((torch.ones(1),), "eager has 2 outputs, actual has 1; missing out[1]"),
        ((torch.ones(1), torch.ones(1), 3), "unexpected out[2]"),
        ({"x": torch.ones(1)}, "missing out[0], out[1]; unexpected out['x']"),
        (torch.ones(1), "eager has 2 outputs, actual has 1"),
    ],
)
def test_structure_mismatch(actual: object, fragment: str) -> None:
    result = compare((torch.ones(1), torch.ones(1)), actual, default_tolerance)
    assert not result and result.leaves == ()
    assert result.structure_error is not None and fragment in result.structure_error
    assert result.message == f"output structure differs: {result.structure_error}"


def test_dict_key_mismatch() -> None:
    result = compare({"logits": torch.ones(1)}, {"scores": torch.ones(1)}, default_tolerance)
    assert result.structure_error == (
        "eager has 1 outputs, actual has 1; missing out['logits']; unexpected out['scores']"
    )


def test_list_for_tuple_and_reordered_dict_are_the_same_structure() -> None:
    x, y = torch.ones(2), torch.zeros(2)
    assert compare((x, y), [x, y], default_tolerance)
    result = compare({"a": x, "b": y}, {"b": y, "a": x}, default_tolerance)
    assert result and [leaf.path for leaf in result.leaves] == ["['a']", "['b']"]


def test_no_outputs_pass() -> None:
    assert compare((), (), never_called)
    assert compare(None, None, never_called)


# --- minimum passing tolerances ---


def test_min_atol_and_min_rtol_are_the_smallest_passing() -> None:
    g = torch.Generator().manual_seed(1)
    e = torch.randn(100, generator=g)
    a = e + 1e-2 * torch.randn(100, generator=g)
    leaf = only_leaf(compare(e, a, default_tolerance))
    tol = default_tolerance(torch.float32)
    assert not leaf.passed and leaf.min_atol is not None and leaf.min_rtol is not None
    assert compare(e, a, fixed(tol.rtol, leaf.min_atol))
    assert not compare(e, a, fixed(tol.rtol, leaf.min_atol * (1 - 1e-9)))
    assert compare(e, a, fixed(leaf.min_rtol, tol.atol))
    assert not compare(e, a, fixed(leaf.min_rtol * (1 - 1e-9), tol.atol))


def test_min_rtol_is_zero_when_atol_suffices() -> None:
    leaf = only_leaf(compare(torch.ones(3), torch.ones(3) + 1e-4, default_tolerance))
    assert leaf.passed and leaf.min_rtol == 0.0


finite_floats = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=32)


@st.composite
def float_pairs(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor]:
    n = draw(st.integers(min_value=1, max_value=20))
    e = draw(st.lists(finite_floats, min_size=n, max_size=n))
    a = draw(st.lists(finite_floats, min_size=n, max_size=n))
    return torch.tensor(e), torch.tensor(a)


@settings(max_examples=200, deadline=None)
@given(pair=float_pairs(), rtol=st.sampled_from([0.0, 1e-6, 5e-3, 0.3]))
def test_min_atol_property(pair: tuple[torch.Tensor, torch.Tensor], rtol: float) -> None:
    e, a = pair
    min_atol = only_leaf(compare(e, a, fixed(rtol, 0.0))).min_atol
    assert min_atol is not None and min_atol >= 0.0
    assert compare(e, a, fixed(rtol, min_atol))
    if min_atol > 0.0:
        assert not compare(e, a, fixed(rtol, math.nextafter(min_atol, 0.0)))


@settings(max_examples=200, deadline=None)
@given(pair=float_pairs(), atol=st.sampled_from([0.0, 1e-3, 1.0]))
def test_min_rtol_property(pair: tuple[torch.Tensor, torch.Tensor], atol: float) -> None:
    e, a = pair
    min_rtol = only_leaf(compare(e, a, fixed(0.0, atol))).min_rtol
    assert min_rtol is not None and min_rtol >= 0.0
    if math.isinf(min_rtol):
        assert not compare(e, a, fixed(1e300, atol))
        return
    assert compare(e, a, fixed(min_rtol, atol))
    if min_rtol > 0.0:
        assert not compare(e, a, fixed(math.nextafter(min_rtol, 0.0), atol))


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(width=32), min_size=0, max_size=20))
def test_any_float_tensor_equals_itself(values: list[float]) -> None:
    x = torch.tensor(values, dtype=torch.float32)
    assert compare(x, x.clone(), default_tolerance)


# --- cosine ---


@pytest.mark.parametrize(
    ("e", "a", "cosine"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 1.0),
        ([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0], -1.0),
        ([1.0, 0.0], [0.0, 1.0], 0.0),
        ([0.0, 0.0], [0.0, 0.0], 1.0),
        ([0.0, 0.0], [0.0, 1.0], 0.0),
        ([1e300, 1e300], [2e300, 2e300], 1.0),  # scaled: norms would overflow otherwise
    ],
)
def test_cosine(e: list[float], a: list[float], cosine: float) -> None:
    t = torch.tensor
    leaf = only_leaf(compare(t(e, dtype=torch.float64), t(a, dtype=torch.float64), fixed(0, 0)))
    assert leaf.cosine == pytest.approx(cosine, abs=1e-12)


def test_complex_cosine_of_opposite_vectors() -> None:
    e = torch.tensor([1 + 1j, 2 - 3j], dtype=torch.complex128)
    assert only_leaf(compare(e, -e, default_tolerance)).cosine == pytest.approx(-1.0)


# --- serialisation ---


def test_to_dict_is_json_able() -> None:
    result = compare(
        (torch.zeros(2), torch.tensor([2**40]), "x"),
        (torch.tensor([0.0, 1.0]), torch.tensor([0]), "y"),
        default_tolerance,
    )
    dicts = [leaf.to_dict() for leaf in result.leaves]
    assert json.loads(json.dumps(dicts)) == dicts
    assert dicts[0]["min_rtol"] == math.inf  # json round-trips it as Infinity
    assert dicts[1]["int32_overflow"] == 1 and dicts[2]["kind"] == "other"


@st.composite
def mixed_pairs(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor]:
    """Float or complex pairs with NaN, Inf and zeros mixed in."""
    n = draw(st.integers(min_value=1, max_value=40))
    values = st.one_of(finite_floats, st.sampled_from([0.0, INF, -INF, NAN]))
    e, a = (torch.tensor(draw(st.lists(values, min_size=n, max_size=n))) for _ in range(2))
    if draw(st.booleans()):
        e, a = torch.complex(e, e.flip(0)), torch.complex(a, a.flip(0))
    return e, a


@settings(max_examples=200, deadline=None)
@given(pair=mixed_pairs(), rtol=st.sampled_from([0.0, 1e-6, 5e-3]),
       atol=st.sampled_from([0.0, 1e-3, 1.0]), chunk=st.integers(min_value=1, max_value=7))
def test_chunked_comparison_equals_one_piece(pair: tuple[torch.Tensor, torch.Tensor], rtol: float,
                                             atol: float, chunk: int) -> None:
    from unittest import mock

    import trtcheck.measure.compare

    e, a = pair
    whole = only_leaf(compare(e, a, fixed(rtol, atol))).to_dict()
    with mock.patch.object(trtcheck.measure.compare, "CHUNK", chunk):
        pieces = only_leaf(compare(e, a, fixed(rtol, atol))).to_dict()
    cosine_whole, cosine_pieces = whole.pop("cosine"), pieces.pop("cosine")
    assert pieces == whole
    if cosine_whole is None:
        assert cosine_pieces is None
    else:  # summed chunk by chunk: equal up to rounding
        assert cosine_pieces == pytest.approx(cosine_whole, rel=1e-12)


def test_chunked_int64_overflow_explanation_matches() -> None:
    from unittest import mock

    import trtcheck.measure.compare

    e = torch.tensor([1, 2**40, -(2**35), 7, 2**33 + 5])
    wrapped = e.to(torch.int32).to(torch.int64)
    with mock.patch.object(trtcheck.measure.compare, "CHUNK", 2):
        leaf = only_leaf(compare(e, wrapped, never_called))
    assert leaf.int32_overflow == 3 and leaf.n_diff == 3
    assert "actual equals eager wrapped to int32" in leaf.message


def test_comparison_leaves_both_outputs_untouched() -> None:
    from unittest import mock

    import trtcheck.measure.compare

    e = torch.tensor([1.0, NAN, 3.0, -INF], dtype=torch.float64)
    a = torch.tensor([1.5, NAN, 2.0, -INF], dtype=torch.float64)
    e_before, a_before = e.clone(), a.clone()
    with mock.patch.object(trtcheck.measure.compare, "CHUNK", 3):
        compare(e, a, fixed(0.0, 0.0))
    assert torch.equal(e.nan_to_num(), e_before.nan_to_num())
    assert torch.equal(a.nan_to_num(), a_before.nan_to_num())


def test_inputs_are_called_inputs() -> None:
    before = ((torch.ones(2), torch.zeros(2)), {})
    after = ((torch.ones(2), torch.full((2,), 9.0)), {})
    result = compare(before, after, fixed(0.0, 0.0), what="input")
    assert result.message.startswith("1 of 2 inputs failed; worst: inputs[0][1]: ")
    assert "out[" not in result.message


def test_every_figure_of_an_output_is_a_declared_metric() -> None:
    import dataclasses

    from trtcheck.results.metrics import METRICS

    figures = {f.name for f in dataclasses.fields(LeafResult)
               if f.type in ("float | None", "int | None")}
    assert figures == {m.field for m in METRICS}
