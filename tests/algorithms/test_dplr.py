from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.dplr import DPLR, nplr_to_dplr, state_change
from s4cert.algorithms.s4.c_tilde import c_tilde
from s4cert.algorithms.s4.kernels import kernel_by_powers
from s4cert.algorithms.s4.solver import bilinear, recurrent
from s4cert.algorithms.linalg import cdot, matvec
from s4cert.arith import BallField, ExactField
from tests.algorithms.dense import dense_bilinear, dense_kernel
from tests.helpers import AMPLE_PREC, all_exact_equal, assert_ball_run_agrees, dissipative_dplr, gaussian, random_dplr

E = ExactField(4)


@st.composite
def models(draw, exceptional_on=None):
    N = draw(st.integers(1, 6))
    r = draw(st.integers(1, 2))
    step = draw(st.builds(Fraction, st.integers(1, 8), st.integers(1, 4)))
    # exceptional here: some lambda_j = 2/step, so d_j = 0 (the bordered branch)
    m = random_dplr(draw, N, r, step, exceptional=False)
    if draw(st.booleans()):
        k = draw(st.integers(1, min(N, r + 1)))
        lam = list(m.Lambda)
        for j in range(k):
            lam[j] = (2 / step, Fraction(0))
        m = DPLR(lam, m.P, m.B, m.C, Q=m.Q)
    return m, step


def test_spec_example_cumulative_sums():
    """A = 0, B = C = 1, step 1: Abar = Bbar = 1, y_t = u_0 + ... + u_t, K = (1, ..., 1)."""
    m = DPLR([0], [0], [1], [1])
    u = [Fraction(3), Fraction(-1, 2), Fraction(5), Fraction(7, 3)]
    y = recurrent(E, m, 1, u)
    assert y.ok
    sums = [sum(u[: t + 1]) for t in range(len(u))]
    assert all_exact_equal(E, y.value, [E.from_number(s) for s in sums])
    K = kernel_by_powers(E, m, 1, 6)
    assert all_exact_equal(E, K.value, [E.one()] * 6)
    Ab, Bb = bilinear(E, m, 1).value
    assert all_exact_equal(E, [Ab[0][0], Bb[0]], [E.one(), E.one()])


@given(mb=models(), data=st.data())
def test_structured_bilinear_equals_dense_elimination(mb, data):
    m, step = mb
    A = m.dense_A(E)
    ref = dense_bilinear(E, A, [E.from_number(b) for b in m.B], step)
    got = bilinear(E, m, step)
    if ref is None:
        assert got.status == "singular-bilinear-matrix"
        return
    assert got.ok
    Ab, Bb = got.value
    assert all(all_exact_equal(E, r1, r2) for r1, r2 in zip(Ab, ref[0]))
    assert all_exact_equal(E, Bb, ref[1])


@given(mb=models(), data=st.data())
def test_recurrent_equals_convolution_with_kernel(mb, data):
    m, step = mb
    L = data.draw(st.integers(1, 10))
    u = data.draw(st.lists(gaussian(), min_size=L, max_size=L))
    K = kernel_by_powers(E, m, step, L)
    y = recurrent(E, m, step, u)
    assert K.status == y.status
    if not K.ok:
        return
    uu = [E.from_number(v) for v in u]
    conv = [cdot(E, [E.conj(k) for k in K.value[: t + 1]], uu[t::-1]) for t in range(L)]
    assert all_exact_equal(E, y.value, conv)


@given(mb=models(), M=st.sampled_from([1, 2, 4, 8]))
def test_c_tilde_equals_dense_powers(mb, M):
    m, step = mb
    res = c_tilde(E, m, step, M)
    bl = bilinear(E, m, step)
    assert res.status == bl.status
    if not res.ok:
        return
    Ab = bl.value[0]
    AbH = [[E.conj(Ab[j][i]) for j in range(m.N)] for i in range(m.N)]
    v = [E.from_number(c) for c in m.C]
    for _ in range(M):
        v = matvec(E, AbH, v)
    want = [E.sub(E.from_number(c), x) for c, x in zip(m.C, v)]
    assert all_exact_equal(E, res.value, want)


def test_singular_bilinear_matrix():
    # lambda = 2/step and no low-rank help: G = I - A = 0
    m = DPLR([2], [0], [1], [1])
    for f in (lambda: bilinear(E, m, 1), lambda: recurrent(E, m, 1, [1]), lambda: kernel_by_powers(E, m, 1, 3)):
        assert f().status == "singular-bilinear-matrix"
    # more zero d_j than r
    m2 = DPLR([2, 2, -1], [1, 1, 1], [1, 1, 1], [1, 0, 1])
    assert bilinear(E, m2, 1).status == "singular-bilinear-matrix"
    # Woodbury branch with a singular correction: d = 1 - lambda/2 = 2, alpha Q* D^-1 P = -1
    m3 = DPLR([-2], [2], [1], [1], Q=[-2])
    assert bilinear(E, m3, 1).status == "singular-bilinear-matrix"


