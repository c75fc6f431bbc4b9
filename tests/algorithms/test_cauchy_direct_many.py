"""Direct Cauchy sums for several weight sets with shared reciprocals
(algorithms/cauchy/direct.py ``cauchy_direct_many``): exactly the single-set sums, enclosed in
balls, and the same statuses."""
from hypothesis import given, strategies as st

from s4cert.algorithms.cauchy.direct import cauchy_direct, cauchy_direct_many
from s4cert.arith import BallField, Counting
from tests.algorithms.test_cauchy import E, problem
from tests.helpers import all_enclose, all_exact_equal, gaussian


@given(M=st.sampled_from([1, 2, 4, 8, 16]), sets=st.integers(1, 3), data=st.data())
def test_many_equals_one_set_at_a_time_exactly(M, sets, data):
    poles, first = problem(data, M)
    more = [[E.from_number(data.draw(gaussian())) for _ in poles] for _ in range(sets - 1)]
    many = cauchy_direct_many(E, poles, [first] + more, M)
    for s, weights in enumerate([first] + more):
        one = cauchy_direct(E, poles, weights, M)
        assert one.status == many.status
        if one.ok:
            assert all_exact_equal(E, many.value[s], one.value)
    if not many.ok:
        assert many.status == "collision"


def test_balls_enclose_and_one_division_per_pair():
    """In balls the sums enclose the exact ones; a Counting field sees M n divisions for any
    number of sets."""
    poles = [E.from_number(x) for x in ((3, 1), (-2, 0), (0, 5))]
    sets = [[E.from_number(x) for x in ws] for ws in (((1, 0), (2, 1), (0, -1)), ((5, 2), (-1, 0), (1, 1)))]
    exact = cauchy_direct_many(E, poles, sets, 8)
    F = BallField(80)
    conv = lambda xs: [F.from_number(E.to_fractions(x)) for x in xs]
    balls = cauchy_direct_many(F, conv(poles), [conv(w) for w in sets], 8)
    assert exact.ok and balls.ok
    for b, x in zip(balls.value, exact.value):
        assert all_enclose(b, E, x)
    C = Counting(F)
    cc = lambda xs: [C.from_number(E.to_fractions(x)) for x in xs]
    assert cauchy_direct_many(C, cc(poles), [cc(w) for w in sets], 8).ok
    assert C.counts["div"] == 8 * 3
