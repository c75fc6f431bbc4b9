from hypothesis import given, strategies as st

from algorithms.linalg import cdot, solve
from algorithms.woodbury import woodbury_solve
from arith import BallField, ExactField, Truth
from tests.helpers import all_enclose, all_exact_equal, gaussian

E = ExactField(4)


def draw_problem(data):
    N = data.draw(st.integers(1, 6))
    r = data.draw(st.integers(1, 3))
    g = lambda: E.from_number(data.draw(gaussian()))
    d = [g() for _ in range(N)]
    U = [[g() for _ in range(r)] for _ in range(N)]
    V = [[g() for _ in range(r)] for _ in range(N)]
    b = [g() for _ in range(N)]
    return d, U, V, b


def dense(d, U, V):
    N = len(d)
    return [[E.add(d[i] if i == j else E.zero(), cdot(E, V[j], U[i])) for j in range(N)] for i in range(N)]


@given(data=st.data())
def test_woodbury_equals_dense_solve(data):
    d, U, V, b = draw_problem(data)
    w = woodbury_solve(E, d, U, V, b)
    ref = solve(E, dense(d, U, V), b)
    if any(E.is_zero(x) is Truth.TRUE for x in d):
        assert w.status == "singular"
        return
    # D invertible: W is singular exactly when D + U V* is
    assert w.status == ref.status
    if w.ok:
        assert all_exact_equal(E, w.value, ref.value)


def test_singular_correction_reported():
    one, two = E.one(), E.from_number(2)
    # D = I, U V* = -e1 e1^T: D + U V* is singular; W = 1 - 1 = 0
    d = [one, one]
    U = [[E.from_number(-1)], [E.zero()]]
    V = [[one], [E.zero()]]
    res = woodbury_solve(E, d, U, V, [one, two])
    assert res.status == "singular" and "W" in res.info["reason"]


@given(prec=st.integers(30, 300), data=st.data())
def test_ball_contains_exact(prec, data):
    d, U, V, b = draw_problem(data)
    ref = woodbury_solve(E, d, U, V, b)
    B = BallField(prec)
    tb = lambda x: B.from_number(E.to_fractions(x))
    got = woodbury_solve(B, [tb(x) for x in d], [[tb(x) for x in r] for r in U], [[tb(x) for x in r] for r in V],
                         [tb(x) for x in b])
    if ref.ok and got.ok:
        assert all_enclose(got.value, E, ref.value)
    if not ref.ok:
        assert got.status in ("singular", "undecided")
