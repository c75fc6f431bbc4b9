"""The complex exponential on double-double disks, vectorized (proofs/dd_exp.md).

``exp(x)`` encloses ``e^w`` for every point w of every disk of x: with one scale
``2^-s`` chosen so that every ``|w 2^-s| <= 2^-8``, the Taylor polynomial of degree
``TERMS`` of ``v = w 2^-s`` by Horner's rule in disk arithmetic (its coefficients
1/k! enclosed once), plus the truncation bound ``2 (2^-8)^(TERMS+1)/(TERMS+1)!``, then
s squarings: ``e^w = (e^v)^(2^s)``.  Each step is an operation of ``arith.double_double``,
so every rounding is bounded there.  Arguments with ``|w| > 2^40`` are refused
(``RangeError``), as are results beyond ``double_double.BIG``.

>>> from s4cert.arith.double_double import DD
>>> z = exp(DD.exact([1j * 3.141592653589793]))
>>> bool(abs(z.mid_complex()[0] + 1) < 1e-15 and z.rad[0] < 1e-27)
True
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .disk_convert import dd_of_balls
from .double_double import DD
from .midrad import RangeError, up

#: the Taylor degree; with |v| <= 2^-8 the truncation is below 2^-110
TERMS = 10
#: the scaled argument's bound |v| <= 2^-SCALE_BITS
SCALE_BITS = 8
#: arguments beyond this modulus are refused
MAX_ARGUMENT = 2.0 ** 40


@lru_cache(maxsize=1)
def _coefficients() -> tuple[DD, ...]:
    """1/k! for k = 0..TERMS as double-double disks (0-d), enclosed by FLINT."""
    from flint import acb, ctx, fmpq

    with ctx.workprec(256):
        balls = [acb(fmpq(1, math.factorial(k))) for k in range(TERMS + 1)]
    return tuple(dd_of_balls([b]).reshape(()) for b in balls)


def truncation_bound() -> float:
    """An upper bound of sum_{k > TERMS} r^k/k! for r <= 2^-SCALE_BITS (the tail is at most
    twice its first term there), as a float rounded up."""
    t = Fraction(2, math.factorial(TERMS + 1)) * Fraction(1, 2 ** (SCALE_BITS * (TERMS + 1)))
    f = float(t)
    return f if Fraction(f) >= t else math.nextafter(f, math.inf)


def scale_exponent(bound: float) -> int:
    """The least s >= 0 with bound 2^-s < 2^-SCALE_BITS (strictly: one more than needed when
    bound is a power of two), so that every scaled argument is at most 2^-SCALE_BITS."""
    if not bound <= MAX_ARGUMENT:  # NaN fails too
        raise RangeError("exp: an argument of modulus above 2^40 (or not finite)")
    if bound == 0:
        return 0
    m, e = math.frexp(bound)  # bound = m 2^e, 1/2 <= m < 1, so bound <= 2^e
    return max(0, e + SCALE_BITS)


def exp(x: DD) -> DD:
    """Disks containing ``e^w`` for every w in each disk of x (see the module)."""
    bound = float(np.max(x.abs_upper(), initial=0.0))
    s = scale_exponent(bound)
    v = x.scale(2.0 ** -s) if s else x
    c = _coefficients()
    p = c[TERMS]
    for k in range(TERMS - 1, -1, -1):
        p = p.mul(v).add(c[k])
    p = DD(p.rh, p.rl, p.ih, p.il, up(p.rad + truncation_bound()))
    for _ in range(s):
        p = p.square()
    return p
