"""Compare a backend's outputs with eager PyTorch's, leaf by leaf, and explain any difference.

The gate is ``torch.testing.assert_close``'s: equal shape and dtype, and every element within
``|a - e| <= atol + rtol * |e|`` (complex magnitudes for complex leaves), with NaN and ±Inf at
the same positions. Integer and bool leaves must match exactly. Every other figure in a
:class:`LeafResult` is reported to help diagnose a failure, never used as a gate.

Leaves are matched by their pytree key path, so a backend that returns a list where eager
returns a tuple, or a dict with its keys in another order, is not a structure error; a missing
or extra output is.
"""

from __future__ import annotations

import math
import reprlib
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from trtcheck.core.profiles import Tolerance
from trtcheck.results.metrics import severity
from trtcheck.tensors import INT32_MAX, INT32_MIN, leaves_with_paths

_EXACT = Tolerance(rtol=0.0, atol=0.0)
NO_NARROWING: Mapping[torch.dtype, torch.dtype] = {}
# What truncate_double asks for: float64 computed, and returned, as float32.
TRUNCATE_DOUBLE = {torch.float64: torch.float32, torch.complex128: torch.complex64}


@dataclass(frozen=True)
class LeafResult:
    """The comparison of one output leaf; see the module docstring for what passing means.

    Metrics are computed in float64 (complex128) over the elements finite in both outputs, and
    are None when there is nothing to compute them over (shape mismatch, empty tensor, non-tensor
    leaf). Floating metrics are also computed when only the dtype differs, so the error size is
    visible (in the common family: an int64 leaf returned as float32 gets floating figures).
    Integer and bool leaves get ``n_diff``, ``frac_mismatch`` and ``max_abs`` but no
    ``min_atol``/``min_rtol``: they are compared exactly, so no tolerance applies to them.
    ``min_atol`` and ``min_rtol`` are the smallest float64 values for which the same comparison
    (in float64 arithmetic) passes, holding the other tolerance fixed.
    """

    path: str
    kind: str
    passed: bool
    eager_dtype: str
    dtype: str
    eager_shape: list[int]
    shape: list[int]
    rtol: float
    atol: float
    max_abs: float | None = None
    max_rel: float | None = None
    frac_mismatch: float | None = None
    cosine: float | None = None
    max_mag_err: float | None = None
    max_phase_err: float | None = None
    n_diff: int | None = None
    int32_overflow: int | None = None
    min_atol: float | None = None
    min_rtol: float | None = None
    # Elements that are NaN (a NaN part, for complex) or else ±Inf, in eager's output and in
    # the backend's: reported on every row that has them (:mod:`trtcheck.results.nonfinite`).
    eager_nan: int | None = None
    eager_inf: int | None = None
    nan: int | None = None
    inf: int | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the fields (``min_rtol`` may be ``inf``)."""
        return asdict(self)


@dataclass(frozen=True)
class Comparison:
    """The comparison of a whole output pytree."""

    leaves: tuple[LeafResult, ...]
    structure_error: str | None = None
    what: str = "output"  # or "input", for the check that a call left its inputs alone

    def __bool__(self) -> bool:
        return self.structure_error is None and all(leaf.passed for leaf in self.leaves)

    @property
    def message(self) -> str:
        """Empty when passed; else one line naming the worst failing leaf and the failure count."""
        if self.structure_error is not None:
            return f"{self.what} structure differs: {self.structure_error}"
        failed = [leaf for leaf in self.leaves if not leaf.passed]
        if not failed:
            return ""
        worst = max(failed, key=lambda leaf: severity(leaf.to_dict()))
        return f"{len(failed)} of {len(self.leaves)} {self.what}s failed; worst: {worst.message}"


def require_tensors(outputs: Any) -> None:
    """Raise ``TypeError`` when a model's outputs hold no tensor: nothing a backend computes
    could be compared, so no backend's row may pass."""
    leaves = [leaf for _, leaf in leaves_with_paths(outputs)]
    if any(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return
    kind = type(outputs).__name__
    if leaves != [outputs]:  # a structure: say what it held
        held = sorted({type(leaf).__name__ for leaf in leaves})
        kind += f" of {', '.join(held)}" if held else " with nothing in it"
    raise TypeError(f"the model returned {kind}, not a tensor or a structure of tensors")


def compare(
    expected: Any, actual: Any, tolerance_for: Callable[[torch.dtype], Tolerance],
    narrowed: Mapping[torch.dtype, torch.dtype] = NO_NARROWING, *, what: str = "output",
) -> Comparison:
    """Compare ``actual`` with eager's ``expected``; ``tolerance_for`` gets the eager leaf dtype.
    ``what`` names the leaves in messages: ``output``, or ``input`` for the inputs after a call.

    ``narrowed`` maps an eager dtype to the narrower one a leaf may come back as when the
    settings ask for it (``truncate_double``: float64 → float32); values are still judged."""
    eager = leaves_with_paths(expected)
    got = dict(leaves_with_paths(actual))
    if len(got) != len(eager) or any(path not in got for path, _ in eager):
        return Comparison((), _structure_difference(eager, got, what), what)
    return Comparison(
        tuple(_compare_leaf(path, e, got[path], tolerance_for, what, narrowed)
              for path, e in eager),
        what=what)


def _structure_difference(eager: list[tuple[str, Any]], got: dict[str, Any], what: str) -> str:
    eager_paths = [path for path, _ in eager]
    known = set(eager_paths)
    missing = [_name(p, what) for p in eager_paths if p not in got]
    extra = [_name(p, what) for p in got if p not in known]
    parts = [f"eager has {len(eager_paths)} {what}s, actual has {len(got)}"]
    if missing:
        parts.append(f"missing {_some(missing)}")
    if extra:
        parts.append(f"unexpected {_some(extra)}")
    return "; ".join(parts)


def _some(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def _name(path: str, what: str = "output") -> str:
    return f"{'out' if what == 'output' else 'inputs'}{path}"


def _kind(x: Any) -> str:
    if not isinstance(x, torch.Tensor):
        return "other"
    if x.is_complex():
        return "complex"
    if x.is_floating_point():
        return "float"
    return "bool" if x.dtype == torch.bool else "int"


def _describe(x: Any) -> tuple[str, list[int]]:
    """(dtype or type name, shape) of a leaf."""
    if isinstance(x, torch.Tensor):
        return str(x.dtype), list(x.shape)
    return type(x).__name__, []


def _compare_leaf(
    path: str, e: Any, a: Any, tolerance_for: Callable[[torch.dtype], Tolerance], what: str,
    narrowed: Mapping[torch.dtype, torch.dtype],
) -> LeafResult:
    kind = _kind(e)
    tol = tolerance_for(e.dtype) if kind in ("float", "complex") else _EXACT
    (eager_dtype, eager_shape), (dtype, shape) = _describe(e), _describe(a)
    figures: dict[str, Any] = {}
    if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
        e, a = e.detach(), a.detach()
        problems = _tensor_problems(e, a, tol, figures, narrowed)
    else:
        problems = _other_problems(e, a)
    return LeafResult(
        path=path,
        kind=kind,
        passed=not problems,
        eager_dtype=eager_dtype,
        dtype=dtype,
        eager_shape=eager_shape,
        shape=shape,
        rtol=tol.rtol,
        atol=tol.atol,
        message=f"{_name(path, what)}: {'; '.join(problems)}" if problems else "",
        **figures,
    )


def _other_problems(e: Any, a: Any) -> list[str]:
    if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor) or type(a) is not type(e):
        (e_type, _), (a_type, _) = _describe(e), _describe(a)
        a_what = f"a tensor of {a_type}" if isinstance(a, torch.Tensor) else a_type
        e_what = f"a tensor of {e_type}" if isinstance(e, torch.Tensor) else e_type
        return [f"actual is {a_what}, eager is {e_what}"]
    try:
        equal = bool(a == e)
    except Exception:  # an exotic __eq__ that does not give a truth value
        equal = False
    return [] if equal else [f"value {reprlib.repr(a)} != eager {reprlib.repr(e)}"]


# Elements per step, at most. Every figure is computed chunk by chunk, on the device where
# eager's output lives, so comparing one output pair needs scratch memory for one chunk (about
# 150 bytes an element of float64/complex128 temporaries), not copies of the whole outputs.
# A pair is cut into at least SLICES chunks, so that the scratch stays well under the pair's
# own size for small pairs too (a 64 MiB complex64 pair in whole 2M-element chunks needed 2.4×).
CHUNK = 1 << 21
SLICES = 16


def _chunks(e: torch.Tensor, a: torch.Tensor, common: torch.dtype,
            only: Callable[[int], bool] | None = None) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Both tensors flattened, in slices of at most :data:`CHUNK` elements (those whose index ``only``
    accepts), converted to ``common`` on eager's device. Slices are new tensors or read-only
    views: the outputs are never modified."""
    flat_e, flat_a = e.reshape(-1), a.reshape(-1)
    step = max(1, min(CHUNK, -(-flat_e.numel() // SLICES)))
    for i, start in enumerate(range(0, flat_e.numel(), step)):
        if only is None or only(i):
            stop = start + step
            yield (flat_e[start:stop].to(common).resolve_conj(),
                   flat_a[start:stop].to(e.device).to(common).resolve_conj())


def _tensor_problems(
    e: torch.Tensor, a: torch.Tensor, tol: Tolerance, figures: dict[str, Any],
    narrowed: Mapping[torch.dtype, torch.dtype],
) -> list[str]:
    """Problems that fail the leaf; fills ``figures`` with the reported metrics."""
    problems = []
    if a.dtype != e.dtype and narrowed.get(e.dtype) != a.dtype:
        problems.append(f"dtype {a.dtype} != eager {e.dtype}")
    if a.shape != e.shape:
        problems.append(f"shape {list(a.shape)} != eager {list(e.shape)}")
    if e.dtype == torch.int64:
        figures["int32_overflow"] = sum(int(((c < INT32_MIN) | (c > INT32_MAX)).sum())
                                        for c, _ in _chunks(e, e, torch.int64))
    if a.shape != e.shape:
        return problems
    common = _common_dtype(e.dtype, a.dtype)
    if common == torch.int64:
        value_problems = _integer_figures(e, a, figures)
    else:
        value_problems = _floating_figures(e, a, common, tol, figures)
    if value_problems and figures.get("int32_overflow"):
        value_problems.append(_overflow_note(e, a, figures["int32_overflow"]))
    return problems + value_problems


def _common_dtype(e: torch.dtype, a: torch.dtype) -> torch.dtype:
    if e.is_complex or a.is_complex:
        return torch.complex128
    if e.is_floating_point or a.is_floating_point:
        return torch.float64
    return torch.int64


def _integer_figures(e: torch.Tensor, a: torch.Tensor, figures: dict[str, Any]) -> list[str]:
    n = e.numel()
    n_diff, max_abs = 0, 0.0
    for ce, ca in _chunks(e, a, torch.int64):
        n_diff += int((ca != ce).sum())
        # float64 so that the difference of two extreme int64 values cannot overflow
        max_abs = max(max_abs, float((ca.double() - ce.double()).abs().max()))
    figures["n_diff"] = n_diff
    if n == 0:
        return []
    figures.update(frac_mismatch=n_diff / n, max_abs=max_abs)
    if n_diff == 0:
        return []
    short = str(e.dtype).removeprefix("torch.")
    return [f"{n_diff} of {n} {short} values differ (max abs diff {max_abs:.6g})"]


def _overflow_note(e: torch.Tensor, a: torch.Tensor, overflow: int) -> str:
    """Explain differing int64 values when eager has values int32 cannot hold."""
    wrapped = clamped = True
    for ce, ca in _chunks(e, a, torch.int64):
        low = ce & 0xFFFFFFFF
        wrapped = wrapped and torch.equal(ca, torch.where(low > INT32_MAX, low - 2**32, low))
        clamped = clamped and torch.equal(ca, ce.clamp(INT32_MIN, INT32_MAX))
    outside = f"eager has {overflow} values outside the int32 range"
    if wrapped:
        return f"{outside} and actual equals eager wrapped to int32 (int64 truncated to int32)"
    if clamped:
        return f"{outside} and actual equals eager clamped to int32 (int64 saturated to int32)"
    return f"{outside} (int64 truncated to int32?)"


def _components(x: torch.Tensor) -> torch.Tensor:
    """(n, 2) real and imaginary parts of a complex vector, (n, 1) for a real one."""
    return torch.view_as_real(x) if x.is_complex() else x.unsqueeze(-1)


def _within(err: torch.Tensor, mag: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    # The single definition of "close", shared by the gate and the minimum-tolerance searches
    # so that min_atol/min_rtol pass by construction.
    return err <= atol + rtol * mag


def _larger(x: float | None, y: float | None) -> float | None:
    return y if x is None else x if y is None else max(x, y)


class _Cosine:
    """Cosine similarity accumulated chunk by chunk. Each vector is scaled by its running
    maximum so that the sums cannot overflow, and identical vectors give exactly 1."""

    def __init__(self) -> None:
        self.sx = self.sy = 0.0
        self.xx = self.yy = self.xy = 0.0

    def add(self, x: torch.Tensor, y: torch.Tensor) -> None:
        sx, sy = max(self.sx, float(x.abs().max())), max(self.sy, float(y.abs().max()))
        fx = self.sx / sx if sx else 0.0
        fy = self.sy / sy if sy else 0.0
        self.xx, self.yy, self.xy = self.xx * fx * fx, self.yy * fy * fy, self.xy * fx * fy
        self.sx, self.sy = sx, sy
        x, y = (x / sx if sx else x), (y / sy if sy else y)
        self.xx += float(torch.dot(x, x))
        self.yy += float(torch.dot(y, y))
        self.xy += float(torch.dot(x, y))

    def value(self) -> float:
        if self.sx == 0 and self.sy == 0:
            return 1.0
        if self.sx == 0 or self.sy == 0:
            return 0.0
        return min(1.0, max(-1.0, self.xy / math.sqrt(self.xx * self.yy)))


@dataclass
class _Bounds:
    """Per chunk, what the minimum-tolerance searches need to skip chunks that pass anyway:
    the largest ``err - rtol*mag`` and ``err + rtol*mag``, and over the elements beyond atol
    the largest ``(err - atol) / mag`` and the smallest ``mag``."""

    atol_slack: list[float] = field(default_factory=list)
    size: list[float] = field(default_factory=list)
    rtol_slack: list[float] = field(default_factory=list)
    smallest: list[float] = field(default_factory=list)

    def add(self, err: torch.Tensor, mag: torch.Tensor, tol: Tolerance) -> None:
        scaled = tol.rtol * mag
        self.atol_slack.append(float((err - scaled).max()) if err.numel() else -math.inf)
        self.size.append(float((err + scaled).max()) if err.numel() else 0.0)
        over = err > tol.atol
        if over.any():
            self.rtol_slack.append(float(((err[over] - tol.atol) / mag[over]).max()))
            self.smallest.append(float(mag[over].min()))
        else:
            self.rtol_slack.append(-math.inf)
            self.smallest.append(math.inf)

    # A chunk is skipped only when rounding (under 2**-50 relative here) cannot make one of its
    # elements fail: the margin 2**-40 is far wider than needed.
    def may_fail_atol(self, i: int, t: float) -> bool:
        return self.atol_slack[i] >= t - (t + 2 * self.size[i]) * _MARGIN

    def may_fail_rtol(self, i: int, t: float, atol: float) -> bool:
        return self.rtol_slack[i] >= t * (1 - _MARGIN) - atol * _MARGIN / self.smallest[i]


_MARGIN = 2.0**-40


def _floating_figures(
    e: torch.Tensor, a: torch.Tensor, common: torch.dtype, tol: Tolerance, figures: dict[str, Any]
) -> list[str]:
    n = e.numel()
    if n == 0:
        return []
    n_bad = n_placement = 0
    counts = dict.fromkeys(("eager_nan", "eager_inf", "nan", "inf"), 0)
    any_finite = over_atol = zero_over = False
    max_abs = max_rel = mag_err = phase_err = None
    cosine, bounds = _Cosine(), _Bounds()
    for ce, ca in _chunks(e, a, common):
        pe, pa = _components(ce), _components(ca)
        finite = ce.isfinite() & ca.isfinite()
        all_finite = bool(finite.all())
        err, mag = (ca - ce).abs(), ce.abs()
        if all_finite:  # the common case: no masks, no copies
            close = _within(err, mag, tol.rtol, tol.atol)
            fe, fa, f_err, f_mag, f_e, f_a = pe, pa, err, mag, ce, ca
        else:
            for prefix, part in (("eager_", pe), ("", pa)):
                nan = part.isnan().any(dim=1)
                counts[f"{prefix}nan"] += int(nan.sum())
                counts[f"{prefix}inf"] += int((part.isinf().any(dim=1) & ~nan).sum())
            n_placement += int(((pe.isnan() != pa.isnan()) | (pe.isposinf() != pa.isposinf())
                                | (pe.isneginf() != pa.isneginf())).any(dim=1).sum())
            # Non-finite elements pass only when every part is equal, NaN matching NaN.
            nonfinite_equal = ((pe == pa) | (pe.isnan() & pa.isnan())).all(dim=1)
            close = torch.where(finite, _within(err, mag, tol.rtol, tol.atol), nonfinite_equal)
            fe, fa, f_err, f_mag, f_e, f_a = (
                pe[finite], pa[finite], err[finite], mag[finite], ce[finite], ca[finite])
        n_bad += int((~close).sum())
        bounds.add(f_err, f_mag, tol)
        if not f_err.numel():
            continue
        any_finite = True
        diff = (fa - fe).abs()
        max_abs = _larger(max_abs, float(diff.max()))
        nonzero = fe != 0
        if nonzero.any():
            rel = torch.where(nonzero, diff / fe.abs(), 0.0)
            max_rel = _larger(max_rel, float(rel.max()))
        cosine.add(fe.reshape(-1), fa.reshape(-1))
        if bounds.rtol_slack[-1] > -math.inf:
            over_atol = True
            zero_over = zero_over or bounds.smallest[-1] == 0
        if ce.is_complex():
            mag_err = _larger(mag_err, float((f_a.abs() - f_mag).abs().max()))
            phase_err = _larger(phase_err, _max_phase_err(f_e, f_a, tol.atol))
    figures.update(frac_mismatch=n_bad / n, **counts)
    if any_finite:
        figures.update(max_abs=max_abs, max_rel=max_rel, cosine=cosine.value())
        figures["min_atol"] = _smallest_passing(
            max(0.0, *bounds.atol_slack),
            lambda t: _all_within(e, a, common, tol.rtol, t,
                                  only=lambda i: bounds.may_fail_atol(i, t)))
        figures["min_rtol"] = (0.0 if not over_atol else math.inf if zero_over else
                               _smallest_passing(
                                   max(bounds.rtol_slack),
                                   lambda t: _all_within(
                                       e, a, common, t, tol.atol,
                                       only=lambda i: bounds.may_fail_rtol(i, t, tol.atol))))
        if e.is_complex():
            figures.update(max_mag_err=mag_err, max_phase_err=phase_err)

    problems = []
    if n_placement:
        problems.append(f"NaN/Inf placement differs at {n_placement} of {n} positions")
    if n_bad > n_placement:
        problems.append(
            f"{n_bad - n_placement} of {n} values outside rtol={tol.rtol:g}, atol={tol.atol:g} "
            f"(max abs err {_fmt(figures.get('max_abs'))}, "
            f"max rel err {_fmt(figures.get('max_rel'))}, "
            f"needs atol>={_fmt(figures.get('min_atol'))} "
            f"or rtol>={_fmt(figures.get('min_rtol'))})"
        )
    return problems


def _all_within(e: torch.Tensor, a: torch.Tensor, common: torch.dtype, rtol: float,
                atol: float, only: Callable[[int], bool]) -> bool:
    """Whether every element finite in both outputs is close at these tolerances (checking
    the chunks ``only`` accepts: the others pass by their bounds)."""
    for ce, ca in _chunks(e, a, common, only):
        err, mag = (ca - ce).abs(), ce.abs()
        finite = ce.isfinite() & ca.isfinite()
        if not bool(finite.all()):
            err, mag = err[finite], mag[finite]
        if not _within(err, mag, rtol, atol).all():
            return False
    return True


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _max_phase_err(e: torch.Tensor, a: torch.Tensor, atol: float) -> float | None:
    significant = e.abs() > atol  # the phase of a value within atol of zero is noise
    if not significant.any():
        return None
    delta = a[significant].angle() - e[significant].angle()
    wrapped = torch.remainder(delta + math.pi, 2 * math.pi) - math.pi
    return float(wrapped.abs().max())


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", b))[0]


def _smallest_passing(estimate: float, passes: Callable[[float], bool]) -> float:
    """The smallest non-negative float64 ``t`` with ``passes(t)``, for a monotone ``passes``.

    The closed-form estimate can be off by a few ulps through rounding, so search around it
    (non-negative float64 values are ordered like their bit patterns).
    """
    top = _bits(math.inf)
    hi, step = _bits(estimate), 1
    while hi < top and not passes(_from_bits(hi)):
        hi, step = min(hi + step, top), step * 2
    if hi == top:  # no finite tolerance passes
        return math.inf
    if passes(0.0):
        return 0.0
    lo, step = hi - 1, 2
    while passes(_from_bits(lo)):
        lo, step = max(lo - step, 0), step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if passes(_from_bits(mid)) else (mid, hi)
    return _from_bits(hi)