def test_bordered_case_solves():
    # lambda_0 = 2/step (d_0 = 0) but G invertible thanks to P, Q
    m = DPLR([2, Fraction(-1, 3)], [[1], [2]], [1, 1], [1, -1], Q=[[3], [1]])
    step = 1
    got = bilinear(E, m, step)
    ref = dense_bilinear(E, m.dense_A(E), [E.from_number(b) for b in m.B], step)
    assert got.ok and ref is not None
    assert all(all_exact_equal(E, a, b) for a, b in zip(got.value[0], ref[0]))
    y = recurrent(E, m, step, [1, 0, 2])
    K = dense_kernel(E, m.dense_A(E), [E.from_number(b) for b in m.B], [E.from_number(c) for c in m.C], step, 3)
    u = [E.one(), E.zero(), E.from_number(2)]
    conv = [cdot(E, [E.conj(k) for k in K[: t + 1]], u[t::-1]) for t in range(3)]
    assert all_exact_equal(E, y.value, conv)


@given(mb=models(), s=st.lists(gaussian().filter(lambda g: g != (0, 0)), min_size=6, max_size=6))
def test_diagonal_state_change_keeps_kernel(mb, s):
    m, step = mb
    m2 = state_change(E, m, s[: m.N])
    a, b = kernel_by_powers(E, m, step, 4), kernel_by_powers(E, m2, step, 4)
    assert a.status == b.status
    if a.ok:
        assert all_exact_equal(E, a.value, b.value)


def test_nplr_to_dplr_keeps_kernel():
    # V unitary with rational entries: a rotation times phases
    c, s_ = Fraction(3, 5), Fraction(4, 5)
    V = [[(c, 0), (0, -s_), (0, 0)], [(s_, 0), (0, c), (0, 0)], [(0, 0), (0, 0), (0, 1)]]
    lam = [(-1, 2), (Fraction(-1, 2), 0), (-3, -1)]
    P, Q = [1, (0, 1), 2], [Fraction(1, 2), 1, (1, 1)]
    B, C = [1, 2, (0, -1)], [(1, 1), 0, 3]
    Vm = E.matrix(V)
    # dense A = V Lambda V* - P Q*
    A = [[E.sub(sum_k(Vm, lam, i, j), E.mul(E.from_number(P[i]), E.conj(E.from_number(Q[j]))))
          for j in range(3)] for i in range(3)]
    want = dense_kernel(E, A, [E.from_number(b) for b in B], [E.from_number(x) for x in C], Fraction(1, 2), 5)
    d = nplr_to_dplr(E, V, lam, P, B, C, Q=Q)
    got = kernel_by_powers(E, d, Fraction(1, 2), 5)
    assert got.ok and all_exact_equal(E, got.value, want)


def sum_k(Vm, lam, i, j):
    acc = E.zero()
    for k in range(3):
        acc = E.add(acc, E.mul(E.mul(Vm[i][k], E.from_number(lam[k])), E.conj(Vm[j][k])))
    return acc


@given(prec=st.integers(30, 300), mb=models())
def test_ball_recurrent_contains_exact(prec, mb):
    m, step = mb
    u = [Fraction(1), Fraction(-2, 3), Fraction(5, 7)]
    ref = recurrent(E, m, step, u)
    got = recurrent(BallField(prec), m, step, u)
    assert_ball_run_agrees(got, ref, E)


def test_ball_recurrent_decides_at_ample_precision():
    """At AMPLE_PREC bits the ball recurrence certifies every dissipative model (G
    invertible) of the family's sizes, with enclosures of the exact outputs: 8 of 8."""
    u = [Fraction(1), Fraction(-2, 3), Fraction(5, 7)]
    certified = 0
    for seed in range(8):
        step = Fraction(1 + seed % 8, 1 + seed % 4)
        m = dissipative_dplr(seed, 1 + seed % 4, 1 + seed % 2, step)
        certified += assert_ball_run_agrees(recurrent(BallField(AMPLE_PREC), m, step, u), recurrent(E, m, step, u), E)
    assert certified == 8


def test_undecided_with_balls():
    # 1 - alpha*lambda contains zero but is not exactly zero
    lam = acb(arb(2, 1e-30))
    res = bilinear(BallField(100), DPLR([lam], [0], [1], [1]), 1)
    assert res.status == "undecided"


def test_bad_input():
    with pytest.raises(ValueError, match="at least one state"):
        DPLR([], [], [], [])
    with pytest.raises(ValueError, match="B"):
        DPLR([1, 2], [1, 1], [1], [1, 1])
    with pytest.raises(ValueError, match="non-finite"):
        DPLR([float("nan")], [1], [1], [1])
    with pytest.raises(ValueError, match="P"):
        DPLR([1, 2], np.ones((3, 1)), [1, 1], [1, 1])
    with pytest.raises(ValueError, match="rank"):
        DPLR([1, 2], np.ones((2, 1)), [1, 1], [1, 1], Q=np.ones((2, 2)))
    m = DPLR([-1], [1], [1], [1])
    for step in (0, -1, float("nan"), 1j, float("inf")):
        with pytest.raises(ValueError, match="step|non-finite"):
            bilinear(E, m, step)
    with pytest.raises(ValueError, match="L"):
        kernel_by_powers(E, m, 1, 0)
    with pytest.raises(ValueError):
        c_tilde(E, m, 1, 3)
