"""A certified interval for ``max_j |other_j - K_j|`` from disks ``|K_j - mid_j| <= rad_j``,
one for ``max_j |K_j|`` (the same with other = 0) and one for their ratio.

For each j, ``t_j = other_j - mid_j`` is a difference of two floats and
``|t_j| - rad_j <= |other_j - K_j| <= |t_j| + rad_j``.  The lower end is the largest
``|t_j| - rad_j`` over a few candidates, evaluated exactly (any j's lower bound bounds
the maximum from below).  The upper end bounds every j at once from float sums: with
``d_j = fl(|t_j|)`` and ``s_j = fl(d_j + rad_j)`` in round-to-nearest (unit roundoff
``u = 2^-53``), ``|t_j| <= d_j (1 + 2u) + 2^-1074`` and ``d_j + rad_j <= s_j / (1 - u)``,
so ``|t_j| + rad_j <= s_j (1 + 2^-50) + 2^-1070``; that bound is taken exactly and
rounded up.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

CANDIDATES = 16


def float_down(q: Fraction) -> float:
    """The largest float <= q."""
    f = float(q)
    return f if Fraction(f) <= q else math.nextafter(f, -math.inf)


def float_up(q: Fraction) -> float:
    """The least float >= q."""
    f = float(q)
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def max_error_interval(other: np.ndarray, mid: np.ndarray, rad: np.ndarray) -> tuple[float, float]:
    """``[lo, hi]`` (floats) with ``lo <= max_j |other_j - K_j| <= hi``.

    >>> max_error_interval(np.array([1.0, 2.0]), np.array([1.0, 2.5]), np.array([0.0, 0.125]))
    (0.375, 0.6250000000000007)
    """
    other = np.asarray(other, dtype=np.float64).reshape(-1)
    mid = np.asarray(mid, dtype=np.float64).reshape(-1)
    rad = np.asarray(rad, dtype=np.float64).reshape(-1)
    if not (other.shape == mid.shape == rad.shape):
        raise ValueError(f"compare: {other.size} values against {mid.size} certified entries")
    if other.size == 0:
        return 0.0, 0.0
    if not (np.all(np.isfinite(other)) and np.all(np.isfinite(mid)) and np.all(np.isfinite(rad))):
        return 0.0, math.inf
    with np.errstate(over="ignore"):
        d = np.abs(other - mid)
        s = d + rad
    hi_float = float(np.max(s))
    if not math.isfinite(hi_float):
        hi = math.inf
    else:
        hi = float_up(Fraction(hi_float) * (1 + Fraction(1, 2 ** 50)) + Fraction(1, 2 ** 1070))
    order = np.argsort(d - rad)[-CANDIDATES:]
    lo = max(max(Fraction(0), abs(Fraction(float(other[j])) - Fraction(float(mid[j]))) - Fraction(float(rad[j])))
             for j in order)
    return float_down(lo), hi


def kernel_max_interval(mid: np.ndarray, rad: np.ndarray) -> tuple[float, float]:
    """``[lo, hi]`` (floats) with ``lo <= max_j |K_j| <= hi``: the error interval of the
    zero kernel, since ``|0 - K_j| = |K_j|``.

    >>> kernel_max_interval(np.array([1.0, -2.0]), np.array([0.0, 0.5]))
    (1.5, 2.5000000000000027)
    """
    mid = np.asarray(mid, dtype=np.float64)
    return max_error_interval(np.zeros_like(mid), mid, rad)


def relative_interval(error: tuple[float, float], kmax: tuple[float, float]) -> tuple[float, float]:
    """``[lo, hi]`` (floats) holding ``E / M`` for every ``E`` in ``error`` and ``M`` in
    ``kmax`` (``M > 0``): ``error[0] / kmax[1]`` rounded down and ``error[1] / kmax[0]``
    rounded up, exactly; ``hi = inf`` when ``kmax[0]`` is 0 (no positive lower bound).

    >>> relative_interval((1.0, 3.0), (2.0, 4.0))
    (0.25, 1.5)
    """
    (e_lo, e_hi), (k_lo, k_hi) = error, kmax
    finite = all(math.isfinite(x) for x in (e_lo, k_hi))
    lo = float_down(Fraction(e_lo) / Fraction(k_hi)) if finite and k_hi > 0 else 0.0
    hi = float_up(Fraction(e_hi) / Fraction(k_lo)) if math.isfinite(e_hi) and k_lo > 0 else math.inf
    return lo, hi
