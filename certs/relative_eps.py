"""A relative eps made absolute: E times a certified lower bound of max|K| (or max|y|),
so every radius certified at that absolute eps is below E times the true maximum; and
eps kept valid when stored as a float64.
"""
from __future__ import annotations

import math
from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np

from .errors import CertificationError
from .io.numbers import short_text


def float_below(q: Fraction, option: str = "--eps", where: str = "the report") -> float:
    """The largest float64 <= q > 0 (a bound kept valid when stored as a float), refused
    in one line when q lies outside the float64 range."""
    q = Fraction(q)
    f = float(q) if abs(q) < 2 ** 1024 else math.inf
    if 0 < f < math.inf and Fraction(f) > q:
        f = math.nextafter(f, 0.0)
    if not 0 < f < math.inf:
        raise ValueError(f"{option} {short_text(q)}: outside the float64 range {where} stores eps in "
                         "(about 5e-324 to 1.8e308)")
    return f


def max_abs_lower(mid: Any, rad: Any) -> Fraction:
    """A certified lower bound of max_j |K_j| given |K_j - mid_j| <= rad_j (float64
    arrays, real or complex): max_j (|mid_j| - rad_j), rounded down, and 0 when no entry
    is certainly nonzero.

    >>> float(max_abs_lower(np.array([3 + 4j, 1.0]), np.array([0.5, 0.0])))
    4.5
    """
    mid = np.asarray(mid).reshape(-1)
    rad = np.asarray(rad, dtype=np.float64).reshape(-1)
    if mid.size == 0:
        return Fraction(0)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.where(np.isfinite(mid) & np.isfinite(rad), np.abs(mid) - rad, -np.inf)
    j = int(np.argmax(gap))
    if not gap[j] > 0:
        return Fraction(0)
    z = complex(mid[j])
    square = Fraction(z.real) ** 2 + Fraction(z.imag) ** 2
    shift = 64 + max(0, square.denominator.bit_length() - square.numerator.bit_length())
    modulus = Fraction(isqrt(square.numerator * 4 ** shift // square.denominator), 2 ** shift)
    return max(Fraction(0), modulus - Fraction(float(rad[j])))


def relative_to(rel: Fraction, lower: Fraction, what: str) -> Fraction:
    """The absolute eps ``rel * lower``; CertificationError when the scale is not certified
    above 0."""
    if lower <= 0:
        raise CertificationError(f"--relative: {what} is not certified above 0 (the kernel or output may be zero); "
                         "give an absolute --eps")
    return rel * lower
