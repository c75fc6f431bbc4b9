"""RoundedField: every operation and supplied constant within u = 2^-k, at any size."""
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from arith import ExactField, RoundedField
from tests.helpers import Q2, fractions

big = st.builds(Fraction, st.integers(-10**30, 10**30), st.integers(1, 10**30))


@given(k=st.integers(1, 400), a=st.tuples(big, big), b=st.tuples(big, big))
def test_error_at_most_u_per_operation(k, a, b):
    F = RoundedField(k)
    x, y = F.from_number(a), F.from_number(b)
    qa, qb = Q2(*a), Q2(*b)
    hx, hy = Q2(*F.to_fractions(x)), Q2(*F.to_fractions(y))
    assert (hx - qa).abs2() <= F.u ** 2 and (hy - qb).abs2() <= F.u ** 2
    cases = [(F.add(x, y), hx + hy), (F.sub(x, y), hx - hy), (F.mul(x, y), hx * hy),
             (F.neg(x), -hx), (F.conj(x), hx.conj())]
    if hy.abs2() != 0:
        cases.append((F.div(x, y), hx / hy))
    for got, exact in cases:
        assert (Q2(*F.to_fractions(got)) - exact).abs2() <= F.u ** 2


def test_large_k_root_and_product():
    """u = 2^-200000: a root of unity and a product stay within u (checked exactly
    against Q(zeta_16) through a ball enclosure at higher precision)."""
    from flint import acb, arb, ctx, fmpq
    k = 200_000
    F = RoundedField(k)
    E = ExactField(16)
    w = F.root_of_unity(16, 3)
    x = F.mul(w, w)
    exact_w = E.root_of_unity(16, 3)
    exact_x = E.mul(Q2_to_exact(E, F, w), Q2_to_exact(E, F, w))
    with ctx.workprec(k + 64):
        got_w = acb(arb(fmpq(int(w.x), 2**k)), arb(fmpq(int(w.y), 2**k)))
        assert abs(got_w - E.to_acb(exact_w, k + 64)) < arb(2) ** (-k)
        got_x = acb(arb(fmpq(int(x.x), 2**k)), arb(fmpq(int(x.y), 2**k)))
        assert abs(got_x - E.to_acb(exact_x, k + 64)) < arb(2) ** (-k)


def Q2_to_exact(E, F, x):
    return E.from_number(F.to_fractions(x))


def test_roots_cached_and_quarters_exact():
    F = RoundedField(50)
    assert F.root_of_unity(8, 3) is F.root_of_unity(16, 6)
    assert F.to_fractions(F.root_of_unity(4, 1)) == (0, -1)
    assert F.to_fractions(F.root_of_unity(8, 4)) == (-1, 0)


def test_division_by_zero_and_bad_k():
    F = RoundedField(10)
    with pytest.raises(ZeroDivisionError):
        F.div(F.one(), F.zero())
    for k in (0, -1, 1.5):
        with pytest.raises(ValueError):
            RoundedField(k)
