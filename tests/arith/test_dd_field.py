"""DDArrayField (arith/dd_field.py): a field of double-double disk arrays, operated on entry
by entry (proofs/dd_exp.md §5, proofs/double_double_filter.md Lemmas 4-6).

Every result is checked entry by entry against FLINT at 300 bits: the operation on exact
points of the operand disks (midpoints and points on their circles) must lie in the result
disk, decided by the certain comparison ``upper(|value - mid|) <= rad``."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq

from s4cert.arith.dd_field import DDArrayField
from s4cert.arith.double_double import DD
from s4cert.arith.midrad import RangeError
from s4cert.arith.truth import Truth

PREC = 300
F = DDArrayField()


def mid_ball(x: DD, i) -> acb:
    return acb(arb(float(x.rh[i])) + arb(float(x.rl[i])), arb(float(x.ih[i])) + arb(float(x.il[i])))


def holds(x: DD, i, value: acb) -> bool:
    with ctx.workprec(PREC):
        return bool(abs(value - mid_ball(x, i)).upper() <= arb(float(x.rad[i])))


def points(x: DD, i, direction: complex) -> list[acb]:
    """The midpoint and the point of the circle in ``direction`` (|direction| <= 1, exact)."""
    with ctx.workprec(PREC):
        m = mid_ball(x, i)
        return [m, m + acb(direction) * arb(float(x.rad[i]))]


HI_A = np.array([1 + 2j, -3e-150 + 1e-150j, 4e70 - 1j, 0.1, -7j, 1e-300 + 1e-300j])
HI_B = np.array([0.5 - 0.25j, 2e-140j, -1e-60 + 3e-61j, 3.0, 1 + 1j, 1e140 - 1e139j])


def operands() -> tuple[DD, DD]:
    a = DD.from_parts(HI_A, HI_A * 2.0 ** -58, np.abs(HI_A) * 1e-20)
    b = DD.from_parts(HI_B, -HI_B * 2.0 ** -57, np.abs(HI_B) * 1e-25)
    return a, b


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_operations_contain_the_exact_results(op):
    a, b = operands()
    r = getattr(F, op)(a, b)
    for i in range(len(HI_A)):
        for pa in points(a, i, 0.6 - 0.8j):
            for pb in points(b, i, -1j):
                with ctx.workprec(PREC):
                    v = {"add": pa + pb, "sub": pa - pb, "mul": pa * pb, "div": pa / pb}[op]
                assert holds(r, i, v), (op, i)


def test_unary_operations_contain_the_exact_results():
    a, _ = operands()
    neg, conj = F.neg(a), F.conj(a)
    for i in range(len(HI_A)):
        for p in points(a, i, 0.999j):                     # exact operations: no slack on the circle
            with ctx.workprec(PREC):
                assert holds(neg, i, -p) and holds(conj, i, p.conjugate())
    x = DD.from_parts(np.array([1 + 1j, -700 + 2j, 1e-300j, 30 - 1e3j]), np.zeros(4, complex), np.array([1e-20, 0, 0, 1e-12]))
    e = F.exp(x)
    for i in range(4):
        for p in points(x, i, -0.6 + 0.8j):
            with ctx.workprec(PREC):
                assert holds(e, i, p.exp())
    one_third = F.exp(Fraction(1, 3))       # a number, enclosed first
    with ctx.workprec(PREC):
        assert holds(one_third.reshape(1), 0, acb(fmpq(1, 3)).exp())


def test_division_by_a_disk_around_zero_is_refused():
    a, b = operands()
    z = DD.from_parts(np.array([1.0, 1e-20]), np.zeros(2, complex), np.array([0.0, 1e-19]))
    with pytest.raises(RangeError):
        F.div(a[:2], z)


def test_zero_tests_are_three_valued_over_the_whole_array():
    pts = lambda v: F.from_array(np.array(v, dtype=complex))
    assert F.is_zero(pts([1, 1e-300j, -2])) is Truth.FALSE
    assert F.is_zero(pts([0, 0, 0])) is Truth.TRUE
    assert F.is_zero(pts([0, 1, 0])) is Truth.UNKNOWN                   # mixed: no branch is right for all
    assert F.is_zero(DD.from_parts(np.array([1.0, 0.0]), np.zeros(2, complex), np.array([0.0, 1e-30]))) is Truth.UNKNOWN
    assert F.is_zero(DD.from_parts(np.array([1.0, 1.0]), np.zeros(2, complex), np.array([0.0, 1.0]))) is Truth.UNKNOWN
    assert F.is_zero(DD.from_parts(np.array([0.0, 0.0]), np.zeros(2, complex), np.array([0.0, 1e-300]))) is Truth.UNKNOWN
    assert F.is_zero(DD.from_parts(np.array([1.0, -1j]), np.zeros(2, complex), np.array([0.5, 0.999]))) is Truth.FALSE
    assert F.is_zero(F.zero()) is Truth.TRUE and F.is_zero(F.one()) is Truth.FALSE


def test_numbers_are_read_exactly_or_enclosed():
    x = F.from_number(0.1)
    assert float(x.rh) == 0.1 and float(x.rl) == 0 and float(x.rad) == 0
    for q in [Fraction(1, 3), (Fraction(-2, 7), Fraction(1, 10)), Fraction(10 ** 400 + 1, 3 * 10 ** 400), 2 ** 60 + 1]:
        x = F.from_number(q)
        re, im = (q if isinstance(q, tuple) else (q, 0))
        re, im = Fraction(re), Fraction(im)
        with ctx.workprec(PREC):
            v = acb(arb(fmpq(re.numerator, re.denominator)), arb(fmpq(im.numerator, im.denominator)))
        assert holds(x.reshape(1), 0, v), q
        assert float(x.rad) <= 2.0 ** -100 * max(1.0, abs(complex(x.rh, x.ih)))
    c = F.const(-5)
    assert float(c.rh) == -5 and float(c.rad) == 0


def test_bounds_and_representative():
    x = DD.from_parts(np.array([3 + 4j, -1e-3, 20j]), np.zeros(3, complex), np.array([0.5, 0.0, 1.0]))
    assert F.abs_upper(x) >= 21 and F.abs_lower(x) <= 1e-3
    assert F.to_complex(x) == 20j
    assert F.to_complex(F.from_array(np.zeros(0))) == 0j
    y = F.mul(F.from_number(2), x)                          # a 0-d disk broadcasts over the array
    assert y.rh.shape == (3,) and holds(y, 0, acb(6, 8))


def test_the_field_is_the_generic_disk_array_field_over_dd():
    """``DDArrayField`` is ``arith.array_field``'s field over DD (kept importable here), with
    the entrywise zero test and the exponential of ``dd_exp``."""
    from s4cert.arith.array_field import DDArrayField as Generic, DiskArrayField

    assert DDArrayField is Generic and isinstance(F, DiskArrayField) and F.disk is DD
    x = DD.from_parts(np.array([0.0, 1.0, 0.0]), np.zeros(3, complex), np.array([0.0, 0.0, 1e-30]))
    zero, nonzero = F.zero_mask(x)
    assert zero.tolist() == [True, False, False] and nonzero.tolist() == [False, True, False]
    e = F.exp(F.from_array([0.0, 1j * np.pi]))
    with ctx.workprec(PREC):
        assert holds(e, 0, acb(1)) and holds(e, 1, acb.exp_pi_i(acb(arb(np.pi) / arb.pi())))
