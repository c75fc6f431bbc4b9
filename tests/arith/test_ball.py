from fractions import Fraction

import pytest
from flint import acb, ctx

from s4cert.arith import BallField, ExactField, Truth
from tests.helpers import encloses


def test_precision_does_not_leak():
    before = ctx.prec
    F = BallField(333)
    x = F.div(F.one(), F.from_number(3))
    F.mul(x, x), F.neg(x), F.conj(x), F.root_of_unity(64, 5)
    F.primitive("dft")([x, x]), F.primitive("polymul")([x], [x])
    assert ctx.prec == before


def test_precision_restored_after_error():
    before = ctx.prec
    F = BallField(200)
    with pytest.raises(ZeroDivisionError):
        F._at(lambda: 1 // 0)
    assert ctx.prec == before


def test_zero_tests_are_three_valued():
    F = BallField(64)
    third = F.div(F.one(), F.from_number(3))
    assert F.is_zero(F.zero()) is Truth.TRUE
    assert F.is_zero(third) is Truth.FALSE
    assert F.is_zero(F.sub(F.mul(third, F.from_number(3)), F.one())) is Truth.UNKNOWN
    assert F.is_zero(F.div(F.one(), F.zero())) is Truth.UNKNOWN  # not finite


def test_roots_are_direct_not_powers():
    """w^k from the field is as tight as one evaluation, far tighter than k products."""
    F = BallField(80)
    w = F.root_of_unity(1024, 1)
    p = F.one()
    for _ in range(1000):
        p = F.mul(p, w)
    direct = F.root_of_unity(1024, 1000)
    assert F.radius(direct) * 100 < F.radius(p)
    assert encloses(direct, ExactField(1024), ExactField(1024).root_of_unity(1024, 1000))


def test_radius_is_an_upper_bound():
    F = BallField(60)
    x = F.div(F.from_number(Fraction(1, 7)), F.from_number((3, 1)))
    r = F.radius(x)
    with ctx.workprec(60):
        assert acb(x.real.rad(), x.imag.rad()).real <= r


def test_bad_precision():
    for p in (0, 1, -5, 2.5, "64"):
        with pytest.raises(ValueError):
            BallField(p)


def test_float_bounds_of_nan_balls():
    import math
    from flint import arb
    from s4cert.arith.ball import float_lower, float_upper
    assert float_upper(arb("nan")) == math.inf and float_lower(arb("nan")) == -math.inf
    assert float_upper(arb(1, 0.5)) >= 1.5 and float_lower(arb(1, 0.5)) <= 0.5


def test_numpy_binary64_scalars_are_read_exactly():
    """BallField reads numpy float64/complex128 as the exact binary numbers they are
    (radius 0, the same point as through Fractions)."""
    import numpy as np
    from fractions import Fraction
    F = BallField(64)
    for x in (np.float64(0.1), np.complex128(1e-300 + 0.3j), np.float64(-2.0 ** 1000)):
        b = F.from_number(x)
        assert b.is_exact()
        z = complex(x)
        assert b == F.from_number((Fraction(z.real), Fraction(z.imag)))
