from fractions import Fraction

import pytest
from flint import acb, arb
from hypothesis import given, strategies as st

from algorithms.dft import next_power_of_two
from algorithms.dplr import DPLR, c_tilde, kernel_by_powers, recurrent
from algorithms.s4 import convolve, filter_kernel
from arith import BallField, ExactField
from tests.helpers import all_enclose, all_exact_equal, gaussian, random_dplr


@st.composite
def problems(draw):
    N = draw(st.integers(1, 6))
    r = draw(st.integers(1, 2))
    step = draw(st.builds(Fraction, st.integers(1, 8), st.integers(1, 4)))
    L = draw(st.integers(1, 20))
    m = random_dplr(draw, N, r, step, exceptional=draw(st.booleans()))
    return m, step, L


def field_for(L: int) -> ExactField:
    """Holds the roots of the filter's grid and of the product tree's transforms (N <= 6)."""
    return ExactField.for_length(2 * max(next_power_of_two(L), 8))


@given(p=problems())
def test_filter_equals_powers_exactly(p):
    m, step, L = p
    E = field_for(L)
    K = kernel_by_powers(E, m, step, L)
    f = filter_kernel(E, m, step, L)
    if f.status in ("resonant-diagonal", "resonant-correction"):
        return  # the filter cannot evaluate there (rare for random rationals; tested below)
    assert f.status == K.status
    if K.ok:
        assert all_exact_equal(E, f.value, K.value)
        assert all_exact_equal(E, filter_kernel(E, m, step, L, cauchy="direct").value, K.value)


@given(p=problems(), data=st.data())
def test_kernel_convolution_equals_recurrent(p, data):
    m, step, L = p
    E = field_for(L)
    f = filter_kernel(E, m, step, L)
    if not f.ok:
        return
    u = [E.from_number(v) for v in data.draw(st.lists(gaussian(), min_size=L, max_size=L))]
    y = recurrent(E, m, step, u)
    assert all_exact_equal(E, convolve(E, f.value, u), y.value)


@given(p=problems())
def test_supplied_c_tilde(p):
    m, step, L = p
    E = field_for(L)
    ct = c_tilde(E, m, step, next_power_of_two(L))
    if not ct.ok:
        return
    a = filter_kernel(E, m, step, L, c_tilde=ct.value)
    b = filter_kernel(E, m, step, L)
    assert a.status == b.status
    if a.ok:
        assert all_exact_equal(E, a.value, b.value)


@given(prec=st.integers(30, 300), p=problems())
def test_ball_filter_contains_exact(prec, p):
    m, step, L = p
    E = field_for(L)
    ref = filter_kernel(E, m, step, L)
    got = filter_kernel(BallField(prec), m, step, L)
    if ref.ok:
        assert got.status in ("ok", "undecided")
        if got.ok:
            assert all_enclose(got.value, E, ref.value)
    else:
        assert got.status in (ref.status, "undecided")


def test_spec_example_is_resonant_diagonal():
    """A = 0, step 1: the pole mu = (2 - 0)/(2 + 0) = 1 is the root z_0."""
    m = DPLR([0], [0], [1], [1])
    E = ExactField(16)
    for L in (1, 3, 8):
        assert filter_kernel(E, m, 1, L).status == "resonant-diagonal"


def test_resonant_correction():
    """lambda = 1, P = 1, Q = 1 + i, step 2: A = 1 - (1 - i) = i = s(z) at z = -i (k = 1, M = 4),
    while s(z) - lambda != 0 at every root."""
    m = DPLR([1], [1], [1], [1], Q=[(1, 1)])
    E = ExactField(8)
    res = filter_kernel(E, m, 2, 4)
    assert res.status == "resonant-correction" and res.info["root"] == 1
    assert kernel_by_powers(E, m, 2, 4).ok  # the kernel exists; only the filter route is blocked


def test_exceptional_partition_and_minus_one_root():
    """lambda = -2/step exactly is handled by its constant term; z = -1 by its finite value."""
    step = Fraction(1, 2)
    m = DPLR([-4, Fraction(-1, 3), (-1, 2)], [[1], [Fraction(1, 2)], [(0, 1)]], [1, 2, 3], [1, (1, -1), 2])
    E = ExactField(16)
    res = filter_kernel(E, m, step, 7)
    assert res.ok and res.info["exceptional"] == [0]
    assert all_exact_equal(E, res.value, kernel_by_powers(E, m, step, 7).value)


def test_collision_off_the_exceptional_set():
    # mu = (a - lambda)/(a + lambda) = -i = z_1 for M = 4 with a = 2 (step 1): lambda = 2i
    m = DPLR([(0, 2)], [0], [1], [1])
    assert filter_kernel(ExactField(8), m, 1, 4).status == "resonant-diagonal"


def test_undecided_partition_with_balls():
    lam = acb(arb(-2, 1e-40))  # contains -2/step but is not exactly it
    m = DPLR([lam], [0], [1], [1])
    assert filter_kernel(BallField(128), m, 1, 4, c_tilde=[1]).status == "undecided"


def test_bad_input():
    E = ExactField(8)
    m = DPLR([-1], [1], [1], [1])
    with pytest.raises(ValueError, match="L"):
        filter_kernel(E, m, 1, 0)
    with pytest.raises(ValueError, match="step"):
        filter_kernel(E, m, -1, 4)
    with pytest.raises(ValueError, match="cauchy"):
        filter_kernel(E, m, 1, 4, cauchy="magic")
    with pytest.raises(ValueError, match="c_tilde"):
        filter_kernel(E, m, 1, 4, c_tilde=[1, 2])
