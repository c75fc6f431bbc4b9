"""C~ = (I - Abar^M)* C by each named method, and the dense bilinear step
(algorithms/s4/c_tilde.py, algorithms/s4/bilinear.py)."""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from s4cert.algorithms.s4.bilinear import discretize, factor
from s4cert.algorithms.s4.c_tilde import METHODS, abar_power, c_from_c_tilde, c_tilde
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.solver import bilinear
from s4cert.arith import BallField, ExactField
from tests.helpers import all_exact_equal, assert_ball_run_agrees, random_dplr

E = ExactField(4)


@st.composite
def models(draw):
    N = draw(st.integers(1, 4))
    r = draw(st.integers(1, 2))
    step = draw(st.builds(Fraction, st.integers(1, 8), st.integers(1, 4)))
    return random_dplr(draw, N, r, step, exceptional=False), step


@settings(max_examples=25, deadline=None)
@given(mb=models(), M=st.sampled_from([1, 2, 8]))
def test_methods_agree_exactly(mb, M):
    m, step = mb
    runs = [c_tilde(E, m, step, M, method) for method in METHODS]
    assert len({res.status for res in runs}) == 1
    if runs[0].ok:
        assert all(all_exact_equal(E, res.value, runs[0].value) for res in runs[1:])


@settings(max_examples=15, deadline=None)
@given(mb=models(), M=st.sampled_from([2, 4]))
def test_c_from_c_tilde_inverts(mb, M):
    m, step = mb
    ct = c_tilde(E, m, step, M)
    if not ct.ok:
        return
    back = c_from_c_tilde(E, DPLR(m.Lambda, m.P, m.B, [0] * m.N, Q=m.Q), step, M,
                          [E.to_fractions(x) for x in ct.value])
    if back.status == "singular":  # Abar^M has eigenvalue 1: C is not determined by C~
        assert _one_minus_power_is_singular(m, step, M)
        return
    assert back.ok and all_exact_equal(E, back.value, [E.from_number(c) for c in m.C])


def _one_minus_power_is_singular(m: DPLR, step, M: int) -> bool:
    """Whether I - Abar^M is singular, decided independently: Abar by dense elimination,
    its M-th power by products, then an exact solve."""
    from s4cert.algorithms.linalg import identity, matmul, solve
    from tests.algorithms.dense import dense_bilinear
    Ab, _ = dense_bilinear(E, m.dense_A(E), [E.from_number(b) for b in m.B], step)
    P = identity(E, m.N)
    for _ in range(M):
        P = matmul(E, P, Ab)
    I_P = [[E.sub(E.one() if i == j else E.zero(), P[i][j]) for j in range(m.N)] for i in range(m.N)]
    return not solve(E, I_P, [E.one()] * m.N).ok


@pytest.mark.parametrize("method", METHODS)
def test_balls_enclose_the_exact_value(method):
    m = DPLR([-1, (-2, 1), Fraction(-1, 3)], [[1, 0], [1, 2], [0, 1]], B=[1, 0, 2], C=[1, 1, (0, 1)])
    assert assert_ball_run_agrees(c_tilde(BallField(128), m, Fraction(1, 2), 16, method),
                                  c_tilde(E, m, Fraction(1, 2), 16, method), E)   # decided: all methods


def test_singular_G_by_every_method():
    m = DPLR([2], [0], [1], [1])  # G = I - A/2 = 0 at step 1
    for method in METHODS:
        assert c_tilde(E, m, 1, 4, method).status == "singular-bilinear-matrix"
    assert abar_power(E, m, 1, 4, "dense-squaring").status == "singular-bilinear-matrix"


def test_bad_method():
    m = DPLR([-1], [0], [1], [1])
    with pytest.raises(ValueError):
        c_tilde(E, m, 1, 4, "squaring")
    with pytest.raises(ValueError):
        abar_power(E, m, 1, 4, "adjoint-steps")
    with pytest.raises(ValueError):
        c_tilde(E, m, 1, 3)


@settings(max_examples=25, deadline=None)
@given(mb=models())
def test_dense_bilinear_equals_structured(mb):
    """s4.bilinear on the dense A against the structured solver, exactly."""
    m, step = mb
    s = bilinear(E, m, step)
    d = bilinear(E, m, step, method="dense")
    assert s.status == d.status
    if s.ok:
        assert all(all_exact_equal(E, a, b) for a, b in zip(s.value[0], d.value[0]))
        assert all_exact_equal(E, s.value[1], d.value[1])


def test_dense_step_and_matrices_agree():
    n = E.from_number
    A = [[n(-1), n(2)], [n((0, 1)), n(-3)]]
    f = factor(E, A, n(Fraction(1, 2))).value
    Abar, Bbar = discretize(E, A, [[n(1)], [n(2)]], n(Fraction(1, 2))).value
    v = [n(3), n((1, -1))]
    assert all_exact_equal(E, f.step(E, v), [E.add(E.mul(r[0], v[0]), E.mul(r[1], v[1])) for r in Abar])
    assert all_exact_equal(E, f.input_map(E, [n(1), n(2)]), [r[0] for r in Bbar])
    assert discretize(E, [[n(2)]], [[n(1)]], n(1)).status == "singular-bilinear-matrix"


class _Solving(ExactField):
    """An exact field that offers a "solve" primitive (A^-1 B, or None when it cannot
    certify A invertible), as a field with a fast matrix solve does."""

    def __init__(self, certify: bool):
        super().__init__(4)
        self.certify = certify

    def primitive(self, name):
        if name != "solve":
            return super().primitive(name)

        def solve_rows(A, B):
            if not self.certify:
                return None
            from s4cert.algorithms.linalg import solve
            cols = [solve(self, A, [row[j] for row in B]).value for j in range(len(B[0]))]
            return [[c[i] for c in cols] for i in range(len(A))]
        return solve_rows


def test_dense_squaring_uses_the_field_solve():
    m = DPLR([-1, (-2, 1), Fraction(-1, 3)], [[1, 0], [1, 2], [0, 1]], B=[1, 0, 2], C=[1, 1, (0, 1)])
    want = c_tilde(E, m, Fraction(1, 2), 8, "dense-squaring")
    S = _Solving(certify=True)
    got = c_tilde(S, m, Fraction(1, 2), 8, "dense-squaring")
    assert got.ok and all_exact_equal(E, got.value, want.value)
    refused = c_tilde(_Solving(certify=False), m, Fraction(1, 2), 8, "dense-squaring")
    assert refused.status == "undecided" and "invertible" in refused.info["reason"]
