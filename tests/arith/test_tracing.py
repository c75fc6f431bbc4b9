from fractions import Fraction

from hypothesis import given, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, Counting, ExactField, RoundedField, Truth, trace
from tests.helpers import Q2, all_enclose, all_exact_equal

E = ExactField(16)
MODEL = DPLR([-1, (Fraction(-1, 2), 3), -4], [[1], [Fraction(1, 2)], [(0, 1)]], [1, 2, (1, 1)],
             [1, (0, -1), Fraction(1, 3)])


def test_circuit_replays_filter_in_every_field():
    t = trace(E, filter_kernel, MODEL, Fraction(1, 2), 6)
    assert t.status == "ok"
    circ = t.circuit
    # replay in the exact field gives the same outputs
    assert all_exact_equal(E, circ.evaluate(E), t.value)
    # in balls: contains; in rounded arithmetic: close (within the number of gates times growth)
    assert all_enclose(circ.evaluate(BallField(120)), E, t.value)
    assert circ.decisions_hold(E) is Truth.TRUE
    assert circ.decisions_hold(BallField(120)) in (Truth.TRUE, Truth.UNKNOWN)
    # the circuit's inputs are the model's numbers, in the order they were read
    assert circ.n_inputs >= 3 * 5


def test_gate_count_equals_counted_operations():
    t = trace(E, filter_kernel, MODEL, Fraction(1, 2), 6)
    C = Counting(E)
    res = filter_kernel(C, MODEL, Fraction(1, 2), 6)
    assert res.ok
    c = C.counts
    assert t.circuit.gates == c["add"] + c["mul"] + c["div"] + c["conj"]
    assert len(t.circuit.decisions) == c["zero_test"]


@given(st.lists(st.tuples(st.integers(-9, 9), st.integers(1, 9)), min_size=2, max_size=2))
def test_replay_with_new_inputs(vals):
    (p, q), (r, s) = vals
    a, b = Fraction(p, q), Fraction(r, s)

    def f(F, x, y):
        X, Y = F.from_number(x), F.from_number(y)
        return [F.mul(F.add(X, Y), F.conj(X)), F.div(X, F.add(Y, F.const(10)))]

    t = trace(E, f, Fraction(1), Fraction(2))
    got = t.circuit.evaluate(E, [a, b])
    assert all_exact_equal(E, got, f(E, a, b))


def test_rounded_replay_error_is_small():
    """Replaying in RoundedField(k): each gate adds at most u; with few gates the result
    stays within gates * u * (growth) of the exact one -- here checked exactly."""
    def f(F, x, y):
        X, Y = F.from_number(x), F.from_number(y)
        return [F.add(F.mul(X, Y), X)]

    t = trace(E, f, Fraction(1, 3), Fraction(2, 7))
    R = RoundedField(60)
    out = t.circuit.evaluate(R)[0]
    exact = Q2(Fraction(1, 3)) * Q2(Fraction(2, 7)) + Q2(Fraction(1, 3))
    err = (Q2(*R.to_fractions(out)) - exact).abs2()
    # inputs within u, product error <= u + u(|x| + |y| + u), sum within u more: < 4u
    assert err <= (4 * R.u) ** 2


def test_a_traced_filter_is_a_rational_circuit():
    """The filter uses only inputs, supplied constants and rational gates: the circuit
    model (and the a-priori certificate built on it) covers every step."""
    t = trace(BallField(100), filter_kernel, MODEL, Fraction(1, 2), 6)
    assert t.circuit.non_rational_steps() == []
