"""RoundedField: every operation and supplied constant within u = 2^-k, at any size."""
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from s4cert.arith import ExactField, RoundedField
from tests.helpers import Q2

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


@given(k=st.integers(1, 400), a=st.tuples(big, big), b=st.tuples(big, big))
def test_additions_are_exact(k, a, b):
    """add, sub, neg, conj are exact on the held values (statement 1)."""
    F = RoundedField(k)
    x, y = F.from_number(a), F.from_number(b)
    hx, hy = Q2(*F.to_fractions(x)), Q2(*F.to_fractions(y))
    for got, exact in [(F.add(x, y), hx + hy), (F.sub(x, y), hx - hy), (F.neg(x), -hx), (F.conj(x), hx.conj())]:
        assert F.to_fractions(got) == (exact.re, exact.im)


@given(k=st.integers(1, 400), a=st.tuples(big, big), b=st.tuples(big, big), q=big)
def test_rounding_within_half_u_per_part(k, a, b, q):
    """Inputs, rational constants, products and quotients: each part within u/2, so
    the modulus error is at most (sqrt 2 / 2) u (statements 2 and 3)."""
    F = RoundedField(k)
    half = F.u / 2
    x, y = F.from_number(a), F.from_number(b)
    hx, hy = Q2(*F.to_fractions(x)), Q2(*F.to_fractions(y))
    cases = [(x, Q2(*a)), (y, Q2(*b)), (F.const(q), Q2(q)), (F.mul(x, y), hx * hy)]
    if hy.abs2() != 0:
        cases.append((F.div(x, y), hx / hy))
    for got, exact in cases:
        err = Q2(*F.to_fractions(got)) - exact
        assert abs(err.re) <= half and abs(err.im) <= half
        assert 2 * err.abs2() <= F.u ** 2
    assert F.to_fractions(F.zero()) == (0, 0) and F.to_fractions(F.one()) == (1, 0)


@given(k=st.integers(1, 300), M=st.sampled_from([8, 16, 32, 64]), j=st.integers(0, 63))
def test_roots_within_the_sharper_bound(k, M, j):
    """Statement 4: each part of a supplied root within 2^-(k+1) + 2^-(k+16) of the exact
    root of Q(zeta_64) (compared through a much tighter ball), so the modulus error is
    at most sqrt 2 (2^-(k+1) + 2^-(k+16))."""
    from flint import arb, ctx, fmpq
    F = RoundedField(k)
    held = F.to_fractions(F.root_of_unity(M, j))
    exact = ExactField(64).to_acb(ExactField(64).root_of_unity(M, j), k + 64)
    with ctx.workprec(k + 64):
        bound = arb(2) ** (-(k + 1)) + arb(2) ** (-(k + 16))
        for h, e in zip(held, (exact.real, exact.imag)):
            assert abs(arb(fmpq(h.numerator, h.denominator)) - e) < bound


@pytest.mark.parametrize("first", [1024, 16])
def test_roots_from_the_octant_table(first):
    """Statement 4 for every root of a 1024-point grid and of its divisors, whichever grid's
    table is built first (a larger grid's table then serves the smaller ones): each part
    within 2^-(k+1) + 2^-(k+16) of the exact root, through a 200-bit enclosure."""
    from flint import acb, arb, ctx, fmpq
    k = 120
    F = RoundedField(k)
    F.root_of_unity(first, 1)
    with ctx.workprec(k + 80):
        bound = arb(2) ** (-(k + 1)) + arb(2) ** (-(k + 16))
        for M in (16, 1024, 64):
            for j in range(M):
                held = F.to_fractions(F.root_of_unity(M, j))
                exact = acb.exp_pi_i(acb(fmpq(-2 * j, M)))
                for h, e in zip(held, (exact.real, exact.imag)):
                    assert abs(arb(fmpq(h.numerator, h.denominator)) - e) < bound


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
