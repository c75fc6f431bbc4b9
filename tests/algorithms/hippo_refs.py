"""Independent references shared by the HiPPO tests: tight enclosures of rationals and
square roots, and the HiPPO kinds the split and the DPLR model are checked on."""
from __future__ import annotations

from fractions import Fraction

from flint import acb, arb, ctx, fmpq

from s4cert.arith import ExactField

E4 = ExactField(4)
TIGHT = 400  # bits of the independent reference enclosures


def rational(F, x) -> Fraction:
    re, im = F.to_fractions(x)
    assert im == 0
    return re


def tight(x) -> arb:
    """A 400-bit enclosure of an exact rational or of sqrt(q) given as ("sqrt", q)."""
    with ctx.workprec(TIGHT):
        if isinstance(x, tuple):
            q = Fraction(x[1])
            return arb(fmpq(q.numerator, q.denominator)).sqrt()
        q = Fraction(x)
        return arb(fmpq(q.numerator, q.denominator))


def encl(ball, ref) -> bool:
    """The module's ball holds the value that the much tighter ``ref`` encloses (an exact
    ball must then lie in ``ref``)."""
    ref = acb(ref)
    return bool(ref.contains(ball)) if ball.is_exact() else bool(ball.contains(ref))


CASES = [("legs", None), ("legt", Fraction(5, 2)), ("legt", 0.75), ("lagt", None)]
