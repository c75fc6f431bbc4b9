from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from algorithms.cauchy import cauchy_direct, cauchy_on_roots
from arith import BallField, ExactField
from tests.helpers import all_enclose, all_exact_equal, gaussian

E = ExactField(32)


def problem(data, M):
    n = data.draw(st.integers(0, 8))
    poles = [E.from_number(v) for v in data.draw(st.lists(gaussian(), min_size=n, max_size=n))]
    if n and M >= 2 and data.draw(st.booleans()):
        # a pole on the grid now and then
        poles[0] = E.root_of_unity(M, data.draw(st.integers(0, M - 1)))
    weights = [E.from_number(v) for v in data.draw(st.lists(gaussian(), min_size=n, max_size=n))]
    return poles, weights


@given(M=st.sampled_from([1, 2, 4, 8, 16]), data=st.data())
def test_tree_equals_direct_exactly(M, data):
    poles, weights = problem(data, M)
    omega = None
    if data.draw(st.booleans()) and M > 1:
        omega = E.root_of_unity(M, data.draw(st.sampled_from(range(1, M, 2))))
    a = cauchy_on_roots(E, poles, weights, M, omega)
    b = cauchy_direct(E, poles, weights, M, omega)
    assert a.status == b.status
    if a.ok:
        assert all_exact_equal(E, a.value, b.value)
    else:
        assert a.status == "collision"


def test_definition_small_case():
    # y_k = 1/(w^k - 2) + 3/(w^k + 1/2) on M = 4, w = exp(-2 pi i/4)
    poles = [E.from_number(2), E.from_number(Fraction(-1, 2))]
    weights = [E.one(), E.from_number(3)]
    res = cauchy_on_roots(E, poles, weights, 4)
    for k, y in enumerate(res.value):
        z = E.root_of_unity(4, k)
        want = E.add(E.div(weights[0], E.sub(z, poles[0])), E.div(weights[1], E.sub(z, poles[1])))
        assert all_exact_equal(E, [y], [want])


def test_no_poles_gives_zero_vector():
    res = cauchy_on_roots(E, [], [], 8)
    assert res.ok and all_exact_equal(E, res.value, [E.zero()] * 8)


def test_collision_reported():
    poles = [E.from_number(3), E.root_of_unity(8, 5)]
    for f in (cauchy_on_roots, cauchy_direct):
        res = f(E, poles, [E.one(), E.one()], 8)
        assert res.status == "collision" and res.info["roots"] == [5]


def test_repeated_poles_and_more_poles_than_roots():
    poles = [E.from_number(Fraction(1, 3))] * 5 + [E.from_number(7)] * 4
    weights = [E.from_number(j + 1) for j in range(9)]
    a = cauchy_on_roots(E, poles, weights, 2)
    b = cauchy_direct(E, poles, weights, 2)
    assert a.ok and all_exact_equal(E, a.value, b.value)


@given(prec=st.integers(30, 300), M=st.sampled_from([1, 2, 4, 8, 16]), data=st.data())
def test_ball_contains_exact(prec, M, data):
    poles, weights = problem(data, M)
    exact = cauchy_direct(E, poles, weights, M)
    B = BallField(prec)
    to_ball = lambda xs: [E.to_acb(x, prec + 10) for x in xs]
    got = cauchy_on_roots(B, to_ball(poles), to_ball(weights), M)
    if exact.ok:
        assert got.status in ("ok", "undecided")
        if got.ok:
            assert all_enclose(got.value, E, exact.value)
    else:
        assert got.status in ("collision", "undecided")


def test_bad_input():
    with pytest.raises(ValueError):
        cauchy_on_roots(E, [E.one()], [], 4)
    with pytest.raises(ValueError):
        cauchy_on_roots(E, [E.one()], [E.one()], 6)
    with pytest.raises(ValueError):  # omega = 1 is not a primitive 4th root
        cauchy_on_roots(E, [E.from_number(3)], [E.one()], 4, omega=E.one())
