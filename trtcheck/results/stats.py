"""The statistics ``trtcheck ab``'s rule tests with, in the standard library alone (no scipy):
trimmed means and their squared standard errors (Yuen's), and Student's t distribution for any
real degrees of freedom."""

from __future__ import annotations

import math
from collections.abc import Sequence


def _kept(xs: Sequence[float], trim: float) -> tuple[list[float], int]:
    """A side's values, sorted, with ``trim`` of them cut off each end (a quarter cuts nothing
    below 4 values), and how many were cut off each end."""
    ordered = sorted(xs)
    g = int(trim * len(ordered))
    return ordered[g:len(ordered) - g], g


def trimmed_mean(xs: Sequence[float], trim: float) -> float:
    """The mean of ``xs`` with ``trim`` of its values cut off each end."""
    return mean(_kept(xs, trim)[0])


def trimmed(xs: Sequence[float], trim: float) -> tuple[float, float, int]:
    """Yuen's figures of one side: the mean of what is left after cutting ``trim`` of the
    values off each end, the squared standard error of that mean (from the winsorized
    variance), and how many values were left. Where nothing is cut, it is Welch's mean and
    squared standard error."""
    kept, g = _kept(xs, trim)
    winsorized = [kept[0]] * g + kept + [kept[-1]] * g
    k = len(kept)
    return mean(kept), (len(xs) - 1) * _var(winsorized) / (k * (k - 1)), k


def mean(xs: Sequence[float]) -> float:
    """The arithmetic mean, summed exactly (``math.fsum``)."""
    return math.fsum(xs) / len(xs)


def _var(xs: Sequence[float]) -> float:
    m = mean(xs)
    return math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (any real df > 0)."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))
    return tail if t > 0 else 1 - tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (``p`` above 0.5): Newton's method on :func:`t_sf`,
    kept inside a bracket that bisection narrows whenever a step would leave it."""
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > 1 - p:
        lo, hi = hi, hi * 2
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    t = (lo + hi) / 2
    for _ in range(100):
        excess = t_sf(t, df) - (1 - p)  # positive: t is below the quantile
        if excess > 0:
            lo = t
        else:
            hi = t
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))
        step = t + excess / density
        t = step if lo < step < hi else (lo + hi) / 2
        if abs(excess) < 1e-12 or hi - lo < 1e-9 * hi:
            break
    return t


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return front * f / a
